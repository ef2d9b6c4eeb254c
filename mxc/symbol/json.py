"""MXNet 1.9.1's ``-symbol.json``: writing byte-for-byte as MXNet (dmlc's JSON writer layout) and
reading it back, older formats included (``param``/``attr`` keys, 0.8-era files without aux
states, hidden keys without underscores), with MXNet's upgrade passes."""
import json as _json

from ..base import MXNetError
from ..ops import registry
from .symbol import HIDDEN_KEYS, Symbol, _Node, _topo, _is_hidden

MXNET_VERSION = 10901


# ---- writing -----------------------------------------------------------------------------------
class _Inline(list):
    """An array dmlc writes on one line (an entry triple, a short list of numbers)."""


def _s(v):
    return _json.dumps(v, ensure_ascii=False)


def _write(v, indent):
    pad = " " * indent
    if isinstance(v, dict):
        if len(v) == 0:
            return "{}"
        if len(v) == 1:
            (k, x), = v.items()
            return "{" + _s(k) + ": " + _write(x, indent) + "}"
        inner = ", \n".join(pad + "  " + _s(k) + ": " + _write(x, indent + 2) for k, x in v.items())
        return "{\n" + inner + "\n" + pad + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        multi = len(v) > 10 or any(isinstance(x, dict) for x in v)
        if not multi:
            return "[" + ", ".join(_write(x, indent) for x in v) + "]"
        inner = ", \n".join(pad + "  " + _write(x, indent + 2) for x in v)
        return "[\n" + inner + "\n" + pad + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return _s(v)


def _mxnet_num_outputs(node):
    """How many outputs MXNet 1.9.1 (its released CPU build, with oneDNN) gives the node: only
    node_row_ptr depends on it, which MXNet recomputes when it loads a file."""
    if node.op is None:
        return 1
    name = node.op.name
    if name in ("BatchNorm", "BatchNorm_v1"):
        return 3
    if name == "Dropout":
        return 2
    if name == "Pooling":
        a = node.parsed
        return 2 if a.get("pool_type", "max") == "max" else 1
    return node.num_outputs()


def graph_dict(sym):
    from ..util import is_np_shape
    gattrs = {"mxnet_version": ["int", MXNET_VERSION]}
    if is_np_shape():
        gattrs = {"is_np_shape": ["int", 1], "mxnet_version": ["int", MXNET_VERSION]}
    return dict(_graph_body(sym), attrs=gattrs)


def _graph_body(sym):
    nodes = _topo(sym._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    jnodes, arg_nodes, row_ptr = [], [], [0]
    for i, n in enumerate(nodes):
        d = {"op": "null" if n.op is None else n.op.name, "name": n.name}
        if n.attrs:
            d["attrs"] = {k: n.attrs[k] for k in sorted(n.attrs)}
        d["inputs"] = [[index[id(e[0])], e[1], e[2]] for e in n.inputs]
        if n.subgraphs:
            # a control-flow node's subgraphs: whole graphs without graph attributes (MXNet's)
            d["subgraphs"] = [_graph_body(g) for g in n.subgraphs]
        jnodes.append(d)
        if n.op is None:
            arg_nodes.append(i)
        row_ptr.append(row_ptr[-1] + _mxnet_num_outputs(n))
    heads = [[index[id(e[0])], e[1], e[2]] for e in sym._outputs]
    return {"nodes": jnodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr, "heads": heads}


def to_json(sym):
    return _write(graph_dict(sym), 0)


# ---- reading -----------------------------------------------------------------------------------
def _upgrade_hidden(node):
    """MXNet's UpgradeJSON_FixParsing: ``lr_mult`` -> ``__lr_mult__``; ``weight_lr_mult`` on an
    operator goes to its input variable ``weight``."""
    moved = {}
    for k in list(node.attrs):
        for key in HIDDEN_KEYS:
            if _is_hidden(k):
                break
            if k == key or (k.endswith(key) and len(k) > len(key) + 1):
                moved[k] = node.attrs.pop(k)
                break
    for k, v in moved.items():
        for key in HIDDEN_KEYS:
            if k == key:
                node.attrs[f"__{key}__"] = v
                break
            if k.endswith(key):
                if node.op is None:
                    break
                arg = k[:len(k) - len(key) - 1]
                try:
                    names = node.input_names()
                except Exception:       # noqa: BLE001
                    names = []
                if arg in names:
                    idx = names.index(arg)
                    if idx < len(node.inputs) and node.inputs[idx][0].op is None:
                        node.inputs[idx][0].attrs[f"__{key}__"] = v
                break


def _file_version(g):
    attrs = g.get("attrs") or {}
    if "mxnet_version" in attrs:
        v = attrs["mxnet_version"]
        return int(v[1] if isinstance(v, list) else v)
    return 800


def from_json(text):
    try:
        g = _json.loads(text)
    except ValueError as e:
        raise MXNetError(f"load_json: not a symbol JSON ({e})") from None
    return _from_dict(g)


def _from_dict(g, version=None):
    """The Symbol of one parsed graph; `version`: the file's, for a subgraph of it."""
    if not isinstance(g, dict) or "nodes" not in g:
        raise MXNetError("load_json: not a symbol JSON (no 'nodes')")
    if version is None:
        version = _file_version(g)
    nodes = []
    for jn in g["nodes"]:
        d = {}
        for key in ("param", "attr", "attrs"):
            if isinstance(jn.get(key), dict):
                d.update({k: str(x) for k, x in jn[key].items()})
        opname = jn.get("op", "null")
        if opname == "null":
            op = None
        else:
            try:
                op = registry.get(opname)
            except MXNetError:
                raise MXNetError(f"load_json: operator {opname} (node {jn.get('name')}) is not "
                                 "registered in mxc") from None
        node = _Node(op, jn.get("name", ""), d)
        subs = jn.get("subgraphs")
        if subs:
            if not isinstance(subs, list):
                raise MXNetError(f"load_json: node {node.name}: 'subgraphs' is not a list")
            node.subgraphs = tuple(_from_dict(sg, version) for sg in subs)
        for e in jn.get("inputs", []):
            src = nodes[e[0]]
            ver = e[2] if len(e) > 2 else 0
            node.inputs.append((src, e[1] if len(e) > 1 else 0, ver))
            if src.op is None:
                src.version = max(src.version, ver)
        nodes.append(node)
    heads = [(nodes[h[0]], h[1] if len(h) > 1 else 0, h[2] if len(h) > 2 else 0)
             for h in g.get("heads", [])]
    if version < MXNET_VERSION:
        for n in nodes:
            _upgrade_hidden(n)
    if version < 900:
        for n in nodes:
            if n.op is None:
                continue
            names = n.input_names()
            for i in range(len(n.inputs), len(names)):
                v = _Node(None, f"{n.name}_{names[i]}" if n.name else names[i], dict(n.attrs))
                n.inputs.append((v, 0, 0))
    if version < 904:
        for n in nodes:
            init = n.op.input_init if n.op is not None else None
            if init:
                for i, val in init.items():
                    if i < len(n.inputs) and n.inputs[i][0].op is None \
                            and "__init__" not in n.inputs[i][0].attrs:
                        n.inputs[i][0].attrs["__init__"] = val
    if version < 905:
        for n in nodes:
            if n.op is not None and n.op.name in ("argmax", "argmin") and n.attrs.get("axis") == "-1":
                del n.attrs["axis"]
    for n in nodes:
        if n.op is not None:
            n._parsed = None
            try:
                n.parsed        # noqa: B018
            except (ValueError, TypeError) as e:
                raise MXNetError(f"load_json: node {n.name} ({n.op.name}): {e}") from None
    return Symbol(heads)

"""MXNet 1.9.1's ``-symbol.json``: writing byte-for-byte as MXNet (dmlc's JSON writer layout) and
reading it back, older formats included (``param``/``attr`` keys, 0.8-era files without aux
states, hidden keys without underscores), with MXNet's upgrade passes."""
import json as _json
import re

from ..base import MXNetError
from ..ops import registry
from .symbol import HIDDEN_KEYS, Symbol, _Node, _topo, _is_hidden
from ..util import is_np_shape

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


# A symbol file nests five deep (graph, node list, node, input list, entry); anything much deeper
# is not a symbol and is refused before Python's recursive JSON decoder sees it.
_MAX_DEPTH = 64
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class _Bad(Exception):
    """A reason the graph is refused; from_json turns it into one MXNetError."""


def _depth_ok(text):
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > _MAX_DEPTH:
                return False
        elif c in "]}":
            depth -= 1
    return True


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _entry(e, limit, what):
    """(node index, output index, version) of an entry [node, output(, version)]; the node must
    come before `limit` (a node's inputs are earlier nodes: this also rules out cycles)."""
    if not isinstance(e, list) or len(e) not in (2, 3) or not all(_is_int(x) for x in e):
        raise _Bad(f"{what} {e!r} is not [node, output] or [node, output, version] of integers")
    if not 0 <= e[0] < limit:
        raise _Bad(f"{what} {e!r} refers to node {e[0]}, outside 0..{limit - 1}")
    if e[1] < 0 or (len(e) > 2 and e[2] < 0):
        raise _Bad(f"{what} {e!r} has a negative output index or version")
    return e[0], e[1], e[2] if len(e) > 2 else 0


def _attr_strings(jn):
    d = {}
    for key in ("param", "attr", "attrs"):
        a = jn.get(key)
        if a is None:
            continue
        if not isinstance(a, dict):
            raise _Bad(f"'{key}' is not an object")
        for k, v in a.items():
            if not isinstance(v, str):
                raise _Bad(f"attribute {k!r} is {v!r}, not a string")
        d.update(a)
    return d


def _version(g):
    attrs = g.get("attrs", {})
    if not isinstance(attrs, dict):
        raise _Bad("graph 'attrs' is not an object")
    if "mxnet_version" not in attrs:
        return 800
    v = attrs["mxnet_version"]
    v = v[1] if isinstance(v, list) and len(v) == 2 else v
    if not _is_int(v):
        raise _Bad(f"mxnet_version {attrs['mxnet_version']!r} is not [\"int\", number]")
    return v


def _check_index_lists(g, nodes):
    """arg_nodes: variables, each once; node_row_ptr (when given): one row range per node, every
    node at least one output, variables exactly one."""
    args = g["arg_nodes"]
    if not isinstance(args, list) or not all(_is_int(i) for i in args):
        raise _Bad("arg_nodes is not a list of integers")
    for i in args:
        if not 0 <= i < len(nodes):
            raise _Bad(f"arg_nodes names node {i}, outside 0..{len(nodes) - 1}")
        if nodes[i].op is not None:
            raise _Bad(f"arg_nodes names node {i} ({nodes[i].name}), an operator, not a variable")
    if len(set(args)) != len(args):
        raise _Bad("arg_nodes names a node twice")
    rows = g.get("node_row_ptr")
    if rows is None:
        return
    if not isinstance(rows, list) or len(rows) != len(nodes) + 1 \
            or not all(_is_int(r) for r in rows) or rows[0] != 0:
        raise _Bad(f"node_row_ptr is not {len(nodes) + 1} integers from 0 (one more than the nodes)")
    for i, n in enumerate(nodes):
        width = rows[i + 1] - rows[i]
        if width < 1 or (n.op is None and width != 1):
            raise _Bad(f"node_row_ptr gives node {i} ({n.name}) {width} outputs")


def from_json(text):
    """The Symbol of a ``-symbol.json`` text. The whole graph is checked before it is built
    (structure, node references, operators, attributes, output indices); every failure is one
    MXNetError saying which node and what is wrong."""
    if not isinstance(text, str):
        raise MXNetError(f"load_json: expected the JSON text as a string, got {type(text).__name__}")
    if not _depth_ok(text):
        raise MXNetError(f"load_json: not a symbol JSON (nested deeper than {_MAX_DEPTH} levels)")
    try:
        g = _json.loads(text)
    except ValueError as e:
        raise MXNetError(f"load_json: not a symbol JSON ({e})") from None
    return _from_dict(g)


def _from_dict(g, version=None):
    """The Symbol of one parsed graph, checked whole before it is built; `version`: the file's,
    for a subgraph of it (a control-flow node's, which carries no graph attributes)."""
    if not isinstance(g, dict) or not isinstance(g.get("nodes"), list):
        raise MXNetError("load_json: not a symbol JSON (no list of 'nodes')")
    for key in ("arg_nodes", "heads"):
        if key not in g:
            raise MXNetError(f"load_json: not a symbol JSON (no '{key}')")
    if version is None:
        try:
            version = _version(g)
        except _Bad as e:
            raise MXNetError(f"load_json: {e}") from None
    nodes = []
    for i, jn in enumerate(g["nodes"]):
        try:
            nodes.append(_read_node(jn, nodes, version))
        except _Bad as e:
            name = jn.get("name") if isinstance(jn, dict) else None
            raise MXNetError(f"load_json: node {i}" + (f" ({name})" if isinstance(name, str) else "")
                             + f": {e}") from None
    try:
        _check_index_lists(g, nodes)
        if not isinstance(g["heads"], list):
            raise _Bad("heads is not a list")
        heads = [_entry(h, len(nodes), "head") for h in g["heads"]]
    except _Bad as e:
        raise MXNetError(f"load_json: {e}") from None
    heads = [(nodes[i], o, v) for i, o, v in heads]
    for i, n in enumerate(nodes):
        try:
            _upgrade(n, version)
            _check_outputs(n)
        except Exception as e:      # noqa: BLE001  (an attribute or upgrade failure of this node)
            raise MXNetError(f"load_json: node {i} ({n.name}): {e}") from None
    for h, o, _ in heads:
        if o >= h.num_outputs():
            raise MXNetError(f"load_json: head [{h.name}, {o}]: node {h.name} has "
                             f"{h.num_outputs()} outputs")
    return Symbol(heads)


def _read_node(jn, nodes, version):
    """One node from its JSON object; its inputs are nodes already read."""
    if not isinstance(jn, dict):
        raise _Bad("not an object")
    opname, name = jn.get("op"), jn.get("name")
    if not isinstance(opname, str) or not isinstance(name, str):
        raise _Bad("'op' and 'name' must be strings")
    op = None
    if opname != "null":
        try:
            op = registry.get(opname)
        except MXNetError:
            raise _Bad(f"operator {opname} is not registered in mxc") from None
    node = _Node(op, name, _attr_strings(jn))
    subs = jn.get("subgraphs")
    if subs:
        if not isinstance(subs, list):
            raise _Bad("'subgraphs' is not a list")
        node.subgraphs = tuple(_from_dict(sg, version) for sg in subs)
    ins = jn.get("inputs", [])
    if not isinstance(ins, list):
        raise _Bad("'inputs' is not a list")
    if op is None and ins:
        raise _Bad("a variable takes no inputs")
    for e in ins:
        src, out, ver = _entry(e, len(nodes), "input")
        src = nodes[src]
        node.inputs.append((src, out, ver))
        if src.op is None:
            src.version = max(src.version, ver)
    return node


def _upgrade(n, version):
    """MXNet's upgrade passes for files older than 1.9.1, on one node (whose inputs are done)."""
    if version < MXNET_VERSION:
        _upgrade_hidden(n)
    if n.op is None:
        return
    if version < 900:
        names = n.input_names()
        for i in range(len(n.inputs), len(names)):
            v = _Node(None, f"{n.name}_{names[i]}" if n.name else names[i], dict(n.attrs))
            n.inputs.append((v, 0, 0))
    if version < 904:
        for i, val in (n.op.input_init or {}).items():
            if i < len(n.inputs) and n.inputs[i][0].op is None \
                    and "__init__" not in n.inputs[i][0].attrs:
                n.inputs[i][0].attrs["__init__"] = val
    if version < 905 and n.op.name in ("argmax", "argmin") and n.attrs.get("axis") == "-1":
        del n.attrs["axis"]


def _check_outputs(n):
    """The node's attributes parse, and each input reads an output its source has."""
    if n.op is not None:
        n._parsed = None
        n.parsed        # noqa: B018
    for src, o, _ in n.inputs:
        if o >= src.num_outputs():
            raise _Bad(f"input [{src.name}, {o}]: node {src.name} has {src.num_outputs()} outputs")

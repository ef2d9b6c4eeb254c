"""Symbol JSON that is not a well-formed graph: every failure of the loader is one MXNetError
naming the file (when read from one), the node and what is wrong; nothing reaches a kernel with
fewer inputs than its operator takes. What MXNet 1.9.1 does with each case is noted beside it
(checked by hand with the oracle: it segfaults on some of them, mxc refuses them all)."""
import copy
import json
import os
import random

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

SYM = os.path.join(os.path.dirname(__file__), "..", "data", "symbol")


def _mlp():
    d = mx.sym.Variable("data")
    s = mx.sym.FullyConnected(d, num_hidden=3, name="fc")
    return json.loads(mx.sym.relu(s, name="r").tojson())


def _set(path, value):
    def f(g):
        *head, last = path
        for k in head:
            g = g[k]
        g[last] = value
    return f


def _pop(path):
    def f(g):
        *head, last = path
        for k in head:
            g = g[k]
        g.pop(last)
    return f


# (case, mutation of the graph dict, what the error says); nodes: data, fc_weight, fc_bias, fc, r
CASES = [
    # MXNet: "Check failed: e.node_id < jgraph.nodes.size()"; mxc accepted -1 as the last node
    ("input -1", _set(["nodes", 3, "inputs", 0, 0], -1), "node 3 (fc): input [-1, 0, 0] refers to node -1"),
    ("head -2", _set(["heads", 0, 0], -2), "head [-2, 0, 0] refers to node -2"),
    # MXNet loads these and fails (or crashes) later; a node reads only earlier nodes (no cycles)
    ("input ahead", _set(["nodes", 3, "inputs", 0, 0], 4), "node 3 (fc): input [4, 0, 0] refers to node 4"),
    ("input itself", _set(["nodes", 3, "inputs", 0, 0], 3), "refers to node 3, outside 0..2"),
    # MXNet segfaults on an output index past the node's outputs
    ("output index", _set(["nodes", 4, "inputs", 0, 1], 5), "node 4 (r): input [fc, 5]: node fc has 1 outputs"),
    ("head output", _set(["heads", 0, 1], 2), "head [r, 2]: node r has 1 outputs"),
    ("negative output", _set(["nodes", 4, "inputs", 0, 1], -1), "negative output index"),
    ("entry of 4", _set(["nodes", 3, "inputs", 0], [0, 0, 0, 0]), "is not [node, output]"),
    ("entry of 1", _set(["nodes", 3, "inputs", 0], [0]), "is not [node, output]"),
    ("entry of floats", _set(["nodes", 3, "inputs", 0], [0.5, 0]), "is not [node, output]"),
    ("entry bool", _set(["nodes", 3, "inputs", 0], [True, 0]), "is not [node, output]"),
    ("entry not a list", _set(["nodes", 3, "inputs", 0], "0"), "is not [node, output]"),
    ("inputs not a list", _set(["nodes", 3, "inputs"], {}), "node 3 (fc): 'inputs' is not a list"),
    # MXNet: "Check failed: jgraph.nodes[nid].node->is_variable()" / "nid < jgraph.nodes.size()"
    ("arg_nodes op", _set(["arg_nodes"], [0, 1, 2, 3]), "arg_nodes names node 3 (fc), an operator"),
    ("arg_nodes range", _set(["arg_nodes"], [0, 1, 9]), "arg_nodes names node 9, outside 0..4"),
    ("arg_nodes negative", _set(["arg_nodes"], [0, -1]), "arg_nodes names node -1"),
    ("arg_nodes twice", _set(["arg_nodes"], [0, 0]), "names a node twice"),
    ("arg_nodes not ints", _set(["arg_nodes"], "0"), "arg_nodes is not a list of integers"),
    # MXNet: 'Missing field "arg_nodes"'
    ("no arg_nodes", _pop(["arg_nodes"]), "no 'arg_nodes'"),
    ("no heads", _pop(["heads"]), "no 'heads'"),
    ("heads not a list", _set(["heads"], 3), "heads is not a list"),
    # MXNet ignores node_row_ptr; mxc checks that it describes the nodes
    ("row_ptr short", _set(["node_row_ptr"], [0, 1]), "node_row_ptr is not 6 integers"),
    ("row_ptr variable", _set(["node_row_ptr"], [0, 2, 3, 4, 5, 6]), "gives node 0 (data) 2 outputs"),
    ("row_ptr empty row", _set(["node_row_ptr"], [0, 1, 2, 3, 3, 4]), "gives node 3 (fc) 0 outputs"),
    # MXNet: "Operator Nope is not registered", "Invalid Parameter format", "Cannot find argument"
    ("unknown op", _set(["nodes", 3, "op"], "Nope"), "node 3 (fc): operator Nope is not registered"),
    ("bad attribute", _set(["nodes", 3, "attrs", "num_hidden"], "x"), "node 3 (fc): FullyConnected: parameter 'num_hidden'"),
    ("unknown attribute", _set(["nodes", 3, "attrs", "foo"], "1"), "unknown parameter(s) ['foo']"),
    ("attribute not a string", _set(["nodes", 3, "attrs", "num_hidden"], 3), "attribute 'num_hidden' is 3, not a string"),
    ("attrs not an object", _set(["nodes", 3, "attrs"], [1]), "node 3 (fc): 'attrs' is not an object"),
    ("nested attribute", _set(["nodes", 3, "attrs", "num_hidden"], "(" * 5000 + ")" * 5000), "node 3 (fc)"),
    # MXNet: 'Missing field "name"', 'Expect '"''
    ("no name", _pop(["nodes", 3, "name"]), "node 3: 'op' and 'name' must be strings"),
    ("name not a string", _set(["nodes", 3, "name"], 5), "node 3: 'op' and 'name' must be strings"),
    ("no op", _pop(["nodes", 0, "op"]), "node 0 (data): 'op' and 'name' must be strings"),
    ("node not an object", _set(["nodes", 2], [1]), "node 2: not an object"),
    ("variable with inputs", _set(["nodes", 0, "inputs"], [[1, 0, 0]]), "node 0 (data): a variable takes no inputs"),
    ("version", _set(["attrs", "mxnet_version"], ["int", "x"]), "mxnet_version ['int', 'x'] is not"),
    ("graph attrs", _set(["attrs"], 1), "graph 'attrs' is not an object"),
    ("nodes not a list", _set(["nodes"], {}), "no list of 'nodes'"),
]


@pytest.mark.parametrize("case,mutate,says", CASES, ids=[c[0] for c in CASES])
def test_bad_graph_is_one_error_naming_what_is_wrong(case, mutate, says, tmp_path):
    g = _mlp()
    mutate(g)
    text = json.dumps(g)
    with pytest.raises(MXNetError) as e:
        mx.sym.load_json(text)
    assert says in str(e.value)
    path = tmp_path / "bad-symbol.json"
    path.write_text(text)
    with pytest.raises(MXNetError) as e:
        mx.sym.load(str(path))
    assert str(e.value).startswith(f"{path}: load_json: ") and says in str(e.value)


def test_the_unmutated_graph_loads():
    s = mx.sym.load_json(json.dumps(_mlp()))
    assert s.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert s.infer_shape(data=(2, 4))[1] == [(2, 3)]


@pytest.mark.parametrize("text", ["[" * 200000, "{\"a\":" * 200000, "[" * 65 + "]" * 65,
                                  '{"nodes": [' + "[" * 100000])
def test_deep_nesting_is_refused_without_recursion(text):
    with pytest.raises(MXNetError, match="nested deeper than 64"):
        mx.sym.load_json(text)


@pytest.mark.parametrize("text", ["", "nul", "[]", "3", '"nodes"', '{"nodes": 1}', "{\"nodes\": [}"])
def test_not_json_or_not_a_graph(text):
    with pytest.raises(MXNetError, match="load_json: not a symbol JSON"):
        mx.sym.load_json(text)


def test_a_file_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "x-symbol.json"
    path.write_bytes(b'{\n"nodes": [],\n"name": "\xff"}')
    with pytest.raises(MXNetError, match=r"x-symbol.json: not a symbol JSON \(line 3: byte 24 is not UTF-8"):
        mx.sym.load(str(path))


def _mutations(g, rng):
    """Every place of the graph dict, replaced by a value of another kind."""
    values = [-1, -2, 0, 1, 7, 2 ** 63, -(2 ** 64), 1.5, True, None, "", "x", "-1", [], [0], [-1, 0],
              [0, 9, 0], {}, {"a": "b"}]
    paths = []
    stack = [((), g)]
    while stack:
        p, v = stack.pop()
        paths.append(p)
        if isinstance(v, dict):
            stack.extend((p + (k,), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((p + (i,), x) for i, x in enumerate(v))
    for p in paths[1:]:
        for value in rng.sample(values, 4):
            h = copy.deepcopy(g)
            t = h
            for k in p[:-1]:
                t = t[k]
            t[p[-1]] = value
            yield json.dumps(h)


@pytest.mark.parametrize("name", ["convbn", "misc"])
def test_mutated_mxnet_files_load_or_raise_mxneterror(name):
    """Every place of a file MXNet wrote, replaced by values of other kinds (about 1,000 graphs
    a file): each loads, or raises MXNetError. A graph that loads infers shapes or refuses
    with MXNetError too."""
    with open(os.path.join(SYM, f"{name}-symbol.json")) as f:
        g = json.load(f)
    rng = random.Random(27)
    loaded = refused = 0
    for text in _mutations(g, rng):
        try:
            s = mx.sym.load_json(text)
        except MXNetError:
            refused += 1
            continue
        loaded += 1
        try:
            s.infer_shape_partial()
        except MXNetError:
            pass
    assert refused > loaded > 0


NORMS = [("BatchNorm", 5), ("BatchNorm_v1", 5), ("LayerNorm", 3), ("InstanceNorm", 3),
         ("GroupNorm", 3)]


def _without_gamma_beta(opname):
    g = json.loads(getattr(mx.sym, opname)(mx.sym.Variable("data"), name="n").tojson())
    g["nodes"][-1]["inputs"] = g["nodes"][-1]["inputs"][:1]
    return mx.sym.load_json(json.dumps(g))


@pytest.mark.parametrize("opname,n", NORMS)
def test_norm_without_gamma_beta_is_refused_at_bind(opname, n):
    """MXNet 1.9.1 loads such a file, refuses BatchNorm at bind ("vector::_M_range_check") and
    segfaults in forward for the other four; mxc refuses all five at bind."""
    s = _without_gamma_beta(opname)
    assert s.list_arguments() == ["data"]
    with pytest.raises(MXNetError, match=f"Operator {opname} expects {n} inputs \\(.*\\), but got 1"):
        s.simple_bind(mx.cpu(), data=(2, 4, 3, 3))
    with pytest.raises(MXNetError, match=f"expects {n} inputs"):
        s.bind(mx.cpu(), {"data": mx.nd.ones((2, 4, 3, 3))})


@pytest.mark.parametrize("opname,n", NORMS)
def test_norm_without_gamma_beta_is_refused_by_cachedop(opname, n):
    op = mx.nd.CachedOp(_without_gamma_beta(opname))
    with pytest.raises(MXNetError, match=f"expects {n} inputs"):
        op(mx.nd.ones((2, 4, 3, 3)))


def test_the_input_count_is_checked_where_every_path_infers():
    """The registry's infer of a fixed-input operator counts its inputs (mx.nd's front checks
    names first; this is the check under every path)."""
    from mxc.ops import registry
    bn = registry.get("BatchNorm")
    with pytest.raises(MXNetError, match="Operator BatchNorm expects 5 inputs \\(data, gamma, beta, moving_mean, moving_var\\), but got 1"):
        bn.infer(bn.parse({}), [(2, 4)], [np.float32])
    fc = registry.get("FullyConnected")
    with pytest.raises(MXNetError, match="Operator FullyConnected expects 2 inputs \\(data, weight\\), but got 1"):
        fc.infer(fc.parse({"num_hidden": 3, "no_bias": True}), [(2, 4)], [np.float32])
    assert fc.infer(fc.parse({"num_hidden": 3, "no_bias": True}), [(2, 4), (3, 4)],
                    [np.float32] * 2)[0] == [(2, 3)]

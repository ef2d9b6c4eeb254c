"""Operator parameters serialise as MXNet 1.9.1 writes them: for every case of
tests/data/symbol_attrs/cases.py, the node's op name and its ``tojson`` attrs equal those real
MXNet wrote (mxnet_attrs.json, made by make_fixture.py there), so an exported graph loads in
MXNet (an explicit ``end=None`` is kept as "None": MXNet refuses slice_axis without it)."""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxc as mx

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "symbol_attrs")
_spec = importlib.util.spec_from_file_location("_attr_cases", os.path.join(DATA, "cases.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
with open(os.path.join(DATA, "mxnet_attrs.json")) as _f:
    EXPECTED = json.load(_f)["cases"]


@pytest.mark.parametrize("cid,path,nin,kwargs_src", _cases.CASES, ids=[c[0] for c in _cases.CASES])
def test_attrs_as_mxnet(cid, path, nin, kwargs_src):
    fn = mx.sym
    for part in path.split("."):
        fn = getattr(fn, part)
    args = [mx.sym.var(f"x{i}") for i in range(nin)]
    sym = fn(*args, name="op", **eval(kwargs_src, {"np": np}))
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["name"] == "op"][0]
    assert {"op": node["op"], "attrs": node.get("attrs", {})} == EXPECTED[cid]


def test_astype_is_a_cast_node():
    """Symbol.astype (hybridized GluonNLP BERT and beam search call it) is MXNet's Cast node."""
    sym = mx.sym.var("a").astype(np.float16)
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["op"] == "Cast" and node["attrs"] == {"dtype": "float16"}
    out = sym.eval(a=mx.nd.array([1.5, -2.25, 70000.0]))[0]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), np.array([1.5, -2.25, 70000.0], np.float16))


def test_zeros_like_takes_dtype():
    """zeros_like/ones_like accept dtype= and, as MXNet 1.9.1, keep the input's dtype."""
    a = mx.nd.array([[1, 2, 3]], dtype="float16")
    for fn, value in ((mx.nd.zeros_like, 0), (mx.nd.ones_like, 1)):
        out = fn(a, dtype="int64")
        assert out.dtype == np.float16
        np.testing.assert_array_equal(out.asnumpy(), np.full((1, 3), value, np.float16))
    out = mx.sym.ones_like(mx.sym.var("a"), dtype="int64").eval(a=a)[0]
    assert out.dtype == np.float16 and out.asnumpy().tolist() == [[1, 1, 1]]


def test_fused_rnn_export_names_rnn_param_concat():
    """A hybridized fused LSTM exports the graph MXNet 1.9.1 writes: its packed parameters come
    from a _rnn_param_concat node (MXNet's name; Concat before), then RNN."""
    net = mx.gluon.rnn.LSTM(8, 2)
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((5, 2, 4)))
    sym = net._cached_graph[1]
    nodes = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]
    assert [n["op"] for n in nodes] == ["Reshape"] * 8 + ["_rnn_param_concat", "RNN"]
    assert nodes[8]["attrs"] == {"dim": "0", "num_args": "8"}

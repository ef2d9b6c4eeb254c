"""mx.sym.sparse and stype'd variables (mxc/symbol/sparse.py, Variable's __storage_type__)."""
import json
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

# MXNet 1.9.1's mx.sym.sparse (the operators with a "_sparse_" alias); mxc lacks the two
# straight-through-estimator contrib operators
MXNET_SPARSE_NAMES = {
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "abs", "adagrad_update", "adam_update",
    "add_n", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add",
    "broadcast_div", "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub",
    "cast_storage", "cbrt", "ceil", "clip", "concat", "cos", "cosh", "degrees", "dot",
    "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix",
    "floor", "ftrl_update", "gamma", "gammaln", "log", "log10", "log1p", "log2", "make_loss",
    "mean", "negative", "norm", "radians", "relu", "retain", "rint", "round", "rsqrt",
    "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh", "slice", "sqrt", "square",
    "stop_gradient", "sum", "tan", "tanh", "trunc", "where", "zeros_like"}


def test_namespace_has_mxnets_sparse_operators():
    have = {n for n in dir(mx.sym.sparse) if not n.startswith("__")}
    assert MXNET_SPARSE_NAMES <= have
    import mxc.symbol.sparse as mod
    assert mod is mx.sym.sparse


@pytest.mark.parametrize("short,op", [("dot", "dot"), ("retain", "_sparse_retain"),
                                      ("elemwise_add", "elemwise_add"),
                                      ("sgd_update", "sgd_update"),
                                      ("adagrad_update", "_sparse_adagrad_update"),
                                      ("cast_storage", "cast_storage")])
def test_node_operator_and_auto_name(short, op):
    a = mx.sym.var("a", stype="csr")
    b = mx.sym.var("b")
    fn = getattr(mx.sym.sparse, short)
    if short == "cast_storage":
        s = fn(a, stype="default")
    elif short == "sgd_update":
        s = fn(a, b, lr=0.1)
    elif short == "adagrad_update":
        s = fn(a, b, b, lr=0.1)
    else:
        s = fn(a, b)
    nodes = json.loads(s.tojson())["nodes"]
    assert nodes[-1]["op"] == op
    # automatic names use the short name, as MXNet's (dot0, retain0, ...)
    assert s.name.startswith(short.lower())
    assert s.name[len(short):].isdigit()


@pytest.mark.parametrize("stype,code", [("csr", "2"), ("row_sparse", "1"), ("default", "0")])
def test_variable_stype_attribute(stype, code):
    v = mx.sym.Variable("w", stype=stype)
    assert v.attr("__storage_type__") == code
    assert v.list_attr() == {"__storage_type__": code}
    back = mx.sym.load_json(v.tojson())
    assert back.attr("__storage_type__") == code


def test_variable_bad_stype():
    with pytest.raises(KeyError):
        mx.sym.Variable("w", stype="coo")


def test_sparse_dot_shape_and_type_inference():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse")
    y = mx.sym.sparse.dot(x, w)
    arg, out, aux = y.infer_shape(data=(7, 5), weight=(5, 3))
    assert arg == [(7, 5), (5, 3)] and out == [(7, 3)] and aux == []
    _, out_t, _ = y.infer_type(data=np.float32)
    assert out_t == [np.float32]
    t = mx.sym.sparse.dot(x, w, transpose_a=True)
    assert t.infer_shape(data=(7, 5), weight=(7, 3))[1] == [(5, 3)]


def test_sparse_symbol_json_round_trip_runs(rng):
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse")
    y = mx.sym.sparse.dot(x, w)
    back = mx.sym.load_json(y.tojson())
    assert back.tojson() == y.tojson()
    d = rng.random((4, 5)) * (rng.random((4, 5)) < 0.5)
    wn = rng.random((5, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ex = back.bind(mx.cpu(), {"data": mx.nd.array(d).tostype("csr"),
                                  "weight": mx.nd.array(wn).tostype("row_sparse")})
        out = ex.forward()[0].asnumpy()
    np.testing.assert_allclose(out, d @ wn, rtol=1e-5, atol=1e-6)


def test_unknown_storage_type_in_stype_dict():
    x = mx.sym.Variable("x")
    with pytest.raises(MXNetError, match="unknown storage type"):
        mx.sym.exp(x).simple_bind(mx.cpu(), x=(2, 2), stype_dict={"x": "coo"})

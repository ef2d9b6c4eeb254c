"""CachedOp's inline_limit: under autograd.record a graph of at most inline_limit operators runs
operator by operator (each recorded), a larger one is one ``_CachedOp`` node. Node counts and
layout are MXNet 1.9.1's (its autograd.get_symbol on the same nets: 10 nodes with three
FullyConnected for inline_limit 3 or 10, 8 with one _CachedOp for 0 or 2)."""
import json

import numpy as np
import pytest

import mxc as mx


def _net(layers=3):
    net = mx.gluon.nn.HybridSequential()
    for _ in range(layers):
        net.add(mx.gluon.nn.Dense(10))
    net.initialize(mx.init.Uniform(1))
    return net


def _recorded(net, limit, x):
    net.hybridize(inline_limit=limit)
    with mx.autograd.record():
        y = net(x)
    return y, json.loads(mx.autograd.get_symbol(y).tojson())


@pytest.mark.parametrize("limit, ops, n_nodes", [(3, ["FullyConnected"] * 3, 10),
                                                 (10, ["FullyConnected"] * 3, 10),
                                                 (2, ["_CachedOp"], 8), (0, ["_CachedOp"], 8)])
def test_get_symbol_nodes_as_mxnet(limit, ops, n_nodes):
    y, js = _recorded(_net(), limit, mx.nd.zeros((1, 10)))
    assert len(js["nodes"]) == n_nodes
    assert [n["op"] for n in js["nodes"] if n["op"] != "null"] == ops
    assert len(js["arg_nodes"]) == 7 and js["heads"] == [[n_nodes - 1, 0, 0]]
    cached = [n for n in js["nodes"] if n["op"] == "_CachedOp"]
    if cached:      # MXNet writes the node with its inputs and no attributes
        assert len(cached[0]["inputs"]) == 7 and "attrs" not in cached[0]
    y.backward()


def test_inlined_and_cached_give_the_same_values_and_gradients():
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (2, 10)))
    got = []
    net = _net()
    for limit in (0, 3):
        y, _ = _recorded(net, limit, x)
        y.backward()
        got.append((y.asnumpy(), [p.grad().asnumpy() for p in net.collect_params().values()]))
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-6)
    for a, b in zip(got[0][1], got[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # and numpy's: out = ((x W0' + b0) W1' + b1) W2' + b2
    ref = x.asnumpy()
    ps = [p.data().asnumpy() for p in net.collect_params().values()]
    for w, b in zip(ps[0::2], ps[1::2]):
        ref = ref @ w.T + b
    np.testing.assert_allclose(got[0][0], ref, rtol=1e-5, atol=1e-5)


def test_static_alloc_never_inlines():
    net = _net(1)
    net.hybridize(static_alloc=True, inline_limit=5)
    with mx.autograd.record():
        y = net(mx.nd.ones((1, 4)))
    js = json.loads(mx.autograd.get_symbol(y).tojson())
    assert [n["op"] for n in js["nodes"] if n["op"] != "null"] == ["_CachedOp"]


def test_cached_op_node_binds_and_runs():
    """The _CachedOp node of get_symbol is a working operator in this process: shapes infer
    through its graph and a bound executor reproduces the recorded output."""
    net = _net(2)
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (3, 5)))
    y, _ = _recorded(net, 0, x)
    sym = mx.autograd.get_symbol(y)
    params = [p.data() for p in net.collect_params().values()]
    names = sym.list_arguments()
    assert len(names) == 5 and sym.list_outputs()[0].endswith("_fwd_output")
    # the inputs in the CachedOp's order: data, then the parameters as the block lists them
    shapes = dict(zip(names, [x.shape] + [p.shape for p in params]))
    assert sym.infer_shape(**shapes)[1] == [(3, 10)]
    ex = sym.bind(mx.cpu(), dict(zip(names, [x] + params)))
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), y.asnumpy(), rtol=1e-6)

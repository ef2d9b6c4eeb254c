"""mx.sym.contrib.foreach / while_loop / cond: the _foreach, _while_loop and _cond nodes with
their subgraphs, bound and run by the executor (values against numpy loops, gradients against
central differences), serialised as MXNet 1.9.1 writes them (fixtures made by MXNet:
tests/data/make_control_flow_golden.py) and run inside a hybridized HybridBlock."""
import importlib.util
import os
import sys
from collections import defaultdict

import numpy as np
import pytest

import mxc as mx
from mxc.attribute import AttrScope

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def _golden_build(kind, monkeypatch):
    """The fixture script's construction, run with mxc as `mx`."""
    monkeypatch.setitem(sys.modules, "mxnet", mx)
    spec = importlib.util.spec_from_file_location(
        "make_control_flow_golden", os.path.join(DATA, "make_control_flow_golden.py"))
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    monkeypatch.setattr(AttrScope, "_subgraph_names", defaultdict(int))
    return g.build(kind)


def _bind_run(sym, args, out_grads=None, dtype="float32"):
    arrs = {k: mx.nd.array(v, dtype=dtype) for k, v in args.items()}
    grads = {k: mx.nd.zeros(v.shape, dtype=dtype) for k, v in args.items()}
    ex = sym.bind(mx.cpu(), args=arrs, args_grad=grads)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    if out_grads is None:
        out_grads = [np.ones(o.shape) for o in outs]
    ex.backward([mx.nd.array(g, dtype=dtype) for g in out_grads])
    return outs, {k: v.asnumpy() for k, v in grads.items()}


def _central(sym, args, out_grads, eps=1e-6):
    """d(sum_k out_k * out_grads_k)/d(arg) by central differences, in float64."""
    def f(a):
        ex = sym.bind(mx.cpu(), args={k: mx.nd.array(v, dtype="float64") for k, v in a.items()})
        return sum(float((o.asnumpy() * g).sum()) for o, g in zip(ex.forward(), out_grads))
    res = {}
    for k, v in args.items():
        g = np.zeros(v.shape)
        for idx in np.ndindex(v.shape):
            plus = {n: x.copy() for n, x in args.items()}
            minus = {n: x.copy() for n, x in args.items()}
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (f(plus) - f(minus)) / (2 * eps)
        res[k] = g
    return res


@pytest.mark.parametrize("kind", ["foreach", "while_loop", "cond"])
def test_mxnet_fixture_round_trip(kind, monkeypatch):
    path = os.path.join(DATA, "control_flow", f"{kind}-symbol.json")
    with open(path) as f:
        text = f.read()
    # mxc writes MXNet's file byte for byte, from MXNet's file and from its own construction
    loaded = mx.sym.load(path)
    assert loaded.tojson() == text
    built = _golden_build(kind, monkeypatch)
    assert built.tojson() == text
    ref = np.load(os.path.join(DATA, "control_flow", f"{kind}.npz"))
    args = {k[3:]: ref[k] for k in ref.files if k.startswith("in_")}
    for sym in (loaded, built):
        outs, grads = _bind_run(sym, args)
        for i, o in enumerate(outs):
            np.testing.assert_allclose(o, ref[f"out_{i}"], rtol=1e-5, atol=1e-6)
        for k, g in grads.items():
            np.testing.assert_allclose(g, ref[f"grad_{k}"], rtol=1e-5, atol=1e-6)


def test_foreach_values_and_gradients():
    data, h, w = mx.sym.var("data"), mx.sym.var("h"), mx.sym.var("w")
    outs, states = mx.sym.contrib.foreach(
        lambda x, st: ([x * st[0], x + w], [mx.sym.tanh(st[0] * w + x)]), data, [h])
    sym = mx.sym.Group(outs + states)
    rng = np.random.RandomState(0)
    args = {"data": rng.uniform(-1, 1, (4, 3)), "h": rng.uniform(-1, 1, (3,)),
            "w": rng.uniform(-1, 1, (3,))}
    # numpy loop
    st, o0, o1 = args["h"], [], []
    for x in args["data"]:
        o0.append(x * st)
        o1.append(x + args["w"])
        st = np.tanh(st * args["w"] + x)
    out_grads = [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3,))]
    outs, grads = _bind_run(sym, args, out_grads, dtype="float64")
    np.testing.assert_allclose(outs[0], np.stack(o0), rtol=1e-12)
    np.testing.assert_allclose(outs[1], np.stack(o1), rtol=1e-12)
    np.testing.assert_allclose(outs[2], st, rtol=1e-12)
    num = _central(sym, args, out_grads)
    for k in args:
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)
    assert sym.infer_shape(data=(4, 3), h=(3,), w=(3,))[1] == [(4, 3), (4, 3), (3,)]


def test_while_loop_values_padding_and_gradients():
    i, s, w = mx.sym.var("i"), mx.sym.var("s"), mx.sym.var("w")
    outs, (i_end, s_end) = mx.sym.contrib.while_loop(
        cond=lambda i, s: i < 3,
        func=lambda i, s: ([s * w], [i + 1, mx.sym.sin(s) + w]),
        loop_vars=[i, s], max_iterations=5)
    sym = mx.sym.Group([outs[0], i_end, s_end])
    rng = np.random.RandomState(1)
    args = {"i": np.array([0.0]), "s": rng.uniform(-1, 1, (2,)), "w": rng.uniform(-1, 1, (2,))}
    cur, steps = args["s"], []
    for _ in range(3):
        steps.append(cur * args["w"])
        cur = np.sin(cur) + args["w"]
    out_grads = [rng.uniform(-1, 1, (5, 2)), np.zeros(1), rng.uniform(-1, 1, (2,))]
    outs, grads = _bind_run(sym, args, out_grads, dtype="float64")
    assert outs[0].shape == (5, 2)              # max_iterations rows
    np.testing.assert_allclose(outs[0][:3], np.stack(steps), rtol=1e-12)
    np.testing.assert_array_equal(outs[0][3:], 0)   # rows past the last step: zeros in mxc
    assert outs[1][0] == 3
    np.testing.assert_allclose(outs[2], cur, rtol=1e-12)
    num = _central(sym, args, out_grads)
    for k in ("s", "w"):
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("scale", [0.1, 10.0])
def test_cond_both_branches_and_gradients(scale):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.contrib.cond(mx.sym.sum(a * b) < 5, lambda: a * b + a,
                              lambda: mx.sym.exp(a - b))
    rng = np.random.RandomState(2)
    args = {"a": rng.uniform(0.5, 1, (3,)) * scale, "b": rng.uniform(0.5, 1, (3,))}
    then = (args["a"] * args["b"]).sum() < 5
    want = args["a"] * args["b"] + args["a"] if then else np.exp(args["a"] - args["b"])
    assert then == (scale < 1)
    out_grads = [rng.uniform(-1, 1, (3,))]
    outs, grads = _bind_run(out, args, out_grads, dtype="float64")
    np.testing.assert_allclose(outs[0], want, rtol=1e-12)
    num = _central(out, args, out_grads)
    for k in args:
        np.testing.assert_allclose(grads[k], num[k], rtol=1e-5, atol=1e-7, err_msg=k)


def test_nested_foreach_in_while_loop_json_round_trip():
    data, s = mx.sym.var("data"), mx.sym.var("s")

    def body(i, acc):
        rows, (last,) = mx.sym.contrib.foreach(lambda x, st: (x + st[0], [st[0] + x]), data,
                                                [acc])
        return [mx.sym.sum(rows)], [i + 1, last]
    outs, (_, acc) = mx.sym.contrib.while_loop(lambda i, acc: i < 2, body,
                                               [mx.sym.var("i"), s], max_iterations=2)
    sym = mx.sym.Group([outs[0], acc])
    again = mx.sym.load_json(sym.tojson())
    assert again.tojson() == sym.tojson()
    d = np.arange(6.0).reshape(3, 2)
    args = {"data": d, "s": np.array([1.0, -1.0]), "i": np.array([0.0])}
    acc_np, sums = args["s"], []
    for _ in range(2):
        rows = []
        for x in d:
            rows.append(x + acc_np)
            acc_np = acc_np + x
        sums.append(np.sum(rows))
    for g in (sym, again):
        outs, _ = _bind_run(g, args, dtype="float64")
        np.testing.assert_allclose(outs[0][:, 0], sums)
        np.testing.assert_allclose(outs[1], acc_np)


def test_hybridized_block_matches_imperative():
    class Scan(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3,))

        def hybrid_forward(self, F, x, h, w):
            outs, states = F.contrib.foreach(lambda d, st: (d * w + st[0], [st[0] * 0.5 + d]),
                                             x, [h])
            return outs, states[0]

    rng = np.random.RandomState(3)
    x = mx.nd.array(rng.uniform(-1, 1, (4, 3)))
    h = mx.nd.array(rng.uniform(-1, 1, (3,)))
    results = []
    for hybridize in (False, True):
        net = Scan()
        net.initialize(mx.init.Constant(0.5))
        if hybridize:
            net.hybridize()
        with mx.autograd.record():
            outs, last = net(x, h)
            loss = (outs * outs).sum() + last.sum()
        loss.backward()
        results.append((outs.asnumpy(), last.asnumpy(), net.w.grad().asnumpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_errors():
    i = mx.sym.var("i")
    with pytest.raises(ValueError, match="max_iterations"):
        mx.sym.contrib.while_loop(lambda i: i < 2, lambda i: ([], [i + 1]), [i])
    with pytest.raises(ValueError, match="Number of outputs differs"):
        mx.sym.contrib.cond(i < 1, lambda: [i + 1, i], lambda: i - 1)
    with pytest.raises(mx.base.MXNetError, match="subgraphs"):
        mx.sym.load_json('{"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "_cond", '
                         '"name": "c", "attrs": {"num_args": "4", "num_outputs": "1"}, '
                         '"inputs": [[0, 0, 0]], "subgraphs": 3}], "arg_nodes": [0], '
                         '"heads": [[1, 0, 0]]}')

"""Common subexpression elimination at bind (MXNET_ELIMINATE_COMMON_EXPR): merged graphs
compute what the unmerged ones do; node counts saved are MXNet 1.9.1's (its
test_eliminate_common_expr expectations)."""
import json

import numpy as np
import pytest

import mxc as mx
from mxc.executor.cse import eliminate_common_expr

a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
d = a + 1


def _bind(sym, env, monkeypatch, grad_req="write", **shapes):
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", env)
    return sym.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)


@pytest.mark.parametrize("make,saved", [
    (lambda: (a + 1) + (a + 2), 0),
    (lambda: (a + b) + (a + b), 1),
    (lambda: ((a + b) + c) + ((a + b) + c), 2),
    (lambda: mx.sym.Group([a * d, a * d]), 0),      # merged, then a _copy output
    (lambda: mx.sym.Group([a * d + b, a * d + b]), 1),
    (lambda: mx.sym.Dropout(a) + mx.sym.Dropout(a), 0),     # random: never merged
])
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_nodes_saved_and_values_unchanged(make, saved, grad_req, monkeypatch):
    sym = make()
    names = sym.list_arguments()
    rng = np.random.RandomState(0)
    vals = {n: rng.uniform(-1, 1, (3, 4)).astype(np.float32) for n in names}
    shapes = {n: (3, 4) for n in names}
    results = []
    for env in ("0", "1"):
        ex = _bind(sym, env, monkeypatch, grad_req, **shapes)
        for n, v in vals.items():
            ex.arg_dict[n][:] = v
            ex.grad_dict[n][:] = 0.5
        outs = ex.forward(is_train=True)
        ex.backward([mx.nd.ones_like(o) for o in outs])
        results.append(([o.asnumpy() for o in ex.outputs],
                        [ex.grad_dict[n].asnumpy() for n in names],
                        len(ex.get_optimized_symbol().get_internals())))
    (o0, g0, n0), (o1, g1, n1) = results
    assert n0 == n1 + saved
    if "Dropout" in sym.tojson():
        return
    for x, y in zip(o0 + g0, o1 + g1):
        np.testing.assert_array_equal(x, y)


def test_values_against_numpy(monkeypatch):
    """(a*b + c) twice, summed: merged to one product and one sum; gradients doubled."""
    sym = (a * b + c) + (a * b + c)
    ex = _bind(sym, "1", monkeypatch, a=(2, 3), b=(2, 3), c=(2, 3))
    rng = np.random.RandomState(1)
    va, vb, vc = (rng.uniform(-1, 1, (2, 3)).astype(np.float32) for _ in range(3))
    out = ex.forward(is_train=True, a=va, b=vb, c=vc)[0]
    ex.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(out.asnumpy(), 2 * (va * vb + vc), rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["a"].asnumpy(), 2 * vb, rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), 2 * va, rtol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["c"].asnumpy(), np.full((2, 3), 2), rtol=1e-6)
    ops = [n["op"] for n in json.loads(ex.get_optimized_symbol().tojson())["nodes"]]
    assert ops.count("elemwise_mul") == 1 and ops.count("elemwise_add") == 2


def test_what_is_never_merged():
    """Different attributes, mutating operators (BatchNorm's moving statistics) and random
    ones stay apart; the user's symbol is never changed."""
    x = mx.sym.var("x")
    s1 = mx.sym.sum(x, axis=0) + mx.sym.sum(x, axis=1).reshape((-1,))
    assert eliminate_common_expr(s1) is s1
    g, beta, mm, mv = (mx.sym.var(n) for n in ("g", "beta", "mm", "mv"))
    bn = mx.sym.BatchNorm(x, g, beta, mm, mv) + mx.sym.BatchNorm(x, g, beta, mm, mv)
    assert eliminate_common_expr(bn) is bn
    rnd = mx.sym.random.uniform(shape=(2,)) + mx.sym.random.uniform(shape=(2,))
    assert eliminate_common_expr(rnd) is rnd
    dup = mx.sym.exp(x) * mx.sym.exp(x)
    before = dup.tojson()
    merged = eliminate_common_expr(dup)
    assert dup.tojson() == before
    assert len(merged.get_internals()) == len(dup.get_internals()) - 1


def test_duplicate_outputs_are_copies_named_as_mxnet():
    x = mx.sym.var("x")
    merged = eliminate_common_expr(mx.sym.Group([mx.sym.exp(x, name="e1"),
                                                 mx.sym.exp(x, name="e2"),
                                                 mx.sym.exp(x, name="e3")]))
    assert merged.list_outputs() == ["e1_output", "e1_0_copy_output", "e1_1_copy_output"]


def test_cached_op_runs_the_merged_graph(monkeypatch):
    x = mx.sym.var("x")
    sym = mx.sym.tanh(x) * mx.sym.tanh(x)
    v = np.linspace(-1, 1, 6).astype(np.float32)
    for env, nsteps in (("1", 2), ("0", 3)):
        monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", env)
        op = mx.nd.CachedOp(sym)
        xa = mx.nd.array(v)
        xa.attach_grad()
        with mx.autograd.record():
            y = op(xa)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), np.tanh(v) ** 2, rtol=1e-6)
        np.testing.assert_allclose(xa.grad.asnumpy(), 2 * np.tanh(v) * (1 - np.tanh(v) ** 2),
                                   rtol=1e-5, atol=1e-7)
        assert len(op._plan.steps) == nsteps

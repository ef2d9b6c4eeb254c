"""Fusion of pointwise chains in bulk operations (mxc/_core/handle.pyx KernelSeq,
csrc/mxc/tiled_chain.h, mxc/ops/_fusion.py): fused runs give bit-identical results to unfused
runs, and chains form only where the rules allow."""
import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon, nd
from mxc._core import handle as _h
from mxc.ops import registry

# (257, 1031): 264,967 elements, so 32 full tiles of 8192 and a partial one
SHAPE = (257, 1031)


def _chain_sym():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    z = mx.sym.tanh(x * y + 1.5) * 2 - x
    return mx.sym.Activation(z, act_type="relu") + mx.sym.sigmoid(y) / (mx.sym.abs(x) + 1)


def _reference(xa, ya):
    x, y = xa.astype(np.float64), ya.astype(np.float64)
    z = np.tanh(x * y + 1.5) * 2 - x
    return np.maximum(z, 0) + 1 / (1 + np.exp(-y)) / (np.abs(x) + 1)


def _inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal(SHAPE).astype(np.float32),
            rng.standard_normal(SHAPE).astype(np.float32))


def _run_bound(monkeypatch, fusion):
    monkeypatch.setenv("MXNET_USE_FUSION", "1" if fusion else "0")
    xa, ya = _inputs()
    ex = _chain_sym().simple_bind(mx.cpu(), x=SHAPE, y=SHAPE)
    ex.arg_dict["x"][:] = xa
    ex.arg_dict["y"][:] = ya
    head = nd.array(np.linspace(-1, 1, xa.size, dtype=np.float32).reshape(SHAPE))
    for _ in range(3):      # the second run captures the bulk operations; the third reuses them
        out = ex.forward(is_train=True)[0].asnumpy()
        ex.backward(head)
    st = ex._states[(True, False)]     # (with gradients, not folded)
    chains = [c for seq in st.fwd.bulks[True] + st.bwd.bulks[True]
              if isinstance(seq, _h.KernelSeq) for c in seq.fused_chains]
    return out, ex.grad_dict["x"].asnumpy(), ex.grad_dict["y"].asnumpy(), chains


def test_bound_executor_fused_equals_unfused_bit_for_bit(monkeypatch):
    fused = _run_bound(monkeypatch, True)
    plain = _run_bound(monkeypatch, False)
    # forward and backward both form chains over every element
    assert fused[3] and all(n == SHAPE[0] * SHAPE[1] and m >= 2 for _, m, n in fused[3])
    assert sum(m for _, m, _ in fused[3]) >= 12
    assert plain[3] == []
    for a, b in zip(fused[:3], plain[:3]):
        assert np.array_equal(a, b)
    xa, ya = _inputs()
    np.testing.assert_allclose(fused[0], _reference(xa, ya), rtol=2e-5, atol=2e-6)


def test_bound_executor_gradient_matches_numeric():
    x, = _inputs()[:1]
    x = x[:64, :512] * 0.5         # small enough for a numerical gradient, big enough to fuse
    v = mx.sym.var("x")
    sym = mx.sym.tanh(v * 3 + 1) * v - 0.25
    ex = sym.simple_bind(mx.cpu(), x=x.shape)
    ex.arg_dict["x"][:] = x
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(nd.ones(x.shape))
    x64 = x.astype(np.float64)
    t = np.tanh(3 * x64 + 1)
    want = t + x64 * 3 * (1 - t * t)
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), want, rtol=1e-4, atol=1e-5)


class _Chain(gluon.HybridBlock):
    def hybrid_forward(self, F, x, y):
        z = F.tanh(x * y + 1.5) * 2 - x
        return F.Activation(z, act_type="relu") + F.sigmoid(y) / (F.abs(x) + 1)


def test_static_hybridized_block_fuses_and_matches(monkeypatch):
    seen = []
    real = _h.KernelSeq

    def spy(calls, labels, name=b"bulk"):
        seq = real(calls, labels, name)
        seen.extend(seq.fused_chains)
        return seq
    monkeypatch.setattr(_h, "KernelSeq", spy)
    xa, ya = _inputs()
    results = {}
    for fusion in ("1", "0"):
        monkeypatch.setenv("MXNET_USE_FUSION", fusion)
        net = _Chain()
        net.hybridize(static_alloc=True, static_shape=True)
        x, y = nd.array(xa), nd.array(ya)
        x.attach_grad()
        for _ in range(3):
            with autograd.record():
                out = net(x, y)
            out.backward()
        results[fusion] = (out.asnumpy(), x.grad.asnumpy())
        if fusion == "1":
            assert seen, "no chain was fused"
            seen.clear()
        else:
            assert seen == []
    for a, b in zip(results["1"], results["0"]):
        assert np.array_equal(a, b)
    imperative = _Chain()(nd.array(xa), nd.array(ya)).asnumpy()
    assert np.array_equal(results["1"][0], imperative)


def _step(name, ins, outs, **attrs):
    """One planned step: the OpDef's forward on given arrays (as the executor runs it)."""
    op = registry.get(name)
    op.forward(op.parse({k: str(v) for k, v in attrs.items()}), ins, outs)


def _captured(fn):
    _h.capture_begin()
    try:
        fn()
    finally:
        calls = _h.capture_end()
    return _h.KernelSeq(calls, ["t"] * len(calls))


def _overlap_run(n):
    base = nd.array(np.arange(2 * n, dtype=np.float32))
    a, shifted = base[0:n], base[1:n + 1]       # views one element apart
    tmp, c = nd.empty((n,)), nd.empty((n,))

    def ops():
        _step("_mul_scalar", [a], [tmp], scalar=1e-5)   # a * 1e-5 -> tmp, exp(tmp) -> c: a chain
        _step("exp", [tmp], [c])
        _step("negative", [c], [shifted])       # writes over a, one element shifted
    seq = _captured(ops)
    seq.run()
    return seq.fused_chains, base.asnumpy()


def test_partial_overlap_breaks_the_chain(monkeypatch):
    n = 1 << 16
    chains, got = _overlap_run(n)
    assert [m for _, m, _ in chains] == [2]
    monkeypatch.setenv("MXNET_USE_FUSION", "0")
    chains0, want = _overlap_run(n)
    assert chains0 == []
    np.testing.assert_array_equal(got, want)
    ref = np.arange(2 * n, dtype=np.float32)
    ref[1:n + 1] = -np.exp(ref[:n] * np.float32(1e-5))
    np.testing.assert_allclose(got, ref, rtol=3e-7)


def test_exact_overlap_in_place_is_fused_and_correct():
    n = 100_003
    xa = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x = nd.array(xa)

    def ops():
        _step("exp", [x], [x])
        _step("sqrt", [x], [x])
        _step("log", [x], [x])
    seq = _captured(ops)
    assert seq.fused_chains == [(0, 3, n)]
    seq.run()
    want = np.log(np.sqrt(np.exp(xa.astype(np.float64))))
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_small_arrays_and_switched_off_do_not_fuse(monkeypatch):
    def two_exps(n):
        x, y = nd.ones((n,)), nd.empty((n,))
        return _captured(lambda: (_step("exp", [x], [y]), _step("exp", [y], [y])))
    assert two_exps(_h.chain_min_elems() - 1).fused_chains == []
    assert len(two_exps(_h.chain_min_elems()).fused_chains) == 1
    monkeypatch.setenv("MXNET_USE_FUSION", "0")
    assert two_exps(_h.chain_min_elems()).fused_chains == []


def test_non_pointwise_kernel_splits_chains():
    n = 1 << 16
    x, y, s = nd.ones((n,)), nd.empty((n,)), nd.empty((n,))

    def ops():
        _step("exp", [x], [y])
        _step("exp", [y], [y])
        _step("softmax", [y], [s])          # reads the whole row: not pointwise
        _step("exp", [s], [s])
        _step("exp", [s], [y])
    seq = _captured(ops)
    assert [m for _, m, _ in seq.fused_chains] == [2, 2]

"""Fused pointwise chains on a real GPU (mxc/ops/cuda/fusion.py): a static hybridized block
and a bound executor give, bit for bit, what the same graph gives with MXNET_USE_FUSION=0
(each operator its own kernel), forward and gradients, float32 and float16; the fused plan
generates kernels. Skipped without a CUDA device (conftest.py)."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops.cuda import fusion


class Chain(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, w):
        h = F.Activation(F.exp(x * 0.25) + w, act_type="softrelu")
        return F.LeakyReLU(F.clip(h * 3.0 - 1.5, -1.0, 2.0), act_type="elu", slope=0.3)


def _run(monkeypatch, fused, dtype):
    monkeypatch.setenv("MXNET_USE_FUSION", "1" if fused else "0")
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((64, 300)).astype(dtype)
    wv = rng.standard_normal((64, 300)).astype(dtype)
    net = Chain()
    net.hybridize(static_alloc=True, static_shape=True)
    ctx = mx.gpu(0)
    x, w = mx.nd.array(xv, ctx=ctx, dtype=dtype), mx.nd.array(wv, ctx=ctx, dtype=dtype)
    x.attach_grad()
    outs = []
    for _ in range(3):                 # the second run captures the plan, the third reuses it
        with mx.autograd.record():
            y = net(x, w)
        y.backward()
        outs.append((y.asnumpy(), x.grad.asnumpy()))
    return outs


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_static_block_fused_equals_unfused(monkeypatch, dtype):
    fused = _run(monkeypatch, True, dtype)
    plain = _run(monkeypatch, False, dtype)
    for (y1, g1), (y0, g0) in zip(fused, plain):
        assert y1.tobytes() == y0.tobytes() and g1.tobytes() == g0.tobytes()
    assert np.isfinite(fused[-1][0]).all() and np.count_nonzero(fused[-1][1]) > 0


def test_bound_executor_runs_fused_chains(monkeypatch):
    monkeypatch.setenv("MXNET_USE_FUSION", "1")
    x = mx.sym.var("x")
    sym = mx.sym.sigmoid(mx.sym.tanh(x) * 3.0) + x
    before = len(fusion._SOURCES)
    ex = sym.simple_bind(mx.gpu(0), x=(128, 257))
    xv = np.random.default_rng(1).standard_normal((128, 257)).astype(np.float32)
    ex.arg_dict["x"][:] = xv
    for _ in range(3):
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((128, 257), ctx=mx.gpu(0)))
    ref = xv
    t = np.tanh(ref) * 3.0
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), 1 / (1 + np.exp(-t)) + ref, rtol=1e-5,
                               atol=1e-6)
    s = 1 / (1 + np.exp(-t))
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(),
                               s * (1 - s) * 3 * (1 - np.tanh(ref) ** 2) + 1, rtol=1e-4,
                               atol=1e-5)
    assert len(fusion._SOURCES) > before       # the chains were generated (forward, backward)

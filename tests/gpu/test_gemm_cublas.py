"""GEMMs through cuBLAS (mxc/ops/cuda/dot.py gemm_plan, run by CuPy on the engine's stream) on
a real device, against mxc's CPU results: dot and batch_dot with every transpose, N-d dot,
FullyConnected with and without bias, linalg_gemm with rows on a middle axis (one batched call
per outer index) and beta * C; float16 (float32 accumulation), float32, float64. Also the
device-side index checks (take mode='raise', gather_nd) failing with the operator's message.
Skipped without a GPU (conftest.py); tests/ops/cuda/test_gemm_mapping.py checks the same plans
in numpy everywhere."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

TOL = {"float16": dict(rtol=2e-2, atol=2e-2), "float32": dict(rtol=1e-5, atol=1e-5),
       "float64": dict(rtol=1e-12, atol=1e-12)}


def _both(fn, *arrays, dtype="float32"):
    cpu = fn(*[mx.nd.array(a, dtype=dtype) for a in arrays]).asnumpy()
    gpu = fn(*[mx.nd.array(a, dtype=dtype, ctx=mx.gpu(0)) for a in arrays])
    assert gpu.context == mx.gpu(0)
    return gpu.asnumpy(), cpu


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dot_and_batch_dot(dtype, ta, tb):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 30) if ta else (30, 40))
    b = rng.standard_normal((50, 40) if tb else (40, 50))
    got, want = _both(lambda x, y: mx.nd.dot(x, y, transpose_a=ta, transpose_b=tb), a, b,
                      dtype=dtype)
    np.testing.assert_allclose(got, want, **TOL[dtype])
    A = rng.standard_normal((5, 40, 30) if ta else (5, 30, 40))
    B = rng.standard_normal((5, 50, 40) if tb else (5, 40, 50))
    got, want = _both(lambda x, y: mx.nd.batch_dot(x, y, transpose_a=ta, transpose_b=tb), A, B,
                      dtype=dtype)
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_nd_dot_and_vectors():
    rng = np.random.default_rng(1)
    got, want = _both(mx.nd.dot, rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)))
    np.testing.assert_allclose(got, want, **TOL["float32"])
    got, want = _both(mx.nd.dot, rng.standard_normal(7), rng.standard_normal(7))
    np.testing.assert_allclose(got, want, **TOL["float32"])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fully_connected(dtype):
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((8, 3, 4)), rng.standard_normal((6, 12)), rng.standard_normal(6)
    got, want = _both(lambda x, w, b: mx.nd.FullyConnected(x, w, b, num_hidden=6), x, w, b,
                      dtype=dtype)
    np.testing.assert_allclose(got, want, **TOL[dtype])
    got, want = _both(lambda x, w: mx.nd.FullyConnected(x, w, num_hidden=6, no_bias=True,
                                                        flatten=False), x, w[:, :4], dtype=dtype)
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_linalg_gemm_middle_axis_and_beta():
    rng = np.random.default_rng(3)
    A, B, C = (rng.standard_normal(s) for s in ((2, 3, 4, 5), (2, 5, 4, 6), (2, 3, 4, 6)))
    got, want = _both(lambda a, b, c: mx.nd.linalg_gemm(a, b, c, alpha=0.5, beta=-2.0, axis=-3),
                      A, B, C, dtype="float64")
    np.testing.assert_allclose(got, want, **TOL["float64"])


def test_fully_connected_backward_on_gpu():
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((8, 12)), rng.standard_normal((6, 12)), rng.standard_normal(6)
    grads = {}
    for ctx in (mx.cpu(), mx.gpu(0)):
        xs = [mx.nd.array(t, ctx=ctx) for t in (x, w, b)]
        for t in xs:
            t.attach_grad()
        with mx.autograd.record():
            y = mx.nd.FullyConnected(*xs, num_hidden=6)
        y.backward(mx.nd.ones_like(y))
        grads[ctx.device_type] = [t.grad.asnumpy() for t in xs]
    for g, c in zip(grads["gpu"], grads["cpu"]):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-5)


def test_index_checks_raise_on_the_device():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3), ctx=mx.gpu(0))
    ok = mx.nd.take(a, mx.nd.array([3, 0], ctx=mx.gpu(0)), mode="raise")
    np.testing.assert_array_equal(ok.asnumpy(), np.arange(12).reshape(4, 3)[[3, 0]])
    bad = mx.nd.take(a, mx.nd.array([4, 0], ctx=mx.gpu(0)), mode="raise")
    with pytest.raises(MXNetError, match="take.*index 4 is out of bounds"):
        bad.asnumpy()
    idx = mx.nd.array([[0, 5]], ctx=mx.gpu(0), dtype="int32")
    with pytest.raises(MXNetError, match="gather_nd.*out of bounds"):
        mx.nd.gather_nd(a, idx).asnumpy()
    mx.nd.waitall()

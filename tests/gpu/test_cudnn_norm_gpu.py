"""BatchNorm through cuDNN (mxc/ops/cuda/cudnn_norm.py) on a real device, against mxc's CPU
operator and the CUDA C kernels (cudnn_off=True) in the same process: training forward and
backward with the moving statistics' update, inference, fix_gamma, use_global_stats, both
channel axes, float32 and float16. A graph no cuDNN engine takes runs as CUDA C (the results
must match either way; how many plans were made is printed). Pooling has no cuDNN path (the
frontend's Python module offers no resample operation): its cudnn_off=False and True calls run
the same CUDA C kernels and must agree bit for bit, and with the CPU. Skipped without a GPU
(conftest.py) or without the cuDNN frontend; tests/ops/cuda/test_cudnn_norm.py and
test_emulated_normalization.py check the same steps against a fake frontend everywhere."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops.cuda import cudnn_plans

pytestmark = pytest.mark.skipif(cudnn_plans.frontend() is None,
                                reason="the cuDNN frontend (module cudnn) does not import")

TOL = {"float16": dict(rtol=1e-2, atol=1e-2), "float32": dict(rtol=1e-4, atol=1e-4)}


def _bn(ctx, dtype, x, params, dy, train, **kw):
    pdt = "float32"
    xs = mx.nd.array(x, ctx=ctx, dtype=dtype)
    gamma, beta, mm, mv = (mx.nd.array(p, ctx=ctx, dtype=pdt) for p in params)
    for a in (xs, gamma, beta):
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        y = mx.nd.BatchNorm(xs, gamma, beta, mm, mv, **kw)
    y.backward(mx.nd.array(dy, ctx=ctx, dtype=dtype))
    return [a.asnumpy() for a in (y, xs.grad, gamma.grad, beta.grad, mm, mv)]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("train,kw", [
    (True, dict(fix_gamma=False)),
    (True, dict(fix_gamma=True, momentum=0.8)),
    (True, dict(fix_gamma=False, axis=-1)),
    (True, dict(fix_gamma=False, use_global_stats=True)),
    (False, dict(fix_gamma=False)),
])
def test_batchnorm_cudnn_matches_cpu_and_cuda_c(dtype, train, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 7, 9)) * 2 + 1
    c = x.shape[kw.get("axis", 1)]
    params = [rng.random(c) + 0.5, rng.standard_normal(c), rng.standard_normal(c),
              rng.random(c) + 0.5]
    dy = rng.standard_normal(x.shape)
    kw = dict(kw, eps=1e-3)
    want = _bn(mx.cpu(), dtype, x, params, dy, train, **kw)
    st0 = dict(cudnn_plans.plans().stats)
    got = _bn(mx.gpu(0), dtype, x, params, dy, train, **kw)
    st1 = dict(cudnn_plans.plans().stats)
    again = _bn(mx.gpu(0), dtype, x, params, dy, train, **kw)
    assert cudnn_plans.plans().stats["built"] == st1["built"]      # kept with their specs
    cuda_c = _bn(mx.gpu(0), dtype, x, params, dy, train, cudnn_off=True, **kw)
    print("plans made:", st1["built"] + st1["disk"] - st0["built"] - st0["disk"])
    for g, a, i, w in zip(got, again, cuda_c, want):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **TOL[dtype])
        np.testing.assert_allclose(i.astype(np.float64), w.astype(np.float64), **TOL[dtype])
        np.testing.assert_array_equal(a, g)


@pytest.mark.parametrize("kw", [
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg", count_include_pad=False),
    dict(kernel=(2, 2), stride=(2, 2), pool_type="avg", pooling_convention="full"),
    dict(global_pool=True, pool_type="max", kernel=()),
])
def test_pooling_has_one_gpu_path(kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8, 11, 10)).astype(np.float32)

    def run(ctx, **extra):
        xs = mx.nd.array(x, ctx=ctx)
        xs.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xs, **kw, **extra)
        y.backward(mx.nd.ones_like(y) * 0.5)
        return y.asnumpy(), xs.grad.asnumpy()
    want = run(mx.cpu())
    on, off = run(mx.gpu(0)), run(mx.gpu(0), cudnn_off=True)
    for a, b, w in zip(on, off, want):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, w, rtol=1e-6, atol=1e-6)

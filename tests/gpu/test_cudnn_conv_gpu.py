"""Convolution and Deconvolution through cuDNN (mxc/ops/cuda/cudnn_conv.py) on a real device,
against mxc's CPU operators and the im2col + cuBLAS path (cudnn_off=True) in the same process:
forward and both gradients, 1-D/2-D/3-D, groups, stride, dilation, Deconvolution's adj;
float64/float32 exact-ish, float16 loosely. Also: the plans are built once per shape (the
second call finds them in memory). Skipped without a GPU (conftest.py) or without the cuDNN
frontend (``pip install mxc[gpu]`` brings it); tests/ops/cuda/test_cudnn_conv.py and
test_emulated_convolution.py check the same paths against a fake frontend everywhere."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops.cuda import cudnn_plans

pytestmark = pytest.mark.skipif(cudnn_plans.frontend() is None,
                                reason="the cuDNN frontend (module cudnn) does not import")

TOL = {"float16": dict(rtol=3e-2, atol=3e-2), "float32": dict(rtol=1e-4, atol=1e-4),
       "float64": dict(rtol=1e-10, atol=1e-10)}
CASES = [
    ("Convolution", (4, 8, 12, 10), dict(kernel=(3, 3), num_filter=16, pad=(1, 1))),
    ("Convolution", (2, 8, 9, 9), dict(kernel=(3, 3), num_filter=8, stride=(2, 2),
                                       dilate=(2, 1), num_group=4, no_bias=True)),
    ("Convolution", (2, 4, 17), dict(kernel=(5,), num_filter=6, pad=(2,), stride=(3,))),
    ("Convolution", (1, 4, 5, 6, 5), dict(kernel=(3, 3, 3), num_filter=4, pad=(1, 1, 1))),
    ("Deconvolution", (2, 6, 5, 4), dict(kernel=(3, 3), num_filter=4, stride=(2, 2),
                                         pad=(1, 1), adj=(1, 0), no_bias=False)),
]


def _run(op, args, dy, ctx, dtype, **kw):
    xs = [mx.nd.array(a, ctx=ctx, dtype=dtype) for a in args]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(*xs, **kw)
    y.backward(mx.nd.array(dy, ctx=ctx, dtype=dtype))
    return [y.asnumpy()] + [x.grad.asnumpy() for x in xs]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("op,shape,kw", CASES)
def test_cudnn_matches_cpu_and_im2col(op, shape, kw, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    G = kw.get("num_group", 1)
    wshape = ((kw["num_filter"], shape[1] // G) if op == "Convolution"
              else (shape[1], kw["num_filter"] // G)) + kw["kernel"]
    bias = not kw.get("no_bias", op == "Deconvolution")
    args = [x, rng.standard_normal(wshape) * 0.3] + ([rng.standard_normal(kw["num_filter"])]
                                                      if bias else [])
    y = getattr(mx.nd, op)(*[mx.nd.array(a) for a in args], **kw)
    dy = rng.standard_normal(y.shape)
    want = _run(op, args, dy, mx.cpu(), dtype, **kw)
    def made():
        st = cudnn_plans.plans().stats
        return st["built"] + st["disk"]
    new0 = made()
    got = _run(op, args, dy, mx.gpu(0), dtype, **kw)
    new1 = made()
    again = _run(op, args, dy, mx.gpu(0), dtype, **kw)
    new2 = made()
    # the first run makes a plan per pass (forward, then two in the backward; float64 may have
    # no engine and run as im2col); the second makes none (its specs are kept with their plans)
    assert new1 - new0 >= (0 if dtype == "float64" else 2) and new2 == new1
    im2col = _run(op, args, dy, mx.gpu(0), dtype, cudnn_off=True, **kw)
    for g, a, i, w in zip(got, again, im2col, want):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **TOL[dtype])
        np.testing.assert_allclose(i.astype(np.float64), w.astype(np.float64), **TOL[dtype])
        np.testing.assert_array_equal(a, g)

"""ROIPooling, Correlation, BilinearSampler, GridGenerator, SpatialTransformer: references,
central-difference gradients and MXNet 1.9.1 goldens (misc_golden.npz)."""
import numpy as np
import pytest

import mxc as mx
from .oputil import check_forward, check_grad
from .test_misc_ops import golden_cases, run_golden

SPATIAL = ("ROIPooling", "Correlation", "BilinearSampler", "GridGenerator", "SpatialTransformer")


@pytest.mark.parametrize("name", golden_cases(SPATIAL))
def test_golden(name):
    run_golden(name, rtol=1e-4, atol=1e-5)


def test_roipooling_forward():
    x = np.arange(2 * 1 * 4 * 4, dtype=np.float64).reshape(2, 1, 4, 4)
    rois = np.array([[1, 0, 0, 3, 3], [0, 1, 1, 2, 2]], dtype=np.float64)
    exp = np.array([[[[21, 23], [29, 31]]], [[[5, 6], [9, 10]]]], dtype=np.float64)
    out = mx.nd.ROIPooling(mx.nd.array(x, dtype=x.dtype), mx.nd.array(rois, dtype=rois.dtype),
                           pooled_size=(2, 2), spatial_scale=1.0)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.asnumpy(), exp)
    with pytest.raises(Exception, match="ROIPooling"):
        mx.nd.ROIPooling(mx.nd.array(x), mx.nd.ones((2, 4)), pooled_size=(2, 2), spatial_scale=1.0)


def test_bilinear_identity_and_grads():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 3, 4))
    ident = mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]], dtype="float64"),
                                transform_type="affine", target_shape=(3, 4))
    check_forward("BilinearSampler", [x, ident.asnumpy()], {}, x)
    grid = rng.uniform(-0.9, 0.9, (1, 2, 3, 2))
    check_grad("BilinearSampler", [x, grid], {}, rng, rtol=1e-4, atol=1e-6)
    with pytest.raises(Exception, match="BilinearSampler"):
        mx.nd.BilinearSampler(mx.nd.array(x), mx.nd.ones((1, 3, 2, 2)))


@pytest.mark.parametrize("mul", [True, False])
def test_correlation_grad(mul):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((1, 2, 5, 5))
    check_grad("Correlation", [a, b], {"kernel_size": 3, "max_displacement": 1, "pad_size": 1,
                                       "is_multiply": mul}, rng, rtol=1e-4, atol=1e-6)
    with pytest.raises(Exception, match="Correlation"):
        mx.nd.Correlation(mx.nd.array(a), mx.nd.array(b), kernel_size=2)


def test_symbolic_shapes():
    d, l = mx.sym.var("d"), mx.sym.var("l")
    s = mx.sym.SpatialTransformer(d, l, target_shape=(3, 3), transform_type="affine",
                                  sampler_type="bilinear")
    assert s.infer_shape(d=(2, 3, 5, 5), l=(2, 6))[1] == [(2, 3, 3, 3)]
    c = mx.sym.Correlation(d, l, kernel_size=1, max_displacement=2, pad_size=2)
    assert c.infer_shape(d=(1, 2, 4, 4), l=(1, 2, 4, 4))[1] == [(1, 25, 4, 4)]
    r = mx.sym.ROIPooling(d, l, pooled_size=(2, 2), spatial_scale=0.5)
    assert r.infer_shape(d=(1, 2, 8, 8), l=(3, 5))[1] == [(3, 2, 2, 2)]


def test_float16_matches_float32():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float16)
    y = rng.standard_normal((1, 2, 5, 6)).astype(np.float16)
    grid = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float16)
    rois = np.array([[0, 0, 0, 4, 3]], np.float16)
    cases = [("BilinearSampler", [x, grid], {}),
             ("Correlation", [x, y], {"kernel_size": 3, "max_displacement": 1, "pad_size": 1}),
             ("ROIPooling", [x, rois], {"pooled_size": (2, 2), "spatial_scale": 1.0})]
    for op, ins, kw in cases:
        h = getattr(mx.nd, op)(*[mx.nd.array(v, dtype=v.dtype) for v in ins], **kw)
        f = getattr(mx.nd, op)(*[mx.nd.array(v.astype(np.float32)) for v in ins], **kw)
        assert h.dtype == np.float16, op
        np.testing.assert_allclose(h.asnumpy().astype(np.float32), f.asnumpy(), rtol=3e-3,
                                   atol=3e-3, err_msg=op)



def test_backward_ops_direct():
    rng = np.random.default_rng(5)
    x = mx.nd.array(rng.standard_normal((1, 2, 4, 4)))
    y = mx.nd.array(rng.standard_normal((1, 2, 4, 4)))
    grid = mx.nd.array(rng.uniform(-1, 1, (1, 2, 3, 3)))
    gd, gg = mx.nd._backward_BilinearSampler(mx.nd.ones((1, 2, 3, 3)), x, grid)
    assert gd.shape == x.shape and gg.shape == grid.shape
    # inside the input the bilinear weights of each sample sum to one
    np.testing.assert_allclose(gd.asnumpy().sum(), 2 * 9, rtol=1e-5)
    c = mx.nd.Correlation(x, y, kernel_size=1, max_displacement=1, pad_size=1)
    g1, g2 = mx.nd._backward_Correlation(mx.nd.ones(c.shape), x, y, kernel_size=1,
                                         max_displacement=1, pad_size=1)
    assert g1.shape == x.shape and g2.shape == y.shape
    rois = mx.nd.array([[0, 0, 0, 3, 3]])
    x.attach_grad()
    with mx.autograd.record():
        o = mx.nd.ROIPooling(x, rois, pooled_size=(1, 1), spatial_scale=1.0)
    o.backward()
    gx, xs = x.grad.asnumpy(), x.asnumpy()
    # the gradient lands on each channel's maximum
    idx = np.array([np.argmax(xs[0, 0]), 16 + np.argmax(xs[0, 1])]).reshape(1, 2, 1, 1)
    exp = np.zeros(32, np.float32)
    exp[idx.ravel()] = 1
    np.testing.assert_array_equal(gx.ravel(), exp)
    direct = mx.nd._backward_ROIPooling(mx.nd.ones((1, 2, 1, 1)),
                                        mx.nd.array(idx, dtype="int64"), x)
    np.testing.assert_array_equal(direct.asnumpy(), gx)

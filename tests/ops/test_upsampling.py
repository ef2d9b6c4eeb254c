"""UpSampling: nearest (one or several inputs, concat or sum) against numpy repeats, bilinear
against the Deconvolution it is defined by, gradients against central differences, errors,
and MXNet 1.9.1 goldens."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_convolution import golden_cases, golden_check, ref_deconv


def near(x, s):
    return x.repeat(s, axis=2).repeat(s, axis=3)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nearest(dtype, rng):
    x = rng.standard_normal((2, 3, 3, 4)).astype(dtype)
    for s in (1, 2, 3):
        check_forward("UpSampling", [x], dict(scale=s, sample_type="nearest"), near(x, s))


def test_nearest_multi_input(rng):
    a = rng.standard_normal((2, 2, 2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 1, 4, 6)).astype(np.float32)
    c = rng.standard_normal((2, 2, 8, 12)).astype(np.float32)
    check_forward("UpSampling", [a, b], dict(scale=4, sample_type="nearest"),
                  np.concatenate([near(a, 4), near(b, 2)], axis=1))
    b2 = rng.standard_normal((2, 2, 4, 6)).astype(np.float32)
    check_forward("UpSampling", [a, b2, c], dict(scale=4, sample_type="nearest",
                                                 multi_input_mode="sum"),
                  near(a, 4) + near(b2, 2) + c)


def _bilinear_ref(x, w, s):
    p = int(np.ceil((s - 1) / 2.0))
    c = x.shape[1]
    return ref_deconv(x, w, None, (s, s), (p, p), (1, 1), (0, 0), c, c)


@pytest.mark.parametrize("scale", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bilinear(scale, dtype, rng):
    k = 2 * scale - scale % 2
    x = rng.standard_normal((2, 3, 3, 4)).astype(dtype)
    w = rng.standard_normal((3, 1, k, k)).astype(dtype)
    check_forward("UpSampling", [x, w], dict(scale=scale, sample_type="bilinear", num_filter=3),
                  _bilinear_ref(x, w, scale).astype(dtype))


def test_grads(rng):
    a = rng.standard_normal((2, 2, 2, 3))
    check_grad("UpSampling", [a], dict(scale=2, sample_type="nearest"), rng)
    check_grad("UpSampling", [a, rng.standard_normal((2, 1, 4, 6))],
               dict(scale=2, sample_type="nearest"), rng)
    check_grad("UpSampling", [a, rng.standard_normal((2, 2, 4, 6))],
               dict(scale=2, sample_type="nearest", multi_input_mode="sum"), rng)
    check_grad("UpSampling", [a, rng.standard_normal((2, 1, 4, 4))],
               dict(scale=2, sample_type="bilinear", num_filter=2), rng)
    check_grad("UpSampling", [a, rng.standard_normal((2, 1, 5, 5))],
               dict(scale=3, sample_type="bilinear", num_filter=2), rng)


def test_infer_inputs_and_backward_op(rng):
    op = registry.get("UpSampling")
    a = op.parse(dict(scale=2, sample_type="bilinear", num_filter=3, num_args=2))
    assert op.infer_inputs(a, [(1, 3, 5, 5), None]) == [(1, 3, 5, 5), (3, 1, 4, 4)]
    x = mx.nd.array(rng.standard_normal((1, 2, 2, 2)))
    g = mx.nd._backward_UpSampling(mx.nd.ones((1, 2, 6, 6)), x, scale=3, sample_type="nearest",
                                   num_args=1)
    np.testing.assert_allclose(g.asnumpy(), np.full((1, 2, 2, 2), 9.0))


def test_errors_name_the_operator():
    x = mx.nd.ones((1, 2, 3, 3))
    with pytest.raises(ValueError, match="UpSampling.*sample_type"):
        mx.nd.UpSampling(x, scale=2)
    with pytest.raises(ValueError, match="UpSampling.*4-D"):
        mx.nd.UpSampling(mx.nd.ones((2, 3, 3)), scale=2, sample_type="nearest")
    with pytest.raises(ValueError, match="UpSampling.*scale evenly"):
        mx.nd.UpSampling(x, mx.nd.ones((1, 2, 4, 4)), scale=2, sample_type="nearest")
    with pytest.raises(ValueError, match="UpSampling.*channels"):
        mx.nd.UpSampling(x, mx.nd.ones((1, 1, 6, 6)), scale=2, sample_type="nearest",
                         multi_input_mode="sum")
    with pytest.raises(ValueError, match="UpSampling.*num_filter"):
        mx.nd.UpSampling(x, mx.nd.ones((2, 1, 4, 4)), scale=2, sample_type="bilinear")
    with pytest.raises(ValueError, match="UpSampling.*weight has shape"):
        mx.nd.UpSampling(x, mx.nd.ones((2, 1, 3, 3)), scale=2, sample_type="bilinear",
                         num_filter=2)


@pytest.mark.parametrize("params,inputs,out,head,grads", golden_cases("UpSampling"))
def test_golden(params, inputs, out, head, grads):
    golden_check("UpSampling", params, inputs, out, head, grads)

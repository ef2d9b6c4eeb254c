"""contrib operators of mxc/ops/contrib_misc.py, contrib_resize.py, contrib_roi.py and
contrib_deformable.py against numpy references and central differences (MXNet's own values are
in test_contrib_golden.py)."""
import math

import numpy as np
import pytest

import mxc as mx
from mxc.test_utils import check_numeric_gradient

from .oputil import check_forward, check_grad


def test_allclose(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = a * np.float32(1 + 1e-6)        # relative: within rtol=1e-5 whatever the magnitude
    check_forward("_contrib_allclose", [a, b], {}, np.array(1, np.uint8))
    b[1, 2] += 1e-3
    check_forward("_contrib_allclose", [a, b], {"rtol": 1e-5, "atol": 1e-8}, np.array(0, np.uint8))
    check_forward("_contrib_allclose", [a, b], {"atol": 1e-2}, np.array(1, np.uint8))
    n = np.array([np.nan, 1.0], np.float32)
    assert mx.nd.contrib.allclose(mx.nd.array(n), mx.nd.array(n)).asscalar() == 1
    assert mx.nd.contrib.allclose(mx.nd.array(n), mx.nd.array(n), equal_nan=False).asscalar() == 0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_allclose_kernel_against_numpy(rng, dtype):
    """The CPU kernel decides as a float64 numpy reference on every case: one far pair anywhere
    in an array long enough to be split among threads, NaN and infinite pairs, both equal_nan
    settings. The operator follows MXNet's rule (a finite value is close to an infinite
    expected one: inf <= inf); all_close_numpy (mxc.test_utils) follows numpy's isclose."""
    from mxc.ops.contrib_misc import all_close_numpy
    n = 200_003
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype)
        a[::1000] = np.inf
        a[5::1000] = -np.inf
        a[7::1000] = np.nan
    else:
        a = rng.integers(0, 2 if dtype == "bool" else 100, n).astype(dtype)

    def decide(x, y, rtol=1e-5, atol=1e-8, equal_nan=True):
        mx_x, mx_y = mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype)
        out = mx.nd.contrib.allclose(mx_x, mx_y, rtol=rtol, atol=atol,
                                     equal_nan=equal_nan).asnumpy()
        assert out.dtype == np.uint8 and out.shape == ()
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        with np.errstate(invalid="ignore"):
            nan = np.isnan(x64) | np.isnan(y64)
            mxnet_rule = np.where(nan, equal_nan & np.isnan(x64) & np.isnan(y64),
                                  (x64 == y64) | (np.abs(x64 - y64) <= atol + rtol * np.abs(y64)))
        assert int(out) == int(mxnet_rule.all())
        numpy_rule = np.isclose(x64, y64, rtol=rtol, atol=atol, equal_nan=equal_nan).all()
        assert all_close_numpy(mx_x, mx_y, rtol, atol, equal_nan) == numpy_rule
        return int(out), int(numpy_rule)

    assert decide(a, a.copy()) == (1, 1)
    if np.dtype(dtype).kind == "f":
        assert decide(a, a.copy(), equal_nan=False) == (0, 0)
        for pos in (0, n // 2 + 1, n - 1):          # first, middle (second thread), last
            b = a.copy()
            b[pos] = np.asarray(b[pos] + 1 if np.isfinite(b[pos]) else 1).astype(dtype)
            assert decide(a, b) == (0, 0)
            close = 1 if np.isfinite(a[pos]) else 0
            assert decide(a, b, atol=2.0, rtol=0.0) == (close, close)
        b = a.copy()
        b[3] = np.inf
        assert decide(a, b) == (1, 0)               # finite against an infinite expectation
        assert decide(b, a) == (0, 0)
    elif dtype != "bool":
        b = a.copy()
        b[n - 1] = b[n - 1] + 1
        assert decide(a, b) == (0, 0)
        assert decide(a, b, atol=1.0) == (1, 1)


@pytest.mark.parametrize("dtype", ["int16", "uint16", "uint32", "uint64"])
def test_allclose_dtypes_without_a_kernel_loop_go_to_numpy(dtype):
    a = mx.nd.array(np.arange(6), dtype=dtype)
    b = mx.nd.array(np.arange(6) + (np.arange(6) == 5), dtype=dtype)
    assert mx.nd.contrib.allclose(a, a).asscalar() == 1
    assert mx.nd.contrib.allclose(a, b).asscalar() == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_arange_like(dtype):
    x = np.zeros((3, 4), dtype)
    check_forward("_contrib_arange_like", [x], {"start": 2, "step": 3},
                  (2 + 3 * np.arange(12)).reshape(3, 4).astype(dtype))
    check_forward("_contrib_arange_like", [x], {"axis": -1, "repeat": 2},
                  np.array([0, 0, 1, 1], dtype))
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.arange_like(mx.nd.array(x), axis=2)


def test_index_copy(rng):
    old = rng.standard_normal((5, 3))
    new = rng.standard_normal((2, 3))
    idx = np.array([4, 1], np.int64)
    want = old.copy()
    want[idx] = new
    check_forward("_contrib_index_copy", [old, idx, new], {}, want)
    check_grad("_contrib_index_copy", [old, idx, new], {}, rng, wrt=[0, 2])
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.index_copy(mx.nd.array(old), mx.nd.array([0, 1, 2], dtype="int64"),
                                 mx.nd.array(new))


def _heads(x, h, parts):
    s, b, _ = x.shape
    return x.reshape(s, b, h, parts, -1)


def _sym_grad(name, names, values, heads):
    s = getattr(mx.sym.contrib, name)(*[mx.sym.var(n) for n in names], heads=heads)
    check_numeric_gradient(s, values, numeric_eps=1e-5, rtol=1e-3, atol=1e-6, dtype=np.float64)


def test_interleaved_selfatt(rng):
    S, B, H, D = 4, 2, 3, 5
    qkv = rng.standard_normal((S, B, H * 3 * D))
    t = _heads(qkv, H, 3)
    q, k, v = (t[:, :, :, i].transpose(1, 2, 0, 3).reshape(B * H, S, D) for i in range(3))
    att = q @ k.transpose(0, 2, 1) / math.sqrt(D)
    check_forward("_contrib_interleaved_matmul_selfatt_qk", [qkv], {"heads": H}, att)
    a = rng.standard_normal((B * H, S, S))
    out = (a @ v).reshape(B, H, S, D).transpose(2, 0, 1, 3).reshape(S, B, H * D)
    check_forward("_contrib_interleaved_matmul_selfatt_valatt", [qkv, a], {"heads": H}, out)
    _sym_grad("interleaved_matmul_selfatt_qk", ["qkv"], [qkv], H)
    _sym_grad("interleaved_matmul_selfatt_valatt", ["qkv", "att"], [qkv, a], H)


def test_interleaved_encdec(rng):
    Sq, Sk, B, H, D = 3, 4, 2, 2, 3
    q = rng.standard_normal((Sq, B, H * D))
    kv = rng.standard_normal((Sk, B, H * 2 * D))
    qh = q.reshape(Sq, B, H, D).transpose(1, 2, 0, 3).reshape(B * H, Sq, D)
    t = _heads(kv, H, 2)
    k, v = (t[:, :, :, i].transpose(1, 2, 0, 3).reshape(B * H, Sk, D) for i in range(2))
    check_forward("_contrib_interleaved_matmul_encdec_qk", [q, kv], {"heads": H},
                  qh @ k.transpose(0, 2, 1) / math.sqrt(D))
    a = rng.standard_normal((B * H, Sq, Sk))
    out = (a @ v).reshape(B, H, Sq, D).transpose(2, 0, 1, 3).reshape(Sq, B, H * D)
    check_forward("_contrib_interleaved_matmul_encdec_valatt", [kv, a], {"heads": H}, out)
    _sym_grad("interleaved_matmul_encdec_qk", ["q", "kv"], [q, kv], H)
    _sym_grad("interleaved_matmul_encdec_valatt", ["kv", "att"], [kv, a], H)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.array(q), mx.nd.array(q), heads=H)


def test_quantize_int8_reference():
    x = np.array([[0.1392, 0.5928], [0.6027, 0.8579]], np.float32)
    q, lo, hi = (o.asnumpy() for o in mx.nd.contrib.quantize(
        mx.nd.array(x), mx.nd.array([0.0]), mx.nd.array([1.0]), out_type="int8"))
    assert q.dtype == np.int8 and q.tolist() == [[18, 75], [77, 109]]
    assert lo.tolist() == [-1.0] and hi.tolist() == [1.0]
    back = mx.nd.contrib.dequantize(mx.nd.array(q, dtype="int8"), mx.nd.array(lo),
                                    mx.nd.array(hi)).asnumpy()
    np.testing.assert_allclose(back, q / 127.5, rtol=1e-6)
    assert "_contrib_quantize" and "_contrib_dequantize"


def test_adaptive_pool_and_resize_numeric_gradients(rng):
    x = rng.random((1, 2, 5, 4))
    s = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("data"), output_size=(3, 2))
    check_numeric_gradient(s, [x], rtol=1e-2, atol=1e-4)
    s = mx.sym.contrib.BilinearResize2D(mx.sym.var("data"), height=7, width=3)
    check_numeric_gradient(s, [x], rtol=1e-2, atol=1e-4)
    assert "_contrib_AdaptiveAvgPooling2D" and "_backward_contrib_AdaptiveAvgPooling2D"
    assert "_contrib_BilinearResize2D" and "_backward_contrib_BilinearResize2D"


def test_bilinear_resize_equal_size_copies(rng):
    x = rng.random((1, 1, 3, 4)).astype(np.float32)
    check_forward("_contrib_BilinearResize2D", [x], {"height": 3, "width": 4}, x)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.BilinearResize2D(mx.nd.array(x), mode="odd_scale")


def test_roi_numeric_gradients(rng):
    data = mx.sym.var("data")
    rois = mx.sym.var("rois")
    x = rng.random((2, 4, 6, 6))
    r = np.array([[0, 0.6, 1.1, 4.2, 3.7], [1, 1.3, 0.2, 5.1, 5.4]])
    s = mx.sym.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0,
                                sample_ratio=2)
    check_numeric_gradient(s, [x, r], grad_nodes={"data": "write", "rois": "null"},
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-4)
    s = mx.sym.contrib.PSROIPooling(data, rois, spatial_scale=1.0, output_dim=1, pooled_size=2)
    check_numeric_gradient(s, [x, r], grad_nodes={"data": "write", "rois": "null"},
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-4)
    assert "_backward_contrib_ROIAlign" and "_backward_contrib_PSROIPooling"


def test_roi_shape_errors():
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 3, 4, 4)), mx.nd.zeros((2, 4)), pooled_size=(2, 2),
                               spatial_scale=1.0)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.PSROIPooling(mx.nd.zeros((1, 7, 4, 4)), mx.nd.zeros((2, 5)),
                                   spatial_scale=1.0, output_dim=2, pooled_size=2)
    r = mx.nd.array([[0, 1, 1, 2, 2, 0]])
    x = mx.nd.ones((1, 1, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.RROIAlign(x, r, pooled_size=(1, 1), spatial_scale=1.0)
    np.testing.assert_allclose(y.asnumpy(), [[[[1.0]]]])
    with pytest.raises(mx.base.MXNetError):
        y.backward()


def test_deformable_convolution_zero_offset_is_convolution(rng):
    x = rng.random((2, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = rng.random(6).astype(np.float32)
    off = np.zeros((2, 2 * 9 * 2, 5, 6), np.float32)
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2, num_deformable_group=2)
    got = mx.nd.contrib.DeformableConvolution(mx.nd.array(x), mx.nd.array(off), mx.nd.array(w),
                                              mx.nd.array(b), **kw).asnumpy()
    want = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), kernel=(3, 3),
                             pad=(1, 1), num_filter=6, num_group=2).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_deformable_convolution_numeric_gradients(rng):
    s = mx.sym.contrib.DeformableConvolution(
        mx.sym.var("data"), mx.sym.var("offset"), mx.sym.var("weight"), mx.sym.var("bias"),
        kernel=(3, 3), pad=(1, 1), num_filter=2, num_deformable_group=1)
    x = rng.random((1, 2, 4, 4))
    off = rng.random((1, 18, 4, 4)) * 0.8 + 0.1
    w = rng.normal(0, 0.3, (2, 2, 3, 3))
    b = rng.random(2)
    for nodes, rtol, atol in ((["data", "weight", "bias"], 0.05, 1e-3), (["offset"], 0.2, 1e-2)):
        check_numeric_gradient(s, [x, off, w, b], grad_nodes=nodes, rtol=rtol, atol=atol,
                               numeric_eps=1.0 / 64)
    assert "_contrib_DeformableConvolution" and "_backward_contrib_DeformableConvolution"


def test_sync_batch_norm_matches_batch_norm(rng):
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    g = rng.random(3).astype(np.float32)
    b = rng.random(3).astype(np.float32)
    args = [mx.nd.array(v) for v in (x, g, b, np.zeros(3, np.float32), np.ones(3, np.float32))]
    for a in args[:3]:
        a.attach_grad()
    with mx.autograd.record():
        out, mean, var = mx.nd.contrib.SyncBatchNorm(*args, key="k", fix_gamma=False,
                                                     output_mean_var=True)
    out.backward()
    xm = x.mean(axis=(0, 2))
    xv = x.var(axis=(0, 2))
    want = (x - xm[None, :, None]) / np.sqrt(xv[None, :, None] + 1e-3) * g[None, :, None] \
        + b[None, :, None]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean.asnumpy(), xm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), xv, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(args[2].grad.asnumpy(), np.full(3, 20.0), rtol=1e-6)
    np.testing.assert_allclose(args[4].asnumpy(), 0.9 + 0.1 * xv * 1, rtol=1e-3)  # moving var
    s = mx.sym.contrib.SyncBatchNorm(mx.sym.var("data"), key="k", name="sbn")
    assert s.list_auxiliary_states() == ["sbn_moving_mean", "sbn_moving_var"]
    assert "_contrib_SyncBatchNorm"


def test_im2col_is_convolution_and_col2im_its_adjoint(rng):
    x = rng.random((2, 3, 7, 6)).astype(np.float32)
    w = rng.random((4, 3, 3, 2)).astype(np.float32)
    kw = dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 1))
    col = mx.nd.im2col(mx.nd.array(x), **kw)
    conv = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), num_filter=4, no_bias=True, **kw)
    got = np.einsum("fk,nkl->nfl", w.reshape(4, -1), col.asnumpy()).reshape(conv.shape)
    np.testing.assert_allclose(got, conv.asnumpy(), rtol=1e-5, atol=1e-5)
    # <im2col(x), c> == <x, col2im(c)>
    c = rng.random(col.shape).astype(np.float32)
    back = mx.nd.col2im(mx.nd.array(c), output_size=(7, 6), **kw).asnumpy()
    np.testing.assert_allclose((col.asnumpy() * c).sum(), (x * back).sum(), rtol=1e-4)
    s = mx.sym.im2col(mx.sym.var("data"), **kw)
    check_numeric_gradient(s, [x.astype(np.float64)], rtol=1e-2, atol=1e-3)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.col2im(mx.nd.array(c), output_size=(10, 6), **kw)

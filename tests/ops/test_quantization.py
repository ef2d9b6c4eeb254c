"""INT8 quantization operators (mxc/ops/quantization.py): each against a numpy reference of the
same integer and float32 arithmetic, and against MXNet 1.9.1's outputs
(tests/data/quantization_golden.npz, made by tests/data/make_quantization_golden.py)."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

GOLDEN = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "quantization_golden.npz"))
f32 = np.float32


def _f(v):
    return mx.nd.array([v])


def _np(res):
    return [r.asnumpy() for r in (res if isinstance(res, (list, tuple)) else [res])]


def _maxabs(a, b):
    return max(abs(f32(a)), abs(f32(b)))


def _saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.rint(v), info.min, info.max).astype(dtype)


# ---- numpy references ----------------------------------------------------------------------------
def ref_quantize_v2(x, out_type, lo=None, hi=None):
    if lo is None:
        lo, hi = x.min(), x.max()
    lo, hi = f32(lo), f32(hi)
    real = _maxabs(lo, hi)
    if out_type == "uint8":
        return _saturate(x * (f32(255.5) / real), np.uint8), lo, hi
    return _saturate(x * (f32(127.5) / real), np.int8), -real, real


def ref_requantize(x, in_lo, in_hi, out_type, lo=None, hi=None):
    in_real = _maxabs(in_lo, in_hi)
    if lo is None:
        real = f32(f32(np.abs(x.astype(np.float32)).max()) * in_real / f32(2 ** 31))
    else:
        real = _maxabs(lo, hi)
    first = in_real / f32(2 ** 31)
    levels = f32(127.0) if out_type == "int8" else f32(255.0)
    scale = f32(first * (levels / real))
    q = _saturate(x.astype(np.float32) * scale, np.int8 if out_type == "int8" else np.uint8)
    return q, (-real if out_type == "int8" else f32(0)), real


def ref_product_range(d_real, d_levels, w_real, w_levels):
    m = f32(f32(f32(d_real) / f32(d_levels)) * f32(f32(w_real) / f32(w_levels))) * f32(2 ** 31)
    return -m, m


def ref_conv(d, w, pad, stride, dilate):
    n, c, h, wd = d.shape
    f, _, kh, kw = w.shape
    dp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]), np.int64)
    dp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = d
    oh = (h + 2 * pad[0] - (dilate[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (wd + 2 * pad[1] - (dilate[1] * (kw - 1) + 1)) // stride[1] + 1
    out = np.zeros((n, f, oh, ow), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            win = dp[:, :, ky * dilate[0]:ky * dilate[0] + stride[0] * oh:stride[0],
                     kx * dilate[1]:kx * dilate[1] + stride[1] * ow:stride[1]]
            out += np.einsum("nchw,fc->nfhw", win, w[:, :, ky, kx].astype(np.int64))
    return out


def ref_pool(d, kernel, stride, pad, pool_type):
    n, c, h, w = d.shape
    oh = (h + 2 * pad[0] - kernel[0]) // stride[0] + 1
    ow = (w + 2 * pad[1] - kernel[1]) // stride[1] + 1
    out = np.zeros((n, c, oh, ow), d.dtype)
    for y in range(oh):
        for x in range(ow):
            y0, x0 = y * stride[0] - pad[0], x * stride[1] - pad[1]
            y1, x1 = min(y0 + kernel[0], h + pad[0]), min(x0 + kernel[1], w + pad[1])
            win = d[:, :, max(y0, 0):min(y1, h), max(x0, 0):min(x1, w)].astype(np.int64)
            if pool_type == "max":
                out[:, :, y, x] = win.max(axis=(2, 3))
            else:
                cnt = (y1 - y0) * (x1 - x0)
                out[:, :, y, x] = _saturate(win.sum(axis=(2, 3)).astype(np.float32) / f32(cnt),
                                            d.dtype)
    return out


# ---- against the references ----------------------------------------------------------------------
@pytest.mark.parametrize("out_type", ["int8", "uint8", "auto"])
@pytest.mark.parametrize("calib", [True, False])
def test_quantize_v2_matches_reference(out_type, calib):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(500).astype(np.float32) * 3,
                        np.arange(-8, 9, dtype=np.float32) * f32(0.5 / 127.5 * 3)])
    kw = dict(min_calib_range=-3.0, max_calib_range=3.0) if calib else {}
    q, lo, hi = _np(mx.nd.contrib.quantize_v2(mx.nd.array(x), out_type=out_type, **kw))
    want = ref_quantize_v2(x, "int8" if out_type == "auto" else out_type,
                           *((-3.0, 3.0) if calib else ()))
    assert q.dtype == want[0].dtype
    np.testing.assert_array_equal(q, want[0])
    assert (lo[0], hi[0]) == (want[1], want[2])


def test_quantize_v2_auto_and_passthrough():
    x = np.linspace(0, 2, 50, dtype=np.float32)
    q, lo, hi = _np(mx.nd.contrib.quantize_v2(mx.nd.array(x), out_type="auto",
                                              min_calib_range=0.0, max_calib_range=2.0))
    np.testing.assert_array_equal(q, ref_quantize_v2(x, "uint8", 0.0, 2.0)[0])
    assert q.dtype == np.uint8 and (lo[0], hi[0]) == (0.0, 2.0)
    i8 = np.array([-5, 0, 7], np.int8)
    q, lo, hi = _np(mx.nd.contrib.quantize_v2(mx.nd.array(i8, dtype="int8")))
    np.testing.assert_array_equal(q, i8)
    assert (lo[0], hi[0]) == (-127.5, 127.5)


def test_requantize_matches_reference():
    rng = np.random.default_rng(2)
    x = rng.integers(-2 ** 22, 2 ** 22, 400).astype(np.int32)
    for out_type, lo, hi in (("int8", -0.25, 0.3), ("uint8", 0.0, 0.3), ("int8", None, None)):
        kw = {} if lo is None else dict(min_calib_range=lo, max_calib_range=hi)
        got = _np(mx.nd.contrib.requantize(mx.nd.array(x, dtype="int32"), _f(-1.0), _f(2.0),
                                           out_type=out_type, **kw))
        want = ref_requantize(x, -1.0, 2.0, out_type, lo, hi)
        np.testing.assert_array_equal(got[0], want[0])
        assert (got[1][0], got[2][0]) == (want[1], want[2])


def test_dequantize_matches_reference():
    for dt, levels in (("int8", 127.5), ("uint8", 255.5)):
        info = np.iinfo(dt)
        q = np.arange(info.min, info.max + 1).astype(dt)
        got = mx.nd.contrib.dequantize(mx.nd.array(q, dtype=dt), _f(-0.7), _f(1.3)).asnumpy()
        np.testing.assert_array_equal(got, q.astype(np.float32) * (f32(1.3) / f32(levels)))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_quantized_conv_matches_reference(dtype):
    rng = np.random.default_rng(3)
    lo = 0 if dtype == "uint8" else -128
    d = rng.integers(lo, lo + 256, (2, 3, 9, 7)).astype(dtype)
    w = rng.integers(-127, 128, (5, 3, 3, 2)).astype(np.int8)
    b = rng.integers(-127, 128, (5,)).astype(np.int8)
    out, omin, omax = _np(mx.nd.contrib.quantized_conv(
        mx.nd.array(d, dtype=dtype), mx.nd.array(w, dtype="int8"), mx.nd.array(b, dtype="int8"),
        _f(-1.0), _f(2.0), _f(-0.5), _f(0.25), _f(-1.0), _f(1.0), kernel=(3, 2), num_filter=5,
        pad=(1, 0), stride=(2, 1), dilate=(1, 2)))
    # the int8 bias in the product's levels and uint8 data's 255 levels, as FullyConnected
    # (MXNet's unfused int8 convolution does neither: its fused oneDNN path does)
    d_scale = (f32(127.5) if dtype == "int8" else f32(255.5)) / f32(2.0)
    rescale = f32(f32(f32(d_scale * (f32(127.5) / f32(0.5))) * f32(1.0)) / f32(127.5))
    qb = (b.astype(np.float32) * rescale).astype(np.int32)
    want = ref_conv(d, w, (1, 0), (2, 1), (1, 2)) + qb.reshape(1, -1, 1, 1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, want)
    levels = 127 if dtype == "int8" else 255
    assert (omin[0], omax[0]) == ref_product_range(2.0, 127, 0.5, levels)


def test_quantized_conv_1d_and_errors():
    rng = np.random.default_rng(4)
    d = rng.integers(0, 256, (2, 3, 11)).astype(np.uint8)
    w = rng.integers(-127, 128, (4, 3, 3)).astype(np.int8)
    out = mx.nd.contrib.quantized_conv(mx.nd.array(d, dtype="uint8"), mx.nd.array(w, dtype="int8"),
                                       _f(0.0), _f(1.0), _f(-1.0), _f(1.0), kernel=(3,),
                                       num_filter=4, no_bias=True)[0].asnumpy()
    np.testing.assert_array_equal(out, ref_conv(d[:, :, None], w[:, :, None], (0, 0), (1, 1),
                                                (1, 1))[:, :, 0])
    with pytest.raises(MXNetError, match="num_group"):
        mx.nd.contrib.quantized_conv(mx.nd.array(np.zeros((1, 4, 5, 5)), dtype="uint8"),
                                     mx.nd.array(np.zeros((4, 2, 3, 3)), dtype="int8"),
                                     _f(0.0), _f(1.0), _f(-1.0), _f(1.0), kernel=(3, 3),
                                     num_filter=4, num_group=2, no_bias=True)
    with pytest.raises(MXNetError, match="weight must be int8"):
        mx.nd.contrib.quantized_conv(mx.nd.array(d, dtype="uint8"), mx.nd.array(w),
                                     _f(0.0), _f(1.0), _f(-1.0), _f(1.0), kernel=(3,),
                                     num_filter=4, no_bias=True)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_quantized_fully_connected_matches_reference(dtype):
    rng = np.random.default_rng(5)
    lo = 0 if dtype == "uint8" else -128
    d = rng.integers(lo, lo + 256, (4, 2, 6)).astype(dtype)
    w = rng.integers(-127, 128, (3, 12)).astype(np.int8)
    b = rng.integers(-127, 128, (3,)).astype(np.int8)
    out, omin, omax = _np(mx.nd.contrib.quantized_fully_connected(
        mx.nd.array(d, dtype=dtype), mx.nd.array(w, dtype="int8"), mx.nd.array(b, dtype="int8"),
        _f(-1.5), _f(1.0), _f(-0.5), _f(0.25), _f(-0.3), _f(0.2), num_hidden=3))
    d_scale = (f32(127.5) if dtype == "int8" else f32(255.5)) / f32(1.5)
    rescale = f32(f32(f32(d_scale * (f32(127.5) / f32(0.5))) * f32(0.3)) / f32(127.5))
    qb = (b.astype(np.float32) * rescale).astype(np.int32)
    want = d.reshape(4, 12).astype(np.int64) @ w.T.astype(np.int64) + qb
    np.testing.assert_array_equal(out, want)
    levels = (127, 127) if dtype == "int8" else (127, 255)
    assert (omin[0], omax[0]) == ref_product_range(1.5, levels[0], 0.5, levels[1])
    flat = mx.nd.contrib.quantized_fully_connected(
        mx.nd.array(d, dtype=dtype), mx.nd.array(w[:, :6], dtype="int8"), _f(-1.5), _f(1.0),
        _f(-0.5), _f(0.25), num_hidden=3, no_bias=True, flatten=False)[0].asnumpy()
    np.testing.assert_array_equal(flat, d.astype(np.int64) @ w[:, :6].T.astype(np.int64))


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_quantized_pooling_act_flatten_match_reference(dtype, pool_type):
    rng = np.random.default_rng(6)
    lo = 0 if dtype == "uint8" else -128
    d = rng.integers(lo, lo + 256, (2, 3, 8, 7)).astype(dtype)
    x = mx.nd.array(d, dtype=dtype)
    out, omin, omax = _np(mx.nd.contrib.quantized_pooling(
        x, _f(-1.0), _f(3.0), kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pool_type))
    np.testing.assert_array_equal(out, ref_pool(d, (3, 3), (2, 2), (1, 1), pool_type))
    assert (omin[0], omax[0]) == (-1.0, 3.0)
    act = _np(mx.nd.contrib.quantized_act(x, _f(-1.0), _f(3.0), act_type="relu"))
    # int8 out (MXNet's type rule): uint8 bytes land in it unchanged
    np.testing.assert_array_equal(act[0], np.maximum(d, 0).astype(dtype).view(np.int8))
    fl = _np(mx.nd.contrib.quantized_flatten(x, _f(-1.0), _f(3.0)))
    np.testing.assert_array_equal(fl[0], d.reshape(2, -1))
    assert (fl[1][0], fl[2][0]) == (-1.0, 3.0)
    with pytest.raises(MXNetError, match="relu"):
        mx.nd.contrib.quantized_act(x, _f(-1.0), _f(3.0), act_type="tanh")


def test_quantize_first_api_matches_reference():
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    q, lo, hi = _np(mx.nd.contrib.quantize(mx.nd.array(x), _f(-2.0), _f(1.0), out_type="int8"))
    np.testing.assert_array_equal(q, _saturate(x * (f32(127) / f32(2)), np.int8))
    assert (lo[0], hi[0]) == (-2.0, 2.0)
    q = mx.nd.contrib.quantize(mx.nd.array(x), _f(-2.0), _f(1.0), out_type="uint8")[0].asnumpy()
    np.testing.assert_array_equal(q, _saturate(x * (f32(255) / f32(2)), np.uint8))


def test_bad_inputs_name_the_operator():
    with pytest.raises(MXNetError, match="_contrib_requantize: data must be int32"):
        mx.nd.contrib.requantize(mx.nd.array([1.0]), _f(-1.0), _f(1.0))
    with pytest.raises(MXNetError, match="_contrib_dequantize: input 1"):
        mx.nd.contrib.dequantize(mx.nd.array([1], dtype="int8"), mx.nd.array([1.0, 2.0]), _f(1.0))
    with pytest.raises(MXNetError, match="_contrib_quantize_v2: data must be"):
        mx.nd.contrib.quantize_v2(mx.nd.array([1], dtype="int32"))


# ---- against MXNet 1.9.1 -------------------------------------------------------------------------
def _in(case, name, dtype=None):
    v = GOLDEN[f"{case}/in_{name}"]
    return mx.nd.array(v, dtype=dtype or v.dtype.name)


def _check_golden(case, res):
    got = _np(res)
    for i, g in enumerate(got):
        want = GOLDEN[f"{case}/out{i}"]
        assert g.dtype == want.dtype, (case, i)
        np.testing.assert_array_equal(g, want, err_msg=f"{case} output {i}")


def test_golden_quantize_dequantize_requantize():
    for ot in ("int8", "uint8", "auto"):
        x = _in(f"qv2_{ot}_calib", "x")
        _check_golden(f"qv2_{ot}_calib", mx.nd.contrib.quantize_v2(
            x, out_type=ot, min_calib_range=-2.0, max_calib_range=2.0))
        _check_golden(f"qv2_{ot}_data", mx.nd.contrib.quantize_v2(x, out_type=ot))
    _check_golden("qv2_auto_pos", mx.nd.contrib.quantize_v2(
        _in("qv2_auto_pos", "x"), out_type="auto", min_calib_range=0.0, max_calib_range=3.0))
    for ot in ("int8", "uint8"):
        _check_golden(f"q_{ot}", mx.nd.contrib.quantize(_in(f"q_{ot}", "x"), _f(-1.5), _f(2.5),
                                                        out_type=ot))
        _check_golden(f"deq_{ot}", mx.nd.contrib.dequantize(_in(f"deq_{ot}", "q"), _f(-0.7),
                                                            _f(1.3)))
    for case, kw in (("req_int8_calib", dict(min_calib_range=-0.3, max_calib_range=0.4)),
                     ("req_uint8_calib", dict(out_type="uint8", min_calib_range=0.0,
                                              max_calib_range=0.4)),
                     ("req_auto_calib", dict(out_type="auto", min_calib_range=0.0,
                                             max_calib_range=0.4)),
                     ("req_int8_data", {}), ("req_int8_data_full", {})):
        _check_golden(case, mx.nd.contrib.requantize(_in(case, "x"), _f(-1.0), _f(1.0), **kw))


def test_golden_products():
    d, w, b = _in("conv", "d"), _in("conv", "w"), _in("conv", "b")
    # MXNet's unfused int8 convolution adds the int8 bias unscaled and gives uint8 data int8's
    # range (test_quantized_conv_matches_reference): its integer products are the golden's,
    # the range is the corrected one
    out, omin, omax = _np(mx.nd.contrib.quantized_conv(
        d, w, _f(0.0), _f(3.0), _f(-0.5), _f(0.6), kernel=(3, 3), num_filter=6, no_bias=True))
    np.testing.assert_array_equal(out, GOLDEN["conv_nobias/out0"])
    assert (omin[0], omax[0]) == ref_product_range(3.0, 127, 0.6, 255)
    for dt in ("int8", "uint8"):
        c = f"fc_{dt}"
        d, w, b = _in(c, "d"), _in(c, "w"), _in(c, "b")
        _check_golden(c, mx.nd.contrib.quantized_fully_connected(
            d, w, b, _f(-1.0), _f(1.5), _f(-0.25), _f(0.5), _f(-0.3), _f(0.2), num_hidden=4))
        _check_golden(c + "_nobias", mx.nd.contrib.quantized_fully_connected(
            d, w, _f(-1.0), _f(1.5), _f(-0.25), _f(0.5), num_hidden=4, no_bias=True))


def test_golden_range_passing_ops():
    for dt in ("int8", "uint8"):
        d = _in(f"act_{dt}", "d")
        for pt in ("max", "avg"):
            _check_golden(f"pool_{pt}_{dt}", mx.nd.contrib.quantized_pooling(
                d, _f(-1.0), _f(2.0), kernel=(3, 2), stride=(2, 2), pad=(1, 1), pool_type=pt))
        _check_golden(f"pool_global_{dt}", mx.nd.contrib.quantized_pooling(
            d, _f(-1.0), _f(2.0), kernel=(1, 1), global_pool=True, pool_type="avg"))
        _check_golden(f"act_{dt}", mx.nd.contrib.quantized_act(d, _f(-1.0), _f(2.0),
                                                               act_type="relu"))
        _check_golden(f"flatten_{dt}", mx.nd.contrib.quantized_flatten(d, _f(-1.0), _f(2.0)))


def test_golden_calibrate_entropy():
    for nq in (255, 511):
        c = f"calib_{nq}"
        res = mx.nd.contrib.calibrate_entropy(_in(c, "hist"), _in(c, "edges"),
                                              num_quantized_bins=nq)
        got = _np(res)
        assert got[0][0] == GOLDEN[c + "/out0"][0]
        np.testing.assert_allclose(got[1], GOLDEN[c + "/out1"], rtol=1e-5)
        assert got[0][0] in GOLDEN[c + "/in_edges"]


def test_symbol_infers_quantized_types_and_shapes():
    data = mx.sym.var("data")
    q = mx.sym.contrib.quantize_v2(data, out_type="uint8", min_calib_range=0.0,
                                   max_calib_range=1.0, name="dq")
    conv = mx.sym.contrib.quantized_conv(q[0], mx.sym.var("w"), mx.sym.var("b"), q[1], q[2],
                                         mx.sym.var("wmin"), mx.sym.var("wmax"),
                                         mx.sym.var("bmin"), mx.sym.var("bmax"), kernel=(3, 3),
                                         num_filter=2, name="qc")
    req = mx.sym.contrib.requantize(conv[0], conv[1], conv[2], name="rq")
    arg_shapes, out_shapes, _ = req.infer_shape(data=(1, 3, 5, 5))
    assert dict(zip(req.list_arguments(), arg_shapes))["w"] == (2, 3, 3, 3)
    assert out_shapes == [(1, 2, 3, 3), (1,), (1,)]
    arg_types, out_types, _ = req.infer_type(data=np.float32)
    types = dict(zip(req.list_arguments(), arg_types))
    assert types["w"] == np.int8 and types["bmin"] == np.float32
    ex = req.simple_bind(mx.cpu(), data=(1, 3, 5, 5), grad_req="null",
                         type_dict={"data": np.float32, "w": np.int8, "b": np.int8})
    assert [o.dtype for o in ex.outputs] == [np.int8, np.float32, np.float32]


def ref_elemwise_add(a, b, ra, rb, calib=None):
    """oneDNN's sum as MXNet 1.9.1 sets it up (mkldnn_quantized_elemwise_add.cc)."""
    a_abs, b_abs = _maxabs(*ra), _maxabs(*rb)
    rng_a = f32(127.5) if a.dtype == np.int8 else f32(255.5)
    rng_b = f32(127.5) if b.dtype == np.int8 else f32(255.5)
    out_dt = np.int32 if calib is None else (a.dtype if a.dtype == b.dtype else np.int8)
    out_rng = {np.dtype(np.int8): f32(127.5), np.dtype(np.uint8): f32(255.5)}.get(
        np.dtype(out_dt), f32(2 ** 31))
    if calib is not None:
        out_scale = out_rng / _maxabs(*calib)
        sa, sb = out_scale / (rng_a / a_abs), out_scale / (rng_b / b_abs)
    else:
        total = f32(a_abs + b_abs)
        sa = f32(a_abs * out_rng) / f32(total * rng_a)
        sb = f32(b_abs * out_rng) / f32(total * (rng_a if a.dtype == b.dtype else rng_b))
    af, bf = a.astype(np.float32), b.astype(np.float32)
    if a.dtype != b.dtype:           # the uint8 side goes to int8 first, then enters with 1
        if a.dtype == np.int8:
            bf, sb = _saturate(bf * sb, np.int8).astype(np.float32), f32(1)
        else:
            af, sa = _saturate(af * sa, np.int8).astype(np.float32), f32(1)
    return _saturate(f32(sb) * bf + f32(sa) * af, out_dt)


@pytest.mark.parametrize("da", ["int8", "uint8"])
@pytest.mark.parametrize("db", ["int8", "uint8"])
@pytest.mark.parametrize("calib", [None, (-1.5, 2.5)])
def test_quantized_elemwise_add_matches_reference(da, db, calib):
    rng = np.random.default_rng(8)
    a = rng.integers(np.iinfo(da).min, np.iinfo(da).max + 1, (4, 30)).astype(da)
    b = rng.integers(np.iinfo(db).min, np.iinfo(db).max + 1, (4, 30)).astype(db)
    kw = {} if calib is None else dict(min_calib_range=calib[0], max_calib_range=calib[1])
    out, omin, omax = _np(mx.nd.contrib.quantized_elemwise_add(
        mx.nd.array(a, dtype=da), mx.nd.array(b, dtype=db), _f(-0.5), _f(1.0), _f(-2.0),
        _f(0.75), **kw))
    want = ref_elemwise_add(a, b, (-0.5, 1.0), (-2.0, 0.75), calib)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)
    assert (omin[0], omax[0]) == ((-3.0, 3.0) if calib is None else calib)


def test_golden_elemwise_add():
    for da in ("int8", "uint8"):
        for db in ("int8", "uint8"):
            for suffix, kw in (("", {}), ("_calib", dict(min_calib_range=-1.5,
                                                          max_calib_range=2.5))):
                c = f"add_{da}_{db}{suffix}"
                _check_golden(c, mx.nd.contrib.quantized_elemwise_add(
                    _in(c, "a"), _in(c, "b"), _f(-0.5), _f(1.0), _f(-2.0), _f(0.75), **kw))


def ref_concat(arrays, ranges, axis):
    neg = min([0.0] + [f32(r[0]) for r in ranges])
    pos = max([0.0] + [f32(r[1]) for r in ranges])
    out_dt = np.int8 if any(a.dtype == np.int8 for a in arrays) else np.uint8
    out_scale = (f32(127.5) if out_dt == np.int8 else f32(255.5)) / _maxabs(neg, pos)
    parts = []
    for a, r in zip(arrays, ranges):
        in_scale = (f32(127.5) if a.dtype == np.int8 else f32(255.5)) / _maxabs(*r)
        parts.append(a.astype(out_dt) if in_scale == out_scale else
                     _saturate(a.astype(np.float32) * f32(out_scale / in_scale), out_dt))
    return np.concatenate(parts, axis=axis), f32(neg), f32(pos)


def test_quantized_concat_matches_reference():
    rng = np.random.default_rng(9)
    a = rng.integers(-128, 128, (2, 3, 5)).astype(np.int8)
    b = rng.integers(0, 256, (2, 2, 5)).astype(np.uint8)
    ranges = [(-1.0, 0.5), (0.0, 2.0)]
    for arrays, rs, dim in (([a, b], ranges, 1), ([b, b], [(0.0, 2.0), (0.0, 2.0)], 1),
                            ([b, b], [(0.0, 2.0), (0.0, 1.0)], -1)):
        ins = [mx.nd.array(x, dtype=x.dtype.name) for x in arrays]
        got = _np(mx.nd.contrib.quantized_concat(
            *ins, *[_f(v) for r in rs for v in r], num_args=len(arrays), dim=dim))
        want = ref_concat(arrays, rs, dim)
        assert got[0].dtype == want[0].dtype
        np.testing.assert_array_equal(got[0], want[0])
        assert (got[1][0], got[2][0]) == want[1:]
    with pytest.raises(MXNetError, match="3 \\* num_args"):
        mx.nd.contrib.quantized_concat(mx.nd.array(b, dtype="uint8"), _f(0.0), _f(1.0))


def test_golden_concat():
    c1, c2, c3 = _in("concat_mixed", "a"), _in("concat_mixed", "b"), _in("concat_mixed", "c")
    _check_golden("concat_mixed", mx.nd.contrib.quantized_concat(
        c1, c2, c3, _f(-1.0), _f(1.0), _f(0.0), _f(3.0), _f(-0.5), _f(0.5), num_args=3, dim=1))
    _check_golden("concat_u8", mx.nd.contrib.quantized_concat(
        c2, c3, _f(0.0), _f(3.0), _f(0.0), _f(3.0), num_args=2, dim=1))
    _check_golden("concat_u8_axis2", mx.nd.contrib.quantized_concat(
        c2, c2, _f(0.0), _f(3.0), _f(0.0), _f(1.0), num_args=2, dim=2))

"""Convolution and Deconvolution: forward against direct-loop numpy references (1-D/2-D/3-D,
stride, pad, dilation, groups, adj, target_shape; float16/32/64), gradients against central
differences, MXNet's shape rules and errors, and golden cases from MXNet 1.9.1
(tests/data/conv_golden.npz, also used by test_pooling.py and test_upsampling.py)."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc.ndarray.register import invoke
from mxc.ops import registry

from .oputil import check_forward, check_grad

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "data", "conv_golden.npz")


# ---- golden fixtures (shared with test_pooling / test_upsampling) ------------------------------
def golden_cases(opname):
    """pytest params (params, inputs, out, head, grads) of `opname` in conv_golden.npz."""
    out = []
    with np.load(GOLDEN) as f:
        for i in range(int(f["count"])):
            if str(f[f"{i}/op"]) != opname:
                continue
            params = {k: tuple(v) if isinstance(v, list) else v
                      for k, v in json.loads(str(f[f"{i}/params"])).items()}
            ins, grads, k = [], [], 0
            while f"{i}/in{k}" in f.files:
                ins.append(f[f"{i}/in{k}"])
                grads.append(f[f"{i}/grad{k}"])
                k += 1
            out.append(pytest.param(params, ins, f[f"{i}/out"], f[f"{i}/head"], grads,
                                    id=f"{i}-{f[f'{i}/mode']}"))
    return out


def golden_check(opname, params, inputs, out, head, grads, rtol=1e-4, atol=1e-4):
    """mxc's forward and input gradients (the OpDef's grad with MXNet's head) equal MXNet's."""
    op = registry.get(opname)
    xs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    kw = dict(params)
    if op.variadic:
        kw.setdefault(op.variadic, len(xs))
    y = invoke(op, list(xs), dict(kw))
    np.testing.assert_allclose(y.asnumpy(), out, rtol=rtol, atol=atol,
                               err_msg=f"{opname} {params}: output")
    g = op.grad(mx.nd, op.parse(kw), xs, [y], [mx.nd.array(head, dtype=head.dtype)])
    assert len(g) == len(inputs)
    for k, (a, e) in enumerate(zip(g, grads)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=rtol, atol=atol,
                                   err_msg=f"{opname} {params}: gradient of input {k}")


# ---- references -------------------------------------------------------------------------------
def ref_conv(x, w, b, stride, pad, dilate, groups):
    """Direct-loop cross-correlation (float64)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    f, k = w.shape[0], w.shape[2:]
    nsp = len(k)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    osz = [(x.shape[2 + i] + 2 * pad[i] - (1 + (k[i] - 1) * dilate[i])) // stride[i] + 1
           for i in range(nsp)]
    y = np.zeros((n, f) + tuple(osz))
    cg, fg = c // groups, f // groups
    for o in np.ndindex(*osz):
        for kk in np.ndindex(*k):
            idx = tuple(o[i] * stride[i] + kk[i] * dilate[i] for i in range(nsp))
            patch = xp[(slice(None), slice(None)) + idx]
            for g in range(groups):
                wk = w[(slice(g * fg, (g + 1) * fg), slice(None)) + kk]
                y[(slice(None), slice(g * fg, (g + 1) * fg)) + o] += \
                    patch[:, g * cg:(g + 1) * cg] @ wk.T
    if b is not None:
        y += b.astype(np.float64).reshape((1, f) + (1,) * nsp)
    return y


def ref_deconv(x, w, b, stride, pad, dilate, adj, groups, num_filter):
    """Direct-loop transposed convolution: each input element scatters its kernel."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    k = w.shape[2:]
    nsp = len(k)
    full = [stride[i] * (x.shape[2 + i] - 1) + 1 + (k[i] - 1) * dilate[i] for i in range(nsp)]
    big = np.zeros((n, num_filter) + tuple(f + adj[i] for i, f in enumerate(full)))
    cg, fg = c // groups, num_filter // groups
    for i in np.ndindex(*x.shape[2:]):
        for kk in np.ndindex(*k):
            pos = tuple(i[j] * stride[j] + kk[j] * dilate[j] for j in range(nsp))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + i]          # n, cg
                wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]         # cg, fg
                big[(slice(None), slice(g * fg, (g + 1) * fg)) + pos] += xs @ wk
    out = big[(slice(None), slice(None)) +
              tuple(slice(pad[j], pad[j] + full[j] + adj[j] - 2 * pad[j]) for j in range(nsp))]
    if b is not None:
        out = out + b.astype(np.float64).reshape((1, num_filter) + (1,) * nsp)
    return out


CONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, groups
    ((2, 3, 7), 4, (3,), (1,), (0,), (1,), 1),
    ((2, 4, 9), 6, (3,), (2,), (1,), (2,), 2),
    ((2, 3, 6, 5), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 7, 6), 6, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 6, 5, 5), 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),       # depthwise
    ((2, 4, 5, 4), 3, (1, 1), (1, 1), (0, 0), (1, 1), 1),       # 1x1 (no column matrix)
    ((2, 4, 5, 4), 4, (1, 1), (2, 2), (0, 0), (1, 1), 2),       # 1x1 strided
    ((1, 2, 4, 5, 4), 3, (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 1), 1),
    ((1, 2, 5, 4, 4), 2, (2, 2, 2), (2, 1, 1), (0, 1, 1), (2, 1, 1), 2),
]


def _check_conv_forward(name, ins, kw, ref, dtype):
    """float64 through check_forward's tight tolerance; float32 relative to the output's scale
    (sums of many products: Winograd's transforms round a few more times than direct sums)."""
    if dtype == np.float64:
        check_forward(name, ins, kw, ref.astype(dtype))
        return
    got = getattr(mx.nd, name)(*[mx.nd.array(a, dtype=a.dtype) for a in ins], **kw).asnumpy()
    assert got.dtype == dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(ref).max()))


def _conv_kw(nf, k, s, p, d, g, **extra):
    return dict(kernel=k, stride=s, pad=p, dilate=d, num_filter=nf, num_group=g, **extra)


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_forward(case, dtype, rng):
    shape, nf, k, s, p, d, g = case
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((nf, shape[1] // g) + k).astype(dtype)
    b = rng.standard_normal(nf).astype(dtype)
    ref = ref_conv(x, w, b, s, p, d, g)
    _check_conv_forward("Convolution", [x, w, b], _conv_kw(nf, k, s, p, d, g), ref, dtype)


def test_conv_defaults_and_float16(rng):
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    ref = ref_conv(x, w, b, (1, 1), (0, 0), (1, 1), 1)
    # float32 sums of 27 products of size ~1 (Winograd's transforms add a few more roundings):
    # absolute error ~1e-6 of outputs ~10, so the tolerance is relative to the output's scale
    got32 = mx.nd.Convolution(*[mx.nd.array(a) for a in (x, w, b)], kernel=(3, 3), num_filter=4)
    np.testing.assert_allclose(got32.asnumpy(), ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())
    h = [a.astype(np.float16) for a in (x, w, b)]
    got = mx.nd.Convolution(*[mx.nd.array(a, dtype=a.dtype) for a in h], kernel=(3, 3),
                            num_filter=4)
    assert got.dtype == np.float16
    ref16 = ref_conv(*[a.astype(np.float64) for a in h], (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), ref16, rtol=1e-2, atol=1e-2)
    # the float16 backward (computed in float32) against the float32 one
    hd = rng.standard_normal(got.shape).astype(np.float16)
    kw = dict(kernel=(3, 3), num_filter=4)
    g16 = mx.nd._backward_Convolution(mx.nd.array(hd, dtype=np.float16),
                                      *[mx.nd.array(a, dtype=a.dtype) for a in h], **kw)
    g32 = mx.nd._backward_Convolution(mx.nd.array(hd.astype(np.float32)),
                                      *[mx.nd.array(a.astype(np.float32)) for a in h], **kw)
    for a, e in zip(g16, g32):
        assert a.dtype == np.float16
        np.testing.assert_allclose(a.asnumpy().astype(np.float32), e.asnumpy(), rtol=1e-2,
                                   atol=5e-2)


def test_conv_no_bias(rng):
    op = registry.get("Convolution")
    x = rng.standard_normal((2, 3, 5, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    kw = dict(kernel=(3, 3), num_filter=4, no_bias=True, pad=(1, 1))
    xs = [mx.nd.array(x, dtype=np.float64), mx.nd.array(w, dtype=np.float64)]
    y = invoke(op, xs, dict(kw))
    np.testing.assert_allclose(y.asnumpy(), ref_conv(x, w, None, (1, 1), (1, 1), (1, 1), 1),
                               rtol=1e-10)
    # gradient of a no-bias convolution: two gradients, checked against the biased form
    head = rng.standard_normal(y.shape)
    g = op.grad(mx.nd, op.parse(kw), xs, [y], [mx.nd.array(head, dtype=np.float64)])
    assert len(g) == 2
    b0 = mx.nd.zeros((4,), dtype=np.float64)
    kw3 = dict(kw, no_bias=False)
    g3 = op.grad(mx.nd, op.parse(kw3), xs + [b0], [y], [mx.nd.array(head, dtype=np.float64)])
    for a, e in zip(g, g3):
        np.testing.assert_allclose(a.asnumpy(), e.asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(g3[2].asnumpy(), head.sum(axis=(0, 2, 3)), rtol=1e-10)
    with pytest.raises(ValueError, match="Convolution.*expected 2 inputs"):
        invoke(op, xs + [b0], dict(kw))
    # mx.nd's function takes the bias as absent (MXNet's ListArguments without bias)
    y2 = mx.nd.Convolution(xs[0], xs[1], **kw)
    np.testing.assert_allclose(y2.asnumpy(), y.asnumpy(), rtol=1e-12)
    wd = mx.nd.array(rng.standard_normal((3, 2, 2, 2)), dtype=np.float64)
    d = mx.nd.Deconvolution(xs[0], wd, kernel=(2, 2), num_filter=2)
    assert d.shape == (2, 2, 6, 6)


@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[3], CONV_CASES[4], CONV_CASES[6],
                                  CONV_CASES[8]], ids=lambda c: f"{c[0]}-k{c[2]}")
def test_conv_grad(case, rng):
    shape, nf, k, s, p, d, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1] // g) + k)
    b = rng.standard_normal(nf)
    check_grad("Convolution", [x, w, b], _conv_kw(nf, k, s, p, d, g), rng)


DECONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, adj, groups
    ((2, 3, 4), 2, (3,), (2,), (1,), (1,), (1,), 1),
    ((2, 4, 3, 4), 6, (3, 3), (2, 2), (1, 1), (1, 1), (1, 0), 2),
    ((1, 2, 3, 3), 3, (4, 4), (2, 2), (1, 1), (1, 1), (0, 0), 1),
    ((1, 4, 3, 3), 2, (3, 2), (1, 2), (0, 1), (2, 1), (0, 1), 2),
    ((1, 2, 2, 3, 2), 2, (2, 2, 2), (2, 1, 2), (0, 0, 1), (1, 1, 1), (1, 0, 0), 1),
]


@pytest.mark.parametrize("case", DECONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_deconv_forward(case, dtype, rng):
    shape, nf, k, s, p, d, adj, g = case
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], nf // g) + k).astype(dtype)
    b = rng.standard_normal(nf).astype(dtype)
    ref = ref_deconv(x, w, b, s, p, d, adj, g, nf)
    _check_conv_forward("Deconvolution", [x, w, b],
                        dict(kernel=k, stride=s, pad=p, dilate=d, adj=adj, num_filter=nf,
                             num_group=g, no_bias=False), ref, dtype)


@pytest.mark.parametrize("case", DECONV_CASES[1:], ids=lambda c: f"{c[0]}-k{c[2]}")
def test_deconv_grad(case, rng):
    shape, nf, k, s, p, d, adj, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], nf // g) + k)
    b = rng.standard_normal(nf)
    check_grad("Deconvolution", [x, w, b], dict(kernel=k, stride=s, pad=p, dilate=d, adj=adj,
                                                num_filter=nf, num_group=g, no_bias=False), rng)


def test_deconv_target_shape_and_no_bias(rng):
    op = registry.get("Deconvolution")
    a = op.parse(dict(kernel=(3, 3), stride=(2, 2), target_shape=(6, 5), num_filter=2))
    # MXNet's InferPad: total = stride*(in-1) + kernel - target;
    # adj = total % 2, pad = ceil(total / 2)
    (out,), _ = op.infer(a, [(1, 2, 3, 3), (2, 2, 3, 3)], [np.float32] * 2)
    assert out == (1, 2, 6, 5)
    x = rng.standard_normal((1, 2, 3, 3))
    w = rng.standard_normal((2, 2, 3, 3))
    xs = [mx.nd.array(x, dtype=np.float64), mx.nd.array(w, dtype=np.float64)]
    y = invoke(op, xs, dict(kernel=(3, 3), stride=(2, 2), target_shape=(6, 5), num_filter=2))
    ref = ref_deconv(x, w, None, (2, 2), (1, 1), (1, 1), (1, 0), 1, 2)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-10)
    with pytest.raises(ValueError, match="Deconvolution.*adj"):
        op.infer(op.parse(dict(kernel=(3,), stride=(1,), target_shape=(4,), num_filter=1)),
                 [(1, 1, 3), (1, 1, 3)], [np.float32] * 2)


def test_infer_inputs():
    op = registry.get("Convolution")
    a = op.parse(dict(kernel=(3, 3), num_filter=8, num_group=2))
    assert op.infer_inputs(a, [(2, 4, 9, 9), None, None]) == [(2, 4, 9, 9), (8, 2, 3, 3), (8,)]
    d = registry.get("Deconvolution")
    a = d.parse(dict(kernel=(2, 2), num_filter=6, num_group=3, no_bias=False))
    assert d.infer_inputs(a, [(2, 3, 4, 4), None, None]) == [(2, 3, 4, 4), (3, 2, 2, 2), (6,)]


def test_errors_name_the_operator():
    x = mx.nd.ones((1, 3, 5, 5))
    with pytest.raises(ValueError, match="Convolution.*weight has shape"):
        mx.nd.Convolution(x, mx.nd.ones((4, 2, 3, 3)), mx.nd.ones(4), kernel=(3, 3), num_filter=4)
    with pytest.raises(ValueError, match="Convolution.*exceeds input"):
        mx.nd.Convolution(x, mx.nd.ones((4, 3, 7, 7)), mx.nd.ones(4), kernel=(7, 7), num_filter=4)
    with pytest.raises(ValueError, match="Convolution.*NCW, NCHW and NCDHW"):
        mx.nd.Convolution(x, mx.nd.ones((4, 3, 3, 3)), mx.nd.ones(4), kernel=(3, 3),
                          num_filter=4, layout="NHWC")
    with pytest.raises(ValueError, match="Convolution.*num_group"):
        mx.nd.Convolution(x, mx.nd.ones((4, 1, 3, 3)), mx.nd.ones(4), kernel=(3, 3),
                          num_filter=4, num_group=2)
    with pytest.raises(ValueError, match="Convolution.*4-D"):
        mx.nd.Convolution(mx.nd.ones((3, 5, 5)), mx.nd.ones((4, 3, 3, 3)), mx.nd.ones(4),
                          kernel=(3, 3), num_filter=4)
    with pytest.raises(ValueError, match="Convolution.*Stride"):
        mx.nd.Convolution(x, mx.nd.ones((4, 3, 3, 3)), mx.nd.ones(4), kernel=(3, 3),
                          stride=(1,), num_filter=4)
    with pytest.raises(ValueError, match="Convolution.*not supported"):
        mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5), dtype=np.int32),
                          mx.nd.ones((4, 3, 3, 3), dtype=np.int32),
                          mx.nd.ones(4, dtype=np.int32), kernel=(3, 3), num_filter=4)
    with pytest.raises(ValueError, match="Deconvolution.*weight has shape"):
        mx.nd.Deconvolution(x, mx.nd.ones((4, 3, 3, 3)), mx.nd.ones(4), kernel=(3, 3),
                            num_filter=4, no_bias=False)


def test_backward_ops_direct(rng):
    x = mx.nd.array(rng.standard_normal((2, 3, 5, 5)))
    w = mx.nd.array(rng.standard_normal((4, 3, 3, 3)))
    b = mx.nd.array(rng.standard_normal(4))
    y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4)
    dx, dw, db = mx.nd._backward_Convolution(mx.nd.ones_like(y), x, w, b, kernel=(3, 3),
                                             num_filter=4)
    assert dx.shape == x.shape and dw.shape == w.shape and db.shape == b.shape
    np.testing.assert_allclose(db.asnumpy(), np.full(4, 2 * 3 * 3), rtol=1e-6)
    wd = mx.nd.array(rng.standard_normal((4, 2, 3, 3)))
    yd = mx.nd.Deconvolution(y, wd, mx.nd.ones(2), kernel=(3, 3), num_filter=2, no_bias=False)
    assert yd.shape == (2, 2, 5, 5)
    g = mx.nd._backward_Deconvolution(mx.nd.ones_like(yd), y, wd, mx.nd.ones(2), kernel=(3, 3),
                                      num_filter=2, no_bias=False)
    assert [a.shape for a in g] == [y.shape, wd.shape, (2,)]
    assert registry.get("_npx_convolution") is registry.get("Convolution")
    assert registry.get("_npx_deconvolution") is registry.get("Deconvolution")


def test_large_conv_uses_column_chunks(rng):
    # a column matrix above the chunk limit (4M elements) is built in chunks of output rows
    x = rng.standard_normal((1, 64, 80, 80)).astype(np.float32)
    w = rng.standard_normal((2, 64, 3, 3)).astype(np.float32)
    y = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), mx.nd.zeros(2), kernel=(3, 3),
                          num_filter=2, pad=(1, 1)).asnumpy()
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    for (i, j) in [(0, 0), (40, 17), (79, 79)]:
        ref = np.einsum("chw,fchw->f", xp[0, :, i:i + 3, j:j + 3], w.astype(np.float64))
        np.testing.assert_allclose(y[0, :, i, j], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("params,inputs,out,head,grads", golden_cases("Convolution"))
def test_conv_golden(params, inputs, out, head, grads):
    golden_check("Convolution", params, inputs, out, head, grads)


@pytest.mark.parametrize("params,inputs,out,head,grads", golden_cases("Deconvolution"))
def test_deconv_golden(params, inputs, out, head, grads):
    golden_check("Deconvolution", params, inputs, out, head, grads)


# ---- the Winograd F(2x2, 3x3) path (float32 3x3, stride 1, one group, pad <= 2) ---------------
@pytest.mark.parametrize("op", ["Convolution", "Deconvolution"])
@pytest.mark.parametrize("shape,nf,pad", [
    ((2, 10, 9, 19), 13, (1, 1)), ((3, 8, 7, 6), 16, (0, 2)), ((1, 5, 4, 33), 7, (2, 0)),
    ((5, 6, 8, 8), 9, (1, 1)),        # 4 tiles per row: rows share the GEMMs' 8-column groups
    ((3, 4, 7, 13), 5, (1, 1)),       # 7 tiles per row, several blocks
    ((2, 3, 6, 24), 4, (1, 1))])      # 12 tiles per row
def test_conv3x3_winograd_matches_float64(op, shape, nf, pad, rng):
    """float32 forward and all gradients agree with the float64 (im2col) results."""
    x = rng.standard_normal(shape)
    wshape = (nf, shape[1], 3, 3) if op == "Convolution" else (shape[1], nf, 3, 3)
    w = rng.standard_normal(wshape) * 0.3
    b = rng.standard_normal(nf)
    kw = dict(kernel=(3, 3), pad=pad, num_filter=nf, no_bias=False)
    res = []
    for dt in (np.float32, np.float64):
        xs = [mx.nd.array(a.astype(dt), dtype=dt) for a in (x, w, b)]
        y = getattr(mx.nd, op)(*xs, **kw)
        dy = mx.nd.array(np.cos(np.arange(y.size)).reshape(y.shape).astype(dt), dtype=dt)
        g = getattr(mx.nd, "_backward_" + op)(dy, *xs, **kw)
        res.append([y.asnumpy()] + [a.asnumpy() for a in g])
    for got, want in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


# ---- small outputs: blocks of samples per GEMM -------------------------------------------------
def ref_conv_grads(x, w, dy, stride, pad, groups):
    """dX, dW, db of a 2-D convolution (float64, one numpy product per kernel tap)."""
    x, w, dy = (a.astype(np.float64) for a in (x, w, dy))
    f, cg, kh, kw = w.shape
    fg = f // groups
    xp = np.pad(x, [(0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])])
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    oh, ow = dy.shape[2:]
    for g in range(groups):
        cs, fs = slice(g * cg, (g + 1) * cg), slice(g * fg, (g + 1) * fg)
        for i in range(kh):
            for j in range(kw):
                win = (slice(None), cs, slice(i, i + stride[0] * (oh - 1) + 1, stride[0]),
                       slice(j, j + stride[1] * (ow - 1) + 1, stride[1]))
                dw[fs, :, i, j] = np.einsum("nchw,nfhw->fc", xp[win], dy[:, fs])
                dxp[win] += np.einsum("nfhw,fc->nchw", dy[:, fs], w[fs, :, i, j])
    dx = dxp[:, :, pad[0]:pad[0] + x.shape[2], pad[1]:pad[1] + x.shape[3]]
    return dx, dw, dy.sum(axis=(0, 2, 3))


@pytest.mark.parametrize("shape,nf,k,s,p,g", [
    ((6, 20, 12, 12), 50, 5, 1, 0, 1),     # few output channels: the transposed products
    ((4, 32, 7, 7), 40, 5, 2, 2, 2),       # the same per group, strided and padded
    ((5, 64, 4, 4), 96, 3, 1, 1, 1),       # more channels: the plain products
], ids=["lenet2", "groups", "wide"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_output_sample_blocks(shape, nf, k, s, p, g, dtype, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1] // g, k, k)) * 0.2
    b = rng.standard_normal(nf)
    kw = _conv_kw(nf, (k, k), (s, s), (p, p), (1, 1), g)
    xs = [mx.nd.array(a.astype(dtype), dtype=dtype) for a in (x, w, b)]
    y = mx.nd.Convolution(*xs, **kw)
    ref = ref_conv(x, w, b, (s, s), (p, p), (1, 1), g)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=tol, atol=tol * np.abs(ref).max())
    dy = rng.standard_normal(ref.shape)
    got = mx.nd._backward_Convolution(mx.nd.array(dy.astype(dtype), dtype=dtype), *xs, **kw)
    for a, e in zip(got, ref_conv_grads(x, w, dy, (s, s), (p, p), g)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=tol, atol=tol * np.abs(e).max())


# ---- a first layer's backward skips the data gradient (attrs["_skip_outputs"]) -----------------
@pytest.mark.parametrize("op,shape,k,dtype", [
    ("Convolution", (3, 2, 9, 9), 3, np.float32),      # 3x3 stride 1: the Winograd path
    ("Convolution", (3, 2, 9, 9), 5, np.float32),      # im2col
    ("Convolution", (2, 3, 8, 8), 3, np.float64),
    ("Convolution", (2, 3, 8, 8), 3, np.float16),
    ("Deconvolution", (2, 4, 6, 6), 3, np.float32),
    ("Deconvolution", (2, 4, 6, 6), 4, np.float64)])
def test_backward_leaves_a_skipped_data_gradient_unwritten(op, shape, k, dtype, rng):
    nf = 3
    wshape = (nf, shape[1], k, k) if op == "Convolution" else (shape[1], nf, k, k)
    xs = [mx.nd.array(rng.standard_normal(s).astype(dtype), dtype=dtype)
          for s in (shape, wshape, (nf,))]
    kw = dict(kernel=(k, k), num_filter=nf, no_bias=False)
    y = getattr(mx.nd, op)(*xs, **kw)
    dy = mx.nd.array(rng.standard_normal(y.shape).astype(dtype), dtype=dtype)
    full = [a.asnumpy() for a in getattr(mx.nd, "_backward_" + op)(dy, *xs, **kw)]
    bop = registry.get("_backward_" + op)
    attrs = dict(bop.parse({k_: str(v) for k_, v in kw.items()}), _skip_outputs=(0,))
    outs = [mx.nd.full(a.shape, 7.0, dtype=dtype) for a in full]
    bop.forward(attrs, [dy] + xs, outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), np.full(full[0].shape, 7.0, dtype))
    for got, want in zip(outs[1:], full[1:]):
        np.testing.assert_array_equal(got.asnumpy(), want)      # the same kernels: bit for bit


@pytest.mark.parametrize("hybrid", [False, True])
def test_first_layer_weight_gradients_do_not_depend_on_the_skip(hybrid, rng):
    """Autograd's prepared backward and the executor skip the data gradient of a layer whose
    input needs none; the weight gradients equal those of a run where the input needs one."""
    x = mx.nd.array(rng.standard_normal((2, 3, 9, 9)))
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=3), mx.gluon.nn.Conv2D(2, 3, in_channels=4))
    net.initialize(mx.init.Xavier())
    if hybrid:
        net.hybridize()
    grads = []
    for data_grad in (False, True):
        xx = x.copy()
        if data_grad:
            xx.attach_grad()
        with mx.autograd.record():
            loss = (net(xx) * net(xx)).sum()
        loss.backward()
        grads.append([p.grad().asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
    assert np.abs(xx.grad.asnumpy()).sum() > 0
    plans = [p for key, p in mx.autograd._GRAD_PLANS.items()
             if key[0].name == "Convolution" and p and not hybrid]
    if not hybrid:
        assert any(st[1].get("_skip_outputs") == (0,) for p in plans for st in p.steps
                   if st[0] is not None and st[0] is not mx.autograd._VIEW)


# ---- inputs smaller than the kernel: one dense product over all samples ------------------------
DENSE_CONV_CASES = [
    # data shape (n >= 4), num_filter, kernel, stride, pad, dilate
    ((4, 6, 1, 1), 5, (3, 3), (1, 1), (1, 1), (1, 1)),          # only the centre tap is live
    ((5, 4, 2, 2), 3, (3, 3), (1, 1), (1, 1), (1, 1)),          # ResNet's 2x2 stage
    ((4, 4, 2, 2), 5, (3, 3), (2, 2), (1, 1), (1, 1)),          # strided onto 1x1
    ((4, 3, 3, 2), 4, (3, 3), (1, 1), (2, 1), (1, 1)),          # 6 < 9 positions, uneven pad
    ((4, 3, 2), 4, (5,), (1,), (4,), (2,)),                     # 1-D, dilated
    ((4, 2, 1, 2, 2), 3, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),   # 3-D
]


@pytest.mark.parametrize("case", DENSE_CONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}-s{c[3]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_input_dense_product_forward(case, dtype, rng):
    shape, nf, k, s, p, d = case
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((nf, shape[1]) + k).astype(dtype)
    b = rng.standard_normal(nf).astype(dtype)
    _check_conv_forward("Convolution", [x, w, b], _conv_kw(nf, k, s, p, d, 1, no_bias=False),
                        ref_conv(x, w, b, s, p, d, 1), dtype)
    _check_conv_forward("Convolution", [x, w], _conv_kw(nf, k, s, p, d, 1, no_bias=True),
                        ref_conv(x, w, None, s, p, d, 1), dtype)


@pytest.mark.parametrize("case", DENSE_CONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}-s{c[3]}")
def test_small_input_dense_product_grad(case, rng):
    shape, nf, k, s, p, d = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1]) + k)
    b = rng.standard_normal(nf)
    check_grad("Convolution", [x, w, b], _conv_kw(nf, k, s, p, d, 1), rng)


@pytest.mark.parametrize("shape,nf,k,s,p", [
    ((8, 32, 1, 1), 24, 3, 1, 1), ((6, 16, 2, 2), 20, 3, 1, 1), ((6, 16, 2, 2), 20, 3, 2, 1)],
    ids=["1x1", "2x2", "2x2-s2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_small_input_dense_product_float32_grads(shape, nf, k, s, p, dtype, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1], k, k)) * 0.2
    b = rng.standard_normal(nf)
    kw = _conv_kw(nf, (k, k), (s, s), (p, p), (1, 1), 1)
    xs = [mx.nd.array(a.astype(dtype), dtype=dtype) for a in (x, w, b)]
    x, w, b = (a.asnumpy().astype(np.float64) for a in xs)     # the rounded values
    y = mx.nd.Convolution(*xs, **kw)
    ref = ref_conv(x, w, b, (s, s), (p, p), (1, 1), 1)
    tol = 2e-5 if dtype == np.float32 else 3e-3
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=tol, atol=tol * np.abs(ref).max())
    dy = rng.standard_normal(ref.shape).astype(dtype)
    got = mx.nd._backward_Convolution(mx.nd.array(dy, dtype=dtype), *xs, **kw)
    for a, e in zip(got, ref_conv_grads(x, w, dy, (s, s), (p, p), 1)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=tol, atol=tol * np.abs(e).max())


@pytest.mark.parametrize("shape,nf,k,s,p,adj", [
    ((4, 5, 1, 1), 3, 3, 1, 1, 0),      # conv-sense X 1x1
    ((4, 4, 1, 1), 3, 3, 2, 1, 1),      # conv-sense X 2x2
], ids=["1x1", "1x1-to-2x2"])
def test_small_input_dense_product_deconvolution(shape, nf, k, s, p, adj, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], nf, k, k))
    b = rng.standard_normal(nf)
    kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), adj=(adj, adj), num_filter=nf,
              no_bias=False)
    ref = ref_deconv(x, w, b, (s, s), (p, p), (1, 1), (adj, adj), 1, nf)
    check_forward("Deconvolution", [x, w, b], kw, ref)
    check_grad("Deconvolution", [x, w, b], kw, rng)


# ---- few channels per group: the direct loops (csrc/kernels/convolution_grouped.h) -------------
GROUPED_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, groups: depthwise (one input channel
    # per group), the strides split into phases
    ((2, 6, 9, 11), 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),      # 3x3: kernel rows in one pass
    ((2, 4, 10, 9), 8, (3, 3), (2, 2), (1, 1), (1, 1), 4),      # multiplier 2, stride 2
    ((1, 3, 8, 9), 9, (3, 2), (1, 2), (2, 0), (2, 1), 3),       # multiplier 3, dilation, stride across
    ((2, 4, 7, 7), 4, (5, 5), (2, 1), (2, 2), (1, 1), 4),       # 5x5, stride only down
    ((2, 3, 13), 6, (3,), (2,), (1,), (1,), 3),                 # 1-D, multiplier 2
    ((1, 4, 6, 6), 4, (2, 2), (3, 3), (0, 0), (1, 1), 4),       # input rows no tap reads
    ((1, 2, 9, 10), 4, (4, 4), (2, 2), (2, 2), (1, 1), 2),      # stride 2, even padding
    ((2, 8, 7, 7), 4, (3, 3), (1, 1), (1, 1), (1, 1), 2),       # 4 per group: the GEMM path
    # depthwise 3x3 on blocks of channels (csrc/kernels/convolution_depthwise.h): whole blocks
    # of 16 (register transposes of 16 positions, then the rest one by one) and a partial one
    ((2, 32, 9, 8), 32, (3, 3), (2, 2), (1, 1), (1, 1), 32),
    ((1, 17, 6, 7), 17, (3, 3), (1, 1), (2, 2), (1, 1), 17),
    ((2, 16, 5, 12), 16, (3, 3), (1, 2), (0, 1), (1, 1), 16),
]


@pytest.mark.parametrize("case", GROUPED_CASES, ids=lambda c: f"{c[0]}-k{c[2]}-s{c[3]}")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_grouped_direct_forward_and_gradients(case, dtype, rng):
    shape, nf, k, s, p, d, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1] // g) + k)
    b = rng.standard_normal(nf)
    kw = _conv_kw(nf, k, s, p, d, g)
    ref = ref_conv(x, w, b, s, p, d, g)
    xs = [mx.nd.array(a, dtype=dtype) for a in (x, w, b)]
    tol = {np.float16: 2e-2, np.float32: 2e-5, np.float64: 1e-12}[dtype]
    qx, qw, qb = (a.asnumpy().astype(np.float64) for a in xs)   # the inputs as the dtype holds them
    ref = ref_conv(qx, qw, qb, s, p, d, g)
    y = mx.nd.Convolution(*xs, **kw)
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), ref, rtol=tol,
                               atol=tol * np.abs(ref).max())
    # each input's gradient g against <dy, directional derivative of the output along a random
    # direction v> from the float64 reference (the output is linear in each input)
    dy = rng.standard_normal(ref.shape)
    grads = mx.nd._backward_Convolution(mx.nd.array(dy, dtype=dtype), *xs, **kw)
    qdy = mx.nd.array(dy, dtype=dtype).asnumpy().astype(np.float64)
    for i, grad in enumerate(grads):
        v = rng.standard_normal((qx, qw, qb)[i].shape)
        if i == 0:
            lin = ref_conv(v, qw, None, s, p, d, g)
        elif i == 1:
            lin = ref_conv(qx, v, None, s, p, d, g)
        else:
            lin = np.broadcast_to(v.reshape((1, nf) + (1,) * len(k)), ref.shape)
        want = float((qdy * lin).sum())
        got = float((grad.asnumpy().astype(np.float64) * v).sum())
        assert abs(got - want) <= 10 * tol * np.abs(qdy * lin).sum(), (i, got, want)


@pytest.mark.parametrize("case", GROUPED_CASES[:4], ids=lambda c: f"{c[0]}-k{c[2]}-s{c[3]}")
def test_grouped_direct_numerical_gradient(case, rng):
    shape, nf, k, s, p, d, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1] // g) + k)
    b = rng.standard_normal(nf)
    check_grad("Convolution", [x, w, b], _conv_kw(nf, k, s, p, d, g), rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grouped_direct_deconvolution(dtype, rng):
    """Deconvolution's forward is the direct backward-data loop, its data gradient the forward."""
    shape, nf, k, s, p, d, adj, g = (2, 6, 5, 6), 6, (3, 3), (2, 2), (1, 1), (1, 1), (1, 0), 6
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], nf // g) + k)
    b = rng.standard_normal(nf)
    kw = dict(kernel=k, stride=s, pad=p, dilate=d, adj=adj, num_filter=nf, num_group=g,
              no_bias=False)
    _check_conv_forward("Deconvolution", [x.astype(dtype), w.astype(dtype), b.astype(dtype)], kw,
                        ref_deconv(x, w, b, s, p, d, adj, g, nf), dtype)
    if dtype == np.float64:
        check_grad("Deconvolution", [x, w, b], kw, rng)


@pytest.mark.parametrize("shape,nf,g", [((3, 5, 12, 12), 7, 1), ((2, 6, 16, 9), 9, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_per_sample_products(shape, nf, g, dtype, rng):
    """1x1 kernels of >= 128 output positions: one GEMM per sample, straight between X and Y."""
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1] // g, 1, 1))
    b = rng.standard_normal(nf)
    kw = _conv_kw(nf, (1, 1), (1, 1), (0, 0), (1, 1), g)
    xs = [mx.nd.array(a, dtype=dtype) for a in (x, w, b)]
    ref = ref_conv(x, w, b, (1, 1), (0, 0), (1, 1), g)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(mx.nd.Convolution(*xs, **kw).asnumpy(), ref, rtol=tol,
                               atol=tol * np.abs(ref).max())
    dy = rng.standard_normal(ref.shape)
    got = mx.nd._backward_Convolution(mx.nd.array(dy, dtype=dtype), *xs, **kw)
    for a, e in zip(got, ref_conv_grads(x, w, dy, (1, 1), (0, 0), g)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=tol, atol=tol * np.abs(e).max())


# ---- strided rows: im2col/col2im of stride 2 (AVX-512 where the CPU has it) ---------------------
@pytest.mark.parametrize("shape,nf,k,p", [
    ((2, 3, 70, 70), 8, 7, 3),     # ResNet's stem: 35 outputs a row (two vectors and a tail)
    ((1, 4, 41, 40), 5, 3, 1),     # one sample (no sample blocks): rows of 21 and 20
    ((1, 3, 34, 66), 6, 1, 0),     # 1x1 downsampling: rows of exactly 17 and 33
    ((1, 2, 36, 33), 3, 3, 0),     # no padding: the rows end at the plane's last element
], ids=["stem", "odd", "down", "edge"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stride2_rows_forward_and_gradients(shape, nf, k, p, dtype, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal((nf, shape[1], k, k)) * 0.2
    b = rng.standard_normal(nf)
    kw = _conv_kw(nf, (k, k), (2, 2), (p, p), (1, 1), 1)
    xs = [mx.nd.array(a, dtype=dtype) for a in (x, w, b)]
    ref = ref_conv(x, w, b, (2, 2), (p, p), (1, 1), 1)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(mx.nd.Convolution(*xs, **kw).asnumpy(), ref, rtol=tol,
                               atol=tol * np.abs(ref).max())
    dy = rng.standard_normal(ref.shape)
    got = mx.nd._backward_Convolution(mx.nd.array(dy, dtype=dtype), *xs, **kw)
    for a, e in zip(got, ref_conv_grads(x, w, dy, (2, 2), (p, p), 1)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=tol, atol=tol * np.abs(e).max())


@pytest.mark.parametrize("c,g", [(6, 1), (3, 1), (48, 2)], ids=["chunks", "rows75", "groups"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_sample_column_chunks_forward_and_gradients(c, g, dtype, rng):
    """A per-sample column matrix above MXC_CONV_CHUNK_LIMIT (150 rows x 70 x 64 outputs) is built
    in chunks of output rows (27, 27, then 16); 75 rows in 54 + 16; groups of 24 channels (600
    rows) in chunks of 16 rows (the 1024-column floor). Forward, data and weight gradients (the
    weight gradient with few output channels as its transpose, mxc_conv_geom.wtt)."""
    x = rng.standard_normal((2, c, 70, 64))
    w = rng.standard_normal((4, c // g, 5, 5)) * 0.2
    b = rng.standard_normal(4)
    kw = _conv_kw(4, (5, 5), (1, 1), (2, 2), (1, 1), g)
    xs = [mx.nd.array(a, dtype=dtype) for a in (x, w, b)]
    ref = ref_conv(x, w, b, (1, 1), (2, 2), (1, 1), g)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(mx.nd.Convolution(*xs, **kw).asnumpy(), ref, rtol=tol,
                               atol=tol * np.abs(ref).max())
    dy = rng.standard_normal(ref.shape)
    got = mx.nd._backward_Convolution(mx.nd.array(dy, dtype=dtype), *xs, **kw)
    for a, e in zip(got, ref_conv_grads(x, w, dy, (1, 1), (2, 2), g)):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=tol, atol=tol * np.abs(e).max())


# ---- samples split between threads (mxc_conv_split) -------------------------------------------
def _kernel_call(name, ins, outs, k, s, p, g, nthreads):
    from mxc._core.opcall import DTYPE_CODE, run_on_numpy
    from mxc.ops.cpu.convolution import KERNELS
    run_on_numpy(KERNELS[name][DTYPE_CODE[ins[0].dtype]], ins, outs,
                 iattr=(1, k, k, 1, s, s, 1, 1, 1, 0, p, p, g), nthreads=nthreads)
    return outs


@pytest.mark.parametrize("shape,nf,k,s,p,g", [
    ((5, 3, 24, 24), 8, 7, 2, 3, 1),       # the stem: per-sample column matrix, dW transposed
    ((7, 6, 12, 12), 72, 5, 1, 2, 1),      # more output channels: dW as it is
    ((5, 8, 12, 12), 16, 1, 1, 0, 1),      # 1x1: straight from X, no column matrix
    ((5, 64, 14, 14), 40, 3, 1, 1, 2),     # groups of 32 channels
    ((13, 20, 12, 12), 50, 5, 1, 0, 1),    # blocks of samples, transposed products (8x8 out)
    ((13, 16, 10, 10), 96, 5, 1, 2, 1),    # blocks of samples, plain products (10x10 out)
    ((7, 16, 8, 8), 24, 3, 2, 1, 1),       # blocks of 4x4 outputs: too few columns, not split
], ids=["stem", "wide", "direct", "groups", "blocks_tt", "blocks", "small_blocks"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_samples_split_between_threads(shape, nf, k, s, p, g, dtype, rng):
    """With 2 and 3 threads (batches of 5, 7 and 13 do not divide) each thread takes a range of
    samples with its own column scratch and dW partial (one GEMM per sample, or blocks of samples
    of at least MXC_CONV_SPLIT_MIN_COLS columns per thread): forward, dX, dW and the bias
    gradient against numpy, and the same bits on a second run."""
    x = rng.standard_normal(shape).astype(dtype)
    w = (rng.standard_normal((nf, shape[1] // g, k, k)) * 0.2).astype(dtype)
    b = rng.standard_normal(nf).astype(dtype)
    ref = ref_conv(x, w, b, (s, s), (p, p), (1, 1), g)
    dy = rng.standard_normal(ref.shape).astype(dtype)
    rx, rw, rb = ref_conv_grads(x, w, dy, (s, s), (p, p), g)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    for nt in (2, 3):
        runs = []
        for _ in range(2):
            (y,) = _kernel_call("conv:forward", [x, w, b], [np.empty(ref.shape, dtype)],
                                k, s, p, g, nt)
            grads = _kernel_call("conv:backward", [dy, x, w],
                                 [np.empty_like(x), np.empty_like(w), np.empty_like(b)],
                                 k, s, p, g, nt)
            runs.append((y,) + tuple(grads))
        for a, e in zip(runs[0], (ref, rx, rw, rb)):
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol * np.abs(e).max(),
                                       err_msg=f"{nt} threads")
        for a, a2 in zip(*runs):
            np.testing.assert_array_equal(a, a2, err_msg=f"{nt} threads: not reproducible")


def test_deconvolution_samples_split_between_threads(rng):
    """Deconvolution's forward (the data-gradient product) and backward on 3 threads, batch 4,
    against the direct-loop references."""
    x = rng.standard_normal((4, 6, 12, 12))  # 144 positions: one GEMM per sample
    w = rng.standard_normal((6, 4, 3, 3)) * 0.2
    ref = ref_deconv(x, w, None, (2, 2), (1, 1), (1, 1), (0, 0), 1, 4)
    (y,) = _kernel_call("deconv:forward", [x, w], [np.empty(ref.shape)], 3, 2, 1, 1, 3)
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-10 * np.abs(ref).max())
    # deconvolution's gradients are the convolution's with data and output exchanged
    dy = rng.standard_normal(ref.shape)
    dx, dw = _kernel_call("deconv:backward", [dy, x, w], [np.empty_like(x), np.empty_like(w)],
                          3, 2, 1, 1, 3)
    ex = ref_conv(dy, w, None, (2, 2), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(dx, ex, rtol=1e-10, atol=1e-10 * np.abs(ex).max())
    _, ew, _ = ref_conv_grads(dy, w, x, (2, 2), (1, 1), 1)
    np.testing.assert_allclose(dw, ew, rtol=1e-10, atol=1e-10 * np.abs(ew).max())

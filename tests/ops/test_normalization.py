"""Normalization operators (BatchNorm, BatchNorm_v1, LayerNorm, InstanceNorm, GroupNorm and their
_backward_ ops): forward against numpy in every float dtype and mode, gradients against central
differences in training, global-stats and prediction modes, MXNet 1.9.1's moving-statistics
update (in the backward), errors, and golden values from real MXNet 1.9.1."""
import json
import os

import numpy as np
import pytest

import mxc as mx
from mxc._core import modes
from mxc.ops import registry

from .oputil import check_forward, check_grad

GOLDEN = os.path.join(os.path.dirname(__file__), os.pardir, "data", "norm_golden.npz")


class training:
    """Training mode for a with block (what autograd.record() sets)."""

    def __init__(self, flag=True):
        self.flag = flag

    def __enter__(self):
        self.prev = modes.set_training(self.flag)

    def __exit__(self, *exc):
        modes.set_training(self.prev)


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _bc(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(v, np.float64).reshape(shape)


def f32(v):
    """MXNet's eps and momentum are float32 parameters."""
    return float(np.float32(v))


def bn_ref(x, gamma, beta, mm, mv, eps=1e-3, fix_gamma=True, axis=1, train=False):
    eps = f32(eps)
    x64 = x.astype(np.float64)
    ax = axis % x.ndim
    red = tuple(i for i in range(x.ndim) if i != ax)
    if train:
        mean, var = x64.mean(axis=red), x64.var(axis=red)
    else:
        mean, var = mm.astype(np.float64), mv.astype(np.float64)
    g = np.ones_like(mean) if fix_gamma else gamma.astype(np.float64)
    y = (x64 - _bc(mean, x.ndim, ax)) / np.sqrt(_bc(var, x.ndim, ax) + eps) * _bc(g, x.ndim, ax) \
        + _bc(beta, x.ndim, ax)
    return y, mean, 1 / np.sqrt(var + eps), var


def row_ref(op, x, gamma, beta, **kw):
    x64 = x.astype(np.float64)
    if op == "LayerNorm":
        ax = kw.get("axis", -1) % x.ndim
        m = x64.mean(axis=ax, keepdims=True)
        v = x64.var(axis=ax, keepdims=True)
        eps = f32(kw.get("eps", 1e-5))
        y = (x64 - m) / np.sqrt(v + eps) * _bc(gamma, x.ndim, ax) + _bc(beta, x.ndim, ax)
        return y, m, np.sqrt(v + eps)
    n, c = x.shape[:2]
    g = 1 if op == "InstanceNorm" else kw.get("num_groups", 1)
    eps = f32(kw.get("eps", 1e-3 if op == "InstanceNorm" else 1e-5))
    groups = c if op == "InstanceNorm" else g
    xr = x64.reshape(n, groups, -1)
    m = xr.mean(axis=2, keepdims=True)
    v = xr.var(axis=2, keepdims=True)
    xh = ((xr - m) / np.sqrt(v + eps)).reshape((n, c, -1))
    if op == "InstanceNorm":
        gc, bc = gamma.astype(np.float64), beta.astype(np.float64)
    else:
        gc = np.repeat(gamma.astype(np.float64), c // g)
        bc = np.repeat(beta.astype(np.float64), c // g)
    y = (xh * gc[None, :, None] + bc[None, :, None]).reshape(x.shape)
    return y, m[:, :, 0], np.sqrt(v + eps)[:, :, 0]


def _bn_inputs(rng, shape, axis=1, dtype=np.float64):
    c = shape[axis]
    pdt = np.float32 if dtype == np.float16 else dtype
    return [(rng.standard_normal(shape) * 1.5 + 0.5).astype(dtype),
            rng.uniform(0.5, 1.5, c).astype(pdt), rng.standard_normal(c).astype(pdt),
            (rng.standard_normal(c) * 0.3).astype(pdt), rng.uniform(0.5, 2, c).astype(pdt)]


# ---- BatchNorm forward -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((4, 5, 3), -1), ((3, 7), 0),
                                        ((6, 4), 1), ((5,), 0)])
def test_batchnorm_forward(dtype, train, shape, axis, rng):
    ins = _bn_inputs(rng, shape, axis, dtype)
    pdt = ins[1].dtype
    for fix_gamma in (False, True):
        kw = dict(fix_gamma=fix_gamma, axis=axis, output_mean_var=True, eps=1e-3)
        y, mean, invstd, _ = bn_ref(*ins, eps=1e-3, fix_gamma=fix_gamma, axis=axis, train=train)
        with training(train):
            check_forward("BatchNorm", ins, kw, [y.astype(dtype), mean.astype(pdt),
                                                 invstd.astype(pdt)])
            check_forward("BatchNorm", ins, dict(kw, output_mean_var=False), y.astype(dtype))
        # use_global_stats uses the moving statistics even in training
        y, mean, invstd, _ = bn_ref(*ins, fix_gamma=fix_gamma, axis=axis, train=False)
        with training(True):
            check_forward("BatchNorm", ins, dict(kw, use_global_stats=True),
                          [y.astype(dtype), mean.astype(pdt), invstd.astype(pdt)])


def test_batchnorm_default_params_and_alias(rng):
    ins = _bn_inputs(rng, (2, 3, 4), 1, np.float32)
    y, *_ = bn_ref(*ins)       # defaults: eps 1e-3, fix_gamma True, axis 1, moving stats
    check_forward("BatchNorm", ins, {}, y.astype(np.float32))
    check_forward("_npx_batch_norm", ins, {"cudnn_off": True, "min_calib_range": -1.0,
                                           "max_calib_range": 1.0}, y.astype(np.float32))
    op = registry.get("BatchNorm")
    assert op.aux == ("moving_mean", "moving_var") and op.mutate == (3, 4)
    assert op.infer_inputs(op.parse({"axis": -1}), [(2, 3, 7), None, None, None, None]) == \
        [(2, 3, 7), (7,), (7,), (7,), (7,)]
    assert op.infer_inputs(op.parse({}), [None] * 5) == [None] * 5


def test_batchnorm_forward_leaves_moving_stats(rng):
    ins = _bn_inputs(rng, (4, 3, 5))
    arrs = [nd(a) for a in ins]
    with training():
        mx.nd.BatchNorm(*arrs, fix_gamma=False).wait_to_read()
    np.testing.assert_array_equal(arrs[3].asnumpy(), ins[3])
    np.testing.assert_array_equal(arrs[4].asnumpy(), ins[4])
    np.testing.assert_array_equal(arrs[1].asnumpy(), ins[1])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_batchnorm_backward_updates_moving_stats(dtype, rng):
    ins = _bn_inputs(rng, (4, 3, 6), 1, dtype)
    arrs = [nd(a) for a in ins]
    op = registry.get("BatchNorm")
    attrs = op.parse({"momentum": 0.7, "fix_gamma": False})
    _, mean, _, var = bn_ref(*ins, train=True)
    with training():
        out = mx.nd.BatchNorm(*arrs, momentum=0.7, fix_gamma=False)
        op.grad(mx.nd, attrs, arrs, [out], [mx.nd.ones_like(out)])
    tol = 1e-3 if dtype == np.float16 else 1e-6
    m = f32(0.7)
    np.testing.assert_allclose(arrs[3].asnumpy(), ins[3] * m + mean * (1 - m), rtol=tol, atol=tol)
    np.testing.assert_allclose(arrs[4].asnumpy(), ins[4] * m + var * (1 - m), rtol=tol, atol=tol)
    # not in training (or with global stats): the moving statistics stay
    before = [arrs[3].asnumpy(), arrs[4].asnumpy()]
    for train, ugs in ((False, False), (True, True)):
        with training(train):
            a = op.parse({"use_global_stats": ugs})
            out = mx.nd.BatchNorm(*arrs, use_global_stats=ugs)
            op.grad(mx.nd, a, arrs, [out], [mx.nd.ones_like(out)])
        np.testing.assert_array_equal(arrs[3].asnumpy(), before[0])
        np.testing.assert_array_equal(arrs[4].asnumpy(), before[1])


# ---- BatchNorm gradients -------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis", [((3, 2, 4), 1), ((4, 3), -1), ((2, 3, 2, 2), 2)])
@pytest.mark.parametrize("fix_gamma", [False, True])
@pytest.mark.parametrize("mode", ["train", "global", "predict"])
def test_batchnorm_grad(shape, axis, fix_gamma, mode, rng):
    ins = _bn_inputs(rng, shape, axis)
    kw = {"axis": axis, "fix_gamma": fix_gamma, "use_global_stats": mode == "global"}
    with training(mode != "predict"):
        check_grad("BatchNorm", ins, kw, rng, wrt=[0, 1, 2], rtol=1e-5, atol=1e-7)


def test_batchnorm_v1(rng):
    ins = _bn_inputs(rng, (2, 3, 4, 5), 1, np.float32)
    y, mean, _, var = bn_ref(*ins, fix_gamma=False, train=True)
    with training():
        check_forward("BatchNorm_v1", ins, {"fix_gamma": False, "output_mean_var": True},
                      [y.astype(np.float32), mean.astype(np.float32), var.astype(np.float32)])
    y, mean, _, var = bn_ref(*ins, train=False)
    check_forward("BatchNorm_v1", ins, {"output_mean_var": True},
                  [y.astype(np.float32), mean.astype(np.float32), var.astype(np.float32)])
    for mode in ("train", "predict"):
        with training(mode == "train"):
            check_grad("BatchNorm_v1", _bn_inputs(rng, (3, 2), 1), {"fix_gamma": False}, rng,
                       wrt=[0, 1, 2])
    with pytest.raises(ValueError, match="BatchNorm_v1.*2-D or 4-D"):
        mx.nd.BatchNorm_v1(*[nd(a) for a in _bn_inputs(rng, (2, 3, 4))])


# ---- LayerNorm / InstanceNorm / GroupNorm ----------------------------------------------------
ROW_CASES = [
    ("LayerNorm", (3, 4, 6), (6,), {}),
    ("LayerNorm", (2, 5, 3), (5,), {"axis": 1}),
    ("LayerNorm", (4, 3), (4,), {"axis": 0, "eps": 1e-3}),
    ("LayerNorm", (2, 5, 70), (5,), {"axis": -2}),       # inner size > one 64-column chunk
    ("LayerNorm", (7,), (7,), {}),
    ("InstanceNorm", (2, 3, 5), (3,), {}),
    ("InstanceNorm", (2, 2, 3, 3), (2,), {"eps": 1e-5}),
    ("GroupNorm", (2, 6, 3), (3,), {"num_groups": 3}),
    ("GroupNorm", (2, 4, 2, 2), (2,), {"num_groups": 2}),
    ("GroupNorm", (3, 2, 4), (1,), {"eps": 1e-3}),
]


@pytest.mark.parametrize("op,shape,pshape,kw", ROW_CASES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_row_norm_forward(op, shape, pshape, kw, dtype, rng):
    x = (rng.standard_normal(shape) * 1.5 + 0.3).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, pshape).astype(dtype)
    beta = rng.standard_normal(pshape).astype(dtype)
    y, m, s = row_ref(op, x, gamma, beta, **kw)
    check_forward(op, [x, gamma, beta], kw, y.astype(dtype))
    if op != "InstanceNorm":
        check_forward(op, [x, gamma, beta], dict(kw, output_mean_var=True),
                      [y.astype(dtype), m.astype(dtype), s.astype(dtype)])


@pytest.mark.parametrize("op,shape,pshape,kw", [c for c in ROW_CASES if c[1] != (2, 5, 70)])
def test_row_norm_grad(op, shape, pshape, kw, rng):
    ins = [rng.standard_normal(shape) * 1.5 + 0.3, rng.uniform(0.5, 1.5, pshape),
           rng.standard_normal(pshape)]
    check_grad(op, ins, kw, rng)


def _row_grad_ref(op, x, gamma, dy, **kw):
    """Analytic float64 gradients (dx, dgamma, dbeta) of the row norms."""
    if op == "LayerNorm":
        ax = kw.get("axis", -1) % x.ndim
        eps = f32(kw.get("eps", 1e-5))
        m = x.mean(axis=ax, keepdims=True)
        inv = 1 / np.sqrt(x.var(axis=ax, keepdims=True) + eps)
        xh = (x - m) * inv
        g = dy * _bc(gamma, x.ndim, ax)
        dx = inv * (g - g.mean(axis=ax, keepdims=True) - xh * (g * xh).mean(axis=ax, keepdims=True))
        red = tuple(i for i in range(x.ndim) if i != ax)
        return dx, (dy * xh).sum(axis=red), dy.sum(axis=red)
    raise NotImplementedError(op)


@pytest.mark.parametrize("shape,axis", [((2, 5, 70), -2), ((3, 300), -1), ((200, 3, 2), 0)])
def test_layernorm_grad_large(shape, axis, rng):
    """Chunked inner columns and the threaded path, against the analytic gradient."""
    x = rng.standard_normal(shape) + 0.5
    c = shape[axis]
    gamma, beta = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    dy = rng.standard_normal(shape)
    dx, dg, db = mx.nd._backward_LayerNorm(nd(dy), nd(x), nd(gamma), axis=axis)
    rdx, rdg, rdb = _row_grad_ref("LayerNorm", x, gamma, dy, axis=axis)
    np.testing.assert_allclose(dx.asnumpy(), rdx, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(dg.asnumpy(), rdg, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(db.asnumpy(), rdb, rtol=1e-9, atol=1e-11)
    y = mx.nd.LayerNorm(nd(x.astype(np.float32)), nd(gamma.astype(np.float32)),
                        nd(beta.astype(np.float32)), axis=axis)
    np.testing.assert_allclose(y.asnumpy(), row_ref("LayerNorm", x, gamma, beta, axis=axis)[0],
                               rtol=1e-4, atol=1e-5)


def test_large_batchnorm_threaded(rng):
    """Big enough for the OpenMP path; float32 against float64 numpy."""
    ins = _bn_inputs(rng, (16, 8, 32, 16), 1, np.float32)
    y, mean, invstd, var = bn_ref(*ins, fix_gamma=False, train=True)
    arrs = [nd(a) for a in ins]
    with training():
        out = mx.nd.BatchNorm(*arrs, fix_gamma=False, output_mean_var=True)
        np.testing.assert_allclose(out[0].asnumpy(), y, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out[2].asnumpy(), invstd, rtol=1e-5)
        dy = rng.standard_normal(ins[0].shape).astype(np.float32)
        dx, dg, db = mx.nd._backward_BatchNorm(nd(dy), *arrs, fix_gamma=False)
    x64, d64 = ins[0].astype(np.float64), dy.astype(np.float64)
    xh = (x64 - _bc(mean, 4, 1)) * _bc(invstd, 4, 1)
    red = (0, 2, 3)
    rdx = _bc(invstd * ins[1], 4, 1) * (d64 - d64.mean(axis=red, keepdims=True)
                                         - xh * (d64 * xh).mean(axis=red, keepdims=True))
    np.testing.assert_allclose(dx.asnumpy(), rdx, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(dg.asnumpy(), (d64 * xh).sum(axis=red), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(db.asnumpy(), d64.sum(axis=red), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(arrs[3].asnumpy(), ins[3] * 0.9 + mean * 0.1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arrs[4].asnumpy(), ins[4] * 0.9 + var * 0.1, rtol=1e-5, atol=1e-6)


# eight-lane sums (csrc/kernels/normalization.h): fewer than 8 elements per sample (plain double
# sums), 49 (six vectors and one left over) and 300 (a 256-element block, then 44)
@pytest.mark.parametrize("dtype,tol", [(np.float16, 4e-3), (np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("inner", [5, 49, 300])
def test_batchnorm_train_lanes(dtype, tol, inner, rng):
    """Training forward and backward (dx, dgamma, dbeta, moving statistics) against float64
    numpy; errors bounded relative to each result's largest magnitude (dx, y) or to the sum of
    the magnitudes summed (dgamma, dbeta)."""
    ins = _bn_inputs(rng, (3, 4, inner), 1, dtype)
    y, mean, invstd, var = bn_ref(*ins, fix_gamma=False, train=True)
    dy = rng.standard_normal(ins[0].shape).astype(dtype)
    arrs = [nd(a) for a in ins]
    with training():
        out = mx.nd.BatchNorm(*arrs, fix_gamma=False)
        dx, dg, db = mx.nd._backward_BatchNorm(nd(dy), *arrs, fix_gamma=False)
    x64, d64 = ins[0].astype(np.float64), dy.astype(np.float64)
    xh = (x64 - _bc(mean, 3, 1)) * _bc(invstd, 3, 1)
    red = (0, 2)
    rdx = _bc(invstd * ins[1], 3, 1) * (d64 - d64.mean(axis=red, keepdims=True)
                                         - xh * (d64 * xh).mean(axis=red, keepdims=True))
    assert np.abs(out.asnumpy() - y).max() <= tol * np.abs(y).max()
    assert np.abs(dx.asnumpy() - rdx).max() <= tol * np.abs(rdx).max()
    assert np.all(np.abs(dg.asnumpy() - (d64 * xh).sum(axis=red))
                  <= tol * np.abs(d64 * xh).sum(axis=red))
    assert np.all(np.abs(db.asnumpy() - d64.sum(axis=red)) <= tol * np.abs(d64).sum(axis=red))
    m = f32(0.9)
    np.testing.assert_allclose(arrs[3].asnumpy(), ins[3] * m + mean * (1 - m), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(arrs[4].asnumpy(), ins[4] * m + var * (1 - m), rtol=tol, atol=tol)


def test_row_backward_ops_and_infer_inputs(rng):
    for op, shape, pshape, kw in ROW_CASES:
        o = registry.get(op)
        assert o.infer_inputs(o.parse(kw), [shape, None, None]) == [shape, pshape, pshape]
    x = rng.standard_normal((2, 6, 3))
    dy = rng.standard_normal((2, 6, 3))
    for op, gshape in (("InstanceNorm", (6,)), ("GroupNorm", (3,))):
        kw = {"num_groups": 3} if op == "GroupNorm" else {}
        gamma = rng.uniform(0.5, 1.5, gshape)
        res = getattr(mx.nd, "_backward_" + op)(nd(dy), nd(x), nd(gamma), **kw)
        grads = registry.get(op).grad(mx.nd, registry.get(op).parse(kw),
                                      [nd(x), nd(gamma), nd(gamma)], [None], [nd(dy)])
        for a, b in zip(res, grads):
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


# ---- errors ----------------------------------------------------------------------------------
def test_errors(rng):
    x = nd(rng.standard_normal((2, 3, 4)).astype(np.float32))
    c3 = nd(np.ones(3, np.float32))
    c4 = nd(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="BatchNorm.*axis 3"):
        mx.nd.BatchNorm(x, c3, c3, c3, c3, axis=3)
    with pytest.raises(ValueError, match="BatchNorm.*gamma.*shape"):
        mx.nd.BatchNorm(x, c4, c3, c3, c3)
    with pytest.raises(ValueError, match="BatchNorm.*moving_var.*dtype"):
        mx.nd.BatchNorm(x, c3, c3, c3, nd(np.ones(3)))
    with pytest.raises(ValueError, match="BatchNorm.*gamma.*float32"):
        h3 = nd(np.ones(3, np.float16))
        mx.nd.BatchNorm(x.astype("float16"), h3, h3, h3, h3)
    with pytest.raises(ValueError, match="BatchNorm.*float16, float32 or float64"):
        i3 = nd(np.ones(3, np.int32))
        mx.nd.BatchNorm(x.astype("int32"), i3, i3, i3, i3)
    with pytest.raises(ValueError, match="LayerNorm.*axis"):
        mx.nd.LayerNorm(x, c4, c4, axis=-4)
    with pytest.raises(ValueError, match="LayerNorm.*beta.*shape"):
        mx.nd.LayerNorm(x, c4, c3)
    with pytest.raises(ValueError, match="InstanceNorm.*at least 3"):
        mx.nd.InstanceNorm(nd(np.ones((2, 3), np.float32)), c3, c3)
    with pytest.raises(ValueError, match="GroupNorm.*num_groups=2"):
        mx.nd.GroupNorm(x, c3, c3, num_groups=2)
    with pytest.raises(ValueError, match="GroupNorm.*gamma.*shape"):
        mx.nd.GroupNorm(x, c3, c3, num_groups=1)
    with pytest.raises(ValueError, match="_backward_LayerNorm.*output gradient"):
        mx.nd._backward_LayerNorm(nd(np.ones((2, 3), np.float32)), x, c4)
    with pytest.raises(ValueError, match="_backward_BatchNorm.*output gradient"):
        mx.nd._backward_BatchNorm(x.astype("float64"), x, c3, c3, c3, c3)


# ---- golden values from MXNet 1.9.1 ------------------------------------------------------------
def _golden():
    data = np.load(GOLDEN)
    return data, json.loads(str(data["cases"]))


def _gtol(dtype):
    return {np.dtype(np.float16): (2e-2, 2e-2), np.dtype(np.float32): (2e-4, 2e-5),
            np.dtype(np.float64): (1e-9, 1e-11)}[np.dtype(dtype)]


@pytest.mark.parametrize("case", [c["name"] for c in _golden()[1]])
def test_golden_mxnet(case):
    data, cases = _golden()
    spec = next(c for c in cases if c["name"] == case)
    op = registry.get(spec["op"])
    n_in = len(op.inputs)
    ins = [data[f"{case}/in{i}"] for i in range(n_in)]
    arrs = [nd(a) for a in ins]
    train = spec["mode"] == "train"
    rtol, atol = _gtol(ins[0].dtype)
    with training(train):
        out = getattr(mx.nd, spec["op"])(*arrs, **spec["kwargs"])
        outs = out if isinstance(out, list) else [out]
        assert len(outs) == spec["nout"]
        for i, o in enumerate(outs):
            exp = data[f"{case}/out{i}"]
            assert o.shape == exp.shape and o.dtype == exp.dtype, (case, i)
            np.testing.assert_allclose(o.asnumpy().astype(np.float64), exp.astype(np.float64),
                                       rtol=rtol, atol=atol, err_msg=f"{case} out{i}")
        if f"{case}/mm_fwd" in data:
            np.testing.assert_array_equal(arrs[3].asnumpy(), data[f"{case}/mm_fwd"])
            np.testing.assert_array_equal(arrs[4].asnumpy(), data[f"{case}/mv_fwd"])
        if not spec.get("has_grad", True):
            return
        heads = [nd(data[f"{case}/head"])] + [mx.nd.zeros_like(o) for o in outs[1:]]
        grads = op.grad(mx.nd, op.parse(spec["kwargs"]), arrs, outs, heads)
    for i in range(3):
        exp = data[f"{case}/grad{i}"]
        g = grads[i].asnumpy()
        assert g.dtype == exp.dtype, (case, i)
        # float16 gradients of the data lose more: MXNet accumulates them in float16 too
        r, a = (5e-2, 5e-2) if exp.dtype == np.float16 else (rtol * 5, atol * 5)
        np.testing.assert_allclose(g.astype(np.float64), exp.astype(np.float64), rtol=r, atol=a,
                                   err_msg=f"{case} grad{i}")
    if f"{case}/mm_bwd" in data:
        np.testing.assert_allclose(arrs[3].asnumpy(), data[f"{case}/mm_bwd"], rtol=rtol * 5,
                                   atol=atol * 5, err_msg=f"{case} moving_mean")
        np.testing.assert_allclose(arrs[4].asnumpy(), data[f"{case}/mv_bwd"], rtol=rtol * 5,
                                   atol=atol * 5, err_msg=f"{case} moving_var")


def test_autograd_updates_moving_stats_in_backward(rng):
    """Under autograd as in MXNet 1.9.1: the training forward leaves the moving statistics, the
    backward updates them; gradients reach data, gamma and beta."""
    ins = _bn_inputs(rng, (4, 3, 5), 1, np.float32)
    x, gamma, beta, mm, mv = arrs = [nd(a) for a in ins]
    for a in (x, gamma, beta):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
    np.testing.assert_array_equal(mm.asnumpy(), ins[3])
    y.backward(nd(np.ones(y.shape, np.float32)))
    _, mean, _, var = bn_ref(*ins, fix_gamma=False, train=True)
    m = f32(0.9)
    np.testing.assert_allclose(mm.asnumpy(), ins[3] * m + mean * (1 - m), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv.asnumpy(), ins[4] * m + var * (1 - m), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(beta.grad.asnumpy(), np.full(3, 20.0), rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 0, atol=1e-5)     # d(sum y)/dx = 0 in training
    assert arrs[3] is mm


@pytest.mark.parametrize("op,bwd,shape,pshape,kw", [
    ("InstanceNorm", "_backward_InstanceNorm", (2, 3, 4), (3,), {"eps": 1e-3}),
    ("GroupNorm", "_backward_GroupNorm", (2, 4, 3), (2,), {"num_groups": 2, "eps": 1e-5}),
])
def test_backward_ops_called_directly_match_autograd(op, bwd, shape, pshape, kw, rng):
    """`_backward_InstanceNorm` / `_backward_GroupNorm` as public ops (MXNet's names) give what
    autograd gives for the forward op."""
    x = mx.nd.array(rng.standard_normal(shape), dtype=np.float64)
    gamma = mx.nd.array(rng.uniform(0.5, 1.5, pshape), dtype=np.float64)
    beta = mx.nd.array(rng.standard_normal(pshape), dtype=np.float64)
    og = mx.nd.array(rng.standard_normal(shape), dtype=np.float64)
    for a in (x, gamma, beta):
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(x, gamma, beta, **kw)
    y.backward(og)
    dx, dg, db = getattr(mx.nd, bwd)(og, x.detach(), gamma.detach(), **kw)
    for got, ref in ((dx, x.grad), (dg, gamma.grad), (db, beta.grad)):
        np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-12, atol=1e-12)


def test_backward_batchnorm_v1_updates_moving_stats_in_training(rng):
    """`_backward_BatchNorm_v1` (MXNet's name) returns the input gradients and, in training,
    moves the moving statistics towards the batch's (MXNet 1.9.1 updates them in the backward)."""
    from mxc._core import modes
    x = rng.standard_normal((4, 3)) * 2 + 1
    ins = [mx.nd.array(a, dtype=np.float64) for a in
           (x, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3))]
    og = mx.nd.array(rng.standard_normal((4, 3)), dtype=np.float64)
    prev = modes.set_training(True)
    try:
        dx, dg, db = mx.nd._backward_BatchNorm_v1(og, *ins, fix_gamma=False, momentum=0.9)
        mm = ins[3].asnumpy()
    finally:
        modes.set_training(prev)
    np.testing.assert_allclose(mm, 0.1 * x.mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(db.asnumpy(), og.asnumpy().sum(axis=0), rtol=1e-12)

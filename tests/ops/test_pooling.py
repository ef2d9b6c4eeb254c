"""Pooling: forward against a direct-loop numpy reference of MXNet's rules (max/avg/sum/lp,
valid/full/same, count_include_pad, global pooling, channels-last layouts, 1-D/2-D/3-D),
gradients against central differences, the max tie rule, errors, and MXNet 1.9.1 goldens."""
import math

import numpy as np
import pytest

import mxc as mx
from mxc.ops import registry

from tests._core.test_cuda_fake import fake_lib, run as run_fake  # noqa: F401  (fake driver)

from .oputil import check_forward, check_grad
from .test_convolution import golden_cases, golden_check


def ref_pool(x, kernel=(), stride=(), pad=(), pool_type="max", convention="valid",
             count_include_pad=True, p_value=1, last=False, global_pool=False):
    """MXNet's pool.h semantics, by loops, in float64."""
    x = x.astype(np.float64)
    if last:
        x = np.moveaxis(x, -1, 1)
    sp = x.shape[2:]
    nsp = len(sp)
    if global_pool:
        kernel, stride, pad = sp, (1,) * nsp, (0,) * nsp
    stride = stride or (1,) * nsp
    pad = pad or (0,) * nsp
    osz = []
    for i in range(nsp):
        span = sp[i] + 2 * pad[i] - kernel[i]
        if global_pool:
            osz.append(1)
        elif convention == "valid":
            osz.append(1 + span // stride[i])
        elif convention == "full":
            osz.append(1 + math.ceil(span / stride[i]))
        else:
            osz.append(math.ceil((sp[i] + 2 * pad[i]) / stride[i]))
    y = np.zeros(x.shape[:2] + tuple(osz))
    for o in np.ndindex(*osz):
        lo, hi, padded = [], [], 1
        for i in range(nsp):
            st = o[i] * stride[i] - pad[i]
            en = min(st + kernel[i], sp[i] + pad[i])
            padded *= en - st
            lo.append(max(st, 0))
            hi.append(min(en, sp[i]))
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
        win = win.reshape(x.shape[:2] + (-1,))
        real = win.shape[-1]
        if pool_type == "max":
            v = win.max(axis=-1) if real else np.full(x.shape[:2], np.finfo(np.float32).min)
        elif pool_type == "avg":
            v = win.sum(axis=-1) / (padded if count_include_pad else real)
        elif pool_type == "sum":
            v = win.sum(axis=-1)
        else:
            v = (win ** p_value).sum(axis=-1) ** (1.0 / p_value)
        y[(slice(None), slice(None)) + o] = v
    return np.moveaxis(y, 1, -1) if last else y


CASES = [
    # shape, params
    ((2, 3, 6, 6), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 3, 7, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ((2, 3, 7, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((2, 3, 7, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((1, 2, 7, 7), dict(kernel=(3, 3), stride=(2, 2), pool_type="avg", pooling_convention="full")),
    ((1, 2, 6, 7), dict(kernel=(2, 3), stride=(2, 2), pooling_convention="full")),
    ((2, 3, 6, 5), dict(kernel=(2, 2), stride=(1, 2), pool_type="sum")),
    ((2, 3, 6, 5), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
    ((2, 3, 6, 5), dict(kernel=(3, 2), stride=(2, 2), pool_type="lp", p_value=3)),
    ((2, 3, 6, 5), dict(kernel=(2, 2), stride=(2, 1), pool_type="lp", p_value=1)),
    ((2, 4, 5, 6), dict(global_pool=True, pool_type="avg")),
    ((2, 4, 5, 6), dict(kernel=(1, 1), global_pool=True, pool_type="max")),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pad=(1,))),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pool_type="avg", pooling_convention="full")),
    ((2, 3, 9), dict(kernel=(2,), stride=(2,), pooling_convention="same")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 2, 3), stride=(2, 1, 2), pool_type="avg")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 3, 2), stride=(1, 2, 2), pad=(1, 1, 0))),
    ((2, 6, 5, 3), dict(kernel=(3, 2), stride=(2, 2), layout="NHWC")),
    ((2, 6, 5, 3), dict(kernel=(3, 2), stride=(2, 1), pad=(1, 0), pool_type="avg", layout="NHWC")),
    ((2, 7, 3), dict(kernel=(3,), stride=(2,), pool_type="sum", layout="NWC")),
    ((1, 3, 4, 5, 2), dict(kernel=(2, 2, 2), pool_type="lp", p_value=2, layout="NDHWC")),
    ((2, 5, 4, 3), dict(global_pool=True, pool_type="sum", layout="NHWC")),
    # 'full': the last row and column of 2x2 windows pass the input's end (no padding)
    ((1, 2, 7, 19), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
]


def _ref(x, kw):
    return ref_pool(x, kernel=kw.get("kernel", ()), stride=kw.get("stride", ()),
                    pad=kw.get("pad", ()), pool_type=kw.get("pool_type", "max"),
                    convention=kw.get("pooling_convention", "valid"),
                    count_include_pad=kw.get("count_include_pad", True),
                    p_value=kw.get("p_value", 1), last=kw.get("layout", "NC")[1] != "C",
                    global_pool=kw.get("global_pool", False))


def _data(rng, shape, kw, dtype):
    x = rng.standard_normal(shape)
    if kw.get("pool_type") == "lp" and kw.get("p_value") == 3:
        x = np.abs(x) + 0.5
    return x.astype(dtype)


@pytest.mark.parametrize("shape,kw", CASES, ids=[f"{i}" for i in range(len(CASES))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(shape, kw, dtype, rng):
    x = _data(rng, shape, kw, dtype)
    check_forward("Pooling", [x], kw, _ref(x, kw).astype(dtype))


@pytest.mark.parametrize("shape,kw", CASES[:4] + CASES[6:9] + CASES[10:11] + CASES[15:16] +
                         CASES[18:19], ids=lambda v: str(v))
def test_float16(shape, kw, rng):
    x = _data(rng, shape, kw, np.float16)
    got = mx.nd.Pooling(mx.nd.array(x, dtype=np.float16), **kw)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), _ref(x, kw), rtol=5e-3,
                               atol=5e-3)


@pytest.mark.parametrize("shape,kw", [c for i, c in enumerate(CASES) if i not in (11,)],
                         ids=[f"{i}" for i in range(len(CASES)) if i != 11])
def test_grad(shape, kw, rng):
    # distinct values: central differences cannot move the position of a window's maximum
    x = _data(rng, shape, kw, np.float64)
    if kw.get("pool_type", "max") == "max":
        x = rng.permutation(x.size).reshape(shape) * 0.01 + 0.1
    check_grad("Pooling", [x], kw, rng, eps=1e-6)


def test_max_ties_route_to_the_first_maximum():
    x = np.array([[[[1, 3, 3], [3, 2, 3], [0, 3, 1]]]], np.float32)
    op = registry.get("Pooling")
    kw = dict(kernel=(2, 2), stride=(1, 1))
    xs = [mx.nd.array(x)]
    y = mx.nd.Pooling(xs[0], **kw)
    np.testing.assert_array_equal(y.asnumpy(), [[[[3, 3], [3, 3]]]])
    g = op.grad(mx.nd, op.parse(kw), xs, [y], [mx.nd.ones((1, 1, 2, 2))])[0].asnumpy()
    # windows (0,0), (0,1) pick x[0,1]; window (1,0) picks x[1,0]; window (1,1) picks x[1,2]
    np.testing.assert_array_equal(g, [[[[0, 2, 0], [1, 0, 1], [0, 0, 0]]]])


def _first_max_grad(x, y, dy, k, s, p):
    """Max pooling's data gradient (2-D, float64): each output's gradient goes to the first
    element of its window, in row-major order, that equals the output."""
    dx = np.zeros(x.shape)
    n, c, oh, ow = y.shape
    for idx in np.ndindex(n, c, oh, ow):
        i0, j0 = idx[2] * s[0] - p[0], idx[3] * s[1] - p[1]
        for i in range(max(i0, 0), min(i0 + k[0], x.shape[2])):
            hit = [j for j in range(max(j0, 0), min(j0 + k[1], x.shape[3]))
                   if x[idx[:2] + (i, j)] == y[idx]]
            if hit:
                dx[idx[:2] + (i, hit[0])] += dy[idx]
                break
    return dx


@pytest.mark.parametrize("shape,k,s,p", [((2, 3, 7, 5), (2, 2), (2, 2), (0, 0)),
                                         ((1, 2, 8, 7), (3, 2), (3, 2), (0, 0)),
                                         ((2, 2, 7, 9), (3, 3), (2, 2), (1, 1))],
                         ids=["2x2", "3x2-tiled", "3x3s2p1"])
def test_max_backward_first_maximum_and_untouched_zeros(shape, k, s, p, rng):
    # few distinct values: many ties inside windows; odd sizes leave rows and columns that no
    # window covers, whose gradient must be written as 0 (dx starts as garbage here)
    x = rng.integers(0, 3, shape).astype(np.float32)
    kw = dict(kernel=k, stride=s, pad=p)
    y = mx.nd.Pooling(mx.nd.array(x), **kw)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = mx.nd.full(shape, 7.0)
    mx.nd._backward_Pooling(mx.nd.array(dy), mx.nd.array(x), y, out=dx, **kw)
    want = _first_max_grad(x, y.asnumpy(), dy, k, s, p)
    np.testing.assert_allclose(dx.asnumpy(), want, rtol=1e-6, atol=1e-6)


def test_empty_max_window_gives_lowest():
    # kernel 1 with padding: border windows hold only padding
    x = np.ones((1, 1, 2, 2), np.float32)
    y = mx.nd.Pooling(mx.nd.array(x), kernel=(1, 1), pad=(1, 1)).asnumpy()
    assert y.shape == (1, 1, 4, 4)
    assert y[0, 0, 0, 0] == np.finfo(np.float32).min and y[0, 0, 1, 1] == 1


def test_backward_op_and_alias(rng):
    x = mx.nd.array(rng.standard_normal((2, 3, 4, 4)))
    y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    dx = mx.nd._backward_Pooling(mx.nd.ones_like(y), x, y, kernel=(2, 2), stride=(2, 2),
                                 pool_type="avg")
    np.testing.assert_allclose(dx.asnumpy(), np.full((2, 3, 4, 4), 0.25), rtol=1e-6)
    assert registry.get("_npx_pooling") is registry.get("Pooling")


def test_large_pool_threads(rng):
    x = rng.standard_normal((8, 32, 32, 32)).astype(np.float32)
    y = mx.nd.Pooling(mx.nd.array(x), kernel=(2, 2), stride=(2, 2)).asnumpy()
    np.testing.assert_array_equal(y, x.reshape(8, 32, 16, 2, 16, 2).max(axis=(3, 5)))


def test_errors_name_the_operator():
    x = mx.nd.ones((1, 2, 4, 4))
    with pytest.raises(ValueError, match="Pooling.*kernel size"):
        mx.nd.Pooling(x)
    with pytest.raises(ValueError, match="Pooling.*exceeds input"):
        mx.nd.Pooling(x, kernel=(5, 5))
    with pytest.raises(ValueError, match="Pooling.*p_value"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type="lp")
    with pytest.raises(ValueError, match="Pooling.*p value of 4"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type="lp", p_value=4)
    with pytest.raises(ValueError, match="Pooling.*'same'"):
        mx.nd.Pooling(x, kernel=(2, 2), pooling_convention="same")
    with pytest.raises(ValueError, match="Pooling.*layout"):
        mx.nd.Pooling(x, kernel=(2, 2), layout="NCW")
    with pytest.raises(ValueError, match="Pooling.*3-D"):
        mx.nd.Pooling(mx.nd.ones((2, 4)), kernel=(2,))
    with pytest.raises(ValueError, match="Pooling.*pool_type"):
        mx.nd.Pooling(x, kernel=(2, 2), pool_type="median")
    with pytest.raises(ValueError, match="Pooling.*not supported"):
        mx.nd.Pooling(mx.nd.ones((1, 2, 4, 4), dtype=np.int32), kernel=(2, 2))


@pytest.mark.parametrize("params,inputs,out,head,grads", golden_cases("Pooling"))
def test_golden(params, inputs, out, head, grads):
    golden_check("Pooling", params, inputs, out, head, grads)


def test_extra_stride_and_pad_entries_are_ignored_as_mxnet():
    """MXNet reads the entries a 1-D kernel needs (pad=(0, 0, 0) is accepted)."""
    x = mx.nd.array(np.arange(10, dtype=np.float32).reshape(1, 1, 10))
    y = mx.nd.Pooling(x, kernel=2, stride=2, pad=(0, 0, 0), pool_type="max",
                      pooling_convention="same")
    np.testing.assert_array_equal(y.asnumpy().ravel(), [1, 3, 5, 7, 9])
    with pytest.raises(mx.base.MXNetError):
        mx.nd.Pooling(x, kernel=2, stride=2, pad=1, pool_type="max", pooling_convention="same")


# ---- the max backward from the argmax kept at forward ------------------------------------------
def _argmax_golden():
    import json
    import os
    data = np.load(os.path.join(os.path.dirname(__file__), "..", "data",
                                "pool_argmax_golden.npz"))
    n = len({k.split("/")[0] for k in data.files})
    return [(json.loads(str(data[f"{i}/params"])), data[f"{i}/x"], data[f"{i}/head"],
             data[f"{i}/out"], data[f"{i}/grad"]) for i in range(n)]


@pytest.fixture
def argmax_calls(monkeypatch):
    """How many times the argmax backward ran (the scatter, not the window search): on the CPU
    only, a GPU's backward finds each window's first maximum itself (tests/gpu re-runs these)."""
    op = registry.get("_backward_Pooling_argmax")
    calls = []
    fwd = op.forward

    def counted(a, inputs, outputs):
        calls.append(1)
        fwd(a, inputs, outputs)
    monkeypatch.setattr(op, "forward", counted)
    return calls


def _ON_CPU():
    return mx.context.current_context().device_type == "cpu"


@pytest.mark.parametrize("case", range(len(_argmax_golden())))
def test_autograd_max_backward_from_argmax_equals_mxnet(case, argmax_calls):
    # data full of ties, MXNet 1.9.1's autograd (tests/data/make_pool_argmax_golden.py)
    kw, x, head, out, grad = _argmax_golden()[case]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()}
    xm = mx.nd.array(x)
    xm.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(xm, pool_type="max", **kw)
    y.backward(mx.nd.array(head))
    assert bool(argmax_calls) == _ON_CPU()
    np.testing.assert_array_equal(y.asnumpy(), out)
    np.testing.assert_array_equal(xm.grad.asnumpy(), grad)


ARGMAX_CASES = [((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2))),
                ((2, 3, 9, 7), dict(kernel=(2, 2), stride=(2, 2))),
                ((2, 3, 6, 43), dict(kernel=(2, 2), stride=(2, 2))),     # 8 + 8 + 5 windows
                ((1, 2, 7, 37), dict(kernel=(2, 2), stride=(2, 2), pooling_convention="full")),
                ((1, 2, 9, 10), dict(kernel=(3, 3), stride=(3, 3))),
                ((2, 3, 11, 11), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
                ((1, 2, 12, 12), dict(kernel=(3, 3), stride=(2, 2))),
                ((1, 2, 7, 9), dict(kernel=(3, 3), stride=(3, 2), pad=(2, 1),
                                    pooling_convention="full")),
                ((2, 2, 6, 5), dict(kernel=(1, 1), pad=(1, 1))),
                ((2, 5, 3), dict(kernel=(2,), stride=(1,))),
                ((1, 2, 4, 5, 6), dict(kernel=(2, 2, 3), stride=(2, 1, 2), pad=(1, 0, 1))),
                ((2, 7, 7, 3), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), layout="NHWC"))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape,kw", ARGMAX_CASES, ids=[str(i) for i in range(len(ARGMAX_CASES))])
def test_autograd_max_backward_equals_window_search(shape, kw, dtype, rng, argmax_calls):
    # the scatter from the kept argmax gives exactly what _backward_Pooling's search of every
    # window gives (ties, overlapping windows summed in the same order, empty padded windows)
    x = rng.integers(-2, 2, shape).astype(dtype)
    xm = mx.nd.array(x, dtype=dtype)
    xm.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(xm, pool_type="max", **kw)
    head = mx.nd.array(rng.standard_normal(y.shape), dtype=dtype)
    y.backward(head)
    assert bool(argmax_calls) == _ON_CPU()
    plain = mx.nd.Pooling(xm, pool_type="max", **kw)
    np.testing.assert_array_equal(y.asnumpy(), plain.asnumpy())
    want = mx.nd._backward_Pooling(head, xm, plain, pool_type="max", **kw)
    np.testing.assert_array_equal(xm.grad.asnumpy(), want.asnumpy())


def test_argmax_edge_values(argmax_calls):
    # NaN and -inf never win; an element equal to the lowest finite value does; a window of
    # padding only routes nothing
    low = np.finfo(np.float32).min
    x = np.array([[[[np.nan, 1, -np.inf, -np.inf, 2],
                    [0, 0, -np.inf, low, np.nan],
                    [np.nan, np.nan, 3, 3, -np.inf]]]], np.float32)
    zeros = np.array([[[[-0.0, 0.0, 0.0, -0.0, -1], [0.0, -0.0, -0.0, 0.0, -0.0],
                        [-1, -0.0, 0.0, -2, 0.0]]]], np.float32)      # signed zeros tie
    for xv, kw in [(v, kw) for v in (x, zeros) for kw in (
            dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(2, 2), stride=(1, 1), pad=(1, 1)),
            dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), dict(kernel=(1, 1), pad=(1, 1)))]:
        xm = mx.nd.array(xv)
        xm.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xm, **kw)
        y.backward(mx.nd.ones_like(y) * 2)
        want = mx.nd._backward_Pooling(mx.nd.ones_like(y) * 2, xm, mx.nd.Pooling(xm, **kw), **kw)
        np.testing.assert_array_equal(xm.grad.asnumpy(), want.asnumpy(), err_msg=str(kw))
    assert len(argmax_calls) == (8 if _ON_CPU() else 0)


def _max_2x2_mxnet(x):
    """2x2 stride-2 max pooling by MXNet's loops (src/operator/nn/pool.h): from the lowest
    finite value, each strictly greater element moves the maximum on (NaN never wins; a window
    of -inf and NaN gives the lowest value)."""
    n, c, h, w = x.shape
    win = x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2)
    m = np.full(win.shape[:3] + win.shape[4:5], np.finfo(x.dtype).min, x.dtype)
    for v in (win[:, :, :, 0, :, 0], win[:, :, :, 0, :, 1], win[:, :, :, 1, :, 0],
              win[:, :, :, 1, :, 1]):
        m = np.where(v > m, v, m)
    return m


@pytest.mark.parametrize("record", [False, True])
def test_max_2x2_wide_rows_nan_inf_signed_zeros(record, rng):
    # rows of 8-window blocks and a scalar tail (43 columns: 8 + 8 + 5 windows), values drawn
    # from NaN, infinities, signed zeros, the lowest finite value and ties
    low = np.finfo(np.float32).min
    vals = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, low, 1, 1, 2], np.float32)
    x = rng.choice(vals, (2, 3, 7, 43)).astype(np.float32)
    kw = dict(kernel=(2, 2), stride=(2, 2))
    xm = mx.nd.array(x)
    xm.attach_grad()
    with mx.autograd.record(record):
        y = mx.nd.Pooling(xm, **kw)
    want = _max_2x2_mxnet(x)
    np.testing.assert_array_equal(y.asnumpy(), want)
    # signed zeros: the first of a tie is kept, so its sign too
    np.testing.assert_array_equal(np.signbit(y.asnumpy()), np.signbit(want))
    dy = rng.standard_normal(y.shape).astype(np.float32)
    if record:
        y.backward(mx.nd.array(dy))
        got = xm.grad.asnumpy()
    else:
        got = mx.nd._backward_Pooling(mx.nd.array(dy), xm, y, **kw).asnumpy()
    np.testing.assert_array_equal(got, _first_max_grad(x, want, dy, (2, 2), (2, 2), (0, 0)))


def test_argmax_kept_only_for_a_gradient():
    # outside recording max pooling has one output; avg pooling never keeps an argmax
    x = mx.nd.ones((1, 1, 4, 4))
    op = registry.get("Pooling")
    assert op.n_out(op.parse(dict(kernel=(2, 2)))) == 1
    assert op.train_attrs(op.parse(dict(kernel=(2, 2), pool_type="avg"))).get(
        "_keep_argmax") is None
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=(2, 2))
    assert isinstance(y, mx.nd.NDArray) and y.shape == (1, 1, 3, 3)
    # a recorded graph turned into a symbol has no trace of the run's setting
    sym = mx.autograd.get_symbol(y)
    assert "_keep_argmax" not in sym.tojson()


def test_argmax_backward_errors():
    x = mx.nd.ones((1, 1, 4, 4))
    with pytest.raises(mx.base.MXNetError, match="_backward_Pooling_argmax"):
        mx.nd._backward_Pooling_argmax(mx.nd.ones((1, 1, 2, 2)), mx.nd.zeros((1, 1, 2, 2)),
                                       x, kernel=(2, 2), stride=(2, 2))   # float argmax
    with pytest.raises(mx.base.MXNetError, match="_backward_Pooling_argmax"):
        mx.nd._backward_Pooling_argmax(mx.nd.ones((1, 1, 2, 2)),
                                       mx.nd.zeros((1, 1, 3, 3), dtype="int32"), x,
                                       kernel=(2, 2), stride=(2, 2))      # wrong shape


def test_bound_executor_with_gradient_uses_the_argmax(rng, argmax_calls):
    data = mx.sym.Variable("data")
    net = mx.sym.Pooling(data, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    x = rng.integers(0, 3, (2, 3, 9, 9)).astype(np.float32)
    ex = net.simple_bind(mx.cpu(), data=x.shape)
    ex.arg_dict["data"][:] = x
    ex.forward(is_train=True)
    head = rng.standard_normal(ex.outputs[0].shape).astype(np.float32)
    ex.backward(mx.nd.array(head))
    assert argmax_calls
    assert len(net.list_outputs()) == 1
    y = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    want = mx.nd._backward_Pooling(mx.nd.array(head), mx.nd.array(x), y, kernel=(3, 3),
                                   stride=(2, 2), pad=(1, 1))
    np.testing.assert_array_equal(ex.grad_dict["data"].asnumpy(), want.asnumpy())


def test_gpu_max_pooling_gradient_searches_the_windows(fake_lib):  # noqa: F811
    # the GPU kernels keep no argmax: under autograd the hidden output stays unwritten and the
    # gradient is _backward_Pooling's (argmax + scatter launches of pooling.cu)
    out = run_fake('''
        from mxc.ops.cuda import loader
        launched = []
        def kernel(family, name, dev=0):
            launched.append(name)
            return kfn("fake_noop")
        loader.kernel = kernel
        x = gpu_array(np.ones((1, 2, 6, 6), np.float32))
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2))
        y.backward()
        mx.nd.waitall()
        assert "mxc_pool_bwd<float>" in launched and "mxc_pool_argmax<float>" in launched, launched
        print("ok")
    ''', fake_lib)
    assert out.strip().endswith("ok")

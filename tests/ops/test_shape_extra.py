"""Extra shape operators: slice_like, Crop, Pad/pad, diag, space_to_depth, depth_to_space,
shape_array, size_array, zeros_like, ones_like, add_n/ElementWiseSum, reshape_like. Forward
against numpy, gradients against central differences (through autograd for the composites),
MXNet 1.9.1 golden cases, errors naming the operator."""
import numpy as np
import pytest

import mxc as mx
from mxc.ndarray.register import invoke
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_gather import golden_cases, replay_golden

_OPS = ("slice_like", "Crop", "Pad", "pad", "diag", "space_to_depth", "depth_to_space",
        "shape_array", "size_array", "zeros_like", "ones_like", "add_n", "ElementWiseSum",
        "reshape_like")


@pytest.mark.parametrize("n,m", golden_cases(_OPS))
def test_golden(n, m):
    replay_golden(n, m)


def autograd_check(name, inputs, kwargs, rng, wrt=(0,), eps=1e-6):
    """Gradient through mx.autograd (composites have no grad of their own) vs central differences."""
    op = registry.get(name)
    kw = dict(kwargs)
    if op.variadic:
        kw.setdefault(op.variadic, len(inputs))

    def f(xs):
        return invoke(op, [mx.nd.array(x, dtype=x.dtype) for x in xs], dict(kw)).asnumpy()

    arrs = [mx.nd.array(x, dtype=x.dtype) for x in inputs]
    for k in wrt:
        arrs[k].attach_grad()
    with mx.autograd.record():
        y = invoke(op, list(arrs), dict(kw))
    head = rng.standard_normal(y.shape)
    y.backward(mx.nd.array(head, dtype=np.float64))
    for k in wrt:
        num = np.zeros_like(inputs[k])
        for i in range(inputs[k].size):
            xp = [x.copy() for x in inputs]
            xm = [x.copy() for x in inputs]
            xp[k].reshape(-1)[i] += eps
            xm[k].reshape(-1)[i] -= eps
            num.reshape(-1)[i] = (np.sum(f(xp) * head) - np.sum(f(xm) * head)) / (2 * eps)
        np.testing.assert_allclose(arrs[k].grad.asnumpy(), num, rtol=1e-5, atol=1e-7, err_msg=name)


# ---- slice_like / Crop ---------------------------------------------------------------------------
def test_slice_like(rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    like = np.zeros((2, 3, 4), np.float32)
    check_forward("slice_like", [x, like], {}, x[:2, :3, :4])
    check_forward("slice_like", [x, like], {"axes": (1,)}, x[:, :3])
    check_forward("slice_like", [x, like[:, :, :1]], {"axes": (0, -1)}, x[:2, :, :1])
    autograd_check("slice_like", [x.astype(np.float64), like.astype(np.float64)], {"axes": (0, 2)}, rng)
    with pytest.raises(ValueError, match="slice_like"):
        mx.nd.slice_like(mx.nd.array(x), mx.nd.zeros((4, 4, 4)))
    with pytest.raises(ValueError, match="slice_like"):
        mx.nd.slice_like(mx.nd.array(x), mx.nd.zeros((2, 2)))


def test_crop(rng):
    x = rng.standard_normal((2, 3, 6, 7))
    check_forward("Crop", [x], {"h_w": (3, 4), "offset": (2, 1)}, x[:, :, 2:5, 1:5])
    check_forward("Crop", [x, np.zeros((1, 1, 4, 3))], {"center_crop": True}, x[:, :, 1:5, 2:5])
    autograd_check("Crop", [x], {"h_w": (3, 4), "offset": (2, 1)}, rng)
    with pytest.raises(ValueError, match="Crop"):
        mx.nd.Crop(mx.nd.array(x), h_w=(7, 1))


# ---- Pad -----------------------------------------------------------------------------------------
_NP_MODE = {"constant": "constant", "edge": "edge", "reflect": "reflect"}


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
def test_pad_forward(mode, dtype, rng):
    for shape, pw in [((2, 3, 4, 5), (0, 0, 0, 0, 1, 3, 2, 0)),
                      ((1, 2, 3, 4, 5), (0, 0, 0, 0, 2, 1, 0, 3, 4, 2))]:
        x = rng.integers(0, 50, size=shape).astype(dtype)
        pairs = list(zip(pw[::2], pw[1::2]))
        kw = {"constant_values": 7} if mode == "constant" else {}
        exp = np.pad(x, pairs, mode=_NP_MODE[mode], **kw)
        check_forward("Pad", [x], {"mode": mode, "pad_width": pw, "constant_value": 7}, exp)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_grad(mode, rng):
    x = rng.standard_normal((1, 2, 3, 4))
    check_grad("pad", [x], {"mode": mode, "pad_width": (0, 0, 0, 0, 2, 1, 3, 2), "constant_value": 2},
               rng)
    g = rng.standard_normal((1, 2, 6, 9))
    check_grad("_backward_Pad", [g, x], {"mode": mode, "pad_width": (0, 0, 0, 0, 2, 1, 3, 2)}, rng,
               wrt=[0])


def test_pad_large_threads(rng):
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    pw = (0, 0, 0, 0, 2, 2, 3, 3)
    check_forward("Pad", [x], {"mode": "reflect", "pad_width": pw},
                  np.pad(x, list(zip(pw[::2], pw[1::2])), mode="reflect"))


def test_pad_errors():
    x = mx.nd.ones((1, 1, 2, 2))
    with pytest.raises(ValueError, match="Pad.*4-D or 5-D"):
        mx.nd.pad(mx.nd.ones((2, 2)), mode="constant", pad_width=(1, 1, 1, 1))
    with pytest.raises(ValueError, match="Pad.*first two axes"):
        mx.nd.pad(x, mode="constant", pad_width=(1, 0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="Pad.*reflect"):
        mx.nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 2, 0, 0, 0))
    with pytest.raises(ValueError, match="Pad.*mode"):
        mx.nd.pad(x, mode="wrap", pad_width=(0,) * 8)


# ---- diag --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
def test_diag(dtype, rng):
    x = rng.integers(0, 50, size=(4, 5)).astype(dtype)
    for k in (-3, -1, 0, 2, 4):
        check_forward("diag", [x], {"k": k}, np.diag(x, k))
    v = rng.integers(0, 50, size=(3,)).astype(dtype)
    for k in (-2, 0, 1):
        check_forward("diag", [v], {"k": k}, np.diag(v, k))
    t = rng.integers(0, 50, size=(3, 4, 5)).astype(dtype)
    for k, a1, a2 in [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (2, -1, -3)]:
        check_forward("diag", [t], {"k": k, "axis1": a1, "axis2": a2}, np.diagonal(t, k, a1, a2))


def test_diag_grad_and_errors(rng):
    check_grad("diag", [rng.standard_normal((3, 4))], {"k": 1}, rng)
    check_grad("diag", [rng.standard_normal((3,))], {"k": -1}, rng)
    check_grad("diag", [rng.standard_normal((2, 3, 4))], {"axis1": 2, "axis2": 0}, rng)
    check_grad("_backward_diag", [rng.standard_normal((3, 2)), rng.standard_normal((2, 3, 4))],
               {"axis1": 2, "axis2": 0}, rng, wrt=[0])
    with pytest.raises(ValueError, match="diag.*same axis"):
        mx.nd.diag(mx.nd.ones((2, 2)), axis1=1, axis2=-1)
    with pytest.raises(ValueError, match="diag.*does not exist"):
        mx.nd.diag(mx.nd.ones((2, 2)), k=3)


# ---- space_to_depth / depth_to_space -------------------------------------------------------------
def _np_s2d(x, b):
    N, C, H, W = x.shape
    y = x.reshape(N, C, H // b, b, W // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(N, C * b * b, H // b, W // b)


def _np_d2s(x, b):
    N, C, H, W = x.shape
    y = x.reshape(N, b, b, C // (b * b), H, W).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(N, C // (b * b), H * b, W * b)


def test_space_depth(rng):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    check_forward("space_to_depth", [x], {"block_size": 2}, _np_s2d(x, 2))
    y = rng.standard_normal((2, 18, 2, 3)).astype(np.float32)
    check_forward("depth_to_space", [y], {"block_size": 3}, _np_d2s(y, 3))
    np.testing.assert_array_equal(
        mx.nd.depth_to_space(mx.nd.space_to_depth(mx.nd.array(x), block_size=2), block_size=2).asnumpy(), x)
    autograd_check("space_to_depth", [x.astype(np.float64)], {"block_size": 2}, rng)
    autograd_check("depth_to_space", [y.astype(np.float64)], {"block_size": 3}, rng)
    with pytest.raises(ValueError, match="space_to_depth"):
        mx.nd.space_to_depth(mx.nd.array(x), block_size=4)
    with pytest.raises(ValueError, match="depth_to_space"):
        mx.nd.depth_to_space(mx.nd.array(x), block_size=2)


# ---- shape_array / size_array / zeros_like / ones_like -----------------------------------------
def test_shape_size_arrays():
    x = np.zeros((2, 3, 4), np.float16)
    check_forward("shape_array", [x], {}, np.array([2, 3, 4], np.int64))
    check_forward("size_array", [x], {}, np.array([24], np.int64))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.uint8])
def test_zeros_ones_like_ops(dtype, rng):
    x = rng.integers(1, 5, size=(2, 3)).astype(dtype)
    for name, exp in (("zeros_like", np.zeros_like(x)), ("ones_like", np.ones_like(x))):
        got = invoke(registry.get(name), [mx.nd.array(x, dtype=dtype)], {})
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.asnumpy(), exp)
        g = registry.get(name).grad(mx.nd, {}, [mx.nd.array(x)], [got], [got])
        assert not g[0].asnumpy().any()


# ---- add_n -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int8])
def test_add_n(dtype, rng):
    xs = [rng.integers(-5, 5, size=(3, 7)).astype(dtype) for _ in range(4)]
    exp = sum(x.astype(np.float64) for x in xs).astype(dtype)
    check_forward("add_n", xs, {}, exp)
    check_forward("ElementWiseSum", xs[:1], {}, xs[0])
    np.testing.assert_array_equal(mx.nd.add_n(*[mx.nd.array(x, dtype=dtype) for x in xs]).asnumpy(), exp)


def test_add_n_large_and_grad(rng):
    xs = [rng.standard_normal(70000).astype(np.float32) for _ in range(3)]
    check_forward("add_n", xs, {}, (xs[0].astype(np.float64) + xs[1] + xs[2]).astype(np.float32))
    check_grad("add_n", [rng.standard_normal((2, 3)) for _ in range(3)], {}, rng)
    with pytest.raises(ValueError, match="add_n"):
        mx.nd.add_n(mx.nd.ones((2,)), mx.nd.ones((3,)))


# ---- reshape_like ------------------------------------------------------------------------------
def test_reshape_like(rng):
    x = rng.standard_normal((2, 3, 4))
    check_forward("reshape_like", [x, np.zeros((4, 6))], {}, x.reshape(4, 6))
    check_forward("reshape_like", [x, np.zeros((5, 12, 7))], {"lhs_begin": 1, "rhs_begin": 1, "rhs_end": 2},
                  x.reshape(2, 12))
    check_forward("reshape_like", [x, np.zeros((3, 2))], {"lhs_begin": 0, "lhs_end": 2, "rhs_begin": -2},
                  x.reshape(3, 2, 4))
    check_grad("reshape_like", [x, np.zeros((4, 6))], {}, rng, wrt=[0])
    with pytest.raises(ValueError, match="reshape_like"):
        mx.nd.reshape_like(mx.nd.array(x), mx.nd.zeros((5,)))


def test_depth_space_bad_shapes_raise_mxnet_error():
    with pytest.raises(mx.base.MXNetError):
        mx.nd.depth_to_space(mx.nd.ones((1, 3, 2, 2)), block_size=2)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.depth_to_space(mx.nd.ones((1, 4, 0, 3)), block_size=2)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.space_to_depth(mx.nd.ones((1, 1, 3, 4)), block_size=2)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.space_to_depth(mx.nd.ones((1, 0, 4, 4)), block_size=2)

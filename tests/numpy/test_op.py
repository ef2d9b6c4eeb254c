"""mx.np functions against numpy: values, dtypes, shapes, zero-dim and zero-size inputs."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np


def _chk(got, want, rtol=1e-5, atol=1e-6, dtype=True):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _chk(g, w, rtol, atol, dtype)
        return
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_allclose(got.asnumpy().astype("float64"), want.astype("float64"),
                                rtol=rtol, atol=atol)


UNARY = ["abs", "absolute", "negative", "sign", "exp", "expm1", "log", "log2", "log10", "log1p",
         "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos",
         "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh", "floor", "ceil", "trunc",
         "rint", "fix", "degrees", "radians", "isnan", "isinf", "isfinite", "logical_not"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(3, 4), (), (0, 2)])
def test_unary(rng, name, shape):
    a = rng.uniform(0.1, 0.9, shape).astype("float32")
    if name == "rint":
        a = a * 10 - 5
    _chk(getattr(np, name)(np.array(a)), getattr(onp, name)(a), rtol=2e-5, atol=1e-6)


def test_unary_int_inputs():
    a = onp.array([1, 4, 9], dtype="int32")
    assert np.sqrt(np.array(a)).dtype == onp.float32           # MXNet default float
    _chk(np.sqrt(np.array(a)), onp.sqrt(a).astype("float32"))
    _chk(np.abs(np.array(-a)), onp.abs(-a))
    _chk(np.square(np.array(a)), onp.square(a))


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "mod", "power", "maximum",
          "minimum", "hypot", "arctan2", "copysign", "equal", "not_equal", "greater", "less",
          "greater_equal", "less_equal", "logical_and", "logical_or", "logical_xor",
          "floor_divide", "fmod", "fmax", "fmin", "logaddexp"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2,)), ((0, 3), (3,))])
def test_binary(rng, name, shapes):
    a = rng.uniform(-2, 2, shapes[0]).astype("float32")
    b = rng.uniform(0.5, 2, shapes[1]).astype("float32") * onp.where(
        rng.random(shapes[1]) > 0.5, 1, -1).astype("float32")
    if name == "power":
        a = onp.abs(a)
    got = getattr(np, name)(np.array(a), np.array(b))
    _chk(got, getattr(onp, name)(a, b), rtol=1e-5, atol=1e-5)
    # with a Python scalar on either side
    got = getattr(np, name)(np.array(a), 1.5)
    _chk(got, getattr(onp, name)(a, onp.float32(1.5)), rtol=1e-5, atol=1e-5)


def test_integer_binary_and_bitwise():
    a = onp.array([12, -7, 5, 0], dtype="int32")
    b = onp.array([5, 3, -2, 7], dtype="int32")
    x, y = np.array(a), np.array(b)
    for name in ("add", "subtract", "multiply", "mod", "floor_divide", "maximum", "minimum",
                 "bitwise_and", "bitwise_or", "bitwise_xor"):
        _chk(getattr(np, name)(x, y), getattr(onp, name)(a, b))
    _chk(np.gcd(x, y), onp.gcd(a, b))
    _chk(np.lcm(x, y), onp.lcm(a, b))
    _chk(np.invert(x), onp.invert(a))
    _chk(np.ldexp(np.array([1.0, 2.0]), np.array([3, 1], dtype="int32")),
         onp.array([8.0, 4.0], dtype="float32"))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "amax", "amin", "std",
                                  "var", "argmax", "argmin", "all", "any"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(rng, name, axis, keepdims):
    a = rng.uniform(0.5, 1.5, (3, 4, 2)).astype("float32")
    if name in ("argmax", "argmin"):
        if isinstance(axis, tuple):
            return
        kw = {"keepdims": keepdims} if keepdims else {}
        want = getattr(onp, name)(a, axis=axis, **kw)
    else:
        want = getattr(onp, name)(a, axis=axis, keepdims=keepdims)
        kw = {"keepdims": keepdims}
    got = getattr(np, name)(np.array(a), axis=axis, **kw)
    _chk(got, want, rtol=1e-4, atol=1e-5)


def test_reduction_dtypes_and_empty():
    i = np.array([[1, 2], [3, 4]], dtype="int32")
    assert np.sum(i).dtype == onp.int32            # MXNet keeps the integer type
    assert np.mean(i).dtype == onp.float32
    assert np.sum(np.array([True, False, True], dtype=bool)).item() == 2
    assert np.sum(np.zeros((0, 3))).shape == () and np.sum(np.zeros((0, 3))).item() == 0
    assert np.prod(np.zeros((0,))).item() == 1
    with pytest.raises(ValueError):
        np.max(np.zeros((0,)))
    _chk(np.average(np.array([[1.0, 2.0], [3.0, 5.0]]), axis=1, weights=np.array([1.0, 3.0])),
         onp.average(onp.array([[1.0, 2.0], [3.0, 5.0]], dtype="float32"), axis=1,
                     weights=onp.array([1.0, 3.0], dtype="float32")))
    a = onp.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    _chk(np.cumsum(np.array(a), axis=1), onp.cumsum(a, axis=1).astype("int32"))  # MXNet's dtype
    _chk(np.cumsum(np.array(a)), onp.cumsum(a).astype("int32"))


def test_shape_functions(rng):
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    x = np.array(a)
    b = rng.standard_normal((2, 3, 4)).astype("float32")
    y = np.array(b)
    cases = [
        (np.reshape(x, (4, -1)), onp.reshape(a, (4, -1))),
        (np.ravel(x), onp.ravel(a)),
        (np.transpose(x, (2, 0, 1)), onp.transpose(a, (2, 0, 1))),
        (np.swapaxes(x, 0, 2), onp.swapaxes(a, 0, 2)),
        (np.moveaxis(x, 0, -1), onp.moveaxis(a, 0, -1)),
        (np.rollaxis(x, 2), onp.rollaxis(a, 2)),
        (np.expand_dims(x, 1), onp.expand_dims(a, 1)),
        (np.squeeze(np.expand_dims(x, 0)), a),
        (np.broadcast_to(np.array(a[:1]), (5, 3, 4)), onp.broadcast_to(a[:1], (5, 3, 4))),
        (np.tile(x, (2, 1, 1)), onp.tile(a, (2, 1, 1))),
        (np.repeat(x, 2, axis=1), onp.repeat(a, 2, axis=1)),
        (np.repeat(x, [1, 0, 2], axis=1), onp.repeat(a, [1, 0, 2], axis=1)),
        (np.flip(x, (0, 2)), onp.flip(a, (0, 2))),
        (np.fliplr(x), onp.fliplr(a)), (np.flipud(x), onp.flipud(a)),
        (np.roll(x, 2, axis=2), onp.roll(a, 2, axis=2)), (np.roll(x, -5), onp.roll(a, -5)),
        (np.rot90(x, 1, (1, 2)), onp.rot90(a, 1, (1, 2))), (np.rot90(x, 3), onp.rot90(a, 3)),
        (np.concatenate([x, y], axis=1), onp.concatenate([a, b], axis=1)),
        (np.concatenate([x, y], axis=None), onp.concatenate([a, b], axis=None)),
        (np.stack([x, y], axis=-1), onp.stack([a, b], axis=-1)),
        (np.vstack([x[0], y[0]]), onp.vstack([a[0], b[0]])),
        (np.hstack([x[0], y[0]]), onp.hstack([a[0], b[0]])),
        (np.dstack([x[0], y[0]]), onp.dstack([a[0], b[0]])),
        (np.column_stack([x[0, 0], y[0, 0]]), onp.column_stack([a[0, 0], b[0, 0]])),
        (np.split(x, 3, axis=1), onp.split(a, 3, axis=1)),
        (np.split(x, [1, 3], axis=2), onp.split(a, [1, 3], axis=2)),
        (np.array_split(x, 3, axis=2), onp.array_split(a, 3, axis=2)),
        (np.hsplit(x, 3), onp.hsplit(a, 3)), (np.vsplit(x, 2), onp.vsplit(a, 2)),
        (np.pad(x, ((1, 0), (0, 2), (1, 1))), onp.pad(a, ((1, 0), (0, 2), (1, 1)))),
        (np.pad(x, 2, mode="edge"), onp.pad(a, 2, mode="edge")),
        (np.pad(x, 2, mode="reflect"), onp.pad(a, 2, mode="reflect")),
        (np.pad(x, 3, mode="symmetric"), onp.pad(a, 3, mode="symmetric")),
        (np.pad(x, 1, mode="wrap"), onp.pad(a, 1, mode="wrap")),
        (np.atleast_3d(x[0, 0]), onp.atleast_3d(a[0, 0])),
        (np.broadcast_arrays(x[:, :1], y[:1]), onp.broadcast_arrays(a[:, :1], b[:1])),
        (np.diff(x, axis=1), onp.diff(a, axis=1)),
        (np.append(x, y, axis=0), onp.append(a, b, axis=0)),
    ]
    for got, want in cases:
        _chk(got, want)
    assert np.shape(x) == (2, 3, 4) and np.size(x) == 24 and np.ndim(x) == 3


def test_products(rng):
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 5))
    c = rng.standard_normal((2, 4, 5))
    v = rng.standard_normal(4)
    A, B, C, V = (np.array(t, dtype="float64") for t in (a, b, c, v))
    _chk(np.dot(A, B), onp.dot(a, b), 1e-10)
    _chk(np.dot(V, V), onp.dot(v, v), 1e-10)
    _chk(np.dot(A, C), onp.dot(a, c), 1e-10)
    _chk(np.dot(A, V), onp.dot(a, v), 1e-10)
    _chk(np.matmul(A, C), onp.matmul(a, c), 1e-10)
    _chk(np.matmul(V, B), onp.matmul(v, b), 1e-10)
    _chk(np.tensordot(C, B, axes=([1, 2], [0, 1])), onp.tensordot(c, b, axes=([1, 2], [0, 1])),
         1e-10)
    _chk(np.inner(A, A), onp.inner(a, a), 1e-10)
    _chk(np.outer(V, V), onp.outer(v, v), 1e-10)
    _chk(np.vdot(A, A), onp.vdot(a, a), 1e-10)
    _chk(np.kron(A, B[:2, :2]), onp.kron(a, b[:2, :2]), 1e-10)
    for sub, ops in (("ij,jk->ik", (a, b)), ("ij->ji", (a,)), ("ii->", (a[:3, :3],)),
                     ("bij,bjk->bik", (c[:, :3, :4], c)), ("i,i", (v, v)), ("ij", (a,)),
                     ("...j,jk->...k", (c[:, :, :4], b)), ("ij,ij->i", (a, a))):
        _chk(np.einsum(sub, *[np.array(o, dtype="float64") for o in ops]),
             onp.einsum(sub, *ops), 1e-10)
    i = onp.array([[1, 2], [3, 4]], dtype="int32")
    _chk(np.dot(np.array(i), np.array(i)), onp.dot(i, i))


def test_sorting_selection(rng):
    a = rng.standard_normal((4, 5)).astype("float32")
    x = np.array(a)
    _chk(np.sort(x), onp.sort(a))
    _chk(np.sort(x, axis=0), onp.sort(a, axis=0))
    _chk(np.argsort(x, axis=1), onp.argsort(a, axis=1))
    _chk(np.sort(x, axis=None), onp.sort(a, axis=None))
    ints = onp.array([3, 1, 3, 2, 1, 7, 3], dtype="int32")
    u = np.unique(np.array(ints), return_index=True, return_inverse=True, return_counts=True)
    w = onp.unique(ints, return_index=True, return_inverse=True, return_counts=True)
    _chk(u[0], w[0])
    for g, ww in zip(u[1:], w[1:]):
        onp.testing.assert_array_equal(g.asnumpy(), ww)
    m = onp.array([[0, 2, 0], [1, 0, 3]], dtype="float32")
    for g, ww in zip(np.nonzero(np.array(m)), onp.nonzero(m)):
        onp.testing.assert_array_equal(g.asnumpy(), ww)
    _chk(np.flatnonzero(np.array(m)), onp.flatnonzero(m))
    _chk(np.argwhere(np.array(m)), onp.argwhere(m))
    _chk(np.take(x, np.array([0, 3, 1], dtype="int64"), axis=1), onp.take(a, [0, 3, 1], axis=1))
    _chk(np.take(x, [[0, 1], [2, 19]]), onp.take(a, [[0, 1], [2, 19]]))
    with pytest.raises(IndexError):
        np.take(x, [20])
    _chk(np.take(x, [7], axis=1, mode="wrap"), onp.take(a, [7], axis=1, mode="wrap"))
    _chk(np.take(x, [7], axis=1, mode="clip"), onp.take(a, [7], axis=1, mode="clip"))
    _chk(np.where(x > 0, x, 0.0), onp.where(a > 0, a, onp.float32(0)))
    _chk(np.where(x > 0, 1.0, 2.0), onp.where(a > 0, 1.0, 2.0).astype("float32"))
    _chk(np.clip(x, -0.5, 0.5), onp.clip(a, -0.5, 0.5))
    _chk(np.clip(x, None, 0.1), onp.clip(a, None, 0.1))
    _chk(np.diag(x), onp.diag(a))
    _chk(np.diag(x[0], k=1), onp.diag(a[0], k=1))
    _chk(np.diagonal(np.array(a.reshape(2, 2, 5)), 0, 1, 2), onp.diagonal(a.reshape(2, 2, 5), 0, 1, 2))
    _chk(np.trace(x), onp.trace(a), 1e-5)
    xp = onp.array([0.0, 1.0, 3.0])
    fp = onp.array([1.0, 3.0, 2.0])
    q = onp.array([-1.0, 0.0, 0.5, 2.0, 3.0, 4.0])
    _chk(np.interp(np.array(q), np.array(xp), np.array(fp)),
         onp.interp(q, xp, fp))
    _chk(np.round(np.array([0.5, 1.5, 2.5, -0.5, 1.234])),
         onp.round(onp.array([0.5, 1.5, 2.5, -0.5, 1.234], dtype="float32")))
    _chk(np.around(np.array([1.234, 5.678]), 1), onp.around(onp.array([1.234, 5.678], "float32"), 1))
    _chk(np.nan_to_num(np.array([onp.nan, onp.inf, -onp.inf, 1.0])),
         onp.nan_to_num(onp.array([onp.nan, onp.inf, -onp.inf, 1.0], dtype="float32")))
    y = np.array(a)
    assert np.may_share_memory(y, y[1:]) and not np.may_share_memory(y, x)


def test_zero_size_functions():
    e = np.zeros((0, 3))
    assert np.concatenate([e, np.ones((2, 3))]).shape == (2, 3)
    assert np.transpose(e).shape == (3, 0)
    assert np.exp(e).shape == (0, 3)
    assert np.sort(e, axis=0).shape == (0, 3)
    assert np.where(e > 0, e, e).shape == (0, 3)
    assert np.unique(np.zeros((0,))).shape == (0,)
    assert np.nonzero(np.zeros((2, 2)))[0].shape == (0,)
    assert np.broadcast_to(np.ones((1, 3)), (0, 3)).shape == (0, 3)
    assert np.dot(np.zeros((2, 0)), np.zeros((0, 3))).asnumpy().tolist() == [[0.0] * 3] * 2


# ---- MXNet 1.9.1 functions: windows, index helpers, polyval, resize, numpy 1.x aliases -------
@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman"])
@pytest.mark.parametrize("m", [0, 1, 2, 7])
def test_windows(name, m):
    got = getattr(np, name)(m)
    assert got.dtype == onp.float32            # MXNet's default (numpy: float64)
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(m), atol=1e-6)
    _chk(getattr(np, name)(m, dtype="float64"), getattr(onp, name)(m), atol=1e-12)


def test_indices_unravel_diag_indices():
    _chk(np.indices((2, 3)), onp.indices((2, 3)).astype(onp.int32))
    _chk(np.indices((2, 0, 3), dtype="int64"), onp.indices((2, 0, 3)))
    idx = np.array([22, 41, 37], dtype="int64")
    _chk(np.unravel_index(idx, (7, 6)), onp.unravel_index([22, 41, 37], (7, 6)))
    assert np.unravel_index(5, (2, 3)) == (1, 2)
    with pytest.raises(ValueError, match="unravel_index"):
        np.unravel_index(np.array([42], dtype="int64"), (7, 6))
    with pytest.raises(TypeError, match="unravel_index"):
        np.unravel_index(np.array([1.0]), (7, 6))
    _chk(np.diag_indices_from(np.ones((3, 3, 3))), onp.diag_indices_from(onp.ones((3, 3, 3))))
    with pytest.raises(ValueError, match="diag_indices_from"):
        np.diag_indices_from(np.ones((2, 3)))


def test_polyval_values_and_gradient():
    p = onp.array([3.0, -1.0, 0.5, 2.0], dtype=onp.float32)
    xv = onp.array([[0.5, -2.0], [1.5, 3.0]], dtype=onp.float32)
    x = np.array(xv)
    x.attach_grad()
    with mx.autograd.record():
        y = np.polyval(np.array(p), x)
    y.backward()
    _chk(y, onp.polyval(p, xv), rtol=1e-5)
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.polyval(onp.polyder(p), xv), rtol=1e-5)
    with pytest.raises(ValueError, match="polyval"):
        np.polyval(np.ones((2, 2)), x)


@pytest.mark.parametrize("shape", [(2, 3), 7, (0,), (3, 1, 2), (1,)])
def test_resize(shape):
    a = onp.arange(5, dtype=onp.float32)
    _chk(np.resize(np.array(a), shape), onp.resize(a, shape))
    _chk(np.resize(np.array(a[:0]), shape), onp.zeros(shape, onp.float32))


def test_product_sometrue():
    a = onp.array([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]], dtype=onp.float32)
    _chk(np.product(np.array(a), axis=1), onp.prod(a, axis=1))
    _chk(np.sometrue(np.array(a), axis=0), onp.any(a, axis=0))
    assert bool(np.sometrue(np.zeros(3))) is False


SPECIAL = [1.0, -1.0, 0.0, -0.0, onp.inf, -onp.inf, onp.nan, 2.5, -3.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arctan2_signed_zeros_and_infinities(dtype):
    y, x = onp.meshgrid(onp.array(SPECIAL, dtype), onp.array(SPECIAL, dtype))
    got = np.arctan2(np.array(y), np.array(x)).asnumpy()
    want = onp.arctan2(y, x)
    onp.testing.assert_allclose(got, want, rtol=1e-6)
    assert (onp.signbit(got) == onp.signbit(want))[~onp.isnan(want)].all()


def test_index_arrays_wrap_negative_positions():
    a = np.arange(24).reshape(4, 6)
    h = a.asnumpy()
    for key in [np.array([-1, 0], dtype="int32"), (slice(None), np.array([-6, 5], dtype="int64")),
                np.array(-1, dtype="int64"), [-1, -2], (Ellipsis, [-1]), (None, [-4], -1)]:
        hk = tuple(k.asnumpy() if isinstance(k, np.ndarray) else k for k in key) \
            if isinstance(key, tuple) else (key.asnumpy() if isinstance(key, np.ndarray) else key)
        onp.testing.assert_array_equal(a[key].asnumpy(), h[hk])
    a[np.array([-1], dtype="int64")] = 0
    assert a.asnumpy()[-1].sum() == 0 and a.asnumpy()[0].sum() == 15


def test_scalar_bool_keys_and_long_values():
    a = np.arange(9).reshape(3, 3)
    assert a[np.array(True, dtype="bool")].shape == (1, 3, 3)
    assert a[False].shape == (0, 3, 3) and a[np.array(False, dtype="bool")].shape == (0, 3, 3)
    assert a[0, False].shape == (0, 3)
    a[False] = 5
    assert a.sum().item() == 36
    a[1] = np.array([[[7.0, 8.0, 9.0]]])        # leading 1s of a longer value are dropped
    onp.testing.assert_array_equal(a.asnumpy()[1], [7, 8, 9])
    with pytest.raises(ValueError, match="could not broadcast"):
        a[1] = np.ones((2, 3))


def test_copy_order_and_format():
    a = np.array([2, 3], dtype="int32")
    with pytest.raises(NotImplementedError, match="order='F'"):
        a.copy(order="F")
    assert "{:0.3g}".format(np.array(onp.pi)) == "3.14"
    with pytest.raises(TypeError):
        "{:30}".format(np.array([1.0]))
    assert "{}".format(np.array([1.5])) == "[1.5]"


def test_comparison_and_empty_binary_keep_autograd():
    x = np.array([[1.0, 2.0]])
    y = np.ones((0, 2))
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        c = x == 2
    assert c.dtype == onp.bool_
    c.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [[0.0, 0.0]])
    with mx.autograd.record():
        z = y * x
    assert z.shape == (0, 2)
    z.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [[0.0, 0.0]])


def test_backward_through_an_empty_result_is_a_no_op():
    x = np.ones((0, 3))
    w = np.ones((2,))
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = np.concatenate([x, x])           # empty: made without an operator
        z = (w * 2).sum()
    y.backward()
    assert x.grad.shape == (0, 3)
    mx.autograd.backward([y, z])             # the empty head is skipped, the other runs
    onp.testing.assert_array_equal(w.grad.asnumpy(), [2.0, 2.0])
    with pytest.raises(mx.base.MXNetError, match="not in a computational graph"):
        np.ones(2).backward()                # a non-empty array outside the graph still fails


@pytest.mark.parametrize("obj,values,axis", [
    ([], [], None), ([0, 1], [1, 2], None), (slice(1, 2), [1, 2], None),
    (slice(1, -2, -1), [], None), ([1, 1, 1], [3, 4, 5], None), ([1, 2], [[7.0], [8.0]], 1),
    (onp.array([2]), [[5.0, 6.0, 7.0]], 0)])
def test_insert_at_several_positions(obj, values, axis):
    a = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    want = onp.insert(a, obj, values, axis=axis)
    _chk(np.insert(np.array(a), obj, values, axis=axis), want)


def test_insert_several_positions_gradient():
    a = np.array([1.0, 2.0, 3.0])
    v = np.array([10.0, 20.0])
    a.attach_grad()
    v.attach_grad()
    with mx.autograd.record():
        y = np.insert(a, [0, 2], v) * np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y.backward()
    onp.testing.assert_array_equal(a.grad.asnumpy(), [2.0, 3.0, 5.0])
    onp.testing.assert_array_equal(v.grad.asnumpy(), [1.0, 4.0])


def test_unique_along_an_axis_and_diff_to_empty():
    x = onp.array([[1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [0.0, 9.0]], dtype=onp.float32)
    got = np.unique(np.array(x), axis=0, return_index=True, return_inverse=True,
                    return_counts=True)
    want = onp.unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w.reshape(g.shape))
    z = onp.zeros((3, 1, 2), onp.float32)
    _chk(np.diff(np.array(z), axis=1), onp.diff(z, axis=1))
    v = onp.array([1.0, 4.0, 6.0, 7.0, 12.0], onp.float32)
    for n in range(7):
        _chk(np.diff(np.array(v), n), onp.diff(v, n))


def test_numpy2_tuple_results():
    a, b = np.ones(2), np.ones(())
    assert type(np.atleast_1d(a, b)) is tuple and type(np.atleast_3d(a, b)) is tuple
    assert type(np.meshgrid(a, a)) is tuple and type(np.broadcast_arrays(a, b)) is tuple

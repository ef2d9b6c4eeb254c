"""mx.np.ndarray: class, views, creation, dtype promotion, indexing, repr, autograd."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np


def test_views_share_storage_and_autograd():
    x = mx.nd.array([[1, 2], [3, 4]])
    y = x.as_np_ndarray()
    assert type(y) is np.ndarray and y._chunk is x._chunk
    z = y.as_nd_ndarray()
    assert type(z) is mx.nd.NDArray and z._chunk is x._chunk
    y[0, 0] = 7
    assert x.asnumpy()[0, 0] == 7


def test_creation_defaults():
    assert np.array([1, 2, 3]).dtype == onp.float32            # MXNet: Python data -> float32
    assert np.array(onp.array([1, 2], dtype="int64")).dtype == onp.int64
    assert np.array(onp.array([1.0])).dtype == onp.float64
    assert np.zeros((2, 0)).shape == (2, 0)
    assert np.ones(()).shape == () and np.ones(()).item() == 1.0
    assert np.zeros(3, dtype=int).dtype == onp.int64
    onp.testing.assert_array_equal(np.arange(5).asnumpy(), onp.arange(5, dtype="float32"))
    onp.testing.assert_allclose(np.arange(1, 3, 0.5).asnumpy(), onp.arange(1, 3, 0.5))
    onp.testing.assert_allclose(np.linspace(0, 1, 7).asnumpy(), onp.linspace(0, 1, 7), 1e-6)
    onp.testing.assert_allclose(np.logspace(0, 2, 3).asnumpy(), [1, 10, 100], 1e-5)
    onp.testing.assert_array_equal(np.eye(3, 4, 1).asnumpy(), onp.eye(3, 4, 1))
    onp.testing.assert_array_equal(np.identity(2).asnumpy(), onp.identity(2))
    assert np.full((2, 2), 3).dtype == onp.float32
    onp.testing.assert_array_equal(np.full((2,), 3, dtype="int32").asnumpy(), [3, 3])
    a = np.array([[1, 2], [3, 4]], dtype="int32")
    for f, g in ((np.zeros_like, onp.zeros_like), (np.ones_like, onp.ones_like)):
        r = f(a)
        assert r.dtype == onp.int32 and r.shape == (2, 2)
        onp.testing.assert_array_equal(r.asnumpy(), g(a.asnumpy()))
    onp.testing.assert_array_equal(np.full_like(a, 5).asnumpy(), onp.full((2, 2), 5))
    assert np.empty_like(a).shape == (2, 2)
    m = onp.arange(12.0).reshape(3, 4)
    onp.testing.assert_array_equal(np.tril(np.array(m), -1).asnumpy(), onp.tril(m, -1))
    onp.testing.assert_array_equal(np.triu(np.array(m), 1).asnumpy(), onp.triu(m, 1))
    xs, ys = np.meshgrid(np.arange(3), np.arange(2))
    rx, ry = onp.meshgrid(onp.arange(3), onp.arange(2))
    onp.testing.assert_array_equal(xs.asnumpy(), rx)
    onp.testing.assert_array_equal(ys.asnumpy(), ry)


@pytest.mark.parametrize("d1,d2,expect", [
    ("int32", "float32", "float32"), ("int32", "int64", "int64"), ("int8", "int32", "int32"),
    ("float16", "float32", "float32"), ("bool", "int32", "int32"), ("bool", "float16", "float16"),
    ("int32", "float64", "float64"), ("int64", "float16", "float16"), ("uint8", "int32", "int32"),
])
def test_promotion_matches_mxnet(d1, d2, expect):
    # the pairs checked against MXNet 1.9.1's np (int with float gives that float)
    r = np.ones(2, dtype=d1) + np.ones(2, dtype=d2)
    assert r.dtype == onp.dtype(expect)
    onp.testing.assert_array_equal(r.asnumpy(), [2, 2] if expect != "bool" else [True, True])


def test_operators_and_scalars(rng):
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal((4,)).astype("float32") + 3
    x, y = np.array(a), np.array(b)
    for got, want in ((x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
                      (x ** 2, a ** 2), (2 - x, 2 - a), (x // y, a // b), (x % y, a % b),
                      (-x, -a), (abs(x), abs(a)), (x @ x.T, a @ a.T), (3 / y, 3 / b)):
        assert got.dtype == onp.float32
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
    i = np.array([[1, 2], [3, 4]], dtype="int32")
    assert (i + 1).dtype == onp.int32 and (i * 2).asnumpy().tolist() == [[2, 4], [6, 8]]
    assert (i + 1.5).dtype == onp.float32        # numpy's rule (MXNet 1.9.1 truncated to int)
    onp.testing.assert_allclose((i + 1.5).asnumpy(), [[2.5, 3.5], [4.5, 5.5]])
    assert (i / i).dtype == onp.float32 and (i / 2).dtype == onp.float32
    c = i > 2
    assert c.dtype == onp.bool_ and c.asnumpy().tolist() == [[False, False], [True, True]]
    assert (i == i).all() and not (i != i).any()
    bb = c & (i < 4)
    assert bb.asnumpy().tolist() == [[False, False], [True, False]]
    assert (~c).asnumpy().tolist() == [[True, True], [False, False]]
    assert (~i).asnumpy().tolist() == (~i.asnumpy()).tolist()
    z = np.array(3.0)
    assert (z * 2).shape == () and (z * 2).item() == 6.0
    assert (z + np.ones((2, 3))).shape == (2, 3)
    with pytest.raises(TypeError):
        c - c
    i += 1
    assert i.asnumpy().tolist() == [[2, 3], [4, 5]] and i.dtype == onp.int32
    with pytest.raises(TypeError):
        i += 1.5


def test_zero_size_and_zero_dim():
    e = np.zeros((0, 3))
    assert (e + 1).shape == (0, 3)
    assert np.sum(e).item() == 0 and np.sum(e, axis=0).shape == (3,)
    assert e.T.shape == (3, 0)
    s = np.array(5.0)
    assert s.ndim == 0 and s.size == 1 and float(s) == 5.0
    assert s.reshape(1, 1).shape == (1, 1)
    assert np.exp(s).shape == ()
    with pytest.raises(TypeError):
        len(s)


def test_indexing(rng):
    a = rng.standard_normal((4, 5, 6)).astype("float32")
    x = np.array(a)
    keys = [1, -1, (1, 2), (1, 2, 3), slice(1, 3), (slice(None), 2), (Ellipsis, 1),
            (None, 1), (slice(None, None, 2), slice(1, None, 2)), ([0, 2],),
            (onp.array([0, 3]), slice(None), onp.array([1, 5])), (1, [0, 2, 4])]
    for k in keys:
        got = x[k]
        want = a[k]
        assert type(got) is np.ndarray
        assert got.shape == want.shape, k
        onp.testing.assert_array_equal(got.asnumpy(), want)
    m = a > 0
    onp.testing.assert_array_equal(x[np.array(m, dtype=bool)].asnumpy(), a[m])
    assert x[0, 0, 0].shape == () and x[0, 0, 0].item() == a[0, 0, 0]
    y = np.zeros((3, 4), dtype="int32")
    y[1] = 5
    y[:, 2] = np.arange(3, dtype="int32")
    y[0, 0] = 9
    w = onp.zeros((3, 4), dtype="int32")
    w[1] = 5
    w[:, 2] = onp.arange(3)
    w[0, 0] = 9
    onp.testing.assert_array_equal(y.asnumpy(), w)
    y[y > 4] = 0
    w[w > 4] = 0
    onp.testing.assert_array_equal(y.asnumpy(), w)


def test_methods_and_conversions():
    a = onp.arange(12, dtype="float32").reshape(3, 4)
    x = np.array(a)
    assert x.tolist() == a.tolist()
    assert x.reshape(4, 3).shape == (4, 3) and x.reshape((-1,)).shape == (12,)
    assert x.transpose().shape == (4, 3) and x.T.shape == (4, 3)
    assert x.astype("int32").dtype == onp.int32
    assert x.sum().item() == a.sum() and x.mean(axis=0).shape == (4,)
    assert x.max() == 11 and x.min() == 0 and x.argmax() == 11
    assert x.argmin(axis=1).dtype == onp.int64
    onp.testing.assert_allclose(x.std(axis=1).asnumpy(), a.std(axis=1), rtol=1e-5)
    onp.testing.assert_allclose(x.var().item(), a.var(), rtol=1e-5)
    onp.testing.assert_array_equal(x.cumsum(axis=1).asnumpy(), a.cumsum(axis=1))
    onp.testing.assert_array_equal(onp.asarray(x), a)
    c = x.copy()
    c[0, 0] = 100
    assert x[0, 0].item() == 0
    y = x.as_in_ctx(mx.cpu())
    assert y is x and x.ctx == mx.cpu() and x.to_device(mx.cpu()) is x
    z = np.zeros((3, 4))
    x.copyto(z)
    onp.testing.assert_array_equal(z.asnumpy(), a)
    assert x.item(5) == 5.0


def test_repr_like_mxnet():
    assert repr(np.array([1, 2, 3])) == "array([1., 2., 3.])"
    assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert repr(np.array([1, 2], dtype="int64")) == "array([1, 2], dtype=int64)"
    assert repr(np.array([1.0, 2.0], dtype="float64")) == "array([1., 2.], dtype=float64)"
    assert repr(np.array(3.0)) == "array(3.)"
    assert repr(np.zeros((2, 0))) == "array([], shape=(2, 0))"
    assert repr(np.array([1, 2]) > 1) == "array([False,  True])"


def test_autograd_through_np():
    a = onp.array([[0.5, -1.0], [2.0, 0.3]])
    x = np.array(a, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = (np.sin(x) * x + x ** 2).sum()
    y.backward()
    assert type(x.grad) is np.ndarray
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.cos(a) * a + onp.sin(a) + 2 * a, 1e-10)
    v = np.array([1.0, 2.0, 3.0], dtype="float64")
    v.attach_grad()
    with mx.autograd.record():
        z = v[1] * 3 + np.dot(v, v)
    z.backward()
    onp.testing.assert_allclose(v.grad.asnumpy(), [2.0, 7.0, 6.0])


def _numgrad(f, a, eps=1e-6):
    g = onp.zeros_like(a)
    for idx in onp.ndindex(a.shape):
        p, m = a.copy(), a.copy()
        p[idx] += eps
        m[idx] -= eps
        g[idx] = (f(p) - f(m)) / (2 * eps)
    return g


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.tanh(x) * np.exp(x)),
    lambda x: np.mean(np.matmul(x, x.T)),
    lambda x: np.sum(np.concatenate([x, x * 2], axis=1) ** 2),
    lambda x: np.sum(np.where(x > 0, x, x * 0.1) * np.flip(x, 0)),
    lambda x: np.linalg.norm(x),
    lambda x: np.sum(np.einsum("ij,kj->ik", x, x)),
    lambda x: np.std(x),
])
def test_gradients_numerically(rng, fn):
    a = rng.standard_normal((3, 4))
    x = np.array(a, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x)
    y.backward()
    want = _numgrad(lambda v: fn(np.array(v, dtype="float64")).item(), a)
    onp.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_np_bool_is_numpys_bool_dtype():
    # mxnet.numpy exports numpy's bool; MXNet's own tests create arrays with dtype=np.bool
    import mxc.numpy as mnp
    assert mnp.bool is onp.bool_
    a = mnp.empty((2, 2), dtype=mnp.bool)
    assert a.dtype == onp.bool_
    onp.testing.assert_array_equal(mnp.zeros((3,), dtype=mnp.bool).asnumpy(), onp.zeros(3, bool))


def test_bad_reshape_is_mxnet_error_and_value_error():
    """MXNet raises MXNetError for an impossible reshape, numpy ValueError: mx.np raises both."""
    a = np.ones((10, 10))
    assert a.reshape((-1,)).shape == (100,)
    for bad in (lambda: a.reshape((1,)), lambda: np.reshape(a, (1,)),
                lambda: np.reshape(a, (-1, 3)), lambda: a.reshape((-1, -1))):
        with pytest.raises(mx.MXNetError):
            bad()
        with pytest.raises(ValueError):
            bad()

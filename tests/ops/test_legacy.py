"""Legacy NDArray functions (mxc/ops/legacy.py): choose_element_0index, fill_element_0index,
_onehot_encode (mx.nd.onehot_encode) and rcbrt."""
import numpy as np
import pytest

import mxc as mx


def _data():
    return np.arange(12, dtype=np.float32).reshape(3, 4)


def test_choose_element_0index_is_pick_per_row():
    x = _data()
    idx = np.array([0, 3, 1], dtype=np.float32)
    out = mx.nd.choose_element_0index(mx.nd.array(x), mx.nd.array(idx))
    assert out.asnumpy().tolist() == [0.0, 7.0, 9.0]
    assert out.shape == (3,)


def test_choose_element_0index_gradient():
    x = mx.nd.array(_data())
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.choose_element_0index(x, mx.nd.array([2, 0, 3]))
    y.backward(mx.nd.array([1.0, 2.0, 3.0]))
    expect = np.zeros((3, 4), np.float32)
    expect[0, 2], expect[1, 0], expect[2, 3] = 1.0, 2.0, 3.0
    np.testing.assert_array_equal(x.grad.asnumpy(), expect)


def test_fill_element_0index():
    x = _data()
    out = mx.nd.fill_element_0index(mx.nd.array(x), mx.nd.array([-1, -2, -3]),
                                    mx.nd.array([0, 3, 1]))
    expect = x.copy()
    expect[[0, 1, 2], [0, 3, 1]] = [-1, -2, -3]
    np.testing.assert_array_equal(out.asnumpy(), expect)
    np.testing.assert_array_equal(x, _data())          # lhs is not changed


def test_fill_element_0index_keeps_inf_and_nan_elsewhere():
    x = np.array([[np.inf, 1.0], [np.nan, 2.0]], np.float32)
    out = mx.nd.fill_element_0index(mx.nd.array(x), mx.nd.array([5, 6]), mx.nd.array([1, 1]))
    np.testing.assert_array_equal(out.asnumpy(), np.array([[np.inf, 5], [np.nan, 6]], np.float32))


def test_fill_element_0index_bad_shapes():
    with pytest.raises(ValueError, match="fill_element_0index"):
        mx.nd.fill_element_0index(mx.nd.ones((3,)), mx.nd.ones(3), mx.nd.ones(3))
    with pytest.raises(ValueError, match="fill_element_0index"):
        mx.nd.fill_element_0index(mx.nd.ones((3, 2)), mx.nd.ones(2), mx.nd.ones(3))


def test_onehot_encode_writes_into_out():
    out = mx.nd.full((3, 4), 7.0)
    r = mx.nd.onehot_encode(mx.nd.array([0, 3, 1]), out)
    assert r is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4, dtype=np.float32)[[0, 3, 1]])
    direct = mx.nd._onehot_encode(mx.nd.array([2, 2, 0]), mx.nd.zeros((3, 3), dtype="float64"))
    assert direct.dtype == np.float64
    np.testing.assert_array_equal(direct.asnumpy(), np.eye(3)[[2, 2, 0]])
    with pytest.raises(ValueError, match="_onehot_encode"):
        mx.nd.onehot_encode(mx.nd.array([0, 1]), mx.nd.zeros((3, 4)))


def test_rcbrt_forward_and_gradient():
    x = np.array([1.0, 8.0, 27.0, -8.0], np.float64)
    a = mx.nd.array(x, dtype="float64")
    np.testing.assert_allclose(mx.nd.rcbrt(a).asnumpy(), 1 / np.cbrt(x))
    np.testing.assert_allclose(a.rcbrt().asnumpy(), 1 / np.cbrt(x))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.rcbrt(a)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), -1.0 / 3.0 * np.abs(x) ** (-4.0 / 3.0),
                               rtol=1e-10)

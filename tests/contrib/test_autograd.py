"""mx.contrib.autograd (MXNet's pre-1.0 API) against numpy derivatives."""
import numpy as np
import pytest

import mxc as mx
from mxc.contrib import autograd as cag


def test_grad_and_loss_matches_numpy():
    x = mx.nd.array([[0.5, -1.0], [2.0, 0.25]])
    y = mx.nd.array([[1.5, 2.0], [-3.0, 4.0]])
    grads, loss = cag.grad_and_loss(lambda a, b: a * b + mx.nd.exp(a))(x, y)
    xn, yn = x.asnumpy(), y.asnumpy()
    np.testing.assert_allclose(loss.asnumpy(), xn * yn + np.exp(xn), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), yn + np.exp(xn), rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), xn, rtol=1e-6)


def test_grad_argnum_picks_arguments():
    x = mx.nd.array([1.0, 2.0, 3.0])
    y = mx.nd.array([4.0, 5.0, 6.0])
    (gy,) = cag.grad(lambda a, b, k: a * b * k, argnum=[1])(x, y, 3)
    np.testing.assert_allclose(gy.asnumpy(), 3 * x.asnumpy())
    with pytest.raises(AssertionError):
        cag.grad(lambda a, k: a * k, argnum=1)(x, 3)


def test_sections_switch_recording_and_training():
    prev_rec, prev_train = mx.autograd.is_recording(), mx.autograd.is_training()
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with cag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording() and mx.autograd.is_training()
    assert (mx.autograd.is_recording(), mx.autograd.is_training()) == (prev_rec, prev_train)
    assert cag.set_is_training(True) is False
    assert cag.set_is_training(False) is True


def test_backward_with_out_grads_and_add():
    x = mx.nd.ones((2, 3))
    dx = mx.nd.zeros((2, 3))
    cag.mark_variables([x], [dx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            a, b = mx.nd.split(x * 2, axis=0, num_outputs=2, squeeze_axis=True)
            cag.backward([a, b], [None, mx.nd.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(dx.asnumpy(), 2 * np.array([[2, 2, 2], [2, 4, 6]]))
    with pytest.raises(AssertionError):
        cag.backward(a)

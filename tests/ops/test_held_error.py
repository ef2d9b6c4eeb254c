"""Errors found while an operator runs reach the caller at the next wait, as in MXNet 1.9.1
(tests/python/unittest/test_exc_handling.py's contract; outcomes checked against the oracle):
the call returns, the first wait on an output (or on anything computed from it) raises
MXNetError, the error is then delivered and a later wait does not raise again; waitall raises
what no wait delivered, once."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError


def test_error_reaches_the_wait_once():
    a = mx.nd.random.normal(0, -1, shape=(2, 2))         # returns: the kernel check fails later
    with pytest.raises(MXNetError, match=r"_random_normal: ValueError: scale parameter"):
        a.wait_to_read()
    a.wait_to_read()                                      # delivered: MXNet clears it too
    mx.nd.waitall()


@pytest.mark.parametrize("wait", ["asnumpy", "wait_to_read", "waitall"])
def test_error_passes_to_dependent_operations(wait):
    a = mx.nd.random.normal(0, 1, shape=(2, 2))
    b = mx.nd.random.normal(0, -1, shape=(2, 2))
    c = mx.nd.dot(a, b) + 1                               # both skipped, both carry b's error
    with pytest.raises(MXNetError, match="scale parameter has to be positive"):
        if wait == "waitall":
            mx.nd.waitall()
        else:
            getattr(c, wait)()
    mx.nd.waitall()                                       # a waitall after a waitall: clean
    np.testing.assert_equal(a.shape, (2, 2))


def test_waitall_raises_what_no_wait_delivered_then_is_clean():
    mx.nd.random.uniform(2, 1, shape=(3,))
    mx.nd.random.exponential(-1, shape=(3,))
    with pytest.raises(MXNetError, match="_random_uniform"):   # the earliest pushed
        mx.nd.waitall()
    mx.nd.waitall()


def test_overwritten_output_is_clean_again():
    a = mx.nd.random.gamma(-1, 1, shape=(4,))
    with pytest.raises(MXNetError, match="alpha"):
        a.wait_to_read()
    a[:] = 3                                              # a write after delivery succeeds
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 3, np.float32))


class _Boom(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        if in_data[0].asnumpy().sum() < 0:
            raise ValueError("negative input")
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise KeyError("no backward today")


@mx.operator.register("mxc_test_boom")
class _BoomProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["out"]

    def infer_shape(self, in_shape):
        return in_shape, in_shape, []

    def create_operator(self, ctx, shapes, dtypes):
        return _Boom()


def test_custom_op_forward_error_is_held_on_its_outputs():
    y = mx.nd.Custom(mx.nd.array([-1.0, -2.0]), op_type="mxc_test_boom")   # returns
    z = y + 1
    with pytest.raises(MXNetError, match=r"Custom\(mxc_test_boom\).*forward raised "
                                         r"ValueError: negative input"):
        z.asnumpy()
    ok = mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type="mxc_test_boom")
    np.testing.assert_array_equal(ok.asnumpy(), [2, 4])


def test_custom_op_backward_error_is_held_on_the_gradient():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="mxc_test_boom")
    y.backward()                                          # returns
    with pytest.raises(MXNetError, match="backward raised KeyError"):
        x.grad.asnumpy()


def test_delivery_clears_the_error_from_every_array_it_reached():
    a = mx.nd.random.normal(0, -1, shape=(2, 2))
    d = a * 2
    with pytest.raises(MXNetError, match="scale"):
        d.wait_to_read()
    a.wait_to_read()                                      # oracle: no second raise
    mx.nd.waitall()


def test_a_failed_sampler_holds_back_later_samplers_until_delivered():
    # MXNet's samplers share the device's random resource var: a failed one's error is carried
    # by every later sampler (which does not run) until a wait delivers it
    def imperative(wait):
        a = mx.nd.random.normal(0, 1, (2, 2))
        b = mx.nd.random.normal(0, -1, (2, 2))
        c = mx.nd.dot(a, b)
        if wait:
            c.asnumpy()
        return a
    imperative(False)
    with pytest.raises(MXNetError, match="scale"):
        imperative(True)
    mx.nd.waitall()                                       # oracle: clean (one error, delivered)
    mx.nd.random.normal(0, -1, (2, 2))
    later = mx.nd.random.uniform(0, 1, shape=(3,))        # a good sampler after a failed one
    with pytest.raises(MXNetError, match="scale"):
        later.asnumpy()
    fresh = mx.nd.random.uniform(0, 1, shape=(3,))        # delivered: samplers run again
    assert (fresh.asnumpy() < 1).all()
    mx.nd.waitall()

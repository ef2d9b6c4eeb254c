"""mx.operator: Python operators (CustomOp/CustomOpProp) imperative and under autograd."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError


@mx.operator.register("mxc_test_scaled_sqr")
class _ScaledSqrProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)        # MXNet passes keyword arguments as strings

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _ScaledSqr(self.scale)


class _ScaledSqr(mx.operator.CustomOp):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * self.scale)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * self.scale * in_data[0] * out_grad[0])


@mx.operator.register("mxc_test_split2")
class _Split2Prop(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["sum", "prod"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Split2()


class _Split2(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        a, b = in_data
        self.assign(out_data[0], req[0], a + b)
        self.assign(out_data[1], req[1], a * b)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        a, b = in_data
        gs, gp = out_grad
        self.assign(in_grad[0], req[0], gs + gp * b)
        self.assign(in_grad[1], req[1], gs + gp * a)


def test_custom_forward_and_backward():
    xn = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    x = mx.nd.array(xn)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="mxc_test_scaled_sqr", scale=3)
        z = (y * y).sum()
    z.backward()
    np.testing.assert_allclose(y.asnumpy(), 3 * xn ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * (3 * xn ** 2) * 6 * xn, rtol=1e-6)


def test_custom_two_inputs_two_outputs():
    an, bn = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    a, b = mx.nd.array(an), mx.nd.array(bn)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        s, p = mx.nd.Custom(a, b, op_type="mxc_test_split2")
        loss = (s * 2 + p * 3).sum()
    loss.backward()
    np.testing.assert_allclose(s.asnumpy(), an + bn)
    np.testing.assert_allclose(p.asnumpy(), an * bn)
    np.testing.assert_allclose(a.grad.asnumpy(), 2 + 3 * bn)
    np.testing.assert_allclose(b.grad.asnumpy(), 2 + 3 * an)


def test_unregistered_op_type_is_a_clear_error():
    with pytest.raises(MXNetError, match="not registered"):
        mx.nd.Custom(mx.nd.ones(2), op_type="no_such_custom_op")


def test_register_needs_a_prop_class():
    with pytest.raises(TypeError, match="CustomOpProp"):
        mx.operator.register("bad")(object)

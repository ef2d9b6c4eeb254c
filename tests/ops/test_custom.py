"""mx.sym.Custom / mx.nd.Custom details MXNet's tests rely on: auxiliary-state shapes come from
the prop's infer_shape, and an error raised by the user's Python code is an MXNetError."""
import numpy as np
import pytest

import mxc as mx


class _SqrAux(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        aux[0][:] = 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("h7_sqr_aux")
class _SqrAuxProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def list_auxiliary_states(self):
        return ["aux"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _SqrAux()


class _Fails(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise AssertionError("user code failed")


@mx.operator.register("h7_fails")
class _FailsProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Fails()


def test_custom_aux_shape_from_prop():
    s = mx.sym.Custom(data=mx.sym.var("data"), aux=mx.sym.var("aux"), op_type="h7_sqr_aux")
    args, outs, auxs = s.infer_shape(data=(4, 3))
    assert args == [(4, 3)] and outs == [(4, 3)] and auxs == [(4, 3)]
    x = np.random.rand(4, 3)
    mx.test_utils.check_numeric_gradient(s, [x], [np.zeros((4, 3))])


def test_custom_user_error_is_mxnet_error():
    with pytest.raises(mx.base.MXNetError, match="user code failed"):
        mx.nd.Custom(mx.nd.ones((2, 2)), op_type="h7_fails").wait_to_read()

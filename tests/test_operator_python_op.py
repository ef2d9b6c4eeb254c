"""MXNet 1.x's deprecated NumpyOp / NDArrayOp and get_operator_arguments (mxc/operator.py,
re-exported by mx.operator)."""
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.operator import NDArrayOp, NumpyOp, PythonOp, get_operator_arguments

pytestmark = pytest.mark.filterwarnings("ignore:.*has been deprecated")


class _Cube(NumpyOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] ** 3

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 3 * in_data[0] ** 2 * out_grad[0]


class _WeightedSum(NDArrayOp):
    def list_arguments(self):
        return ["a", "b"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] + 2 * in_data[1]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0]
        in_grad[1][:] = 2 * out_grad[0]


def _bind(sym, arrays):
    grads = {n: mx.nd.zeros(a.shape) for n, a in arrays.items()}
    ex = sym.bind(mx.cpu(), args=arrays, args_grad=grads)
    return ex, grads


def test_base_numpy_op_is_identity_with_unit_gradient():
    # MXNet's default PythonOp: forward copies, backward writes 1 whatever the head
    s = NumpyOp().get_symbol(mx.sym.var("X"), name="numpy_op")
    assert s.list_arguments() == ["X"] and s.list_outputs() == ["numpy_op_output"]
    ex, grads = _bind(s, {"X": mx.nd.array(np.arange(5.0))})
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.arange(5.0))
    ex.backward(mx.nd.full((5,), 7.0))
    np.testing.assert_array_equal(grads["X"].asnumpy(), np.ones(5))


def test_numpy_op_subclass_against_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    head = rng.standard_normal((3, 4)).astype(np.float32)
    s = _Cube()(mx.sym.var("x")) * 2
    ex, grads = _bind(s, {"x": mx.nd.array(x)})
    ex.forward(is_train=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), 2 * x ** 3, rtol=1e-6)
    ex.backward(mx.nd.array(head))
    np.testing.assert_allclose(grads["x"].asnumpy(), 6 * x ** 2 * head, rtol=1e-5)


def test_ndarray_op_with_two_inputs():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    s = _WeightedSum().get_symbol(mx.sym.var("a"), mx.sym.var("b"))
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3), b=(2, 3))[1] == [(2, 3)]
    ex, grads = _bind(s, {"a": mx.nd.array(a), "b": mx.nd.array(b)})
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), a + 2 * b)
    ex.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(grads["b"].asnumpy(), np.full((2, 3), 2.0))


def test_deprecation_warnings_and_abstract_get_symbol():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        NumpyOp()
    assert any("NumpyOp has been deprecated" in str(x.message) for x in w)
    with pytest.raises(NotImplementedError):
        PythonOp().get_symbol(mx.sym.var("x"))


def test_get_operator_arguments_as_mxnet_reports_them():
    # literals: what MXNet 1.9.1's get_operator_arguments returned for these operators
    got = get_operator_arguments("Activation")
    assert got.narg == 2 and got.names == ["data", "act_type"]
    assert got.types == ["NDArray-or-Symbol",
                         "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    got = get_operator_arguments("FullyConnected")
    assert got.names == ["data", "weight", "bias", "num_hidden", "no_bias", "flatten"]
    assert got.types[3:] == ["int, required", "boolean, optional, default=0",
                             "boolean, optional, default=1"]
    assert get_operator_arguments("Dropout").types[1:4] == [
        "float, optional, default=0.5", "{'always', 'training'},optional, default='training'",
        "Shape(tuple), optional, default=[]"]
    with pytest.raises(mx.base.MXNetError, match="no operator"):
        get_operator_arguments("NoSuchOp")

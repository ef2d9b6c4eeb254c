"""mxc.test_utils: MXNet's testing helpers behave as MXNet's (tolerances, messages, gradient
checks on functions of NDArrays)."""
import numpy as np
import pytest

import mxc as mx
from mxc import test_utils as tu


def test_assert_almost_equal_uses_dtype_tolerances_and_names_the_worst_element():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    tu.assert_almost_equal(a, a + 1e-5)                   # within float32's default rtol 1e-4
    with pytest.raises(AssertionError, match="Location of maximum error: \\(2,\\)"):
        tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.5], np.float32))
    tu.assert_almost_equal(mx.nd.array(a), a)             # NDArrays compare by value
    assert tu.almost_equal(a, a) and not tu.almost_equal(a, a * 2)
    assert tu.same(mx.nd.array(a), a)


def test_np_reduce_and_shapes():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(x, (0, 2), True, np.sum), x.sum(axis=(0, 2), keepdims=True))
    s = tu.rand_shape_nd(3, dim=5)
    assert len(s) == 3 and all(1 <= d <= 5 for d in s)
    r = tu.rand_ndarray((3, 4))
    assert r.shape == (3, 4) and r.dtype == np.float32


def test_check_numeric_gradient_on_a_function():
    def f(x, y):
        return mx.nd.tanh(x) * y + mx.nd.sum(x * x, axis=1, keepdims=True)
    loc = [np.random.uniform(-1, 1, (3, 4)), np.random.uniform(-1, 1, (3, 4))]
    tu.check_numeric_gradient(f, loc, numeric_eps=1e-4, rtol=1e-3, atol=1e-4, dtype=np.float64)

    def wrong(x):       # a Function whose backward is off by a factor: the check must fail
        class Twice(mx.autograd.Function):
            def forward(self, a):
                return a * 1.0

            def backward(self, g):
                return g * 2.0
        return Twice()(x)
    with pytest.raises(AssertionError):
        tu.check_numeric_gradient(wrong, [np.ones((2, 2))], rtol=1e-3, atol=1e-4, dtype=np.float64)


def test_check_symbolic_forward_and_backward_on_a_function():
    x = np.array([[1.0, -2.0], [3.0, 0.5]])
    tu.check_symbolic_forward(lambda a: a * a, [x], [x * x], dtype=np.float64)
    og = np.ones_like(x) * 3
    tu.check_symbolic_backward(lambda a: a * a, [x], [og], [2 * x * og], dtype=np.float64)
    with pytest.raises(AssertionError):
        tu.check_symbolic_backward(lambda a: a * a, [x], [og], [x * og], dtype=np.float64)


def test_environment_restores_variables():
    import os
    os.environ.pop("MXC_TU_X", None)
    with tu.environment("MXC_TU_X", "1"):
        assert os.environ["MXC_TU_X"] == "1"
    assert "MXC_TU_X" not in os.environ


def test_with_seed_seeds_numpy_and_mx_random():
    @tu.with_seed(42)
    def draw():
        return np.random.rand(), mx.nd.random.uniform(shape=(3,)).asnumpy()
    a, b = draw(), draw()
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])


def test_compare_optimizer_agrees_and_catches_a_difference():
    from mxc.test_utils import compare_optimizer
    compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                      mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (4, 5), np.float32)
    with pytest.raises(AssertionError):
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                          mx.optimizer.SGD(learning_rate=0.2), (4, 5), np.float32)
    # the aggregated form against one update per tensor
    single = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    multi = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    multi.aggregate_num = 3
    compare_optimizer(single, multi, [(3, 4), (5,), (2, 2)], np.float32, ntensors=3)

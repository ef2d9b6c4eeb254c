"""Arrays of more than 8 dimensions (MXNet's shape type has no such limit; mxc's kernel calls
hold up to MXC_MAX_NDIM = 32, csrc/mxc/opcall.h): creation, elementwise with broadcasting,
reductions, transpose, slicing and gradients against numpy; beyond 32 a clear error."""
import numpy as np
import pytest

import mxc as mx


def test_twelve_dims_against_numpy(rng):
    shape = (2, 1, 3, 1, 2, 1, 2, 1, 1, 2, 1, 3)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal((3, 1, 1, 2, 1, 2, 1, 1, 1, 1, 3)).astype(np.float32)
    x, y = mx.nd.array(a), mx.nd.array(b)
    assert x.shape == shape and x.ndim == 12
    np.testing.assert_allclose((x * y + 1).asnumpy(), a * b + 1, rtol=1e-6)
    np.testing.assert_allclose(mx.nd.sum(x, axis=(0, 4, 11)).asnumpy(),
                               a.sum(axis=(0, 4, 11)), rtol=1e-5, atol=1e-5)
    axes = tuple(reversed(range(12)))
    np.testing.assert_array_equal(mx.nd.transpose(x, axes=axes).asnumpy(), a.transpose(axes))
    np.testing.assert_array_equal(x[1, :, 2].asnumpy(), a[1, :, 2])
    np.testing.assert_array_equal(x.reshape((-1,)).asnumpy(), a.reshape(-1))
    x.attach_grad()
    with mx.autograd.record():
        z = (x * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * a, rtol=1e-6)


def test_symbol_with_ten_dims():
    shape = (1, 2, 1, 2, 1, 2, 1, 2, 1, 2)
    s = mx.sym.relu(mx.sym.var("a")) + 1
    a = np.linspace(-1, 1, 32, dtype=np.float32).reshape(shape)
    out = s.eval(a=mx.nd.array(a))[0]
    np.testing.assert_allclose(out.asnumpy(), np.maximum(a, 0) + 1)
    assert s.infer_shape(a=shape)[1] == [shape]


def test_beyond_the_bound_is_a_clear_error():
    assert mx.nd.zeros((1,) * 32).ndim == 32
    with pytest.raises(ValueError, match="at most 32 dimensions"):
        mx.nd.zeros((1,) * 33)

"""mx.npx.random: seeding, shapes and distribution moments of uniform_n / normal_n / bernoulli."""
import numpy as onp
import pytest

from mxc import npx
from mxc.numpy.multiarray import ndarray as np_ndarray, array as np_array

pytestmark = pytest.mark.usefixtures("np_mode")


def test_seed_reproducible():
    npx.random.seed(11)
    a = npx.random.uniform_n(0.0, 1.0, batch_shape=(50,)).asnumpy()
    npx.seed(11)
    b = npx.random.uniform_n(0.0, 1.0, batch_shape=(50,)).asnumpy()
    onp.testing.assert_array_equal(a, b)


def test_uniform_n_and_normal_n_shapes_and_moments():
    npx.random.seed(5)
    low = np_array(onp.array([0.0, 10.0], dtype="float32"))
    u = npx.random.uniform_n(low, 12.0, batch_shape=(4000,))
    assert type(u) is np_ndarray and u.shape == (4000, 2)
    uv = u.asnumpy()
    assert uv[:, 0].min() >= 0.0 and uv[:, 0].max() < 12.0 and uv[:, 1].min() >= 10.0
    onp.testing.assert_allclose(uv.mean(axis=0), [6.0, 11.0], atol=0.3)
    s = npx.random.uniform_n()
    assert s.shape == ()
    n = npx.random.normal_n(np_array(onp.array([[-3.0], [3.0]], dtype="float32")), 0.5,
                            batch_shape=3000, dtype="float64").asnumpy()
    assert n.shape == (3000, 2, 1) and n.dtype == onp.float64
    onp.testing.assert_allclose(n.mean(axis=0).ravel(), [-3.0, 3.0], atol=0.05)
    onp.testing.assert_allclose(n.std(axis=0).ravel(), [0.5, 0.5], atol=0.05)


def test_bernoulli():
    npx.random.seed(9)
    b = npx.random.bernoulli(prob=0.25, size=(20000,))
    assert type(b) is np_ndarray and b.dtype == onp.float32
    bv = b.asnumpy()
    assert set(onp.unique(bv)) <= {0.0, 1.0} and abs(bv.mean() - 0.25) < 0.02
    p = np_array(onp.array([0.0, 1.0, 0.5], dtype="float32"))
    bp = npx.random.bernoulli(prob=p, dtype="int32").asnumpy()
    assert bp.shape == (3,) and bp.dtype == onp.int32 and bp[0] == 0 and bp[1] == 1
    bl = npx.random.bernoulli(logit=0.0, size=(10000,)).asnumpy()
    assert abs(bl.mean() - 0.5) < 0.03
    with pytest.raises(ValueError, match="Either `prob` or `logit`"):
        npx.random.bernoulli(prob=0.5, logit=0.0)

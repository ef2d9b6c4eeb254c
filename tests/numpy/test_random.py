"""mx.np.random: shapes, dtypes, ranges, rough moments, seeding through mx.random.seed."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np


def test_seeded_and_shapes():
    mx.random.seed(7)
    a = np.random.uniform(-1, 2, size=(200, 50))
    mx.random.seed(7)
    b = np.random.uniform(-1, 2, size=(200, 50))
    assert onp.array_equal(a.asnumpy(), b.asnumpy())
    v = a.asnumpy()
    assert a.dtype == onp.float32 and v.min() >= -1 and v.max() < 2
    assert abs(v.mean() - 0.5) < 0.05
    assert np.random.uniform().shape == ()
    n = np.random.normal(1.0, 2.0, size=(20000,)).asnumpy()
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    r = np.random.randint(3, 9, size=(1000,))
    assert r.dtype == onp.int64
    rv = r.asnumpy()
    assert rv.min() == 3 and rv.max() == 8
    assert np.random.rand(2, 3).shape == (2, 3) and np.random.randn(4).shape == (4,)
    u = np.random.uniform(np.zeros(3), np.array([1.0, 10.0, 100.0]), size=(500, 3)).asnumpy()
    assert (u.max(axis=0) > [0.5, 5, 50]).all() and (u <= [1, 10, 100]).all()


def test_choice_and_shuffle():
    c = np.random.choice(10, 10, replace=False).asnumpy()
    assert sorted(c.tolist()) == list(range(10))
    p = np.random.choice(np.array([1.0, 2.0, 3.0]), 3000, p=[0.0, 0.2, 0.8]).asnumpy()
    assert set(onp.unique(p)) <= {2.0, 3.0} and abs((p == 3.0).mean() - 0.8) < 0.05
    w = np.random.choice(5, 5, replace=False, p=[0.1, 0.1, 0.2, 0.3, 0.3]).asnumpy()
    assert sorted(w.tolist()) == list(range(5))
    x = np.arange(20).reshape(10, 2)
    np.random.shuffle(x)
    xs = x.asnumpy()
    assert sorted(xs[:, 0].tolist()) == list(range(0, 20, 2))
    assert (xs[:, 1] - xs[:, 0] == 1).all()
    with pytest.raises(ValueError):
        np.random.choice(3, 5, replace=False)


# ---- the distributions MXNet 1.9.1 adds: moments against their closed forms ------------------
_N = 200000
_GAMMA_1_5 = 0.886226925452758        # Gamma(1.5)
MOMENTS = {
    # name: (call, mean, variance)
    "chisquare": (lambda: np.random.chisquare(4.0, size=_N), 4.0, 8.0),
    "lognormal": (lambda: np.random.lognormal(0.0, 0.5, size=_N), onp.exp(0.125),
                  (onp.exp(0.25) - 1) * onp.exp(0.25)),
    "logistic": (lambda: np.random.logistic(1.0, 2.0, size=_N), 1.0, 4.0 * onp.pi ** 2 / 3),
    "gumbel": (lambda: np.random.gumbel(1.0, 2.0, size=_N), 1.0 + 2.0 * onp.euler_gamma,
               onp.pi ** 2 / 6 * 4.0),
    "pareto": (lambda: np.random.pareto(5.0, size=_N), 1 / 4.0, 5.0 / (16.0 * 3.0)),
    "power": (lambda: np.random.power(3.0, size=_N), 0.75, 3.0 / (16.0 * 5.0)),
    "rayleigh": (lambda: np.random.rayleigh(2.0, size=_N), 2.0 * onp.sqrt(onp.pi / 2),
                 (4 - onp.pi) / 2 * 4.0),
    "weibull": (lambda: np.random.weibull(2.0, size=_N), _GAMMA_1_5, 1.0 - _GAMMA_1_5 ** 2),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_new_distribution_moments(name):
    mx.random.seed(11)
    call, mean, var = MOMENTS[name]
    s = call()
    assert isinstance(s, np.ndarray) and s.shape == (_N,) and s.dtype == onp.float32
    v = s.asnumpy().astype(onp.float64)
    assert abs(v.mean() - mean) < 5 * onp.sqrt(var / _N) + 1e-3, (v.mean(), mean)
    assert abs(v.var() - var) / var < 0.05, (v.var(), var)


def test_new_distribution_shapes_dtypes_errors():
    assert np.random.weibull(2.0).shape == () and np.random.gumbel().shape == ()
    assert np.random.pareto(np.array([1.0, 2.0])).shape == (2,)
    assert np.random.weibull(np.array([1.0, 2.0]), size=(3, 2)).shape == (3, 2)
    assert np.random.logistic(np.zeros((2, 1)), np.ones(3)).shape == (2, 3)
    assert np.random.lognormal(size=2, dtype="float64").dtype == onp.float64
    assert np.random.chisquare(3, size=(2, 0)).shape == (2, 0)
    for bad in (lambda: np.random.weibull(-1.0), lambda: np.random.pareto(0.0),
                lambda: np.random.rayleigh(np.array([1.0, -1.0])),
                lambda: np.random.chisquare(0)):
        with pytest.raises(ValueError, match="expect"):
            bad()


def test_location_scale_gradients():
    loc = np.array([1.0, -2.0])
    scale = np.array([2.0, 0.5])
    loc.attach_grad()
    scale.attach_grad()
    mx.random.seed(5)
    with mx.autograd.record():
        s = np.random.gumbel(loc, scale, size=(1000, 2))
    s.backward()
    onp.testing.assert_allclose(loc.grad.asnumpy(), [1000.0, 1000.0])
    # d sample / d scale = (sample - loc) / scale, summed
    want = ((s.asnumpy() - loc.asnumpy()) / scale.asnumpy()).sum(0)
    onp.testing.assert_allclose(scale.grad.asnumpy(), want, rtol=1e-3)


def test_multinomial():
    mx.random.seed(3)
    p = [0.2, 0.3, 0.5]
    c = np.random.multinomial(20000, p, size=(2, 3))
    assert c.shape == (2, 3, 3) and c.dtype == onp.int64
    v = c.asnumpy()
    assert (v.sum(-1) == 20000).all()
    onp.testing.assert_allclose(v.reshape(-1, 3).mean(0) / 20000, p, atol=0.01)
    # the last category takes 1 - sum(pvals[:-1]); an mx array of pvals works too
    onp.testing.assert_allclose(np.random.multinomial(50000, np.array([0.25, 0.0, 0.75]))
                                .asnumpy() / 50000, [0.25, 0, 0.75], atol=0.01)
    assert np.random.multinomial(10, []).shape == (0,)
    assert np.random.multinomial(10, p, size=(4, 0)).shape == (4, 0, 3)
    with pytest.raises(mx.base.MXNetError, match="sum"):
        np.random.multinomial(10, [0.6, 0.6])
    with pytest.raises(ValueError, match="numpy ndarray"):
        np.random.multinomial(10, onp.array(p))
    with pytest.raises(ValueError, match="too deep"):
        np.random.multinomial(10, [[0.5, 0.5]])


def test_multivariate_normal():
    mx.random.seed(9)
    mean = onp.array([1.0, -2.0], dtype=onp.float32)
    cov = onp.array([[1.0, 0.6], [0.6, 2.0]], dtype=onp.float32)
    s = np.random.multivariate_normal(np.array(mean), np.array(cov), size=(100000,))
    assert s.shape == (100000, 2) and s.dtype == onp.float32
    v = s.asnumpy().astype(onp.float64)
    onp.testing.assert_allclose(v.mean(0), mean, atol=0.03)
    onp.testing.assert_allclose(onp.cov(v.T), cov, atol=0.05)
    # a singular (positive semi-definite) covariance works as in numpy
    s = np.random.multivariate_normal(np.zeros(2), np.array([[1.0, 1.0], [1.0, 1.0]]), size=50)
    onp.testing.assert_allclose(s.asnumpy()[:, 0], s.asnumpy()[:, 1], atol=1e-4)
    assert np.random.multivariate_normal(np.zeros((3, 2)), np.eye(2)).shape == (3, 2)
    with pytest.raises(NotImplementedError, match="check_valid"):
        np.random.multivariate_normal(np.zeros(2), np.eye(2), check_valid="warn")
    with pytest.raises(ValueError, match="multivariate_normal"):
        np.random.multivariate_normal(np.zeros(3), np.eye(2))

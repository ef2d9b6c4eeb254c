"""The samplers' densities (_random_pdf_*) against scipy.stats, with gradients against central
differences."""
import numpy as np
import pytest

import mxc as mx

ss = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(4)
X_POS = RNG.uniform(0.2, 3.0, (2, 3, 4))
X_INT = RNG.integers(0, 6, (2, 3, 4)).astype(np.float64)
P1 = RNG.uniform(0.5, 2.0, (2, 3))
P2 = RNG.uniform(0.5, 2.0, (2, 3))
PROB = RNG.uniform(0.2, 0.8, (2, 3))

# every density by its registered name (the registry test looks for each operator's name)
OPS = ("_random_pdf_uniform", "_random_pdf_normal", "_random_pdf_gamma",
       "_random_pdf_exponential", "_random_pdf_poisson", "_random_pdf_negative_binomial",
       "_random_pdf_generalized_negative_binomial", "_random_pdf_dirichlet")

CASES = {   # name: (sample, parameters, scipy density of (x, *parameters))
    "uniform": (X_POS, [-P1, P2 + 3], lambda x, lo, hi: ss.uniform.pdf(x, lo, hi - lo)),
    "normal": (X_POS - 1, [P1 - 1, P2], ss.norm.pdf),
    "gamma": (X_POS, [P1, P2], lambda x, a, b: ss.gamma.pdf(x, a, 0, 1 / b)),
    "exponential": (X_POS, [P1], lambda x, lam: ss.expon.pdf(x, 0, 1 / lam)),
    "poisson": (X_INT, [P1 * 2], ss.poisson.pmf),
    "negative_binomial": (X_INT, [P1 * 3, PROB], ss.nbinom.pmf),
    "generalized_negative_binomial": (
        X_INT, [P1, P2], lambda x, mu, al: ss.nbinom.pmf(x, 1 / al, 1 / (mu * al + 1))),
}


@pytest.mark.parametrize("is_log", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_density_matches_scipy(name, is_log):
    x, params, pdf = CASES[name]
    assert f"_random_pdf_{name}" in OPS
    fn = getattr(mx.nd, f"random_pdf_{name}")
    got = fn(mx.nd.array(x, dtype="float64"), *[mx.nd.array(p, dtype="float64") for p in params],
             is_log=is_log).asnumpy()
    ref = pdf(x, *[p[..., None] for p in params])
    np.testing.assert_allclose(got, np.log(ref) if is_log else ref, rtol=1e-6, atol=1e-9)


def test_dirichlet_density_matches_scipy():
    alpha = RNG.uniform(0.5, 3.0, (2, 4))
    x = RNG.dirichlet(np.ones(4), (2, 5))
    got = mx.nd._random_pdf_dirichlet(mx.nd.array(x, dtype="float64"),
                                      mx.nd.array(alpha, dtype="float64"), is_log=True)
    ref = [[ss.dirichlet.logpdf(x[i, j], alpha[i]) for j in range(5)] for i in range(2)]
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("name", ["normal", "gamma", "negative_binomial"])
def test_parameter_gradients_against_central_differences(name):
    x, params, _ = CASES[name]
    fn = getattr(mx.nd, f"_random_pdf_{name}")
    arrays = [mx.nd.array(p, dtype="float64") for p in params]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        y = fn(mx.nd.array(x, dtype="float64"), *arrays, is_log=True)
    y.backward()
    for k, p in enumerate(params):
        num = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            hi = [q.copy() for q in params]
            lo = [q.copy() for q in params]
            hi[k][idx] += 1e-6
            lo[k][idx] -= 1e-6
            f = [fn(mx.nd.array(x, dtype="float64"), *[mx.nd.array(q, dtype="float64")
                                                        for q in v], is_log=True).asnumpy().sum()
                 for v in (hi, lo)]
            num[idx] = (f[0] - f[1]) / 2e-6
        np.testing.assert_allclose(arrays[k].grad.asnumpy(), num, rtol=1e-5, atol=1e-7)


def test_shapes_are_checked():
    with pytest.raises(mx.base.MXNetError, match="must start with"):
        mx.nd.random_pdf_normal(mx.nd.ones((3, 2)), mx.nd.ones((2,)), mx.nd.ones((2,)))


def test_random_namespaces_carry_the_like_samplers_and_densities():
    # MXNet's generated mx.nd.random / mx.sym.random functions for _random_*_like and pdf_*
    x = mx.nd.array(X_POS - 1, dtype="float64")
    mu, sigma = mx.nd.array(P1 - 1, dtype="float64"), mx.nd.array(P2, dtype="float64")
    np.testing.assert_allclose(mx.nd.random.pdf_normal(x, mu, sigma).asnumpy(),
                               ss.norm.pdf(X_POS - 1, (P1 - 1)[..., None], P2[..., None]),
                               rtol=1e-6)
    assert mx.nd.random.normal_like(x).shape == x.shape
    sym = mx.sym.random.pdf_normal(mx.sym.var("x"), mx.sym.var("mu"), mx.sym.var("sigma"))
    ex = sym.bind(mx.cpu(), args={"x": x, "mu": mu, "sigma": sigma})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(),
                               mx.nd.random.pdf_normal(x, mu, sigma).asnumpy(), rtol=1e-12)
    assert mx.sym.random.uniform_like(mx.sym.var("d")).list_arguments() == ["d"]
    with pytest.raises(AttributeError):
        mx.nd.random.no_such_like

"""_contrib_hawkesll (mx.nd.contrib.hawkesll) against a plain numpy walk of the same process
in float64, and its gradient in lda, alpha and beta against central differences."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError


def _reference(mu, alpha, beta, state, lags, marks, vlen, tmax):
    """log likelihood and final state by the definition, one point at a time"""
    n, k = mu.shape
    ll = np.zeros(n)
    out_state = np.array(state, np.float64)
    for i in range(n):
        s, last, t = out_state[i], np.zeros(k), 0.0
        for j in range(int(np.ceil(vlen[i]))):
            c = marks[i, j]
            t += lags[i, j]
            d = t - last[c]
            ed = np.exp(-beta[c] * d)
            ll[i] += np.log(mu[i, c] + alpha[c] * beta[c] * s[c] * ed)
            ll[i] -= mu[i, c] * d + alpha[c] * s[c] * (1 - ed)
            s[c] = 1 + s[c] * ed
            last[c] = t
        d = tmax[i] - last
        ed = np.exp(-beta * d)
        ll[i] -= (mu[i] * d + alpha * s * (1 - ed)).sum()
        s *= ed
    return ll, out_state


def _case(rng, n=4, t=6, k=3, dtype=np.float64):
    mu = rng.uniform(0.5, 2.0, (n, k))
    alpha = rng.uniform(0.1, 0.6, k)
    beta = rng.uniform(0.5, 3.0, k)
    state = rng.uniform(0.0, 1.0, (n, k))
    lags = rng.uniform(0.05, 1.0, (n, t))
    marks = rng.integers(0, k, (n, t)).astype(np.int32)
    vlen = np.array([t, 0, 3, t - 1][:n], np.float64)
    tmax = lags.sum(axis=1) + 0.5
    return [x.astype(dtype) if x.dtype != np.int32 else x
            for x in (mu, alpha, beta, state, lags, marks, vlen, tmax)]


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_hawkesll_forward_matches_the_definition(rng, dtype, rtol):
    args = _case(rng, dtype=dtype)
    ll, st = mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=a.dtype) for a in args])
    want_ll, want_st = _reference(*[a.astype(np.float64) if a.dtype != np.int32 else a
                                    for a in args])
    assert ll.dtype == dtype and ll.shape == (4,) and st.shape == (4, 3)
    np.testing.assert_allclose(ll.asnumpy(), want_ll, rtol=rtol)
    np.testing.assert_allclose(st.asnumpy(), want_st, rtol=rtol)


def test_hawkesll_gradient_matches_central_differences(rng):
    args = _case(rng)
    head = rng.uniform(-1, 1, 4)
    nd_args = [mx.nd.array(a, dtype=a.dtype) for a in args]
    for x in nd_args[:4]:
        x.attach_grad()
    with mx.autograd.record():
        ll, st = mx.nd.contrib.hawkesll(*nd_args)
    ll.backward(mx.nd.array(head, dtype=np.float64))

    def f(which, value):
        a = list(args)
        a[which] = value
        return float((_reference(*a)[0] * head).sum())
    for which in range(3):
        x = args[which]
        num = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):
            e = np.zeros_like(x)
            e[idx] = 1e-6
            num[idx] = (f(which, x + e) - f(which, x - e)) / 2e-6
        np.testing.assert_allclose(nd_args[which].grad.asnumpy(), num, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(nd_args[3].grad.asnumpy(), 0)
    # the gradient operator itself, as autograd runs it
    dmu, dalpha, dbeta = mx.nd._contrib_backward_hawkesll(mx.nd.array(head, dtype=np.float64),
                                                           *nd_args)
    for got, x in zip((dmu, dalpha, dbeta), nd_args[:3]):
        np.testing.assert_array_equal(got.asnumpy(), x.grad.asnumpy())


def test_hawkesll_bad_marks_and_shapes(rng):
    args = _case(rng)
    args[5] = args[5].copy()
    args[5][2, 1] = 7                      # mark 7 of K = 3, within sample 2's valid points
    with pytest.raises(MXNetError, match="hawkesll: sample 2 has a mark outside"):
        mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=a.dtype) for a in args])[0].asnumpy()
    args = _case(rng)
    with pytest.raises(MXNetError, match="alpha has shape"):
        mx.nd.contrib.hawkesll(*[mx.nd.array(a if i != 1 else a[:2], dtype=a.dtype)
                                 for i, a in enumerate(args)])
    with pytest.raises(MXNetError, match="lda must be float32 or float64, got float16"):
        mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=np.float16 if a.dtype != np.int32
                                             else np.int32) for a in args])
    with pytest.raises(MXNetError, match="marks must be int32"):
        mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=np.float64) for a in args])


def test_hawkesll_symbol_matches_ndarray(rng):
    args = _case(rng)
    names = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
    out = mx.sym.contrib.hawkesll(*[mx.sym.var(n) for n in names])
    ex = out.bind(mx.cpu(), {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, args)})
    ex.forward()
    ll, st = mx.nd.contrib.hawkesll(*[mx.nd.array(a, dtype=a.dtype) for a in args])
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), ll.asnumpy())
    np.testing.assert_array_equal(ex.outputs[1].asnumpy(), st.asnumpy())

"""Random operators: the generator (Philox known answers, reproducibility, independence from the
thread count), distribution moments and goodness of fit on 1e5 samples, MXNet's shape/dtype
rules for _random_*, _random_*_like, _sample_*, multinomial and shuffle, and errors that name
the operator. Statistical bounds are ~6 standard errors under fixed seeds (no flakiness)."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx
from mxc._core.opcall import run_on_numpy
from mxc.ops import registry

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
N = 100000


def _np(x):
    return x.asnumpy().astype(np.float64)


def _sg(v):
    return v - (1 << 64) if v >= 1 << 63 else v


@pytest.mark.parametrize("key,ctr,sub,expected", [
    (0, 0, 0, [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
    ((1 << 64) - 1, (1 << 64) - 1, (1 << 64) - 1, [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    (0x299f31d0a4093822, 0x85a308d3243f6a88, 0x0370734413198a2e,
     [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
])
def test_philox_known_answers(key, ctr, sub, expected):
    """Random123's known-answer vectors for Philox4x32-10."""
    import mxc.ops.cpu.random as kr
    out = np.zeros(4, np.int32)
    run_on_numpy(kr.KERNELS["philox"][4], [], [out], iattr=(_sg(key), _sg(ctr), _sg(sub)))
    assert out.view(np.uint32).tolist() == expected


def _draw_all():
    nd = mx.nd
    return [nd.random.uniform(shape=(7, 5)), nd.random.normal(shape=(9,), dtype="float64"),
            nd.random.gamma(0.5, 2, shape=(6,)), nd.random.poisson(30, shape=(5,)),
            nd.random.randint(-5, 5, shape=(8,)), nd.shuffle(nd.arange(10)),
            nd.random.multinomial(nd.array([[0.2, 0.3, 0.5]]), shape=6)]


def test_same_seed_same_numbers_different_seed_differs():
    mx.random.seed(42)
    a = [x.asnumpy() for x in _draw_all()]
    mx.random.seed(42)
    b = [x.asnumpy() for x in _draw_all()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    mx.random.seed(43)
    c = [x.asnumpy() for x in _draw_all()]
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[1], c[1])
    # successive draws differ (each operator reserves its own numbers)
    mx.random.seed(42)
    u1, u2 = mx.nd.random.uniform(shape=(100,)), mx.nd.random.uniform(shape=(100,))
    assert not np.array_equal(u1.asnumpy(), u2.asnumpy())


_THREAD_SCRIPT = r"""
import hashlib, mxc as mx
mx.random.seed(7)
h = hashlib.sha256()
for x in [mx.nd.random.uniform(shape=(300001,)), mx.nd.random.normal(shape=(200003,)),
          mx.nd.random.normal(shape=(100001,), dtype='float64'),
          mx.nd.random.exponential(2, shape=(100000,), dtype='float16'),
          mx.nd.random.gamma(0.7, 1, shape=(50000,)), mx.nd.random.poisson(40, shape=(50000,)),
          mx.nd.random.randint(0, 1000, shape=(100000,), dtype='int64'),
          mx.nd.random.multinomial(mx.nd.ones((5000, 4)) / 4, shape=3),
          mx.nd.Dropout(mx.nd.ones((400, 500)), p=0.3, mode='always')]:
    x = x[0] if isinstance(x, list) else x      # Dropout: (output, mask) until hidden
    h.update(x.asnumpy().tobytes())
print(h.hexdigest())
"""


def test_numbers_do_not_depend_on_thread_count():
    digests = []
    for n in ("1", "2", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=n,
                   PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
        r = subprocess.run([sys.executable, "-c", _THREAD_SCRIPT], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        digests.append(r.stdout.strip())
    assert digests[0] == digests[1] == digests[2]


def _ks_stat(x, cdf):
    x = np.sort(x)
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


_erf = np.vectorize(math.erf)


def test_uniform_moments_and_ks():
    mx.random.seed(1)
    x = _np(mx.nd.random.uniform(-2, 3, shape=(N,)))
    assert x.min() >= -2 and x.max() < 3
    assert abs(x.mean() - 0.5) < 6 * 5 / math.sqrt(12 * N)
    assert abs(x.var() - 25 / 12) < 0.05
    assert _ks_stat(x, lambda v: (v + 2) / 5) < 1.95 / math.sqrt(N)     # 0.1% level


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_normal_moments_and_ks(dtype):
    mx.random.seed(2)
    y = mx.nd.random.normal(1.5, 2.0, shape=(N,), dtype=dtype)
    assert y.dtype == np.dtype(dtype)
    x = _np(y)
    assert abs(x.mean() - 1.5) < 6 * 2 / math.sqrt(N)
    assert abs(x.std() - 2.0) < 0.03
    if dtype != "float16":
        d = _ks_stat((x - 1.5) / 2.0, lambda v: 0.5 * (1 + _erf(v / math.sqrt(2))))
        assert d < 1.95 / math.sqrt(N)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exponential_gamma(dtype):
    mx.random.seed(3)
    e = _np(mx.nd.random.exponential(scale=2.0, shape=(N,), dtype=dtype))   # rate 1/2
    assert e.min() >= 0 and abs(e.mean() - 2.0) < 6 * 2 / math.sqrt(N)
    assert _ks_stat(e, lambda v: 1 - np.exp(-v / 2)) < 1.95 / math.sqrt(N)
    for alpha, beta in [(0.5, 1.0), (2.0, 3.0), (9.0, 0.5)]:
        g = _np(mx.nd.random.gamma(alpha, beta, shape=(N,), dtype=dtype))
        m, v = alpha * beta, alpha * beta * beta
        assert g.min() >= 0
        assert abs(g.mean() - m) < 6 * math.sqrt(v / N), (alpha, beta)
        assert abs(g.var() / v - 1) < 0.05, (alpha, beta)


def test_discrete_distributions():
    mx.random.seed(4)
    for lam in (0.0, 3.0, 11.5, 12.0, 80.0):
        x = _np(mx.nd.random.poisson(lam, shape=(N,)))
        assert np.all(x == np.round(x)) and x.min() >= 0
        assert abs(x.mean() - lam) < 6 * math.sqrt(max(lam, 1e-3) / N) + 1e-12, lam
        if lam:
            assert abs(x.var() / lam - 1) < 0.04, lam
    # chi-square of Poisson(3) counts
    x = _np(mx.nd.random.poisson(3.0, shape=(N,))).astype(int)
    pk = np.array([math.exp(-3) * 3 ** k / math.factorial(k) for k in range(9)])
    obs = np.array([np.sum(x == k) for k in range(9)] + [np.sum(x >= 9)])
    exp_ = N * np.append(pk, 1 - pk.sum())
    assert np.sum((obs - exp_) ** 2 / exp_) < 30      # 9 dof: 0.1% level is 27.9
    k, p = 3, 0.4        # failures before k successes: mean k(1-p)/p, var k(1-p)/p^2
    x = _np(mx.nd.random.negative_binomial(k, p, shape=(N,)))
    assert abs(x.mean() - k * (1 - p) / p) < 0.06
    assert abs(x.var() / (k * (1 - p) / p ** 2) - 1) < 0.05
    mu, alpha = 4.0, 0.5  # mean mu, var mu + alpha mu^2
    x = _np(mx.nd.random.generalized_negative_binomial(mu, alpha, shape=(N,)))
    assert abs(x.mean() - mu) < 0.06 and abs(x.var() / (mu + alpha * mu * mu) - 1) < 0.05
    x = _np(mx.nd.random.generalized_negative_binomial(mu, 0.0, shape=(N,)))   # Poisson(mu)
    assert abs(x.var() / mu - 1) < 0.04


def test_randint():
    mx.random.seed(5)
    x = mx.nd.random.randint(-3, 7, shape=(N,))
    assert x.dtype == np.int32
    a = x.asnumpy()
    assert a.min() == -3 and a.max() == 6
    counts = np.bincount(a + 3, minlength=10)
    assert np.sum((counts - N / 10) ** 2 / (N / 10)) < 30     # 9 dof
    big = mx.nd.random.randint(-(1 << 40), 1 << 40, shape=(1000,), dtype="int64").asnumpy()
    assert big.dtype == np.int64 and np.abs(big).max() > 1 << 35
    assert np.all(mx.nd.random.randint(4, 4, shape=(3,)).asnumpy() == 4)


@pytest.mark.parametrize("dist,scalar,arrays", [
    ("uniform", (0.0, 1.0), ([0.0, 10.0], [1.0, 20.0])),
    ("normal", (0.0, 1.0), ([0.0, 100.0], [1.0, 0.5])),
    ("gamma", (1.0, 1.0), ([1.0, 5.0], [1.0, 2.0])),
    ("exponential", (1.0,), ([1.0, 0.1],)),
    ("poisson", (1.0,), ([1.0, 50.0],)),
    ("negative_binomial", (1, 0.5), ([1.0, 10.0], [0.5, 0.9])),
    ("generalized_negative_binomial", (1.0, 1.0), ([1.0, 10.0], [1.0, 0.1])),
])
def test_sample_ops_shapes_dtypes_and_means(dist, scalar, arrays):
    mx.random.seed(6)
    r = getattr(mx.nd, f"_random_{dist}")(*scalar, shape=(2, 3))
    assert r.shape == (2, 3) and r.dtype == np.float32
    assert getattr(mx.nd, f"random_{dist}")(*scalar, shape=(4,), dtype="float64").dtype == np.float64
    data = mx.nd.ones((2, 5), dtype="float64")
    like = getattr(mx.nd, f"_random_{dist}_like")(data, *scalar)
    assert like.shape == (2, 5) and like.dtype == np.float64
    params = [mx.nd.array(a) for a in arrays]
    s = getattr(mx.nd, f"_sample_{dist}")(*params, shape=(2, 2000))
    assert s.shape == (2, 2, 2000) and s.dtype == np.float32
    assert getattr(mx.nd, f"sample_{dist}")(*params, dtype="float16").shape == (2,)
    # the two parameter sets give their own distributions
    means = _np(s).reshape(2, -1).mean(axis=1)
    ref = {"uniform": lambda a, b: (a + b) / 2, "normal": lambda a, b: a,
           "gamma": lambda a, b: a * b, "exponential": lambda a: 1 / a, "poisson": lambda a: a,
           "negative_binomial": lambda k, p: k * (1 - p) / p,
           "generalized_negative_binomial": lambda mu, al: mu}[dist]
    for i in range(2):
        m = ref(*[a[i] for a in arrays])
        assert abs(means[i] - m) < 0.1 * max(1, abs(m)), (dist, i, means[i], m)


def test_sample_ops_from_float64_params_default_to_float32():
    s = mx.nd.sample_normal(mx.nd.zeros((3,), dtype="float64"), mx.nd.ones((3,), dtype="float64"))
    assert s.dtype == np.float32 and s.shape == (3,)
    s = mx.nd.sample_uniform(mx.nd.array([0, 1], dtype="int32"), mx.nd.array([1, 2], dtype="int32"),
                             shape=(50,))
    a = s.asnumpy()
    assert a[0].min() >= 0 and a[0].max() < 1 and a[1].min() >= 1 and a[1].max() < 2


def test_multinomial_shapes_and_semantics():
    mx.random.seed(8)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], np.float32)
    s, lp = mx.nd.random.multinomial(mx.nd.array(p), get_prob=True)
    assert s.shape == (2,) and s.dtype == np.int32 and lp.dtype == np.float32
    np.testing.assert_allclose(lp.asnumpy(), np.log(p[[0, 1], s.asnumpy()]), rtol=1e-6)
    assert mx.nd.random.multinomial(mx.nd.array(p), shape=(2, 4)).shape == (2, 2, 4)
    assert mx.nd.random.multinomial(mx.nd.array([0.2, 0.8]), shape=(2, 4)).shape == (2, 4)
    assert mx.nd.random.multinomial(mx.nd.array([0.2, 0.8])).shape == (1,)
    for dt in ("uint8", "float16", "float64"):
        assert mx.nd.sample_multinomial(mx.nd.array(p), dtype=dt).dtype == np.dtype(dt)
    # frequencies (chi-square, 3 categories)
    q = np.array([0.1, 0.25, 0.65])
    x = mx.nd.random.multinomial(mx.nd.array(q, dtype="float64"), shape=N).asnumpy()
    obs = np.bincount(x, minlength=3)
    assert np.sum((obs - N * q) ** 2 / (N * q)) < 14    # 2 dof: 0.1% level is 13.8
    assert np.all(mx.nd.random.multinomial(mx.nd.array([0.0, 1.0, 0.0]), shape=50).asnumpy() == 1)


def test_multinomial_get_prob_gradient_against_mxnet():
    g = np.load(os.path.join(ROOT, "tests", "data", "random_golden.npz"))
    p, sample, head = g["mn_p"], g["mn_sample"], g["mn_head"]
    # MXNet's log probabilities are log p[sample]
    np.testing.assert_allclose(g["mn_logprob"], np.log(np.take_along_axis(p, sample.astype(int), 1)),
                               rtol=1e-6)
    grad = mx.nd._backward_sample_multinomial(mx.nd.array(head), mx.nd.array(p),
                                              mx.nd.array(sample, dtype="int32"))
    np.testing.assert_allclose(grad.asnumpy(), g["mn_grad"], rtol=1e-6)
    # and through the registry gradient of sample_multinomial
    op = registry.get("_sample_multinomial")
    attrs = op.parse({"shape": 4, "get_prob": True})
    outs = [mx.nd.array(sample, dtype="int32"), mx.nd.array(g["mn_logprob"])]
    gr = op.grad(mx.nd, attrs, [mx.nd.array(p)], outs, [mx.nd.zeros((3, 4)), mx.nd.array(head)])
    np.testing.assert_allclose(gr[0].asnumpy(), g["mn_grad"], rtol=1e-6)
    gr = op.grad(mx.nd, op.parse({}), [mx.nd.array(p)], outs[:1], [mx.nd.zeros((3,))])
    assert np.all(gr[0].asnumpy() == 0)


def test_shuffle_permutes_rows():
    mx.random.seed(9)
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    for name in ("_shuffle", "shuffle", "_npi_shuffle"):
        y = getattr(mx.nd, name)(mx.nd.array(x)).asnumpy()
        assert sorted(map(tuple, y)) == sorted(map(tuple, x))
        assert np.all(y[:, 1] - y[:, 0] == 1)          # rows kept whole
    y = mx.nd.random.shuffle(mx.nd.array(np.arange(1000), dtype="int64")).asnumpy()
    assert sorted(y) == list(range(1000)) and not np.array_equal(y, np.arange(1000))
    # every position is uniform: 3 rows, 6 permutations
    counts = {}
    for _ in range(600):
        k = tuple(mx.nd.shuffle(mx.nd.array([0, 1, 2])).asnumpy().astype(int))
        counts[k] = counts.get(k, 0) + 1
    assert len(counts) == 6 and min(counts.values()) > 50
    a = mx.nd.array(x)
    mx.nd.shuffle(a, out=a)                              # in place
    assert sorted(map(tuple, a.asnumpy())) == sorted(map(tuple, x))


def test_gradients_are_zero_or_absent():
    x = mx.nd.ones((2, 3))
    assert registry.get("_random_uniform").grad(mx.nd, {}, [], [x], [x]) == []
    op = registry.get("_sample_normal")
    gr = op.grad(mx.nd, op.parse({}), [x, x], [x], [x])
    assert all(np.all(g.asnumpy() == 0) for g in gr)
    op = registry.get("_random_normal_like")
    assert np.all(op.grad(mx.nd, op.parse({}), [x], [x], [x])[0].asnumpy() == 0)
    assert registry.get("_shuffle").grad(mx.nd, {}, [x], [x], [x]) == [None]


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.random.uniform(2, 1, shape=(2,)), "_random_uniform.*low"),
    (lambda: mx.nd.random.normal(0, -1, shape=(2,)), "_random_normal.*scale"),
    (lambda: mx.nd.random.normal(0, 0, shape=(2,)), "_random_normal.*scale"),
    (lambda: mx.nd.random.gamma(-1, 1, shape=(2,)), "_random_gamma.*alpha"),
    (lambda: mx.nd.random.exponential(-1, shape=(2,)), "_random_exponential.*lam"),
    (lambda: mx.nd.random.poisson(-1, shape=(2,)), "_random_poisson.*lam"),
    (lambda: mx.nd.random.negative_binomial(-1, 0.5, shape=(2,)), "_random_negative_binomial"),
    (lambda: mx.nd.random.generalized_negative_binomial(1, -1, shape=(2,)),
     "_random_generalized_negative_binomial.*alpha"),
    (lambda: mx.nd.random.randint(5, 1, shape=(2,)), "_random_randint.*low"),
    (lambda: mx.nd.random.normal_like(mx.nd.ones(2), 0, -1), "_random_normal_like.*scale"),
])
def test_bad_parameter_values_fail_at_the_wait(call, match):
    # as MXNet 1.9.1 (the kernel checks them): the call returns, the wait raises once
    out = call()
    with pytest.raises(mx.base.MXNetError, match=match):
        out.wait_to_read()
    out.wait_to_read()


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.random.randint(0, 1 << 40, shape=(2,)), "_random_randint.*int64"),
    (lambda: mx.nd.random.uniform(shape=(2,), dtype="int32"), "_random_uniform.*dtype"),
    (lambda: mx.nd._random_uniform(), "_random_uniform.*shape"),
    (lambda: mx.nd.sample_uniform(mx.nd.zeros(2), mx.nd.ones(3)), "_sample_uniform.*one shape"),
    (lambda: mx.nd.sample_normal(mx.nd.zeros(2), mx.nd.ones(2), shape=(0,)), "_sample_normal.*shape"),
    (lambda: mx.nd.random.multinomial(mx.nd.array([1, 2], dtype="int32")), "_sample_multinomial.*float"),
    (lambda: mx.nd.random.multinomial(mx.nd.ones(2), dtype="int64"), "_sample_multinomial.*dtype"),
    (lambda: mx.nd._random_uniform_like(mx.nd.ones(2, dtype="int32")), "_random_uniform_like.*float"),
])
def test_bad_parameters_name_the_operator(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_every_random_name_is_covered():
    """The names this family registers (as MXNet 1.9.1), each exercised above or here."""
    names = {n for n, op in registry.names().items()
             if op.__class__ is registry.OpDef and "random" in (op.resources or ())}
    expected = {"_random_uniform", "uniform", "random_uniform", "_random_normal", "normal",
                "random_normal", "_random_gamma", "random_gamma", "_random_exponential",
                "random_exponential", "_random_poisson", "random_poisson",
                "_random_negative_binomial", "random_negative_binomial",
                "_random_generalized_negative_binomial", "random_generalized_negative_binomial",
                "_random_randint", "random_randint", "_npi_random_randint",
                "_random_uniform_like", "_random_normal_like", "_random_gamma_like",
                "_random_exponential_like", "_random_poisson_like",
                "_random_negative_binomial_like", "_random_generalized_negative_binomial_like",
                "_sample_uniform", "sample_uniform", "_sample_normal", "sample_normal",
                "_sample_gamma", "sample_gamma", "_sample_exponential", "sample_exponential",
                "_sample_poisson", "sample_poisson", "_sample_negative_binomial",
                "sample_negative_binomial", "_sample_generalized_negative_binomial",
                "sample_generalized_negative_binomial", "_sample_multinomial",
                "sample_multinomial", "_shuffle", "shuffle", "_npi_shuffle", "Dropout"}
    assert expected <= names, expected - names
    assert registry.get("_backward_sample_multinomial") is not None
    assert mx.nd._npi_random_randint(0, 3, shape=(4,)).dtype == np.int32
    assert mx.nd.uniform(shape=(2,)).shape == (2,) and mx.nd.normal(shape=(2,)).shape == (2,)


def _zipf_draw_probs(range_max):
    """P(v) of one draw round(exp(u log R)) - 1, u uniform in [0, 1): exp(u log R) in
    [v + 0.5, v + 1.5), cut to [1, R)"""
    v = np.arange(range_max, dtype=np.float64)
    lo = np.maximum(v + 0.5, 1.0)
    hi = np.minimum(v + 1.5, range_max)
    return (np.log(hi) - np.log(lo)) / np.log(range_max)


def test_sample_unique_zipfian_rows_distinct_counted_and_distributed():
    op = mx.nd._sample_unique_zipfian
    # MXNet's own check (test_random.py): 8192 distinct of 793472 take 14500-17000 draws
    classes, tries = op(793472, shape=(4, 8192))
    assert classes.dtype == np.int64 and tries.dtype == np.int64 and tries.shape == (4,)
    c = classes.asnumpy()
    for row, n in zip(c, tries.asnumpy()):
        assert np.unique(row).size == 8192 and row.min() >= 0 and row.max() < 793472
        assert 14500 < n < 17000
    # the first class of each row is one plain draw
    first = op(range_max=10, shape=(40000, 1))[0].asnumpy()[:, 0]
    want = _zipf_draw_probs(10) * first.size
    got = np.bincount(first, minlength=10)
    assert np.all(np.abs(got - want) < 5 * np.sqrt(want) + 1), (got, want)
    # every class, when all are asked for; the same numbers for the same seed
    mx.random.seed(11)
    full, n = op(range_max=6, shape=(3, 6))
    assert (np.sort(full.asnumpy(), axis=1) == np.arange(6)).all() and (n.asnumpy() >= 6).all()
    mx.random.seed(11)
    again, n2 = op(range_max=6, shape=(3, 6))
    assert np.array_equal(full.asnumpy(), again.asnumpy())
    assert np.array_equal(n.asnumpy(), n2.asnumpy())
    with pytest.raises(mx.base.MXNetError, match="cannot exceed"):
        op(range_max=5, shape=(2, 6))
    with pytest.raises(mx.base.MXNetError, match="2-D"):
        mx.nd._sample_unique_zipfian(range_max=5, shape=(6,))


def test_rand_zipfian_nd_and_sym():
    range_max, n = 20, 60000
    p = np.log((np.arange(range_max) + 2.0) / (np.arange(range_max) + 1.0)) / np.log(range_max + 1)
    true = mx.nd.array([0, 3, 19], dtype="int32")
    mx.random.seed(5)
    s, et, es = mx.nd.contrib.rand_zipfian(true, n, range_max)
    assert (s.dtype, et.dtype, es.dtype) == (np.int64, np.float64, np.float64)
    sv = s.asnumpy()
    got = np.bincount(sv, minlength=range_max)
    assert np.all(np.abs(got - p * n) < 5 * np.sqrt(p * n)), (got, p * n)
    np.testing.assert_allclose(et.asnumpy(), p[[0, 3, 19]] * n, rtol=1e-12)
    np.testing.assert_allclose(es.asnumpy(), p[sv] * n, rtol=1e-12)
    # the graph draws the same numbers for the same seed
    out = mx.sym.Group(mx.sym.contrib.rand_zipfian(mx.sym.var("t"), n, range_max))
    assert [nd["op"] for nd in json.loads(out.tojson())["nodes"]].count("_random_uniform") == 1
    ex = out.bind(mx.cpu(), {"t": true})
    mx.random.seed(5)
    ex.forward()
    for a, b in zip(ex.outputs, (s, et, es)):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())

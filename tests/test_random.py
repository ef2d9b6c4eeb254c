"""mx.random / mx.nd.random: seeding (all devices or one context), MXNet's dispatch between
_random_* (numbers) and _sample_* (NDArrays), shape/out/ctx/dtype handling, and a fresh seed
per process when none is set."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx
from mxc._core import resource

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_mx_random_reexports_nd_random():
    # as MXNet's: the generated *_like samplers are in mx.nd.random.__all__, not in mx.random
    for name in mx.nd.random.__all__:
        if name.endswith("_like"):
            assert not hasattr(mx.random, name)
            continue
        assert getattr(mx.random, name) is getattr(mx.nd.random, name)
    assert callable(mx.random.seed)


def test_seed_all_and_seed_ctx():
    mx.random.seed(128)
    a = mx.nd.random.normal(shape=(2, 2)).asnumpy()
    b = mx.nd.random.normal(shape=(2, 2)).asnumpy()
    assert not np.array_equal(a, b)
    mx.random.seed(128)
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(2, 2)).asnumpy(), a)
    mx.random.seed(128, ctx=mx.cpu())
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(2, 2)).asnumpy(), a)
    # every CPU context shares one generator (as MXNet)
    mx.random.seed(5)
    c = mx.nd.random.uniform(shape=(3,), ctx=mx.cpu(1)).asnumpy()
    mx.random.seed(5, ctx=mx.cpu(0))
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(3,)).asnumpy(), c)
    assert resource.device_slot(mx.cpu_pinned()) == resource.device_slot(mx.cpu(3)) == 0
    with pytest.raises(ValueError, match="seed_state"):
        mx.random.seed(1.5)
    with pytest.raises(ValueError, match="ctx"):
        mx.random.seed(1, ctx="cpu")


def test_state_save_restore_and_request_random():
    st = resource.get_state(mx.cpu())
    x = mx.nd.random.uniform(shape=(5,)).asnumpy()
    resource.set_state(mx.cpu(), st)
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(5,)).asnumpy(), x)
    k1, b1 = resource.request_random(mx.cpu(), 10)
    k2, b2 = resource.request_random(mx.cpu(), 3)
    assert k1 == k2 and b2 == b1 + 10


def test_gpu_seeds_by_id_or_kind():
    """(No GPU kernels are needed: this checks the generator states only.)"""
    mx.random.seed(128)
    assert resource.get_state(mx.gpu(0))[0] != resource.get_state(mx.gpu(1))[0]
    mx.random.seed(128, ctx=mx.gpu(0))
    mx.random.seed(128, ctx=mx.gpu(1))
    assert resource.get_state(mx.gpu(0)) == resource.get_state(mx.gpu(1))


def test_dispatch_numbers_and_arrays():
    mx.random.seed(3)
    assert mx.nd.random.uniform().shape == (1,)
    assert mx.nd.random.uniform(shape=(2, 3)).dtype == np.float32
    assert mx.nd.random.uniform(mx.nd.array([0, 1]), mx.nd.array([1, 2]), shape=3).shape == (2, 3)
    assert mx.nd.random.uniform(mx.nd.array([0, 1], dtype="float64"),
                                mx.nd.array([1, 2], dtype="float64")).dtype == np.float32
    assert mx.nd.random.normal(0, 1, shape=(2,), dtype="float16").dtype == np.float16
    assert mx.nd.random.randint(0, 5, shape=(3,), dtype="int64").dtype == np.int64
    assert mx.nd.random.randn(2, 3, loc=1, scale=2).shape == (2, 3)
    with pytest.raises(ValueError, match="_random_normal.*shape"):     # MXNet fails too
        mx.nd.random.randn()
    with pytest.raises(ValueError, match="same type"):
        mx.nd.random.normal(mx.nd.zeros(2), 1)
    with pytest.raises(ValueError, match="NDArray or numbers"):
        mx.nd.random.normal("a", 1)
    # exponential takes the scale and passes the rate
    e = mx.nd.random.exponential(scale=mx.nd.array([0.1, 10.0]), shape=20000).asnumpy()
    np.testing.assert_allclose(e.mean(axis=1), [0.1, 10.0], rtol=0.05)
    for f, args in [("poisson", (3,)), ("gamma", (2, 2)), ("negative_binomial", (2, 0.5)),
                    ("generalized_negative_binomial", (2, 0.5))]:
        assert getattr(mx.nd.random, f)(*args, shape=(4,)).shape == (4,)
        arr = [mx.nd.array([float(a)] * 3) for a in args]
        assert getattr(mx.nd.random, f)(*arr, shape=2).shape == (3, 2)


def test_out_and_ctx():
    out = mx.nd.zeros((4, 5))
    r = mx.nd.random.uniform(2, 3, out=out)
    assert r is out
    a = out.asnumpy()
    assert a.min() >= 2 and a.max() < 3
    y = mx.nd.random.normal(shape=(3,), ctx=mx.cpu(0))
    assert y.context == mx.cpu(0)
    assert mx.nd.random.uniform(shape=(2,), ctx="cpu(0)").context == mx.cpu(0)
    m = mx.nd.zeros((2,), dtype="int32")
    mx.nd.random.multinomial(mx.nd.array([[0.0, 1.0], [1.0, 0.0]]), out=m)
    assert m.asnumpy().tolist() == [1, 0]


def test_fresh_seed_per_process():
    code = "import mxc as mx; print(mx.nd.random.uniform(shape=(4,)).asnumpy().tolist())"
    env = dict(os.environ, PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=60) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    assert runs[0].stdout != runs[1].stdout


# ---- the *_like samplers: data's shape and dtype, the distribution's moments ------------------
# (sampler, parameters, mean, variance, integer-valued)
LIKE = [
    ("uniform_like", {"low": 2.0, "high": 5.0}, 3.5, 0.75, False),
    ("normal_like", {"loc": 1.0, "scale": 2.0}, 1.0, 4.0, False),
    ("gamma_like", {"alpha": 3.0, "beta": 2.0}, 6.0, 12.0, False),
    ("exponential_like", {"lam": 4.0}, 0.25, 1 / 16, False),            # lam is the rate
    ("poisson_like", {"lam": 3.0}, 3.0, 3.0, True),
    ("negative_binomial_like", {"k": 3, "p": 0.4}, 4.5, 11.25, True),
    ("generalized_negative_binomial_like", {"mu": 2.0, "alpha": 0.5}, 2.0, 4.0, True),
]


@pytest.mark.parametrize("name,params,mean,var,integer", LIKE)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_like_samplers_shape_dtype_and_moments(name, params, mean, var, integer, dtype):
    mx.random.seed(31)
    data = mx.nd.zeros((100, 300), dtype=dtype)
    out = getattr(mx.nd.random, name)(data, **params)
    assert out.shape == (100, 300) and out.dtype == np.dtype(dtype)
    x = out.asnumpy().astype(np.float64)
    n = x.size
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() / var - 1) < 0.06, (x.var(), var)
    if integer:
        np.testing.assert_array_equal(x, np.round(x))
        assert x.min() >= 0
    # out= and the positional parameters of MXNet's generated functions
    dst = mx.nd.zeros((2, 3), dtype=dtype)
    r = getattr(mx.nd.random, name)(mx.nd.ones((2, 3), dtype=dtype), *params.values(), out=dst)
    assert r is dst and dst.asnumpy().shape == (2, 3)


@pytest.mark.parametrize("name,params,mean,var,integer", LIKE)
def test_sym_like_samplers(name, params, mean, var, integer):
    mx.random.seed(32)
    s = getattr(mx.sym.random, name)(mx.sym.var("d"), **params)
    assert s.name.startswith(name)                         # MXNet's automatic node name
    x = s.bind(mx.cpu(), args={"d": mx.nd.zeros((200, 150), dtype="float16")}).forward()[0]
    assert x.shape == (200, 150) and x.dtype == np.float16
    x = x.asnumpy().astype(np.float64)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / x.size) + 2e-3 * abs(mean)

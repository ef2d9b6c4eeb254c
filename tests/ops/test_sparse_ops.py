"""Sparse operators (mxc/ops/sparse_ops.py) against numpy/scipy references and against
MXNet 1.9.1 (tests/data/sparse_golden.npz, written by tests/data/make_sparse_golden.py)."""
import os
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.ops import registry
from mxc.ops.cpu import sparse_ops as K

GOLD = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "sparse_golden.npz"))
warnings.simplefilter("ignore", UserWarning)


def _rand(shape, density, rows_only=False, seed=0, dtype=np.float32):
    rng = np.random.RandomState(seed)
    a = rng.uniform(-1, 1, size=shape).astype(dtype)
    if rows_only:
        a[rng.rand(shape[0]) > density] = 0
    else:
        a[rng.rand(*shape) > density] = 0
    return a


def _g(k):
    return GOLD[k]


def _stype(k):
    return str(GOLD[k + "_stype"])


# ---- dot ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-12), ("float16", 2e-2)])
def test_dot_csr_dense(dtype, tol):
    a = _rand((30, 20), 0.2, dtype=dtype)
    b = np.random.RandomState(1).uniform(-1, 1, (20, 7)).astype(dtype)
    c = mx.nd.array(a, dtype=dtype).tostype("csr")
    y = mx.nd.dot(c, mx.nd.array(b, dtype=dtype))
    assert y.stype == "default" and y.dtype == np.dtype(dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), ref, rtol=tol, atol=tol)
    bt = np.random.RandomState(2).uniform(-1, 1, (30, 5)).astype(dtype)
    z = mx.nd.dot(c, mx.nd.array(bt, dtype=dtype), transpose_a=True)
    assert z.stype == "row_sparse"
    np.testing.assert_allclose(z.asnumpy().astype(np.float64),
                               a.T.astype(np.float64) @ bt.astype(np.float64), rtol=tol, atol=tol)
    zd = mx.nd.dot(c, mx.nd.array(bt, dtype=dtype), transpose_a=True, forward_stype="default")
    assert zd.stype == "default"
    np.testing.assert_allclose(zd.asnumpy(), z.asnumpy(), rtol=tol, atol=tol)


def test_dot_golden():
    A, B, Bt, R = _g("dot_A"), _g("dot_B"), _g("dot_Bt"), _g("dot_R")
    c = mx.nd.array(A).tostype("csr")
    r = mx.nd.array(R).tostype("row_sparse")
    for key, y in (("dot_csr_dns", mx.nd.dot(c, mx.nd.array(B))),
                   ("dot_csrT_dns", mx.nd.dot(c, mx.nd.array(Bt), transpose_a=True)),
                   ("dot_dns_rsp", mx.nd.dot(mx.nd.array(A), r)),
                   ("dot_csr_rsp", mx.nd.dot(c, r))):
        assert y.stype == _stype(key), key
        np.testing.assert_allclose(y.asnumpy(), _g(key), rtol=1e-5, atol=1e-6, err_msg=key)


def test_dot_empty_and_errors():
    c = mx.nd.sparse.zeros("csr", (4, 3))
    y = mx.nd.dot(c, mx.nd.ones((3, 2)))
    assert (y.asnumpy() == 0).all()
    z = mx.nd.dot(c, mx.nd.ones((4, 2)), transpose_a=True)
    assert z.stype == "row_sparse" and z.indices.shape == (0,) and (z.asnumpy() == 0).all()
    with pytest.raises(ValueError, match="dot"):
        mx.nd.dot(c, mx.nd.ones((5, 2)))


def test_dot_kernels_direct():
    assert set(K.KERNELS["sp:csr_dns"]) == {0, 1, 2}
    assert set(K.KERNELS["sp:lazy_adam"]) == {0, 1, 2}


def test_dot_rsp_grad():
    A = _g("dot_A")
    w = mx.nd.array(_g("dot_B"))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(mx.nd.array(A).tostype("csr"), w)
    y.backward()
    assert w.grad.stype == str(GOLD["ag_dot_grad_stype"]) == "row_sparse"
    np.testing.assert_allclose(w.grad.asnumpy(), _g("ag_dot_grad"), rtol=1e-5, atol=1e-6)


# ---- elementwise ------------------------------------------------------------------------------
def test_elemwise_golden():
    X, Y = _g("ew_X"), _g("ew_Y")
    xr, yr = mx.nd.array(X).tostype("row_sparse"), mx.nd.array(Y).tostype("row_sparse")
    xc, yc = mx.nd.array(X).tostype("csr"), mx.nd.array(Y).tostype("csr")
    fns = {"add": mx.nd.elemwise_add, "sub": mx.nd.elemwise_sub, "mul": mx.nd.elemwise_mul}
    for name, f in fns.items():
        for key, z in ((f"ew_{name}_rsp", f(xr, yr)), (f"ew_{name}_rsp_dns", f(xr, mx.nd.array(Y)))):
            assert z.stype == _stype(key), key
            np.testing.assert_allclose(z.asnumpy(), _g(key), rtol=1e-6, err_msg=key)
    for name in ("add", "mul"):
        z = fns[name](xc, yc)
        assert z.stype == _stype(f"ew_{name}_csr")
        np.testing.assert_allclose(z.asnumpy(), _g(f"ew_{name}_csr"), rtol=1e-6)
    # + on sparse arrays goes through elemwise_add (as autograd's accumulation does)
    z = xr + yr
    assert z.stype == "row_sparse"
    np.testing.assert_allclose(z.asnumpy(), X + Y, rtol=1e-6)


def test_unary_golden():
    X = _g("ew_X")
    xr = mx.nd.array(X).tostype("row_sparse")
    for name in ("abs", "square", "sign", "relu", "negative"):
        z = getattr(mx.nd, name)(xr)
        assert z.stype == _stype(f"un_{name}")
        np.testing.assert_allclose(z.asnumpy(), _g(f"un_{name}"), rtol=1e-6)
    z = mx.nd.sqrt(mx.nd.abs(mx.nd.array(X).tostype("csr")))
    assert z.stype == _stype("un_sqrt_csr")
    np.testing.assert_allclose(z.asnumpy(), _g("un_sqrt_csr"), rtol=1e-6)
    z = xr * 3
    assert z.stype == _stype("mul_scalar")
    np.testing.assert_allclose(z.asnumpy(), _g("mul_scalar"), rtol=1e-6)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "rint", "trunc", "fix", "sqrt",
                                  "expm1", "log1p", "sin", "tan", "arcsin", "arctan", "sinh",
                                  "tanh", "arcsinh", "arctanh", "degrees", "radians", "_copy",
                                  "_div_scalar", "_mul_scalar", "Cast", "cast",
                                  "amp_cast"])
def test_storage_preserving_unaries(name):
    X = np.abs(_g("ew_X")) * 0.5
    for stype in ("row_sparse", "csr"):
        x = mx.nd.array(X).tostype(stype)
        kw = {}
        if name in ("_div_scalar", "_mul_scalar"):
            kw = {"scalar": 2.0}
        if name in ("Cast", "cast", "amp_cast"):
            kw = {"dtype": "float64"}
        f = getattr(mx.nd, name)
        z = f(x, **kw)
        ref = f(mx.nd.array(X), **kw).asnumpy()
        assert z.stype == stype, (name, stype)
        np.testing.assert_allclose(z.asnumpy(), ref, rtol=1e-6, atol=1e-7)


def test_sum_mean_golden():
    xc = mx.nd.array(_g("ew_X")).tostype("csr")
    for ax in (0, 1):
        np.testing.assert_allclose(mx.nd.sum(xc, axis=ax).asnumpy(), _g(f"sum_csr_{ax}"),
                                   rtol=1e-6)
        np.testing.assert_allclose(mx.nd.mean(xc, axis=ax).asnumpy(), _g(f"mean_csr_{ax}"),
                                   rtol=1e-6)


def test_retain_golden():
    xr = mx.nd.array(_g("ew_X")).tostype("row_sparse")
    z = mx.nd.sparse.retain(xr, mx.nd.array(_g("retain_idx"), dtype="int64"))
    assert z.stype == "row_sparse"
    np.testing.assert_array_equal(z.asnumpy(), _g("retain"))
    np.testing.assert_array_equal(z.indices.asnumpy(), _g("retain_rows"))
    z2 = mx.nd._sparse_retain(xr, mx.nd.array([0, 1, 2, 3, 4], dtype="int64"))
    np.testing.assert_array_equal(z2.asnumpy(), _g("ew_X"))
    np.testing.assert_array_equal(z2.indices.asnumpy(), np.arange(5))
    with pytest.raises(ValueError, match="_sparse_retain"):
        mx.nd._sparse_retain(mx.nd.ones((2, 2)), mx.nd.array([0], dtype="int64"))
    with pytest.raises(ValueError, match="_sparse_retain"):
        mx.nd.sparse_retain(mx.nd.ones((2, 2)), mx.nd.array([0], dtype="int64"))


def test_cast_storage_op():
    X = _g("ew_X")
    d = mx.nd.array(X)
    for st in ("csr", "row_sparse", "default"):
        y = mx.nd.cast_storage(d, stype=st)
        assert y.stype == st
        np.testing.assert_array_equal(y.asnumpy(), X)
        assert mx.nd.cast_storage(y, stype="default").stype == "default"
    x = mx.nd.array(X)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cast_storage(x, stype="row_sparse") * 2
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(X.shape, 2.0))


# ---- lazy optimizer updates ---------------------------------------------------------------------
def _opt(name, nstate, suffix="", sstype="default", wstype="row_sparse", **kw):
    W, G, S1, S2 = _g("opt_W"), _g("opt_G"), _g("opt_S1"), _g("opt_S2")
    g = mx.nd.array(G).tostype("row_sparse")
    w = mx.nd.array(W).tostype(wstype)
    st = [mx.nd.array(s).tostype(sstype) for s in (S1, S2)[:nstate]]
    getattr(mx.nd, name)(w, g, *st, out=w, **kw)
    np.testing.assert_allclose(w.asnumpy(), _g(f"opt_{name}{suffix}_w"), rtol=1e-5, atol=1e-6)
    for i, s in enumerate(st):
        np.testing.assert_allclose(s.asnumpy(), _g(f"opt_{name}{suffix}_s{i}"), rtol=1e-5,
                                   atol=1e-6)


def test_lazy_updates_golden():
    _opt("sgd_update", 0, lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
    _opt("sgd_update", 0, "_dns", wstype="default", lr=0.1, wd=0.01)
    _opt("sgd_update", 0, "_nolazy", lr=0.1, wd=0.01, lazy_update=False)
    _opt("sgd_mom_update", 1, lr=0.1, momentum=0.9, wd=0.01)
    _opt("sgd_mom_update", 1, "_rsp", "row_sparse", lr=0.1, momentum=0.9, wd=0.01)
    _opt("adam_update", 2, lr=0.01, wd=0.01, beta1=0.9, beta2=0.99, epsilon=1e-6)
    _opt("adam_update", 2, "_dns", wstype="default", lr=0.01, wd=0.01, beta1=0.9, beta2=0.99,
         epsilon=1e-6)
    _opt("adam_update", 2, "_nolazy", wstype="default", lr=0.01, wd=0.01, beta1=0.9,
         beta2=0.99, epsilon=1e-6, lazy_update=False)
    _opt("ftrl_update", 2, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
    _opt("ftrl_update", 2, "_rsp", "row_sparse", lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)
    W, G, S1 = _g("opt_W"), _g("opt_G"), _g("opt_S1")
    w = mx.nd.array(W).tostype("row_sparse")
    h = mx.nd.array(S1).tostype("row_sparse")
    mx.nd.sparse.adagrad_update(w, mx.nd.array(G).tostype("row_sparse"), h, out=w, lr=0.1,
                                epsilon=1e-7)
    np.testing.assert_allclose(w.asnumpy(), _g("opt_adagrad_w"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.asnumpy(), _g("opt_adagrad_s0"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_lazy_sgd_touches_only_present_rows(dtype):
    W = np.random.RandomState(3).uniform(-1, 1, (50, 4)).astype(dtype)
    G = np.zeros_like(W)
    G[[3, 17, 40]] = 1.0
    w = mx.nd.array(W, dtype=dtype)
    mx.nd.sgd_update(w, mx.nd.array(G, dtype=dtype).tostype("row_sparse"), out=w, lr=0.5,
                     wd=0.1)
    got = w.asnumpy()
    ref = W.astype(np.float64).copy()
    ref[[3, 17, 40]] = (1 - 0.05) * ref[[3, 17, 40]] - 0.5
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)
    untouched = np.setdiff1d(np.arange(50), [3, 17, 40])
    np.testing.assert_array_equal(got[untouched], W[untouched])


def test_storage_fallback_warns_once():
    from mxc.ndarray import sparse
    sparse._WARNED.discard("exp")
    x = mx.nd.array(_g("ew_X")).tostype("row_sparse")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        y = mx.nd.exp(x)
        mx.nd.exp(x)
    msgs = [str(w.message) for w in rec if "fallback" in str(w.message)]
    assert len(msgs) == 1 and "exp" in msgs[0]
    np.testing.assert_allclose(y.asnumpy(), np.exp(_g("ew_X")), rtol=1e-6)
    assert y.stype == "default"


def test_registered_names():
    for n in ("cast_storage", "_sparse_retain", "sparse_retain"):
        assert registry.get(n) is not None

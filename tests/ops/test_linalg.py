"""linalg_* operators and khatri_rao: forward vs numpy (batched, both triangles, both sides),
gradients vs central differences (potrf through a symmetric parametrisation), the
_backward_linalg_* kernels, MXNet 1.9.1 golden fixtures, errors naming the op."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import registry

from .oputil import check_forward, check_grad
from .test_dot import check_golden, golden_cases


def _nd(x):
    return mx.nd.array(x, dtype=x.dtype)


def _spd(rng, batch, n, dtype=np.float64):
    s = rng.standard_normal(batch + (n, n))
    return (s @ np.swapaxes(s, -1, -2) + n * np.eye(n)).astype(dtype)


def _tril(rng, batch, n, dtype=np.float64):
    m = np.tril(rng.standard_normal(batch + (n, n)))
    i = np.arange(n)
    m[..., i, i] = np.abs(m[..., i, i]) + 1.0
    return m.astype(dtype)


def _t(x):
    return np.swapaxes(x, -1, -2)


# ---- gemm / gemm2 --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_gemm_forward(dtype, ta, tb, rng):
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4)).astype(dtype)
    b = rng.standard_normal((2, 5, 4) if tb else (2, 4, 5)).astype(dtype)
    c = rng.standard_normal((2, 3, 5)).astype(dtype)
    A, B = (_t(a) if ta else a).astype(np.float64), (_t(b) if tb else b).astype(np.float64)
    kw = {"transpose_a": ta, "transpose_b": tb, "alpha": 1.5, "beta": -0.5}
    check_forward("linalg_gemm", [a, b, c], kw, (1.5 * A @ B - 0.5 * c).astype(dtype))
    kw.pop("beta")
    check_forward("linalg_gemm2", [a, b], kw, (1.5 * A @ B).astype(dtype))


def test_gemm_axis(rng):
    a = rng.standard_normal((3, 2, 4))     # rows on axis 0, batched over axis 1
    b = rng.standard_normal((4, 2, 5))
    c = rng.standard_normal((3, 2, 5))
    ref = np.einsum("ibk,kbj->ibj", a, b)
    check_forward("linalg_gemm2", [a, b], {"axis": 0}, ref)
    check_forward("_linalg_gemm", [a, b, c], {"axis": 0, "beta": 2.0}, ref + 2 * c)
    a4 = rng.standard_normal((2, 3, 4, 6))  # rows on axis 1, batched over 0 and 2
    b4 = rng.standard_normal((2, 5, 4, 6))
    check_forward("linalg_gemm2", [a4, b4], {"axis": 1, "transpose_b": True},
                  np.einsum("xikc,xjkc->xikj", a4, b4))


def test_gemm_float16_and_large(rng):
    a = rng.uniform(-1, 1, (3, 8)).astype(np.float16)
    b = rng.uniform(-1, 1, (8, 4)).astype(np.float16)
    got = mx.nd.linalg_gemm2(_nd(a), _nd(b)).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=3e-3, atol=3e-3)
    a = rng.standard_normal((70, 80)).astype(np.float32)
    b = rng.standard_normal((80, 90)).astype(np.float32)
    np.testing.assert_allclose(mx.nd.linalg_gemm2(_nd(a), _nd(b)).asnumpy(), a @ b,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_grad(ta, tb, rng):
    a = rng.standard_normal((2, 4, 3) if ta else (2, 3, 4))
    b = rng.standard_normal((2, 5, 4) if tb else (2, 4, 5))
    c = rng.standard_normal((2, 3, 5))
    check_grad("linalg_gemm", [a, b, c],
               {"transpose_a": ta, "transpose_b": tb, "alpha": 0.7, "beta": 1.3}, rng)
    check_grad("linalg_gemm2", [a, b], {"transpose_a": ta, "transpose_b": tb, "alpha": -2.0}, rng)


def test_gemm_axis_grad(rng):
    check_grad("linalg_gemm2", [rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 2, 5))],
               {"axis": 0}, rng)


# ---- triangular / Cholesky --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_potrf_potri(dtype, rng):
    p = _spd(rng, (2,), 4, dtype)
    l64 = np.linalg.cholesky(p.astype(np.float64))
    check_forward("linalg_potrf", [p], {}, l64.astype(dtype))
    check_forward("linalg_potrf", [p], {"lower": False}, _t(l64).astype(dtype))
    l = l64.astype(dtype)
    inv = np.linalg.inv(l64 @ _t(l64))
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(mx.nd.linalg_potri(_nd(l)).asnumpy(), inv, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(mx.nd.linalg_potri(_nd(np.ascontiguousarray(_t(l))),
                                                  lower=False).asnumpy(), inv,
                               rtol=rtol, atol=rtol)


def test_potrf_not_positive_definite():
    with pytest.raises(MXNetError, match="linalg_potrf.*positive definite"):
        mx.nd.linalg_potrf(mx.nd.array(-np.eye(3))).asnumpy()


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_grad_symmetric(lower, rng):
    """potrf reads one triangle, so its gradient is checked through A = S + S^T:
    d/dS f(potrf(S + S^T)) = dA + dA^T with MXNet's symmetric dA."""
    n = 3
    s = 0.3 * rng.standard_normal((2, n, n)) + n * np.eye(n)     # S + S^T positive definite
    head = rng.standard_normal((2, n, n))
    op = registry.get("linalg_potrf")
    kw = {"lower": lower}

    def f(sv):
        out = mx.nd.linalg_potrf(mx.nd.array(sv + _t(sv), dtype=np.float64), **kw).asnumpy()
        return float(np.sum(out * head))

    a = mx.nd.array(s + _t(s), dtype=np.float64)
    out = mx.nd.linalg_potrf(a, **kw)
    da = op.grad(mx.nd, op.parse(kw), [a], [out], [mx.nd.array(head, dtype=np.float64)])[0]
    da = da.asnumpy()
    assert np.allclose(da, _t(da))      # MXNet's dA is symmetric
    num = np.zeros_like(s)
    eps = 1e-6
    for idx in np.ndindex(s.shape):
        sp, sm = s.copy(), s.copy()
        sp[idx] += eps
        sm[idx] -= eps
        num[idx] = (f(sp) - f(sm)) / (2 * eps)
    np.testing.assert_allclose(da + _t(da), num, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lower", [True, False])
def test_potri_grad(lower, rng):
    l = _tril(rng, (2,), 3)
    if not lower:
        l = np.ascontiguousarray(_t(l))
    check_grad("linalg_potri", [l], {"lower": lower}, rng)


TRI = [dict(transpose=t, rightside=r, lower=lo, alpha=al)
       for t in (False, True) for r in (False, True) for lo in (True, False) for al in (1.0, -1.5)]


def _tri_case(rng, kw, batch=(2,)):
    a = _tril(rng, batch, 3)
    if not kw["lower"]:
        a = np.ascontiguousarray(_t(a))
    b = rng.standard_normal(batch + ((4, 3) if kw["rightside"] else (3, 4)))
    return a, b


@pytest.mark.parametrize("kw", TRI, ids=lambda k: "-".join(f"{a}{int(v)}" for a, v in k.items()))
def test_trsm_trmm_forward(kw, rng):
    a, b = _tri_case(rng, kw)
    op_a = _t(a) if kw["transpose"] else a
    if kw["rightside"]:
        trmm, trsm = b @ op_a, b @ np.linalg.inv(op_a)
    else:
        trmm, trsm = op_a @ b, np.linalg.solve(op_a, b)
    check_forward("linalg_trmm", [a, b], kw, kw["alpha"] * trmm)
    check_forward("_linalg_trsm", [a, b], kw, kw["alpha"] * trsm)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(mx.nd.linalg_trsm(_nd(a32), _nd(b32), **kw).asnumpy(),
                               kw["alpha"] * trsm, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kw", TRI[::2], ids=lambda k: "-".join(f"{a}{int(v)}" for a, v in k.items()))
def test_trsm_trmm_grad(kw, rng):
    a, b = _tri_case(rng, kw, batch=())
    check_grad("linalg_trsm", [a, b], kw, rng)
    check_grad("linalg_trmm", [a, b], kw, rng)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_syrk(transpose, dtype, rng):
    a = rng.standard_normal((2, 3, 4)).astype(dtype)
    a64 = a.astype(np.float64)
    ref = 0.5 * (_t(a64) @ a64 if transpose else a64 @ _t(a64))
    check_forward("linalg_syrk", [a], {"transpose": transpose, "alpha": 0.5}, ref.astype(dtype))
    check_grad("linalg_syrk", [rng.standard_normal((2, 3, 4))],
               {"transpose": transpose, "alpha": 0.5}, rng)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 1, 2, 2)])
def test_sumlogdiag(shape, rng):
    a = rng.uniform(0.5, 2.0, shape)
    ref = np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1)
    ref = ref.reshape(1) if len(shape) == 2 else ref
    check_forward("linalg_sumlogdiag", [a], {}, ref)
    check_forward("linalg_sumlogdiag", [a.astype(np.float32)], {}, ref.astype(np.float32))
    check_grad("linalg_sumlogdiag", [a], {}, rng)


# ---- backward kernels directly (MXNet's names) ----------------------------------------------------
def test_backward_ops_shapes(rng):
    l = _tril(rng, (2,), 3)
    g = rng.standard_normal((2, 3, 3))
    assert mx.nd._backward_linalg_potrf(_nd(g), _nd(l)).shape == (2, 3, 3)
    assert mx.nd._backward_linalg_potri(_nd(g), _nd(l), _nd(g)).shape == (2, 3, 3)
    b = rng.standard_normal((2, 3, 4))
    da, db = mx.nd._backward_linalg_trmm(_nd(b), _nd(l), _nd(b))
    assert da.shape == (2, 3, 3) and db.shape == (2, 3, 4)
    da, db = mx.nd._backward_linalg_trsm(_nd(b), _nd(l), _nd(b), _nd(b))
    assert da.shape == (2, 3, 3) and db.shape == (2, 3, 4)
    d = mx.nd._backward_linalg_sumlogdiag(_nd(rng.standard_normal(2)), _nd(l)).asnumpy()
    assert d.shape == (2, 3, 3) and np.all(d[:, 0, 1] == 0)


# ---- khatri_rao ------------------------------------------------------------------------------------
def _kr_ref(*ms):
    out = ms[0]
    for m in ms[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, m.shape[1])
    return out


def test_khatri_rao(rng):
    a = np.array([[1, -1], [2, -3]], np.float32)
    b = np.array([[1, 4], [2, 5], [3, 6]], np.float32)
    check_forward("khatri_rao", [a, b], {}, np.array([[1, -4], [2, -5], [3, -6], [2, -12],
                                                      [4, -15], [6, -18]], np.float32))
    ms = [rng.standard_normal((n, 3)) for n in (2, 3, 4)]
    check_forward("khatri_rao", ms, {}, _kr_ref(*ms))
    check_forward("khatri_rao", ms[:1], {}, ms[0])
    with pytest.raises(ValueError, match="khatri_rao.*columns"):
        mx.nd.khatri_rao(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 4)))


# ---- errors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,msg", [
    (lambda: mx.nd.linalg_gemm2(mx.nd.zeros((3, 4)), mx.nd.zeros((5, 6))), "_linalg_gemm2.*incompatible"),
    (lambda: mx.nd.linalg_gemm2(mx.nd.zeros((3, 4)), mx.nd.zeros((2, 4, 6))), "_linalg_gemm2.*dimensions"),
    (lambda: mx.nd.linalg_gemm2(mx.nd.zeros((3, 4)), mx.nd.zeros((4, 6)), axis=1), "_linalg_gemm2.*axis"),
    (lambda: mx.nd.linalg_gemm(mx.nd.zeros((3, 4)), mx.nd.zeros((4, 6)), mx.nd.zeros((3, 5))),
     "_linalg_gemm.*C has shape"),
    (lambda: mx.nd.linalg_potrf(mx.nd.zeros((3, 4))), "_linalg_potrf.*square"),
    (lambda: mx.nd.linalg_potrf(mx.nd.zeros((3, 3), dtype=np.float16)), "_linalg_potrf.*float32"),
    (lambda: mx.nd.linalg_trsm(mx.nd.zeros((3, 3)), mx.nd.zeros((4, 2))), "_linalg_trsm.*incompatible"),
    (lambda: mx.nd.linalg_trmm(mx.nd.zeros((2, 3, 3)), mx.nd.zeros((3, 3, 2))), "_linalg_trmm.*same"),
    (lambda: mx.nd.linalg_syrk(mx.nd.zeros((3,))), "_linalg_syrk"),
    (lambda: mx.nd.linalg_sumlogdiag(mx.nd.zeros((3, 2))), "_linalg_sumlogdiag.*square"),
])
def test_errors(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


GOLDEN_OPS = {"linalg_gemm", "linalg_gemm2", "linalg_potrf", "linalg_potri", "linalg_trsm",
              "linalg_trmm", "linalg_syrk", "linalg_sumlogdiag", "khatri_rao"}


@pytest.mark.parametrize("case", golden_cases(GOLDEN_OPS), ids=lambda c: c[0])
def test_golden(case):
    """Forward and gradients against MXNet 1.9.1 (tests/data/make_matrix_golden.py)."""
    check_golden(*case)


def test_linalg_namespace():
    """mx.nd.linalg.<name> is the _linalg_<name> operator, as MXNet's generated namespace."""
    a = mx.nd.array(np.array([[2.0, 1.0], [0.0, 3.0]]))
    np.testing.assert_allclose(mx.nd.linalg.gemm2(a, a, transpose_b=True).asnumpy(),
                               a.asnumpy() @ a.asnumpy().T)
    assert mx.nd.linalg.potrf is mx.nd._linalg_potrf
    assert {"gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "sumlogdiag"} <= set(
        mx.nd.linalg.__all__)

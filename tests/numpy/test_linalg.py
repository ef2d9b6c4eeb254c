"""mx.np.linalg against numpy.linalg."""
import numpy as onp
import pytest

import mxc as mx
from mxc import np


def _spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * onp.eye(n)


def test_against_numpy(rng):
    A = _spd(rng, 4)
    a = np.array(A, dtype="float64")
    for ordv in (None, "fro", "nuc", 1, -1, 2, -2, onp.inf):
        onp.testing.assert_allclose(np.linalg.norm(a, ordv).item(), onp.linalg.norm(A, ordv),
                                    rtol=1e-8)
    v = rng.standard_normal(5)
    for ordv in (None, 0, 1, 3, onp.inf, -onp.inf):
        onp.testing.assert_allclose(np.linalg.norm(np.array(v, dtype="float64"), ordv).item(),
                                    onp.linalg.norm(v, ordv), rtol=1e-8)
    onp.testing.assert_allclose(np.linalg.inv(a).asnumpy(), onp.linalg.inv(A), rtol=1e-8, atol=1e-12)
    onp.testing.assert_allclose(np.linalg.det(a).item(), onp.linalg.det(A), rtol=1e-8)
    s, l = np.linalg.slogdet(a)
    ws, wl = onp.linalg.slogdet(A)
    assert s.item() == ws and abs(l.item() - wl) < 1e-8
    b = rng.standard_normal((4, 2))
    onp.testing.assert_allclose(np.linalg.solve(a, np.array(b, dtype="float64")).asnumpy(),
                                onp.linalg.solve(A, b), rtol=1e-8, atol=1e-12)
    onp.testing.assert_allclose(np.linalg.cholesky(a).asnumpy(), onp.linalg.cholesky(A), rtol=1e-8)
    w, V = np.linalg.eigh(a)
    ww, _ = onp.linalg.eigh(A)
    onp.testing.assert_allclose(w.asnumpy(), ww, rtol=1e-8)
    Vn = V.asnumpy()
    onp.testing.assert_allclose(Vn @ onp.diag(ww) @ Vn.T, A, rtol=1e-8, atol=1e-10)
    onp.testing.assert_allclose(np.linalg.eigvalsh(a).asnumpy(), ww, rtol=1e-8)
    M = rng.standard_normal((3, 5))
    ut, sv, vt = np.linalg.svd(np.array(M, dtype="float64"))
    onp.testing.assert_allclose(sv.asnumpy(), onp.linalg.svd(M)[1], rtol=1e-7)
    onp.testing.assert_allclose((ut.asnumpy() * sv.asnumpy()) @ vt.asnumpy(), M, atol=1e-9)
    T = rng.standard_normal((5, 3))
    q, r = np.linalg.qr(np.array(T, dtype="float64"))
    onp.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), T, atol=1e-10)
    onp.testing.assert_allclose(q.asnumpy().T @ q.asnumpy(), onp.eye(3), atol=1e-10)
    onp.testing.assert_allclose(np.linalg.pinv(np.array(M, dtype="float64")).asnumpy(),
                                onp.linalg.pinv(M), rtol=1e-6, atol=1e-9)
    R = onp.outer(onp.arange(4.0), onp.arange(3.0))
    assert np.linalg.matrix_rank(np.array(R, dtype="float64")).item() == 1
    onp.testing.assert_allclose(np.linalg.matrix_power(a, 3).asnumpy(),
                                onp.linalg.matrix_power(A, 3), rtol=1e-8)


def test_errors_and_grad(rng):
    with pytest.raises(ValueError):
        np.linalg.inv(np.ones((2, 3)))
    A = _spd(rng, 3)
    a = np.array(A, dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        d = np.linalg.det(a)
    d.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.linalg.det(A) * onp.linalg.inv(A).T,
                                rtol=1e-7)


def test_eig_eigvals_against_numpy():
    a = onp.array([[2.0, 1.0, 0.5], [0.3, 3.0, 1.0], [0.0, 0.2, 1.0]], dtype=onp.float32)
    w, v = np.linalg.eig(np.array(a))
    assert w.dtype == onp.float32 and v.shape == (3, 3)
    onp.testing.assert_allclose(sorted(w.asnumpy()), sorted(onp.linalg.eigvals(a).real),
                                rtol=1e-5)
    # A v = v diag(w)
    onp.testing.assert_allclose(a @ v.asnumpy(), v.asnumpy() * w.asnumpy(), atol=1e-5)
    onp.testing.assert_allclose(sorted(np.linalg.eigvals(np.array(a)).asnumpy()),
                                sorted(w.asnumpy()), rtol=1e-6)
    batch = onp.stack([a, a.T * 2]).astype(onp.float64)
    wb = np.linalg.eigvals(np.array(batch))
    assert wb.shape == (2, 3) and wb.dtype == onp.float64


def test_eig_refuses_complex_and_non_square():
    with pytest.raises(mx.base.MXNetError, match="eig.*complex eigenvalues"):
        np.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="eigvals"):
        np.linalg.eigvals(np.ones((2, 3)))


def test_cond():
    a = onp.array([[1.0, 2.0], [3.0, 4.0]], dtype=onp.float32)
    for p in (None, 1, onp.inf, "fro"):
        onp.testing.assert_allclose(float(np.linalg.cond(np.array(a), p)),
                                    onp.linalg.cond(a, p), rtol=1e-5)


def test_result_types_are_numpys():
    m = onp.array([[2.0, 1.0], [1.0, 3.0]], dtype=onp.float32)
    for mx_fn, onp_fn in ((np.linalg.eig, onp.linalg.eig), (np.linalg.eigh, onp.linalg.eigh),
                          (np.linalg.slogdet, onp.linalg.slogdet)):
        got, want = mx_fn(np.array(m)), onp_fn(m)
        assert type(got) is type(want) and got._fields == want._fields
    assert np.linalg.eigh(np.array(m)).eigenvalues.shape == (2,)


def test_pinv_batched_rcond_and_tensorsolve_axes():
    rng = onp.random.RandomState(0)
    a = rng.rand(4, 6, 5).astype(onp.float32)
    rcond = onp.array([1e-3, 0.5, 1e-3, 0.9], dtype=onp.float32)
    onp.testing.assert_allclose(np.linalg.pinv(np.array(a), np.array(rcond)).asnumpy(),
                                onp.linalg.pinv(a, rcond), rtol=1e-3, atol=1e-4)
    a = rng.rand(2, 3, 3, 4, 2).astype(onp.float64)
    b = rng.rand(3, 4)
    onp.testing.assert_allclose(
        np.linalg.tensorsolve(np.array(a), np.array(b), axes=(0, 2, 4)).asnumpy(),
        onp.linalg.tensorsolve(a, b, axes=(0, 2, 4)), rtol=1e-4)
    m = rng.rand(1, 1)
    assert np.linalg.tensorsolve(np.array(m), np.ones((1, 1))).shape == (1, 1)

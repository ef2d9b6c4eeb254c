"""_linalg_syevd, gelqf, inverse, det, slogdet, extractdiag, makediag, extracttrian, maketrian:
numpy references, central-difference gradients and MXNet 1.9.1 goldens (misc_golden.npz)."""
import numpy as np
import pytest

import mxc as mx
from .oputil import check_forward, check_grad
from .test_misc_ops import golden_cases, run_golden

LINALG = ("_linalg_syevd", "_linalg_gelqf", "_linalg_inverse", "_linalg_det", "_linalg_slogdet",
          "_linalg_extractdiag", "_linalg_makediag", "_linalg_extracttrian", "_linalg_maketrian")


@pytest.mark.parametrize("name", golden_cases(LINALG))
def test_golden(name):
    run_golden(name, rtol=1e-4, atol=1e-4)


def _spd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3)).astype(dtype)
    check_forward("_linalg_inverse", [a], {}, np.linalg.inv(a).astype(dtype))
    check_forward("_linalg_det", [a], {}, np.linalg.det(a).astype(dtype))
    s, l = np.linalg.slogdet(a)
    check_forward("_linalg_slogdet", [a], {}, [s.astype(dtype), l.astype(dtype)])
    check_forward("_linalg_extractdiag", [a], {"offset": 1},
                  np.diagonal(a, 1, axis1=1, axis2=2).copy())
    v = rng.standard_normal((2, 3)).astype(dtype)
    check_forward("_linalg_makediag", [v], {"offset": -1},
                  np.stack([np.diag(x, -1) for x in v]).astype(dtype))
    tri = np.stack([x[np.tril_indices(3)] for x in a])
    check_forward("_linalg_extracttrian", [a], {}, tri)
    check_forward("_linalg_maketrian", [tri], {}, np.tril(a))
    triu = np.stack([x.T[np.tril_indices(3)] for x in a])
    check_forward("_linalg_extracttrian", [a], {"lower": False}, triu)


def test_factorisations():
    rng = np.random.default_rng(1)
    s = _spd(rng, 2, 4, 4)
    U, L = [x.asnumpy() for x in mx.nd.linalg.syevd(mx.nd.array(s, dtype="float64"))]
    np.testing.assert_allclose(L, np.linalg.eigvalsh(s), rtol=1e-10)
    np.testing.assert_allclose(np.swapaxes(U, 1, 2) @ (L[..., None] * U), s, atol=1e-10)
    a = rng.standard_normal((2, 3, 5))
    Q, Lq = [x.asnumpy() for x in mx.nd.linalg.gelqf(mx.nd.array(a, dtype="float64"))]
    np.testing.assert_allclose(Lq @ Q, a, atol=1e-12)
    np.testing.assert_allclose(Q @ np.swapaxes(Q, 1, 2), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    assert np.allclose(np.triu(Lq, 1), 0)


def test_grads():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    for op in ("_linalg_inverse", "_linalg_det", "_linalg_slogdet"):
        check_grad(op, [a], {}, rng, rtol=1e-4, atol=1e-6)
    check_grad("_linalg_gelqf", [rng.standard_normal((2, 3, 4))], {}, rng, rtol=1e-4, atol=1e-6)
    for op, kw in [("_linalg_extractdiag", {"offset": 1}), ("_linalg_extracttrian", {"offset": -1}),
                   ("_linalg_extracttrian", {"lower": False})]:
        check_grad(op, [a], kw, rng)
    check_grad("_linalg_makediag", [rng.standard_normal((2, 3))], {"offset": 1}, rng)
    check_grad("_linalg_maketrian", [rng.standard_normal((2, 6))], {"offset": 1}, rng)


def test_errors():
    with pytest.raises(Exception, match="_linalg_inverse"):
        mx.nd.linalg.inverse(mx.nd.ones((2, 3)))
    with pytest.raises(Exception, match="_linalg_gelqf"):
        mx.nd.linalg.gelqf(mx.nd.ones((4, 3)))
    with pytest.raises(Exception, match="triangular"):
        mx.nd.linalg.maketrian(mx.nd.ones((4,)))
    a = np.random.default_rng(3).standard_normal((2, 3, 3)) + 3 * np.eye(3)
    got = mx.nd.linalg.inverse(mx.nd.array(a, dtype="float16")).asnumpy()
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, np.linalg.inv(a.astype(np.float16).astype(np.float64)),
                               rtol=2e-3, atol=2e-3)
    got = mx.nd.linalg.extracttrian(mx.nd.array(a, dtype="float16")).asnumpy()
    np.testing.assert_array_equal(got, mx.nd.linalg.extracttrian(mx.nd.array(a)).asnumpy()
                                  .astype(np.float16))
    with pytest.raises(Exception, match="float32"):
        mx.nd.linalg.det(mx.nd.ones((2, 2), dtype="int32"))
    with pytest.raises(Exception, match="_backward_linalg_syevd"):
        mx.nd._backward_linalg_syevd(mx.nd.ones((3, 3)), mx.nd.ones((2,)), mx.nd.ones((3, 3)),
                                     mx.nd.ones((3,)))

"""``mx.np.linalg``: numpy's linear algebra on the registry's linalg operators (LAPACK-backed
potrf/syevd/gelqf/inverse/det), composed where the registry has no direct operator."""
import numbers

import numpy as onp

from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from . import _core
from ._core import wrap, nd, cast, reshape_view, default_float
from . import _op as F
from .multiarray import tril, triu, eye
from . import _host

__all__ = ["norm", "svd", "inv", "det", "slogdet", "solve", "cholesky", "eigh", "eigvalsh",
           "qr", "pinv", "matrix_rank", "tensorinv", "tensorsolve", "matrix_power", "lstsq",
           "multi_dot", "eig", "eigvals", "cond", "LinAlgError"]


class LinAlgError(MXNetError, ValueError):
    """A linear-algebra input that has no answer (singular matrix, not positive definite)."""


def _fl(a):
    a = _core.asarray_like(a)
    return a if a.dtype.kind == "f" and a.dtype != onp.dtype(onp.float16) else \
        cast(a, default_float())


def _square(a, what):
    if a.ndim < 2:
        raise LinAlgError(f"{what}: {a.ndim}-dimensional array given. Array must be at least "
                          f"two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"{what}: Last 2 dimensions of the array must be square")


def _op1(names, a):
    reg = F._registry.names()
    for n in names:
        if n in reg:
            return getattr(nd(), n)(a)
    raise MXNetError(f"mx.np.linalg: the registry has none of {names}")


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002  (numpy's name)
    x = _fl(x)
    if axis is None:
        if ord is None or (ord in ("fro", "f") and x.ndim == 2):
            return F.sqrt(F.sum(F.square(x), keepdims=keepdims)) if ord is None or x.ndim == 2 \
                else None
        if x.ndim == 1:
            axis = (0,)
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (numbers.Integral, onp.integer)):
        axis = (int(axis),)
    axis = tuple(axis)
    if len(axis) == 1:
        ax = axis
        a = F.absolute(x)
        if ord is None or ord == 2:
            return F.sqrt(F.sum(F.square(x), ax, keepdims=keepdims))
        if ord == onp.inf:
            return F.amax(a, ax, keepdims=keepdims)
        if ord == -onp.inf:
            return F.amin(a, ax, keepdims=keepdims)
        if ord == 0:
            return cast(F.sum(F.not_equal(x, 0), ax, keepdims=keepdims), x.dtype)
        if ord == 1:
            return F.sum(a, ax, keepdims=keepdims)
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        return F.power(F.sum(F.power(a, float(ord)), ax, keepdims=keepdims), 1.0 / float(ord))
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    r0, c0 = (_core.norm_axis(axis[0], x.ndim, "norm"), _core.norm_axis(axis[1], x.ndim, "norm"))
    if r0 == c0:
        raise ValueError("Duplicate axes given.")
    if ord in (None, "fro", "f"):
        res = F.sqrt(F.sum(F.square(x), (r0, c0), keepdims=keepdims))
        return res
    a = F.absolute(x)
    if ord in (1, -1):
        s = F.sum(a, r0, keepdims=True)
        res = (F.amax if ord == 1 else F.amin)(s, c0, keepdims=True)
    elif ord in (onp.inf, -onp.inf):
        s = F.sum(a, c0, keepdims=True)
        res = (F.amax if ord == onp.inf else F.amin)(s, r0, keepdims=True)
    elif ord in (2, -2, "nuc"):
        m = F.moveaxis(x, (r0, c0), (-2, -1))
        sv = _singular_values(m)
        res = F.amax(sv, -1) if ord == 2 else F.amin(sv, -1) if ord == -2 else F.sum(sv, -1)
        if keepdims:
            res = F.expand_dims(F.expand_dims(res, -1), -1)
            res = F.moveaxis(res, (-2, -1), (r0, c0))
        return res
    else:
        raise ValueError("Invalid norm order for matrices.")
    if not keepdims:
        res = F.squeeze(res, (r0, c0))
    return res


# numpy 2 returns named tuples (EigResult, EighResult, SlogdetResult); mx.np returns the same
# types, so that code (and numpy's dispatch) sees what numpy gives. Taken from numpy's results,
# not its private modules.
_EigResult = type(onp.linalg.eig(onp.eye(1)))
_EighResult = type(onp.linalg.eigh(onp.eye(1)))
_SlogdetResult = type(onp.linalg.slogdet(onp.eye(1)))


def _eigh_sym(a):
    """(w ascending, v with eigenvectors in columns) of symmetric a (..., n, n)."""
    u, w = nd()._linalg_syevd(a)
    return wrap(w), F.swapaxes(wrap(u), -1, -2)


def eigh(a, UPLO="L"):  # noqa: N803  (numpy's name)
    a = _fl(a)
    _square(a, "eigh")
    sym = tril(a) if UPLO == "L" else triu(a)
    diag = F.multiply(a, eye(a.shape[-1], dtype=a.dtype, ctx=a.context))
    sym = F.subtract(F.add(sym, F.swapaxes(sym, -1, -2)), diag)
    return _EighResult(*_eigh_sym(sym))


def eigvalsh(a, UPLO="L"):  # noqa: N803
    return eigh(a, UPLO)[0]


def _singular_values(a):
    m, n = a.shape[-2], a.shape[-1]
    g = F.matmul(a, F.swapaxes(a, -1, -2)) if m <= n else F.matmul(F.swapaxes(a, -1, -2), a)
    w, _ = _eigh_sym(g)
    return F.flip(F.sqrt(F.maximum(w, 0)), -1)


def svd(a):
    """(ut, s, v) with a = ut @ diag(s) @ v, singular values descending, as MXNet's np.linalg.svd
    (numpy's u, s, vh with full_matrices=False, for a with rows <= columns)."""
    a = _fl(a)
    if a.ndim < 2:
        raise LinAlgError("svd: array must be at least two-dimensional")
    m, n = a.shape[-2], a.shape[-1]
    if m > n:
        raise LinAlgError(f"svd: MXNet's svd needs rows <= columns, got {a.shape[-2:]} "
                          f"(use svd(a.T) and transpose the factors)")
    g = F.matmul(a, F.swapaxes(a, -1, -2))
    w, u = _eigh_sym(g)
    w = F.flip(w, -1)
    u = F.flip(u, -1)
    s = F.sqrt(F.maximum(w, 0))
    safe = F.where(F.greater(s, 0), s, 1)
    v = F.true_divide(F.matmul(F.swapaxes(u, -1, -2), a), F.expand_dims(safe, -1))
    return u, s, v


def inv(a):
    a = _fl(a)
    _square(a, "inv")
    return wrap(_op1(("_npi_inv", "linalg_inverse", "_linalg_inverse"), a))


def det(a):
    a = _fl(a)
    _square(a, "det")
    r = wrap(_op1(("_npi_det", "linalg_det", "_linalg_det"), a))
    return reshape_view(r, a.shape[:-2])


def slogdet(a):
    a = _fl(a)
    _square(a, "slogdet")
    sign, logdet = _op1(("_npi_slogdet", "linalg_slogdet", "_linalg_slogdet"), a)
    return _SlogdetResult(reshape_view(wrap(sign), a.shape[:-2]),
                          reshape_view(wrap(logdet), a.shape[:-2]))


def solve(a, b):
    a, b = _fl(a), _fl(b)
    _square(a, "solve")
    if b.ndim == a.ndim - 1:
        return F.squeeze(F.matmul(inv(a), F.expand_dims(b, -1)), -1)
    return F.matmul(inv(a), b)


def cholesky(a):
    a = _fl(a)
    _square(a, "cholesky")
    try:
        r = wrap(nd().linalg_potrf(a, lower=True))
        r.wait_to_read()
    except MXNetError as e:
        raise LinAlgError(f"cholesky: Matrix is not positive definite ({e})") from None
    return r


def qr(a, mode="reduced"):
    """(q, r) with a = q @ r for a with rows >= columns (through the LQ factorisation of a.T)."""
    a = _fl(a)
    if mode not in ("reduced",):
        raise NotImplementedError("qr: only mode='reduced' is supported")
    m, n = a.shape[-2], a.shape[-1]
    if m < n:
        raise LinAlgError("qr: mxc's qr needs rows >= columns")
    q, lo = nd().linalg_gelqf(F.swapaxes(a, -1, -2))
    return F.swapaxes(wrap(q), -1, -2), F.swapaxes(wrap(lo), -1, -2)


def pinv(a, rcond=1e-15, hermitian=False):
    a = _fl(a)
    m, n = a.shape[-2], a.shape[-1]
    if m > n:
        return F.swapaxes(pinv(F.swapaxes(a, -1, -2), rcond), -1, -2)
    u, s, v = svd(a)
    if isinstance(rcond, NDArray) or onp.ndim(rcond):      # one per matrix of the batch
        rcond = F.expand_dims(_core.asarray_like(rcond, a.context), -1)
    cutoff = F.multiply(F.amax(s, -1, keepdims=True), rcond)
    sinv = F.where(F.greater(s, cutoff), F.true_divide(1, F.where(F.greater(s, 0), s, 1)), 0)
    sinv = cast(sinv, a.dtype)
    return F.matmul(F.swapaxes(v, -1, -2), F.multiply(F.expand_dims(sinv, -1),
                                                       F.swapaxes(u, -1, -2)))


def matrix_rank(M, tol=None, hermitian=False):  # noqa: N803
    a = _fl(M)
    if a.ndim < 2:
        return cast(F.any(F.not_equal(a, 0)), onp.int64)
    s = _singular_values(a)
    if tol is None:
        eps = onp.finfo(a.dtype).eps
        tol = F.multiply(F.amax(s, -1, keepdims=True), max(a.shape[-2:]) * eps)
    return F.sum(F.greater(s, tol), -1, dtype="int64")


def matrix_power(a, n):
    a = _fl(a)
    _square(a, "matrix_power")
    if n < 0:
        a, n = inv(a), -n
    result = F.broadcast_to(eye(a.shape[-1], dtype=a.dtype, ctx=a.context), a.shape)
    base = a
    while n:
        if n & 1:
            result = F.matmul(result, base)
        n >>= 1
        if n:
            base = F.matmul(base, base)
    return result


def multi_dot(arrays):
    r = arrays[0]
    for x in arrays[1:]:
        r = F.dot(r, x)
    return r


def lstsq(a, b, rcond="warn"):
    a, b = _fl(a), _fl(b)
    x = F.matmul(pinv(a), b)
    resid = F.sum(F.square(F.subtract(F.matmul(a, x), b)), 0)
    return x, resid, matrix_rank(a), _singular_values(a)


def tensorinv(a, ind=2):
    a = _fl(a)
    oshape = a.shape[:ind]
    ishape = a.shape[ind:]
    n = int(onp.prod(oshape))
    return reshape_view(inv(a.reshape(n, -1)), ishape + oshape)


def tensorsolve(a, b, axes=None):
    a, b = _fl(a), _fl(b)
    if axes is not None:        # numpy: those axes of a move to the end
        rest = [k for k in range(a.ndim) if k not in [x % a.ndim for x in axes]]
        a = F.transpose(a, tuple(rest) + tuple(x % a.ndim for x in axes))
    xshape = a.shape[-(a.ndim - b.ndim):]     # numpy's rule (all of a.shape when ranks match)
    n = int(onp.prod(xshape))
    if n * n != a.size or n != b.size:
        raise LinAlgError(f"tensorsolve: a {a.shape} and b {b.shape} do not make a square system")
    x = solve(a.reshape(n, n), b.reshape(n))
    return reshape_view(x, xshape)


def _eig_real(a, what):
    """numpy's eig of a real (..., n, n) array on the host LAPACK (geev), as MXNet's operator
    computes it: real results only, in the input's float dtype; MXNet's operator has no gradient
    either. Complex eigenvalues are refused as MXNet refuses them."""
    a = _fl(a)
    _square(a, what)
    w, v = onp.linalg.eig(a.asnumpy())
    if onp.iscomplexobj(w):
        if onp.any(onp.abs(w.imag) > 1e-15):
            raise MXNetError(f"mx.np.linalg.{what}: the matrix has complex eigenvalues, which "
                             "mx.np (as MXNet 1.9.1) does not support")
        w, v = w.real, v.real
    return _EigResult(_host.from_host(w.astype(a.dtype), a.context, what),
                      _host.from_host(v.astype(a.dtype), a.context, what))


def eig(a):
    """(w, v): the eigenvalues and right eigenvectors (columns of v) of a general real square
    matrix (MXNet: real eigenvalues only)."""
    return _eig_real(a, "eig")


def eigvals(a):
    return _eig_real(a, "eigvals")[0]


cond = _host.host_function(onp.linalg.cond, "linalg.cond")


# MXNet's np.linalg.fallback_linalg (it takes names from this module, so it comes last)
from . import fallback_linalg  # noqa: E402,F401

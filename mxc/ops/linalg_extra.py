"""More of MXNet 1.9.1's linalg operators: _linalg_syevd, _linalg_gelqf, _linalg_inverse,
_linalg_det, _linalg_slogdet, _linalg_extractdiag, _linalg_makediag, _linalg_extracttrian,
_linalg_maketrian (with MXNet's linalg_* and _npi_* aliases), batched over leading axes.

Kernels: mxc/ops/cpu/linalg_extra.pyx (csrc/kernels/linalg_extra.h). Gradients as MXNet's
la_op: syevd through _backward_linalg_syevd, the others written with F operators.
Beyond MXNet (float32/float64 only), the forwards also take float16, computed in double.
"""
import numpy as np

from .params import Param
from .registry import OpDef, register, kernel_forward


def _fdtype(op, dtype):
    d = np.dtype(dtype)
    if d not in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{op}: only float16, float32 and float64 are supported, got {d.name}")
    return d


def _square(op, shape):
    s = tuple(shape)
    if len(s) < 2:
        raise ValueError(f"{op}: input must have at least 2 dimensions, got shape {s}")
    if s[-1] != s[-2]:
        raise ValueError(f"{op}: input must be a tensor of square matrices, got shape {s}")
    return s


def _batch(shape, k=2):
    return int(np.prod(shape[:-k])) if len(shape) > k else 1


def _tr(F, x):
    """Swap the last two axes."""
    nd = x.ndim
    return F.transpose(x, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


# ---- syevd -----------------------------------------------------------------------------------
def _syevd_infer(a, s, d):
    s = _square("_linalg_syevd", s[0])
    dt = _fdtype("_linalg_syevd", d[0])
    return [s, s[:-1]], [dt, dt]


def _syevd_grad(F, a, inputs, outputs, out_grads):
    U, L = outputs
    dU, dL = out_grads
    return [F._backward_linalg_syevd(dU, dL, U, L)]


def _bwd_syevd_infer(a, s, d):
    sh = _square("_backward_linalg_syevd", s[0])
    dt = _fdtype("_backward_linalg_syevd", d[0])
    if tuple(s[2]) != sh or tuple(s[1]) != sh[:-1] or tuple(s[3]) != sh[:-1]:
        raise ValueError(f"_backward_linalg_syevd: inconsistent shapes {[tuple(x) for x in s]}")
    return [sh], [dt]


# the kernels' slots (csrc/kernels/linalg_extra.h) begin with the number of matrices and their
# size: (batch, n) of square ones, (batch, m, n) otherwise
def _matrices(j):
    """(batch, n) of input j's n x n matrices"""
    return lambda a, i, o: (_batch(i[j].shape), i[j].shape[-1])


_BN = ("batch", "n")


register(OpDef("_linalg_syevd", inputs=("A",), infer=_syevd_infer, num_outputs=2,
               forward=kernel_forward("linalg_extra", "syevd", ints=_BN, floats=(),
                                      fill={_BN: _matrices(0)},
                                      name="_linalg_syevd"),
               grad=_syevd_grad,
               doc="Eigendecomposition of symmetric matrices: A = U^T diag(L) U, eigenvalues "
                   "ascending, each row of U signed so its largest entry is positive."))
register(OpDef("_backward_linalg_syevd", inputs=("dU", "dL", "U", "L"), infer=_bwd_syevd_infer,
               forward=kernel_forward("linalg_extra", "syevd_bwd", ints=_BN, floats=(),
                                      fill={_BN: _matrices(2)},
                                      name="_backward_linalg_syevd"),
               doc="Gradient of _linalg_syevd."))


# ---- gelqf -----------------------------------------------------------------------------------
def _gelqf_infer(a, s, d):
    s = tuple(s[0])
    if len(s) < 2:
        raise ValueError(f"_linalg_gelqf: input must have at least 2 dimensions, got shape {s}")
    if s[-2] > s[-1]:
        raise ValueError(f"_linalg_gelqf: matrices must have no more rows than columns, got {s}")
    dt = _fdtype("_linalg_gelqf", d[0])
    return [s, s[:-1] + (s[-2],)], [dt, dt]


def _gelqf_grad(F, a, inputs, outputs, out_grads):
    Q, L = outputs
    dQ, dL = out_grads
    M = F.linalg_gemm2(L, dL, transpose_a=True) - F.linalg_gemm2(dQ, Q, transpose_b=True)
    low = F._linalg_maketrian(F._linalg_extracttrian(M))
    if M.shape[-1] > 1:
        strict = F._linalg_maketrian(F._linalg_extracttrian(M, offset=-1), offset=-1)
        low = low + _tr(F, strict)
    rhs = dQ + F.linalg_gemm2(low, Q)
    return [F.linalg_trsm(L, rhs, transpose=True, rightside=False, lower=True)]


register(OpDef("_linalg_gelqf", aliases=("linalg_gelqf",), inputs=("A",), infer=_gelqf_infer,
               num_outputs=2,
               forward=kernel_forward("linalg_extra", "gelqf", ints=("batch", "m", "n"), floats=(),
                                      fill={("batch", "m", "n"): lambda a, i, o: (
                                          _batch(i[0].shape), i[0].shape[-2], i[0].shape[-1])},
                                      name="_linalg_gelqf"),
               grad=_gelqf_grad,
               doc="LQ factorisation A = L Q of m x n matrices (m <= n): Q with orthonormal rows, "
                   "L lower triangular (LAPACK's sign convention)."))


# ---- inverse, det, slogdet -------------------------------------------------------------------
def _inverse_infer(a, s, d):
    return [_square("_linalg_inverse", s[0])], [_fdtype("_linalg_inverse", d[0])]


def _inverse_grad(F, a, inputs, outputs, out_grads):
    B = outputs[0]
    t = F.linalg_gemm2(B, out_grads[0], transpose_a=True)
    return [F.linalg_gemm2(t, B, transpose_b=True) * -1.0]


register(OpDef("_linalg_inverse", aliases=("linalg_inverse", "_npi_inv"), inputs=("A",),
               infer=_inverse_infer,
               forward=kernel_forward("linalg_extra", "inverse", ints=_BN, floats=(),
                                      fill={_BN: _matrices(0)},
                                      name="_linalg_inverse"),
               grad=_inverse_grad, doc="Inverse of square matrices (LU with partial pivoting)."))


def _det_shape(op, s):
    s = _square(op, s)
    return (1,) if len(s) == 2 else s[:-2]


def _det_infer(a, s, d):
    return [_det_shape("_linalg_det", s[0])], [_fdtype("_linalg_det", d[0])]


def _slogdet_infer(a, s, d):
    o = _det_shape("_linalg_slogdet", s[0])
    dt = _fdtype("_linalg_slogdet", d[0])
    return [o, o], [dt, dt]


def _expand2(F, g, A):
    return g.reshape(A.shape[:-2] + (1, 1))


def _det_grad(F, a, inputs, outputs, out_grads):
    A = inputs[0]
    coef = _expand2(F, out_grads[0] * outputs[0], A)
    return [F.broadcast_mul(coef, _tr(F, F._linalg_inverse(A)))]


def _slogdet_grad(F, a, inputs, outputs, out_grads):
    A = inputs[0]
    coef = _expand2(F, out_grads[1], A)
    return [F.broadcast_mul(coef, _tr(F, F._linalg_inverse(A)))]


register(OpDef("_linalg_det", aliases=("linalg_det", "_npi_det"), inputs=("A",), infer=_det_infer,
               forward=kernel_forward("linalg_extra", "det", ints=_BN + ("slogdet",), floats=(),
                                      fill={_BN: _matrices(0), "slogdet": lambda a, i, o: 0},
                                      name="_linalg_det"),
               grad=_det_grad, doc="Determinant of square matrices."))
register(OpDef("_linalg_slogdet", aliases=("linalg_slogdet", "_npi_slogdet"), inputs=("A",),
               infer=_slogdet_infer, num_outputs=2,
               forward=kernel_forward("linalg_extra", "det",
                                      fill={_BN: _matrices(0), "slogdet": lambda a, i, o: 1},
                                      name="_linalg_slogdet"),
               grad=_slogdet_grad,
               doc="Sign and log of the absolute value of the determinant."))


# ---- extractdiag / makediag / extracttrian / maketrian ----------------------------------------
_DIAG = (Param("offset", int, 0),)
_TRIAN = (Param("offset", int, 0), Param("lower", bool, True))


def _extract_infer(op, diag):
    def infer(a, s, d):
        s = _square(op, s[0])
        n = s[-1] - abs(a["offset"])
        if n <= 0:
            raise ValueError(f"{op}: illegal offset {a['offset']} for matrices of size {s[-1]}")
        return [s[:-2] + ((n if diag else n * (n + 1) // 2),)], [_fdtype(op, d[0])]
    return infer


def _trian_side(op, m):
    k = int(np.floor(0.5 + (np.sqrt(8 * m + 1) - 1.0) * 0.5))
    if k * (k + 1) // 2 != m:
        raise ValueError(f"{op}: last axis of size {m} is not a triangular number")
    return k


def _make_infer(op, diag):
    def infer(a, s, d):
        s = tuple(s[0])
        if len(s) < 1:
            raise ValueError(f"{op}: input must have at least 1 dimension")
        k = s[-1] if diag else _trian_side(op, s[-1])
        n = k + abs(a["offset"])
        return [s[:-1] + (n, n)], [_fdtype(op, d[0])]
    return infer


def _diag_forward(kname, trian, make, name):
    """(batch, n) of the square matrices (the output's when making them), the diagonal's offset,
    and for triangles whether the lower one"""
    def square(a, i, o):
        s = (o[0] if make else i[0]).shape
        return _batch(s), s[-1]
    fill = {_BN: square}
    if trian:
        fill["lower"] = lambda a, i, o: int(a["lower"])
    ints = _BN + ("offset",) + (("lower",) if trian else ())
    return kernel_forward("linalg_extra", kname, ints=ints, floats=(), fill=fill, name=name)


register(OpDef("_linalg_extractdiag", aliases=("linalg_extractdiag",), inputs=("A",), params=_DIAG,
               infer=_extract_infer("_linalg_extractdiag", True),
               forward=_diag_forward("extractdiag", False, False, "_linalg_extractdiag"),
               grad=lambda F, a, i, o, g: [F._linalg_makediag(g[0], offset=a["offset"])],
               doc="The diagonal at `offset` of square matrices."))
register(OpDef("_linalg_makediag", aliases=("linalg_makediag",), inputs=("A",), params=_DIAG,
               infer=_make_infer("_linalg_makediag", True),
               forward=_diag_forward("makediag", False, True, "_linalg_makediag"),
               grad=lambda F, a, i, o, g: [F._linalg_extractdiag(g[0], offset=a["offset"])],
               doc="Square matrices with the vectors on the diagonal at `offset`."))
register(OpDef("_linalg_extracttrian", aliases=("linalg_extracttrian",), inputs=("A",),
               params=_TRIAN, infer=_extract_infer("_linalg_extracttrian", False),
               forward=_diag_forward("extracttrian", True, False, "_linalg_extracttrian"),
               grad=lambda F, a, i, o, g: [F._linalg_maketrian(g[0], offset=a["offset"],
                                                               lower=a["lower"])],
               doc="The lower (upper) triangle at `offset` of square matrices, packed row-wise."))
register(OpDef("_linalg_maketrian", aliases=("linalg_maketrian",), inputs=("A",), params=_TRIAN,
               infer=_make_infer("_linalg_maketrian", False),
               forward=_diag_forward("maketrian", True, True, "_linalg_maketrian"),
               grad=lambda F, a, i, o, g: [F._linalg_extracttrian(g[0], offset=a["offset"],
                                                                  lower=a["lower"])],
               doc="Square matrices from packed triangles (inverse of _linalg_extracttrian)."))

"""MXNet's linalg operators (src/operator/tensor/la_op.*) and khatri_rao.

Names are MXNet's: the registered name is ``_linalg_<x>`` with the alias ``linalg_<x>``.
Every operator works on the trailing two axes and is batched over the leading ones
(linalg_gemm/gemm2: rows on ``axis``, columns on the last axis, batched over the rest).

- linalg_gemm(A, B, C): alpha op(A) op(B) + beta C;  linalg_gemm2(A, B): alpha op(A) op(B).
  One call of the strided GEMM kernel (mxc/ops/dot.py); gradients are gemm2 calls (differentiable).
- linalg_potrf (Cholesky factor), linalg_potri (inverse from the factor), linalg_trsm (triangular
  solve), linalg_trmm (triangular product), linalg_syrk (alpha A A^T or A^T A),
  linalg_sumlogdiag: kernels in mxc/ops/cpu/linalg.pyx (BLAS/LAPACK). Their gradients follow
  MXNet's formulas; potrf/potri/trsm/trmm/sumlogdiag use the kernels registered as
  ``_backward_linalg_<x>`` (MXNet's names), syrk's is written with gemm2.
- khatri_rao(*args): column-wise Khatri-Rao product, composed from broadcast_mul (so it also has
  a gradient, which MXNet does not define).
float32 and float64 as MXNet's CPU kernels (gemm/gemm2 also take float16, computed in float32).
"""
import numpy as np

from .dot import check_float, prod, push_gemm
from .params import Param
from .registry import OpDef, register, kernel_forward, kernel


def _check_sgl_dbl(op, dtypes):
    d = check_float(op, dtypes)
    if d.name not in ("float32", "float64"):
        raise ValueError(f"{op}: only float32 and float64 are supported, got {d.name}")
    return d


# ---- gemm, gemm2 ---------------------------------------------------------------------------------
def _gemm_geometry(op, sa, sb, ta, tb, axis):
    """(axis, out_shape, M, N, K) of MXNet's LaMatrixMultMacOpShape."""
    sa, sb = tuple(sa), tuple(sb)
    if len(sa) < 2 or len(sa) != len(sb):
        raise ValueError(f"{op}: A and B must have the same number (>= 2) of dimensions, got "
                         f"{sa} and {sb}")
    nd = len(sa)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd - 1:
        raise ValueError(f"{op}: invalid row axis ({axis}) for {nd}-d inputs")
    for i in range(nd - 1):
        if i != ax and sa[i] != sb[i]:
            raise ValueError(f"{op}: shapes of A {sa} and B {sb} must be the same except on the "
                             f"row/column axes")
    ka = sa[ax] if ta else sa[-1]
    kb = sb[-1] if tb else sb[ax]
    if ka != kb:
        raise ValueError(f"{op}: incompatible matrix dimensions for multiplication: {sa} x {sb} "
                         f"(transpose_a={ta}, transpose_b={tb}, axis={axis})")
    M = sa[-1] if ta else sa[ax]
    N = sb[ax] if tb else sb[-1]
    oshape = list(sa)
    oshape[ax], oshape[-1] = M, N
    return ax, tuple(oshape), M, N, ka


def _layout(shape, ax):
    """(so, si, ld) of the matrices (rows on axis ax, columns last) of a C-contiguous shape."""
    cols = shape[-1]
    inner = prod(shape[ax + 1:-1])
    return (shape[ax] * inner * cols, cols, max(1, inner * cols))


def _gemm_infer(name, with_c):
    def infer(attrs, shapes, dtypes):
        d = check_float(name, dtypes)
        _, oshape, _, _, _ = _gemm_geometry(name, shapes[0], shapes[1], attrs["transpose_a"],
                                            attrs["transpose_b"], attrs["axis"])
        if with_c and tuple(shapes[2]) != oshape:
            raise ValueError(f"{name}: C has shape {tuple(shapes[2])}, expected {oshape}")
        return [oshape], [d]
    return infer


def _gemm_forward(name, with_c):
    def forward(attrs, inputs, outputs):
        a, b = inputs[0], inputs[1]
        ta, tb = attrs["transpose_a"], attrs["transpose_b"]
        ax, oshape, M, N, K = _gemm_geometry(name, a.shape, b.shape, ta, tb, attrs["axis"])
        nouter, ninner = prod(oshape[:ax]), prod(oshape[ax + 1:-1])
        lo = _layout(oshape, ax)
        layout = (nouter, ninner, _layout(a.shape, ax), _layout(b.shape, ax),
                  lo if with_c else (0, 0, 0), lo)
        push_gemm(name, a, b, inputs[2] if with_c else None, outputs[0], nouter * ninner, M, N, K,
                  ta, tb, cmode=2 if with_c else 0, alpha=attrs["alpha"],
                  beta=attrs["beta"] if with_c else 0.0, layout=layout)
    return forward


def _gemm_ab_grads(F, attrs, a, b, g):
    ta, tb, al, ax = attrs["transpose_a"], attrs["transpose_b"], attrs["alpha"], attrs["axis"]
    g2 = F.linalg_gemm2
    if ta:
        da = g2(b, g, transpose_a=tb, transpose_b=True, alpha=al, axis=ax)
    else:
        da = g2(g, b, transpose_a=False, transpose_b=not tb, alpha=al, axis=ax)
    if tb:
        db = g2(g, a, transpose_a=True, transpose_b=ta, alpha=al, axis=ax)
    else:
        db = g2(a, g, transpose_a=not ta, transpose_b=False, alpha=al, axis=ax)
    return [da, db]


def _gemm_grad(F, attrs, inputs, outputs, out_grads):
    g = out_grads[0]
    return _gemm_ab_grads(F, attrs, inputs[0], inputs[1], g) + [g * float(attrs["beta"])]


def _gemm2_grad(F, attrs, inputs, outputs, out_grads):
    return _gemm_ab_grads(F, attrs, inputs[0], inputs[1], out_grads[0])


_MM = (Param("transpose_a", bool, False), Param("transpose_b", bool, False),
       Param("alpha", float, 1.0))

register(OpDef("_linalg_gemm", aliases=("linalg_gemm",), inputs=("A", "B", "C"),
               params=_MM + (Param("beta", float, 1.0), Param("axis", int, -2)),
               infer=_gemm_infer("_linalg_gemm", True),
               forward=_gemm_forward("_linalg_gemm", True), grad=_gemm_grad,
               doc="alpha * op(A) op(B) + beta * C on the matrices of the trailing axes (rows on "
                   "`axis`), batched over the others."))
register(OpDef("_linalg_gemm2", aliases=("linalg_gemm2",), inputs=("A", "B"),
               params=_MM + (Param("axis", int, -2),),
               infer=_gemm_infer("_linalg_gemm2", False),
               forward=_gemm_forward("_linalg_gemm2", False), grad=_gemm2_grad,
               doc="alpha * op(A) op(B) on the matrices of the trailing axes (rows on `axis`), "
                   "batched over the others."))


# ---- kernel-backed operators -------------------------------------------------------------------
_FWD = {}


# the kernels' slots (csrc/kernels/linalg.h): the number of matrices and their sizes first
_CHOL = (("batch", "n", "lower"), ())
_TRI = (("batch", "m", "n", "k", "rightside", "lower", "transpose"), ("alpha",))
_SQUARE = (("batch", "n"), ())
for _k, (_ints, _floats) in {"potrf": _CHOL, "potri": _CHOL, "potrf_bwd": _CHOL,
                             "potri_bwd": _CHOL, "trsm": _TRI, "trmm": _TRI, "trsm_bwd": _TRI,
                             "trmm_bwd": _TRI, "sumlogdiag": _SQUARE, "sumlogdiag_bwd": _SQUARE,
                             "syrk": (("batch", "rows", "cols", "transpose"), ("alpha",))}.items():
    kernel("linalg", _k, ints=_ints, floats=_floats)


def _push(kname, opname, inputs, outputs, **slots):
    """Push kernel `kname` with its slots' values by name."""
    fwd = _FWD.get((kname, opname))
    if fwd is None:
        fwd = _FWD[(kname, opname)] = kernel_forward("linalg", kname, name=opname)
    fwd(slots, inputs, outputs)


def _square(op, shape, what="A"):
    shape = tuple(shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{op}: {what} must be a tensor of square matrices (ndim >= 2), "
                         f"got shape {shape}")
    return shape


def _batch(shape):
    return prod(shape[:-2])


# potrf / potri
def _chol_infer(name):
    def infer(attrs, shapes, dtypes):
        d = _check_sgl_dbl(name, dtypes)
        return [_square(name, shapes[0])], [d]
    return infer


def _chol_forward(kname, opname):
    def forward(attrs, inputs, outputs):
        s = inputs[0].shape
        _push(kname, opname, inputs, outputs, batch=_batch(s), n=s[-1], lower=int(attrs["lower"]))
    return forward


def _potrf_grad(F, attrs, inputs, outputs, out_grads):
    return [F._backward_linalg_potrf(out_grads[0], outputs[0], lower=attrs["lower"])]


def _potri_grad(F, attrs, inputs, outputs, out_grads):
    return [F._backward_linalg_potri(out_grads[0], inputs[0], outputs[0], lower=attrs["lower"])]


_LOWER = (Param("lower", bool, True),)

register(OpDef("_linalg_potrf", aliases=("linalg_potrf",), inputs=("A",), params=_LOWER,
               infer=_chol_infer("_linalg_potrf"),
               forward=_chol_forward("potrf", "_linalg_potrf"), grad=_potrf_grad,
               doc="Cholesky factor of symmetric positive definite matrices (lower or upper)."))
register(OpDef("_linalg_potri", aliases=("linalg_potri",), inputs=("A",), params=_LOWER,
               infer=_chol_infer("_linalg_potri"),
               forward=_chol_forward("potri", "_linalg_potri"), grad=_potri_grad,
               doc="Inverse of B B^T (lower) or B^T B (upper) from the Cholesky factor B."))


def _bwd_same_infer(name, n_in):
    def infer(attrs, shapes, dtypes):
        d = _check_sgl_dbl(name, dtypes)
        if len(shapes) != n_in:
            raise ValueError(f"{name}: expects {n_in} inputs, got {len(shapes)}")
        s = _square(name, shapes[1])
        for x in shapes:
            if tuple(x) != s:
                raise ValueError(f"{name}: input shapes {[tuple(x) for x in shapes]} differ")
        return [s], [d]
    return infer


register(OpDef("_backward_linalg_potrf", inputs=("dB", "B"), params=_LOWER,
               infer=_bwd_same_infer("_backward_linalg_potrf", 2),
               forward=_chol_forward("potrf_bwd", "_backward_linalg_potrf"),
               doc="Gradient of linalg_potrf: 0.5 L^-T copyLTU(L^T dL) L^-1."))
register(OpDef("_backward_linalg_potri", inputs=("dA", "B", "A"), params=_LOWER,
               infer=_bwd_same_infer("_backward_linalg_potri", 3),
               forward=_chol_forward("potri_bwd", "_backward_linalg_potri"),
               doc="Gradient of linalg_potri: -tril(A (dA + dA^T) B^-T)."))


# trsm / trmm
def _tri_geometry(op, sa, sb, rightside):
    sa, sb = _square(op, sa), tuple(sb)
    if len(sb) != len(sa):
        raise ValueError(f"{op}: A {sa} and B {sb} must have the same number of dimensions")
    if sa[:-2] != sb[:-2]:
        raise ValueError(f"{op}: shapes of A {sa} and B {sb} must be the same except on the last "
                         f"two dimensions")
    k = sa[-1]
    if (sb[-1] if rightside else sb[-2]) != k:
        raise ValueError(f"{op}: incompatible matrix dimensions for multiplication: A {sa}, "
                         f"B {sb} (rightside={rightside})")
    return _batch(sb), sb[-2], sb[-1], k


def _tri_infer(name):
    def infer(attrs, shapes, dtypes):
        d = _check_sgl_dbl(name, dtypes)
        _tri_geometry(name, shapes[0], shapes[1], attrs["rightside"])
        return [tuple(shapes[1])], [d]
    return infer


def _tri_slots(opname, attrs, sa, sb):
    b, m, n, k = _tri_geometry(opname, sa, sb, attrs["rightside"])
    return dict(batch=b, m=m, n=n, k=k, rightside=int(attrs["rightside"]),
                lower=int(attrs["lower"]), transpose=int(attrs["transpose"]), alpha=attrs["alpha"])


def _tri_forward(kname, opname):
    def forward(attrs, inputs, outputs):
        _push(kname, opname, inputs, outputs,
              **_tri_slots(opname, attrs, inputs[0].shape, inputs[1].shape))
    return forward


def _tri_bwd_infer(name, n_in):
    def infer(attrs, shapes, dtypes):
        d = _check_sgl_dbl(name, dtypes)
        if len(shapes) != n_in:
            raise ValueError(f"{name}: expects {n_in} inputs, got {len(shapes)}")
        _tri_geometry(name, shapes[1], shapes[2], attrs["rightside"])
        for i in [0] + ([3] if n_in == 4 else []):
            if tuple(shapes[i]) != tuple(shapes[2]):
                raise ValueError(f"{name}: input {i} has shape {tuple(shapes[i])}, expected "
                                 f"{tuple(shapes[2])}")
        return [tuple(shapes[1]), tuple(shapes[2])], [d, d]
    return infer


def _tri_bwd_forward(kname, opname):
    def forward(attrs, inputs, outputs):
        _push(kname, opname, inputs, outputs,
              **_tri_slots(opname, attrs, inputs[1].shape, inputs[2].shape))
    return forward


def _tri_params():
    return (Param("transpose", bool, False), Param("rightside", bool, False),
            Param("lower", bool, True), Param("alpha", float, 1.0))


def _trsm_grad(F, attrs, inputs, outputs, out_grads):
    return list(F._backward_linalg_trsm(out_grads[0], inputs[0], inputs[1], outputs[0], **attrs))


def _trmm_grad(F, attrs, inputs, outputs, out_grads):
    return list(F._backward_linalg_trmm(out_grads[0], inputs[0], inputs[1], **attrs))


register(OpDef("_linalg_trsm", aliases=("linalg_trsm",), inputs=("A", "B"), params=_tri_params(),
               infer=_tri_infer("_linalg_trsm"), forward=_tri_forward("trsm", "_linalg_trsm"),
               grad=_trsm_grad,
               doc="Solves alpha op(A)^-1 B (or alpha B op(A)^-1 with rightside) for triangular A."))
register(OpDef("_linalg_trmm", aliases=("linalg_trmm",), inputs=("A", "B"), params=_tri_params(),
               infer=_tri_infer("_linalg_trmm"), forward=_tri_forward("trmm", "_linalg_trmm"),
               grad=_trmm_grad,
               doc="alpha op(A) B (or alpha B op(A) with rightside) for triangular A."))
register(OpDef("_backward_linalg_trsm", inputs=("dC", "A", "B", "C"), params=_tri_params(),
               num_outputs=2, infer=_tri_bwd_infer("_backward_linalg_trsm", 4),
               forward=_tri_bwd_forward("trsm_bwd", "_backward_linalg_trsm"),
               doc="Gradients (dA, dB) of linalg_trsm."))
register(OpDef("_backward_linalg_trmm", inputs=("dC", "A", "B"), params=_tri_params(),
               num_outputs=2, infer=_tri_bwd_infer("_backward_linalg_trmm", 3),
               forward=_tri_bwd_forward("trmm_bwd", "_backward_linalg_trmm"),
               doc="Gradients (dA, dB) of linalg_trmm."))


# syrk
def _syrk_infer(attrs, shapes, dtypes):
    d = _check_sgl_dbl("_linalg_syrk", dtypes)
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ValueError(f"_linalg_syrk: A must have at least 2 dimensions, got {s}")
    n = s[-1] if attrs["transpose"] else s[-2]
    return [s[:-2] + (n, n)], [d]


def _syrk_forward(attrs, inputs, outputs):
    s = inputs[0].shape
    _push("syrk", "_linalg_syrk", inputs, outputs, batch=_batch(s), rows=s[-2], cols=s[-1],
          transpose=int(attrs["transpose"]), alpha=attrs["alpha"])


def _syrk_grad(F, attrs, inputs, outputs, out_grads):
    a, g, al = inputs[0], out_grads[0], attrs["alpha"]
    g2 = F.linalg_gemm2
    if attrs["transpose"]:
        return [g2(a, g, alpha=al) + g2(a, g, transpose_b=True, alpha=al)]
    return [g2(g, a, alpha=al) + g2(g, a, transpose_a=True, alpha=al)]


register(OpDef("_linalg_syrk", aliases=("linalg_syrk",), inputs=("A",),
               params=(Param("transpose", bool, False), Param("alpha", float, 1.0)),
               infer=_syrk_infer, forward=_syrk_forward, grad=_syrk_grad,
               doc="alpha A A^T (or alpha A^T A with transpose) of the trailing matrices."))


# sumlogdiag
def _sld_shape(s):
    return tuple(s[:-2]) if len(s) > 2 else (1,)


def _sld_infer(attrs, shapes, dtypes):
    d = _check_sgl_dbl("_linalg_sumlogdiag", dtypes)
    s = _square("_linalg_sumlogdiag", shapes[0])
    return [_sld_shape(s)], [d]


def _sld_forward(attrs, inputs, outputs):
    s = inputs[0].shape
    _push("sumlogdiag", "_linalg_sumlogdiag", inputs, outputs, batch=_batch(s), n=s[-1])


def _sld_grad(F, attrs, inputs, outputs, out_grads):
    return [F._backward_linalg_sumlogdiag(out_grads[0], inputs[0])]


def _sld_bwd_infer(attrs, shapes, dtypes):
    name = "_backward_linalg_sumlogdiag"
    d = _check_sgl_dbl(name, dtypes)
    s = _square(name, shapes[1])
    if tuple(shapes[0]) != _sld_shape(s):
        raise ValueError(f"{name}: dB has shape {tuple(shapes[0])}, expected {_sld_shape(s)}")
    return [s], [d]


def _sld_bwd_forward(attrs, inputs, outputs):
    s = inputs[1].shape
    _push("sumlogdiag_bwd", "_backward_linalg_sumlogdiag", inputs, outputs, batch=_batch(s),
          n=s[-1])


register(OpDef("_linalg_sumlogdiag", aliases=("linalg_sumlogdiag",), inputs=("A",),
               infer=_sld_infer, forward=_sld_forward, grad=_sld_grad,
               doc="Sum of the logarithms of the diagonal of each trailing square matrix."))
register(OpDef("_backward_linalg_sumlogdiag", inputs=("dB", "A"), infer=_sld_bwd_infer,
               forward=_sld_bwd_forward, doc="Gradient of linalg_sumlogdiag: diag(dB / A_ii)."))


# ---- khatri_rao --------------------------------------------------------------------------------
def _kr_infer(attrs, shapes, dtypes):
    if not shapes:
        raise ValueError("khatri_rao: needs at least one input matrix")
    rows, cols = 1, None
    for s in shapes:
        s = tuple(s)
        if len(s) != 2:
            raise ValueError(f"khatri_rao: inputs must be matrices, got shape {s}")
        if cols is None:
            cols = s[1]
        elif s[1] != cols:
            raise ValueError(f"khatri_rao: all inputs must have the same number of columns, got "
                             f"{[tuple(x) for x in shapes]}")
        rows *= s[0]
    for d in dtypes[1:]:
        if np.dtype(d) != np.dtype(dtypes[0]):
            raise ValueError(f"khatri_rao: inputs must share one dtype, got "
                             f"{[np.dtype(x).name for x in dtypes]}")
    return [(rows, cols)], [dtypes[0]]


def _kr_composite(F, attrs, *xs):
    if attrs["num_args"] != len(xs):
        raise ValueError(f"khatri_rao: num_args={attrs['num_args']} but {len(xs)} inputs given")
    _kr_infer(attrs, [x.shape for x in xs], [x.dtype for x in xs])
    out = xs[0]
    n = xs[0].shape[1]
    for x in xs[1:]:
        out = F.reshape(F.broadcast_mul(F.expand_dims(out, axis=1), F.expand_dims(x, axis=0)),
                        shape=(-1, n))
    return out if len(xs) > 1 else F.identity(out)


register(OpDef("khatri_rao", inputs=(), variadic="num_args", differentiable=False,
               params=(Param("num_args", int, required=True),),
               infer=_kr_infer, composite=_kr_composite,
               doc="Column-wise Khatri-Rao product: column k of the result is the Kronecker "
                   "product of the k-th columns of the inputs (first input varies slowest)."))

"""Matrix products: dot and batch_dot with MXNet 1.9.1's shape rules, and the GEMM push shared
with FullyConnected and linalg_gemm/gemm2.

Every product is one call of the "gemm" kernel (mxc/ops/cpu/dot.pyx, csrc/kernels/dot.h): a
strided batch of row-major BLAS products, out[b] = alpha op(A[b]) op(B[b]) (+ bias | + beta C[b]).

dot (MXNet's DotShape): lhs is viewed as a matrix (prod(shape[:-1]), shape[-1]), or with
transpose_a as (shape[0], prod(shape[1:])) and transposed; rhs as (shape[0], prod(shape[1:])),
or with transpose_b as (prod(shape[:-1]), shape[-1]) and transposed. The result's shape is the
kept dims of lhs then those of rhs (a 1-D operand contributes none); 1-D . 1-D gives (1,).
batch_dot: N-d x N-d (N >= 3) with equal leading dims, a product per leading index.
"""
import numpy as np

from .params import Param
from ._partial_shape import probe_partial
from .registry import OpDef, register, kernel_forward, kernel

__all__ = ["FLOAT_DTYPES", "FLOATS", "check_float", "push_gemm", "prod"]

FLOAT_DTYPES = ("float16", "float32", "float64")


def prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


# the dtype objects themselves: membership is a hash lookup (numpy's dtype.name costs ~4 us)
FLOATS = frozenset(np.dtype(n) for n in FLOAT_DTYPES)


def check_float(op, dtypes):
    """All inputs share one float dtype (MXNet's ElemwiseType and REAL type switch). Runs in
    every imperative call of the GEMM operators: dtype objects are compared, not their names."""
    d0 = np.dtype(dtypes[0])
    for d in dtypes[1:]:
        if d is not d0 and np.dtype(d) != d0:
            raise ValueError(f"{op}: inputs must share one dtype, got "
                             f"{', '.join(np.dtype(x).name for x in dtypes)}")
    if d0 not in FLOATS:
        raise ValueError(f"{op}: only float16, float32 and float64 are supported, got {d0.name}")
    return d0


_GEMM = {}
# the gemm kernel's slots (csrc/kernels/dot.h): nouter x ninner products of M x K by K x N,
# transposes, what C is (0 none, 1 a bias row, 2 beta C), then (outer stride, inner stride, row
# pitch) of A, B, C and the output; alpha, beta
GEMM_INTS = ("nouter", "ninner", "M", "N", "K", "trans_a", "trans_b", "cmode",
             "a_outer", "a_inner", "a_ld", "b_outer", "b_inner", "b_ld",
             "c_outer", "c_inner", "c_ld", "o_outer", "o_inner", "o_ld")
GEMM = kernel("dot", "gemm", ints=GEMM_INTS, floats=("alpha", "beta"))


def _gemm_ints(a, i, o):
    return a["_ints"]


def push_gemm(name, a, b, c, out, batch, M, N, K, ta=False, tb=False, cmode=0,
              alpha=1.0, beta=0.0, layout=None):
    """Queue out[i] = alpha op(a[i]) op(b[i]) (+ bias c | + beta c[i]) for i < batch (see
    csrc/kernels/dot.h). a, b, c, out are C-contiguous NDArrays (views are fine); by default
    they hold their matrices back to back. `layout` = (nouter, ninner, (so, si, ld) for a, b, c,
    out) describes matrices that are strided slices (rows on a middle axis)."""
    fwd = _GEMM.get(name)
    if fwd is None:
        fwd = _GEMM[name] = kernel_forward("dot", "gemm", name=name,
                                           fill={GEMM_INTS: _gemm_ints})
    if layout is None:
        la = (M * K, 0, max(1, M if ta else K))
        lb = (K * N, 0, max(1, K if tb else N))
        lo = (M * N, 0, max(1, N))
        lc = (0, 0, 0) if cmode == 1 else lo
        layout = (batch, 1, la, lb, lc, lo)
    nouter, ninner, la, lb, lc, lo = layout
    ia = (nouter, ninner, M, N, K, int(bool(ta)), int(bool(tb)), cmode) + tuple(la) + \
        tuple(lb) + tuple(lc) + tuple(lo)
    ins = [a, b] if cmode == 0 else [a, b, c]
    fwd({"_ints": ia, "alpha": float(alpha), "beta": float(beta)}, ins, [out])


# ---- dot ---------------------------------------------------------------------------------------
def _dot_geometry(op, ls, rs, ta, tb):
    """(M, N, K, out_shape) of MXNet's dot on shapes ls, rs; ValueError on a mismatch."""
    if len(ls) == 0 or len(rs) == 0:
        raise ValueError(f"{op}: scalar tensor is not supported by this operator")
    if len(ls) == 1 and len(rs) == 1:
        if ta or tb:
            raise ValueError(f"{op}: cannot transpose vectors")
        if ls[0] != rs[0]:
            raise ValueError(f"{op}: shape error: {tuple(ls)} X {tuple(rs)}")
        return 1, 1, ls[0], (1,)
    if ta:
        lkeep, lk = tuple(ls[1:]), ls[0]
    else:
        lkeep, lk = tuple(ls[:-1]), ls[-1]
    if tb:
        rkeep, rk = tuple(rs[:-1]), rs[-1]
    else:
        rkeep, rk = tuple(rs[1:]), rs[0]
    if len(ls) == 1:      # a vector is a 1 x n (or n x 1 transposed) matrix; keeps no dims
        lkeep = ()
    if len(rs) == 1:
        rkeep = ()
    M, N = prod(lkeep), prod(rkeep)
    if lk != rk:
        raise ValueError(f"{op}: shape error: {tuple(ls)} X {tuple(rs)} "
                         f"(transpose_a={bool(ta)}, transpose_b={bool(tb)})")
    return M, N, lk, lkeep + rkeep


def check_stype(op, attrs):
    if attrs.get("forward_stype") not in (None, "default"):
        raise ValueError(f"{op}: forward_stype={attrs['forward_stype']!r} is not supported "
                         f"(mxc has dense storage only)")


def _dot_infer(attrs, shapes, dtypes):
    # dot's forward_stype is honoured by its sparse implementations (ndarray/sparse_impls.py);
    # the dense kernel computes the same values in dense storage
    d = check_float("dot", dtypes)
    _, _, _, oshape = _dot_geometry("dot", shapes[0], shapes[1], attrs["transpose_a"],
                                    attrs["transpose_b"])
    return [oshape], [d]


def _dot_infer_inputs(attrs, shapes):
    """An unknown (0) contraction dimension of one operand from the other's, as MXNet's dot
    shape function does (a deferred weight (0, 100) learns its input size from x.dot(w))."""
    lhs, rhs = shapes
    if lhs is None or rhs is None or not lhs or not rhs:
        return shapes
    li = 0 if attrs["transpose_a"] else len(lhs) - 1
    ri = len(rhs) - 1 if attrs["transpose_b"] else 0
    lhs, rhs = list(lhs), list(rhs)
    if lhs[li] == 0 and rhs[ri] > 0:
        lhs[li] = rhs[ri]
    elif rhs[ri] == 0 and lhs[li] > 0:
        rhs[ri] = lhs[li]
    return [tuple(lhs), tuple(rhs)]


def _dot_forward(attrs, inputs, outputs):
    lhs, rhs = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    M, N, K, _ = _dot_geometry("dot", lhs.shape, rhs.shape, ta, tb)
    push_gemm("dot", lhs, rhs, None, outputs[0], 1, M, N, K, ta, tb)


def _dot_grad(F, attrs, inputs, outputs, out_grads):
    x, y = inputs
    g = out_grads[0]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if x.ndim == 1 and y.ndim == 1:
        return [F.broadcast_mul(y, g), F.broadcast_mul(x, g)]
    M, N, K, _ = _dot_geometry("dot", x.shape, y.shape, ta, tb)
    x2 = F.reshape(x, shape=(K, M) if ta else (M, K))
    y2 = F.reshape(y, shape=(N, K) if tb else (K, N))
    g2 = F.reshape(g, shape=(M, N))
    if not ta and not tb:       # z = x y
        dx, dy = F.dot(g2, y2, transpose_b=True), F.dot(x2, g2, transpose_a=True)
    elif ta and not tb:         # z = x^T y
        dx, dy = F.dot(y2, g2, transpose_b=True), F.dot(x2, g2)
    elif not ta and tb:         # z = x y^T
        dx, dy = F.dot(g2, y2), F.dot(g2, x2, transpose_a=True)
    else:                       # z = x^T y^T
        dx = F.dot(y2, g2, transpose_a=True, transpose_b=True)
        dy = F.dot(g2, x2, transpose_a=True, transpose_b=True)
    return [F.reshape(dx, shape=x.shape), F.reshape(dy, shape=y.shape)]


_DOT_PARAMS = (Param("transpose_a", bool, False), Param("transpose_b", bool, False),
               Param("forward_stype", str, None, optional=True,
                     choices=("default", "row_sparse", "csr")))

register(OpDef("dot", inputs=("lhs", "rhs"), params=_DOT_PARAMS, infer=_dot_infer,
               infer_partial=probe_partial(_dot_infer), infer_inputs=_dot_infer_inputs,
               forward=_dot_forward, grad=_dot_grad,
               doc="Dot product of two arrays (MXNet's N-d rules: the last axis of lhs, or its "
                   "first with transpose_a, against the first axis of rhs, or its last with "
                   "transpose_b). forward_stype: the output storage of a sparse operand's product."))


# ---- batch_dot ---------------------------------------------------------------------------------
def _batch_geometry(op, ls, rs, ta, tb):
    if not (len(ls) >= 3 and len(rs) >= 3 and len(ls) == len(rs)):
        raise ValueError(f"{op}: only N-D x N-D arrays (N >= 3) are supported, got "
                         f"{tuple(ls)} vs. {tuple(rs)}")
    if tuple(ls[:-2]) != tuple(rs[:-2]):
        raise ValueError(f"{op}: shape error (the leading batch dimensions must be equal): "
                         f"{tuple(ls)} X {tuple(rs)}")
    M, lk = (ls[-1], ls[-2]) if ta else (ls[-2], ls[-1])
    N, rk = (rs[-2], rs[-1]) if tb else (rs[-1], rs[-2])
    if lk != rk:
        raise ValueError(f"{op}: shape error (shape mismatch): {tuple(ls)} X {tuple(rs)} "
                         f"transpose_a={bool(ta)} transpose_b={bool(tb)}")
    return prod(ls[:-2]), M, N, lk, tuple(ls[:-2]) + (M, N)


def _batch_dot_infer(attrs, shapes, dtypes):
    check_stype("batch_dot", attrs)
    d = check_float("batch_dot", dtypes)
    oshape = _batch_geometry("batch_dot", shapes[0], shapes[1], attrs["transpose_a"],
                             attrs["transpose_b"])[-1]
    return [oshape], [d]


def _batch_dot_forward(attrs, inputs, outputs):
    lhs, rhs = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    B, M, N, K, _ = _batch_geometry("batch_dot", lhs.shape, rhs.shape, ta, tb)
    push_gemm("batch_dot", lhs, rhs, None, outputs[0], B, M, N, K, ta, tb)


def _batch_dot_grad(F, attrs, inputs, outputs, out_grads):
    x, y = inputs
    g = out_grads[0]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    bd = F.batch_dot
    if not ta and not tb:
        dx, dy = bd(g, y, transpose_b=True), bd(x, g, transpose_a=True)
    elif ta and not tb:
        dx, dy = bd(y, g, transpose_b=True), bd(x, g)
    elif not ta and tb:
        dx, dy = bd(g, y), bd(g, x, transpose_a=True)
    else:
        dx = bd(y, g, transpose_a=True, transpose_b=True)
        dy = bd(g, x, transpose_a=True, transpose_b=True)
    return [dx, dy]


register(OpDef("batch_dot", inputs=("lhs", "rhs"), params=_DOT_PARAMS, infer=_batch_dot_infer,
               infer_partial=probe_partial(_batch_dot_infer),
               forward=_batch_dot_forward, grad=_batch_dot_grad,
               doc="Batched matrix product of N-d arrays (N >= 3) over their equal leading "
                   "dimensions; transpose_a/transpose_b transpose the last two axes."))

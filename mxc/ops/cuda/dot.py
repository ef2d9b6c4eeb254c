"""GEMMs (ops/dot.py's "gemm" kernel, csrc/kernels/dot.h) on the GPU: cuBLAS through CuPy on
the engine's stream."""
import numpy as np

from ._launch import TRAIN_FLOATS


# ---- GEMM (cuBLAS through CuPy) ---------------------------------------------------------------
# The "gemm" CPU kernel (csrc/kernels/dot.h) behind dot, batch_dot, FullyConnected and
# linalg_gemm/gemm2: O[b] = alpha op(A[b]) op(B[b]) (+ bias row | + beta C[b]), row-major
# matrices with row pitch ld, matrix b = bo * ninner + bi at bo * so + bi * si of its tensor.
# cuBLAS is column-major: a row-major M x N matrix with pitch ld is, to cuBLAS, its N x M
# transpose with leading dimension ld. So O^T = op(B)^T op(A)^T is one column-major GEMM with
# the operands swapped: m = N, n = M, k = K, A' = B (op 'T' iff transB, lda = B's ld),
# B' = A (op 'T' iff transA, ldb = A's ld), C' = O (ldc = O's ld). No data moves.
OP_N, OP_T = 0, 1          # cublasOperation_t
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF = 0, 1, 2, 14
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 70, 77
CUBLAS_GEMM_DEFAULT = -1


def float32_compute():
    """cuBLAS compute type of float32 GEMMs: exact float32 (the CPU's results) unless both
    MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION are 1 (MXNet's
    switches for letting tensor cores convert float32), which selects TF32."""
    import os
    on = all(os.environ.get(k, "0") == "1" for k in ("MXNET_CUDA_ALLOW_TENSOR_CORE",
                                                      "MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION"))
    return CUBLAS_COMPUTE_32F_FAST_TF32 if on else CUBLAS_COMPUTE_32F


def gemm_plan(iattr, fattr, dtype):
    """The cuBLAS calls of one "gemm" kernel call, in elements: a dict with "calls" (each:
    transa, transb, m, n, k, a_off, lda, stride_a, b_off, ldb, stride_b, c_off, ldc, stride_c,
    batch; "a" is the cuBLAS A operand, i.e. mxc's B), "alpha", "beta", and "prep": None,
    "bias" (copy the bias row into every row of O first) or "copy_c" (copy C into O first).
    None when the layout is not one cuBLAS can take. iattr, fattr: the gemm kernel's slots
    (ops/dot.py GEMM_INTS; alpha, beta), as Slots or in their order."""
    from ..dot import GEMM
    ia, fa = GEMM.ints_of(iattr), GEMM.floats_of(fattr)
    nouter, ninner, M, N, K, ta, tb, cmode = (int(getattr(ia, s)) for s in GEMM.ints[:8])

    def layout(x):
        return [int(getattr(ia, "%s_%s" % (x, s))) for s in ("outer", "inner", "ld")]
    la, lb, lc, lo = layout("a"), layout("b"), layout("c"), layout("o")
    alpha, beta = float(fa.alpha), float(fa.beta)
    if np.dtype(dtype).name not in TRAIN_FLOATS:
        return None
    prep = None
    if cmode == 1:
        # FullyConnected's bias: O must be dense rows of N for the row copy
        if lo[2] != N:
            return None
        prep, beta = "bias", 1.0
    elif cmode == 2:
        if tuple(lc) != tuple(lo):
            return None
        prep = "copy_c"
    else:
        beta = 0.0
    calls = []
    if M and N:
        # one strided-batched call over the longer batch index; a loop over the other
        if ninner == 1 or nouter == 1:
            groups = [(0, nouter * ninner, 2 if ninner == 1 else 3)]
        else:
            groups = [(bo, ninner, 3) for bo in range(nouter)]
        for bo, count, which in groups:
            def off(l):
                return bo * l[0]

            def stride(l):
                return l[0] if which == 2 else l[1]
            calls.append({"transa": OP_T if tb else OP_N, "transb": OP_T if ta else OP_N,
                          "m": N, "n": M, "k": K,
                          "a_off": off(lb), "lda": max(1, lb[2]), "stride_a": stride(lb),
                          "b_off": off(la), "ldb": max(1, la[2]), "stride_b": stride(la),
                          "c_off": off(lo), "ldc": max(1, lo[2]), "stride_c": stride(lo),
                          "batch": count})
    return {"calls": calls, "alpha": alpha, "beta": beta, "prep": prep, "M": M, "N": N}


def cublas_types(dt):
    """(cudaDataType, cublasComputeType, numpy type of alpha/beta) of GEMMs on dtype dt."""
    if dt == np.float64:
        return CUDA_R_64F, CUBLAS_COMPUTE_64F, np.float64
    if dt == np.float32:
        return CUDA_R_32F, float32_compute(), np.float32
    # float16 and bfloat16 multiply with float32 accumulation and scalars, as the CPU's sgemm
    # path
    if dt.name == "bfloat16":
        return CUDA_R_16BF, CUBLAS_COMPUTE_32F, np.float32
    return CUDA_R_16F, CUBLAS_COMPUTE_32F, np.float32


def cublas_module():
    try:
        from cupy_backends.cuda.libs import cublas
    except ImportError:          # CuPy before the cupy_backends split
        from cupy.cuda import cublas
    return cublas


def _gemm_run(plan, dtype):
    """The device-side run(cupy_inputs, cupy_outputs) of a plan: on the engine's stream (the
    caller made it CuPy's current stream; CuPy's cuBLAS wrappers set it on the handle)."""
    dt = np.dtype(dtype)

    def run(cin, cout):
        import cupy
        from cupy.cuda import device
        cublas = cublas_module()
        a, b, o = cin[0], cin[1], cout[0]
        if plan["prep"] == "bias":
            o.reshape((-1, plan["N"]))[...] = cin[2].reshape((1, plan["N"]))
        elif plan["prep"] == "copy_c" and o.data.ptr != cin[2].data.ptr:
            cupy.copyto(o, cin[2].reshape(o.shape))
        ctype_, comp, scal = cublas_types(dt)
        alpha = np.array(plan["alpha"], dtype=scal)
        beta = np.array(plan["beta"], dtype=scal)
        es = dt.itemsize
        handle = device.get_cublas_handle()
        for c in plan["calls"]:
            cublas.gemmStridedBatchedEx(
                handle, c["transa"], c["transb"], c["m"], c["n"], c["k"], alpha.ctypes.data,
                b.data.ptr + es * c["a_off"], ctype_, c["lda"], c["stride_a"],
                a.data.ptr + es * c["b_off"], ctype_, c["ldb"], c["stride_b"],
                beta.ctypes.data, o.data.ptr + es * c["c_off"], ctype_, c["ldc"], c["stride_c"],
                c["batch"], comp, CUBLAS_GEMM_DEFAULT)
    return run


def build(opname, kernel, attrs, inputs, outputs, iattr, fattr):
    if kernel != "gemm":
        return None
    plan = gemm_plan(iattr, fattr, outputs[0].dtype)
    if plan is None:
        return None
    return {"cublas": _gemm_run(plan, outputs[0].dtype), "plan": plan}



"""The cuBLAS mapping of mxc's GEMMs (mxc/ops/cuda/dot.py gemm_plan), without a GPU: the operators' "gemm"
kernel calls (dot, batch_dot, FullyConnected, linalg_gemm/gemm2, captured from the real
operators on the CPU) are turned into cuBLAS column-major strided-batched calls, which numpy
then executes exactly as cuBLAS defines them, on the operands' flat memory; the result must be
the row-major product numpy computes directly. tests/gpu/test_gemm_cublas.py runs the same
plans through cuBLAS where a GPU exists."""
import numpy as np
import pytest

import mxc as mx
from mxc.ops import dot as dot_mod
from mxc.ops.cuda import dot as S, launch_spec


def colmajor_gemm(call, alpha, beta, A, B, C):
    """cublas<t>gemmStridedBatched on flat arrays: C = alpha op(A) op(B) + beta C, every matrix
    column-major with its leading dimension (matrix (r, c) at offset r + c * ld)."""
    m, n, k = call["m"], call["n"], call["k"]
    lda, ldb, ldc = call["lda"], call["ldb"], call["ldc"]
    # cuBLAS's own argument rules
    assert ldc >= max(1, m)
    assert lda >= max(1, m if call["transa"] == S.OP_N else k)
    assert ldb >= max(1, k if call["transb"] == S.OP_N else n)
    i, l, j = np.arange(m)[:, None], np.arange(k)[None, :], np.arange(n)[None, :]
    for b in range(call["batch"]):
        pa = call["a_off"] + b * call["stride_a"]
        pb = call["b_off"] + b * call["stride_b"]
        pc = call["c_off"] + b * call["stride_c"]
        X = A[pa + i + l * lda] if call["transa"] == S.OP_N else A[pa + l + i * lda]   # m x k
        ll = np.arange(k)[:, None]
        Y = B[pb + ll + j * ldb] if call["transb"] == S.OP_N else B[pb + j + ll * ldb]  # k x n
        ci = pc + i + j * ldc
        prod = alpha * (X.astype(np.float64) @ Y.astype(np.float64))
        C[ci] = prod if beta == 0 else prod + beta * C[ci]      # beta 0: C is not read


def run_plan(plan, a, b, c, out):
    """What dot._gemm_run does on the device, in numpy: prep, then every call (cuBLAS's A is
    mxc's B and the other way round)."""
    o = out.reshape(-1)
    if plan["prep"] == "bias":
        out.reshape((-1, plan["N"]))[...] = c.reshape((1, plan["N"]))
    elif plan["prep"] == "copy_c":
        o[...] = c.reshape(-1)
    for call in plan["calls"]:
        colmajor_gemm(call, plan["alpha"], plan["beta"], b.reshape(-1), a.reshape(-1), o)


@pytest.fixture
def captured(monkeypatch):
    """Every push of the gemm kernel, as (name, iattr, fattr, inputs, output) with the operands
    as numpy arrays; nothing is computed."""
    calls = []

    def recorder(name):
        def fwd(attrs, inputs, outputs):
            # push_gemm's slot values: the integer slots in their order, alpha and beta
            ia, fa = attrs["_ints"], (attrs["alpha"], attrs["beta"])
            calls.append((name, ia, fa, [x.asnumpy() for x in inputs], outputs[0].shape))
        return fwd
    for name in ("dot", "batch_dot", "FullyConnected", "_linalg_gemm", "_linalg_gemm2"):
        monkeypatch.setitem(dot_mod._GEMM, name, recorder(name))
    return calls


def _check(calls, want, dtype=np.float64, rtol=1e-12):
    (name, ia, fa, ins, oshape), = calls
    plan = S.gemm_plan(ia, fa, dtype)
    assert plan is not None
    out = np.full(oshape, np.nan)
    run_plan(plan, ins[0], ins[1], ins[2] if len(ins) > 2 else None, out)
    np.testing.assert_allclose(out, want, rtol=rtol, atol=1e-12)
    calls.clear()
    return plan


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dot_and_batch_dot(captured, ta, tb):
    rng = np.random.RandomState(0)
    a = rng.randn(*((4, 3) if ta else (3, 4)))
    b = rng.randn(*((5, 4) if tb else (4, 5)))
    mx.nd.dot(mx.nd.array(a, dtype="float64"), mx.nd.array(b, dtype="float64"),
              transpose_a=ta, transpose_b=tb)
    _check(captured, (a.T if ta else a) @ (b.T if tb else b))
    A = rng.randn(*((6, 4, 3) if ta else (6, 3, 4)))
    B = rng.randn(*((6, 5, 4) if tb else (6, 4, 5)))
    mx.nd.batch_dot(mx.nd.array(A, dtype="float64"), mx.nd.array(B, dtype="float64"),
                    transpose_a=ta, transpose_b=tb)
    plan = _check(captured, np.matmul(A.transpose(0, 2, 1) if ta else A,
                                      B.transpose(0, 2, 1) if tb else B))
    assert len(plan["calls"]) == 1 and plan["calls"][0]["batch"] == 6


def test_dot_of_nd_arrays_and_vectors(captured):
    rng = np.random.RandomState(1)
    a, b = rng.randn(2, 3, 4), rng.randn(4, 5)
    mx.nd.dot(mx.nd.array(a, dtype="float64"), mx.nd.array(b, dtype="float64"))
    _check(captured, np.tensordot(a, b, axes=1))
    v, w = rng.randn(7), rng.randn(7)
    mx.nd.dot(mx.nd.array(v, dtype="float64"), mx.nd.array(w, dtype="float64"))
    _check(captured, np.array([v @ w]))


def test_fully_connected_with_bias(captured):
    rng = np.random.RandomState(2)
    x, w, b = rng.randn(4, 2, 3), rng.randn(5, 6), rng.randn(5)
    nd = [mx.nd.array(t, dtype="float64") for t in (x, w, b)]
    mx.nd.FullyConnected(*nd, num_hidden=5)
    plan = _check(captured, x.reshape(4, 6) @ w.T + b)
    assert plan["prep"] == "bias" and plan["beta"] == 1.0
    mx.nd.FullyConnected(nd[0], nd[1], num_hidden=5, no_bias=True)
    _check(captured, x.reshape(4, 6) @ w.T)


def test_linalg_gemm_rows_on_a_middle_axis(captured):
    rng = np.random.RandomState(3)
    # axis=-3: matrices have rows on axis 1 and columns last; batch dims 0 and 2 (outer, inner)
    A, B, C = rng.randn(2, 3, 4, 5), rng.randn(2, 5, 4, 6), rng.randn(2, 3, 4, 6)
    nd = [mx.nd.array(t, dtype="float64") for t in (A, B, C)]
    mx.nd.linalg_gemm(*nd, alpha=0.5, beta=-2.0, axis=-3)
    want = 0.5 * np.einsum("arkc,ackd->arkd", A, B) - 2.0 * C
    plan = _check(captured, want)
    assert plan["prep"] == "copy_c" and len(plan["calls"]) == 2      # one batched call per outer
    mx.nd.linalg_gemm2(nd[0], nd[0], transpose_b=True, axis=-3)
    _check(captured, np.einsum("arkc,aqkc->arkq", A, A))


def test_dtypes_and_empty_products():
    ia = (1, 1, 3, 4, 5, 0, 0, 0, 15, 0, 5, 20, 0, 4, 0, 0, 0, 12, 0, 4)
    for dt in ("float16", "float32", "float64"):
        assert S.gemm_plan(ia, (1.0, 0.0), dt) is not None
    assert S.gemm_plan(ia, (1.0, 0.0), "int32") is None
    empty = (1, 1, 0, 4, 5, 0, 0, 0, 0, 0, 5, 20, 0, 4, 0, 0, 0, 0, 0, 4)
    assert S.gemm_plan(empty, (1.0, 0.0), "float32")["calls"] == []


def test_spec_runs_the_plan_through_cupy_on_the_device():
    class Arr:
        def __init__(self, shape, dtype="float32"):
            self.shape, self.dtype, self.ndim = shape, np.dtype(dtype), len(shape)
    ia = (1, 1, 3, 4, 5, 0, 0, 0, 15, 0, 5, 20, 0, 4, 0, 0, 0, 12, 0, 4)
    spec = launch_spec("dot", ((), ()), [Arr((3, 5)), Arr((5, 4))], [Arr((3, 4))],
                         family="dot", kernel="gemm", iattr=ia, fattr=(1.0, 0.0))
    assert callable(spec["cublas"]) and spec["plan"]["calls"][0]["m"] == 4

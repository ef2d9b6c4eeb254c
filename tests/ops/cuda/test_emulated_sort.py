"""sort/argsort/topk on the CPU: g++ compiles mxc/ops/cuda/ordering.cu against the CUDA
emulation header (emu/cuda_fp16.h), and the launch sequence that mxc.ops.cuda.launch_spec gives for
topk (prepare, every bitonic step, finish, with its workspace) runs through a CPU stand-in for
the device launcher; the result must be numpy's stable order."""
import ctypes
import shutil

import numpy as np
import pytest

from ._emu import build, cuda_loader


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
# ---- sort: the spec's whole launch sequence (prepare, bitonic steps, finish) run on the CPU ----
SORT_WRAPPERS = r"""
thread_local dim3 blockIdx, threadIdx, blockDim, gridDim;
template <class F> static void run(unsigned grid, unsigned block, F f) {
  gridDim.x = grid; blockDim.x = block;
  for (unsigned b = 0; b < grid; ++b) for (unsigned t = 0; t < block; ++t) {
    blockIdx.x = b; threadIdx.x = t; f(); } }
extern "C" void prepare(unsigned g, unsigned b, const float *x, u64 *keys, long long *idx,
                        i64 pre, i64 n, i64 post, i64 p, int asc) {
  run(g, b, [&] { mxc_sort_prepare<float>(x, keys, idx, pre, n, post, p, asc); }); }
extern "C" void step(unsigned g, unsigned b, u64 *keys, long long *idx, i64 rows, i64 p, i64 k,
                     i64 s) {
  run(g, b, [&] { mxc_bitonic_step(keys, idx, rows, p, k, s); }); }
extern "C" void finish(unsigned g, unsigned b, const float *x, const long long *idx, float *v,
                       int *ind, i64 pre, i64 n, i64 post, i64 p, i64 k) {
  run(g, b, [&] { mxc_sort_finish<float, int>(x, idx, v, ind, pre, n, post, p, k); }); }
"""
_SORT_FN = {"mxc_sort_prepare<float>": "prepare", "mxc_bitonic_step": "step",
            "mxc_sort_finish<float, int>": "finish"}


@pytest.fixture(scope="module")
def sortlib(tmp_path_factory):
    L = cuda_loader()
    return build(tmp_path_factory, "sort", L.source("ordering") + SORT_WRAPPERS), L


def _run_spec(lib, spec, inputs, outputs):
    """A CPU stand-in for the device launcher: resolves ("in"/"out"/"ws"/"ptr") and scalars."""
    ws = np.zeros(max(8, spec.get("workspace", 0)) // 8, np.uint64)
    base = ws.ctypes.data
    for launch in spec.get("launches", [spec]):
        args = [ctypes.c_uint(min(launch["grid"][0], 7)), ctypes.c_uint(32)]   # small odd grid
        for kind, v in launch["args"]:
            if kind == "in":
                args.append(ctypes.c_void_p(inputs[v].ctypes.data))
            elif kind == "out":
                args.append(ctypes.c_void_p(outputs[v].ctypes.data))
            elif kind == "ws":
                args.append(ctypes.c_void_p(base + v))
            elif kind == "ptr":
                args.append(ctypes.c_void_p(v or None))
            elif kind == "i32":
                args.append(ctypes.c_int(v))
            else:
                args.append(ctypes.c_longlong(v))
        getattr(lib, _SORT_FN[launch["name"]])(*args)


@pytest.mark.parametrize("shape,axis,k,ascend", [((3, 37), 1, 5, 0), ((20, 4), 0, 20, 1),
                                                  ((2, 9, 3), 1, 4, 0)])
def test_sort_through_its_spec(sortlib, shape, axis, k, ascend):
    lib, L = sortlib
    from mxc.ops import cuda as S
    rng = np.random.RandomState(3)
    x = rng.randint(-5, 5, size=shape).astype(np.float32)   # many ties: checks stability
    pre = int(np.prod(shape[:axis]))
    post = int(np.prod(shape[axis + 1:]))
    n = shape[axis]
    oshape = shape[:axis] + (k,) + shape[axis + 1:]

    class Arr:
        def __init__(self, a):
            self.shape, self.dtype, self.ndim = a.shape, a.dtype.type, a.ndim
    vals, idx = np.zeros(oshape, np.float32), np.zeros(oshape, np.int32)
    spec = S.launch_spec("topk", {}, [Arr(x)], [Arr(vals), Arr(idx)], family="ordering",
                         kernel="topk", iattr=(pre, n, post, k, 3, ascend), fattr=())
    _run_spec(lib, spec, [x], [vals, idx])
    order = np.argsort(x if ascend else -x, axis=axis, kind="stable")
    want_idx = np.take(order, np.arange(k), axis=axis)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, want_idx, axis=axis))


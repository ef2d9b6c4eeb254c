"""The emulation's block of threads (emu/mxc_emu_threads.h), which the kernel tests rely on:
threads meet at __syncthreads and warp shuffles as on a device (a block reduction gives every
thread the block's sum, a shared tile written by all is read back reversed, a shuffle takes
lane ^ o's value), and a barrier that could never complete is an error naming what happened,
after which the next launch runs normally."""
import ctypes
import shutil

import numpy as np
import pytest

from ._emu import build, cuda_loader

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

KERNELS = r"""
template <class T> __global__ void t_block_sum(const T *x, T *out, long long n) {
  __shared__ T scratch[32];
  T s = 0;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) s += x[blockIdx.x * n + i];
  s = mxc::block_reduce(s, mxc::add_op(), (T)0, scratch);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;          // every thread has the block's sum
}
__global__ void t_reverse(const int *x, int *y) {          // needs the barrier between its halves
  __shared__ int tile[1024];
  const unsigned i = blockIdx.x * blockDim.x;
  tile[threadIdx.x] = x[i + threadIdx.x];
  __syncthreads();
  y[i + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
__global__ void t_shuffle(int *y, int o) {
  y[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x * 10 + (int)blockIdx.x, o);
}
__global__ void t_divergent(int *y) {
  if (threadIdx.x < 5) __syncthreads();
  y[threadIdx.x] = 1;
}
__global__ void t_after_return(int *y) {
  if (threadIdx.x == 3) return;
  __syncthreads();
  y[threadIdx.x] = 1;
}
#define RUN(g, b, call) return mxc_emu::run(g, b, [&] { call; })
extern "C" const char *block_sum_f(unsigned g, unsigned b, const float *x, float *o, long long n) { RUN(g, b, t_block_sum<float>(x, o, n)); }
extern "C" const char *block_sum_d(unsigned g, unsigned b, const double *x, double *o, long long n) { RUN(g, b, t_block_sum<double>(x, o, n)); }
extern "C" const char *reverse(unsigned g, unsigned b, const int *x, int *y) { RUN(g, b, t_reverse(x, y)); }
extern "C" const char *shuffle(unsigned g, unsigned b, int *y, int o) { RUN(g, b, t_shuffle(y, o)); }
extern "C" const char *divergent(unsigned g, unsigned b, int *y) { RUN(g, b, t_divergent(y)); }
extern "C" const char *after_return(unsigned g, unsigned b, int *y) { RUN(g, b, t_after_return(y)); }
extern "C" const char *syncthreads_outside() { __syncthreads(); return mxc_emu::launch().error; }
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    # reduce.cu's text brings common.cuh (block_reduce) as NVRTC gets it
    so = build(tmp_path_factory, "threads", cuda_loader().source("reduce") + KERNELS)
    for f in ("block_sum_f", "block_sum_d", "reverse", "shuffle", "divergent", "after_return",
              "syncthreads_outside"):
        getattr(so, f).restype = ctypes.c_char_p
    return so


def _p(a):
    return ctypes.c_void_p(a.ctypes.data)


@pytest.mark.parametrize("block", [32, 96, 256, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_block_reduce_gives_every_thread_the_sum(lib, block, dtype):
    grid, n = 3, 1000
    x = np.random.default_rng(block).integers(-50, 50, size=grid * n).astype(dtype)
    out = np.full(grid * block, np.nan, dtype)
    fn = lib.block_sum_f if dtype == np.float32 else lib.block_sum_d
    assert fn(grid, block, _p(x), _p(out), ctypes.c_longlong(n)) is None
    want = x.reshape(grid, n).sum(axis=1)                   # integers: exact in any order
    np.testing.assert_array_equal(out.reshape(grid, block), np.repeat(want[:, None], block, 1))


def test_shared_tile_is_read_after_every_thread_wrote(lib):
    x = np.arange(3 * 64, dtype=np.int32)
    y = np.zeros_like(x)
    assert lib.reverse(3, 64, _p(x), _p(y)) is None
    np.testing.assert_array_equal(y, x.reshape(3, 64)[:, ::-1].ravel())


@pytest.mark.parametrize("o", [1, 5, 16])
def test_shuffle_takes_the_value_of_lane_xor_o(lib, o):
    y = np.zeros(2 * 64, np.int32)
    assert lib.shuffle(2, 64, _p(y), o) is None
    t = np.arange(64)
    want = np.stack([(t ^ o) * 10 + b for b in range(2)]).ravel()
    np.testing.assert_array_equal(y, want)


def test_impossible_meetings_are_errors_and_the_next_launch_runs(lib):
    y = np.zeros(64, np.int32)
    assert lib.divergent(1, 64, _p(y)) == \
        b"__syncthreads in block 0 reached by 5 threads after 59 returned"
    assert lib.after_return(2, 64, _p(y)) == \
        b"__syncthreads in block 0 reached by 63 threads after 1 returned"
    assert lib.shuffle(1, 40, _p(y), 1) == \
        b"warp shuffle in a partial warp (8 of 32 lanes; block of 40 threads)"
    assert lib.shuffle(1, 32, _p(y), 40) == b"__shfl_xor_sync with lane mask 40 (0..31)"
    assert lib.block_sum_f(1, 2048, _p(y), _p(y), ctypes.c_longlong(1)) == \
        b"a block of 2048 threads (at most 1024)"
    assert lib.syncthreads_outside() == \
        b"a barrier or shuffle outside an emulated launch (mxc_emu::run)"
    # the threads left waiting inside those kernels start afresh
    x = np.ones(2 * 1000, np.float32)
    out = np.zeros(2 * 64, np.float32)
    assert lib.block_sum_f(2, 64, _p(x), _p(out), ctypes.c_longlong(1000)) is None
    assert (out == 1000).all()

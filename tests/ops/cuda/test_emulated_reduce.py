"""The index arithmetic of the CUDA reductions (mxc/ops/cuda/reduce.cu), run on the CPU: g++
compiles the family's text (as NVRTC gets it) against the emulation header, and
``mxc::unravel`` (flat index over the reduced or kept dims -> element offset) is compared with
numpy's unravel_index for every index of random shapes and strides. The reduction kernels
themselves need a block of threads at once (shared memory, shuffles): the GPU suite runs them."""
import ctypes
import shutil

import numpy as np
import pytest

from ._emu import build, cuda_loader

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    text = cuda_loader().source("reduce") + r'''
extern "C" long long t_unravel(long long i, long long nd, const long long *shape,
                               const long long *stride) {
  return mxc::unravel(i, nd, shape, stride);
}
'''
    so = build(tmp_path_factory, "reduce_index", text)
    so.t_unravel.restype = ctypes.c_longlong
    so.t_unravel.argtypes = [ctypes.c_longlong, ctypes.c_longlong,
                             ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(ctypes.c_longlong)]
    return so


@pytest.mark.parametrize("shape", [(), (1,), (7,), (1 << 20,), (3, 5), (1, 6), (2, 3, 4),
                                   (5, 1, 3, 2), (2, 2, 2, 2, 3)])
def test_unravel_matches_numpy(lib, shape, rng):
    nd = len(shape)
    stride = rng.integers(1, 1000, size=max(nd, 1)).astype(np.int64)
    shp = np.array(shape or (1,), np.int64)
    total = int(np.prod(shape)) if shape else 1
    idx = np.arange(total) if total <= 4096 else rng.integers(0, total, 4096)
    P = ctypes.POINTER(ctypes.c_longlong)
    got = [lib.t_unravel(int(i), nd, shp.ctypes.data_as(P), stride.ctypes.data_as(P)) for i in idx]
    if nd == 0:
        want = [0] * len(idx)
    else:
        want = (np.stack(np.unravel_index(idx, shape)) * stride[:nd, None]).sum(axis=0).tolist()
    assert got == want

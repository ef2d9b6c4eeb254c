"""sort/argsort/topk on the CPU: g++ compiles mxc/ops/cuda/ordering.cu against the CUDA
emulation header (emu/cuda_fp16.h), and the launch sequence that mxc.ops.cuda.launch_spec gives for
topk (prepare, every bitonic step, finish, with its workspace) runs through a CPU stand-in for
the device launcher; the result must be numpy's stable order."""
import shutil

import numpy as np
import pytest

from ._emu import Launcher


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")


# ---- sort: the spec's whole launch sequence (prepare, bitonic steps, finish) run on the CPU ----
@pytest.fixture(scope="module")
def sortlib(tmp_path_factory):
    return Launcher(tmp_path_factory, "sort", {"ordering": [
        "mxc_sort_prepare<float>", "mxc_bitonic_step", "mxc_sort_finish<float, int>"]})


@pytest.mark.parametrize("shape,axis,k,ascend", [((3, 37), 1, 5, 0), ((20, 4), 0, 20, 1),
                                                  ((2, 9, 3), 1, 4, 0)])
def test_sort_through_its_spec(sortlib, shape, axis, k, ascend):
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
    sortlib.run_spec(spec, [x], [vals, idx], grid=7, block=32)   # a small odd grid
    order = np.argsort(x if ascend else -x, axis=axis, kind="stable")
    want_idx = np.take(order, np.arange(k), axis=axis)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, want_idx, axis=axis))


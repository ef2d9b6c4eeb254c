"""Dropout on the GPU draws the CPU's Philox stream: the launch that mxc.ops.cuda.launch_spec
builds from Dropout's own kernel call (key and counter from gpu(0)'s generator,
tests/ops/cuda/_gpucall.py) runs on g++-compiled random.cu, and mxc's CPU dropout kernel run
with the same key and counter gives the same output and mask, bit for bit."""
import importlib
import shutil

import numpy as np
import pytest

import mxc as mx

from ._emu import Launcher
from ._gpucall import kernel_calls

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "dropout",
                    {"random": ["mxc_dropout<float>", "mxc_dropout<double>",
                                "mxc_dropout<__half>"]})


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("p", [0.5, 0.1])
def test_dropout_mask_is_the_cpu_stream(emu, dtype, p):
    from mxc._core.handle import push_kernel
    x = np.random.RandomState(0).randn(7, 13).astype(dtype)
    out, mask = np.zeros_like(x), np.zeros_like(x)
    with mx.autograd.train_mode():
        calls = kernel_calls("Dropout", [x], [out, mask], p=p)
    (name, a, ins, outs, fam, kern, ia, fa), = calls
    spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
    emu.run_spec(spec, ins, outs, grid=2, block=3)
    table = importlib.import_module("mxc.ops.cpu.random").KERNELS["dropout"]
    cx = mx.nd.array(x, dtype=dtype)
    co, cm = mx.nd.zeros(x.shape, dtype=dtype), mx.nd.zeros(x.shape, dtype=dtype)
    push_kernel(table[cm._dcode], [cx], [co, cm], tuple(ia), tuple(fa), b"dropout", 1)
    np.testing.assert_array_equal(mask, cm.asnumpy())
    np.testing.assert_array_equal(out, co.asnumpy())
    kept = mask != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_array_equal(mask[kept], np.asarray(1 / (1 - np.float32(p)), dtype))

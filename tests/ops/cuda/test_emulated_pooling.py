"""Pooling (max / avg / sum / lp, 1-3-D, both layouts, the three conventions, global) and
nearest UpSampling on the GPU, run on the CPU: the launch spec that mxc.ops.cuda.launch_spec
builds from the operator's own kernel call (tests/ops/cuda/_gpucall.py) runs launch by launch
on g++-compiled pooling.cu (tests/ops/cuda/_emu.py Launcher) and must give the CPU operator's
results bit for bit (the same arithmetic in the same order)."""
import shutil

import numpy as np
import pytest

import mxc as mx

from ._emu import Launcher
from ._gpucall import kernel_calls

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402
from mxc.ops.cuda._launch import instantiations  # noqa: E402


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "pooling", {"pooling": sorted(instantiations("pooling"))})


def run_gpu(emu, opname, inputs, outputs, **kw):
    """outputs filled by the GPU launches of operator opname (emulated)"""
    for name, a, ins, outs, fam, kern, ia, fa in kernel_calls(opname, inputs, outputs, **kw):
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (opname, kern)
        emu.run_spec(spec, ins, outs, grid=3, block=7)   # grid-stride loops: any shape works
    return outputs


POOL_CASES = [
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
    dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full"),
    dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
    dict(kernel=(2, 3), stride=(2, 1), pool_type="sum", pooling_convention="full"),
    dict(kernel=(2, 2), stride=(1, 1), pool_type="lp", p_value=2),
    dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=3),
    dict(global_pool=True, pool_type="avg", kernel=()),
    dict(global_pool=True, pool_type="max", kernel=()),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max", layout="NHWC"),
    dict(kernel=(2, 2), stride=(1, 1), pool_type="avg", layout="NHWC"),
]


def _data(shape, dtype, seed=0):
    # distinct values so max pooling has a unique argmax; a few ties on purpose
    rng = np.random.RandomState(seed)
    x = rng.randn(*shape).astype(dtype)
    x.flat[::7] = x.flat[3]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", POOL_CASES, ids=lambda k: "-".join(str(v) for v in k.values()))
def test_pooling_2d_matches_the_cpu(emu, kw, dtype):
    nhwc = kw.get("layout") == "NHWC"
    x = _data((2, 5, 7, 3) if nhwc else (2, 3, 5, 7), dtype)
    if kw.get("pool_type") == "lp":
        x = np.abs(x) + np.asarray(0.1, dtype)
    y_cpu = mx.nd.Pooling(mx.nd.array(x, dtype=dtype), **kw)
    y = run_gpu(emu, "Pooling", [x], [np.zeros(y_cpu.shape, dtype)], **kw)[0]
    np.testing.assert_array_equal(y, y_cpu.asnumpy())
    dy = _data(y.shape, dtype, 1)
    dx_cpu = mx.nd._backward_Pooling(mx.nd.array(dy, dtype=dtype), mx.nd.array(x, dtype=dtype),
                                     y_cpu, **kw).asnumpy()
    dx = run_gpu(emu, "_backward_Pooling", [dy, x, y], [np.full(x.shape, 7, dtype)], **kw)[0]
    np.testing.assert_array_equal(dx, dx_cpu)


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 11), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),
    ((2, 3, 10), dict(kernel=(3,), stride=(3,), pool_type="avg", pooling_convention="same")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(1, 1, 0), pool_type="max")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 2, 2), stride=(1, 2, 2), pool_type="avg")),
    ((1, 4, 5, 6, 2), dict(kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="max",
                           layout="NDHWC")),
])
def test_pooling_1d_3d_matches_the_cpu(emu, shape, kw):
    x = _data(shape, "float32")
    y_cpu = mx.nd.Pooling(mx.nd.array(x), **kw)
    y = run_gpu(emu, "Pooling", [x], [np.zeros(y_cpu.shape, np.float32)], **kw)[0]
    np.testing.assert_array_equal(y, y_cpu.asnumpy())
    dy = _data(y.shape, "float32", 1)
    dx_cpu = mx.nd._backward_Pooling(mx.nd.array(dy), mx.nd.array(x), y_cpu, **kw).asnumpy()
    dx = run_gpu(emu, "_backward_Pooling", [dy, x, y], [np.zeros(x.shape, np.float32)], **kw)[0]
    np.testing.assert_array_equal(dx, dx_cpu)


def test_max_backward_keeps_the_first_argmax(emu):
    # ties everywhere: each window's gradient goes to its first maximum only
    x = np.ones((1, 1, 4, 4), np.float32)
    kw = dict(kernel=(2, 2), stride=(1, 1), pool_type="max")
    y = run_gpu(emu, "Pooling", [x], [np.zeros((1, 1, 3, 3), np.float32)], **kw)[0]
    dy = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    dx = run_gpu(emu, "_backward_Pooling", [dy, x, y], [np.zeros_like(x)], **kw)[0]
    want = np.zeros((4, 4), np.float32)
    want[:3, :3] = dy[0, 0]
    np.testing.assert_array_equal(dx[0, 0], want)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_upsampling_nearest_matches_the_cpu(emu, mode, dtype):
    # the second input is upsampled to the first's output size: by 4
    a = _data((2, 3, 4, 4), dtype)
    b = _data((2, 3 if mode == "sum" else 2, 2, 2), dtype, 2)
    kw = dict(scale=2, sample_type="nearest", num_args=2, multi_input_mode=mode)
    y_cpu = mx.nd.UpSampling(mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype), **kw)
    y = run_gpu(emu, "UpSampling", [a, b], [np.zeros(y_cpu.shape, dtype)], **kw)[0]
    np.testing.assert_array_equal(y, y_cpu.asnumpy())
    dy = _data(y.shape, dtype, 3)
    da, db = run_gpu(emu, "_backward_UpSampling", [dy, a, b],
                     [np.zeros_like(a), np.zeros_like(b)], **kw)
    want = mx.nd._backward_UpSampling(*[mx.nd.array(v, dtype=dtype) for v in (dy, a, b)], **kw)
    np.testing.assert_array_equal(da, want[0].asnumpy())
    np.testing.assert_array_equal(db, want[1].asnumpy())

"""Model-zoo training steps on an emulated GPU equal the CPU's: on the fake CUDA driver every
kernel mxc launches is its CUDA C compiled by g++ and run on the CPU, every cuBLAS GEMM is
computed in numpy as cuBLAS defines it (tests/ops/cuda/_emulated_gpu.py), so a whole
step (forward, SoftmaxCrossEntropyLoss, backward, SGD momentum; im2col convolution, BatchNorm,
pooling, ReLU, Dense, the loss kernels, the update) runs through mxc's GPU dispatch with real
numbers and is compared with the same step on the CPU from the same parameters (each kernel
compiled on its first launch, kept for the other nets); inputs are 64 px (at 32 a batch of 2
single pixels in the last BatchNorms turns rounding into large differences)."""
import json
import shutil

import pytest

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)
from tests.ops.cuda._emulated_gpu import emu_cache  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

COMPARE = '''
    import json
    from tests.gluon.model_zoo import _zoo_step
    from tests.ops.cuda import _emulated_gpu
    _emulated_gpu.install(%(cache)r)
    lc, pc, start = _zoo_step.step(%(name)r, mx.cpu(), dropout=False, size=64)
    lg, pg, _ = _zoo_step.step(%(name)r, mx.gpu(0), params=start, dropout=False, size=64)
    np.testing.assert_allclose(lg, lc, rtol=1e-4, atol=1e-5)
    worst, param = _zoo_step.worst_move_difference(start, pc, pg)
    print(json.dumps({"worst": worst, "param": param, "n": len(pc)}))
'''


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenet0.25", "mobilenetv2_0.25",
                                  "alexnet"])
def test_emulated_gpu_step_equals_the_cpu_step(fake_lib, emu_cache, name):  # noqa: F811
    out = run(COMPARE % dict(name=name, cache=emu_cache), fake_lib, MXC_CUDNN_ENABLED=0)
    res = json.loads(out.strip().splitlines()[-1])
    # every weight's move within 0.1% of its largest (measured, seed 0: 4e-6 .. 2.5e-4; the
    # CPU's float32 GEMMs against float64 ones here)
    assert res["worst"] <= 1e-3, res

"""Model-zoo training steps on an emulated GPU equal the CPU's: on the fake CUDA driver every
kernel mxc launches is its CUDA C compiled by g++ and run serially, every cuBLAS GEMM is
computed in numpy as cuBLAS defines it (tests/ops/cuda/_emulated_gpu.py), so a whole
step (forward, SoftmaxCrossEntropyLoss, backward, SGD momentum; im2col convolution, BatchNorm,
pooling, ReLU, Dense, the loss kernels, the update) runs through mxc's GPU dispatch with real
numbers and is compared with the same step on the CPU from the same parameters. A first child
process lists the kernels the step launches (no-op kernels), a second compiles and runs them.
Nets whose step needs a kernel with block reductions are not emulated (the install refuses);
inputs are 64 px (at 32 a batch of 2 single pixels in the last BatchNorms turns rounding into
large differences)."""
import json
import shutil

import pytest

from tests._core.test_cuda_fake import fake_lib, run  # noqa: F401  (the fake driver fixture)

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

RECORD = '''
    import json
    from tests.gluon.model_zoo import _zoo_step
    from tests.ops.cuda import _emulated_gpu
    # the step as COMPARE runs it, from given parameters: their set_data copies are launched
    # too (a backward that writes every gradient in place launches no copy of its own)
    _, _, start = _zoo_step.step(%(name)r, mx.cpu(), dropout=False, size=64)
    names = _emulated_gpu.record(lambda: _zoo_step.step(%(name)r, mx.gpu(0), params=start,
                                                         dropout=False, size=64))
    print(json.dumps(names))
'''

COMPARE = '''
    import json
    from tests.gluon.model_zoo import _zoo_step
    from tests.ops.cuda import _emulated_gpu
    _emulated_gpu.install(json.loads(%(names)r), %(workdir)r)
    lc, pc, start = _zoo_step.step(%(name)r, mx.cpu(), dropout=False, size=64)
    lg, pg, _ = _zoo_step.step(%(name)r, mx.gpu(0), params=start, dropout=False, size=64)
    np.testing.assert_allclose(lg, lc, rtol=1e-4, atol=1e-5)
    worst, param = _zoo_step.worst_move_difference(start, pc, pg)
    print(json.dumps({"worst": worst, "param": param, "n": len(pc)}))
'''


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenet0.25", "mobilenetv2_0.25",
                                  "alexnet"])
def test_emulated_gpu_step_equals_the_cpu_step(fake_lib, tmp_path, name):  # noqa: F811
    env = dict(MXC_CUDNN_ENABLED=0)
    names = run(RECORD % dict(name=name), fake_lib, **env).strip().splitlines()[-1]
    # convolution, BatchNorm or not, pooling, the loss and the update, all emulated
    fams = json.loads(names)
    assert {"convolution", "pooling", "softmax", "optimizer_ops"} <= set(fams), fams
    out = run(COMPARE % dict(name=name, names=names, workdir=str(tmp_path)), fake_lib, **env)
    res = json.loads(out.strip().splitlines()[-1])
    # every weight's move within 0.1% of its largest (measured, seed 0: 4e-6 .. 2.5e-4; the
    # CPU's float32 GEMMs against float64 ones here)
    assert res["worst"] <= 1e-3, res

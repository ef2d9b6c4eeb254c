"""Every gluon.model_zoo.vision network trains on gpu(0) (issue 24; skipped without a GPU, see
conftest.py): one SGD-momentum step (forward, SoftmaxCrossEntropyLoss, backward, update) of each
of the 34 models at its smallest input, batch 2, gives a finite loss and moves its weights; for
one network of each kind the same step from the same parameters on the CPU gives the same loss,
the same updated weights and BatchNorm's same moving statistics. Dropout's rate is set to 0 in
the compared runs (its masks are tests/gpu/test_rerun_dropout.py's business)."""
import numpy as np
import pytest

import mxc as mx
from mxc.gluon.model_zoo import vision
from tests.gluon.model_zoo._zoo_step import smallest_size, step, worst_move_difference

# the weights compared where one step is well conditioned; the deep nets' (a 50-layer
# pre-activation ResNet at Xavier's start moves some conv weights by rounding noise: 9-19% of
# their largest move between two exact-arithmetic runs of the emulation) by their loss only
COMPARED = ["resnet18_v1", "vgg11_bn", "alexnet", "squeezenet1.1", "mobilenet0.25",
            "mobilenetv2_0.25"]
LOSS_ONLY = ["resnet50_v2", "densenet121", "inceptionv3"]


@pytest.mark.parametrize("name", sorted(vision._MODELS))
def test_trains_on_the_gpu(name):
    loss, after, before = step(name, mx.gpu(0))
    assert np.all(np.isfinite(loss)), (name, loss)
    moved = [k for k in after if k.endswith("weight") and not np.array_equal(after[k], before[k])]
    assert moved, name
    assert all(np.all(np.isfinite(v)) for v in after.values()), name


@pytest.mark.parametrize("name", COMPARED + LOSS_ONLY)
def test_the_gpu_step_equals_the_cpu_step(name):
    # 64 px at least: at 32 the last stages are 1x1, and BatchNorm over a batch of 2 single
    # pixels turns rounding differences into large ones
    size = max(64, smallest_size(name))
    lc, pc, start = step(name, mx.cpu(), dropout=False, size=size)
    lg, pg, _ = step(name, mx.gpu(0), params=start, dropout=False, size=size)
    np.testing.assert_allclose(lg, lc, rtol=2e-3, atol=2e-4, err_msg=name)
    if name in COMPARED:
        worst, param = worst_move_difference(start, pc, pg)
        assert worst <= 2e-2, (name, param, worst)

"""Every gluon.model_zoo.vision network trains on gpu(0) (issue 24; skipped without a GPU, see
conftest.py): one SGD-momentum step (forward, SoftmaxCrossEntropyLoss, backward, update) of each
of the 34 models at its smallest input, batch 2, gives a finite loss and moves its weights; for
one network of each kind the same step from the same parameters on the CPU gives the same loss,
the same updated weights and BatchNorm's same moving statistics. Dropout's rate is set to 0 in
the compared runs (its masks are tests/gpu/test_rerun_dropout.py's business)."""
import numpy as np
import pytest

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon.model_zoo import vision

SIZE = {"alexnet": 64, "inceptionv3": 299, "squeezenet1.0": 224, "squeezenet1.1": 224}
COMPARED = ["resnet18_v1", "resnet50_v2", "vgg11_bn", "alexnet", "densenet121", "squeezenet1.1",
            "inceptionv3", "mobilenet0.25", "mobilenetv2_0.25"]


def _size(name):
    return SIZE.get(name, 224 if name.startswith("densenet") else 32)


def _no_dropout(block):
    if isinstance(block, gluon.nn.Dropout):
        block._rate = 0.0
    for child in block._children.values():
        _no_dropout(child)


def _step(name, ctx, params=None, dropout=True):
    """(loss, {param name: value after the step}, params before) of one step on ctx."""
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    rng = np.random.default_rng(0)
    size = _size(name)
    x = mx.nd.array(rng.standard_normal((2, 3, size, size)).astype(np.float32), ctx=ctx)
    y = mx.nd.array([1, 7], ctx=ctx)
    net(x)                                           # the deferred shapes
    if not dropout:
        _no_dropout(net)
    pdict = net.collect_params()
    plen = len(pdict.prefix) if hasattr(pdict, "prefix") else 0
    names = sorted(pdict.keys())
    if params is not None:
        for n in names:
            pdict[n].set_data(mx.nd.array(params[n[plen:]], ctx=ctx))
    before = {n[plen:]: pdict[n].data().asnumpy() for n in names}
    tr = gluon.Trainer(pdict, "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with autograd.record():
        L = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), y)
    L.backward()
    tr.step(2)
    loss = L.asnumpy()
    return loss, {n[plen:]: pdict[n].data().asnumpy() for n in names}, before


@pytest.mark.parametrize("name", sorted(vision._MODELS))
def test_trains_on_the_gpu(name):
    loss, after, before = _step(name, mx.gpu(0))
    assert np.all(np.isfinite(loss)), (name, loss)
    moved = [k for k in after if k.endswith("weight") and not np.array_equal(after[k], before[k])]
    assert moved, name
    assert all(np.all(np.isfinite(v)) for v in after.values()), name


@pytest.mark.parametrize("name", COMPARED)
def test_the_gpu_step_equals_the_cpu_step(name):
    lc, pc, start = _step(name, mx.cpu(), dropout=False)
    lg, pg, _ = _step(name, mx.gpu(0), params=start, dropout=False)
    np.testing.assert_allclose(lg, lc, rtol=2e-3, atol=2e-4, err_msg=name)
    for k in pc:
        # each step moved a weight by lr * (gradient): compare the moves, scaled to the largest
        dc, dg = pc[k] - start[k], pg[k] - start[k]
        scale = max(float(np.abs(dc).max()), 1e-6)
        assert float(np.abs(dg - dc).max()) <= 2e-2 * scale + 1e-6, (name, k)

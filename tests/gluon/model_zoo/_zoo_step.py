"""One training step of a gluon.model_zoo.vision network on a context, from given parameters:
what the GPU tests of the model zoo compare with the same step on the CPU
(tests/gpu/test_model_zoo_gpu.py on a real GPU, test_vision_emulated_gpu.py on the emulated
one)."""
import numpy as np

import mxc as mx
from mxc import autograd, gluon
from mxc.gluon.model_zoo import vision

# the smallest input each net takes (a fixed-size final pooling in densenet, squeezenet and
# inception; alexnet's strides); 32 px otherwise
SIZE = {"alexnet": 64, "inceptionv3": 299, "squeezenet1.0": 224, "squeezenet1.1": 224}


def smallest_size(name):
    return SIZE.get(name, 224 if name.startswith("densenet") else 32)


def no_dropout(block):
    """Dropout's rate to 0 in `block` and its children (the masks are not what is compared)."""
    if isinstance(block, gluon.nn.Dropout):
        block._rate = 0.0
    for child in block._children.values():
        no_dropout(child)


def step(name, ctx, params=None, dropout=True, size=None):
    """(loss, {parameter: value after the step}, {parameter: value before}) of one SGD-momentum
    step (SoftmaxCrossEntropyLoss, batch 2) of model `name` on ctx; `params` (names without the
    net's prefix) replace the initial values."""
    mx.random.seed(0)             # the same start in every process (Xavier draws from it)
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    rng = np.random.default_rng(0)
    size = size or smallest_size(name)
    x = mx.nd.array(rng.standard_normal((2, 3, size, size)).astype(np.float32), ctx=ctx)
    y = mx.nd.array([1, 7], ctx=ctx)
    net(x)                                           # the deferred shapes
    if not dropout:
        no_dropout(net)
    pdict = net.collect_params()
    plen = len(net.prefix)
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
    return L.asnumpy(), {n[plen:]: pdict[n].data().asnumpy() for n in names}, before


def worst_move_difference(start, moved_a, moved_b):
    """The largest difference between two steps' moves of one parameter, relative to that
    parameter's largest move (floored at 1e-3 of the largest move of all: a bias before a
    BatchNorm gets only rounding noise as its gradient); returns (difference, parameter)."""
    glob = max(float(np.abs(moved_a[k] - start[k]).max()) for k in start)
    worst = (0.0, "")
    for k in start:
        da, db = moved_a[k] - start[k], moved_b[k] - start[k]
        scale = max(float(np.abs(da).max()), 1e-3 * glob, 1e-12)
        worst = max(worst, (float(np.abs(db - da).max()) / scale, k))
    return worst

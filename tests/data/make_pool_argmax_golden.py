"""Writes tests/data/pool_argmax_golden.npz: max Pooling run under autograd by real MXNet 1.9.1
on data full of ties (small integers; and NaN, infinities, signed zeros), forward output and data gradient for a random head
gradient, with MKLDNN switched off (MXNet's reference loops, src/operator/nn/pool.h; MKLDNN gives
the same 1-D/2-D gradients and differs from them in the last bit of 3-D sums).

tests/ops/test_pooling.py runs the same cases through mxc's autograd, whose max backward is a
scatter from the argmax the forward keeps: the gradient must go to the first maximum of each
window, as MXNet's search does.

    MXNET_MKLDNN_ENABLED=0 /work/mxnet-oracle/bin/python tests/data/make_pool_argmax_golden.py
Stored per case i: ``{i}/params`` (JSON), ``{i}/x``, ``{i}/head``, ``{i}/out``, ``{i}/grad``."""
import json
import os

import mxnet as mx
import numpy as np

CASES = [((2, 3, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
         ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2))),
         ((1, 2, 7, 6), dict(kernel=(3, 2), stride=(1, 2), pad=(1, 0),
                             pooling_convention="full")),
         ((2, 2, 9), dict(kernel=(3,), stride=(2,), pad=(1,))),
         ((1, 2, 5, 6, 5), dict(kernel=(2, 3, 2), stride=(1, 2, 2), pad=(1, 1, 0))),
         ((2, 2, 6, 6), dict(kernel=(3, 3), stride=(1, 1), pad=(1, 1)))]
# data drawn from NaN, the infinities, signed zeros and the lowest finite value: the tiled 2x2
# windows (43 columns: mxc's 8-window blocks and a tail) and padded 3x3 ones
SPECIAL = [((2, 3, 6, 43), dict(kernel=(2, 2), stride=(2, 2))),
           ((1, 2, 7, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)))]
SPECIAL_VALUES = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, np.finfo(np.float32).min, 1, 1,
                           2], np.float32)


def main():
    assert os.environ.get("MXNET_MKLDNN_ENABLED") == "0", "run with MXNET_MKLDNN_ENABLED=0"
    rng = np.random.default_rng(20261128)
    out = {}
    for i, (shape, kw) in enumerate(CASES + SPECIAL):
        if i < len(CASES):
            x = rng.integers(-2, 2, size=shape).astype(np.float32)
        else:
            x = rng.choice(SPECIAL_VALUES, size=shape)
        xm = mx.nd.array(x)
        xm.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xm, pool_type="max", **kw)
        head = rng.standard_normal(y.shape).astype(np.float32)
        y.backward(mx.nd.array(head))
        out[f"{i}/params"] = np.array(json.dumps(kw))
        out[f"{i}/x"], out[f"{i}/head"] = x, head
        out[f"{i}/out"], out[f"{i}/grad"] = y.asnumpy(), xm.grad.asnumpy()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool_argmax_golden.npz")
    tmp = path + ".tmp.npz"
    np.savez(tmp, **out)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()

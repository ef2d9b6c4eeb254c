"""Write tests/data/np_arith/: a numpy-style HybridBlock hybridized and exported by real MXNet
1.9.1 (its graph holds MXNet's _npi_* arithmetic operators) and the outputs MXNet computed.

Run with the oracle interpreter (MXNet 1.9.1, numpy 1.23):
    /work/mxnet-oracle/bin/python tests/data/make_np_arith_golden.py
Writes block-symbol.json, block-0000.params and outputs.npz (x, then out_0 ... out_N in the
block's output order). Only float32 arithmetic is recorded: on int and bool operands MXNet's
graphs give float64 where its imperative np front gives the array's own dtype (mxc follows its
imperative front in both, see mxc/ops/np_arith.py).
"""
import os

import mxnet as mx
import numpy as np
from mxnet import np as mnp, npx
from mxnet.gluon import HybridBlock

npx.set_np()
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "np_arith")


class Block(HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get("w", shape=(3, 4))

    def hybrid_forward(self, F, x, w):
        y = x * w + 1.5
        return (y - 2, 3 - y, y / 4, 2 / (y * y + 1), y ** 2, 2 ** x, y % 1.25, 5.5 % (y * y + 1),
                x - w, x / (w * w + 1), F.np.power(x * x + 1, w), F.np.mod(y, w * w + 1))


def main():
    os.makedirs(HERE, exist_ok=True)
    mx.random.seed(7)
    rng = np.random.RandomState(0)
    blk = Block()
    blk.initialize(mx.init.Uniform(1.0))
    blk.hybridize()
    x = mnp.array(rng.uniform(-2, 2, (3, 4)).astype(np.float32))
    outs = blk(x)
    blk.export(os.path.join(HERE, "block"))
    np.savez(os.path.join(HERE, "outputs.npz"), x=x.asnumpy(),
             **{f"out_{i}": o.asnumpy() for i, o in enumerate(outs)})


if __name__ == "__main__":
    main()

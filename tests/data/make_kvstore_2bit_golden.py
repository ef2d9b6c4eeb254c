"""Golden data for 2-bit gradient compression, made with real MXNet 1.9.1:
/work/mxnet-oracle/bin/python tests/data/make_kvstore_2bit_golden.py
For each of two workers, a 'device' KVStore with compression gets a sequence of pushes of one
key; what it pulls after each push is MXNet's dequantized 2-bit value with error feedback.
A dist_sync store over the two workers must pull the sum of the two workers' values."""
import os

import mxnet as mx
import numpy as np

rng = np.random.RandomState(7)
shape = (7, 9)                       # 63 values: a partial last block of 16
steps = 5
out = {}
for ti, threshold in enumerate((0.5, 0.3)):
    for w in range(2):
        kv = mx.kv.create("device")
        kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
        kv.init(0, mx.nd.zeros(shape))
        for s in range(steps):
            g = (rng.randn(*shape) * 0.4).astype(np.float32)
            kv.push(0, mx.nd.array(g))
            o = mx.nd.zeros(shape)
            kv.pull(0, out=o)
            out["grad_t%d_w%d_s%d" % (ti, w, s)] = g
            out["pulled_t%d_w%d_s%d" % (ti, w, s)] = o.asnumpy()
    out["threshold_t%d" % ti] = np.float32(threshold)
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "kvstore_2bit_golden.npz"), **out)

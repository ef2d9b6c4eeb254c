"""Writes tests/data/optimizer_ops_extra_golden.npz: multi_sum_sq, multi_lars,
_contrib_group_adagrad_update and reset_arrays as MXNet 1.9.1 computes them.

Run with MXNet 1.9.1's interpreter:
/work/mxnet-oracle/bin/python tests/data/make_optimizer_ops_extra_golden.py
"""
import os

import numpy as np
import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_ops_extra_golden.npz")


def main():
    rng = np.random.RandomState(3)
    res = {}
    arrays = [rng.randn(*s).astype(np.float32) for s in ((5,), (3, 4), (2, 3, 2))]
    for k, a in enumerate(arrays):
        res[f"sumsq_in{k}"] = a
    res["sumsq_out"] = mx.nd.multi_sum_sq(*[mx.nd.array(a, dtype=a.dtype) for a in arrays],
                                          num_arrays=len(arrays)).asnumpy()
    lrs = rng.uniform(0.01, 0.1, 6).astype(np.float32)
    wss = (rng.rand(6) * 4).astype(np.float32)
    gss = (rng.rand(6) * 2).astype(np.float32)
    wss[1] = 0.0
    gss[4] = 0.0
    wds = rng.uniform(0, 0.01, 6).astype(np.float32)
    res.update(lars_lrs=lrs, lars_wss=wss, lars_gss=gss, lars_wds=wds)
    res["lars_out"] = mx.nd.multi_lars(*[mx.nd.array(v) for v in (lrs, wss, gss, wds)],
                                       eta=0.7, eps=1e-5, rescale_grad=0.5).asnumpy()
    w = rng.randn(4, 5).astype(np.float32)
    g = rng.randn(4, 5).astype(np.float32)
    h = rng.rand(4, 1).astype(np.float32)
    res.update(ga_w=w, ga_g=g, ga_h=h)
    # MXNet runs this operator on row_sparse weight and gradient only (every row present here)
    mw = mx.nd.array(w).tostype("row_sparse")
    mg = mx.nd.array(g).tostype("row_sparse")
    mh = mx.nd.array(h).tostype("row_sparse")
    for step in range(3):
        mx.nd.contrib.group_adagrad_update(mw, mg, mh, lr=0.05, rescale_grad=0.8,
                                           clip_gradient=1.0, epsilon=1e-5, out=mw)
    res["ga_w_out"] = mw.tostype("default").asnumpy()
    res["ga_h_out"] = mh.tostype("default").asnumpy()
    np.savez(OUT, **res)


if __name__ == "__main__":
    main()

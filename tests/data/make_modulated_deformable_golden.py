"""Golden outputs of MXNet 1.9.1's ModulatedDeformableConvolution (forward; MXNet has no CPU
backward) for tests/ops/test_contrib_modulated_deformable.py.

Run with MXNet's own interpreter (the oracle venv), from the repository root:
    /work/mxnet-oracle/bin/python tests/data/make_modulated_deformable_golden.py
writes tests/data/modulated_deformable_golden.npz: for each case of CASES (which the test
imports) "<name>/in<i>" (data, offset, mask, weight[, bias]) and "<name>/out0".
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# (data shape, parameters); offsets spread taps beyond the image's edges on purpose
CASES = {
    "basic": ((2, 4, 5, 6), {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1)}),
    "groups_dilate": ((1, 4, 6, 5), {"kernel": (3, 3), "num_filter": 4, "pad": (2, 2),
                                     "dilate": (2, 2), "num_deformable_group": 2,
                                     "num_group": 2}),
    "stride_no_bias": ((2, 2, 7, 7), {"kernel": (2, 3), "num_filter": 2, "stride": (2, 2),
                                      "no_bias": True}),
}


def main():
    import mxnet as mx
    rs = np.random.RandomState(5)
    G = {}
    for name, (shape, params) in CASES.items():
        N, C, H, W = shape
        kh, kw = params["kernel"]
        dg, nf = params.get("num_deformable_group", 1), params["num_filter"]
        ng = params.get("num_group", 1)
        sym = mx.sym.contrib.ModulatedDeformableConvolution(
            mx.sym.var("data"), mx.sym.var("offset"), mx.sym.var("mask"), mx.sym.var("weight"),
            *([] if params.get("no_bias") else [mx.sym.var("bias")]), **params)
        s, p, d = params.get("stride", (1, 1)), params.get("pad", (0, 0)), \
            params.get("dilate", (1, 1))
        ho = (H + 2 * p[0] - (d[0] * (kh - 1) + 1)) // s[0] + 1
        wo = (W + 2 * p[1] - (d[1] * (kw - 1) + 1)) // s[1] + 1
        ins = [rs.uniform(-1, 1, shape),
               rs.uniform(-1.8, 1.8, (N, dg * 2 * kh * kw, ho, wo)),
               rs.uniform(0, 1, (N, dg * kh * kw, ho, wo)),
               rs.normal(0, 0.5, (nf, C // ng, kh, kw))]
        if not params.get("no_bias"):
            ins.append(rs.normal(0, 0.5, (nf,)))
        ins = [x.astype(np.float32) for x in ins]
        names = ["data", "offset", "mask", "weight", "bias"][:len(ins)]
        ex = sym.bind(mx.cpu(), args={k: mx.nd.array(v) for k, v in zip(names, ins)})
        out = ex.forward()[0].asnumpy()
        for i, v in enumerate(ins):
            G[f"{name}/in{i}"] = v
        G[f"{name}/out0"] = out
    np.savez_compressed(os.path.join(HERE, "modulated_deformable_golden.npz"), **G)
    print(f"{len(G)} arrays written")


if __name__ == "__main__":
    sys.exit(main())

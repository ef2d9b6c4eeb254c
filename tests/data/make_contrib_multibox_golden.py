"""Golden outputs of MXNet 1.9.1's multibox operators for tests/ops/test_contrib_multibox.py.

Run with MXNet's own interpreter (the oracle venv), from the repository root:
    /work/mxnet-oracle/bin/python tests/data/make_contrib_multibox_golden.py
writes tests/data/contrib_multibox_golden.npz: for each case "<name>/in<i>" and "<name>/out<i>".
The cases' parameters are in the *_CASES dicts below, which the test imports (numbers, tuples and
strings only); the inputs are made here from a fixed seed and stored.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

PRIOR_CASES = {
    "prior_default": {},
    "prior_sizes_ratios": {"sizes": (0.6, 0.3), "ratios": (1.0, 2.0, 0.5)},
    "prior_steps_clip": {"sizes": (0.9,), "ratios": (3.0, 1.0), "steps": (0.2, 0.25),
                         "offsets": (0.3, 0.6), "clip": True},
}
# (params, dtype, label width); MXNet 1.9.1 runs these legacy operators on float32 only
TARGET_CASES = {
    "target_default": ({}, "float32", 5),
    "target_mining": ({"negative_mining_ratio": 3.0, "negative_mining_thresh": 0.5},
                      "float32", 5),
    "target_bipartite_only": ({"overlap_threshold": 0.0, "ignore_label": -2.0,
                               "negative_mining_ratio": 2.0, "negative_mining_thresh": 0.3,
                               "variances": (0.2, 0.2, 0.5, 0.5)}, "float32", 6),
    "target_low_threshold": ({"overlap_threshold": 0.2, "negative_mining_ratio": 1.5,
                                  "negative_mining_thresh": 0.4, "minimum_negative_samples": 4},
                                 "float32", 5),
}
DETECT_CASES = {
    "detect_default": ({}, "float32"),
    "detect_force_topk": ({"force_suppress": True, "nms_topk": 12, "threshold": 0.2,
                           "nms_threshold": 0.3}, "float32"),
    "detect_noclip_no_nms": ({"clip": False, "nms_threshold": 0.0,
                              "variances": (0.2, 0.2, 0.3, 0.3)}, "float32"),
    "detect_high_nms": ({"nms_threshold": 0.7, "threshold": 0.3, "background_id": 2},
                            "float32"),
}
PRIOR_PARAMS = {"sizes": (0.35, 0.2), "ratios": (1.0, 2.0, 0.5)}      # 4x4 map: 64 anchors


def _labels(rs, batch, width, counts):
    """Labels (batch, max(counts) + 1, width): counts[i] objects, then rows of -1."""
    out = -np.ones((batch, max(counts) + 1, width))
    for b, k in enumerate(counts):
        xy = rs.uniform(0, 0.7, (k, 2))
        wh = rs.uniform(0.1, 0.4, (k, 2))
        out[b, :k, 0] = rs.randint(0, 3, k)
        out[b, :k, 1:3] = xy
        out[b, :k, 3:5] = np.minimum(xy + wh, 1)
        if width > 5:
            out[b, :k, 5:] = rs.uniform(0, 1, (k, width - 5))
    return out


def main():
    import mxnet as mx
    rs = np.random.RandomState(26)
    G = {}
    for name, params in PRIOR_CASES.items():
        data = np.zeros((1, 2, 5, 7), np.float32)
        out = mx.nd.contrib.MultiBoxPrior(mx.nd.array(data), **params)
        G[f"{name}/in0"], G[f"{name}/out0"] = data, out.asnumpy()
    anchors = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 4, 4)), **PRIOR_PARAMS).asnumpy()
    n = anchors.shape[1]
    for name, (params, dt, width) in TARGET_CASES.items():
        label = _labels(rs, 3, width, [3, 0, 5]).astype(dt)
        pred = rs.normal(0, 2, (3, 4, n)).astype(dt)
        ins = [anchors.astype(dt), label, pred]
        outs = mx.nd.contrib.MultiBoxTarget(*[mx.nd.array(v, dtype=dt) for v in ins], **params)
        for i, v in enumerate(ins):
            G[f"{name}/in{i}"] = v
        for i, v in enumerate(outs):
            G[f"{name}/out{i}"] = v.asnumpy()
    for name, (params, dt) in DETECT_CASES.items():
        logits = rs.normal(0, 2, (2, 4, n))
        prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        prob = np.round(prob, 2).astype(dt)         # ties in the scores on purpose
        loc = rs.normal(0, 0.7, (2, n * 4)).astype(dt)
        ins = [prob, loc, anchors.astype(dt)]
        out = mx.nd.contrib.MultiBoxDetection(*[mx.nd.array(v, dtype=dt) for v in ins],
                                              **params)
        for i, v in enumerate(ins):
            G[f"{name}/in{i}"] = v
        G[f"{name}/out0"] = out.asnumpy()
    np.savez_compressed(os.path.join(HERE, "contrib_multibox_golden.npz"), **G)
    print(f"{len(G)} arrays written")


if __name__ == "__main__":
    sys.exit(main())

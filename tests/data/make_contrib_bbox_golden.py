"""Golden outputs of MXNet 1.9.1's bounding-box operators for tests/ops/test_contrib_bbox.py.

Run with MXNet's own interpreter (the oracle venv), from the repository root:
    /work/mxnet-oracle/bin/python tests/data/make_contrib_bbox_golden.py
writes tests/data/contrib_bbox_golden.npz: for each case "<name>/in<i>", "<name>/out<i>" and,
for box_nms, "<name>/head" with the input gradient "<name>/grad" under that head. The cases'
parameters are in CASES below, which the test imports (strings and numbers only).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _boxes(rs, shape, width, coord=2, score=1, cid=0, n_cls=3):
    """Random detections: corner boxes with overlaps, scores with ties, class ids."""
    x = rs.uniform(0, 1, shape + (width,))
    xy = rs.uniform(0, 6, shape + (2,))
    wh = rs.uniform(0.5, 4, shape + (2,))
    x[..., coord:coord + 2] = xy
    x[..., coord + 2:coord + 4] = xy + wh
    if score >= 0:
        x[..., score] = np.round(rs.uniform(0, 1, shape), 1)      # ties on purpose
    if cid >= 0:
        x[..., cid] = rs.randint(0, n_cls, shape)
    return x


# (name, op, params, input builder seed/shape info); the inputs are made here and stored
NMS_CASES = {
    "nms_default": {},
    "nms_class": {"id_index": 0, "overlap_thresh": 0.3},
    "nms_force": {"id_index": 0, "force_suppress": True, "overlap_thresh": 0.2},
    "nms_topk_valid": {"id_index": 0, "topk": 4, "valid_thresh": 0.35},
    "nms_background": {"id_index": 0, "background_id": 1, "overlap_thresh": 0.4},
    "nms_center_out": {"id_index": 0, "out_format": "center"},
    "nms_center_in": {"id_index": 0, "in_format": "center", "overlap_thresh": 0.25},
}
MATCH_CASES = {
    "match_desc": {"threshold": 0.3},
    "match_asc": {"threshold": 0.6, "is_ascend": True},
    "match_topk": {"threshold": 0.05, "topk": 2},
}
DECODE_CASES = {
    "decode_center": {"std0": 0.1, "std1": 0.1, "std2": 0.2, "std3": 0.2},
    "decode_corner_clip": {"format": "corner", "clip": 0.5, "std2": 2.0},
}
def main():
    import mxnet as mx
    rs = np.random.RandomState(11)
    G = {}
    for name, params in NMS_CASES.items():
        data = _boxes(rs, (2, 12), 6).astype(np.float32)
        if params.get("in_format") == "center":
            c = data[..., 2:6].copy()
            data[..., 2:4] = (c[..., 0:2] + c[..., 2:4]) / 2
            data[..., 4:6] = c[..., 2:4] - c[..., 0:2]
        x = mx.nd.array(data)
        x.attach_grad()
        with mx.autograd.record():
            out = mx.nd.contrib.box_nms(x, **params)
        head = rs.uniform(-1, 1, out.shape).astype(np.float32)
        out.backward(mx.nd.array(head))
        G[f"{name}/in0"], G[f"{name}/out0"] = data, out.asnumpy()
        G[f"{name}/head"], G[f"{name}/grad"] = head, x.grad.asnumpy()
    for name, params in MATCH_CASES.items():
        data = np.round(rs.uniform(0, 1, (2, 5, 4)), 1).astype(np.float32)
        rows, cols = mx.nd.contrib.bipartite_matching(mx.nd.array(data), **params)
        G[f"{name}/in0"], G[f"{name}/out0"], G[f"{name}/out1"] = \
            data, rows.asnumpy(), cols.asnumpy()
    a = _boxes(rs, (7,), 4, coord=0, score=-1, cid=-1)[None].astype(np.float32)[:, :, :4]
    a = np.concatenate([a, a], axis=0)
    refs = _boxes(rs, (2, 3), 4, coord=0, score=-1, cid=-1).astype(np.float32)[..., :4]
    samples = rs.choice([-1.0, 0.0, 1.0], (2, 7)).astype(np.float32)
    matches = rs.randint(0, 3, (2, 7)).astype(np.float32)
    means = np.array([0.1, -0.1, 0.05, 0.0], np.float32)
    stds = np.array([0.1, 0.1, 0.2, 0.2], np.float32)
    ins = [samples, matches, a, refs, means, stds]
    t, m = mx.nd.contrib.box_encode(*[mx.nd.array(v) for v in ins])
    for i, v in enumerate(ins):
        G[f"encode/in{i}"] = v
    G["encode/out0"], G["encode/out1"] = t.asnumpy(), m.asnumpy()
    for name, params in DECODE_CASES.items():
        data = rs.uniform(-1, 1, (2, 7, 4)).astype(np.float32)
        anchors = a[:1]
        out = mx.nd.contrib.box_decode(mx.nd.array(data), mx.nd.array(anchors), **params)
        G[f"{name}/in0"], G[f"{name}/in1"], G[f"{name}/out0"] = data, anchors, out.asnumpy()
    np.savez_compressed(os.path.join(HERE, "contrib_bbox_golden.npz"), **G)
    print(f"{len(G)} arrays written")


if __name__ == "__main__":
    sys.exit(main())

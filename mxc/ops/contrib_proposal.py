"""Region proposals (Faster R-CNN's RPN) from MXNet 1.9.1's contrib: ``_contrib_Proposal`` (one
image) and ``_contrib_MultiProposal`` (a batch), with MXNet's algorithm:

anchors (ratios x scales around a feature_stride square, shifted over the feature map; index
h * (W * A) + w * A + a) are moved by ``bbox_pred`` (centre/size deltas, or corner deltas with
``iou_loss``) and clipped to the image; anchors beyond im_info's real size and boxes smaller
than rpn_min_size * scale get score -1; the rpn_pre_nms_top_n best are kept, greedy NMS at
``threshold`` keeps up to rpn_post_nms_top_n, and the output repeats the kept boxes cyclically
to fill rpn_post_nms_top_n rows of [batch_index, x1, y1, x2, y2] (and the scores with
``output_score``). Gradients are zero, as in MXNet. Runs numpy on the host (``_host``).
"""
import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register

_PARAMS = (Param("rpn_pre_nms_top_n", int, 6000), Param("rpn_post_nms_top_n", int, 300),
           Param("threshold", float, 0.7), Param("rpn_min_size", int, 16),
           Param("scales", "shape_f", (4.0, 8.0, 16.0, 32.0)),
           Param("ratios", "shape_f", (0.5, 1.0, 2.0)),
           Param("feature_stride", int, 16), Param("output_score", bool, False),
           Param("iou_loss", bool, False))


def _anchors(a):
    f32 = np.float32
    base = np.array([0, 0, a["feature_stride"] - 1, a["feature_stride"] - 1], f32)
    w = base[2] - base[0] + f32(1)
    h = base[3] - base[1] + f32(1)
    xc = base[0] + f32(0.5) * (w - f32(1))
    yc = base[1] + f32(0.5) * (h - f32(1))
    out = []
    for r in a["ratios"]:
        for s in a["scales"]:
            r, s = f32(r), f32(s)
            size_r = np.floor(w * h / r)
            nw = np.floor(np.sqrt(size_r) + f32(0.5)) * s
            nh = np.floor(nw / s * r + f32(0.5)) * s
            out.append([xc - f32(0.5) * (nw - 1), yc - f32(0.5) * (nh - 1),
                        xc + f32(0.5) * (nw - 1), yc + f32(0.5) * (nh - 1)])
    return np.array(out, f32)


def _nms(dets, thresh, top_n):
    x1, y1, x2, y2 = dets[:, 0], dets[:, 1], dets[:, 2], dets[:, 3]
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    n = dets.shape[0]
    suppressed = np.zeros(n, bool)
    keep = []
    for i in range(n):
        if len(keep) >= top_n:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        j = np.arange(i + 1, n)
        j = j[~suppressed[i + 1:]]
        if not j.size:
            continue
        w = np.maximum(np.float32(0), np.minimum(x2[i], x2[j]) - np.maximum(x1[i], x1[j]) + 1)
        h = np.maximum(np.float32(0), np.minimum(y2[i], y2[j]) - np.maximum(y1[i], y1[j]) + 1)
        inter = w * h
        ovr = inter / (area[i] + area[j] - inter)
        suppressed[j[ovr > thresh]] = True
    return np.array(keep, np.int64)


def _one_image(a, scores, deltas, info):
    """scores (A, H, W) foreground, deltas (4A, H, W), info (3,) -> boxes (post, 4), scores."""
    f32 = np.float32
    A, H, W = scores.shape
    count = A * H * W
    pre = a["rpn_pre_nms_top_n"] if a["rpn_pre_nms_top_n"] > 0 else count
    pre = min(pre, count)
    post = min(a["rpn_post_nms_top_n"], pre)
    stride = a["feature_stride"]
    base = _anchors(a)                                                      # (A, 4)
    if base.shape[0] != A:
        raise ValueError(f"Proposal: cls_prob has {A} anchors per position but ratios x scales "
                         f"give {base.shape[0]}")
    sx = (np.arange(W, dtype=f32) * stride)[None, :, None]
    sy = (np.arange(H, dtype=f32) * stride)[:, None, None]
    boxes = np.empty((H, W, A, 4), f32)
    boxes[..., 0] = base[None, None, :, 0] + sx
    boxes[..., 1] = base[None, None, :, 1] + sy
    boxes[..., 2] = base[None, None, :, 2] + sx
    boxes[..., 3] = base[None, None, :, 3] + sy
    score = scores.astype(f32).transpose(1, 2, 0).copy()                    # (H, W, A)
    d = deltas.astype(f32).reshape(A, 4, H, W).transpose(2, 3, 0, 1)        # (H, W, A, 4)
    im_h, im_w, im_scale = f32(info[0]), f32(info[1]), f32(info[2])
    if a["iou_loss"]:
        pred = boxes + d
    else:
        bw = boxes[..., 2] - boxes[..., 0] + f32(1)
        bh = boxes[..., 3] - boxes[..., 1] + f32(1)
        cx = boxes[..., 0] + f32(0.5) * (bw - f32(1))
        cy = boxes[..., 1] + f32(0.5) * (bh - f32(1))
        pcx = d[..., 0] * bw + cx
        pcy = d[..., 1] * bh + cy
        pw = np.exp(d[..., 2]) * bw
        ph = np.exp(d[..., 3]) * bh
        pred = np.stack([pcx - f32(0.5) * (pw - f32(1)), pcy - f32(0.5) * (ph - f32(1)),
                         pcx + f32(0.5) * (pw - f32(1)), pcy + f32(0.5) * (ph - f32(1))], -1)
    pred[..., 0::2] = np.clip(pred[..., 0::2], f32(0), im_w - f32(1))
    pred[..., 1::2] = np.clip(pred[..., 1::2], f32(0), im_h - f32(1))
    real_h, real_w = int(im_h / stride), int(im_w / stride)
    if real_h > H or real_w > W:
        raise ValueError(f"Proposal: im_info ({float(im_h)}, {float(im_w)}) is larger than the "
                         f"feature map ({H}, {W}) times feature_stride {stride}")
    score[real_h:, :, :] = -1
    score[:, real_w:, :] = -1
    min_size = f32(a["rpn_min_size"]) * im_scale
    iw = pred[..., 2] - pred[..., 0] + f32(1)
    ih = pred[..., 3] - pred[..., 1] + f32(1)
    small = (iw < min_size) | (ih < min_size)
    half = min_size / f32(2)
    pred[small] += np.array([-half, -half, half, half], f32)
    score[small] = -1
    pred = pred.reshape(-1, 4)
    score = score.reshape(-1)
    order = np.argsort(-score, kind="stable")[:pre]
    dets = np.concatenate([pred[order], score[order, None]], axis=1)
    keep = _nms(dets, np.float32(a["threshold"]), post)
    rows = keep[np.arange(a["rpn_post_nms_top_n"]) % len(keep)]
    return dets[rows, :4], dets[rows, 4:5]


def _check(name, shapes, batch_one):
    cls, bbox, info = (tuple(s) for s in shapes)
    if len(cls) != 4 or cls[1] % 2:
        raise ValueError(f"{name}: cls_prob must be (batch, 2 * anchors, H, W), got {cls}")
    want = (cls[0], cls[1] * 2, cls[2], cls[3])
    if bbox != want:
        raise ValueError(f"{name}: bbox_pred has shape {bbox}, expected {want}")
    if info != (cls[0], 3):
        raise ValueError(f"{name}: im_info has shape {info}, expected {(cls[0], 3)}")
    if batch_one and cls[0] != 1:
        raise ValueError(f"{name}: takes one image (batch 1), got batch {cls[0]}; use "
                         f"MultiProposal")
    return cls[0]


def _infer(name, batch_one):
    def infer(a, shapes, dtypes):
        n = _check(name, shapes, batch_one)
        rows = n * a["rpn_post_nms_top_n"]
        return [(rows, 5), (rows, 1)], [np.float32, np.float32]
    return infer


def _compute(a, cls, bbox, info):
    A = cls.shape[1] // 2
    outs, scores = [], []
    for b in range(cls.shape[0]):
        boxes, sc = _one_image(a, cls[b, A:], bbox[b], info[b])
        outs.append(np.concatenate([np.full((boxes.shape[0], 1), b, np.float32), boxes], 1))
        scores.append(sc)
    return np.concatenate(outs), np.concatenate(scores)


def _grad(F, a, inputs, outputs, out_grads):
    return [F.zeros_like(x) for x in inputs]


for _name, _one in (("_contrib_Proposal", True), ("_contrib_MultiProposal", False)):
    register(OpDef(_name, inputs=("cls_prob", "bbox_pred", "im_info"), params=_PARAMS,
                   infer=_infer(_name, _one), forward=host_forward(_name, _compute),
                   grad=_grad, num_outputs=2,
                   num_visible_outputs=lambda a: 2 if a["output_score"] else 1,
                   output_names=("output", "score"),
                   doc="Region proposals from RPN scores and box deltas: "
                       + ("one image." if _one else "a batch, rows tagged with the image.")))

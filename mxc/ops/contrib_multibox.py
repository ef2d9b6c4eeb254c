"""SSD's multibox operators from MXNet 1.9.1's contrib: ``_contrib_MultiBoxPrior`` (anchors),
``_contrib_MultiBoxTarget`` (training targets) and ``_contrib_MultiBoxDetection`` (decoded,
suppressed detections), with their ``_npx_multibox_*`` aliases.

They run on the host (``_host``): target assignment and suppression are greedy, data
dependent loops over one image's boxes, and the operators sit at the two ends of a detection
network. numpy does the vectorisable parts; the suppression loop, O(kept * detections) per
image, is C without the GIL (``ops/cpu/_multibox.pyx``, one image per OpenMP thread). Semantics follow MXNet's CPU code, step for step where the order decides the result:
- boxes are corner boxes (xmin, ymin, xmax, ymax) in relative coordinates; anchors are shared
  by the batch (shape (1, N, 4)); labels are rows (class, xmin, ymin, xmax, ymax, ...) padded
  with rows of -1 (the first row whose class is -1 ends an image's labels).
- MultiBoxTarget matches greedily: repeatedly the (anchor, label) pair of highest IoU among the
  unmatched ones (ties: the lowest anchor, then the lowest label), until every label has an
  anchor or no IoU exceeds 1e-6; then every other anchor whose best IoU exceeds
  overlap_threshold. With negative mining, the unmatched anchors whose best IoU is below
  negative_mining_thresh are ranked by their background probability (softmax of cls_pred,
  lowest first, stable) and the first ``int(positives * negative_mining_ratio)`` become
  negatives (class 0); without it every unmatched anchor is a negative. The rest get
  ignore_label. minimum_negative_samples is accepted and, as in MXNet 1.9.1, not used.
- MultiBoxDetection takes each anchor's best non-background class (scores below threshold make
  it background), decodes its box with the variances, moves the detections to the front in
  anchor order (the other rows are -1), sorts them by score (stable), keeps nms_topk, and
  suppresses a detection whose IoU with a kept higher-scored one of the same class (any class
  with force_suppress) is at least nms_threshold by setting its class to -1. background_id is
  accepted and, as in MXNet 1.9.1's kernels, class 0 is the background.
Gradients are zero, as in MXNet.
"""
import numpy as np

from .._core.opcall import kernel_threads
from ..base import MXNetError
from ._host import host_forward
from .cpu import _multibox
from .params import Param
from .registry import KERNEL_THREADS, OpDef, register

_F32 = np.float32


def _calc(dtype):
    # float16 is computed in float32 (numpy's float16 arithmetic is emulated and slow)
    return _F32 if dtype == np.float16 else np.dtype(dtype).type


def _zero_grads(F, a, inputs, outputs, out_grads):
    return [F.zeros_like(x) for x in inputs]


def _variances(op, a):
    v = tuple(a["variances"])
    if len(v) != 4:
        raise ValueError(f"{op}: variances takes 4 values (x, y, width, height), got {v}")
    return [_F32(x) for x in v]


# ---- MultiBoxPrior ----------------------------------------------------------------------------
def _prior_infer(a, s, d):
    shape = tuple(s[0])
    if len(shape) != 4:
        raise ValueError(f"MultiBoxPrior: data must be 4-D (batch, channel, height, width), got "
                         f"shape {shape}")
    if not a["sizes"] or not a["ratios"]:
        raise ValueError("MultiBoxPrior: sizes and ratios must not be empty")
    if len(a["steps"]) != 2 or len(a["offsets"]) != 2:
        raise ValueError(f"MultiBoxPrior: steps and offsets take 2 values (y, x), got "
                         f"{a['steps']} and {a['offsets']}")
    n = shape[2] * shape[3] * (len(a["sizes"]) + len(a["ratios"]) - 1)
    return [(1, n, 4)], [d[0]]


def _prior_fwd(a, data):
    # float32 arithmetic throughout, as MXNet's C++ (float parameters, float centres)
    f = _F32
    H, W = data.shape[2], data.shape[3]
    step_y, step_x = (f(v) for v in a["steps"])
    if step_y * step_x < 0:
        raise ValueError("MultiBoxPrior: give both steps (y, x) or neither")
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = f(1) / f(H), f(1) / f(W)
    sizes = [f(v) for v in a["sizes"]]
    ratios = [f(v) for v in a["ratios"]]
    # the anchors of one location: every size at the first ratio, then the first size at the
    # other ratios
    shapes = [(sz, np.sqrt(ratios[0])) for sz in sizes] + \
        [(sizes[0], np.sqrt(r)) for r in ratios[1:]]
    half_w = np.array([sz * f(H) / f(W) * rt / f(2) for sz, rt in shapes], f)
    half_h = np.array([sz / rt / f(2) for sz, rt in shapes], f)
    cy = ((np.arange(H, dtype=f) + f(a["offsets"][0])) * step_y)[:, None, None]
    cx = ((np.arange(W, dtype=f) + f(a["offsets"][1])) * step_x)[None, :, None]
    out = np.stack(np.broadcast_arrays(cx - half_w, cy - half_h, cx + half_w, cy + half_h),
                   axis=-1)
    if a["clip"]:
        out = np.clip(out, 0, 1)
    return out.reshape(1, -1, 4).astype(data.dtype)


register(OpDef("_contrib_MultiBoxPrior", aliases=("_npx_multibox_prior",),
               params=(Param("sizes", "floats", (1.0,)), Param("ratios", "floats", (1.0,)),
                       Param("clip", bool, False), Param("steps", "floats", (-1.0, -1.0)),
                       Param("offsets", "floats", (0.5, 0.5))),
               infer=_prior_infer, forward=host_forward("_contrib_MultiBoxPrior", _prior_fwd),
               grad=_zero_grads,
               doc="SSD anchor boxes (corner format, relative coordinates) for every location "
                   "of a feature map."))


# ---- MultiBoxTarget ---------------------------------------------------------------------------
_VARIANCES = Param("variances", "floats", (0.1, 0.1, 0.2, 0.2))


def _target_infer(a, s, d):
    anchor, label, pred = (tuple(x) for x in s)
    if len(anchor) != 3 or anchor[0] != 1 or anchor[1] < 1 or anchor[2] != 4:
        raise ValueError(f"MultiBoxTarget: anchor must be (1, num_anchors > 0, 4) (shared by the "
                         f"batch), got {anchor}")
    if len(label) != 3 or label[1] < 1 or label[2] < 5:
        raise ValueError(f"MultiBoxTarget: label must be (batch, num_labels > 0, width >= 5) "
                         f"rows of (class, xmin, ymin, xmax, ymax), got {label}")
    if len(pred) != 3 or pred[2] != anchor[1]:
        raise ValueError(f"MultiBoxTarget: cls_pred must be (batch, num_classes, {anchor[1]}) "
                         f"(one column per anchor), got {pred}")
    if pred[0] != label[0]:
        raise ValueError(f"MultiBoxTarget: cls_pred has batch {pred[0]}, label {label[0]}")
    _variances("MultiBoxTarget", a)
    if a["negative_mining_ratio"] > 0 and not a["negative_mining_thresh"] > 0:
        raise ValueError("MultiBoxTarget: negative_mining_thresh must be > 0 with negative "
                         "mining")
    n = anchor[1]
    return [(label[0], n * 4), (label[0], n * 4), (label[0], n)], [d[0]] * 3


def _num_valid(op, lab):
    """Labels of one image: the rows before the first one whose class is -1."""
    pad = np.nonzero(lab[:, 0] == -1)[0]
    if not len(pad):
        return len(lab)
    k = int(pad[0])
    if np.any(lab[k, 1:5] != -1):
        raise MXNetError(f"{op}: label row {k} has class -1 (padding) but coordinates "
                         f"{lab[k, 1:5].tolist()}; padding rows must be all -1")
    return k


def _overlaps(anchors, gts):
    """IoU of every anchor (N, 4) with every ground truth (K, 4), 0 where the union is 0."""
    a = anchors[:, None, :]
    g = gts[None, :, :]
    iw = np.maximum(0, np.minimum(a[..., 2], g[..., 2]) - np.maximum(a[..., 0], g[..., 0]))
    ih = np.maximum(0, np.minimum(a[..., 3], g[..., 3]) - np.maximum(a[..., 1], g[..., 1]))
    inter = iw * ih
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, 0, inter / union)


def _match(iou, overlap_threshold):
    """Per anchor: 1 positive, -1 undecided; its best IoU and that label (-1, -1: none)."""
    n, k = iou.shape
    flags = np.full(n, -1, np.int8)
    best = np.full(n, -1, _F32)
    gt_of = np.full(n, -1, np.int64)
    free = iou.copy()                       # -inf marks a matched anchor's row or label's column
    for _ in range(k):
        j, g = divmod(int(np.argmax(free)), k)      # first maximum: lowest anchor, then label
        if not free[j, g] > _F32(1e-6):
            break
        best[j], gt_of[j], flags[j] = free[j, g], g, 1
        free[j, :] = -np.inf
        free[:, g] = -np.inf
    rest = np.nonzero(flags != 1)[0]
    if len(rest):
        g = np.argmax(iou[rest], axis=1)
        m = iou[rest, g]
        ok = m > -1                             # MXNet's running maximum starts at -1
        best[rest[ok]], gt_of[rest[ok]] = m[ok], g[ok]
        if overlap_threshold > 0:
            flags[rest[ok & (m > _F32(overlap_threshold))]] = 1
    return flags, best, gt_of


def _background_prob(pred):
    """Softmax probability of class 0 per anchor from (classes, anchors) scores, summed class
    by class in the scores' dtype as MXNet does."""
    top = pred.max(axis=0)
    total = np.zeros_like(top)
    for row in pred:
        total += np.exp(row - top)
    return np.exp(pred[0] - top) / total


def _loc_targets(anchors, gts, var):
    """Encoded offsets of matched ground truths against their anchors, in float32."""
    a, g = anchors.astype(_F32), gts.astype(_F32)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) * _F32(0.5), (a[:, 1] + a[:, 3]) * _F32(0.5)
    gw, gh = g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]
    gx, gy = (g[:, 0] + g[:, 2]) * _F32(0.5), (g[:, 1] + g[:, 3]) * _F32(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(gx - ax) / aw / var[0], (gy - ay) / ah / var[1],
                         np.log(gw / aw) / var[2], np.log(gh / ah) / var[3]], axis=1)


def _target_fwd(a, anchor, label, cls_pred):
    op = "MultiBoxTarget"
    calc = _calc(anchor.dtype)
    var = _variances(op, a)
    anchors = anchor.reshape(-1, 4).astype(calc)
    n = anchors.shape[0]
    batch = label.shape[0]
    loc = np.zeros((batch, n, 4), _F32)
    mask = np.zeros((batch, n, 4), anchor.dtype)
    cls = np.full((batch, n), a["ignore_label"], _F32)
    ratio, thresh = _F32(a["negative_mining_ratio"]), _F32(a["negative_mining_thresh"])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for b in range(batch):
            lab = label[b].astype(calc)
            k = _num_valid(op, lab)
            if k == 0:
                continue
            flags, best, gt_of = _match(_overlaps(anchors, lab[:k, 1:5]).astype(_F32),
                                        a["overlap_threshold"])
            npos = int(np.count_nonzero(flags == 1))
            if ratio > 0:
                nneg = min(int(_F32(npos) * ratio), n - npos)
                if nneg > 0:
                    cand = np.nonzero((flags == -1) & (best < thresh))[0]
                    if len(cand) < nneg:
                        raise MXNetError(
                            f"{op}: negative mining wants {nneg} negatives in batch element "
                            f"{b} but only {len(cand)} anchors have an IoU below "
                            f"negative_mining_thresh={a['negative_mining_thresh']}")
                    prob = _background_prob(cls_pred[b].astype(calc)[:, cand])
                    flags[cand[np.argsort(prob, kind="stable")[:nneg]]] = 0
            else:
                flags[flags != 1] = 0
            pos = np.nonzero(flags == 1)[0]
            cls[b, flags == 0] = 0
            cls[b, pos] = lab[gt_of[pos], 0] + 1
            mask[b, pos] = 1
            loc[b, pos] = _loc_targets(anchors[pos], lab[gt_of[pos], 1:5], var)
    dt = anchor.dtype
    return (loc.reshape(batch, -1).astype(dt), mask.reshape(batch, -1),
            cls.astype(dt))


register(OpDef("_contrib_MultiBoxTarget", aliases=("_npx_multibox_target",),
               inputs=("anchor", "label", "cls_pred"),
               output_names=("loc_target", "loc_mask", "cls_target"),
               params=(Param("overlap_threshold", float, 0.5),
                       Param("ignore_label", float, -1.0),
                       Param("negative_mining_ratio", float, -1.0),
                       Param("negative_mining_thresh", float, 0.5),
                       Param("minimum_negative_samples", int, 0), _VARIANCES),
               infer=_target_infer, forward=host_forward("_contrib_MultiBoxTarget", _target_fwd),
               grad=_zero_grads, num_outputs=3,
               doc="SSD training targets: box regression targets and their mask (batch, "
                   "num_anchors * 4), and the class of each anchor (batch, num_anchors; 0 "
                   "background, ignore_label for anchors left out)."))


# ---- MultiBoxDetection ------------------------------------------------------------------------
def _detect_infer(a, s, d):
    prob, loc, anchor = (tuple(x) for x in s)
    if len(prob) != 3 or len(loc) != 2 or len(anchor) != 3:
        raise ValueError(f"MultiBoxDetection: expects cls_prob (batch, num_classes, "
                         f"num_anchors), loc_pred (batch, num_anchors * 4) and anchor (1, "
                         f"num_anchors, 4), got {prob}, {loc} and {anchor}")
    if anchor[1] < 1 or anchor[2] != 4 or prob[2] != anchor[1]:
        raise ValueError(f"MultiBoxDetection: {prob[2]} anchors in cls_prob, anchor has shape "
                         f"{anchor}")
    if loc[1] != prob[2] * 4 or loc[0] != prob[0]:
        raise ValueError(f"MultiBoxDetection: loc_pred must be ({prob[0]}, {prob[2] * 4}), got "
                         f"{loc}")
    _variances("MultiBoxDetection", a)
    return [(prob[0], anchor[1], 6)], [d[0]]


def _decode(anchors, pred, var, clip):
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) / 2, (anchors[:, 1] + anchors[:, 3]) / 2
    ox = pred[:, 0] * var[0] * aw + ax
    oy = pred[:, 1] * var[1] * ah + ay
    ow = np.exp(pred[:, 2] * var[2]) * aw / 2
    oh = np.exp(pred[:, 3] * var[3]) * ah / 2
    box = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
    return np.clip(box, 0, 1) if clip else box


def _detect_fwd(a, cls_prob, loc_pred, anchor):
    calc = _calc(cls_prob.dtype)
    var = [calc(v) for v in _variances("MultiBoxDetection", a)]
    batch, ncls, n = cls_prob.shape
    anchors = anchor.reshape(-1, 4).astype(calc)
    out = np.full((batch, n, 6), -1, calc)
    nms, topk = _F32(a["nms_threshold"]), a["nms_topk"]
    keep = np.zeros(batch, np.int64)          # rows of each image that take part in the NMS
    with np.errstate(over="ignore", invalid="ignore"):
        for b in range(batch):
            prob = cls_prob[b].astype(calc)
            if ncls > 1:
                cid = np.argmax(prob[1:], axis=0) + 1     # first maximum: lowest class
                score = prob[1:].max(axis=0)
                cid[~(score > -1)] = 0                    # MXNet's running maximum starts at -1
                score = np.where(score > -1, score, calc(-1))
            else:
                cid, score = np.zeros(n, np.int64), np.full(n, -1, calc)
            cid[score < calc(_F32(a["threshold"]))] = 0
            valid = np.nonzero(cid > 0)[0]
            nv = len(valid)
            if not nv:
                continue
            rows = out[b]
            rows[:nv, 0] = cid[valid] - 1
            rows[:nv, 1] = score[valid]
            rows[:nv, 2:] = _decode(anchors[valid], loc_pred[b].reshape(-1, 4)[valid]
                                    .astype(calc), var, a["clip"])
            if not 0 < nms <= 1:
                continue
            order = np.argsort(-rows[:nv, 1], kind="stable")
            k = nv if not 0 < topk < nv else topk
            ranked = rows[order[:k]]
            # rows past topk keep their unsorted values with class -1, as MXNet leaves them
            rows[k:nv, 0] = -1
            rows[:k] = ranked
            keep[b] = k
    # the greedy suppression, in C (ops/cpu/_multibox.pyx)
    _multibox.suppress(out, keep, float(nms), bool(a["force_suppress"]),
                       kernel_threads(KERNEL_THREADS))
    return out.astype(cls_prob.dtype)


register(OpDef("_contrib_MultiBoxDetection", aliases=("_npx_multibox_detection",),
               inputs=("cls_prob", "loc_pred", "anchor"),
               params=(Param("clip", bool, True), Param("threshold", float, 0.01),
                       Param("background_id", int, 0), Param("nms_threshold", float, 0.5),
                       Param("force_suppress", bool, False), _VARIANCES,
                       Param("nms_topk", int, -1)),
               infer=_detect_infer,
               forward=host_forward("_contrib_MultiBoxDetection", _detect_fwd),
               grad=_zero_grads,
               doc="SSD detections (batch, num_anchors, 6): rows of (class, score, xmin, ymin, "
                   "xmax, ymax) after decoding and non-maximum suppression; class -1 marks "
                   "rows that are not detections."))

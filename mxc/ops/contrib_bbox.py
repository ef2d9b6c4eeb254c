"""Bounding-box operators from MXNet 1.9.1's contrib: ``_contrib_box_nms`` (alias
``_contrib_box_non_maximum_suppression``), ``_contrib_box_iou``, ``_contrib_bipartite_matching``,
``_contrib_box_encode``, ``_contrib_box_decode``, and ``_contrib_gradientmultiplier``.

The box operators run numpy on the host (``_host``): their loops are greedy and data dependent,
and they sit after the network in detection pipelines. Semantics follow MXNet's CPU code:
- boxes are "corner" (xmin, ymin, xmax, ymax) or "center" (x, y, width, height); an area is 0
  when a width or height is negative; the overlap of two boxes is the product of the clipped
  overlaps per axis.
- box_nms sorts the valid boxes of each batch element by descending score (stable: equal scores
  keep their input order), keeps the first ``topk``, and suppresses greedily a box whose IoU
  with a kept higher-scored box (of the same class unless ``force_suppress``) exceeds
  ``overlap_thresh``. Kept boxes come first, the rest of the rows are -1; a hidden second
  output records each kept row's source position, which the gradient scatters back to.
- bipartite_matching walks the pairs of each batch element in score order (stable) and matches
  a free row with a free column until a score fails the threshold (it stops there, as MXNet).
Gradients of box_iou, bipartite_matching, box_encode and box_decode are zero, as in MXNet.
"""
import numpy as np

from ._host import host_forward
from .params import Param
from .registry import OpDef, register

_FORMATS = ("corner", "center")


def _calc(dtype):
    # float16 boxes are compared in float32 (numpy's float16 arithmetic is emulated and slow)
    return np.float32 if dtype == np.float16 else np.dtype(dtype).type


def _extent(lo, hi, fmt):
    """(left, right) of an axis from a box's pair of values on it."""
    if fmt == "corner":
        return lo, hi
    return lo - hi / 2, lo + hi / 2


def _overlap_1d(a0, a1, b0, b1, fmt):
    al, ar = _extent(a0, a1, fmt)
    bl, br = _extent(b0, b1, fmt)
    return np.maximum(np.minimum(ar, br) - np.maximum(al, bl), 0)


def _area(box, fmt):
    w = box[..., 2] - box[..., 0] if fmt == "corner" else box[..., 2]
    h = box[..., 3] - box[..., 1] if fmt == "corner" else box[..., 3]
    return np.where((w < 0) | (h < 0), 0, w * h)


def _intersect(a, b, fmt):
    return (_overlap_1d(a[..., 0], a[..., 2], b[..., 0], b[..., 2], fmt)
            * _overlap_1d(a[..., 1], a[..., 3], b[..., 1], b[..., 3], fmt))


def _to_format(boxes, src, dst):
    """Rows whose first coordinate is negative (the -1 padding) are left as they are."""
    if src == dst:
        return boxes
    out = boxes.copy()
    ok = boxes[:, 0] >= 0
    b = boxes[ok]
    if dst == "center":
        out[ok] = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2,
                            b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    else:
        out[ok] = np.stack([b[:, 0] - b[:, 2] / 2, b[:, 1] - b[:, 3] / 2,
                            b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2], axis=1)
    return out


# ---- box_nms ----------------------------------------------------------------------------------
_NMS_PARAMS = (Param("overlap_thresh", float, 0.5), Param("valid_thresh", float, 0.0),
               Param("topk", int, -1), Param("coord_start", int, 2), Param("score_index", int, 1),
               Param("id_index", int, -1), Param("background_id", int, -1),
               Param("force_suppress", bool, False),
               Param("in_format", str, "corner", choices=_FORMATS),
               Param("out_format", str, "corner", choices=_FORMATS))


def _nms_infer(a, s, d):
    shape = tuple(s[0])
    if len(shape) < 2:
        raise ValueError(f"box_nms: data must have at least 2 dimensions (..., num_box, "
                         f"box_width), got shape {shape}")
    width = shape[-1]
    need = 5 + (a["id_index"] >= 0)
    if width < need:
        raise ValueError(f"box_nms: the last dimension must have at least {need} elements "
                         f"(score, 4 coordinates{', class id' if need == 6 else ''}), got {width}")
    cs, si, ii = a["coord_start"], a["score_index"], a["id_index"]
    if not 0 <= cs <= width - 4:
        raise ValueError(f"box_nms: coordinates {cs}..{cs + 3} out of range for width {width}")
    if not 0 <= si < width or cs <= si <= cs + 3:
        raise ValueError(f"box_nms: score_index {si} out of range or among the coordinates "
                         f"{cs}..{cs + 3}")
    if ii >= 0 and (ii >= width or cs <= ii <= cs + 3 or ii == si):
        raise ValueError(f"box_nms: id_index {ii} out of range or conflicting with the score "
                         f"({si}) or the coordinates ({cs}..{cs + 3})")
    return [shape, shape[:-1] + (1,)], [d[0], d[0]]


def _nms_fwd(a, data):
    shape = data.shape
    n, width = shape[-2], shape[-1]
    nb = int(np.prod(shape[:-2], dtype=np.int64))
    x = data.reshape(nb, n, width)
    out = np.full((nb, n, width), -1, data.dtype)
    record = np.full((nb, n), -1, data.dtype)
    topk = n if a["topk"] < 0 else min(n, a["topk"])
    if topk < 1:
        return x.reshape(shape), np.arange(nb * n).reshape(shape[:-1] + (1,)).astype(data.dtype)
    cs, si, ii = a["coord_start"], a["score_index"], a["id_index"]
    fmt = a["in_format"]
    calc = _calc(data.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for b in range(nb):
            xb = x[b].astype(calc)
            scores = xb[:, si]
            valid = scores > calc(a["valid_thresh"])
            if ii >= 0:
                valid &= xb[:, ii] != calc(a["background_id"])
            cand = np.nonzero(valid)[0]
            order = cand[np.argsort(-scores[cand], kind="stable")][:topk]
            boxes = xb[order, cs:cs + 4]
            areas = _area(boxes, fmt)
            ids = xb[order, ii].astype(np.int64) if ii >= 0 and not a["force_suppress"] else None
            keep = np.ones(len(order), bool)
            for r in range(len(order)):
                if not keep[r]:
                    continue
                rest = slice(r + 1, None)
                inter = _intersect(boxes[r], boxes[rest], fmt)
                iou = inter / (areas[r] + areas[rest] - inter)
                hit = iou > a["overlap_thresh"]
                if ids is not None:
                    hit &= ids[rest] == ids[r]
                keep[rest] &= ~hit
            kept = order[keep]
            out[b, :len(kept)] = x[b, kept]
            record[b, :len(kept)] = b * n + kept
    if a["in_format"] != a["out_format"]:
        flat = out.reshape(-1, width)
        flat[:, cs:cs + 4] = _to_format(flat[:, cs:cs + 4], a["in_format"], a["out_format"])
    return out.reshape(shape), record.reshape(shape[:-1] + (1,))


def _nms_grad(F, a, inputs, outputs, out_grads):
    return [F._backward_contrib_box_nms(out_grads[0], outputs[1], **a)]


register(OpDef("_contrib_box_nms", aliases=("_contrib_box_non_maximum_suppression",),
               params=_NMS_PARAMS, infer=_nms_infer,
               forward=host_forward("_contrib_box_nms", _nms_fwd), grad=_nms_grad,
               num_outputs=2, num_visible_outputs=1,
               doc="Non-maximum suppression of boxes per batch element (kept boxes first, "
                   "the other rows -1)."))


def _nms_bwd(a, og, record):
    width = og.shape[-1]
    g = np.zeros((og.size // width, width), og.dtype)
    src = record.reshape(-1).astype(np.int64)
    rows = np.nonzero(src >= 0)[0]
    g[src[rows]] = og.reshape(-1, width)[rows]
    return g.reshape(og.shape)


register(OpDef("_backward_contrib_box_nms", inputs=("out_grad", "record"), params=_NMS_PARAMS,
               infer=lambda a, s, d: ([tuple(s[0])], [d[0]]),
               forward=host_forward("_backward_contrib_box_nms", _nms_bwd),
               doc="box_nms's gradient: each kept row's gradient goes back to its source row."))


# ---- box_iou ----------------------------------------------------------------------------------
def _iou_infer(a, s, d):
    ls, rs = tuple(s[0]), tuple(s[1])
    if not ls or not rs or ls[-1] != 4 or rs[-1] != 4:
        raise ValueError(f"box_iou: both inputs must end in a dimension of 4, got {ls} and {rs}")
    return [ls[:-1] + rs[:-1]], [d[0]]


def _iou_fwd(a, lhs, rhs):
    calc = _calc(lhs.dtype)
    l_ = lhs.reshape(-1, 1, 4).astype(calc)
    r_ = rhs.reshape(1, -1, 4).astype(calc)
    fmt = a["format"]
    inter = _intersect(l_, r_, fmt)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (_area(l_, fmt) + _area(r_, fmt) - inter)
    iou = np.where(inter <= 0, 0, iou)
    return iou.reshape(lhs.shape[:-1] + rhs.shape[:-1]).astype(lhs.dtype)


register(OpDef("_contrib_box_iou", inputs=("lhs", "rhs"),
               params=(Param("format", str, "corner", choices=_FORMATS),),
               infer=_iou_infer, forward=host_forward("_contrib_box_iou", _iou_fwd),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0]), F.zeros_like(i[1])],
               doc="Intersection over union of every lhs box with every rhs box."))


# ---- bipartite_matching -----------------------------------------------------------------------
def _match_infer(a, s, d):
    shape = tuple(s[0])
    if len(shape) < 2:
        raise ValueError(f"bipartite_matching: data must have at least 2 dimensions (..., rows, "
                         f"cols), got shape {shape}")
    return [shape[:-1], shape[:-2] + shape[-1:]], [d[0], d[0]]


def _match_fwd(a, data):
    rows, cols = data.shape[-2], data.shape[-1]
    scores = data.reshape(-1, rows * cols)
    rmark = np.full((scores.shape[0], rows), -1, data.dtype)
    cmark = np.full((scores.shape[0], cols), -1, data.dtype)
    thr = _calc(data.dtype)(a["threshold"])
    asc, topk = a["is_ascend"], a["topk"]
    for b, s in enumerate(scores.astype(_calc(data.dtype))):
        order = np.argsort(s if asc else -s, kind="stable")
        count = 0
        for j in order:
            r, c = divmod(int(j), cols)
            if rmark[b, r] != -1 or cmark[b, c] != -1:
                continue
            if not (s[j] < thr if asc else s[j] > thr):
                break
            rmark[b, r], cmark[b, c] = c, r
            count += 1
            if 0 < topk < count:        # MXNet stops after topk + 1 matches
                break
    return (rmark.reshape(data.shape[:-1]),
            cmark.reshape(data.shape[:-2] + (cols,)))


register(OpDef("_contrib_bipartite_matching",
               params=(Param("is_ascend", bool, False), Param("threshold", float, required=True),
                       Param("topk", int, -1)),
               infer=_match_infer, forward=host_forward("_contrib_bipartite_matching", _match_fwd),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0])], num_outputs=2,
               doc="Greedy bipartite matching by score: the column matched to each row and "
                   "the row matched to each column (-1: none)."))


# ---- box_encode / box_decode ------------------------------------------------------------------
def _encode_infer(a, s, d):
    samples, matches, anchors, refs, means, stds = (tuple(x) for x in s)
    if len(anchors) != 3 or anchors[-1] != 4 or len(refs) != 3 or refs[-1] != 4:
        raise ValueError(f"box_encode: anchors (B, N, 4) and refs (B, M, 4) expected, got "
                         f"{anchors} and {refs}")
    if samples != anchors[:2] or matches != anchors[:2]:
        raise ValueError(f"box_encode: samples and matches must be {anchors[:2]}, got {samples} "
                         f"and {matches}")
    if means != (4,) or stds != (4,):
        raise ValueError(f"box_encode: means and stds must have shape (4,), got {means} and "
                         f"{stds}")
    return [anchors, anchors], [d[2], d[2]]


def _center(box):
    w = box[..., 2] - box[..., 0]
    h = box[..., 3] - box[..., 1]
    return box[..., 0] + w * 0.5, box[..., 1] + h * 0.5, w, h


def _encode_fwd(a, samples, matches, anchors, refs, means, stds):
    calc = _calc(anchors.dtype)
    b = np.arange(anchors.shape[0])[:, None]
    ref = refs.astype(calc)[b, matches.astype(np.int64)]
    rx, ry, rw, rh = _center(ref)
    ax, ay, aw, ah = _center(anchors.astype(calc))
    valid = samples.astype(calc) > 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.stack([(rx - ax) / aw, (ry - ay) / ah, np.log(rw / aw), np.log(rh / ah)], axis=-1)
    t = (t - means.astype(calc)) / stds.astype(calc)
    mask = np.repeat(valid[..., None], 4, axis=-1)
    return np.where(mask, t, 0).astype(anchors.dtype), mask.astype(anchors.dtype)


register(OpDef("_contrib_box_encode",
               inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
               infer=_encode_infer, forward=host_forward("_contrib_box_encode", _encode_fwd),
               grad=lambda F, a, i, o, g: [F.zeros_like(x) for x in i], num_outputs=2,
               doc="Regression targets of matched reference boxes against anchors (corner "
                   "boxes), normalised by means and stds, and their mask."))


def _decode_infer(a, s, d):
    data, anchors = tuple(s[0]), tuple(s[1])
    if len(data) < 3 or data[-1] != 4:
        raise ValueError(f"box_decode: data must be (B, N, 4), got {data}")
    if len(anchors) < 3 or anchors[-1] != 4:
        raise ValueError(f"box_decode: anchors must be (1, N, 4), got {anchors}")
    return [data], [d[0]]


def _decode_fwd(a, data, anchors):
    calc = _calc(data.dtype)
    x = data.astype(calc).reshape(data.shape[0], -1, 4)
    an = anchors.astype(calc).reshape(1, -1, 4)
    if a["format"] == "corner":
        ax, ay, aw, ah = _center(an)
    else:
        ax, ay, aw, ah = an[..., 0], an[..., 1], an[..., 2], an[..., 3]
    ox = x[..., 0] * calc(a["std0"]) * aw + ax
    oy = x[..., 1] * calc(a["std1"]) * ah + ay
    dw = x[..., 2] * calc(a["std2"])
    dh = x[..., 3] * calc(a["std3"])
    if a["clip"] > 0:
        dw = np.minimum(dw, calc(a["clip"]))
        dh = np.minimum(dh, calc(a["clip"]))
    ow = np.exp(dw) * aw * 0.5
    oh = np.exp(dh) * ah * 0.5
    out = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    return out.reshape(data.shape).astype(data.dtype)


register(OpDef("_contrib_box_decode", inputs=("data", "anchors"),
               params=(Param("std0", float, 1.0), Param("std1", float, 1.0),
                       Param("std2", float, 1.0), Param("std3", float, 1.0),
                       Param("clip", float, -1.0),
                       Param("format", str, "center", choices=_FORMATS)),
               infer=_decode_infer, forward=host_forward("_contrib_box_decode", _decode_fwd),
               grad=lambda F, a, i, o, g: [F.zeros_like(i[0]), F.zeros_like(i[1])],
               doc="Corner boxes from predicted offsets against anchors (the anchors' format "
                   "given by `format`)."))


# ---- gradientmultiplier -----------------------------------------------------------------------
register(OpDef("_contrib_gradientmultiplier",
               params=(Param("scalar", float, 1.0), Param("is_int", bool, True)),
               composite=lambda F, a, x: F._copy(x),
               grad=lambda F, a, i, o, g: [g[0] * a["scalar"]],
               doc="Identity forward; the gradient is multiplied by `scalar`."))

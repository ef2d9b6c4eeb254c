"""ImageDetRecordIter: MXNet 1.9.1's detection RecordIO iterator (``mx.io.ImageDetRecordIter``,
src/io/iter_image_det_recordio.cc and image_det_aug_default.cc), on ImageRecordIter's reader,
worker threads and batching.

A record's label is ``[header_width, object_width, extra header..., objects...]`` with objects
``[id, xmin, ymin, xmax, ymax, extra...]`` in coordinates relative to the image. Objects whose
box is empty (xmax <= xmin or ymax <= ymin) are dropped, as MXNet does. Each batch label row is
``[channels, height, width, n, label (n values)...]`` padded with ``label_pad_value`` to
``label_pad_width + 4``; ``label_pad_width`` grows to the longest label in the file.

The image goes through MXNet's detection augmenter in its order: resize of the shorter edge
(``resize``), colour jitter in HLS (hue, saturation, illumination) and contrast, mirror, random
padding, random crop by ``num_crop_sampler`` samplers (each a scale and aspect-ratio range
with IOU / coverage constraints against the objects, objects whose centre leaves the crop or
whose overlap falls below ``emit_overlap_thresh`` are dropped), then the resize to
``data_shape`` (``resize_mode`` 'force', 'shrink' or 'fit'; a smaller image sits top-left on
zeros, and the label's height and width say its size). Then ``(pixel - mean) / std * scale``
(a mean only when one of them is > 0, a std only when > 0, as MXNet).

Without random augmentation a batch equals MXNet's (bit for bit with the default bilinear
resize); random draws follow ``seed`` per sample, not MXNet's streams. Records are split into
``num_parts`` by byte ranges of the file, as MXNet's InputSplit does.
"""
import math
import os

import numpy as np

from .. import recordio
from ..base import MXNetError, OperatorInputError as _ParamError
from ..ops.image_ops import _hls_to_rgb, _rgb_to_hls
from . import image as _img
from .record_iter import ImageRecordIter, _interp

__all__ = ["ImageDetRecordIter"]

# accepted for compatibility, no effect here
_IGNORED = {"verbose", "shuffle_chunk_size", "shuffle_chunk_seed", "device_id", "ctx",
            "prefetch_buffer_keep", "dtype", "mean_img"}
_RESIZE_MODES = ("force", "shrink", "fit")
_EMIT_MODES = ("center", "overlap")
_CROP_PARAMS = ("min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios",
                "max_crop_aspect_ratios", "min_crop_overlaps", "max_crop_overlaps",
                "min_crop_sample_coverages", "max_crop_sample_coverages",
                "min_crop_object_coverages", "max_crop_object_coverages", "max_crop_trials")


def _tuple(name, value, kind=float):
    try:
        return tuple(kind(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    except (TypeError, ValueError):
        raise _ParamError(f"ImageDetRecordIter: {name} must be a number or a tuple of numbers, "
                          f"got {value!r}") from None


class _DetLabel:
    """A record's detection label: the header values and the objects, one row each."""

    def __init__(self, raw, where):
        raw = np.asarray(raw, np.float32)
        if raw.size < 7:
            raise MXNetError(f"{where}: a detection label needs at least 7 values (2 header + "
                             f"one object of 5), got {raw.size}")
        hw, ow = int(raw[0]), int(raw[1])
        if hw < 2 or ow < 5:
            raise MXNetError(f"{where}: header width {hw} (>= 2) or object width {ow} (>= 5) "
                             f"is invalid")
        if (raw.size - hw) % ow:
            raise MXNetError(f"{where}: {raw.size - hw} object values are not a multiple of the "
                             f"object width {ow}")
        self.header = raw[:hw]
        objs = raw[hw:].reshape(-1, ow)
        self.objects = objs[(objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])]

    def to_array(self):
        return np.concatenate([self.header, self.objects.ravel()])

    def project(self, x, y, w, h):
        """Coordinates relative to the box (x, y, w, h), clipped to [0, 1]."""
        o = self.objects.copy()
        o[:, 1] = np.maximum(0, (o[:, 1] - x) / np.float32(w))
        o[:, 2] = np.maximum(0, (o[:, 2] - y) / np.float32(h))
        o[:, 3] = np.minimum(1, (o[:, 3] - x) / np.float32(w))
        o[:, 4] = np.minimum(1, (o[:, 4] - y) / np.float32(h))
        return o

    def try_crop(self, box, lims, emit_mode, emit_thresh):
        """MXNet's TryCrop: the crop is valid if one object meets every active constraint;
        then the kept objects are projected. False leaves the label unchanged."""
        if len(self.objects) == 0:
            return True
        x, y, w, h = box
        o = self.objects
        ix = np.maximum(0, np.minimum(x + w, o[:, 3]) - np.maximum(x, o[:, 1]))
        iy = np.maximum(0, np.minimum(y + h, o[:, 4]) - np.maximum(y, o[:, 2]))
        inter = ix * iy
        gt_area = (o[:, 3] - o[:, 1]) * (o[:, 4] - o[:, 2])
        ok = np.ones(len(o), bool)
        (min_ov, max_ov), (min_sc, max_sc), (min_oc, max_oc) = lims
        if min_ov > 0 or max_ov < 1:
            iou = np.where(inter > 0, inter / (w * h + gt_area - inter), 0)
            ok &= (iou >= min_ov) & (iou <= max_ov)
        if min_sc > 0 or max_sc < 1:
            c = inter / (w * h)
            ok &= (c >= min_sc) & (c <= max_sc)
        if min_oc > 0 or max_oc < 1:
            c = inter / gt_area
            ok &= (c >= min_oc) & (c <= max_oc)
        if not ok.any():
            return False
        if emit_mode == 0:          # keep objects whose centre lies in the crop
            cx = (o[:, 1] + o[:, 3]) * 0.5
            cy = (o[:, 2] + o[:, 4]) * 0.5
            keep = (cx >= x) & (cx < x + w) & (cy >= y) & (cy < y + h)
        else:                       # keep objects covered more than the threshold
            keep = inter / gt_area > emit_thresh
        if not keep.any():
            return False
        self.objects = self.project(x, y, w, h)[keep]
        return True


class ImageDetRecordIter(ImageRecordIter):
    """Iterate over a detection RecordIO file, with MXNet's parameters.

    Parameters
    ----------
    path_imgrec : str
    data_shape : tuple of 3 ints
        (channels, height, width); channels 1, 3 or 4.
    batch_size : int
    path_imgidx : str, optional
    path_imglist : str, optional
        Text list ``index<TAB>label values...<TAB>path``: labels taken from it, not the records.
    label_width : int, default -1
        Label values per record (-1: any).
    label_pad_width : int, default 0
        Label row length before the 4 leading values (grown to the longest label).
    label_pad_value : float, default -1
    shuffle, seed, round_batch, preprocess_threads, prefetch_buffer, num_parts, part_index
        As ImageRecordIter (parts are byte ranges of the file, as MXNet).
    resize : int, default -1
        Resize the shorter edge first.
    rand_crop_prob : float; num_crop_sampler : int; min/max_crop_scales,
    min/max_crop_aspect_ratios, min/max_crop_overlaps, min/max_crop_sample_coverages,
    min/max_crop_object_coverages : float or tuple (one per sampler); max_crop_trials : int or
    tuple; crop_emit_mode : 'center' or 'overlap'; emit_overlap_thresh : float
        Random crop.
    rand_pad_prob, max_pad_scale : float; fill_value : int, default 127
        Random padding (the image placed in a canvas up to max_pad_scale its size).
    max_random_hue, max_random_saturation, max_random_illumination : int;
    max_random_contrast : float; random_hue_prob, random_saturation_prob,
    random_illumination_prob, random_contrast_prob : float
        Colour jitter.
    rand_mirror_prob : float
    inter_method : int, default 1
    resize_mode : 'force', 'shrink' or 'fit'
    mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale : float
    data_name, label_name : str
    seed_aug : int, optional
    """

    def __init__(self, path_imgrec=None, data_shape=None, batch_size=None, path_imgidx="",
                 path_imglist="", aug_seq="det_aug_default", label_width=-1, label_pad_width=0,
                 label_pad_value=-1.0, shuffle=False, seed=0, round_batch=True,
                 preprocess_threads=4, prefetch_buffer=4, num_parts=1, part_index=0, resize=-1,
                 rand_crop_prob=0.0, min_crop_scales=(0.0,), max_crop_scales=(1.0,),
                 min_crop_aspect_ratios=(1.0,), max_crop_aspect_ratios=(1.0,),
                 min_crop_overlaps=(0.0,), max_crop_overlaps=(1.0,),
                 min_crop_sample_coverages=(0.0,), max_crop_sample_coverages=(1.0,),
                 min_crop_object_coverages=(0.0,), max_crop_object_coverages=(1.0,),
                 num_crop_sampler=1, crop_emit_mode="center", emit_overlap_thresh=0.3,
                 max_crop_trials=(25,), rand_pad_prob=0.0, max_pad_scale=1.0,
                 max_random_hue=0, random_hue_prob=0.0, max_random_saturation=0,
                 random_saturation_prob=0.0, max_random_illumination=0,
                 random_illumination_prob=0.0, max_random_contrast=0.0,
                 random_contrast_prob=0.0, rand_mirror_prob=0.0, fill_value=127,
                 inter_method=1, resize_mode="force", mean_r=0.0, mean_g=0.0, mean_b=0.0,
                 mean_a=0.0, std_r=0.0, std_g=0.0, std_b=0.0, std_a=0.0, scale=1.0,
                 data_name="data", label_name="softmax_label", seed_aug=None, **kwargs):
        name = "ImageDetRecordIter"
        unknown = set(kwargs) - _IGNORED
        if unknown:
            raise _ParamError(f"{name}: unknown parameter(s) {sorted(unknown)}")
        if aug_seq != "det_aug_default":
            raise _ParamError(f"{name}: aug_seq {aug_seq!r}: only 'det_aug_default' exists")
        if not path_imgrec:
            raise _ParamError(f"{name}: path_imgrec is required")
        if not os.path.isfile(path_imgrec):
            raise MXNetError(f"{name}: path_imgrec {path_imgrec} does not exist")
        for path in (path_imgidx, path_imglist):
            if path and not os.path.isfile(path):
                raise MXNetError(f"{name}: {path} does not exist")
        try:
            data_shape = tuple(int(d) for d in data_shape)
        except TypeError:
            raise _ParamError(f"{name}: data_shape must be (channels, height, width), got "
                              f"{data_shape!r}") from None
        if len(data_shape) != 3 or data_shape[0] not in (1, 3, 4) or min(data_shape) <= 0:
            raise _ParamError(f"{name}: data_shape {data_shape} must be (1, 3 or 4 channels, "
                              f"height > 0, width > 0)")
        if batch_size is None or int(batch_size) <= 0:
            raise _ParamError(f"{name}: batch_size must be a positive int, got {batch_size!r}")
        if int(preprocess_threads) < 1 or int(prefetch_buffer) < 1:
            raise _ParamError(f"{name}: preprocess_threads and prefetch_buffer must be >= 1")
        if not 0 <= int(part_index) < int(num_parts):
            raise _ParamError(f"{name}: part_index {part_index} must be in [0, num_parts="
                              f"{num_parts})")
        if inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise _ParamError(f"{name}: invalid inter_method {inter_method}: valid values are "
                              f"0, 1, 2, 3, 4, 9, 10")
        if resize_mode not in _RESIZE_MODES:
            raise _ParamError(f"{name}: resize_mode must be one of {_RESIZE_MODES}, got "
                              f"{resize_mode!r}")
        if crop_emit_mode not in _EMIT_MODES:
            raise _ParamError(f"{name}: crop_emit_mode must be one of {_EMIT_MODES}, got "
                              f"{crop_emit_mode!r}")
        self._samplers = self._crop_samplers(locals(), int(num_crop_sampler))
        self.path_imgrec = str(path_imgrec)
        self.data_shape = data_shape
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.seed_aug = None if seed_aug is None else int(seed_aug)
        self.round_batch = bool(round_batch)
        self.preprocess_threads = int(preprocess_threads)
        self.prefetch_buffer = int(prefetch_buffer)
        self.dtype = np.dtype(np.float32)
        self._p = dict(resize=int(resize), rand_crop_prob=float(rand_crop_prob),
                       emit_mode=_EMIT_MODES.index(crop_emit_mode),
                       emit_overlap_thresh=float(emit_overlap_thresh),
                       rand_pad_prob=float(rand_pad_prob), max_pad_scale=float(max_pad_scale),
                       hue=(int(max_random_hue), float(random_hue_prob)),
                       saturation=(int(max_random_saturation), float(random_saturation_prob)),
                       illumination=(int(max_random_illumination),
                                     float(random_illumination_prob)),
                       contrast=(float(max_random_contrast), float(random_contrast_prob)),
                       rand_mirror_prob=float(rand_mirror_prob), fill_value=int(fill_value),
                       inter_method=int(inter_method), resize_mode=resize_mode)
        c = data_shape[0]
        means = np.array([mean_r, mean_g, mean_b, mean_a], np.float32)
        stds = np.array([std_r, std_g, std_b, std_a], np.float32)
        chans = [0] if c == 1 else [0, 1, 2] if c == 3 else [0, 1, 2, 3]
        # MXNet subtracts the means only when one is positive and divides by a std only
        # when it is positive; channels 1, 2 (and 3) use g, b (and a) only with 3 (4) channels
        self._mean = means[chans] if (means > 0).any() else np.zeros(c, np.float32)
        self._std = np.where(stds[chans] > 0, stds[chans], np.float32(1)).astype(np.float32)
        self._scale = np.float32(scale)
        self._decode_flag = {1: 0, 3: 1, 4: -1}[c]
        self._pad_value = np.float32(label_pad_value)
        self.label_width = int(label_width)
        self._imglist = _read_imglist(path_imglist, self.label_width) if path_imglist else None
        widest = self._widest_label(path_imgidx)
        if int(label_pad_width) > 0 and int(label_pad_width) < widest:
            raise MXNetError(f"{name}: label_pad_width {label_pad_width} smaller than the "
                             f"longest label ({widest} values)")
        self.label_pad_width = max(int(label_pad_width), widest)
        self._open_records(path_imgidx, num_parts, part_index,
                           (self.batch_size, self.label_pad_width + 4), data_name, label_name)

    @staticmethod
    def _crop_samplers(args, n):
        """One (scale range, aspect range, (overlap, sample coverage, object coverage) ranges,
        trials) per sampler; a one-value parameter applies to every sampler."""
        if n <= 0:
            return []
        vals = {}
        for key in _CROP_PARAMS:
            v = _tuple(key, args[key], int if key == "max_crop_trials" else float)
            if len(v) == 1:
                v = v * n
            elif len(v) != n:
                raise _ParamError(f"ImageDetRecordIter: {key} has {len(v)} values for "
                                  f"num_crop_sampler={n}")
            vals[key] = v
        out = []
        for i in range(n):
            g = {k: v[i] for k, v in vals.items()}
            if not (0 <= g["min_crop_scales"] < g["max_crop_scales"] <= 1
                    and 0 <= g["min_crop_aspect_ratios"] <= g["max_crop_aspect_ratios"]
                    and g["min_crop_overlaps"] <= g["max_crop_overlaps"]
                    and g["min_crop_sample_coverages"] <= g["max_crop_sample_coverages"]
                    and g["min_crop_object_coverages"] <= g["max_crop_object_coverages"]):
                raise _ParamError(f"ImageDetRecordIter: crop sampler {i} has an empty range: "
                                  f"{g}")
            out.append(((g["min_crop_scales"], g["max_crop_scales"]),
                        (g["min_crop_aspect_ratios"], g["max_crop_aspect_ratios"]),
                        ((g["min_crop_overlaps"], g["max_crop_overlaps"]),
                         (g["min_crop_sample_coverages"], g["max_crop_sample_coverages"]),
                         (g["min_crop_object_coverages"], g["max_crop_object_coverages"])),
                        g["max_crop_trials"]))
        return out

    def _widest_label(self, path_imgidx):
        """The longest label in the list or the file (MXNet reads every record for it)."""
        if self._imglist is not None:
            return max((len(v) for v in self._imglist.values()), default=0)
        widest = 0
        with recordio.MXRecordIO(self.path_imgrec, "r") as rec:
            i = 0
            while True:
                raw = rec.read()
                if raw is None:
                    break
                header, _ = recordio.unpack(raw)
                n = int(header.flag)
                if n <= 0:
                    raise MXNetError(f"ImageDetRecordIter: record {i} of {self.path_imgrec} "
                                     f"has no label array (IRHeader flag {n})")
                if self.label_width > 0 and n != self.label_width:
                    raise MXNetError(f"ImageDetRecordIter: record {i} of {self.path_imgrec} "
                                     f"has {n} label values but label_width is "
                                     f"{self.label_width}")
                widest = max(widest, n)
                i += 1
        return widest

    def _part(self, offsets, num_parts, part_index, indexed):
        # MXNet's detection parser splits by byte range even with an index
        return super()._part(offsets, num_parts, part_index, False)

    # ---- per image (worker threads) ----------------------------------------------------------
    def _process(self, batch, slot, sample, epoch, raw):
        header, payload = recordio.unpack(raw)
        where = f"ImageDetRecordIter: record {sample} of {self.path_imgrec}"
        if self._imglist is not None:
            lab = self._imglist.get(int(header.id))
            if lab is None:
                raise MXNetError(f"{where}: image index {header.id} is not in path_imglist")
        else:
            lab = np.asarray(header.label, np.float32).ravel()
        batch.index[slot] = header.id
        img = self._decode(payload, where)
        img, lab = self._augment(img, _DetLabel(lab, where), self._rng(epoch, sample))
        h, w = img.shape[:2]
        oc, oh, ow = self.data_shape
        out = batch.data[slot]
        out[...] = 0
        out[:, :min(h, oh), :min(w, ow)] = np.transpose(img[:oh, :ow], (2, 0, 1))
        out -= self._mean[:, None, None]
        out /= self._std[:, None, None]
        out *= self._scale
        row = batch.label[slot]
        row[...] = self._pad_value
        row[:4] = (oc, h, w, lab.size)
        row[4:4 + lab.size] = lab

    def _augment(self, img, label, rng):
        """MXNet's DefaultImageDetAugmenter::Process, step by step (uint8 HWC, RGB)."""
        p = self._p
        if p["resize"] != -1:
            h, w = img.shape[:2]
            if h > w:
                nh, nw = p["resize"] * h // w, p["resize"]
            else:
                nh, nw = p["resize"], p["resize"] * w // h
            img = _img.resize_np(img, nw, nh, _interp(p["inter_method"], w, h, nw, nh, rng))
        if any(prob > 0 for _, prob in (p["hue"], p["saturation"], p["illumination"],
                                        p["contrast"])):
            img = self._jitter(img, rng)
        if p["rand_mirror_prob"] > 0 and rng.random() < p["rand_mirror_prob"]:
            o = label.objects
            o[:, 1], o[:, 3] = 1 - o[:, 3], 1 - o[:, 1].copy()
            img = img[:, ::-1]
        if p["rand_pad_prob"] > 0 and p["max_pad_scale"] > 1 and rng.random() < p["rand_pad_prob"]:
            img = self._pad(img, label, rng)
        if p["rand_crop_prob"] > 0 and self._samplers and rng.random() < p["rand_crop_prob"]:
            img = self._crop(img, label, rng)
        img = self._final_resize(np.ascontiguousarray(img), rng)
        return img, label.to_array()

    def _jitter(self, img, rng):
        """Hue / saturation / illumination shifts in 8-bit HLS and a contrast factor, each drawn
        in [-max, max] and applied with its probability."""
        p = self._p
        (mh, ph), (ms, ps), (ml, pl), (mc, pc) = (p["hue"], p["saturation"],
                                                  p["illumination"], p["contrast"])
        h = int(rng.uniform(-1, 1) * mh)
        s = int(rng.uniform(-1, 1) * ms)
        lum = int(rng.uniform(-1, 1) * ml)
        c = rng.uniform(-1, 1) * mc
        h = h if rng.random() < ph else 0
        s = s if rng.random() < ps else 0
        lum = lum if rng.random() < pl else 0
        c = c if rng.random() < pc else 0
        if (h or s or lum) and img.shape[2] >= 3:
            f = img[:, :, :3].astype(np.float32)
            hh, ll, ss = _rgb_to_hls(f[:, :, 0], f[:, :, 1], f[:, :, 2])
            # OpenCV's 8-bit HLS: H in [0, 180), L and S in [0, 255], rounded
            hls = np.stack([np.rint(hh * 0.5), np.rint(ll * 255), np.rint(ss * 255)], axis=2)
            hls += np.array([h, lum, s], np.float32)
            hls = np.clip(hls, 0, [180, 255, 255]).astype(np.float32)
            r, g, b = _hls_to_rgb(hls[:, :, 0] * 2, hls[:, :, 1] / 255, hls[:, :, 2] / 255)
            img = img.copy()
            img[:, :, :3] = np.clip(np.rint(np.stack([r, g, b], axis=2)), 0, 255)
        if abs(c) > 1e-3:
            img = np.clip(np.rint(img.astype(np.float32) * np.float32(c + 1)), 0,
                          255).astype(np.uint8)
        return img

    def _pad(self, img, label, rng):
        scale = rng.uniform(1, self._p["max_pad_scale"])
        if scale < 1.05:
            return img
        x0, y0 = rng.uniform(0, scale - 1), rng.uniform(0, scale - 1)
        label.objects = label.project(-x0, -y0, scale, scale)
        h, w, c = img.shape
        left, top = int(x0 * w), int(y0 * h)
        right, bot = int((scale - x0 - 1) * w), int((scale - y0 - 1) * h)
        canvas = np.zeros((h + top + bot, w + left + right, c), np.uint8)
        canvas[:, :, :min(c, 3)] = self._p["fill_value"]      # cv::Scalar(v, v, v)
        canvas[top:top + h, left:left + w] = img
        return canvas

    def _crop(self, img, label, rng):
        h, w = img.shape[:2]
        order = list(range(len(self._samplers)))
        rng.shuffle(order)
        for idx in order:
            (s_lo, s_hi), (a_lo, a_hi), lims, trials = self._samplers[idx]
            for _ in range(trials):
                scale = rng.uniform(s_lo, s_hi) + 1e-12
                aspect = w / h
                r_lo = max(a_lo / aspect, scale * scale)
                r_hi = min(a_hi / aspect, 1 / (scale * scale))
                ratio = math.sqrt(rng.uniform(r_lo, r_hi))
                bw, bh = min(1.0, scale * ratio), min(1.0, scale / ratio)
                bx, by = rng.uniform(0, 1 - bw), rng.uniform(0, 1 - bh)
                if label.try_crop((bx, by, bw, bh), lims, self._p["emit_mode"],
                                  self._p["emit_overlap_thresh"]):
                    x, y = int(bx * w), int(by * h)
                    return img[y:y + max(int(bh * h), 1), x:x + max(int(bw * w), 1)]
            # a sampler that never met its constraints leaves the next one a try
        return img

    def _final_resize(self, img, rng):
        p = self._p
        _, oh, ow = self.data_shape
        h, w = img.shape[:2]
        if p["resize_mode"] == "force":
            nh, nw = oh, ow
        else:
            ratio = min(np.float32(oh) / np.float32(h), np.float32(ow) / np.float32(w))
            if p["resize_mode"] == "shrink" and h <= oh and w <= ow:
                return img
            nh, nw = int(ratio * np.float32(h)), int(ratio * np.float32(w))
        if (nh, nw) == (h, w) and p["inter_method"] != 10:
            return img
        return _img.resize_np(img, nw, nh, _interp(p["inter_method"], w, h, nw, nh, rng))


def _read_imglist(path, label_width):
    """{image index: label values} from a .lst file (index, labels..., path; tab or space)."""
    labels = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            vals = parts[1:1 + label_width] if label_width > 0 else parts[1:-1]
            if not vals or (label_width > 0 and len(vals) != label_width):
                raise MXNetError(f"ImageDetRecordIter: {path}, line {lineno}: bad image list "
                                 f"entry (index, {label_width if label_width > 0 else 'some'} "
                                 f"label values, path)")
            try:
                labels[int(float(parts[0]))] = np.array([float(v) for v in vals], np.float32)
            except ValueError:
                raise MXNetError(f"ImageDetRecordIter: {path}, line {lineno}: not numbers: "
                                 f"{line.strip()!r}") from None
    return labels

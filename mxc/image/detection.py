"""Detection augmenters, as MXNet 1.9.1's mx.image detection module: each takes an HWC image and
its (N, 5+) label of ``[class, xmin, ymin, xmax, ymax, ...]`` rows with coordinates normalised
to [0, 1], and returns both transformed. Random choices use Python's ``random`` module in MXNet's
order, so a seeded run draws the same crops, pads and flips as MXNet."""
import json
import logging
import math
import numbers
import random
import warnings

import numpy as np

from ..base import MXNetError
from .. import ndarray as _ops
from ..io.io import DataDesc
from .image import (Augmenter, ForceResizeAug, ImageIter, ResizeAug, color_augmenters,
                    copyMakeBorder, fixed_crop)

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]


class DetAugmenter:
    """Base class: ``aug(src, label) -> (src, label)``; ``dumps()`` describes it as JSON."""

    def __init__(self, **kwargs):
        self._kwargs = {}
        for k, v in kwargs.items():
            if isinstance(v, _ops.NDArray):
                v = v.asnumpy()
            self._kwargs[k] = v.tolist() if isinstance(v, np.ndarray) else v

    def dumps(self):
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """A classification Augmenter that leaves labels alone (colour, normalisation)."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("Borrowing from invalid Augmenter")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [self.__class__.__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """One augmenter of ``aug_list`` picked at random (the list is shuffled in place, as in
    MXNet), or none with probability ``skip_prob`` (always none for an empty list)."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        if any(not isinstance(a, DetAugmenter) for a in aug_list):
            raise ValueError("Allow DetAugmenter in list only")
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirror the image left-right with probability ``p``; boxes follow (label changed in
    place, as in MXNet)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = _ops.flip(src, axis=1)
            left = 1.0 - label[:, 3]
            label[:, 3] = 1.0 - label[:, 1]
            label[:, 1] = left
        return src, label


def _areas(boxes):
    """Areas of (N, 4+) [xmin, ymin, xmax, ymax] rows, 0 for empty boxes."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _range_pair(value, what, aug):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{aug}: {what} must be a number or a (low, high) pair, got {value!r}")
    logging.info("Using fixed %s: %s in %s", what, value, aug)
    return (value, value)


def _proposal_height(ratio, min_area, max_area):
    """(h, max_h) for an area range at aspect ratio ``ratio`` (w = h * ratio)."""
    return int(round(math.sqrt(min_area / ratio))), int(round(math.sqrt(max_area / ratio)))


class DetRandomCropAug(DetAugmenter):
    """Crop a random region whose area (``area_range``, a fraction of the image) and aspect
    ratio (``aspect_ratio_range``) are in range and which covers more than
    ``min_object_covered`` of every object it touches; boxes are clipped to it and dropped when
    less than ``min_eject_coverage`` of them remains. After ``max_attempts`` failed proposals
    the input is returned unchanged."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _range_pair(aspect_ratio_range, "aspect ratio", "DetRandomCropAug")
        area_range = _range_pair(area_range, "area range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomCropAug due to invalid area_range: {area_range}")
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn("Skip DetRandomCropAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _covers_enough(self, label, xmin, ymin, xmax, ymax, width, height):
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False            # a proposal of one pixel
        boxes = label[:, 1:]
        areas = _areas(boxes)
        objects = np.where(areas * width * height > 2)[0]
        if objects.size < 1:
            return False
        b = boxes[objects]
        inter = np.stack([np.maximum(b[:, 0], xmin / width), np.maximum(b[:, 1], ymin / height),
                          np.minimum(b[:, 2], xmax / width), np.minimum(b[:, 3], ymax / height)],
                         axis=1)
        inter[(inter[:, 0] >= inter[:, 2]) | (inter[:, 1] >= inter[:, 3])] = 0
        cover = _areas(inter) / areas[objects]
        cover = cover[cover > 0]
        return cover.size > 0 and cover.min() > self.min_object_covered

    def _crop_labels(self, label, box, height, width):
        x0, y0 = box[0] / width, box[1] / height
        w, h = box[2] / width, box[3] / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - x0) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - y0) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        cover = _areas(out[:, 1:]) * w * h / _areas(label[:, 1:])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (cover > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _random_crop_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h, max_h = _proposal_height(ratio, min_area, max_area)
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)       # widest crop that fits
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            area = w * h
            if area < min_area:
                h += 1
                w = int(round(h * ratio))
                area = w * h
            if area > max_area:
                h -= 1
                w = int(round(h * ratio))
                area = w * h
            if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_enough(label, x, y, x + w, y + h, width, height):
                new_label = self._crop_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return x, y, w, h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``: the canvas
    area is ``area_range`` times the image's (low > 1), its aspect ratio in
    ``aspect_ratio_range``; boxes are rescaled to it. After ``max_attempts`` failed proposals
    the input is returned unchanged."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)) and not isinstance(pad_val, numbers.Number):
            raise TypeError(f"DetRandomPadAug: pad_val must be a number or a tuple, got "
                            f"{pad_val!r}")
        aspect_ratio_range = _range_pair(aspect_ratio_range, "aspect ratio", "DetRandomPadAug")
        area_range = _range_pair(area_range, "area range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid parameters: {area_range}")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else None
            value = 0.0 if values is not None else self.pad_val
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, value=value,
                                 values=values)
        return src, label

    def _random_pad_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h, max_h = _proposal_height(ratio, min_area, max_area)
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)             # narrowest canvas that fits
            h = max(h, height)
            h = min(h, max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue                # a margin of a pixel is no padding
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            out = label.copy()
            out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
            out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
            return x, y, w, h, out
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A DetRandomSelectAug over DetRandomCropAugs, one per position of the parameters given as
    lists (a value that is not a list, or a list of one, is used for every position; a range
    is a tuple)."""
    columns = [p if isinstance(p, list) else [p] for p in
               (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
                max_attempts)]
    n = max(len(c) for c in columns)
    if any(len(c) not in (1, n) for c in columns):
        raise ValueError("CreateMultiRandCropAugmenter: list parameters must have equal "
                         f"lengths (or one element), got {[len(c) for c in columns]}")
    columns = [c * n if len(c) == 1 else c for c in columns]
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*columns)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """The standard detection augmenter list of MXNet's ``mx.image.CreateDetAugmenter``:
    resize (shorter edge), a random crop with probability ``rand_crop`` (area range up to 1), a
    random mirror, a random pad with probability ``rand_pad`` (area range from 1 to
    ``area_range[1]``), a forced resize to ``data_shape``, then :func:`CreateAugmenter`'s colour
    and normalisation steps borrowed (labels unchanged)."""
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                    area_range, min_eject_coverage,
                                                    max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        auglist.append(DetRandomSelectAug([pad], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    # the ImageNet values as float64 numpy arrays here (CreateAugmenter's are float32 NDArrays)
    if mean is True:
        mean = np.array([123.68, 116.28, 103.53])
    if std is True:
        std = np.array([58.395, 57.12, 57.375])
    return auglist + [DetBorrowAug(a) for a in
                      color_augmenters(brightness, contrast, saturation, hue, pca_noise,
                                       rand_gray, mean, std, "CreateDetAugmenter")]


class ImageDetIter(ImageIter):
    """Image iterator for object detection, as MXNet's ``mx.image.ImageDetIter``.

    A sample's label is MXNet's detection record label: ``[header_width, object_width,
    header..., objects...]``, each object ``object_width`` numbers ``[class, xmin, ymin, xmax,
    ymax, ...]`` (coordinates in [0, 1]); objects without area are dropped. Batches' labels are
    (batch_size, max objects, object_width), rows past a sample's objects filled with -1; the
    maximum is found by reading every label once at construction (``reshape`` or
    ``sync_label_shape`` enlarge it). ``aug_list`` holds detection augmenters (default:
    :func:`CreateDetAugmenter` with the extra keyword arguments). Other parameters as
    :class:`ImageIter`.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root,
                         path_imgidx=path_imgidx, shuffle=shuffle, part_index=part_index,
                         num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + self.label_shape)]

    def _estimate_label_shape(self):
        """(most objects in a sample, object width), reading every label once."""
        count, width = 0, None
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                count, width = max(count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise MXNetError("ImageDetIter: no samples to read labels from")
        return (count, width)

    @staticmethod
    def _parse_label(label):
        """The valid (N, object_width) objects of a raw record label."""
        raw = np.asarray(label.asnumpy() if isinstance(label, _ops.NDArray) else label,
                         np.float32).ravel()
        if raw.size < 7:
            raise RuntimeError(f"Label shape is invalid: {raw.shape}")
        header, width = int(raw[0]), int(raw[1])
        if width < 5 or header < 2 or (raw.size - header) % width != 0:
            raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width "
                               f"{width} (header {header})")
        objects = raw[header:].reshape(-1, width)
        objects = objects[(objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])]
        if objects.shape[0] < 1:
            raise RuntimeError("Encounter sample with no valid label.")
        return objects

    @staticmethod
    def _check_valid_label(label):
        if label.ndim != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label.shape} received.")
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    logging.debug("Invalid image, skipping:  %s", str(e))
                    continue
                self.postprocess_into(data, batch_data[i])
                n = min(label.shape[0], batch_label.shape[1])
                batch_label[i] = -1
                batch_label[i, :n] = label[:n]
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply every detection augmenter of ``auglist`` in order to (data, label)."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def check_label_shape(self, label_shape):
        """A new label shape may hold more objects per sample, never fewer, of the same width."""
        if len(label_shape) != 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to "
                             f"{label_shape[0]}, not allowed.")
        if label_shape[1] != self.provide_label[0].shape[2]:
            raise ValueError(f"label_shape object width inconsistent: "
                             f"{self.provide_label[0].shape[2]} vs {label_shape[1]}.")

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape and/or enlarge the label shape of the batches."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0].name,
                                          (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0].name,
                                           (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (another ImageDetIter) the larger of their label
        shapes; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError("Synchronize with invalid iterator.")
        if self.label_shape[1] != it.label_shape[1]:
            raise ValueError(f"object width mismatch: {self.label_shape[1]} vs "
                             f"{it.label_shape[1]}")
        count = max(self.label_shape[0], it.label_shape[0])
        if verbose and count > min(self.label_shape[0], it.label_shape[0]):
            logging.info("Resized label_shape to (%d, %d).", count, self.label_shape[1])
        for i in (self, it):
            if count > i.label_shape[0]:
                i.reshape(None, (count, i.label_shape[1]))
        return it

"""Image decoding, resizing, cropping and augmentation, as MXNet 1.9.1's ``mx.image``.

Images are NDArrays in HWC layout, uint8 after decoding (RGB by default, as MXNet's
``to_rgb=True``).  Decoding uses Pillow (its decoders release the GIL); the pixel work after
decoding (resize, crop, flip, normalise, HWC -> CHW) is Cython without the GIL
(:mod:`mxc.ops.cpu._pixel`).  ``imresize`` with interp 0 (nearest) and 1 (bilinear) is bit-exact
with MXNet's OpenCV; interp 2 (bicubic), 3 (area) and 4 (Lanczos) use Pillow's filters of the
same names, which may differ from OpenCV's by a few grey levels.

Random decisions use Python's ``random`` module and numpy's global generator, as MXNet's
``mx.image`` does, so ``random.seed`` / ``np.random.seed`` make them reproducible.
"""
import io as _io
import logging
import numbers
import os
import random

import numpy as np

from .. import recordio
from ..base import MXNetError, OperatorInputError
from .. import ndarray as _ops
from ..ndarray import ndarray as _nd
from ..ndarray.ndarray import NDArray
from ..io.io import DataIter, DataBatch, DataDesc
from ..ops.cpu import _pixel
from ..ops.image_ops import resize_np

__all__ = ["imdecode", "imread", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate",
           "Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter", "ImageIter"]


class _Refused(ValueError, AssertionError):
    """A refused argument where MXNet 1.9.1's Python code asserts: code written for MXNet
    catches AssertionError, code written for mxc a ValueError."""


# ---- numpy <-> NDArray ----------------------------------------------------------------------
def _np(src):
    """The pixels of ``src`` (NDArray or numpy array) as a numpy array (waits for NDArrays)."""
    if isinstance(src, NDArray):
        return src.asnumpy()
    return np.asarray(src)


def _wrap(arr):
    """An NDArray owning ``arr`` (a fresh numpy array nobody else holds)."""
    arr = np.ascontiguousarray(arr)
    return _nd.from_numpy(arr)


# ---- decoding -------------------------------------------------------------------------------
_PIL_IMAGE = []  # PIL.Image once imported: an import statement per decoded image costs 0.5 us


def _pil():
    if _PIL_IMAGE:
        return _PIL_IMAGE[0]
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a dependency of mxc.image
        raise ImportError("mxc.image needs Pillow (pip install Pillow)") from exc
    _PIL_IMAGE.append(Image)
    return Image


_EXIF_ORIENTATION = 0x0112


def _exif_transpose(im):
    # OpenCV's imdecode applies the EXIF orientation for colour and grey reads; only pay for the
    # EXIF parse when the file carries EXIF data
    if "exif" not in im.info:
        return im
    from PIL import ImageOps
    return ImageOps.exif_transpose(im)


def _gray_from_rgb(rgb):
    # OpenCV's cvtColor RGB2GRAY fixed point: (R*4899 + G*9617 + B*1868 + 2^13) >> 14
    r = rgb[..., 0].astype(np.uint32)
    g = rgb[..., 1].astype(np.uint32)
    b = rgb[..., 2].astype(np.uint32)
    return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(np.uint8)


def _decode_plain_jpeg(Image, buf, flag):
    """Decode a plain JFIF JPEG with Pillow's libjpeg decoder directly into an (h, w, 1) grey or
    (h, w, 3) RGB uint8 array (read-only, as np.asarray of a Pillow image), or return None.

    Pillow's ``Image.open`` parses the JPEG header in Python (every quantisation table value
    through struct calls): about 60 us for a 32x32 CIFAR image, twice the decode itself, all of
    it holding the GIL. This scans the marker segments up to the scan (``_pixel.jpeg_plain_header``,
    which says what "plain" admits) and hands the buffer to
    the same libjpeg decoder with the arguments ``JpegImageFile`` would give it, so the pixels
    are the same; anything but a plain 8-bit 1- or 3-component JFIF returns None (and any
    failure too: Pillow's path then produces the error).
    """
    try:
        mv = memoryview(buf).cast("B")
        head = _pixel.jpeg_plain_header(mv)
    except (TypeError, ValueError):
        return None
    if head is None:
        return None
    size, layers = head[:2], head[2]
    limit = Image.MAX_IMAGE_PIXELS     # Pillow's decompression-bomb check decides
    if limit and size[0] * size[1] > limit:
        return None
    # as JpegImageFile: mode from the component count; draft("L") for grey reads of colour
    mode = "L" if layers == 1 or flag == 0 else "RGB"
    nch = 1 if mode == "L" else 3
    try:
        core = Image.core.new(mode, size)
        # what Image._getdecoder(mode, "jpeg", (mode, "")) returns, without its Python frame
        decoder = (Image.DECODERS.get("jpeg") or Image.core.jpeg_decoder)(mode, mode, "")
        try:
            decoder.setimage(core, (0, 0) + size)
            used, err = decoder.decode(mv)
        finally:
            decoder.cleanup()
        if used >= 0 or err < 0:    # wants more data (truncated) or failed: Pillow's path decides
            return None
        # the pixels through Pillow's raw encoder in one call (what Image.tobytes does in 64 KiB
        # pieces, and np.asarray(image) on top of it: 7 us of a 32x32 image's 40)
        encoder = Image.core.raw_encoder(mode, mode)
        try:
            encoder.setimage(core, (0, 0) + size)
            _, err, data = encoder.encode(size[0] * size[1] * nch + 64)
        finally:
            encoder.cleanup()
    except Exception:
        return None
    if err != 1 or len(data) != size[0] * size[1] * nch:
        return None
    return np.frombuffer(data, np.uint8).reshape(size[1], size[0], nch)


def decode_np(buf, flag=1, to_rgb=True):
    """Decode encoded image bytes to a numpy HWC uint8 array.

    Parameters
    ----------
    buf : bytes-like
        The encoded image (JPEG, PNG, or any format Pillow reads).
    flag : int
        1: three colour channels; 0: one grey channel; -1: as stored (grey, colour or with alpha).
    to_rgb : bool
        Channel order RGB (True, MXNet's default) or BGR (False, OpenCV's).

    Returns
    -------
    numpy.ndarray of shape (h, w, c), uint8

    Raises
    ------
    ValueError
        When the bytes are not a decodable image.
    """
    Image = _pil()
    arr = _decode_plain_jpeg(Image, buf, flag)
    if arr is not None:
        # as below for mode L / RGB: Pillow's L -> RGB conversion repeats the grey value
        if arr.shape[2] == 1:
            return np.repeat(arr, 3, axis=2) if flag > 0 else arr
        return arr if to_rgb else np.ascontiguousarray(arr[:, :, ::-1])
    try:
        im = Image.open(_io.BytesIO(buf))
        if flag == 0 and im.format == "JPEG":
            im.draft("L", im.size)  # libjpeg emits luma directly, as OpenCV's grey read does
        im.load()
    except Exception as exc:
        # MXNetError as MXNet raises it (a suite written for MXNet catches that), ValueError too
        why = ("not an image in a format Pillow reads, or corrupt" if
               type(exc).__name__ == "UnidentifiedImageError" else str(exc))
        raise OperatorInputError(f"imdecode: cannot decode image ({len(buf)} bytes): "
                                 f"{why}") from None
    if flag >= 0:
        im = _exif_transpose(im)
    mode = im.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = (np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8)
        if flag > 0:
            return np.ascontiguousarray(np.repeat(arr[:, :, None], 3, axis=2))
        return arr[:, :, None]
    if flag == 0:
        if mode == "L":
            return np.asarray(im)[:, :, None]
        return _gray_from_rgb(np.asarray(im.convert("RGB")))[:, :, None]
    if flag < 0 and mode in ("L", "1"):
        return np.asarray(im.convert("L"))[:, :, None]
    if flag < 0 and (mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in im.info)):
        arr = np.asarray(im.convert("RGBA"))
        return arr if to_rgb else np.ascontiguousarray(arr[:, :, [2, 1, 0, 3]])
    arr = np.asarray(im if mode == "RGB" else im.convert("RGB"))
    return arr if to_rgb else np.ascontiguousarray(arr[:, :, ::-1])


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an image to an NDArray (HWC, uint8).

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray (uint8)
        Encoded image.
    flag : int
        1 colour (3 channels), 0 greyscale (1 channel), -1 unchanged.
    to_rgb : bool
        RGB channel order (MXNet's default) instead of OpenCV's BGR.
    out : NDArray, optional
        Array to write into (must have the decoded shape, uint8).

    Returns
    -------
    NDArray
    """
    if isinstance(buf, NDArray):
        buf = buf.asnumpy().tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.tobytes()
    elif not isinstance(buf, (bytes, bytearray, memoryview)):
        raise ValueError("buf must be of type bytes, bytearray or numpy.ndarray, if you would "
                         "like to input type str, please convert to bytes")
    arr = decode_np(buf, flag, to_rgb)
    if out is not None:
        if tuple(out.shape) != arr.shape:
            raise ValueError(f"imdecode: out has shape {tuple(out.shape)}, the image {arr.shape}")
        out[:] = arr
        return out
    return _wrap(arr)


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file to an NDArray (HWC, uint8; RGB unless ``to_rgb=False``)."""
    try:
        with open(filename, "rb") as f:
            buf = f.read()
    except OSError as exc:
        raise MXNetError(f"imread: cannot read {filename}: {exc.strerror}") from None
    try:
        return imdecode(buf, flag, to_rgb, out)
    except ValueError as exc:
        raise OperatorInputError(f"imread: {filename}: {exc}") from None


# ---- resizing -------------------------------------------------------------------------------
def imresize(src, w, h, interp=1):
    """Resize an image to width ``w`` and height ``h``.

    Parameters
    ----------
    src : NDArray
        HWC uint8 image.
    w, h : int
        Target width and height.
    interp : int
        0 nearest, 1 bilinear (both bit-exact with OpenCV), 2 bicubic, 3 area, 4 Lanczos,
        9 auto (cubic to enlarge, area to shrink, bilinear otherwise), 10 random.

    Returns
    -------
    NDArray
    """
    arr = _np(src)
    if arr.ndim == 3 and interp in (9, 10):
        interp = _get_interp_method(interp, (arr.shape[0], arr.shape[1], h, w))
    return _wrap(resize_np(arr, int(w), int(h), interp))


def scale_down(src_size, size):
    """Scale ``size`` (w, h) down so it fits into ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


_BORDER_TYPES = {0: "constant", 1: "edge", 2: "symmetric", 4: "reflect"}


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=None):
    """Pad an image with a border, as OpenCV's copyMakeBorder.

    ``type``: 0 constant (``value`` or per-channel ``values``), 1 replicate, 2 reflect,
    4 reflect-101; OpenCV's BORDER_ISOLATED flag (16) may be added (a whole image has no
    surroundings to isolate from: 16 is constant, as MXNet's detection padding passes it).
    """
    arr = _np(src)
    type &= ~16
    if type not in _BORDER_TYPES:
        raise ValueError(f"copyMakeBorder: unsupported border type {type}")
    pad = [(top, bot), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if type == 0:
        if values is not None and arr.ndim == 3:
            out = np.empty((arr.shape[0] + top + bot, arr.shape[1] + left + right, arr.shape[2]),
                           arr.dtype)
            out[...] = np.asarray(values, dtype=arr.dtype)
            out[top:top + arr.shape[0], left:left + arr.shape[1]] = arr
        else:
            out = np.pad(arr, pad, mode="constant", constant_values=value)
    else:
        out = np.pad(arr, pad, mode=_BORDER_TYPES[type])
    return _wrap(out)


def _get_interp_method(interp, sizes=()):
    """Resolve interp 9 (auto) and 10 (random) to a concrete method 0-4, as MXNet."""
    if interp == 9:
        if sizes:
            assert len(sizes) == 4
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError("Unknown interp method %d" % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resize the shorter edge of ``src`` to ``size``, keeping the aspect ratio."""
    h, w, _ = src.shape
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop ``src`` at (x0, y0) to (w, h); resize to ``size`` (w, h) if given and different."""
    arr = _np(src)
    # slicing clips at the borders as MXNet's does; only an empty crop is an error
    out = arr[max(y0, 0):y0 + h, max(x0, 0):x0 + w]
    if out.size == 0:
        raise ValueError(f"fixed_crop: crop ({x0}, {y0}, {w}, {h}) is empty for an image of "
                         f"shape {arr.shape}")
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        return _wrap(resize_np(out, size[0], size[1], _get_interp_method(interp, sizes)))
    return _wrap(out.copy())


def random_crop(src, size, interp=2):
    """Randomly crop ``src`` to ``size`` (w, h), scaling down first if ``src`` is smaller.

    Returns ``(cropped NDArray, (x0, y0, w, h))``.
    """
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """Crop the centre of ``src`` to ``size`` (w, h). Returns ``(NDArray, (x0, y0, w, h))``."""
    h, w, _ = src.shape
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` in place on a float NDArray (as MXNet); returns ``src``."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """Crop a random area fraction and aspect ratio of ``src``, then resize to ``size`` (w, h).

    Falls back to :func:`center_crop` after 10 failed tries. Returns ``(NDArray, (x0, y0, w, h))``.
    """
    h, w, _ = src.shape
    src_area = h * w
    if "min_area" in kwargs:
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"unexpected keyword arguments for random_size_crop: {sorted(kwargs)}")
    if isinstance(area, numbers.Number):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * src_area
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        new_ratio = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
            return out, (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


# ---- rotation -------------------------------------------------------------------------------
def _rotation_grid(n, h, w, rad, zoom_in, zoom_out):
    """BilinearSampler's (n, 2, h, w) grid rotating each image about its centre by rad[i]
    (float32, as MXNet computes it): output pixel coordinates centred on the image are rotated,
    then normalised to [-1, 1] per axis (after the rotation, so the aspect ratio holds). zoom_in
    scales the grid so that no outside (zero) pixel shows, zoom_out so that the whole image does."""
    f32 = np.float32
    rad = rad.astype(f32).reshape(n, 1, 1)
    hs, ws = f32((h - 1) / 2), f32((w - 1) / 2)
    hm = np.broadcast_to(np.arange(h, dtype=f32)[:, None] - hs, (h, w))[None]
    wm = np.broadcast_to(np.arange(w, dtype=f32)[None, :] - ws, (h, w))[None]
    c, s = np.cos(rad), np.sin(rad)
    grid = np.stack([(wm * c - hm * s) / ws, (wm * s + hm * c) / hs], axis=1)
    if zoom_in or zoom_out:
        hh, ww = f32(h), f32(w)
        rho, corner = np.sqrt(hh * hh + ww * ww), np.arctan(hh / ww)
        turn = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(corner + turn)), np.abs(rho * np.cos(corner - turn)))
        max_y = np.maximum(np.abs(rho * np.sin(corner + turn)), np.abs(rho * np.sin(corner - turn)))
        scale = (np.maximum(max_x / ww, max_y / hh) if zoom_out else
                 np.minimum(ww / max_x, hh / max_y))
        grid = grid * scale[:, None].astype(f32)
    return grid.astype(f32)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate a float32 CHW image, or each image of an NCHW batch, by ``rotation_degrees``
    (a number, or one angle per image for a batch), as MXNet's ``mx.image.imrotate``: bilinear
    sampling, zeros where the rotated image does not reach; ``zoom_in`` zooms so that no such
    padding shows, ``zoom_out`` so that the whole image stays in view."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if np.dtype(src.dtype) != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, numbers.Number):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    if isinstance(rotation_degrees, numbers.Number):
        degrees = np.full(n, rotation_degrees, np.float32)
    else:
        degrees = np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, NDArray)
                             else rotation_degrees, np.float32).reshape(-1)
    if len(degrees) != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rad = np.float32(np.pi) * degrees / np.float32(180)
    grid = _rotation_grid(n, h, w, rad, zoom_in, zoom_out)
    out = _ops.BilinearSampler(src, _ops.array(grid, ctx=src.context))
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """:func:`imrotate` by angles drawn uniformly from ``angle_limits`` (low, high) in degrees,
    one per image of a batch (numpy's global generator, as MXNet)."""
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)


# ---- augmenters -----------------------------------------------------------------------------
class Augmenter:
    """Image augmenter base class: ``aug(src) -> NDArray``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """JSON string describing the augmenter (``[name, kwargs]``)."""
        import json
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """Apply a list of augmenters in order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class ResizeAug(Augmenter):
    """Resize the shorter edge to ``size``."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resize to exactly ``size`` (w, h), ignoring the aspect ratio."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(Augmenter):
    """Random crop to ``size`` (w, h)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Random area/aspect-ratio crop resized to ``size`` (w, h)."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        self.area = kwargs.pop("min_area") if "min_area" in kwargs else area
        if kwargs:
            raise TypeError(f"unexpected keyword arguments for RandomSizedCropAug: "
                            f"{sorted(kwargs)}")
        self.ratio = ratio
        self.interp = interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """Centre crop to ``size`` (w, h)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomOrderAug(Augmenter):
    """Apply a list of augmenters in a random order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [self.__class__.__name__.lower(), [x.dumps() for x in self.ts]]

    def __call__(self, src):
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


_GRAY_COEF = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _float_np(src, who):
    arr = _np(src)
    if arr.dtype.kind != "f":
        raise TypeError(f"{who} needs a float image (apply CastAug first), got {arr.dtype}")
    return arr


class BrightnessJitterAug(Augmenter):
    """Multiply by ``1 + U(-brightness, brightness)``."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src *= alpha
        return src


class ContrastJitterAug(Augmenter):
    """Blend with the mean grey level: ``src * alpha + (1 - alpha) * mean(gray)``."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        arr = _float_np(src, "ContrastJitterAug")
        gray = arr * _GRAY_COEF
        gray = np.float32(3.0 * (1.0 - alpha) / gray.size) * gray.sum(dtype=np.float32)
        src *= alpha
        src += float(gray)
        return src


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its grey value: ``src * alpha + (1 - alpha) * gray``."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        arr = _float_np(src, "SaturationJitterAug")
        gray = (arr * _GRAY_COEF).sum(axis=2, keepdims=True, dtype=np.float32)
        gray *= np.float32(1.0 - alpha)
        out = arr * np.float32(alpha) + gray
        return _wrap(out.astype(arr.dtype, copy=False))


class HueJitterAug(Augmenter):
    """Rotate the hue in YIQ space by ``U(-hue, hue) * pi``."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = np.array([[0.299, 0.587, 0.114],
                              [0.596, -0.274, -0.321],
                              [0.211, -0.523, 0.311]])
        self.ityiq = np.array([[1.0, 0.956, 0.621],
                               [1.0, -0.272, -0.647],
                               [1.0, -1.107, 1.705]])

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u = np.cos(alpha * np.pi)
        w = np.sin(alpha * np.pi)
        bt = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = np.dot(np.dot(self.ityiq, bt), self.tyiq).T
        arr = _float_np(src, "HueJitterAug")
        return _wrap(np.dot(arr, t.astype(arr.dtype)))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter in random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet-style PCA lighting noise: add ``(eigvec * alpha) @ eigval``,
    alpha ~ N(0, alphastd)."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src += _nd.array(rgb)
        return src


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std``."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else _nd.array(mean)
        self.std = std if std is None or isinstance(std, NDArray) else _nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by 0.21 R + 0.72 G + 0.07 B."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]],
                            dtype=np.float32)

    def __call__(self, src):
        if random.random() < self.p:
            arr = _float_np(src, "RandomGrayAug")
            src = _wrap(np.dot(arr, self.mat.astype(arr.dtype)))
        return src


class HorizontalFlipAug(Augmenter):
    """Flip left-right with probability ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            arr = np.ascontiguousarray(_np(src))
            if arr.ndim == 3 and arr.dtype in (np.uint8, np.float32):
                out = np.empty_like(arr)
                _pixel.flip_lr(arr, out)
            else:
                out = np.ascontiguousarray(arr[:, ::-1])
            src = _wrap(out)
        return src


class CastAug(Augmenter):
    """Cast to ``typ`` (float32 by default)."""

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0,
                    pca_noise=0, rand_gray=0, inter_method=2):
    """The standard augmenter list of MXNet's ``mx.image.CreateAugmenter``.

    Parameters
    ----------
    data_shape : tuple of int
        (channels, height, width) of the output.
    resize : int
        Resize the shorter edge to this before cropping (0: no resize).
    rand_crop, rand_resize, rand_mirror : bool
        Random crop (else centre crop), random-sized crop (needs rand_crop), random mirror.
    mean, std : True, numpy array or NDArray, optional
        Normalisation; True selects the ImageNet values.
    brightness, contrast, saturation, hue, pca_noise, rand_gray : float
        Jitter strengths / probability.
    inter_method : int
        Interpolation for resizing (see :func:`imresize`).

    Returns
    -------
    list of Augmenter
    """
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise _Refused("CreateAugmenter: rand_resize needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    return auglist + color_augmenters(brightness, contrast, saturation, hue, pca_noise,
                                      rand_gray, mean, std, "CreateAugmenter")


def color_augmenters(brightness, contrast, saturation, hue, pca_noise, rand_gray, mean, std,
                     who):
    """The end of CreateAugmenter's (and CreateDetAugmenter's) list, none of which moves pixels:
    cast to float32, colour jitter, hue, PCA lighting, random grey, normalisation (mean/std
    True selects the ImageNet values)."""
    auglist = []
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        eigval = np.array([55.46, 4.794, 1.148])
        eigvec = np.array([[-0.5675, 0.7192, 0.4009],
                           [-0.5808, -0.0045, -0.8140],
                           [-0.5836, -0.6948, 0.4203]])
        auglist.append(LightingAug(pca_noise, eigval, eigvec))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = _nd.array([123.68, 116.28, 103.53])
    elif mean is not None:
        if not (isinstance(mean, (np.ndarray, NDArray)) and mean.shape[0] in (1, 3)):
            raise _Refused(f"{who}: mean must be True or an array of 1 or 3 values")
    if std is True:
        std = _nd.array([58.395, 57.12, 57.375])
    elif std is not None:
        if not (isinstance(std, (np.ndarray, NDArray)) and std.shape[0] in (1, 3)):
            raise _Refused(f"{who}: std must be True or an array of 1 or 3 values")
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


# ---- ImageIter ------------------------------------------------------------------------------
class ImageIter(DataIter):
    """Image data iterator over a RecordIO file (``.rec`` [+ ``.idx``]) or an image list.

    Python-side, with a flexible list of augmenters (``aug_list``, or the keyword arguments of
    :func:`CreateAugmenter`).  For throughput use :class:`mxc.io.ImageRecordIter`.

    Parameters
    ----------
    batch_size : int
    data_shape : tuple
        (3, height, width) of the output.
    label_width : int
        Number of labels per image.
    path_imgrec, path_imgidx : str
        RecordIO file and its index (the index enables shuffle and sharding).
    path_imglist, path_root : str
        ``.lst`` file (``index\\tlabel(s)\\tpath``) and the folder its paths are relative to.
    imglist : list
        In-memory list of ``[label(s)..., path]``.
    shuffle : bool
        Shuffle every epoch (Python's ``random``).
    part_index, num_parts : int
        Take part ``part_index`` of ``num_parts`` equal shards.
    aug_list : list of Augmenter
    data_name, label_name : str
    dtype : str
        Label dtype: 'int32', 'float32', 'int64' or 'float64'.
    last_batch_handle : str
        'pad', 'discard' or 'roll_over'.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad", **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise _Refused("ImageIter: give path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise _Refused(f"ImageIter: label dtype {dtype} not supported")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"ImageIter: last_batch_handle must be pad, discard or roll_over, "
                             f"got {last_batch_handle!r}")
        imgkeys = None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
                self.imgidx = None
        else:
            self.imgrec = None
        if path_imglist:
            imglist_d = {}
            imgkeys = []
            with open(path_imglist) as fin:
                for line in fin:
                    parts = line.strip().split("\t")
                    if len(parts) < 3:
                        continue
                    label = np.array(parts[1:-1], dtype=dtype)
                    key = int(parts[0])
                    imglist_d[key] = (label, parts[-1])
                    imgkeys.append(key)
            self.imglist = imglist_d
        elif isinstance(imglist, list):
            result = {}
            imgkeys = []
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = np.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numbers.Number):
                    label = np.array([img[0]], dtype=dtype)
                else:
                    label = np.array(img[0], dtype=dtype)
                result[key] = (label, img[-1])
                imgkeys.append(key)
            self.imglist = result
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        data_shape = tuple(data_shape)
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape)]
        if label_width > 1:
            self.provide_label = [DataDesc(label_name, (batch_size, label_width))]
        else:
            self.provide_label = [DataDesc(label_name, (batch_size,))]
        self.batch_size = batch_size
        self.data_shape = data_shape
        self.label_width = label_width
        self.label_dtype = dtype
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise _Refused("ImageIter: shuffle and num_parts > 1 need path_imgidx")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise _Refused(f"ImageIter: part_index {part_index} not in [0, {num_parts})")
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n:(part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    def reset(self):
        """Rewind to the start of the data (reshuffling when ``shuffle``)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Rewind and drop any rolled-over partial batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """``(label, encoded image bytes)`` of the next sample; StopIteration at the end."""
        if self._allow_read is False:
            raise StopIteration
        if self.seq is not None:
            if self.cur < self.num_image:
                idx = self.seq[self.cur]
            else:
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    logging.debug("Invalid image, skipping:  %s", str(e))
                    continue
                data = self.augmentation_transform(data)
                self.postprocess_into(data, batch_data[i])
                lab = np.asarray(label, dtype=np.float32)
                if lab.size != max(self.label_width, 1):
                    raise MXNetError(f"ImageIter: sample has {lab.size} labels, label_width is "
                                     f"{self.label_width}")
                batch_label[i] = lab.reshape(batch_label[i].shape)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next :class:`mxc.io.DataBatch`."""
        c, h, w = self.data_shape
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = np.zeros((self.batch_size, c, h, w), np.float32)
            batch_label = np.zeros(self.provide_label[0].shape, np.float32)
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([_wrap(batch_data)], [_wrap(batch_label)], pad=pad)

    def check_data_shape(self, data_shape):
        """Check that ``data_shape`` is (3, h, w)."""
        if not len(data_shape) == 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if not data_shape[0] == 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data):
        """Raise RuntimeError for an image without pixels."""
        if len(data.shape) == 0 or data.shape[0] == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s):
        """Decode a sample's bytes (RuntimeError naming the sample when broken)."""
        try:
            return imdecode(s)
        except Exception as e:
            if self.seq is not None and self.num_image:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = self.cur - 1
            where = (f"filename: {self.imglist[idx][1]}" if self.imglist is not None
                     else f"index: {idx}")
            raise RuntimeError(f"Broken image {where}, {e}") from None

    def read_image(self, fname):
        """Bytes of an image file of the list."""
        with open(os.path.join(self.path_root or "", fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Apply every augmenter of ``auglist`` in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_into(self, datum, out):
        """Write an augmented HWC image into ``out`` (CHW float32) without the GIL."""
        arr = np.ascontiguousarray(_np(datum), dtype=np.float32)
        if arr.ndim != 3 or arr.shape[0] != out.shape[1] or arr.shape[1] != out.shape[2] \
                or arr.shape[2] != out.shape[0]:
            raise ValueError(f"ImageIter: augmented image of shape {arr.shape} does not match "
                             f"data_shape {self.data_shape} (HWC vs CHW)")
        _pixel.crop_to_chw(arr, 0, 0, False, _pixel.identity_cmap(arr.shape[2]), None, None, out)

    def postprocess_data(self, datum):
        """HWC -> CHW (MXNet's hook; returns an NDArray)."""
        arr = np.ascontiguousarray(_np(datum), dtype=np.float32)
        out = np.empty((arr.shape[2], arr.shape[0], arr.shape[1]), np.float32)
        _pixel.crop_to_chw(arr, 0, 0, False, _pixel.identity_cmap(arr.shape[2]), None, None, out)
        return _wrap(out)

"""MXNet 1.9.1's image operators (``_image_*``, ``mx.nd.image.*``, ``mx.sym.image.*``):
to_tensor, normalize, crop, resize, flip_left_right, flip_top_bottom, their random_ versions,
random_brightness/contrast/saturation/hue, random_color_jitter, adjust_lighting and
random_lighting.

Images are HWC (or NHWC batches) as in MXNet; to_tensor makes CHW float32 in [0, 1] and
normalize works on CHW / NCHW. to_tensor, normalize, crop and the deterministic flips are
composites of other operators (so they differentiate); the colour operators and resize compute
on the host in numpy (float32 arithmetic and uint8 saturation as MXNet's kernels) and pass the
head gradient through unchanged, as MXNet's ``_copy`` gradient does. Random parameters come from
mxc's generator (``mx.random.seed`` makes them repeatable).

Differences from MXNet, on purpose: random_saturation mixes with the true gray value
(0.299 R + 0.587 G + 0.114 B; MXNet's kernel kept only the blue term by a typo), flips copy the
middle row of odd-sized images (MXNet left it unwritten unless in place), flips and the colour
operators also take NHWC batches, and 1-channel inputs to hue and lighting are returned
unchanged (MXNet returned uninitialised memory).
"""
import math

import numpy as np

from ..base import MXNetError, OperatorInputError
from . import services
from .params import Param
from .cpu import _pixel
from .registry import OpDef, Untraceable, register

_GRAY = np.array([0.299, 0.587, 0.114], np.float32)


# ---- helpers --------------------------------------------------------------------------------
def _check_image(name, x, allow_batch=True):
    if x.ndim == 3:
        c = x.shape[2]
    elif x.ndim == 4 and allow_batch:
        c = x.shape[3]
    else:
        want = "(H, W, C) or (N, H, W, C)" if allow_batch else "(H, W, C)"
        raise MXNetError(f"{name}: input image must have shape {want}, got {tuple(x.shape)}")
    if c not in (1, 3):
        raise MXNetError(f"{name}: the last dimension of the input image must be the channel "
                         f"dimension with 1 or 3 elements, got shape {tuple(x.shape)}")
    return c


def _saturate(val, dtype):
    """MXNet's saturate_cast: uint8 clips to [0, 255] and truncates; others just cast."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return np.clip(val, 0.0, 255.0).astype(np.uint8)
    return val.astype(dtype)


def _nd():
    return services.ndarray


def _eager(F, name):
    """Operators that compute on the host or draw random numbers run eagerly: a graph planner
    tracing with its own F (CachedOp) is told to run this node by node."""
    if F is _nd():
        return
    raise Untraceable(f"{name} computes on the host")


def _host(F, x, fn):
    """Run `fn` on x as a numpy HWC image (or each image of an NHWC batch)."""
    a = x.asnumpy()
    if a.ndim == 4:
        out = np.stack([fn(a[i]) for i in range(a.shape[0])]) if a.shape[0] else a.copy()
    else:
        out = fn(a)
    return F.array(out, ctx=x.context, dtype=a.dtype)


def _uniform(F, lo, hi, n=1):
    if hi < lo:
        raise MXNetError(f"min_factor {lo} must not exceed max_factor {hi}")
    if hi == lo:
        return [float(lo)] * n
    return [float(v) for v in F.random.uniform(lo, hi, shape=(n,)).asnumpy()]


def _pass_grad(F, attrs, inputs, outputs, out_grads):
    return [out_grads[0]]


# ---- to_tensor ------------------------------------------------------------------------------
def _to_tensor(F, a, x):
    if x.ndim not in (3, 4):
        raise MXNetError("_image_to_tensor: input image must have shape (height, width, channels) "
                         f"or (N, height, width, channels), got {tuple(x.shape)}")
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    return F.transpose(F.cast(x, dtype="float32"), axes=axes) / 255.0


register(OpDef("_image_to_tensor", aliases=("_npx__image_to_tensor",), composite=_to_tensor,
               doc="HWC (NHWC) image of any dtype -> CHW (NCHW) float32 divided by 255."))


# ---- normalize ------------------------------------------------------------------------------
def _channel_values(name, what, vals, c, default):
    if len(vals) == 1 or len(vals) == c:
        return vals if len(vals) == c else vals * c
    if vals == default[:len(vals)] or len(set(vals)) == 1:
        return (vals[0],) * c
    raise MXNetError(f"{name}: invalid {what} {vals} for an input with {c} channels; "
                     f"give 1 or {c} values")


def _normalize(F, a, x):
    name = "_image_normalize"
    if x.ndim not in (3, 4):
        raise MXNetError(f"{name}: input tensor must have shape (channels, height, width) or "
                         f"(N, channels, height, width), got {tuple(x.shape)}")
    c = x.shape[0] if x.ndim == 3 else x.shape[1]
    if c not in (1, 3):
        raise MXNetError(f"{name}: the channel dimension of the input must have 1 or 3 "
                         f"elements, got shape {tuple(x.shape)}")
    mean = _channel_values(name, "mean", a["mean"], c, (0.0,) * 4)
    std = _channel_values(name, "std", a["std"], c, (1.0,) * 4)
    if any(s == 0 for s in std):
        raise MXNetError(f"{name}: std {std} has a zero")
    shape = (c, 1, 1) if x.ndim == 3 else (1, c, 1, 1)
    m = _nd().array(np.array(mean, np.float64).reshape(shape), ctx=x.context, dtype=x.dtype)
    s = _nd().array(np.array(std, np.float64).reshape(shape), ctx=x.context, dtype=x.dtype)
    return F.broadcast_div(F.broadcast_sub(x, m), s)


register(OpDef("_image_normalize", aliases=("_npx__image_normalize",), composite=_normalize,
               params=(Param("mean", "floats", (0.0, 0.0, 0.0, 0.0)),
                       Param("std", "floats", (1.0, 1.0, 1.0, 1.0))),
               doc="(x - mean[c]) / std[c] on a CHW or NCHW tensor with 1 or 3 channels."))


# ---- crop -----------------------------------------------------------------------------------
def _crop(F, a, x):
    name = "_image_crop"
    if x.ndim not in (3, 4):
        raise MXNetError(f"{name}: expects inputs of 3D (h, w, c) or 4D (n, h, w, c), "
                         f"got {x.ndim}D {tuple(x.shape)}")
    _check_image(name, x)
    h, w = x.shape[-3], x.shape[-2]
    if a["width"] <= 0 or a["height"] <= 0:
        raise MXNetError(f"{name}: height and width must be greater than 0, got "
                         f"width={a['width']} height={a['height']}")
    if a["x"] < 0 or a["y"] < 0:
        raise MXNetError(f"{name}: x and y must not be negative, got x={a['x']} y={a['y']}")
    if a["x"] + a["width"] > w:
        raise MXNetError(f"{name}: x + width = {a['x'] + a['width']} is greater than the input "
                         f"width {w}")
    if a["y"] + a["height"] > h:
        raise MXNetError(f"{name}: y + height = {a['y'] + a['height']} is greater than the input "
                         f"height {h}")
    y0, x0, y1, x1 = a["y"], a["x"], a["y"] + a["height"], a["x"] + a["width"]
    if x.ndim == 3:
        return F.slice(x, begin=(y0, x0, 0), end=(y1, x1, x.shape[2]))
    return F.slice(x, begin=(0, y0, x0, 0), end=(x.shape[0], y1, x1, x.shape[3]))


register(OpDef("_image_crop", aliases=("_npx__image_crop",), composite=_crop,
               params=(Param("x", int, required=True), Param("y", int, required=True),
                       Param("width", int, required=True), Param("height", int, required=True)),
               doc="The (x, y, width, height) region of an HWC / NHWC image."))


# ---- resize ---------------------------------------------------------------------------------
def _resize_hw(name, h, w, size, keep_ratio):
    if len(size) == 1:
        if size[0] <= 0:
            raise MXNetError(f"{name}: size should be greater than 0, got {size[0]}")
        if not keep_ratio:
            return size[0], size[0]
        if h > w:
            return int(h * size[0] / w), size[0]
        return size[0], int(w * size[0] / h)
    if len(size) == 2:
        if size[0] <= 0 or size[1] <= 0:
            raise MXNetError(f"{name}: width and height should be greater than 0, got {size}")
        return size[1], size[0]
    raise MXNetError(f"{name}: size must have 1 or 2 elements (width, height), got {size}")


def _taps(n_in, n_out, interp):
    """Source indices (n_out, k) and weights (n_out, k) of OpenCV's separable resize along one
    axis: centre-aligned coordinates, borders replicated."""
    scale = n_in / n_out
    d = np.arange(n_out, dtype=np.float64)
    if interp == 0:
        idx = np.minimum(np.floor(d * scale).astype(np.int64), n_in - 1)
        return idx[:, None], np.ones((n_out, 1))
    if interp == 3 and scale <= 1:
        # area when enlarging: OpenCV's bilinear variant with coefficients from pixel edges
        sx = np.floor(d * scale)
        f = (d + 1) - (sx + 1) / scale
        f = np.where(f <= 0, 0.0, f - np.floor(f))
        idx = np.clip(sx.astype(np.int64)[:, None] + np.arange(2)[None, :], 0, n_in - 1)
        return idx, np.stack([1 - f, f], axis=1)
    if interp == 3:
        # area: average of the source pixels each output pixel covers, by overlap
        k = int(math.ceil(scale)) + 1
        start = d * scale
        base = np.floor(start).astype(np.int64)
        idx = base[:, None] + np.arange(k)[None, :]
        lo = np.maximum(idx, start[:, None])
        hi = np.minimum(idx + 1, (start + scale)[:, None])
        wts = np.clip(hi - lo, 0, None) / scale
        return np.clip(idx, 0, n_in - 1), wts
    s = (d + 0.5) * scale - 0.5
    i0 = np.floor(s).astype(np.int64)
    f = s - i0
    if interp == 2:
        A = -0.75
        offs = np.arange(-1, 3)
        t = np.abs(f[:, None] - offs[None, :])
        wts = np.where(t <= 1, ((A + 2) * t - (A + 3)) * t * t + 1,
                       np.where(t < 2, ((A * t - 5 * A) * t + 8 * A) * t - 4 * A, 0.0))
    elif interp == 4:
        offs = np.arange(-3, 5)
        t = f[:, None] - offs[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            wts = np.where(np.abs(t) < 1e-12, 1.0,
                           4 * np.sin(np.pi * t) * np.sin(np.pi * t / 4) / (np.pi * np.pi * t * t))
        wts = wts / wts.sum(axis=1, keepdims=True)
    else:   # bilinear (and area when enlarging)
        offs = np.arange(0, 2)
        wts = np.stack([1 - f, f], axis=1)
    idx = np.clip(i0[:, None] + offs[None, :], 0, n_in - 1)
    return idx, wts


def resize_float(img, w, h, interp=1):
    """OpenCV-style resize of a float HWC image (float32 arithmetic for float32 input)."""
    if interp not in (0, 1, 2, 3, 4):
        raise MXNetError(f"_image_resize: interp {interp} is not one of 0-4")
    ih, iw = img.shape[0], img.shape[1]
    ct = np.float64 if img.dtype == np.float64 else np.float32
    src = img.astype(ct, copy=False)
    ri, rw = _taps(ih, h, interp)
    ci, cw = _taps(iw, w, interp)
    tmp = np.einsum("hk,hkwc->hwc", rw.astype(ct), src[ri]) if src.ndim == 3 else None
    out = np.einsum("wk,hwkc->hwc", cw.astype(ct), tmp[:, ci])
    return out


# ---- resizing a numpy image (mx.image.imresize and _image_resize share it) -----------------
_PIL_FILTERS = {2: "BICUBIC", 3: "BOX", 4: "LANCZOS"}


def resize_np(src, w, h, interp=1):
    """Resize a numpy HWC (or HW) image to height ``h`` and width ``w`` with interp 0-4
    (see :func:`imresize`); returns a new HWC array of the same dtype."""
    # MXNet's imresize operator raises MXNetError for these; OperatorInputError is that and
    # the ValueError mxc raised before
    src = np.ascontiguousarray(src)
    if interp not in (0, 1, 2, 3, 4):
        raise OperatorInputError(f"imresize: unknown interp method {interp} (0 to 4)")
    if w <= 0 or h <= 0:
        raise OperatorInputError(f"imresize: target size ({w}, {h}) must be positive")
    if src.ndim == 2:
        src = src[:, :, None]
    if src.ndim != 3 or src.shape[0] == 0 or src.shape[1] == 0:
        raise OperatorInputError(f"imresize: expected a non-empty (h, w, c) image, got "
                                 f"{src.shape}")
    if src.dtype != np.uint8:
        # float images (MXNet resizes any dtype): the float resampler
        return resize_float(src, w, h, interp).astype(src.dtype)
    if (src.shape[0], src.shape[1]) == (h, w):
        return src.copy()
    if interp in (0, 1):
        dst = np.empty((h, w, src.shape[2]), np.uint8)
        (_pixel.resize_nearest if interp == 0 else _pixel.resize_linear)(src, dst)
        return dst
    if interp not in _PIL_FILTERS:
        raise ValueError(f"imresize: unknown interp method {interp}")
    try:
        from PIL import Image   # lazy: Pillow costs start-up time, and only interp 2-4 need it
    except ImportError as exc:  # pragma: no cover - Pillow is a dependency of mxc
        raise ImportError("resizing with interp 2-4 needs Pillow (pip install Pillow)") from exc
    filt = getattr(Image.Resampling, _PIL_FILTERS[interp])
    # Pillow resizes per channel for any band count through 'L' images
    chans = [np.asarray(Image.fromarray(src[:, :, c]).resize((w, h), filt))
             for c in range(src.shape[2])]
    return np.stack(chans, axis=2)


def _resize(F, a, x):
    name = "_image_resize"
    _eager(F, name)
    if x.ndim not in (3, 4):
        raise MXNetError(f"{name}: input image dimension should be 3 or 4 but got {x.ndim}")
    if x.dtype == np.float16:
        raise MXNetError(f"{name}: float16 images are not supported")
    h, w = x.shape[-3], x.shape[-2]
    oh, ow = _resize_hw(name, h, w, tuple(a["size"]), a["keep_ratio"])
    interp = a["interp"]
    if interp not in (0, 1, 2, 3, 4):
        raise MXNetError(f"{name}: interp {interp} is not one of 0 (nearest), 1 (bilinear), "
                         "2 (bicubic), 3 (area), 4 (lanczos)")
    dtype = np.dtype(x.dtype)

    def one(img):
        if dtype == np.uint8:
            return resize_np(img, ow, oh, interp).reshape(oh, ow, img.shape[2])
        return resize_float(img, ow, oh, interp).astype(dtype)
    return _host(F, x, one)


register(OpDef("_image_resize", aliases=("_npx__image_resize",), composite=_resize,
               params=(Param("size", "shape", ()), Param("keep_ratio", bool, False),
                       Param("interp", int, 1)),
               doc="Resize an HWC / NHWC image to size (w, h) or (s) (the short side with "
                   "keep_ratio), OpenCV's interpolation methods."))


# ---- flips ----------------------------------------------------------------------------------
def _flip_axis(x, lr):
    return (x.ndim - 2) if lr else (x.ndim - 3)


def _make_flip(name, lr):
    def composite(F, a, x):
        _check_image(name, x)
        return F.reverse(x, axis=_flip_axis(x, lr))
    return composite


def _make_random_flip(name, lr):
    def composite(F, a, x):
        _eager(F, name)
        _check_image(name, x)
        if _uniform(F, 0.0, 1.0)[0] < 0.5:
            return x.copy()
        return F.reverse(x, axis=_flip_axis(x, lr))
    return composite


def _flip_grad(lr):
    def grad(F, attrs, inputs, outputs, out_grads):
        return [F.reverse(out_grads[0], axis=_flip_axis(out_grads[0], lr))]
    return grad


for _lr, _what in ((True, "left_right"), (False, "top_bottom")):
    register(OpDef(f"_image_flip_{_what}", aliases=(f"_npx__image_flip_{_what}",),
                   composite=_make_flip(f"_image_flip_{_what}", _lr),
                   doc=f"Flip an HWC / NHWC image {'left-right' if _lr else 'top-bottom'}."))
    register(OpDef(f"_image_random_flip_{_what}", aliases=(f"_npx__image_random_flip_{_what}",),
                   composite=_make_random_flip(f"_image_random_flip_{_what}", _lr),
                   grad=_pass_grad, resources=("random",),
                   doc=f"Flip {'left-right' if _lr else 'top-bottom'} with probability 0.5."))


# ---- colour ---------------------------------------------------------------------------------
def adjust_brightness(img, alpha):
    return _saturate(img.astype(np.float32) * np.float32(alpha), img.dtype)


def adjust_contrast(img, alpha):
    f = img.astype(np.float32)
    if img.shape[2] > 1:
        total = (f[:, :, :3] * _GRAY).sum(dtype=np.float64)
        gray_mean = np.float32(total / (f.shape[0] * f.shape[1]))
    else:
        gray_mean = np.float32(f.sum(dtype=np.float64) / (f.shape[0] * f.shape[1]))
    beta = np.float32((1 - np.float32(alpha)) * gray_mean)
    return _saturate(f * np.float32(alpha) + beta, img.dtype)


def adjust_saturation(img, alpha):
    if img.shape[2] == 1:
        return img.copy()
    f = img.astype(np.float32)
    gray = (f * _GRAY).sum(axis=2, keepdims=True) * np.float32(1 - alpha)
    return _saturate(gray + f * np.float32(alpha), img.dtype)


def _rgb_to_hls(r, g, b):
    r, g, b = r / np.float32(255), g / np.float32(255), b / np.float32(255)
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    l = (vmax + vmin) * np.float32(0.5)
    ok = diff > np.finfo(np.float32).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(l < 0.5, diff / (vmax + vmin), diff / (np.float32(2) - vmax - vmin))
        d60 = np.float32(60) / diff
        h = np.where(vmax == r, (g - b) * d60,
                     np.where(vmax == g, (b - r) * d60 + np.float32(120),
                              (r - g) * d60 + np.float32(240)))
    h = np.where(h < 0, h + np.float32(360), h)
    return np.where(ok, h, 0).astype(np.float32), l, np.where(ok, s, 0).astype(np.float32)


_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hls_to_rgb(h, l, s):
    p2 = np.where(l <= 0.5, l * (1 + s), l + s - l * s).astype(np.float32)
    p1 = (2 * l - p2).astype(np.float32)
    hh = (h * np.float32(1.0 / 60.0)) % np.float32(6)
    sector = np.minimum(hh.astype(np.int64), 5)
    frac = (hh - sector).astype(np.float32)
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (1 - frac), p1 + (p2 - p1) * frac], axis=-1)
    sel = _SECTORS[sector]                        # (..., 3): b, g, r table entries
    b = np.take_along_axis(tab, sel[..., 0:1], -1)[..., 0]
    g = np.take_along_axis(tab, sel[..., 1:2], -1)[..., 0]
    r = np.take_along_axis(tab, sel[..., 2:3], -1)[..., 0]
    gray = s == 0
    r, g, b = np.where(gray, l, r), np.where(gray, l, g), np.where(gray, l, b)
    return r * np.float32(255), g * np.float32(255), b * np.float32(255)


def adjust_hue(img, alpha):
    if img.shape[2] == 1:
        return img.copy()
    f = img.astype(np.float32)
    h, l, s = _rgb_to_hls(f[:, :, 0], f[:, :, 1], f[:, :, 2])
    h = h + np.float32(alpha * 360.0)
    r, g, b = _hls_to_rgb(h, l, s)
    return _saturate(np.stack([r, g, b], axis=2), img.dtype)


_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], np.float32)


def adjust_lighting(img, alpha):
    if img.shape[2] == 1:
        return img.copy()
    pca = (_EIG * np.asarray(alpha, np.float32)[None, :3]).sum(axis=1).astype(np.float32)
    return _saturate(img.astype(np.float32) + pca, img.dtype)


_ENHANCE = (Param("min_factor", float, required=True), Param("max_factor", float, required=True))


def _make_enhance(name, fn):
    def composite(F, a, x):
        _eager(F, name)
        _check_image(name, x)
        if a["min_factor"] < 0 or a["max_factor"] < 0:
            raise MXNetError(f"{name}: min_factor and max_factor must be >= 0")
        n = x.shape[0] if x.ndim == 4 else 1
        alphas = iter(_uniform(F, a["min_factor"], a["max_factor"], n))
        return _host(F, x, lambda img: fn(img, next(alphas)))
    return composite


for _what, _fn in (("brightness", adjust_brightness), ("contrast", adjust_contrast),
                   ("saturation", adjust_saturation), ("hue", adjust_hue)):
    _nm = f"_image_random_{_what}"
    register(OpDef(_nm, aliases=(f"_npx_{_nm}",), composite=_make_enhance(_nm, _fn),
                   params=_ENHANCE, grad=_pass_grad, resources=("random",),
                   doc=f"Random {_what} change by a factor drawn from [min_factor, max_factor]."))


def _color_jitter(F, a, x):
    name = "_image_random_color_jitter"
    _eager(F, name)
    _check_image(name, x)

    steps = (("brightness", adjust_brightness, 1.0), ("contrast", adjust_contrast, 1.0),
             ("saturation", adjust_saturation, 1.0), ("hue", adjust_hue, 0.0))

    def one(img):
        order = np.argsort(F.random.uniform(0, 1, shape=(4,)).asnumpy(), kind="stable")
        for k in order:
            what, fn, base = steps[k]
            amount = a[what]
            if amount > 0:
                img = fn(img, base + _uniform(F, -amount, amount)[0])
        return img
    return _host(F, x, one)


register(OpDef("_image_random_color_jitter", aliases=("_npx__image_random_color_jitter",),
               composite=_color_jitter, grad=_pass_grad, resources=("random",),
               params=(Param("brightness", float, required=True),
                       Param("contrast", float, required=True),
                       Param("saturation", float, required=True),
                       Param("hue", float, required=True)),
               doc="Brightness, contrast, saturation and hue jitter in a random order."))


def _adjust_lighting(F, a, x):
    name = "_image_adjust_lighting"
    _eager(F, name)
    _check_image(name, x)
    alpha = a["alpha"]
    if len(alpha) != 3:
        raise MXNetError(f"{name}: alpha must have 3 values (R, G, B), got {alpha}")
    return _host(F, x, lambda img: adjust_lighting(img, alpha))


register(OpDef("_image_adjust_lighting", aliases=("_npx__image_adjust_lighting",),
               composite=_adjust_lighting, grad=_pass_grad,
               params=(Param("alpha", "floats", required=True),),
               doc="AlexNet-style PCA lighting: add eigvec * (eigval * alpha) to each pixel."))


def _random_lighting(F, a, x):
    name = "_image_random_lighting"
    _eager(F, name)
    _check_image(name, x)
    std = a["alpha_std"]

    def one(img):
        alpha = F.random.normal(0, std, shape=(3,)).asnumpy() if std > 0 else np.zeros(3)
        return adjust_lighting(img, alpha)
    return _host(F, x, one)


register(OpDef("_image_random_lighting", aliases=("_npx__image_random_lighting",),
               composite=_random_lighting, grad=_pass_grad, resources=("random",),
               params=(Param("alpha_std", float, 0.05),),
               doc="adjust_lighting with alpha drawn from N(0, alpha_std)."))

"""Image transforms as Blocks (MXNet 1.9.1's gluon.data.vision.transforms).

Images are HWC (NHWC) uint8 until ToTensor makes them CHW (NCHW) float32 in [0, 1]; the
Hybrid ones call ``F.image.*`` (mxc/ops/image_ops.py) and can be hybridized; Rotate and
RandomRotation work on float32 CHW / NCHW tensors."""
import random
from numbers import Number

import numpy as np

from ...block import Block, HybridBlock
from ...nn import Sequential, HybridSequential
from .... import image
from .... import ndarray as nd

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """Apply `transforms` in order; runs of consecutive HybridBlocks are grouped into one
    hybridized HybridSequential."""

    def __init__(self, transforms):
        super().__init__()
        run = []

        def flush():
            if len(run) == 1:
                self.add(run[0])
            elif len(run) > 1:
                block = HybridSequential()
                for t in run:
                    block.add(t)
                block.hybridize()
                self.add(block)
            run.clear()

        for t in list(transforms):
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            flush()
            self.add(t)
        flush()


class Cast(HybridBlock):
    """Cast the input to `dtype`."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (NHWC) image in [0, 255] -> CHW (NCHW) float32 in [0, 1]."""

    def __init__(self):
        super().__init__()

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of a CHW (NCHW) tensor; mean/std: one value or one per
    channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


def _imrotate(src, degrees, zoom_in=False, zoom_out=False):
    """Rotate float32 CHW / NCHW images by `degrees` (a number, or one per image) about their
    centre with bilinear sampling; zoom_in hides the padding, zoom_out keeps every corner."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if src.dtype is not np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is "
                            "required to be a scalar.")
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n, _, h, w = src.shape
    angles = np.full(n, float(degrees)) if isinstance(degrees, Number) else \
        np.asarray(degrees.asnumpy() if isinstance(degrees, nd.NDArray) else degrees, np.float64)
    if angles.shape != (n,):
        raise ValueError("The number of images must be equal to the number of rotation angles")
    rad = np.pi * angles.astype(np.float32) / np.float32(180)
    hs, ws = np.float32(h - 1) / 2, np.float32(w - 1) / 2
    hm = (np.arange(h, dtype=np.float32)[:, None] - hs) * np.ones((1, w), np.float32)
    wm = (np.arange(w, dtype=np.float32)[None, :] - ws) * np.ones((h, 1), np.float32)
    c = np.cos(rad).astype(np.float32)[:, None, None]
    s = np.sin(rad).astype(np.float32)[:, None, None]
    wr = (wm * c - hm * s) / ws if w > 1 else wm * c - hm * s
    hr = (wm * s + hm * c) / hs if h > 1 else wm * s + hm * c
    scale = np.ones((n, 1, 1, 1), np.float32)
    if zoom_in or zoom_out:
        rho = np.sqrt(np.float32(h * h + w * w))
        ang = np.arctan(np.float32(h) / np.float32(w))
        a = np.abs(rad)
        mx_x = np.maximum(np.abs(rho * np.cos(ang + a)), np.abs(rho * np.cos(ang - a)))
        mx_y = np.maximum(np.abs(rho * np.sin(ang + a)), np.abs(rho * np.sin(ang - a)))
        if zoom_out:
            g = np.maximum(mx_x / w, mx_y / h)
        else:
            g = np.minimum(w / mx_x, h / mx_y)
        scale = g.astype(np.float32).reshape(n, 1, 1, 1)
    grid = np.stack([wr, hr], axis=1).astype(np.float32) * scale
    out = nd.BilinearSampler(src, nd.array(grid, ctx=src.context))
    return out[0] if single else out


class Rotate(Block):
    """Rotate float32 CHW / NCHW images by `rotation_degrees`."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return _imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotate by an angle drawn uniformly from `angle_limits` (per image of a batch), with
    probability `rotate_with_proba`."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        limits, zoom_in, zoom_out = self._args
        if x.ndim == 3:
            degrees = np.random.uniform(*limits)
        else:
            degrees = np.random.uniform(*limits, size=x.shape[0])
        return _imrotate(x, degrees, zoom_in, zoom_out)


class RandomResizedCrop(Block):
    """Crop a random area fraction `scale` with aspect ratio in `ratio`, resize to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        if isinstance(size, Number):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(HybridBlock):
    """Crop the (x, y, width, height) region, then resize it to `size` when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._x, self._y = x, y
        self._width, self._height = width, height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(Block):
    """Crop the centre `size` (w, h) region, resizing when the image is smaller."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        if isinstance(size, Number):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(HybridBlock):
    """Resize to `size` ((w, h), or s for s x s; with keep_ratio the short side becomes s)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(HybridBlock):
    """Flip left-right with probability 0.5."""

    def __init__(self):
        super().__init__()

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flip top-bottom with probability 0.5."""

    def __init__(self):
        super().__init__()

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class _RandomEnhance(HybridBlock):
    _op = None

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomEnhance):
    """Scale by a factor from [max(0, 1 - brightness), 1 + brightness]."""
    _op = "random_brightness"

    def __init__(self, brightness):
        super().__init__(brightness)


class RandomContrast(_RandomEnhance):
    """Blend with the mean gray value by a factor from [max(0, 1 - contrast), 1 + contrast]."""
    _op = "random_contrast"

    def __init__(self, contrast):
        super().__init__(contrast)


class RandomSaturation(_RandomEnhance):
    """Blend with each pixel's gray value by a factor from [max(0, 1 - s), 1 + s]."""
    _op = "random_saturation"

    def __init__(self, saturation):
        super().__init__(saturation)


class RandomHue(_RandomEnhance):
    """Rotate the hue by a random fraction of a turn (as MXNet: drawn from [max(0, 1 - hue),
    1 + hue])."""
    _op = "random_hue"

    def __init__(self, hue):
        super().__init__(hue)


class RandomColorJitter(HybridBlock):
    """Brightness, contrast, saturation and hue jitter in random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise with standard deviation `alpha`."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class RandomApply(Sequential):
    """Apply `transforms` with probability `p` (Python's `random`, as MXNet)."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)

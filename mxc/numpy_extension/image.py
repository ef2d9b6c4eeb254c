"""``mx.npx.image``: the image operators of ``mx.nd.image`` (to_tensor, normalize, resize,
flips, crops ...) on mx.np arrays, returning mx.np arrays (same kernels, no copies); every other
name of ``mx.image`` (imread, augmenters, ImageIter ...) as MXNet 1.9.1's npx.image re-exports
them."""
from ._op import as_np
from .. import image as _image
from ..ndarray import image as _nd_image

__all__ = []


def _operator(name, f):
    def fn(*args, **kwargs):
        out = kwargs.get("out")
        res = f(*args, **kwargs)
        return out if out is not None else as_np(res)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f.__doc__
    return fn


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    f = getattr(_nd_image, name, None)
    if f is not None and callable(f):
        value = _operator(name, f)
    elif hasattr(_image, name):
        value = getattr(_image, name)
    else:
        raise AttributeError(f"module 'mxc.numpy_extension.image' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    names = {n for n in dir(_image) if not n.startswith("_")}
    names |= {n for n in dir(_nd_image) if not n.startswith("_") and callable(
        getattr(_nd_image, n))}
    return sorted(names | set(globals()))

"""``mx.npx.image``: the image operators of ``mx.nd.image`` (to_tensor, normalize, resize,
flips, crops ...) on mx.np arrays, returning mx.np arrays (same kernels, no copies)."""
from ._op import as_np
from ..ndarray import image as _nd_image

__all__ = []


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    f = getattr(_nd_image, name, None)
    if f is None or not callable(f):
        raise AttributeError(f"module 'mxc.numpy_extension.image' has no attribute {name!r}")

    def fn(*args, **kwargs):
        out = kwargs.get("out")
        res = f(*args, **kwargs)
        return out if out is not None else as_np(res)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f.__doc__
    globals()[name] = fn
    return fn

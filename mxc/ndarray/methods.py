"""NDArray methods that forward to ``mx.nd`` operators (``x.exp()``, ``x.sum(axis=1)``)."""

from .. import ndarray as nd

_METHODS = (
    "negative abs sign round rint ceil floor trunc fix square sqrt rsqrt cbrt exp expm1 log log10 "
    "log2 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees "
    "radians sigmoid relu softsign reciprocal sum mean prod max min nansum nanprod norm argmax "
    "argmin clip transpose swapaxes flatten expand_dims squeeze broadcast_to broadcast_like split "
    "slice slice_axis take one_hot tile repeat flip zeros_like ones_like broadcast_axes "
    "pad diag sort argsort topk pick argmax_channel shape_array size_array depth_to_space "
    "space_to_depth softmax log_softmax softmin reshape_like slice_like rcbrt"
).split()


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(nd, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as ``mx.nd.{name}(self, ...)``."
    return method


def attach(cls):
    for name in _METHODS:
        if name not in cls.__dict__:
            setattr(cls, name, _method(name))

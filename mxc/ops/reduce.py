"""Reductions with MXNet's axis / keepdims / exclude: sum, mean, prod, max, min, nansum, nanprod,
norm, argmax, argmin. Kernels: mxc/ops/cpu/reduce.pyx ("reduce:<name>"); the kernel always writes
the keepdims shape, which the front end views as the requested one (no copy)."""

from .._core.handle import make_array
from . import services
from .params import Param
from .registry import OpDef, register, kernel_forward, get


def reduce_axes(op, ndim, axis, exclude):
    """The set of reduced axes (normalised, sorted) from MXNet's axis/exclude parameters."""
    if not axis:
        # None or () reduces everything, whatever exclude says (MXNet's ReduceAxesShapeImpl)
        return tuple(range(ndim))
    else:
        axes = []
        for a in axis:
            if not -ndim <= a < max(ndim, 1):
                raise ValueError(f"{op}: axis {a} is out of range for an array of {ndim} dimensions")
            axes.append(a % ndim if ndim else 0)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{op}: axis {axis} repeats an axis")
        axes = tuple(sorted(axes))
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return out if out else (1,)     # MXNet 1.x has no 0-d results: a full reduction gives (1,)


_AXIS_PARAMS = (Param("axis", "shape", None, optional=True), Param("keepdims", bool, False),
                Param("exclude", bool, False))


def _infer(name):
    def infer(attrs, shapes, dtypes):
        axes = reduce_axes(name, len(shapes[0]), attrs["axis"], attrs.get("exclude", False))
        for a in axes:
            if shapes[0][a] == 0 and name in ("max", "min", "argmax", "argmin"):
                raise ValueError(f"{name}: cannot reduce an empty axis {a} of shape {shapes[0]}")
        return [reduced_shape(shapes[0], axes, attrs["keepdims"])], [dtypes[0]]   # MXNet 1.9.1: argmax too keeps the input dtype
    return infer


_PLANS = {}     # (op, axis, exclude, input shape) -> (kernel mask, keepdims shape)


def _mask(a, i, o):
    return a["_mask"]


def _forward(name, floats=(), fill=None):
    """The kernel's slots: mask (1 on each reduced axis of the input), then `floats`."""
    fwd = kernel_forward("reduce", "reduce:" + name, ints=("mask*",), floats=floats,
                         fill=dict(fill or {}, mask=_mask))

    def forward(attrs, inputs, outputs):
        # the mask and keepdims shape are looked up once per (axes, shape): a bias gradient's
        # sum runs every training step
        x = inputs[0]
        axis, exclude = attrs["axis"], attrs.get("exclude", False)
        key = (name, axis, exclude, x.shape)
        plan = _PLANS.get(key)
        if plan is None:
            axes = reduce_axes(name, x.ndim, axis, exclude)
            plan = (tuple(1 if i in axes else 0 for i in range(x.ndim)),
                    reduced_shape(x.shape, axes, True))
            if len(_PLANS) > 4096:
                _PLANS.clear()
            _PLANS[key] = plan
        mask, keep = plan
        out = outputs[0]
        view = out if out.shape == keep else make_array(type(out), out._chunk, out._offset, keep,
                                                        out._dtype, out._ctx)
        fwd(dict(attrs, _mask=mask), [x], [view])
    return forward


def _expand(F, g, x, attrs):
    """View `g` (the reduced gradient) with the keepdims shape of input `x`."""
    axes = reduce_axes("grad", x.ndim, attrs["axis"], attrs.get("exclude", False))
    return g.reshape(reduced_shape(x.shape, axes, True)), axes


def _count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _grad_sum(F, a, i, o, g):
    gk, _ = _expand(F, g[0], i[0], a)
    return [F.broadcast_to(gk, shape=i[0].shape)]


def _grad_mean(F, a, i, o, g):
    gk, axes = _expand(F, g[0], i[0], a)
    return [F.broadcast_to(gk / float(max(_count(i[0], axes), 1)), shape=i[0].shape)]


def _grad_prod(F, a, i, o, g):
    gk, _ = _expand(F, g[0], i[0], a)
    yk, _ = _expand(F, o[0], i[0], a)
    return [F.broadcast_to(gk * yk, shape=i[0].shape) / i[0]]


def _grad_extreme(F, a, i, o, g):
    gk, _ = _expand(F, g[0], i[0], a)
    yk, _ = _expand(F, o[0], i[0], a)
    return [F.broadcast_to(gk, shape=i[0].shape) * F.broadcast_equal(i[0], yk)]


def _grad_nansum(F, a, i, o, g):
    x = i[0]
    return [_grad_sum(F, a, i, o, g)[0] * (x == x)]


def _grad_nanprod(F, a, i, o, g):
    x = i[0]
    finite = x == x
    return [F.where(finite, _grad_prod(F, a, [F.where(finite, x, F.ones_like(x))], o, g)[0],
                    F.zeros_like(x))]


def _grad_norm(F, a, i, o, g):
    x = i[0]
    gk, _ = _expand(F, g[0], x, a)
    yk, _ = _expand(F, o[0], x, a)
    if a.get("out_dtype") is not None and gk.dtype != x.dtype:     # back to the data's dtype
        gk = F.cast(gk, dtype=x.dtype)
        yk = F.cast(yk, dtype=x.dtype)
    if a["ord"] == 1:
        return [F.broadcast_to(gk, shape=x.shape) * F.sign(x)]
    return [F.broadcast_mul(x, gk / yk)]


for _name, _grad, _aliases in [("sum", _grad_sum, ("sum_axis",)), ("mean", _grad_mean, ()),
                               ("prod", _grad_prod, ()), ("max", _grad_extreme, ("max_axis",)),
                               ("min", _grad_extreme, ("min_axis",)), ("nansum", _grad_nansum, ()),
                               ("nanprod", _grad_nanprod, ())]:
    register(OpDef(_name, aliases=_aliases, params=_AXIS_PARAMS, infer=_infer(_name),
                   forward=_forward(_name), grad=_grad,
                   doc=f"{_name} over `axis` (all axes by default); keepdims and exclude as MXNet."))


def _norm_infer(attrs, shapes, dtypes):
    if attrs["ord"] not in (1, 2):
        raise ValueError(f"norm: ord must be 1 or 2, got {attrs['ord']}")
    shapes_out, dtypes_out = _infer("norm")(attrs, shapes, dtypes)
    if attrs["out_dtype"] is not None:
        dtypes_out = [attrs["out_dtype"]]
    return shapes_out, dtypes_out


_norm_kernel = _forward("norm", ("ord",), {"ord": lambda a, i, o: float(a["ord"])})


def _norm_forward(attrs, inputs, outputs):
    """With out_dtype other than the data's, the data is cast first (accumulation in out_dtype,
    as MXNet's safe accumulation)."""
    import numpy as np
    x = inputs[0]
    od = attrs["out_dtype"]
    if od is not None and np.dtype(od) != np.dtype(x.dtype):
        xc = services.ndarray.empty(x.shape, ctx=x.context, dtype=od)
        get("Cast").forward({"dtype": od}, [x], [xc])
        x = xc
    _norm_kernel(attrs, [x], outputs)


register(OpDef("norm", params=(Param("ord", int, 2),) + _AXIS_PARAMS[:2] +
               (Param("out_dtype", "dtype", None, optional=True),),
               infer=_norm_infer, forward=_norm_forward,
               grad=_grad_norm, doc="The L1 or L2 norm over `axis` (all axes by default); "
                                    "out_dtype chooses the result's dtype."))


def _arg_infer(name):
    def infer(attrs, shapes, dtypes):
        a = attrs["axis"]
        return _infer(name)(dict(attrs, axis=None if a is None else (a,)), shapes, dtypes)
    return infer


def _arg_forward(name):
    fwd = _forward(name)

    def forward(attrs, inputs, outputs):
        a = attrs["axis"]
        fwd(dict(attrs, axis=None if a is None else (a,)), inputs, outputs)
    return forward


for _name in ("argmax", "argmin"):
    register(OpDef(_name, params=(Param("axis", int, None, optional=True),
                                  Param("keepdims", bool, False)),
                   infer=_arg_infer(_name), forward=_arg_forward(_name),
                   grad=lambda F, a, i, o, g: [F.zeros_like(i[0])],
                   doc=f"Index of the {_name[3:]} along `axis` (flattened when None), "
                       f"in the input's dtype as MXNet."))

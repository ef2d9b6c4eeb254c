"""Normalization operators: BatchNorm (and the legacy BatchNorm_v1), LayerNorm, InstanceNorm,
GroupNorm, with MXNet 1.9.1's parameters, outputs and type rules.

Kernels: mxc/ops/cpu/normalization.pyx ("bn_fwd", "bn_bwd", "row_fwd", "row_bwd"); each
operator's backward is an ordinary operator named ``_backward_<Name>`` (MXNet's convention) that
the gradient calls through F. The backward kernels recompute the statistics from the data, so
the saved mean/var outputs are not needed (they are outputs only with ``output_mean_var``).

BatchNorm follows MXNet 1.9.1's CPU implementation exactly where it matters to users:

- in training (autograd's training mode and not ``use_global_stats``) the batch statistics
  normalise the data; otherwise the moving statistics do;
- the moving statistics are updated by the *backward* in training, as MXNet's CPU (and MKLDNN)
  BatchNorm does: ``moving = moving * momentum + batch * (1 - momentum)`` with the biased batch
  variance; a training forward alone leaves them unchanged;
- ``output_mean_var=True`` returns (out, mean, inverse std) (MXNet's "var" output is
  1/sqrt(var + eps)); no gradient flows through the last two;
- ``fix_gamma=True`` uses gamma = 1 and gives gamma a zero gradient (MXNet also overwrites the
  gamma array with ones on some code paths; mxc leaves the input untouched);
- float16 data takes float32 gamma/beta/moving statistics and gives float32 mean/var;
- eps and momentum are float32 parameters in MXNet (momentum 0.9 is 0.899999976): the kernels
  get those values, so float64 results match MXNet's to rounding;
- the backward reads the training flag when it runs: autograd sets it to the forward's mode
  AND backward's train_mode (mxc/_core/tape.pyx), so a forward recorded with
  record(train_mode=False) differentiates the inference formula (moving statistics) and leaves
  the moving statistics alone (MXNet mixed the batch formula with the moving statistics there).
"""
import numpy as np

from .dot import FLOATS
from .params import Param
from .activation import folded_relu
from .registry import OpDef, register, kernel_forward, is_training

_F32 = np.dtype(np.float32)


def _f32(v):
    """eps and momentum are float32 parameters in MXNet (0.9 is 0.899999976): the kernels get
    the same value."""
    return float(np.float32(v))


def _check_float(op, dtype):
    dtype = np.dtype(dtype)
    if dtype not in FLOATS:
        raise ValueError(f"{op}: data must be float16, float32 or float64, got {dtype}")
    return dtype


def _real_axis(op, axis, ndim):
    a = axis + ndim if axis < 0 else axis
    if not 0 <= a < ndim:
        raise ValueError(f"{op}: axis {axis} is out of range for data of {ndim} dimensions")
    return a


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _check_params(op, names, shapes, dtypes, want_shape, want_dtype):
    for name, s, d in zip(names, shapes, dtypes):
        if s is not None and tuple(s) != tuple(want_shape):
            raise ValueError(f"{op}: {name} must have shape {tuple(want_shape)}, got {tuple(s)}")
        if d is not None and np.dtype(d) != want_dtype:
            raise ValueError(f"{op}: {name} must have dtype {want_dtype}, got {np.dtype(d)}")


# ---- BatchNorm ---------------------------------------------------------------------------------
_BN_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var")
_BN_PARAMS = (Param("eps", float, 1e-3), Param("momentum", float, 0.9),
              Param("fix_gamma", bool, True), Param("use_global_stats", bool, False),
              Param("output_mean_var", bool, False), Param("axis", int, 1),
              Param("cudnn_off", bool, False),
              Param("min_calib_range", float, None, optional=True),
              Param("max_calib_range", float, None, optional=True))
_BN1_PARAMS = _BN_PARAMS[:5]


def _bn_axis(op, attrs, ndim):
    if ndim < 1:
        raise ValueError(f"{op}: data must have at least one dimension")
    return _real_axis(op, attrs.get("axis", 1), ndim)


def _bn_layout(op, attrs, shape):
    """(A, C, B) of the data around the channel axis."""
    ax = _bn_axis(op, attrs, len(shape))
    return _prod(shape[:ax]), shape[ax], _prod(shape[ax + 1:])


def _param_dtype(dtype):
    return _F32 if dtype == np.dtype(np.float16) else dtype


def _bn_infer_inputs(op):
    def infer_inputs(attrs, shapes):
        shapes = list(shapes)
        if shapes[0] is not None:
            if op == "BatchNorm_v1":
                c = shapes[0][1] if len(shapes[0]) > 1 else None
            else:
                c = shapes[0][_bn_axis(op, attrs, len(shapes[0]))]
            if c is not None:
                for i in range(1, 5):
                    if shapes[i] is None:
                        shapes[i] = (c,)
        return shapes
    return infer_inputs


def _bn_infer(op):
    def infer(attrs, shapes, dtypes):
        dshape = tuple(shapes[0])
        dt = _check_float(op, dtypes[0])
        if op == "BatchNorm_v1":
            if len(dshape) not in (2, 4):
                raise ValueError(f"{op}: data must be 2-D or 4-D, got shape {dshape}")
            c = dshape[1]
        else:
            c = dshape[_bn_axis(op, attrs, len(dshape))]
        pdt = _param_dtype(dt)
        _check_params(op, _BN_INPUTS[1:], shapes[1:], dtypes[1:], (c,), pdt)
        if attrs["output_mean_var"]:
            return [dshape, (c,), (c,)], [dt, pdt, pdt]
        return [dshape], [dt]
    return infer


# the normalization kernels' slots (csrc/kernels/normalization.h): the data as (A, K, B) around
# the normalised axis, then the mode flags; eps (and the backward's momentum), float32 in MXNet
BN_INTS = ("A", "K", "B", "train", "fix_gamma", "var_is_variance", "relu")
BN_BWD_INTS = ("A", "K", "B", "train", "fix_gamma", "update_moving")
ROW_INTS = ("A", "K", "B", "mode", "P")


def _view(a, i, o):
    return a["_view"]


def _eps(a, i, o):
    return _f32(a["eps"])


def _bn_forward(op, var_is_variance):
    fwd = kernel_forward("normalization", "bn_fwd", name=op, ints=BN_INTS, floats=("eps",),
                         fill={BN_INTS: _view, "eps": _eps})

    def forward(attrs, inputs, outputs):
        A, C, B = _bn_layout(op, attrs, inputs[0].shape)
        train = is_training() and not attrs["use_global_stats"]
        ia = (A, C, B, int(train), int(attrs["fix_gamma"]), int(var_is_variance),
              int(bool(attrs.get("_relu"))))
        fwd(dict(attrs, _view=ia), list(inputs), list(outputs))
    return folded_relu(forward)


def _bn_grad(op):
    def grad(F, attrs, inputs, outputs, out_grads):
        x, gamma, beta, mm, mv = inputs
        kw = {k: attrs[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats")}
        if op == "BatchNorm":
            kw["axis"] = attrs["axis"]
        bwd = getattr(F, "_backward_" + op)
        dx, dg, db = bwd(out_grads[0], x, gamma, beta, mm, mv, **kw)
        return [dx, dg, db, None, None]
    return grad


def _bn_backward_infer(op):
    def infer(attrs, shapes, dtypes):
        dt = _check_float(op, dtypes[1])
        if tuple(shapes[0]) != tuple(shapes[1]) or np.dtype(dtypes[0]) != dt:
            raise ValueError(f"{op}: the output gradient {tuple(shapes[0])} {np.dtype(dtypes[0])} "
                             f"does not match the data {tuple(shapes[1])} {dt}")
        c = shapes[1][_bn_axis(op, attrs, len(shapes[1]))]
        pdt = _param_dtype(dt)
        _check_params(op, _BN_INPUTS[1:], shapes[2:], dtypes[2:], (c,), pdt)
        return [tuple(shapes[1]), (c,), (c,)], [dt, pdt, pdt]
    return infer


def _bn_backward_forward(op):
    bwd = kernel_forward("normalization", "bn_bwd", name=op,
                         key=lambda a, i, o: i[1]._dcode, ints=BN_BWD_INTS,
                         floats=("eps", "momentum"),
                         fill={BN_BWD_INTS: _view, "eps": _eps,
                               "momentum": lambda a, i, o: _f32(a["momentum"])})

    def forward(attrs, inputs, outputs):
        dy, x, gamma, beta, mm, mv = inputs
        A, C, B = _bn_layout(op, attrs, x.shape)
        train = is_training() and not attrs["use_global_stats"]
        ia = (A, C, B, int(train), int(attrs["fix_gamma"]), int(train))
        bwd(dict(attrs, _view=ia), [dy, x, gamma], list(outputs) + [mm, mv])
    return forward


_BN_DOC = ("Batch normalization (MXNet 1.9.1). Training mode (autograd.record / train_mode) and "
           "not use_global_stats: batch statistics, and the backward updates moving_mean and "
           "moving_var in place; otherwise the moving statistics. output_mean_var=True also "
           "returns the mean and the inverse standard deviation.")

def _bn_input_dtypes(attrs, in_dtypes):
    """gamma, beta and the moving statistics are float32 beside float16 or bfloat16 data, else
    the data's dtype (MXNet's BatchNormType; its oneDNN BatchNorm refuses bfloat16 ones)."""
    d = in_dtypes[0]
    if d is None:
        return None
    p = "float32" if d in ("float16", "bfloat16") else d
    return [d, p, p, p, p]


_BN_SYMBOL = dict(output_names=("output", "mean", "var"),
                  input_init={3: '["zero", {}]', 4: '["one", {}]'},
                  infer_input_dtypes=_bn_input_dtypes)


register(OpDef("BatchNorm", aliases=("_npx_batch_norm",), inputs=_BN_INPUTS, params=_BN_PARAMS,
               **_BN_SYMBOL,
               infer=_bn_infer("BatchNorm"), forward=_bn_forward("BatchNorm", False),
               grad=_bn_grad("BatchNorm"), aux=("moving_mean", "moving_var"), mutate=(3, 4),
               infer_inputs=_bn_infer_inputs("BatchNorm"),
               num_outputs=lambda a: 3 if a["output_mean_var"] else 1, doc=_BN_DOC))

register(OpDef("_backward_BatchNorm", inputs=("ograd",) + _BN_INPUTS,
               params=_BN_PARAMS, infer=_bn_backward_infer("_backward_BatchNorm"),
               forward=_bn_backward_forward("_backward_BatchNorm"), mutate=(4, 5), num_outputs=3,
               doc="BatchNorm's gradient (data, gamma, beta); in training it also updates the "
                   "moving statistics, as MXNet's CPU backward does."))


def _bn1_attrs(a):
    return dict(a, axis=1)


def _bn1_wrap(fn):
    return lambda attrs, *rest: fn(_bn1_attrs(attrs), *rest)


register(OpDef("BatchNorm_v1", inputs=_BN_INPUTS, params=_BN1_PARAMS, **_BN_SYMBOL,
               infer=_bn1_wrap(_bn_infer("BatchNorm_v1")),
               forward=_bn1_wrap(_bn_forward("BatchNorm_v1", True)),
               grad=lambda F, a, i, o, g: _bn_grad("BatchNorm_v1")(F, a, i, o, g),
               aux=("moving_mean", "moving_var"), mutate=(3, 4),
               infer_inputs=_bn1_wrap(_bn_infer_inputs("BatchNorm_v1")),
               num_outputs=lambda a: 3 if a["output_mean_var"] else 1,
               doc="Legacy batch normalization over axis 1 of 2-D or 4-D data (MXNet's "
                   "BatchNorm_v1): as BatchNorm, but output_mean_var returns the variance."))

register(OpDef("_backward_BatchNorm_v1", inputs=("ograd",) + _BN_INPUTS, params=_BN1_PARAMS,
               infer=_bn1_wrap(_bn_backward_infer("_backward_BatchNorm_v1")),
               forward=_bn1_wrap(_bn_backward_forward("_backward_BatchNorm_v1")),
               mutate=(4, 5), num_outputs=3, doc="BatchNorm_v1's gradient."))


# ---- SyncBatchNorm ------------------------------------------------------------------------------
# MXNet's _contrib_SyncBatchNorm normalizes over axis 1 with statistics shared by `ndev` devices
# meeting under `key`. mxc runs one CPU device per process, so the statistics are this batch's
# (what MXNet computes with ndev=1); output_mean_var returns the mean and the variance.
_SBN_PARAMS = _BN1_PARAMS + (Param("ndev", int, 1), Param("key", str, required=True))


def _sbn_grad(F, attrs, inputs, outputs, out_grads):
    x, gamma, beta, mm, mv = inputs
    kw = {k: attrs[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats")}
    dx, dg, db = F._backward_BatchNorm(out_grads[0], x, gamma, beta, mm, mv, axis=1, **kw)
    return [dx, dg, db, None, None]


def _sbn_infer(attrs, shapes, dtypes):
    if attrs["ndev"] < 1:
        raise ValueError(f"_contrib_SyncBatchNorm: ndev must be >= 1, got {attrs['ndev']}")
    if len(shapes[0]) < 2:
        raise ValueError(f"_contrib_SyncBatchNorm: data must have a channel axis 1, got shape "
                         f"{tuple(shapes[0])}")
    return _bn_infer("_contrib_SyncBatchNorm")(_bn1_attrs(attrs), shapes, dtypes)


register(OpDef("_contrib_SyncBatchNorm", inputs=_BN_INPUTS, params=_SBN_PARAMS, **_BN_SYMBOL,
               infer=_sbn_infer,
               forward=_bn1_wrap(_bn_forward("_contrib_SyncBatchNorm", True)),
               grad=_sbn_grad, aux=("moving_mean", "moving_var"), mutate=(3, 4),
               infer_inputs=_bn1_wrap(_bn_infer_inputs("_contrib_SyncBatchNorm")),
               num_outputs=lambda a: 3 if a["output_mean_var"] else 1,
               doc="Synchronized batch normalization over axis 1 (one device per process: the "
                   "batch's own statistics); output_mean_var returns mean and variance."))


# ---- LayerNorm, InstanceNorm, GroupNorm: the row kernel ---------------------------------------
def _row_layout(op, attrs, shape, name=None):
    """(A, K, B, mode, P, param shape, moments shape) of the row kernel for `op`; errors name
    `name` (default: op)."""
    nd = len(shape)
    name = name or op
    if op == "LayerNorm":
        ax = _real_axis(name, attrs["axis"], nd)
        c = shape[ax]
        return (_prod(shape[:ax]), c, _prod(shape[ax + 1:]), 0, 1, (c,),
                tuple(1 if i == ax else d for i, d in enumerate(shape)))
    if nd < 3:
        raise ValueError(f"{name}: data must have at least 3 dimensions (batch, channel, "
                         f"spatial...), got shape {tuple(shape)}")
    n, c = shape[0], shape[1]
    if op == "InstanceNorm":
        return n * c, _prod(shape[2:]), 1, 1, max(c, 1), (c,), (n, c)
    g = attrs["num_groups"]
    if g <= 0 or c % g != 0:
        raise ValueError(f"{name}: the {c} channels must divide into num_groups={g} groups")
    return n * g, (c // g) * _prod(shape[2:]), 1, 1, g, (g,), (n, g)


def _row_infer_inputs(op):
    def infer_inputs(attrs, shapes):
        shapes = list(shapes)
        if shapes[0] is not None:
            pshape = _row_layout(op, attrs, shapes[0])[5]
            for i in (1, 2):
                if shapes[i] is None:
                    shapes[i] = pshape
        return shapes
    return infer_inputs


def _row_infer(op):
    def infer(attrs, shapes, dtypes):
        dshape = tuple(shapes[0])
        dt = _check_float(op, dtypes[0])
        lay = _row_layout(op, attrs, dshape)
        _check_params(op, ("gamma", "beta"), shapes[1:3], dtypes[1:3], lay[5], dt)
        if attrs.get("output_mean_var"):
            return [dshape, lay[6], lay[6]], [dt, dt, dt]
        return [dshape], [dt]
    return infer


def _row_forward(op):
    fwd = kernel_forward("normalization", "row_fwd", name=op, ints=ROW_INTS, floats=("eps",),
                         fill={ROW_INTS: _view, "eps": _eps})

    def forward(attrs, inputs, outputs):
        A, K, B, mode, P = _row_layout(op, attrs, inputs[0].shape)[:5]
        fwd(dict(attrs, _view=(A, K, B, mode, P)), list(inputs), list(outputs))
    return forward


def _row_grad(op):
    names = [p.name for p in _ROW_PARAMS[op] if p.name != "output_mean_var"]

    def grad(F, attrs, inputs, outputs, out_grads):
        x, gamma, _ = inputs
        dx, dg, db = getattr(F, "_backward_" + op)(out_grads[0], x, gamma,
                                                   **{k: attrs[k] for k in names})
        return [dx, dg, db]
    return grad


def _row_backward_infer(op):
    name = "_backward_" + op

    def infer(attrs, shapes, dtypes):
        dt = _check_float(name, dtypes[1])
        if tuple(shapes[0]) != tuple(shapes[1]) or np.dtype(dtypes[0]) != dt:
            raise ValueError(f"{name}: the output gradient {tuple(shapes[0])} "
                             f"{np.dtype(dtypes[0])} does not match the data "
                             f"{tuple(shapes[1])} {dt}")
        lay = _row_layout(op, attrs, tuple(shapes[1]), name)
        _check_params(name, ("gamma",), shapes[2:3], dtypes[2:3], lay[5], dt)
        return [tuple(shapes[1]), lay[5], lay[5]], [dt, dt, dt]
    return infer


def _row_backward_forward(op):
    bwd = kernel_forward("normalization", "row_bwd", name="_backward_" + op,
                         key=lambda a, i, o: i[1]._dcode, ints=ROW_INTS, floats=("eps",),
                         fill={ROW_INTS: _view, "eps": _eps})

    def forward(attrs, inputs, outputs):
        A, K, B, mode, P = _row_layout(op, attrs, inputs[1].shape)[:5]
        bwd(dict(attrs, _view=(A, K, B, mode, P)), list(inputs), list(outputs))
    return forward


_ROW_PARAMS = {
    "LayerNorm": (Param("axis", int, -1), Param("eps", float, 1e-5),
                  Param("output_mean_var", bool, False)),
    "InstanceNorm": (Param("eps", float, 1e-3),),
    "GroupNorm": (Param("num_groups", int, 1), Param("eps", float, 1e-5),
                  Param("output_mean_var", bool, False)),
}
_ROW_DOC = {
    "LayerNorm": "Layer normalization over `axis`; output_mean_var=True also returns the mean "
                 "and the standard deviation sqrt(var + eps) (keepdims shape).",
    "InstanceNorm": "Instance normalization: each (sample, channel) over the spatial axes; "
                    "gamma and beta per channel.",
    "GroupNorm": "Group normalization (MXNet 1.9.1): channels split into num_groups groups; "
                 "gamma and beta have shape (num_groups,); output_mean_var=True also returns the "
                 "mean and standard deviation of shape (batch, num_groups).",
}
_ROW_ALIASES = {"LayerNorm": ("_npx_layer_norm",), "InstanceNorm": (), "GroupNorm": ()}

for _op in ("LayerNorm", "InstanceNorm", "GroupNorm"):
    _params = _ROW_PARAMS[_op]
    _has_mv = any(p.name == "output_mean_var" for p in _params)
    register(OpDef(_op, aliases=_ROW_ALIASES[_op], inputs=("data", "gamma", "beta"),
                   params=_params, infer=_row_infer(_op), forward=_row_forward(_op),
                   grad=_row_grad(_op), infer_inputs=_row_infer_inputs(_op),
                   num_outputs=(lambda a: 3 if a["output_mean_var"] else 1) if _has_mv else 1,
                   doc=_ROW_DOC[_op]))
    register(OpDef("_backward_" + _op, inputs=("ograd", "data", "gamma"),
                   params=tuple(p for p in _params if p.name != "output_mean_var"),
                   infer=_row_backward_infer(_op), forward=_row_backward_forward(_op),
                   num_outputs=3, doc=f"{_op}'s gradient (data, gamma, beta)."))

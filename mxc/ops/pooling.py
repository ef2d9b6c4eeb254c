"""Pooling (max, avg, sum, lp; 1-D/2-D/3-D; channels-first or channels-last layouts; global
pooling; valid/full/same conventions) with MXNet 1.9.1's parameters, shape rules and gradients.

Kernels: mxc/ops/cpu/pooling.pyx (csrc/kernels/pooling.h). The backward pass is the operator
``_backward_Pooling`` (inputs out_grad, data, output; output the data gradient), called from the
gradient through F.

Max pooling whose gradient may be asked for (autograd recording, a planned graph with a
backward: OpDef.train_attrs) runs with ``_keep_argmax``: it then has a hidden second output, the
int32 index of each output's first maximum within its (n, c) plane, and its gradient is
``_backward_Pooling_argmax`` (out_grad, argmax, data), a scatter from those indices with the
same result as ``_backward_Pooling``'s search of every window (MXNet's unpool_max) and without
its pass over data and output."""

import math

import numpy as _np

from .dot import FLOATS
from .params import Param
from .registry import OpDef, register, kernel_forward

_TYPES = {"max": 0, "avg": 1, "sum": 2, "lp": 3}
_FIRST = {3: "NCW", 4: "NCHW", 5: "NCDHW"}
_LAST = {3: "NWC", 4: "NHWC", 5: "NDHWC"}

_PARAMS = (Param("kernel", "shape", ()),
           Param("pool_type", str, "max", choices=tuple(_TYPES)),
           Param("global_pool", bool, False),
           Param("cudnn_off", bool, False),
           Param("pooling_convention", str, "valid", choices=("full", "valid", "same")),
           Param("stride", "shape", ()),
           Param("pad", "shape", ()),
           Param("p_value", int, None, optional=True),
           Param("count_include_pad", bool, None, optional=True),
           Param("layout", str, None, optional=True,
                 choices=("NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")))


def plan(op, a, dshape):
    """(output shape, kernel, stride, pad, channels_last) for data of shape `dshape`, with
    MXNet's defaults and checks."""
    nd = len(dshape)
    if not 3 <= nd <= 5:
        raise ValueError(f"{op}: data should be 3-D (batch, channel, x), "
                         f"4-D (batch, channel, y, x) "
                         f"or 5-D (batch, channel, d, y, x), got shape {tuple(dshape)}")
    nsp = nd - 2
    k = tuple(a["kernel"])
    if not a["global_pool"]:
        if not k:
            raise ValueError(f"{op}: set the kernel size when global_pool is not used")
        if len(k) != nsp:
            raise ValueError(f"{op}: a {len(k)}-D kernel needs {len(k) + 2}-D data, got shape "
                             f"{tuple(dshape)}")
    layout = a["layout"] or _FIRST[nd]
    if layout not in (_FIRST[nd], _LAST[nd]):
        raise ValueError(f"{op}: layout {layout} does not fit {nd}-D data")
    last = layout == _LAST[nd]
    sp = tuple(dshape[1:-1]) if last else tuple(dshape[2:])
    chan = dshape[-1] if last else dshape[1]
    if a["pool_type"] == "lp":
        if a["p_value"] is None:
            raise ValueError(f"{op}: lp pooling needs p_value")
        if a["p_value"] not in (1, 2, 3):
            raise ValueError(f"{op}: p value of {a['p_value']} is not supported (1, 2 or 3)")
    if a["global_pool"]:
        k, st, pd = sp, (1,) * nsp, (0,) * nsp
        osp = (1,) * nsp
    else:
        st = tuple(a["stride"]) or (1,) * nsp
        pd = tuple(a["pad"]) or (0,) * nsp
        # MXNet reads the first entries it needs and ignores extra ones (pad=(0, 0, 0) with a
        # 1-D kernel); fewer entries than the kernel are an error
        st, pd = st[:nsp] if len(st) > nsp else st, pd[:nsp] if len(pd) > nsp else pd
        if len(st) != nsp or len(pd) != nsp:
            raise ValueError(f"{op}: stride {st} and pad {pd} must have {nsp} entries like the "
                             f"kernel {k}")
        if any(x <= 0 for x in k) or any(x <= 0 for x in st) or any(x < 0 for x in pd):
            raise ValueError(f"{op}: kernel {k} and stride {st} must be positive, pad {pd} >= 0")
        conv = a["pooling_convention"]
        if conv == "same":
            if nsp != 1:
                raise ValueError(f"{op}: the 'same' pooling convention supports 1-D data only")
            if any(pd):
                raise ValueError(f"{op}: the 'same' pooling convention disables the pad parameter")
        osp = []
        for i in range(nsp):
            if k[i] > sp[i] + 2 * pd[i]:
                raise ValueError(f"{op}: kernel size ({k[i]}) exceeds input ({sp[i]} padded to "
                                 f"{sp[i] + 2 * pd[i]})")
            span = sp[i] + 2 * pd[i] - k[i]
            if conv == "valid":
                osp.append(1 + span // st[i])
            elif conv == "full":
                osp.append(1 + int(math.ceil(span / st[i])))
            else:
                osp.append(int(math.ceil((sp[i] + 2 * pd[i]) / st[i])))
        osp = tuple(osp)
    out = (dshape[0],) + osp + (chan,) if last else (dshape[0], chan) + osp
    return out, k, st, pd, last


# the argmax is an int32 index within one (n, c) plane
_MAX_PLANE = 2 ** 31 - 1


def _keeps_argmax(a):
    return a.get("_keep_argmax", False)


def _train_attrs(a):
    return dict(a, _keep_argmax=True) if a["pool_type"] == "max" else a


def _infer(a, shapes, dtypes):
    if len(shapes) != 1:
        raise ValueError(f"Pooling: expected 1 input, got {len(shapes)}")
    if _np.dtype(dtypes[0]) not in FLOATS:
        raise ValueError(f"Pooling: data type {dtypes[0]} is not supported (float16/32/64 only)")
    out, _, _, _, last = plan("Pooling", a, tuple(shapes[0]))
    if not _keeps_argmax(a):
        return [out], [dtypes[0]]
    plane = math.prod(shapes[0][1:-1] if last else shapes[0][2:])
    # a plane too large for int32 indices keeps an empty argmax: the gradient then searches
    return [out, out if plane <= _MAX_PLANE else (0,)], [dtypes[0], _np.int32]


# the pooling kernels' slots (csrc/kernels/pooling.h): kernel, stride and pad as 3-D (leading
# 1s / 0s), then the pooling type, p, count_include_pad and whether channels come last
POOL_INTS = tuple(f"{p}_{j}" for p in ("kernel", "stride", "pad") for j in range(3)) + \
    ("pool_type", "p_value", "count_include_pad", "channels_last")


def _pool_fill(op, data_index):
    def view(a, inputs, outputs):
        _, k, st, pd, last = plan(op, a, inputs[data_index].shape)
        lead = 3 - len(k)
        cip = a["count_include_pad"]
        return ((1,) * lead + tuple(k) + (1,) * lead + tuple(st) + (0,) * lead + tuple(pd) +
                (_TYPES[a["pool_type"]], a["p_value"] or 1, 1 if cip is None or cip else 0,
                 1 if last else 0))
    return {POOL_INTS: view}


def _argmax_used(outputs):
    """Whether the forward writes, and the gradient reads, the hidden argmax: not where it is
    empty (a plane beyond int32 indices) nor on a GPU (whose kernels search the windows)."""
    return len(outputs) > 1 and outputs[1].size > 0 and outputs[1].context.device_type == "cpu"


def _grad(F, a, inputs, outputs, out_grads):
    if _keeps_argmax(a):
        a = {k: v for k, v in a.items() if k != "_keep_argmax"}
        if _argmax_used(outputs):
            return [F._backward_Pooling_argmax(out_grads[0], outputs[1], inputs[0], **a)]
    return [F._backward_Pooling(out_grads[0], inputs[0], outputs[0], **a)]


_forward = kernel_forward("pooling", "pool:forward", ints=POOL_INTS, floats=(),
                          fill=_pool_fill("Pooling", 0), name="Pooling")


def _pool_forward(a, inputs, outputs):
    _forward(a, inputs, outputs if _argmax_used(outputs) else outputs[:1])


register(OpDef("Pooling", aliases=("_npx_pooling",), params=_PARAMS, infer=_infer,
               forward=_pool_forward, grad=_grad, train_attrs=_train_attrs,
               num_outputs=lambda a: 2 if _keeps_argmax(a) else 1, num_visible_outputs=1,
               doc="Max, average, sum or Lp pooling over 1-D, 2-D or 3-D windows (or the whole "
                   "feature map with global_pool), as MXNet's Pooling."))


def _binfer(a, shapes, dtypes):
    if len(shapes) != 3:
        raise ValueError(f"_backward_Pooling: expected 3 inputs (out_grad, data, output), "
                         f"got {len(shapes)}")
    out = plan("_backward_Pooling", a, tuple(shapes[1]))[0]
    for nm, s in (("out_grad", shapes[0]), ("output", shapes[2])):
        if tuple(s) != out:
            raise ValueError(f"_backward_Pooling: {nm} has shape {tuple(s)}, expected {out}")
    if any(_np.dtype(d) != _np.dtype(dtypes[1]) for d in dtypes):
        raise ValueError(f"_backward_Pooling: inputs must share one dtype, got {list(dtypes)}")
    return [tuple(shapes[1])], [dtypes[1]]


register(OpDef("_backward_Pooling", inputs=("out_grad", "data", "output"), params=_PARAMS,
               infer=_binfer,
               forward=kernel_forward("pooling", "pool:backward", ints=POOL_INTS, floats=(),
                                      fill=_pool_fill("_backward_Pooling", 1),
                                      name="_backward_Pooling"),
               doc="Gradient of Pooling's data: max routes to the first maximum of each window, "
                   "avg/sum/lp spread as MXNet."))


def _ainfer(a, shapes, dtypes):
    if len(shapes) != 3:
        raise ValueError(f"_backward_Pooling_argmax: expected 3 inputs (out_grad, argmax, data), "
                         f"got {len(shapes)}")
    if a["pool_type"] != "max":
        raise ValueError("_backward_Pooling_argmax: the argmax gradient is max pooling's")
    out = plan("_backward_Pooling_argmax", a, tuple(shapes[2]))[0]
    for nm, s in (("out_grad", shapes[0]), ("argmax", shapes[1])):
        if tuple(s) != out:
            raise ValueError(f"_backward_Pooling_argmax: {nm} has shape {tuple(s)}, "
                             f"expected {out}")
    if _np.dtype(dtypes[1]) != _np.int32 or _np.dtype(dtypes[0]) != _np.dtype(dtypes[2]):
        raise ValueError(f"_backward_Pooling_argmax: needs an int32 argmax and out_grad of the "
                         f"data's dtype, got {[_np.dtype(d).name for d in dtypes]}")
    return [tuple(shapes[2])], [dtypes[2]]


register(OpDef("_backward_Pooling_argmax", inputs=("out_grad", "argmax", "data"), params=_PARAMS,
               infer=_ainfer,
               forward=kernel_forward("pooling", "pool:backward_index", ints=POOL_INTS, floats=(),
                                      fill=_pool_fill("_backward_Pooling_argmax", 2),
                                      name="_backward_Pooling"),
               doc="Gradient of max Pooling's data from the argmax its forward kept: each "
                   "output gradient added at the index of its window's first maximum (data "
                   "gives the shape only)."))

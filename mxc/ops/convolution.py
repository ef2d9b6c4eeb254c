"""Convolution and Deconvolution (1-D/2-D/3-D, NCW/NCHW/NCDHW) with MXNet 1.9.1's parameters,
shape rules (including Deconvolution's adj and target_shape) and gradients.

Kernels: mxc/ops/cpu/convolution.pyx (im2col + BLAS GEMM, csrc/kernels/convolution.h). The
backward passes are the operators ``_backward_Convolution`` and ``_backward_Deconvolution``
(inputs out_grad, data, weight[, bias]; outputs the gradients of data, weight[, bias]), called
from the gradients through F as MXNet's graph does.

With ``no_bias`` the operators take two inputs (data, weight), as MXNet's ListArguments
(``input_names``); the backward operators then take (out_grad, data, weight)."""

import numpy as _np

from .dot import FLOATS
from .params import Param
from ._partial_shape import complete, probe_partial
from .activation import folded_relu
from .registry import OpDef, register, kernel_forward

_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NHWC", "NDHWC")
_DEFAULT_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _common_params():
    return (Param("kernel", "shape", required=True),
            Param("stride", "shape", ()), Param("dilate", "shape", ()), Param("pad", "shape", ()))


def _tail_params(workspace, no_bias):
    return (Param("num_filter", int, required=True), Param("num_group", int, 1),
            Param("workspace", int, workspace), Param("no_bias", bool, no_bias),
            Param("cudnn_tune", str, None, optional=True,
                  choices=("off", "limited_workspace", "fastest")),
            Param("cudnn_off", bool, False),
            Param("layout", str, None, optional=True, choices=_LAYOUTS))


_CONV_PARAMS = _common_params() + _tail_params(1024, False)
_DECONV_PARAMS = (_common_params() +
                  (Param("adj", "shape", ()), Param("target_shape", "shape", ())) +
                  _tail_params(512, True))


_GEOMETRY = {}


def geometry(op, a):
    """(nsp, kernel, stride, dilate, pad) with MXNet's defaults; raises on inconsistent params.
    Remembered per parameter values: inference and the kernel's attributes ask for it at
    every call."""
    key = (op, a["kernel"], a["stride"], a["dilate"], a["pad"], a["layout"], a["num_filter"],
           a["num_group"])          # parsed values: shapes are tuples, all hashable
    res = _GEOMETRY.get(key)
    if res is None:
        res = _geometry(op, a)
        if len(_GEOMETRY) >= 1024:
            _GEOMETRY.clear()
        _GEOMETRY[key] = res
    return res


def _geometry(op, a):
    k = tuple(a["kernel"])
    nsp = len(k)
    if not 1 <= nsp <= 3:
        raise ValueError(f"{op}: kernel must have 1, 2 or 3 dimensions, got {k}")
    st = tuple(a["stride"]) or (1,) * nsp
    dl = tuple(a["dilate"]) or (1,) * nsp
    pd = tuple(a["pad"]) or (0,) * nsp
    for what, v in (("Stride", st), ("Dilate", dl), ("Padding", pd)):
        if len(v) != nsp:
            raise ValueError(f"{op}: {what} must have the same number of dimensions as the kernel, "
                             f"but kernel is {k} while {what.lower()} is {v}")
    if any(x <= 0 for x in k):
        raise ValueError(f"{op}: incorrect kernel size: {k}")
    if any(x <= 0 for x in st):
        raise ValueError(f"{op}: incorrect stride size: {st}")
    if any(x <= 0 for x in dl):
        raise ValueError(f"{op}: incorrect dilate size: {dl}")
    if any(x < 0 for x in pd):
        raise ValueError(f"{op}: incorrect pad: {pd}")
    lay = a["layout"] or _DEFAULT_LAYOUT[nsp]
    if len(lay) != nsp + 2:
        raise ValueError(f"{op}: layout {lay} does not match a {nsp}-D kernel")
    if lay not in ("NCW", "NCHW", "NCDHW"):
        raise ValueError(f"{op}: only NCW, NCHW and NCDHW layouts are supported on CPU, got {lay} "
                         f"(MXNet supports NHWC and NDHWC only on GPU)")
    if a["num_filter"] < 1:
        raise ValueError(f"{op}: num_filter must be >= 1, got {a['num_filter']}")
    if a["num_group"] < 1:
        raise ValueError(f"{op}: num_group must be >= 1, got {a['num_group']}")
    return nsp, k, st, dl, pd


def _kernel_iattr(nsp, k, st, dl, pd, group):
    lead = 3 - nsp
    return ((1,) * lead + k + (1,) * lead + st + (1,) * lead + dl + (0,) * lead + pd + (group,))


def _check_inputs(op, a, shapes, dtypes):
    n = 2 if a["no_bias"] else 3
    if len(shapes) != n:
        names = "[data, weight]" if a["no_bias"] else "[data, weight, bias]"
        raise ValueError(f"{op}: expected {n} inputs {names} (no_bias={a['no_bias']}), "
                         f"got {len(shapes)}")
    if dtypes is not None:
        d0 = dtypes[0]
        if _np.dtype(d0) not in FLOATS:
            raise ValueError(f"{op}: data type {d0} is not supported (float16/32/64 only)")
        for nm, d in zip(("weight", "bias"), dtypes[1:]):
            if _np.dtype(d) != _np.dtype(d0):
                raise ValueError(f"{op}: {nm} has dtype {d}, expected {d0} as the data")


def _check_shape(op, name, got, want):
    if got is not None and tuple(got) != tuple(want):
        raise ValueError(f"{op}: {name} has shape {tuple(got)}, expected {tuple(want)}")


# ---- Convolution -------------------------------------------------------------------------------
def _conv_weight_shape(a, dshape):
    nsp = len(a["kernel"])
    return (a["num_filter"], dshape[1] // a["num_group"]) + tuple(a["kernel"][:nsp])


def conv_out_shape(op, a, dshape):
    nsp, k, st, dl, pd = geometry(op, a)
    if len(dshape) != nsp + 2:
        raise ValueError(f"{op}: data should be {nsp + 2}-D (batch, channel, spatial...) for a "
                         f"{nsp}-D kernel, got shape {tuple(dshape)}")
    if dshape[1] % a["num_group"]:
        raise ValueError(f"{op}: input channels {dshape[1]} must divide into num_group "
                         f"{a['num_group']}")
    if a["num_filter"] % a["num_group"]:
        raise ValueError(f"{op}: num_filter {a['num_filter']} must divide into num_group "
                         f"{a['num_group']}")
    out = [dshape[0], a["num_filter"]]
    for i in range(nsp):
        dk = 1 + (k[i] - 1) * dl[i]
        if dk > dshape[2 + i] + 2 * pd[i]:
            raise ValueError(f"{op}: kernel size {dk} (dilated) exceeds input {dshape[2 + i]} "
                             f"padded to {dshape[2 + i] + 2 * pd[i]}")
        out.append((dshape[2 + i] + 2 * pd[i] - dk) // st[i] + 1)
    return tuple(out)


def _conv_infer(a, shapes, dtypes):
    _check_inputs("Convolution", a, shapes, dtypes)
    ds = tuple(shapes[0])
    out = conv_out_shape("Convolution", a, ds)
    _check_shape("Convolution", "weight", shapes[1], _conv_weight_shape(a, ds))
    if not a["no_bias"]:
        _check_shape("Convolution", "bias", shapes[2], (a["num_filter"],))
    return [out], [dtypes[0]]


def _conv_infer_back(a, in_s, outs):
    """data's unknown dimensions from the output, as MXNet's ConvolutionShape fills them: the
    batch always, a spatial size where its stride is 1 (out + dilated kernel - 1 - 2 pad)."""
    d, o = in_s[0], outs[0]
    nsp, k, st, dl, pd = geometry("Convolution", a)
    if d is None or complete(d) or o is None or len(d) != nsp + 2 or len(o) != nsp + 2:
        return None
    d = list(d)
    if d[0] == 0:
        d[0] = o[0]
    for i in range(nsp):
        if d[2 + i] == 0 and o[2 + i] > 0 and st[i] == 1:
            d[2 + i] = o[2 + i] + (k[i] - 1) * dl[i] - 2 * pd[i]
    return [tuple(d)] + [None] * (len(in_s) - 1)


def _conv_infer_inputs(a, shapes):
    shapes = list(shapes)
    if shapes and shapes[0] is not None and len(shapes[0]) >= 2:
        if len(shapes) > 1 and shapes[1] is None:
            shapes[1] = _conv_weight_shape(a, tuple(shapes[0]))
    if not a["no_bias"] and len(shapes) > 2 and shapes[2] is None:
        shapes[2] = (a["num_filter"],)
    return shapes


# the convolution kernels' slots (csrc/kernels/convolution.h): kernel, stride, dilate and pad as
# 3-D (leading 1s / 0s for 1-D and 2-D), num_group; the backward kernels then skip_data_grad
CONV_INTS = tuple(f"{p}_{j}" for p in ("kernel", "stride", "dilate", "pad") for j in range(3)) + \
    ("num_group",)
CONV_BWD_INTS = CONV_INTS + ("skip_data_grad",)
# Convolution's forward kernel then relu: a ReLU folded into an inference Convolution
# (attrs["_relu"], set by mxc/executor/fold.py)
CONV_FWD_INTS = CONV_INTS + ("relu",)


def _skip_flag(a, i, o):
    """1 = leave the data gradient unwritten (no one reads it)."""
    return 1 if 0 in a.get("_skip_outputs", ()) else 0


def _relu_flag(a, i, o):
    return 1 if a.get("_relu") else 0


def _conv_view(op):
    def view(a, inputs, outputs):
        nsp, k, st, dl, pd = geometry(op, a)
        return _kernel_iattr(nsp, k, st, dl, pd, a["num_group"])
    return view


def _conv_forward_of(kname, op, view):
    if kname == "conv:forward":
        return folded_relu(kernel_forward("convolution", kname, ints=CONV_FWD_INTS, floats=(),
                                          fill={CONV_INTS: view, "relu": _relu_flag}, name=op))
    if kname.endswith(":forward"):
        return kernel_forward("convolution", kname, ints=CONV_INTS, floats=(),
                              fill={CONV_INTS: view}, name=op)
    return kernel_forward("convolution", kname, ints=CONV_BWD_INTS, floats=(),
                          fill={CONV_INTS: view, "skip_data_grad": _skip_flag}, name=op)


def _bias_inputs(a):
    return ("data", "weight") if a["no_bias"] else ("data", "weight", "bias")


def _backward_inputs(a):
    return ("out_grad",) + _bias_inputs(a)


def _conv_grad(F, a, inputs, outputs, out_grads):
    return list(F._backward_Convolution(out_grads[0], *inputs, **a))


register(OpDef("Convolution", aliases=("_npx_convolution",),
               inputs=("data", "weight", "bias"), input_names=_bias_inputs,
               params=_CONV_PARAMS, infer=_conv_infer, infer_inputs=_conv_infer_inputs,
               infer_back=_conv_infer_back, infer_partial=probe_partial(_conv_infer),
               forward=_conv_forward_of("conv:forward", "Convolution", _conv_view("Convolution")),
               grad=_conv_grad, resources=("temp_space",),
               doc="N-D convolution (cross-correlation) of (N, C, *spatial) data with weight "
                   "(num_filter, C/num_group, *kernel) plus bias, as MXNet's Convolution."))


def _bconv_infer(a, shapes, dtypes):
    # inputs: out_grad, data, weight[, bias]
    _check_inputs("_backward_Convolution", a, shapes[1:], dtypes[1:])
    out = conv_out_shape("_backward_Convolution", a, tuple(shapes[1]))
    _check_shape("_backward_Convolution", "out_grad", shapes[0], out)
    return [tuple(s) for s in shapes[1:]], [dtypes[1]] * (len(shapes) - 1)


def _bconv_forward(kname, op):
    fwd = _conv_forward_of(kname, op, _conv_view(op))

    def forward(a, inputs, outputs):
        fwd(a, list(inputs[:3]), outputs)       # the bias value is not needed for its gradient
    return forward


register(OpDef("_backward_Convolution", inputs=("out_grad", "data", "weight", "bias"),
               input_names=_backward_inputs,
               params=_CONV_PARAMS, infer=_bconv_infer,
               num_outputs=lambda a: 2 if a["no_bias"] else 3,
               forward=_bconv_forward("conv:backward", "_backward_Convolution"),
               resources=("temp_space",), skippable=(0,),
               doc="Gradients of Convolution's data, weight (and bias) from out_grad."))


# ---- Deconvolution -----------------------------------------------------------------------------
def deconv_pad_adj(op, a, dshape):
    """Deconvolution's effective (pad, adj): from target_shape when any entry is set (MXNet's
    InferPad), else the parameters."""
    nsp, k, st, dl, pd = geometry(op, a)
    adj = tuple(a["adj"]) or (0,) * nsp
    if len(adj) != nsp:
        raise ValueError(f"{op}: Adjustment must have the same number of dimensions as the kernel, "
                         f"but kernel is {k} while adjustment is {adj}")
    ts = tuple(a["target_shape"])
    if any(t != 0 for t in ts):
        if len(ts) != nsp:
            raise ValueError(f"{op}: target_shape {ts} must have {nsp} entries")
        pads, adjs = [], []
        for i in range(nsp):
            full = st[i] * (dshape[2 + i] - 1) + 1 + (k[i] - 1) * dl[i]
            if full < ts[i]:
                raise ValueError(f"{op}: too big target shape {ts}")
            tot = full - ts[i]
            adjs.append(tot % 2)
            pads.append((tot + 1) // 2)
        return tuple(pads), tuple(adjs)
    return pd, adj


def deconv_out_shape(op, a, dshape):
    nsp, k, st, dl, pd = geometry(op, a)
    if len(dshape) != nsp + 2:
        raise ValueError(f"{op}: data should be {nsp + 2}-D (batch, channel, spatial...) for a "
                         f"{nsp}-D kernel, got shape {tuple(dshape)}")
    if nsp == 3 and any(d != 1 for d in dl):
        raise ValueError(f"{op}: dilate is not supported in 3-D deconvolution")
    if dshape[1] % a["num_group"]:
        raise ValueError(f"{op}: input channels {dshape[1]} must divide into num_group "
                         f"{a['num_group']}")
    if a["num_filter"] % a["num_group"]:
        raise ValueError(f"{op}: num_filter {a['num_filter']} must divide into num_group "
                         f"{a['num_group']}")
    pads, adjs = deconv_pad_adj(op, a, dshape)
    out = [dshape[0], a["num_filter"]]
    for i in range(nsp):
        if adjs[i] > st[i] - 1:
            raise ValueError(f"{op}: adj {adjs[i]} must be smaller than stride {st[i]}")
        o = st[i] * (dshape[2 + i] - 1) + 1 + (k[i] - 1) * dl[i] - 2 * pads[i] + adjs[i]
        if o <= 0:
            raise ValueError(f"{op}: output size {o} along spatial axis {i} is not positive")
        out.append(o)
    ts = tuple(a["target_shape"])
    if len(ts) == nsp:
        for i in range(nsp):
            if ts[i] > 0 and ts[i] != out[2 + i]:
                raise ValueError(f"{op}: target_shape {ts} cannot be reached (output {tuple(out)})")
    return tuple(out), pads


def _deconv_weight_shape(a, dshape):
    return (dshape[1], a["num_filter"] // a["num_group"]) + tuple(a["kernel"])


def _deconv_infer(a, shapes, dtypes):
    _check_inputs("Deconvolution", a, shapes, dtypes)
    ds = tuple(shapes[0])
    out, _ = deconv_out_shape("Deconvolution", a, ds)
    _check_shape("Deconvolution", "weight", shapes[1], _deconv_weight_shape(a, ds))
    if not a["no_bias"]:
        _check_shape("Deconvolution", "bias", shapes[2], (a["num_filter"],))
    return [out], [dtypes[0]]


def _deconv_infer_inputs(a, shapes):
    shapes = list(shapes)
    if shapes and shapes[0] is not None and len(shapes[0]) >= 2:
        if len(shapes) > 1 and shapes[1] is None:
            shapes[1] = _deconv_weight_shape(a, tuple(shapes[0]))
    if not a["no_bias"] and len(shapes) > 2 and shapes[2] is None:
        shapes[2] = (a["num_filter"],)
    return shapes


def _dgeometry(op, data_index):
    def view(a, inputs, outputs):
        nsp, k, st, dl, pd = geometry(op, a)
        _, pads = deconv_out_shape(op, a, inputs[data_index].shape)
        return _kernel_iattr(nsp, k, st, dl, tuple(pads), a["num_group"])
    return view


def _deconv_grad(F, a, inputs, outputs, out_grads):
    return list(F._backward_Deconvolution(out_grads[0], *inputs, **a))


register(OpDef("Deconvolution", aliases=("_npx_deconvolution",),
               inputs=("data", "weight", "bias"), input_names=_bias_inputs,
               params=_DECONV_PARAMS, infer=_deconv_infer, infer_inputs=_deconv_infer_inputs,
               forward=_conv_forward_of("deconv:forward", "Deconvolution",
                                        _dgeometry("Deconvolution", 0)),
               grad=_deconv_grad, resources=("temp_space",),
               doc="N-D transposed convolution: data (N, C, *spatial), weight "
                   "(C, num_filter/num_group, *kernel); output size "
                   "stride*(in-1) + dilated kernel - 2*pad + adj, or target_shape."))


def _bdeconv_infer(a, shapes, dtypes):
    _check_inputs("_backward_Deconvolution", a, shapes[1:], dtypes[1:])
    out, _ = deconv_out_shape("_backward_Deconvolution", a, tuple(shapes[1]))
    _check_shape("_backward_Deconvolution", "out_grad", shapes[0], out)
    return [tuple(s) for s in shapes[1:]], [dtypes[1]] * (len(shapes) - 1)


def _bdeconv_forward():
    fwd = _conv_forward_of("deconv:backward", "_backward_Deconvolution",
                           _dgeometry("_backward_Deconvolution", 1))

    def forward(a, inputs, outputs):
        fwd(a, list(inputs[:3]), outputs)
    return forward


register(OpDef("_backward_Deconvolution", inputs=("out_grad", "data", "weight", "bias"),
               input_names=_backward_inputs,
               params=_DECONV_PARAMS, infer=_bdeconv_infer,
               num_outputs=lambda a: 2 if a["no_bias"] else 3,
               forward=_bdeconv_forward(), resources=("temp_space",), skippable=(0,),
               doc="Gradients of Deconvolution's data, weight (and bias) from out_grad."))

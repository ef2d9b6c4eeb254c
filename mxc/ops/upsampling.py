"""UpSampling with MXNet 1.9.1's parameters: nearest neighbour (any number of NCHW inputs,
each scaled to the first one's size times `scale`, concatenated along channels or summed) and
bilinear (a depthwise Deconvolution with the given weight: kernel 2*scale - scale%2, stride
scale, pad ceil((scale-1)/2), num_group = num_filter = channels), as MXNet computes it.

Kernels: nearest in mxc/ops/cpu/pooling.pyx, bilinear in mxc/ops/cpu/convolution.pyx. The
backward pass is ``_backward_UpSampling`` (inputs: out_grad then the forward's inputs; outputs:
their gradients). MXNet's own nearest backward takes out_grad alone and reads the input shapes
from its graph; here the inputs are passed so that the operator can infer its output shapes."""

import numpy as _np

from .convolution import CONV_INTS, _kernel_iattr
from .params import Param
from .registry import OpDef, register, kernel_forward

_REAL = ("float16", "float32", "float64")

_PARAMS = (Param("scale", int, required=True),
           Param("num_filter", int, 0),
           Param("sample_type", str, required=True, choices=("nearest", "bilinear")),
           Param("multi_input_mode", str, "concat", choices=("concat", "sum")),
           Param("num_args", int, required=True),
           Param("workspace", int, 512))


def bilinear_geometry(scale):
    """(kernel, stride, pad) of the Deconvolution behind bilinear upsampling."""
    return 2 * scale - scale % 2, scale, (scale - 1 + 1) // 2


def _check_dtypes(op, dtypes):
    if _np.dtype(dtypes[0]).name not in _REAL:
        raise ValueError(f"{op}: data type {dtypes[0]} is not supported (float16/32/64 only)")
    for i, d in enumerate(dtypes):
        if _np.dtype(d) != _np.dtype(dtypes[0]):
            raise ValueError(f"{op}: input {i} has dtype {d}, expected {dtypes[0]}")


def _forward_shape(op, a, shapes):
    s = a["scale"]
    if s < 1:
        raise ValueError(f"{op}: scale must be >= 1, got {s}")
    if not shapes:
        raise ValueError(f"{op}: needs at least one input")
    d0 = tuple(shapes[0])
    if a["sample_type"] == "nearest":
        if len(shapes) != a["num_args"]:
            raise ValueError(f"{op}: num_args is {a['num_args']} but {len(shapes)} inputs "
                             f"were given")
        oh, ow = None, None
        ch = 0
        for i, shp in enumerate(shapes):
            if len(shp) != 4:
                raise ValueError(f"{op}: nearest upsampling needs 4-D (batch, channel, y, x) "
                                 f"inputs, input {i} has shape {tuple(shp)}")
            if oh is None:
                oh, ow = shp[2] * s, shp[3] * s
            if shp[0] != d0[0]:
                raise ValueError(f"{op}: input {i} has batch {shp[0]}, expected {d0[0]}")
            if shp[2] == 0 or shp[3] == 0 or oh % shp[2] or ow % shp[3] or \
                    oh // shp[2] != ow // shp[3]:
                raise ValueError(f"{op}: input {i} of shape {tuple(shp)} does not scale evenly to "
                                 f"the output size ({oh}, {ow})")
            if a["multi_input_mode"] == "sum":
                if i and shp[1] != ch:
                    raise ValueError(f"{op}: with multi_input_mode='sum' every input needs "
                                     f"{ch} channels, input {i} has {shp[1]}")
                ch = shp[1]
            else:
                ch += shp[1]
        return (d0[0], ch, oh, ow)
    if len(shapes) != 2:
        raise ValueError(f"{op}: bilinear upsampling takes 2 inputs [data, weight], "
                         f"got {len(shapes)}")
    if len(d0) != 4:
        raise ValueError(f"{op}: bilinear upsampling needs 4-D (batch, channel, y, x) data, "
                         f"got shape {d0}")
    if a["num_filter"] != d0[1]:
        raise ValueError(f"{op}: bilinear upsampling needs num_filter equal to the number of "
                         f"channels ({d0[1]}), got {a['num_filter']}")
    k = bilinear_geometry(s)[0]
    want = (d0[1], 1, k, k)
    if tuple(shapes[1]) != want:
        raise ValueError(f"{op}: weight has shape {tuple(shapes[1])}, expected {want}")
    return (d0[0], d0[1], d0[2] * s, d0[3] * s)


def _infer(a, shapes, dtypes):
    out = _forward_shape("UpSampling", a, shapes)
    _check_dtypes("UpSampling", dtypes)
    return [out], [dtypes[0]]


def _infer_inputs(a, shapes):
    shapes = list(shapes)
    if a["sample_type"] == "bilinear" and len(shapes) == 2 and shapes[0] is not None \
            and shapes[1] is None and len(shapes[0]) == 4:
        k = bilinear_geometry(a["scale"])[0]
        shapes[1] = (shapes[0][1], 1, k, k)
    return shapes


def _bilinear_iattr(a, channels):
    k, s, p = bilinear_geometry(a["scale"])
    return _kernel_iattr(2, (k, k), (s, s), (1, 1), (p, p), channels)


def _sum(a, i, o):
    """the nearest kernels' slot: 1 sums the inputs, 0 concatenates them"""
    return 1 if a["multi_input_mode"] == "sum" else 0


def _bilinear(data_at):
    return lambda a, i, o: _bilinear_iattr(a, i[data_at].shape[1])


_near = kernel_forward("pooling", "upsampling:nearest", ints=("sum",), floats=(),
                       fill={"sum": _sum}, name="UpSampling")
_bil = kernel_forward("convolution", "deconv:forward", fill={CONV_INTS: _bilinear(0)},
                      name="UpSampling")


def _forward(a, inputs, outputs):
    (_near if a["sample_type"] == "nearest" else _bil)(a, inputs, outputs)


def _grad(F, a, inputs, outputs, out_grads):
    g = F._backward_UpSampling(out_grads[0], *inputs, **a)
    return [g] if not isinstance(g, (list, tuple)) else list(g)


register(OpDef("UpSampling", inputs=(), variadic="num_args", params=_PARAMS, infer=_infer,
               infer_inputs=_infer_inputs, forward=_forward, grad=_grad,
               doc="Nearest-neighbour (several inputs, concat or sum) or bilinear "
                   "(Deconvolution with the given weight) upsampling of NCHW data by `scale`."))


def _binfer(a, shapes, dtypes):
    if len(shapes) < 2:
        raise ValueError("_backward_UpSampling: expected out_grad and the forward's inputs")
    out = _forward_shape("_backward_UpSampling", a, shapes[1:])
    if tuple(shapes[0]) != out:
        raise ValueError(f"_backward_UpSampling: out_grad has shape {tuple(shapes[0])}, "
                         f"expected {out}")
    _check_dtypes("_backward_UpSampling", dtypes)
    return [tuple(s) for s in shapes[1:]], [dtypes[0]] * (len(shapes) - 1)


_bnear = kernel_forward("pooling", "upsampling:nearest_backward", ints=("sum",), floats=(),
                        fill={"sum": _sum}, name="_backward_UpSampling")
_bbil = kernel_forward("convolution", "deconv:backward",
                       fill={CONV_INTS: _bilinear(1), "skip_data_grad": lambda a, i, o: 0},
                       name="_backward_UpSampling")


def _bforward(a, inputs, outputs):
    if a["sample_type"] == "nearest":
        _bnear(a, inputs[:1], outputs)
    else:
        _bbil(a, inputs, outputs)


register(OpDef("_backward_UpSampling", inputs=(), variadic="num_args", params=_PARAMS,
               infer=_binfer, forward=_bforward,
               num_outputs=lambda a: a["num_args"] if a["sample_type"] == "nearest" else 2,
               doc="Gradients of UpSampling's inputs (inputs: out_grad, then the forward's "
                   "inputs)."))

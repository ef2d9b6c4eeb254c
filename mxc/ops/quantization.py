"""MXNet 1.9.1's INT8 quantization operators, as its oneDNN CPU build computes them
(``mx.nd.contrib.<name>`` / ``mx.sym.contrib.<name>``; kernels in csrc/kernels/quantization.h):

- ``_contrib_quantize`` (the first API: explicit range inputs), ``_contrib_quantize_v2`` (range
  from ``min_calib_range``/``max_calib_range``, or the data's own), ``_contrib_dequantize`` and
  ``_contrib_requantize`` (int32 to int8/uint8);
- ``_contrib_quantized_conv`` and ``_contrib_quantized_fully_connected``: u8/s8 data times s8
  weights accumulated in int32, with the product's range as outputs 1 and 2;
- ``_contrib_quantized_pooling``, ``_contrib_quantized_act`` (relu) and
  ``_contrib_quantized_flatten``, which pass the range through;
- ``_contrib_calibrate_entropy``: the KL-divergence threshold of a histogram
  (``mx.contrib.quantization``'s entropy calibration).

Every quantized operator takes its data first, then the min and max of each quantized input
(MXNet's input order), and returns (output, min_output, max_output). They are inference
operators: their gradient is zero, as MXNet's FGradient (MakeZeroGradNodes).
"""
import numpy as np

from ..base import OperatorInputError
from ._partial_shape import _PROBE_SIZES, complete
from .convolution import _CONV_PARAMS, conv_out_shape, geometry
from .fully_connected import _fc_infer_back
from .params import Param
from .pooling import _PARAMS as _POOL_PARAMS
from .pooling import plan as _pool_plan
from .registry import OpDef, get, kernel_forward, register

_RANGE_OUTPUTS = ("output", "min_output", "max_output")
_OUT_TYPES = ("auto", "int8", "uint8")


def _nd(shape):
    return tuple(int(d) for d in shape)


def _name(d):
    return np.dtype(d).name if d is not None else None


def _zero_grad(F, a, inputs, outputs, out_grads):
    return [F.zeros_like(x) for x in inputs]


def _check_ranges(op, shapes, dtypes, first):
    """Inputs first.. are (min, max) scalars: one float32 value each."""
    for i in range(first, len(shapes)):
        if int(np.prod(_nd(shapes[i]), dtype=np.int64)) != 1:
            raise OperatorInputError(f"{op}: input {i} (a min/max range) must hold one value, "
                                     f"got shape {_nd(shapes[i])}")
        if dtypes is not None and _name(dtypes[i]) != "float32":
            raise OperatorInputError(f"{op}: input {i} (a min/max range) must be float32, got "
                                     f"{_name(dtypes[i])}")


def _check_dtype(op, what, d, allowed):
    if _name(d) not in allowed:
        raise OperatorInputError(f"{op}: {what} must be {' or '.join(allowed)}, got {_name(d)}")


def _calibrated(a):
    return a["min_calib_range"] is not None and a["max_calib_range"] is not None


def out_type(a):
    """MXNet's GetQuantizeOutputType: 'auto' is uint8 when calibrated with min >= 0, else int8."""
    t = a["out_type"]
    if t == "auto":
        return "uint8" if _calibrated(a) and a["min_calib_range"] >= 0.0 else "int8"
    return t


def _same_shape_back(a, in_s, outs):
    """infer_back: data's unknown dimensions from output 0, which has its shape (a zero-size
    begin state of an unrolled RNN quantized with its cell)."""
    d, o = in_s[0], outs[0]
    if d is None or complete(d) or o is None or not complete(o) or len(d) != len(o):
        return None
    return [tuple(x or y for x, y in zip(d, o))] + [None] * (len(in_s) - 1)


def _rules(infer, data, first=1, infer_inputs=None, infer_back=_same_shape_back):
    """An operator's inference hooks. Its inputs are data, further int8 arrays up to `first`
    (an int or attrs -> int: weights, bias, the other addend), then float32 (min, max) ranges.
    The symbol front gives unknown inputs these dtypes (`data` for the data: MXNet's types for
    a quantized operator's input), the ranges shape (1,), and partial shapes go forward as
    _partial_shape.probe_partial sends them (here with these dtypes) and back by
    `infer_back`."""
    count = first if callable(first) else (lambda a: first)

    def dtypes(a, n):
        k = count(a)
        return [data] + ["int8"] * (k - 1) + ["float32"] * (n - k)

    def ranges(a, shapes):
        k = count(a)
        return [s if s is not None or i < k else (1,) for i, s in enumerate(shapes)]

    def partial(a, in_shapes):
        runs = []
        for size in _PROBE_SIZES:
            filled = [tuple(size if x == 0 else x for x in s) for s in in_shapes]
            runs.append([tuple(x) for x in infer(a, filled, dtypes(a, len(filled)))[0]])
        return [tuple(x if x == y else 0 for x, y in zip(p, q)) if len(p) == len(q) else None
                for p, q in zip(*runs)]

    return dict(infer=infer, infer_input_dtypes=lambda a, d: dtypes(a, len(d)),
                infer_inputs=infer_inputs or ranges, infer_partial=partial,
                infer_back=infer_back)


_CALIB_PARAMS = (Param("out_type", str, "int8", choices=_OUT_TYPES),
                 Param("min_calib_range", float, None, optional=True),
                 Param("max_calib_range", float, None, optional=True))
_CALIB_INTS = ("calibrated",)
_CALIB_FLOATS = ("min_calib_range", "max_calib_range")
_CALIB_FILL = {"calibrated": lambda a, i, o: int(_calibrated(a)),
               ("min_calib_range", "max_calib_range"):
                   lambda a, i, o: ((a["min_calib_range"] or 0.0), (a["max_calib_range"] or 0.0))}


def _qforward(kname, ints=(), floats=(), fill=None, name=None):
    return kernel_forward("quantization", kname, name=name, ints=ints, floats=floats, fill=fill)


# ---- quantize / quantize_v2 / dequantize / requantize --------------------------------------------
def _quantize_infer(a, shapes, dtypes):
    op = "_contrib_quantize"
    _check_dtype(op, "data", dtypes[0], ("float32",))
    _check_ranges(op, shapes, dtypes, 1)
    return [_nd(shapes[0]), (1,), (1,)], [a["out_type"], np.float32, np.float32]


register(OpDef("_contrib_quantize", inputs=("data", "min_range", "max_range"),
               params=(Param("out_type", str, "uint8", choices=("int8", "uint8")),),
               **_rules(_quantize_infer, "float32"),
               forward=_qforward("quantize", name="_contrib_quantize"), grad=_zero_grad,
               num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="float32 data to uint8 (x * 255 / r) or int8 (x * 127 / r), rounded half "
                   "to even and saturated, r = max(|min_range|, |max_range|); also returns "
                   "the output range."))


def _quantize_v2_infer(a, shapes, dtypes):
    _check_dtype("_contrib_quantize_v2", "data", dtypes[0], ("float32", "int8", "uint8"))
    return [_nd(shapes[0]), (1,), (1,)], [out_type(a), np.float32, np.float32]


register(OpDef("_contrib_quantize_v2", inputs=("data",), params=_CALIB_PARAMS,
               **_rules(_quantize_v2_infer, "float32"),
               forward=_qforward("quantize_v2", ints=_CALIB_INTS, floats=_CALIB_FLOATS,
                                 fill=_CALIB_FILL, name="_contrib_quantize_v2"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="float32 data to int8 (x * 127.5 / r) or uint8 (x * 255.5 / r), rounded half "
                   "to even and saturated, r = max(|min|, |max|) of the calibrated range or of "
                   "the data; int8/uint8 data passes through. Returns (output, min, max)."))


def _dequantize_infer(a, shapes, dtypes):
    op = "_contrib_dequantize"
    _check_dtype(op, "data", dtypes[0], ("uint8", "int8", "int32"))
    _check_ranges(op, shapes, dtypes, 1)
    return [_nd(shapes[0])], [np.float32]


register(OpDef("_contrib_dequantize", inputs=("data", "min_range", "max_range"),
               params=(Param("out_type", str, "float32", choices=("float32",)),),
               **_rules(_dequantize_infer, "int8"),
               forward=_qforward("dequantize", name="_contrib_dequantize"), grad=_zero_grad,
               doc="uint8/int8/int32 data back to float32: q * r / 255.5, / 127.5 or / 2^31, "
                   "r = max(|min_range|, |max_range|)."))


def _requantize_infer(a, shapes, dtypes):
    op = "_contrib_requantize"
    _check_dtype(op, "data", dtypes[0], ("int32",))
    _check_ranges(op, shapes, dtypes, 1)
    return [_nd(shapes[0]), (1,), (1,)], [out_type(a), np.float32, np.float32]


register(OpDef("_contrib_requantize", inputs=("data", "min_range", "max_range"),
               params=_CALIB_PARAMS, **_rules(_requantize_infer, "int32"),
               forward=_qforward("requantize", ints=_CALIB_INTS, floats=_CALIB_FLOATS,
                                 fill=_CALIB_FILL, name="_contrib_requantize"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="int32 data (with its float range) to int8/uint8 in the calibrated range, or "
                   "in the data's own range when uncalibrated."))


# ---- products: fully connected and convolution ---------------------------------------------------
def _product_inputs(a):
    if a["no_bias"]:
        return ("data", "weight", "min_data", "max_data", "min_weight", "max_weight")
    return ("data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight",
            "min_bias", "max_bias")


def _check_product(op, a, shapes, dtypes):
    names = _product_inputs(a)
    if len(shapes) != len(names):
        raise OperatorInputError(f"{op}: expected {len(names)} inputs {list(names)} "
                                 f"(no_bias={a['no_bias']}), got {len(shapes)}")
    nq = 2 if a["no_bias"] else 3
    _check_dtype(op, "data", dtypes[0], ("uint8", "int8"))
    _check_dtype(op, "weight", dtypes[1], ("int8",))
    if not a["no_bias"]:
        _check_dtype(op, "bias", dtypes[2], ("int8",))
    _check_ranges(op, shapes, dtypes, nq)


def _product_arrays(a):
    return 2 if a["no_bias"] else 3


def _fc_infer(a, shapes, dtypes):
    op = "_contrib_quantized_fully_connected"
    _check_product(op, a, shapes, dtypes)
    ds, nh = _nd(shapes[0]), a["num_hidden"]
    if not ds:
        raise OperatorInputError(f"{op}: data must have at least one dimension")
    k = int(np.prod(ds[1:], dtype=np.int64)) if a["flatten"] else ds[-1]
    if _nd(shapes[1]) != (nh, k):
        raise OperatorInputError(f"{op}: weight has shape {_nd(shapes[1])}, expected {(nh, k)}")
    if not a["no_bias"] and _nd(shapes[2]) != (nh,):
        raise OperatorInputError(f"{op}: bias has shape {_nd(shapes[2])}, expected {(nh,)}")
    out = (ds[0], nh) if a["flatten"] else ds[:-1] + (nh,)
    return [out, (1,), (1,)], [np.int32, np.float32, np.float32]


def _fc_infer_inputs(a, shapes):
    shapes = list(shapes)
    if shapes and shapes[0] is not None:
        ds, nh = tuple(shapes[0]), a["num_hidden"]
        k = int(np.prod(ds[1:], dtype=np.int64)) if a["flatten"] else ds[-1]
        fill = [(nh, k)] + ([] if a["no_bias"] else [(nh,)])
        for i, s in enumerate(fill, 1):
            if i < len(shapes) and shapes[i] is None:
                shapes[i] = s
    for i in range(2 if a["no_bias"] else 3, len(shapes)):
        if shapes[i] is None:
            shapes[i] = (1,)
    return shapes


register(OpDef("_contrib_quantized_fully_connected",
               inputs=_product_inputs({"no_bias": False}), input_names=_product_inputs,
               params=(Param("num_hidden", int, required=True), Param("no_bias", bool, False),
                       Param("flatten", bool, True)),
               **_rules(_fc_infer, "int8", _product_arrays, _fc_infer_inputs, _fc_infer_back),
               forward=_qforward("fully_connected", ints=("no_bias",),
                                 fill={"no_bias": lambda a, i, o: int(a["no_bias"])},
                                 name="_contrib_quantized_fully_connected"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="FullyConnected of uint8/int8 data and int8 weight in int32; the int8 bias "
                   "is rescaled to the product's scale. Returns (int32 output, min, max)."))


def _conv_infer(a, shapes, dtypes):
    op = "_contrib_quantized_conv"
    _check_product(op, a, shapes, dtypes)
    ds = _nd(shapes[0])
    nsp = geometry(op, a)[0]
    if nsp == 3:
        raise OperatorInputError(f"{op}: 3-D kernels are not supported (1-D and 2-D only)")
    if a["num_group"] != 1:
        raise OperatorInputError(f"{op}: only num_group=1 is supported (as MXNet), got "
                                 f"{a['num_group']}")
    out = conv_out_shape(op, a, ds)
    want = (a["num_filter"], ds[1] // a["num_group"]) + tuple(a["kernel"])
    if _nd(shapes[1]) != want:
        raise OperatorInputError(f"{op}: weight has shape {_nd(shapes[1])}, expected {want}")
    if not a["no_bias"] and _nd(shapes[2]) != (a["num_filter"],):
        raise OperatorInputError(f"{op}: bias has shape {_nd(shapes[2])}, expected "
                                 f"{(a['num_filter'],)}")
    return [out, (1,), (1,)], [np.int32, np.float32, np.float32]


def _conv_infer_inputs(a, shapes):
    shapes = list(shapes)
    if shapes and shapes[0] is not None and len(shapes[0]) >= 2:
        ds = tuple(shapes[0])
        fill = [(a["num_filter"], ds[1] // a["num_group"]) + tuple(a["kernel"])]
        if not a["no_bias"]:
            fill.append((a["num_filter"],))
        for i, s in enumerate(fill, 1):
            if i < len(shapes) and shapes[i] is None:
                shapes[i] = s
    for i in range(2 if a["no_bias"] else 3, len(shapes)):
        if shapes[i] is None:
            shapes[i] = (1,)
    return shapes


_CONV_INTS = ("no_bias", "num_group", "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h",
              "pad_w", "dilate_h", "dilate_w")


def _conv_slots(a, inputs, outputs):
    nsp, k, st, dl, pd = geometry("_contrib_quantized_conv", a)
    lead = 2 - nsp
    k, st, pd, dl = ((1,) * lead + k, (1,) * lead + st, (0,) * lead + pd, (1,) * lead + dl)
    return (int(a["no_bias"]), a["num_group"], k[0], k[1], st[0], st[1], pd[0], pd[1],
            dl[0], dl[1])


_conv_kernel = _qforward("conv", ints=_CONV_INTS, fill={_CONV_INTS: _conv_slots},
                         name="_contrib_quantized_conv")


def _conv_forward(a, inputs, outputs):
    """1-D data runs as 2-D with height 1 (views: the arrays are contiguous)."""
    if inputs[0].ndim == 3:
        x = inputs[0].reshape((inputs[0].shape[0], inputs[0].shape[1], 1, inputs[0].shape[2]))
        w = inputs[1].reshape(inputs[1].shape[:2] + (1, inputs[1].shape[2]))
        y = outputs[0].reshape(outputs[0].shape[:2] + (1, outputs[0].shape[2]))
        inputs = [x, w] + list(inputs[2:])
        outputs = [y] + list(outputs[1:])
    _conv_kernel(a, inputs, outputs)


register(OpDef("_contrib_quantized_conv", inputs=_product_inputs({"no_bias": False}),
               input_names=_product_inputs, params=_CONV_PARAMS,
               **_rules(_conv_infer, "uint8", _product_arrays, _conv_infer_inputs, None),
               forward=_conv_forward, grad=_zero_grad, num_outputs=3,
               output_names=_RANGE_OUTPUTS,
               doc="Convolution (1-D/2-D, NCHW) of uint8/int8 data and int8 weight in int32; "
                   "the int8 bias is rescaled to the product's scale, as FullyConnected and MXNet's fused "
                   "oneDNN convolution (MXNet's unfused one adds it unscaled). "
                   "Returns (int32 output, min, max)."))


# ---- pooling, relu, flatten: the range passes through --------------------------------------------
def _pass_infer(op, shapes, dtypes, out_shape):
    _check_dtype(op, "data", dtypes[0], ("uint8", "int8"))
    _check_ranges(op, shapes, dtypes, 1)
    return [out_shape, (1,), (1,)], [dtypes[0], np.float32, np.float32]


def _pool_infer(a, shapes, dtypes):
    op = "_contrib_quantized_pooling"
    if a["pool_type"] not in ("max", "avg"):
        raise OperatorInputError(f"{op}: pool_type must be max or avg, got {a['pool_type']}")
    out, _k, _st, _pd, last = _pool_plan(op, a, _nd(shapes[0]))
    if last:
        raise OperatorInputError(f"{op}: only channels-first layouts are supported")
    return _pass_infer(op, shapes, dtypes, out)


def _pool_slots(a, inputs, outputs):
    _, k, st, pd, _ = _pool_plan("_contrib_quantized_pooling", a, inputs[0].shape)
    lead = 3 - len(k)
    cip = a["count_include_pad"]
    return ((1,) * lead + tuple(k) + (1,) * lead + tuple(st) + (0,) * lead + tuple(pd) +
            (int(a["pool_type"] == "avg"), int(cip is None or cip)))


_POOL_INTS = tuple(f"{p}_{j}" for p in ("kernel", "stride", "pad") for j in range(3)) + \
    ("avg", "count_include_pad")

register(OpDef("_contrib_quantized_pooling", inputs=("data", "min_data", "max_data"),
               params=_POOL_PARAMS, **_rules(_pool_infer, "int8", infer_back=None),
               forward=_qforward("pooling", ints=_POOL_INTS, fill={_POOL_INTS: _pool_slots},
                                 name="_contrib_quantized_pooling"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="Max or average pooling of uint8/int8 data (average rounded half to even); "
                   "the range passes through."))


def _act_infer(a, shapes, dtypes):
    op = "_contrib_quantized_act"
    if a["act_type"] != "relu":
        raise OperatorInputError(f"{op}: only act_type=relu is supported, got {a['act_type']}")
    out, types = _pass_infer(op, shapes, dtypes, _nd(shapes[0]))
    return out, [np.int8] + types[1:]


register(OpDef("_contrib_quantized_act", inputs=("data", "min_data", "max_data"),
               params=(Param("act_type", str, required=True,
                             choices=("relu", "sigmoid", "tanh", "softrelu", "softsign")),),
               **_rules(_act_infer, "int8"),
               forward=_qforward("relu", name="_contrib_quantized_act"), grad=_zero_grad,
               num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="relu of uint8/int8 data into int8, as MXNet's oneDNN build: uint8 bytes are "
                   "kept as they are (values above 127 read negative); the range passes "
                   "through."))


def _flatten_infer(a, shapes, dtypes):
    ds = _nd(shapes[0])
    out = (ds[0], int(np.prod(ds[1:], dtype=np.int64))) if ds else (1,)
    return _pass_infer("_contrib_quantized_flatten", shapes, dtypes, out)


register(OpDef("_contrib_quantized_flatten", inputs=("data", "min_data", "max_data"),
               **_rules(_flatten_infer, "int8", infer_back=None),
               forward=_qforward("flatten", name="_contrib_quantized_flatten"), grad=_zero_grad,
               num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="Flatten of uint8/int8 data to (batch, rest); the range passes through."))


# ---- entropy calibration -------------------------------------------------------------------------
def _calibrate_infer(a, shapes, dtypes):
    op = "_contrib_calibrate_entropy"
    _check_dtype(op, "hist", dtypes[0], ("float32",))
    _check_dtype(op, "hist_edges", dtypes[1], ("float32",))
    n = int(np.prod(_nd(shapes[0]), dtype=np.int64))
    if int(np.prod(_nd(shapes[1]), dtype=np.int64)) != n + 1:
        raise OperatorInputError(f"{op}: hist_edges must have one more element than hist "
                                 f"({n}), got shape {_nd(shapes[1])}")
    return [(1,), (1,)], [np.float32, np.float32]


register(OpDef("_contrib_calibrate_entropy", inputs=("hist", "hist_edges"), differentiable=False,
               params=(Param("num_quantized_bins", int, 255),),
               infer=_calibrate_infer,
               forward=_qforward("calibrate_entropy", ints=("num_quantized_bins",),
                                 name="_contrib_calibrate_entropy"),
               num_outputs=2, output_names=("threshold", "divergence"),
               doc="The threshold whose quantization of the histogram into num_quantized_bins "
                   "bins has the least KL divergence from it, and that divergence."))


# ---- output dtypes without shapes ----------------------------------------------------------------
_F32 = "float32"
#: {operator: rule(attrs, input dtypes) -> output dtypes}: what the symbol front's dtype
#: inference uses while shapes are unknown (infer_type alone, an RNN's zero-size begin state),
#: where the input's dtype would be a wrong guess; None while the rule needs an unknown dtype
OUT_DTYPES = {
    "_contrib_quantize": lambda a, d: [a["out_type"], _F32, _F32],
    "_contrib_quantize_v2": lambda a, d: [out_type(a), _F32, _F32],
    "_contrib_requantize": lambda a, d: [out_type(a), _F32, _F32],
    "_contrib_dequantize": lambda a, d: [_F32],
    "_contrib_quantized_conv": lambda a, d: ["int32", _F32, _F32],
    "_contrib_quantized_fully_connected": lambda a, d: ["int32", _F32, _F32],
    "_contrib_quantized_act": lambda a, d: ["int8", _F32, _F32],
    "_contrib_quantized_pooling": lambda a, d: None if d[0] is None else [d[0], _F32, _F32],
    "_contrib_quantized_flatten": lambda a, d: None if d[0] is None else [d[0], _F32, _F32],
    "_contrib_calibrate_entropy": lambda a, d: [_F32, _F32],
}

# ---- elemwise_add --------------------------------------------------------------------------------
def _add_infer(a, shapes, dtypes):
    op = "_contrib_quantized_elemwise_add"
    _check_dtype(op, "lhs", dtypes[0], ("uint8", "int8"))
    _check_dtype(op, "rhs", dtypes[1], ("uint8", "int8"))
    _check_ranges(op, shapes, dtypes, 2)
    if _nd(shapes[0]) != _nd(shapes[1]):
        raise OperatorInputError(f"{op}: lhs has shape {_nd(shapes[0])} but rhs has shape "
                                 f"{_nd(shapes[1])}")
    out = "int32"
    if _calibrated(a):
        out = _name(dtypes[0]) if _name(dtypes[0]) == _name(dtypes[1]) else "int8"
    return [_nd(shapes[0]), (1,), (1,)], [out, np.float32, np.float32]


def _add_dtypes(a, d):
    if not _calibrated(a):
        return ["int32", _F32, _F32]
    if d[0] is None or d[1] is None:
        return None
    return [_name(d[0]) if _name(d[0]) == _name(d[1]) else "int8", _F32, _F32]


register(OpDef("_contrib_quantized_elemwise_add", differentiable=False,
               inputs=("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"),
               params=_CALIB_PARAMS[1:], **_rules(_add_infer, "int8", 2),
               forward=_qforward("elemwise_add", ints=_CALIB_INTS, floats=_CALIB_FLOATS,
                                 fill=_CALIB_FILL, name="_contrib_quantized_elemwise_add"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="lhs + rhs of uint8/int8 data, each scaled to the output's range: int32 in "
                   "the range |lhs| + |rhs|, or int8/uint8 in the calibrated range."))
OUT_DTYPES["_contrib_quantized_elemwise_add"] = _add_dtypes

# ---- concat --------------------------------------------------------------------------------------
def _concat_infer(a, shapes, dtypes):
    op = "_contrib_quantized_concat"
    n = a["num_args"]
    if n < 1 or len(shapes) != 3 * n:
        raise OperatorInputError(f"{op}: expects 3 * num_args inputs (the arrays, then min and "
                                 f"max of each): num_args={n}, got {len(shapes)}")
    for i in range(n):
        _check_dtype(op, f"input {i}", dtypes[i], ("uint8", "int8"))
    _check_ranges(op, shapes, dtypes, n)
    first = _nd(shapes[0])
    if not first:
        raise OperatorInputError(f"{op}: arrays must have at least one dimension")
    ax = a["dim"] % len(first)
    out = list(first)
    for s in shapes[1:n]:
        s = _nd(s)
        if len(s) != len(first) or any(x != y for j, (x, y) in enumerate(zip(s, first))
                                       if j != ax):
            raise OperatorInputError(f"{op}: shapes {first} and {s} differ off axis {ax}")
        out[ax] += s[ax]
    out_dt = "int8" if any(_name(d) == "int8" for d in dtypes[:n]) else "uint8"
    return [tuple(out), (1,), (1,)], [out_dt, np.float32, np.float32]


def _concat_dtypes(a, d):
    n = a["num_args"]
    if any(x is None for x in d[:n]):
        return None
    return ["int8" if any(_name(x) == "int8" for x in d[:n]) else "uint8", _F32, _F32]


register(OpDef("_contrib_quantized_concat", inputs=(), variadic="num_args",
               params=(Param("num_args", int, required=True), Param("dim", int, 1)),
               **_rules(_concat_infer, "int8", lambda a: a["num_args"], infer_back=None),
               forward=_qforward("concat", ints=("num_args", "axis"),
                                 fill={"axis": lambda a, i, o: a["dim"] % i[0].ndim},
                                 name="_contrib_quantized_concat"),
               grad=_zero_grad, num_outputs=3, output_names=_RANGE_OUTPUTS,
               doc="Concat of uint8/int8 arrays (num_args of them, then their min and max) into "
                   "int8 (any input int8) or uint8, each rescaled to the joint range."))
OUT_DTYPES["_contrib_quantized_concat"] = _concat_dtypes

# the dtype rules above are the operators' OpDef.infer_dtypes (the symbol front's inference)
for _op, _rule in OUT_DTYPES.items():
    get(_op).infer_dtypes = _rule

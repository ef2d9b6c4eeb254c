"""MXNet operator -> ONNX nodes: one small converter per operator, registered by name.

A converter gets an :class:`~mxc.onnx._graph.MxNode` and appends ONNX nodes (opset 17) that
write ``node.outputs``. Layouts other than channels-first are refused rather than guessed."""
import math

import numpy as np

from ._graph import INT64_MAX, INT64_MIN
from ..ops import np_arith

CONVERTERS = {}


def register(*names):
    def deco(fn):
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return deco


def _channels_first(node):
    layout = node.get("layout")
    if layout is not None and not str(layout).startswith("NC"):
        node.fail(f"layout {layout} is not supported (only channels-first layouts)")


# ---- elementwise -------------------------------------------------------------------------

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal",
          "floor": "Floor", "ceil": "Ceil", "erf": "Erf", "sin": "Sin", "cos": "Cos",
          "sign": "Sign", "softsign": "Softsign", "identity": "Identity", "_copy": "Identity",
          "tan": "Tan", "arcsin": "Asin", "arccos": "Acos", "arctan": "Atan", "sinh": "Sinh",
          "cosh": "Cosh", "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh",
          "BlockGrad": "Identity", "stop_gradient": "Identity", "Dropout": "Identity"}
for _mx, _onnx in _UNARY.items():
    register(_mx)(lambda node, _op=_onnx: node.emit(_op, node.inputs[:1]))


@register("log1p")
def _log1p(node):
    node.emit("Log", [node.step("Add", [node.inputs[0], node.scalar(1.0)])])


@register("expm1")
def _expm1(node):
    node.emit("Sub", [node.step("Exp", node.inputs[:1]), node.scalar(1.0)])


@register("log2", "log10")
def _log_base(node):
    base = 2.0 if node.op == "log2" else 10.0
    node.emit("Div", [node.step("Log", node.inputs[:1]), node.scalar(math.log(base))])


@register("logical_not")
def _logical_not(node):
    _to_input_dtype(node, node.step("Not", [node.step("Cast", node.inputs[:1], to=9)]))


@register("hard_sigmoid")
def _hard_sigmoid(node):
    node.emit("HardSigmoid", node.inputs[:1], alpha=float(node.get("alpha", 0.2)),
              beta=float(node.get("beta", 0.5)))


@register("square")
def _square(node):
    node.emit("Mul", [node.inputs[0], node.inputs[0]])


@register("rsqrt")
def _rsqrt(node):
    node.emit("Reciprocal", [node.step("Sqrt", node.inputs[:1])])


_BINARY = {"Add": ("elemwise_add", "broadcast_add", "_plus", "_Plus", "_add"),
           "Sub": ("elemwise_sub", "broadcast_sub", "_minus", "_Minus", "_sub"),
           "Mul": ("elemwise_mul", "broadcast_mul", "_mul", "_Mul"),
           "Div": ("elemwise_div", "broadcast_div", "_div", "_Div"),
           "Max": ("broadcast_maximum", "_maximum", "_Maximum"),
           "Min": ("broadcast_minimum", "_minimum", "_Minimum"),
           "Pow": ("broadcast_power", "_power", "_Power")}
for _onnx, _names in _BINARY.items():
    register(*_names)(lambda node, _op=_onnx: node.emit(_op))


@register("add_n", "ElementWiseSum")
def _add_n(node):
    node.emit("Sum")


# comparisons give 0/1 in the input's dtype in MXNet, booleans in ONNX
_COMPARE = {"Equal": ("broadcast_equal", "_equal"), "Greater": ("broadcast_greater", "_greater"),
            "Less": ("broadcast_lesser", "_lesser"),
            "GreaterOrEqual": ("broadcast_greater_equal", "_greater_equal"),
            "LessOrEqual": ("broadcast_lesser_equal", "_lesser_equal")}


def _to_input_dtype(node, boolean):
    from onnx import helper
    node.emit("Cast", [boolean], to=helper.np_dtype_to_tensor_dtype(node.dtype()))


for _onnx, _names in _COMPARE.items():
    register(*_names)(lambda node, _op=_onnx: _to_input_dtype(node, node.step(_op, node.inputs)))


_SCALAR_COMPARE = {"_equal_scalar": "Equal", "_greater_scalar": "Greater",
                   "_lesser_scalar": "Less", "_greater_equal_scalar": "GreaterOrEqual",
                   "_lesser_equal_scalar": "LessOrEqual"}
for _mx, _onnx in _SCALAR_COMPARE.items():
    register(_mx)(lambda node, _op=_onnx: _to_input_dtype(node, node.step(
        _op, [node.inputs[0], node.scalar(float(node.get("scalar", 0.0)))])))


@register("_not_equal_scalar")
def _not_equal_scalar(node):
    equal = node.step("Equal", [node.inputs[0], node.scalar(float(node.get("scalar", 0.0)))])
    _to_input_dtype(node, node.step("Not", [equal]))


_LOGICAL = {"And": ("broadcast_logical_and", "_logical_and"),
            "Or": ("broadcast_logical_or", "_logical_or"),
            "Xor": ("broadcast_logical_xor", "_logical_xor")}


def _logical(node, op_type):
    a, b = (node.step("Cast", [x], to=9) for x in node.inputs[:2])   # nonzero is true
    _to_input_dtype(node, node.step(op_type, [a, b]))


for _onnx, _names in _LOGICAL.items():
    register(*_names)(lambda node, _op=_onnx: _logical(node, _op))


@register("broadcast_not_equal", "_not_equal")
def _not_equal(node):
    _to_input_dtype(node, node.step("Not", [node.step("Equal", node.inputs)]))


# scalar operators: (ONNX op, scalar on the left?)
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}


def _scalar_op(node, op_type, left):
    s = node.scalar(float(node.get("scalar", 0.0)))
    node.emit(op_type, [s, node.inputs[0]] if left else [node.inputs[0], s])


for _mx, (_onnx, _left) in _SCALAR.items():
    register(_mx)(lambda node, _op=_onnx, _l=_left: _scalar_op(node, _op, _l))


# numpy-semantics arithmetic (mxc/ops/np_arith.py): each operand cast to the promoted dtype,
# then the ONNX operator (a float32 graph gets no casts)
_NPI = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "true_divide": "Div", "power": "Pow"}


def _cast_to(node, x, have, want):
    from onnx import helper
    return x if have == want else node.step("Cast", [x], to=helper.np_dtype_to_tensor_dtype(want))


def _npi_binary(node, name, op_type):
    dt = np_arith.binary_dtype(name, node.dtype(0), node.dtype(1))
    if dt == np.bool_:
        node.fail("numpy arithmetic on two bool operands is not supported")
    node.emit(op_type, [_cast_to(node, x, node.dtype(i), dt)
                        for i, x in enumerate(node.inputs[:2])])


def _npi_scalar(node, name, op_type, left):
    attrs = {"scalar": float(node.get("scalar", 1.0)), "is_int": bool(node.get("is_int", True))}
    dt = np_arith.scalar_dtype(name, node.dtype(), attrs)
    x = _cast_to(node, node.inputs[0], node.dtype(), dt)
    s = node.g.const(np.array(attrs["scalar"], dtype=dt), f"{node.name}_scalar")
    node.emit(op_type, [s, x] if left else [x, s])


for _name, _onnx in _NPI.items():
    register(f"_npi_{_name}")(lambda node, _n=_name, _op=_onnx: _npi_binary(node, _n, _op))
    register(f"_npi_{_name}_scalar")(
        lambda node, _n=_name, _op=_onnx: _npi_scalar(node, _n, _op, False))
    if _name not in ("add", "multiply"):
        register(f"_npi_r{_name}_scalar")(
            lambda node, _n=_name, _op=_onnx: _npi_scalar(node, _n, _op, True))


@register("clip")
def _clip(node):
    node.emit("Clip", [node.inputs[0], node.scalar(float(node.get("a_min"))),
                       node.scalar(float(node.get("a_max")))])


@register("where")
def _where(node):
    cond = node.step("Cast", node.inputs[:1], to=9)   # TensorProto.BOOL
    node.emit("Where", [cond, node.inputs[1], node.inputs[2]])


@register("Cast", "cast")
def _cast(node):
    from onnx import helper
    node.emit("Cast", node.inputs[:1],
              to=helper.np_dtype_to_tensor_dtype(np.dtype(node.get("dtype"))))


# ---- activations -------------------------------------------------------------------------

def _gelu(node, x):
    scaled = node.step("Div", [x, node.scalar(math.sqrt(2.0))])
    half = node.step("Mul", [x, node.scalar(0.5)])
    node.emit("Mul", [half, node.step("Add", [node.step("Erf", [scaled]), node.scalar(1.0)])])


@register("Activation")
def _activation(node):
    act = node.get("act_type")
    x = node.inputs[0]
    simple = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
              "softsign": "Softsign"}
    if act in simple:
        node.emit(simple[act], [x])
    elif act == "log_sigmoid":
        node.emit("Neg", [node.step("Softplus", [node.step("Neg", [x])])])
    elif act == "mish":
        node.emit("Mul", [x, node.step("Tanh", [node.step("Softplus", [x])])])
    else:
        node.fail(f"act_type '{act}' is not supported")


@register("LeakyReLU")
def _leaky_relu(node):
    act = node.get("act_type", "leaky")
    slope = float(node.get("slope", 0.25))
    x = node.inputs[0]
    if act == "leaky":
        node.emit("LeakyRelu", [x], alpha=slope)
    elif act == "rrelu":   # inference: the mean of the random slope's range
        lower, upper = float(node.get("lower_bound", 0.125)), float(node.get("upper_bound", 0.334))
        node.emit("LeakyRelu", [x], alpha=(lower + upper) / 2)
    elif act == "elu":
        node.emit("Elu", [x], alpha=slope)
    elif act == "selu":
        node.emit("Selu", [x], alpha=1.6732632423543772, gamma=1.0507009873554805)
    elif act == "gelu":
        _gelu(node, x)
    elif act == "prelu":   # gamma (C,) broadcast over axis 1: reshape it to (C, 1, ...)
        shape = [-1] + [1] * (node.ndim() - 2)
        gamma = node.step("Reshape", [node.inputs[1], node.ints_const(shape)])
        node.emit("PRelu", [x, gamma])
    else:
        node.fail(f"act_type '{act}' is not supported")


@register("softmax", "log_softmax")
def _softmax(node):
    if node.get("use_length", False):
        node.fail("use_length=True is not supported")
    x = node.inputs[0]
    temperature = node.get("temperature")
    if temperature is not None and float(temperature) != 1.0:
        x = node.step("Div", [x, node.scalar(float(temperature))])
    node.emit("Softmax" if node.op == "softmax" else "LogSoftmax", [x],
              axis=int(node.get("axis", -1)))


@register("SoftmaxActivation")
def _softmax_activation(node):
    node.emit("Softmax", node.inputs[:1], axis=1 if node.get("mode") == "channel" else -1)


@register("SoftmaxOutput", "Softmax")
def _softmax_output(node):
    """Inference: the label input is dropped; without multi_output the softmax runs over
    all of each sample's values (flattened), and the result keeps the input's shape."""
    x = node.inputs[0]
    if node.get("preserve_shape", False):
        node.emit("Softmax", [x], axis=-1)
        return
    if node.get("multi_output", False) or node.ndim() == 2:
        node.emit("Softmax", [x], axis=1)
        return
    probs = node.step("Softmax", [node.step("Flatten", [x], axis=1)], axis=1)
    shape = node.step("Shape", [x]) if node.dynamic else node.ints_const(node.in_shapes[0])
    node.emit("Reshape", [probs, shape])


# ---- layers ------------------------------------------------------------------------------

@register("FullyConnected")
def _fully_connected(node):
    x = node.inputs[0]
    no_bias = node.get("no_bias", False)
    if node.get("flatten", True):
        if node.ndim() != 2:
            x = node.step("Flatten", [x], axis=1)
        node.emit("Gemm", [x, node.inputs[1]] + ([] if no_bias else [node.inputs[2]]),
                  transB=1)
        return
    weight_t = node.step("Transpose", [node.inputs[1]], perm=[1, 0])
    if no_bias:
        node.emit("MatMul", [x, weight_t])
    else:
        node.emit("Add", [node.step("MatMul", [x, weight_t]), node.inputs[2]])


def _conv_attrs(node):
    kernel = node.ints("kernel")
    n = len(kernel)
    pad = node.ints("pad") or [0] * n
    return dict(kernel_shape=kernel, strides=node.ints("stride") or [1] * n,
                dilations=node.ints("dilate") or [1] * n, pads=pad + pad,
                group=int(node.get("num_group", 1)))


@register("Convolution")
def _convolution(node):
    _channels_first(node)
    inputs = node.inputs[:2] if node.get("no_bias", False) else node.inputs[:3]
    node.emit("Conv", inputs, **_conv_attrs(node))


@register("Deconvolution")
def _deconvolution(node):
    _channels_first(node)
    if node.get("target_shape"):
        node.fail("target_shape is not supported")
    attrs = _conv_attrs(node)
    adj = node.ints("adj")
    if adj and any(adj):
        attrs["output_padding"] = adj
    inputs = node.inputs[:2] if node.get("no_bias", True) else node.inputs[:3]
    node.emit("ConvTranspose", inputs, **attrs)


@register("BatchNorm")
def _batch_norm(node):
    axis = int(node.get("axis", 1))
    if axis not in (1, 1 - node.ndim()):
        node.fail(f"axis={axis} is not supported (only the channel axis 1)")
    data, gamma, beta, mean, var = node.inputs[:5]
    if node.get("fix_gamma", True):   # MXNet ignores gamma then: scale 1
        gamma = node.g.const(np.ones(node.in_shapes[1], dtype=node.dtype()), f"{node.name}_ones")
    node.emit("BatchNormalization", [data, gamma, beta, mean, var],
              epsilon=float(node.get("eps", 1e-3)))


@register("InstanceNorm")
def _instance_norm(node):
    node.emit("InstanceNormalization", node.inputs[:3], epsilon=float(node.get("eps", 1e-3)))


@register("LayerNorm")
def _layer_norm(node):
    axis = int(node.get("axis", -1)) % node.ndim()
    eps = float(node.get("eps", 1e-5))
    if axis == node.ndim() - 1:
        node.emit("LayerNormalization", node.inputs[:3], axis=-1, epsilon=eps)
        return
    # ONNX normalises over every axis from `axis` on, MXNet over one: move it last and back
    perm = list(range(node.ndim()))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = node.step("Transpose", node.inputs[:1], perm=perm)
    normed = node.step("LayerNormalization", [moved] + node.inputs[1:3], axis=-1, epsilon=eps)
    node.emit("Transpose", [normed], perm=perm)


@register("Pooling")
def _pooling(node):
    _channels_first(node)
    pool_type = node.get("pool_type", "max")
    x = node.inputs[0]
    if node.get("global_pool", False):
        if pool_type == "max":
            node.emit("GlobalMaxPool", [x])
        elif pool_type == "avg":
            node.emit("GlobalAveragePool", [x])
        elif pool_type == "lp":
            node.emit("GlobalLpPool", [x], p=int(node.get("p_value", 2)))
        else:
            node.fail(f"global pool_type '{pool_type}' is not supported")
        return
    kernel = node.ints("kernel")
    n = len(kernel)
    pad = node.ints("pad") or [0] * n
    convention = node.get("pooling_convention", "valid")
    if convention not in ("valid", "full"):
        node.fail(f"pooling_convention '{convention}' is not supported")
    attrs = dict(kernel_shape=kernel, strides=node.ints("stride") or [1] * n, pads=pad + pad)
    if pool_type == "lp":
        node.emit("LpPool", [x], p=int(node.get("p_value", 2)), **attrs)
        return
    attrs["ceil_mode"] = int(convention == "full")
    if pool_type == "max":
        if convention == "full" and _padding_windows(node, kernel, attrs["strides"], pad):
            _max_pool_padded(node, kernel, attrs["strides"], pad)
        else:
            node.emit("MaxPool", [x], **attrs)
        return
    if pool_type not in ("avg", "sum"):
        node.fail(f"pool_type '{pool_type}' is not supported")
    include_pad = node.get("count_include_pad", True)
    if pool_type == "avg":
        node.emit("AveragePool", [x], count_include_pad=int(include_pad), **attrs)
    else:   # a sum is the padded average times the window's size
        avg = node.step("AveragePool", [x], count_include_pad=1, **attrs)
        node.emit("Mul", [avg, node.scalar(float(np.prod(kernel)))])


def _full_extra(size, k, s, p):
    """Right padding beyond `p` that MXNet's 'full' convention reads: ceil, not floor."""
    out = -(-(size + 2 * p - k) // s) + 1
    return (out - 1) * s + k - (size + 2 * p)


def _padding_windows(node, kernel, strides, pad):
    """True when a 'full' window starts in the right padding: MXNet keeps it (the dtype's
    lowest value), onnxruntime's ceil_mode drops it."""
    spatial = node.in_shapes[0][2:]
    return any((-(-(n + 2 * p - k) // s)) * s >= n + p
               for n, k, s, p in zip(spatial, kernel, strides, pad))


def _max_pool_padded(node, kernel, strides, pad):
    """Pad explicitly with the dtype's lowest value, then pool without padding."""
    spatial = node.in_shapes[0][2:]
    extra = [_full_extra(n, k, s, p) for n, k, s, p in zip(spatial, kernel, strides, pad)]
    pads = [0, 0] + list(pad) + [0, 0] + [p + e for p, e in zip(pad, extra)]
    lowest = node.scalar(float(np.finfo(node.dtype()).min)
                         if node.dtype().kind == "f" else np.iinfo(node.dtype()).min)
    padded = node.step("Pad", [node.inputs[0], node.ints_const(pads, "pads"), lowest])
    node.emit("MaxPool", [padded], kernel_shape=kernel, strides=strides)


@register("_zeros", "_ones", "zeros", "ones")
def _filled(node):
    """A constant of the inferred shape (MXNet's zeros/ones take no input)."""
    value = np.full(node.out_shapes[0], 1 if "ones" in node.op else 0,
                    dtype=np.dtype(node.get("dtype", "float32")))
    node.emit("Identity", [node.g.const(value, f"{node.name}_value")])


@register("Flatten", "flatten")
def _flatten(node):
    node.emit("Flatten", node.inputs[:1], axis=1)


@register("Embedding")
def _embedding(node):
    indices = node.step("Cast", node.inputs[:1], to=7)   # TensorProto.INT64
    node.emit("Gather", [node.inputs[1], indices], axis=0)


@register("Concat", "concat")
def _concat(node):
    node.emit("Concat", axis=int(node.get("dim", 1)))


# ---- shapes ------------------------------------------------------------------------------

@register("transpose")
def _transpose(node):
    axes = node.ints("axes")
    node.emit("Transpose", node.inputs[:1], perm=axes or None)


@register("SwapAxis", "swapaxes")
def _swap_axis(node):
    perm = list(range(node.ndim()))
    a, b = int(node.get("dim1", 0)), int(node.get("dim2", 0))
    perm[a], perm[b] = perm[b], perm[a]
    node.emit("Transpose", node.inputs[:1], perm=perm)


@register("expand_dims")
def _expand_dims(node):
    node.emit("Unsqueeze", [node.inputs[0], node.ints_const([int(node.get("axis"))], "axes")])


@register("squeeze")
def _squeeze(node):
    axes = node.get("axis")
    if axes is None:
        node.emit("Squeeze", node.inputs[:1])
    else:
        node.emit("Squeeze", [node.inputs[0], node.ints_const(node.ints("axis"), "axes")])


@register("slice_axis")
def _slice_axis(node):
    end = node.get("end")
    node.emit("Slice", [node.inputs[0], node.ints_const([int(node.get("begin"))], "starts"),
                        node.ints_const([INT64_MAX if end is None else int(end)], "ends"),
                        node.ints_const([int(node.get("axis"))], "axes")])


@register("slice", "crop")
def _slice(node):
    begin, end = node.get("begin"), node.get("end")
    step = node.get("step") or [None] * len(begin)
    starts, ends, steps = [], [], []
    for b, e, s in zip(begin, end, step):
        s = 1 if s is None else int(s)
        starts.append((0 if s > 0 else -1) if b is None else int(b))
        ends.append((INT64_MAX if s > 0 else INT64_MIN) if e is None else int(e))
        steps.append(s)
    node.emit("Slice", [node.inputs[0], node.ints_const(starts, "starts"),
                        node.ints_const(ends, "ends"),
                        node.ints_const(range(len(starts)), "axes"),
                        node.ints_const(steps, "steps")])


@register("tile")
def _tile(node):
    reps = node.ints("reps")
    ndim = max(node.ndim(), len(reps))
    x = node.inputs[0]
    if node.ndim() < ndim:   # MXNet prepends axes to the input as numpy.tile does
        x = node.step("Reshape", [x, node.ints_const([1] * (ndim - node.ndim())
                                                     + list(node.in_shapes[0]))])
    node.emit("Tile", [x, node.ints_const([1] * (ndim - len(reps)) + reps, "reps")])


def _reshape_pieces(codes, ndim):
    """MXNet's reshape codes as pieces of the target shape: ('const', v), ('dim', i),
    ('dims', i) for all from i, ('prod', i) for dims i*i+1, ('div', i, d) for dim i / d."""
    pieces, i, k = [], 0, 0
    while k < len(codes):
        c = codes[k]
        if c > 0 or c == -1:
            pieces.append(("const", c))
            i, k = i + 1, k + 1
        elif c == 0:
            pieces.append(("dim", i))
            i, k = i + 1, k + 1
        elif c == -2:
            pieces.append(("dims", i))
            i, k = ndim, k + 1
        elif c == -3:
            pieces.append(("prod", i))
            i, k = i + 2, k + 1
        elif c == -4:
            a, b = codes[k + 1], codes[k + 2]
            pieces += [("div", i, b) if a == -1 else ("const", a),
                       ("div", i, a) if b == -1 else ("const", b)]
            i, k = i + 1, k + 3
        else:
            raise ValueError(f"unknown reshape code {c}")
    return pieces


@register("Reshape", "reshape")
def _reshape(node):
    codes = node.ints("shape")
    if node.get("reverse", False) or any(c < -1 for c in codes):
        if not node.dynamic:   # the inferred shape says it all
            node.emit("Reshape", [node.inputs[0], node.ints_const(node.out_shapes[0])])
            return
        if node.get("reverse", False):
            node.fail("reverse=True with a dynamic input shape is not supported")
        _dynamic_reshape(node, codes)
        return
    # positive sizes, 0 (copy) and -1 (infer) mean the same in ONNX's Reshape
    node.emit("Reshape", [node.inputs[0], node.ints_const(codes)])


def _dynamic_reshape(node, codes):
    """-2/-3/-4 on a dynamic shape: the target is computed from Shape(x) in the graph."""
    shape = node.step("Shape", node.inputs[:1])

    def dims(i, j):
        return node.step("Slice", [shape, node.ints_const([i], "b"), node.ints_const([j], "e")])

    parts = []
    for piece in _reshape_pieces(codes, node.ndim()):
        kind, arg = piece[0], piece[1]
        if kind == "const":
            parts.append(node.ints_const([arg], "c"))
        elif kind == "dim":
            parts.append(dims(arg, arg + 1))
        elif kind == "dims":
            parts.append(dims(arg, INT64_MAX))
        elif kind == "prod":
            parts.append(node.step("Mul", [dims(arg, arg + 1), dims(arg + 1, arg + 2)]))
        else:
            parts.append(node.step("Div", [dims(arg, arg + 1), node.ints_const([piece[2]], "d")]))
    node.emit("Reshape", [node.inputs[0], node.step("Concat", parts, axis=0)])


# ---- linear algebra and reductions -------------------------------------------------------

def _swap_last(node, x, ndim):
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return node.step("Transpose", [x], perm=perm)


@register("dot")
def _dot(node):
    a, b = node.inputs[:2]
    ta, tb = node.get("transpose_a", False), node.get("transpose_b", False)
    if (ta and node.ndim(0) != 2) or (tb and node.ndim(1) != 2):
        node.fail("transpose_a/transpose_b are supported for 2-d operands only")
    if ta:
        a = _swap_last(node, a, 2)
    if tb:
        b = _swap_last(node, b, 2)
    if node.ndim(1) <= 2:   # MatMul contracts a's last axis with b's first, as MXNet's dot
        node.emit("MatMul", [a, b])
        return
    # b of more axes: contract with b as (k, rest) and unfold rest (a's leading axes kept by 0s)
    rest = list(node.in_shapes[1][1:])
    flat = node.step("Reshape", [b, node.ints_const([node.in_shapes[1][0], -1], "bshape")])
    product = node.step("MatMul", [a, flat])
    node.emit("Reshape", [product, node.ints_const([0] * (node.ndim(0) - 1) + rest)])


@register("batch_dot")
def _batch_dot(node):
    a, b = node.inputs[:2]
    if node.get("transpose_a", False):
        a = _swap_last(node, a, node.ndim(0))
    if node.get("transpose_b", False):
        b = _swap_last(node, b, node.ndim(1))
    node.emit("MatMul", [a, b])


def _reduce_axes(node):
    axis = node.get("axis")
    ndim = node.ndim()
    if axis is None or axis == ():
        axes = list(range(ndim))
    else:
        axes = [a % ndim for a in node.ints("axis")]
    if node.get("exclude", False):
        axes = [a for a in range(ndim) if a not in axes]
    return axes


_REDUCE = {"mean": "ReduceMean", "sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd"}


def _reduce(node, op_type):
    axes = _reduce_axes(node)
    keepdims = int(bool(node.get("keepdims", False)))
    if op_type == "ReduceSum":   # opset 13+: axes are an input for ReduceSum only
        node.emit(op_type, [node.inputs[0], node.ints_const(axes, "axes")], keepdims=keepdims)
    else:
        node.emit(op_type, node.inputs[:1], axes=axes, keepdims=keepdims)


for _mx, _onnx in _REDUCE.items():
    register(_mx, f"{_mx}_axis")(lambda node, _op=_onnx: _reduce(node, _op))


# ---- several outputs, gathers, broadcasts ------------------------------------------------

@register("SliceChannel", "split")
def _split(node):
    axis = int(node.get("axis", 1))
    n = int(node.get("num_outputs"))
    if not node.get("squeeze_axis", False):
        node.g.node("Split", node.inputs[:1], node.outputs[:n], name=node.name, axis=axis)
        return
    parts = [node.g.fresh(f"{node.name}_part{j}") for j in range(n)]
    node.g.node("Split", node.inputs[:1], parts, name=node.name, axis=axis)
    for part, out in zip(parts, node.outputs):
        node.g.node("Squeeze", [part, node.ints_const([axis], "axes")], out,
                    name=f"{node.name}_squeeze")


@register("stack")
def _stack(node):
    axes = node.ints_const([int(node.get("axis", 0))], "axes")
    node.emit("Concat", [node.step("Unsqueeze", [x, axes]) for x in node.inputs],
              axis=int(node.get("axis", 0)))


@register("take")
def _take(node):
    axis = int(node.get("axis", 0))
    size = node.in_shapes[0][axis]
    indices = node.step("Cast", [node.inputs[1]], to=7)   # int64
    if node.get("mode", "clip") == "wrap":   # Mod takes the divisor's sign, as Python's %
        indices = node.step("Mod", [indices, node.g.const(np.array(size, np.int64), "size")])
    else:
        indices = node.step("Clip", [indices, node.g.const(np.array(0, np.int64), "zero"),
                                     node.g.const(np.array(size - 1, np.int64), "last")])
    node.emit("Gather", [node.inputs[0], indices], axis=axis)


@register("argmax", "argmin")
def _argmax(node):
    axis = node.get("axis")
    op_type = "ArgMax" if node.op == "argmax" else "ArgMin"
    if axis is None:   # over all values: MXNet gives one index, shape (1,)
        flat = node.step("Reshape", [node.inputs[0], node.ints_const([-1])])
        index = node.step(op_type, [flat], axis=0, keepdims=1)
    else:
        index = node.step(op_type, node.inputs[:1], axis=int(axis),
                          keepdims=int(bool(node.get("keepdims", False))))
    _to_input_dtype(node, index)   # MXNet returns the indices as floats


@register("one_hot")
def _one_hot(node):
    from onnx import helper
    depth = int(node.get("depth"))
    dtype = np.dtype(node.get("dtype", "float32"))
    values = node.g.const(np.array([node.get("off_value", 0.0), node.get("on_value", 1.0)],
                                   dtype=dtype), f"{node.name}_values")
    indices = node.step("Cast", node.inputs[:1], to=7)
    onehot = node.step("OneHot", [indices, node.ints_const([depth], "depth"), values], axis=-1)
    node.emit("Cast", [onehot], to=helper.np_dtype_to_tensor_dtype(dtype))


@register("zeros_like", "ones_like")
def _fill_like(node):
    from onnx import helper
    value = np.zeros(1, dtype=node.dtype()) + (node.op == "ones_like")
    node.emit("ConstantOfShape", [node.step("Shape", node.inputs[:1])],
              value=helper.make_tensor("value", helper.np_dtype_to_tensor_dtype(node.dtype()),
                                       [1], value))


@register("broadcast_to")
def _broadcast_to(node):
    # MXNet's 0 keeps the input's size: a 1 in Expand's target does the same
    node.emit("Expand", [node.inputs[0], node.ints_const([d or 1 for d in node.ints("shape")])])


@register("broadcast_axis", "broadcast_axes")
def _broadcast_axis(node):
    target = [1] * node.ndim()
    for axis, size in zip(node.ints("axis"), node.ints("size")):
        target[axis] = size
    node.emit("Expand", [node.inputs[0], node.ints_const(target)])


@register("broadcast_like")
def _broadcast_like(node):
    if node.get("lhs_axes") is None and node.get("rhs_axes") is None:
        node.emit("Expand", [node.inputs[0], node.step("Shape", [node.inputs[1]])])
        return
    target = [1] * node.ndim()   # Expand keeps the input's size where the target says 1
    for lhs, rhs in zip(node.ints("lhs_axes"), node.ints("rhs_axes")):
        target[lhs] = node.in_shapes[1][rhs]
    node.emit("Expand", [node.inputs[0], node.ints_const(target)])


@register("Pad", "pad")
def _pad(node):
    mode = node.get("mode", "constant")
    widths = node.ints("pad_width")
    pads = widths[0::2] + widths[1::2]   # MXNet: (before, after) per axis; ONNX: befores, afters
    inputs = [node.inputs[0], node.ints_const(pads, "pads")]
    if mode == "constant":
        inputs.append(node.scalar(float(node.get("constant_value", 0.0))))
    node.emit("Pad", inputs, mode={"constant": "constant", "edge": "edge",
                                   "reflect": "reflect"}[mode])


@register("norm")
def _norm(node):
    ord_ = int(node.get("ord", 2))
    if ord_ not in (1, 2):
        node.fail(f"ord={ord_} is not supported")
    axes = _reduce_axes(node)
    node.emit("ReduceL2" if ord_ == 2 else "ReduceL1", node.inputs[:1], axes=axes,
              keepdims=int(bool(node.get("keepdims", False))))


@register("L2Normalization")
def _l2_normalization(node):
    mode = node.get("mode", "instance")
    axes = {"instance": list(range(1, node.ndim())), "channel": [1],
            "spatial": list(range(2, node.ndim()))}[mode]
    x = node.inputs[0]
    sq = node.step("ReduceSum", [node.step("Mul", [x, x]), node.ints_const(axes, "axes")],
                   keepdims=1)
    eps = node.scalar(float(node.get("eps", 1e-10)))
    node.emit("Div", [x, node.step("Sqrt", [node.step("Add", [sq, eps])])])


@register("UpSampling")
def _upsampling(node):
    if node.get("sample_type") != "nearest" or len(node.inputs) != 1:
        node.fail("only nearest upsampling of one input is supported")
    scale = float(node.get("scale"))
    scales = node.g.const(np.array([1, 1] + [scale] * (node.ndim() - 2), np.float32), "scales")
    node.emit("Resize", [node.inputs[0], "", scales], mode="nearest",
              nearest_mode="floor", coordinate_transformation_mode="asymmetric")


@register("LRN")
def _lrn(node):
    node.emit("LRN", node.inputs[:1], alpha=float(node.get("alpha", 1e-4)),
              beta=float(node.get("beta", 0.75)), bias=float(node.get("knorm", 2.0)),
              size=int(node.get("nsize")))


@register("depth_to_space", "space_to_depth")
def _depth_space(node):   # MXNet orders the moved block like ONNX's default (DCR)
    node.emit("DepthToSpace" if node.op == "depth_to_space" else "SpaceToDepth",
              node.inputs[:1], blocksize=int(node.get("block_size")))


@register("shape_array", "size_array")
def _shape_array(node):
    node.emit("Shape" if node.op == "shape_array" else "Size", node.inputs[:1])

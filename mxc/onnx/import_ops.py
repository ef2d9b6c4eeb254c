"""ONNX node -> MXNet symbol: one small converter per ONNX operator, registered by its op_type.

The converse of :mod:`mxc.onnx.export_ops`: a converter gets the importer (``imp``: tensors as
Symbols, constants as numpy arrays, ranks from ONNX shape inference) and an :class:`OnnxNode`,
and returns the Symbol of the node's first output."""
import numpy as np

from .. import symbol as S
from ..base import MXNetError
from . import import_shapes

IMPORTERS = {}


def register(*names):
    def deco(fn):
        for n in names:
            IMPORTERS[n] = fn
        return fn
    return deco


class OnnxNode:
    """An ONNX node's op_type, attributes (as Python values), inputs and MXNet name."""

    def __init__(self, proto, helper):
        self.op = proto.op_type
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.name = proto.output[0]
        self.attrs = {}
        for a in proto.attribute:
            v = helper.get_attribute_value(a)
            self.attrs[a.name] = v.decode() if isinstance(v, bytes) else v

    def get(self, key, default=None):
        return self.attrs.get(key, default)

    def fail(self, what):
        raise MXNetError(f"ONNX import: operator {self.op} (node '{self.name}'): {what}")


def _x(imp, node, i=0):
    return imp.sym(node.inputs[i])


def _has(node, i):
    return len(node.inputs) > i and node.inputs[i] != ""


# ---- elementwise -------------------------------------------------------------------------

_UNARY = {"Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative",
          "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Erf": "erf",
          "Sin": "sin", "Cos": "cos", "Sign": "sign", "Identity": "identity",
          "Not": "logical_not", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
          "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh",
          "Acosh": "arccosh", "Atanh": "arctanh"}
for _onnx, _mx in _UNARY.items():
    register(_onnx)(lambda imp, node, _op=_mx: getattr(S, _op)(_x(imp, node), name=node.name))


@register("Dropout")
def _dropout(imp, node):
    return S.identity(_x(imp, node), name=node.name)


_ACT = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softrelu",
        "Softsign": "softsign"}
for _onnx, _act in _ACT.items():
    register(_onnx)(lambda imp, node, _a=_act: S.Activation(_x(imp, node), act_type=_a,
                                                            name=node.name))

# (broadcast op, scalar op with the array on the left, with the scalar on the left)
_BINARY = {"Add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
           "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
           "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
           "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
           "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
           "Max": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
           "Min": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
           "Equal": ("broadcast_equal", None, None), "Greater": ("broadcast_greater", None, None),
           "Less": ("broadcast_lesser", None, None),
           "GreaterOrEqual": ("broadcast_greater_equal", None, None),
           "LessOrEqual": ("broadcast_lesser_equal", None, None)}


def _binary(imp, node, ops):
    if len(node.inputs) != 2:
        node.fail(f"{len(node.inputs)} inputs (MXNet's operator takes 2)")
    a, b = node.inputs
    for k, (scalar_side, other) in enumerate(((b, a), (a, b))):
        op = ops[1 + k]
        if op and imp.is_scalar(scalar_side):   # a 0-d/1-element constant: MXNet's scalar op
            return getattr(S, op)(imp.sym(other), scalar=float(imp.const(scalar_side)),
                                  name=node.name)
    ra, rb = imp.rank(a), imp.rank(b)
    lhs, rhs = imp.sym(a), imp.sym(b)
    if ra is not None and rb is not None and ra != rb:   # MXNet broadcasts equal ranks only
        for _ in range(abs(ra - rb)):
            if ra < rb:
                lhs = S.expand_dims(lhs, axis=0)
            else:
                rhs = S.expand_dims(rhs, axis=0)
    return getattr(S, ops[0])(lhs, rhs, name=node.name)


for _onnx, _ops in _BINARY.items():
    register(_onnx)(lambda imp, node, _o=_ops: _binary(imp, node, _o))


@register("Sum")
def _sum(imp, node):
    return S.add_n(*[imp.sym(i) for i in node.inputs], name=node.name)


@register("Clip")
def _clip(imp, node):
    lo = float(imp.const(node.inputs[1])) if _has(node, 1) else -np.inf
    hi = float(imp.const(node.inputs[2])) if _has(node, 2) else np.inf
    return S.clip(_x(imp, node), a_min=lo, a_max=hi, name=node.name)


@register("Cast")
def _cast(imp, node):
    from onnx import helper
    dtype = helper.tensor_dtype_to_np_dtype(node.get("to"))
    if dtype == np.bool_:   # MXNet has no boolean arrays: 0/1 in the input's type
        return S.identity(_x(imp, node), name=node.name)
    return S.Cast(_x(imp, node), dtype=np.dtype(dtype).name, name=node.name)


@register("Where")
def _where(imp, node):
    return S.where(_x(imp, node), _x(imp, node, 1), _x(imp, node, 2), name=node.name)


# ---- activations -------------------------------------------------------------------------

@register("LeakyRelu")
def _leaky(imp, node):
    return S.LeakyReLU(_x(imp, node), act_type="leaky", slope=node.get("alpha", 0.01),
                       name=node.name)


@register("Elu")
def _elu(imp, node):
    return S.LeakyReLU(_x(imp, node), act_type="elu", slope=node.get("alpha", 1.0),
                       name=node.name)


@register("Selu")
def _selu(imp, node):
    return S.LeakyReLU(_x(imp, node), act_type="selu", name=node.name)


@register("Softmax", "LogSoftmax")
def _softmax(imp, node):
    fn = S.softmax if node.op == "Softmax" else S.log_softmax
    return fn(_x(imp, node), axis=node.get("axis", -1), name=node.name)


# ---- layers ------------------------------------------------------------------------------

def _symmetric_pads(node, n):
    pads = node.get("pads", [0] * (2 * n))
    if list(pads[:n]) != list(pads[n:]):
        node.fail(f"asymmetric pads {pads} (MXNet pads both sides alike)")
    if node.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        node.fail(f"auto_pad={node.get('auto_pad')} is not supported")
    return tuple(pads[:n])


@register("Conv", "ConvTranspose")
def _conv(imp, node):
    w_shape = imp.shape(node.inputs[1])
    kernel = tuple(node.get("kernel_shape") or w_shape[2:])
    n = len(kernel)
    group = node.get("group", 1)
    kw = dict(kernel=kernel, stride=tuple(node.get("strides", [1] * n)),
              dilate=tuple(node.get("dilations", [1] * n)), pad=_symmetric_pads(node, n),
              num_group=group, no_bias=not _has(node, 2), name=node.name)
    args = [_x(imp, node), _x(imp, node, 1)] + ([_x(imp, node, 2)] if _has(node, 2) else [])
    if node.op == "Conv":
        return S.Convolution(*args, num_filter=w_shape[0], **kw)
    if node.get("output_shape"):
        node.fail("output_shape is not supported")
    adj = node.get("output_padding")
    return S.Deconvolution(*args, num_filter=w_shape[1] * group,
                           adj=tuple(adj) if adj else (0,) * n, **kw)


@register("BatchNormalization")
def _batch_norm(imp, node):
    args = [imp.sym(i) for i in node.inputs[:5]]
    return S.BatchNorm(*args, eps=node.get("epsilon", 1e-5), momentum=node.get("momentum", 0.9),
                       fix_gamma=False, name=node.name)


@register("InstanceNormalization")
def _instance_norm(imp, node):
    return S.InstanceNorm(*[imp.sym(i) for i in node.inputs[:3]],
                          eps=node.get("epsilon", 1e-5), name=node.name)


@register("LayerNormalization")
def _layer_norm(imp, node):
    axis = node.get("axis", -1)
    rank = imp.rank(node.inputs[0])
    if axis != -1 and (rank is None or axis != rank - 1):
        node.fail(f"axis={axis} is not supported (MXNet normalises over one axis: the last)")
    return S.LayerNorm(*[imp.sym(i) for i in node.inputs[:3]], axis=-1,
                       eps=node.get("epsilon", 1e-5), name=node.name)


@register("MaxPool", "AveragePool", "LpPool")
def _pool(imp, node):
    kernel = tuple(node.get("kernel_shape"))
    n = len(kernel)
    if any(d != 1 for d in node.get("dilations", [1] * n)):
        node.fail("dilated pooling is not supported")
    pool_type = {"MaxPool": "max", "AveragePool": "avg", "LpPool": "lp"}[node.op]
    kw = dict(kernel=kernel, stride=tuple(node.get("strides", [1] * n)),
              pad=_symmetric_pads(node, n), pool_type=pool_type,
              pooling_convention="full" if node.get("ceil_mode", 0) else "valid")
    if pool_type == "avg":
        kw["count_include_pad"] = bool(node.get("count_include_pad", 0))
    if pool_type == "lp":
        kw["p_value"] = node.get("p", 2)
    return S.Pooling(_x(imp, node), name=node.name, **kw)


@register("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool")
def _global_pool(imp, node):
    pool_type = {"GlobalMaxPool": "max", "GlobalAveragePool": "avg", "GlobalLpPool": "lp"}
    kw = {"p_value": node.get("p", 2)} if node.op == "GlobalLpPool" else {}
    return S.Pooling(_x(imp, node), global_pool=True, kernel=(1, 1),
                     pool_type=pool_type[node.op], name=node.name, **kw)


@register("Flatten")
def _flatten(imp, node):
    if node.get("axis", 1) != 1:
        node.fail(f"axis={node.get('axis')} is not supported (only 1)")
    return S.Flatten(_x(imp, node), name=node.name)


@register("Gemm")
def _gemm(imp, node):
    if node.get("transA", 0) or node.get("alpha", 1.0) != 1.0 or node.get("beta", 1.0) != 1.0:
        node.fail("only Gemm with transA=0, alpha=1, beta=1 is supported")
    a, b = _x(imp, node), _x(imp, node, 1)
    if node.get("transB", 0):   # x W^T + b: MXNet's FullyConnected
        args = [a, b] + ([_x(imp, node, 2)] if _has(node, 2) else [])
        return S.FullyConnected(*args, num_hidden=imp.shape(node.inputs[1])[0],
                                no_bias=not _has(node, 2), name=node.name)
    out = S.dot(a, b)
    return S.broadcast_add(out, _x(imp, node, 2), name=node.name) if _has(node, 2) else out


@register("MatMul")
def _matmul(imp, node):
    ra, rb = imp.rank(node.inputs[0]), imp.rank(node.inputs[1])
    if rb in (1, 2) and ra is not None and ra >= 2:   # MXNet's dot contracts the same axes
        return S.dot(_x(imp, node), _x(imp, node, 1), name=node.name)
    if ra == rb and ra is not None and ra >= 3:
        return S.batch_dot(_x(imp, node), _x(imp, node, 1), name=node.name)
    node.fail(f"MatMul of ranks {ra} and {rb} is not supported")


@register("Gather")
def _gather(imp, node):
    axis = node.get("axis", 0)
    if axis == 0 and imp.is_const(node.inputs[0]) and imp.rank(node.inputs[0]) == 2:
        vocab, dim = imp.shape(node.inputs[0])
        return S.Embedding(_x(imp, node, 1), _x(imp, node), input_dim=vocab, output_dim=dim,
                           name=node.name)
    return S.take(_x(imp, node), _x(imp, node, 1), axis=axis, name=node.name)


@register("Concat")
def _concat(imp, node):
    return S.Concat(*[imp.sym(i) for i in node.inputs], dim=node.get("axis"),
                    num_args=len(node.inputs), name=node.name)


# ---- shapes ------------------------------------------------------------------------------

@register("Reshape")
def _reshape(imp, node):
    # a constant shape, or one computed from shapes in the graph (Shape -> Gather -> Concat,
    # the -2/-3/-4 codes mxc's exporter writes): MXNet's reshape codes
    try:
        codes = import_shapes.reshape_codes(imp, node.inputs[1], node.inputs[0],
                                            node.get("allowzero", 0))
    except ValueError as e:
        node.fail(str(e))
    return S.reshape(_x(imp, node), shape=codes, name=node.name)


@register("Transpose")
def _transpose(imp, node):
    perm = node.get("perm")
    return S.transpose(_x(imp, node), axes=tuple(perm) if perm else (), name=node.name)


def _axes(imp, node):
    """Axes from the opset-13 input, or the older attribute."""
    if _has(node, 1):
        return [int(a) for a in imp.const(node.inputs[1])]
    return node.get("axes")


@register("Unsqueeze")
def _unsqueeze(imp, node):
    axes = sorted(_axes(imp, node))
    out = _x(imp, node)
    for k, axis in enumerate(axes):
        out = S.expand_dims(out, axis=axis, name=node.name if k == len(axes) - 1 else None)
    return out


@register("Squeeze")
def _squeeze(imp, node):
    axes = _axes(imp, node)
    return S.squeeze(_x(imp, node), axis=tuple(axes) if axes else None, name=node.name)


@register("Slice")
def _slice(imp, node):
    starts = [int(v) for v in imp.const(node.inputs[1])]
    ends = [int(v) for v in imp.const(node.inputs[2])]
    rank = imp.rank(node.inputs[0])
    axes = ([int(v) for v in imp.const(node.inputs[3])] if _has(node, 3)
            else list(range(len(starts))))
    steps = [int(v) for v in imp.const(node.inputs[4])] if _has(node, 4) else [1] * len(starts)
    big = np.iinfo(np.int64).max // 2
    ends = [None if abs(e) >= big else e for e in ends]
    if len(axes) == 1 and steps[0] == 1:
        return S.slice_axis(_x(imp, node), axis=axes[0], begin=starts[0], end=ends[0],
                            name=node.name)
    if rank is None:
        node.fail("the input's rank is unknown")
    begin, end, step = [None] * rank, [None] * rank, [None] * rank
    for a, b, e, s in zip(axes, starts, ends, steps):
        begin[a % rank], end[a % rank], step[a % rank] = b, e, s
    last = max(a % rank for a in axes) + 1
    return S.slice(_x(imp, node), begin=tuple(begin[:last]), end=tuple(end[:last]),
                   step=tuple(step[:last]), name=node.name)


@register("Tile")
def _tile(imp, node):
    reps = tuple(imp.ints(node, 1, "the repeats"))
    return S.tile(_x(imp, node), reps=reps, name=node.name)


# ---- reductions --------------------------------------------------------------------------

_REDUCE = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max", "ReduceMin": "min",
           "ReduceProd": "prod"}


def _reduce(imp, node, op):
    axes = _axes(imp, node)
    if not axes and node.get("noop_with_empty_axes", 0):
        return S.identity(_x(imp, node), name=node.name)
    return getattr(S, op)(_x(imp, node), axis=tuple(axes) if axes else None,
                          keepdims=bool(node.get("keepdims", 1)), name=node.name)


for _onnx, _mx in _REDUCE.items():
    register(_onnx)(lambda imp, node, _op=_mx: _reduce(imp, node, _op))


# ---- several outputs, gathers, broadcasts ------------------------------------------------

@register("Split")
def _split(imp, node):
    if _has(node, 1) or node.get("split"):
        sizes = imp.const(node.inputs[1]) if _has(node, 1) else node.get("split")
        if len(set(int(v) for v in sizes)) != 1:
            node.fail(f"unequal parts {list(sizes)} are not supported")
    return S.split(_x(imp, node), num_outputs=len(node.outputs), axis=node.get("axis", 0),
                   name=node.name)


@register("ArgMax", "ArgMin")
def _argmax(imp, node):
    if node.get("select_last_index", 0):
        node.fail("select_last_index=1 is not supported")
    fn = S.argmax if node.op == "ArgMax" else S.argmin
    return fn(_x(imp, node), axis=node.get("axis", 0), keepdims=bool(node.get("keepdims", 1)),
              name=node.name)


@register("Expand")
def _expand(imp, node):
    shape = tuple(imp.ints(node, 1, "the shape"))
    rank = imp.rank(node.inputs[0])
    x = _x(imp, node)
    for _ in range(len(shape) - rank if rank is not None else 0):   # numpy-style leading 1s
        x = S.expand_dims(x, axis=0)
    return S.broadcast_to(x, shape=tuple(0 if d == 1 else d for d in shape), name=node.name)


@register("Pad")
def _pad(imp, node):
    pads = [int(v) for v in imp.const(node.inputs[1])]
    n = len(pads) // 2
    width = tuple(v for pair in zip(pads[:n], pads[n:]) for v in pair)
    value = float(imp.const(node.inputs[2])) if _has(node, 2) else 0.0
    return S.pad(_x(imp, node), mode=node.get("mode", "constant"), pad_width=width,
                 constant_value=value, name=node.name)


@register("ReduceL2", "ReduceL1")
def _norm(imp, node):
    axes = _axes(imp, node)
    return S.norm(_x(imp, node), ord=2 if node.op == "ReduceL2" else 1,
                  axis=tuple(axes) if axes else None, keepdims=bool(node.get("keepdims", 1)),
                  name=node.name)


@register("HardSigmoid")
def _hard_sigmoid(imp, node):
    return S.hard_sigmoid(_x(imp, node), alpha=node.get("alpha", 0.2),
                          beta=node.get("beta", 0.5), name=node.name)


@register("LRN")
def _lrn(imp, node):
    return S.LRN(_x(imp, node), alpha=node.get("alpha", 1e-4), beta=node.get("beta", 0.75),
                 knorm=node.get("bias", 1.0), nsize=node.get("size"), name=node.name)


@register("DepthToSpace", "SpaceToDepth")
def _depth_space(imp, node):
    if node.get("mode", "DCR") != "DCR":
        node.fail(f"mode {node.get('mode')} is not supported (MXNet's order is DCR)")
    fn = S.depth_to_space if node.op == "DepthToSpace" else S.space_to_depth
    return fn(_x(imp, node), block_size=node.get("blocksize"), name=node.name)


# ---- PRelu, OneHot, ConstantOfShape, Resize ----------------------------------------------

@register("PRelu")
def _prelu(imp, node):
    x, slope = node.inputs[0], node.inputs[1]
    rank = imp.rank(x)
    if imp.is_const(slope) and rank is not None and rank >= 2:
        s = imp.const(slope)
        # one slope per channel (axis 1), as MXNet's LeakyReLU prelu takes it
        per_channel = s.ndim in (rank - 1, rank) and s.size == s.shape[-(rank - 1)] \
            and s.size > 1
        if per_channel or s.size == 1:
            gamma = node.name + "_gamma"
            imp.consts[gamma] = np.ascontiguousarray(s.reshape(-1))
            return S.LeakyReLU(_x(imp, node), imp.sym(gamma), act_type="prelu", name=node.name)
    # any other broadcast of the slope: max(0, x) - slope * max(0, -x)
    neg = S.relu(S.negative(_x(imp, node)))
    return S.broadcast_sub(S.relu(_x(imp, node)), S.broadcast_mul(imp.sym(slope), neg),
                           name=node.name)


@register("OneHot")
def _one_hot(imp, node):
    (depth,) = imp.ints(node, 1, "the depth")
    values = imp.const(node.inputs[2]).reshape(-1)
    if values.size != 2:
        node.fail(f"values must hold [off, on], got {values.size} elements")
    idx = _x(imp, node)
    # ONNX counts negative indices from the end; MXNet's one_hot leaves them all off
    idx = (idx + depth) % depth
    out = S.one_hot(idx, depth=depth, on_value=float(values[1]), off_value=float(values[0]),
                    dtype=np.dtype(values.dtype).name)
    axis = node.get("axis", -1)
    rank = imp.rank(node.inputs[0])
    if axis in (-1, rank):
        return S.identity(out, name=node.name)
    if rank is None:
        node.fail("axis other than -1 needs the indices' rank")
    axis %= rank + 1
    perm = list(range(rank))
    perm.insert(axis, rank)
    return S.transpose(out, axes=tuple(perm), name=node.name)


def _shape_of(imp, dims):
    """The graph tensor whose whole shape the shape expression `dims` is, else None."""
    src = next((d.factors[0][0] for d in dims if d.factors), None)
    if src is None or len(dims) != imp.rank(src):
        return None
    known = imp.dims.get(src) or (None,) * len(dims)
    for a, d in enumerate(dims):
        if not (d.coef == 1 and d.factors == ((src, a),)) and d.const() != known[a]:
            return None
    return src


@register("ConstantOfShape")
def _constant_of_shape(imp, node):
    # a shape of dimensions of the graph tensor x, in order: full_like x
    expr = imp.shape_exprs.get(node.inputs[0])
    value = node.get("value")
    if value is None:
        fill, dtype = 0.0, "float32"
    else:
        from onnx import numpy_helper
        v = numpy_helper.to_array(value).reshape(-1)
        fill, dtype = v[0].item(), np.dtype(v.dtype).name
    src = _shape_of(imp, expr[0]) if expr is not None else None
    if src is not None:
        like = S.zeros_like(S.cast(imp.sym(src), dtype=dtype))
        return S.broadcast_add(like, S.full((1,), fill, dtype=dtype), name=node.name)
    shape = tuple(imp.ints(node, 0, "the shape"))
    return S.full(shape, fill, dtype=dtype, name=node.name)


def _resize_size(imp, node):
    """(out H, out W) of a 4-d Resize, from `sizes` or from `scales` and the input's dims."""
    x = node.inputs[0]
    if _has(node, 3):
        sizes = imp.ints(node, 3, "the sizes")
        scales = None
    else:
        scales = [float(v) for v in imp.const(node.inputs[2]).reshape(-1)]
        sizes = None
    if imp.rank(x) != 4:
        node.fail(f"only 4-d (NCHW) inputs are supported, got rank {imp.rank(x)}")
    if sizes is not None:
        return sizes, None
    if scales[0] != 1 or scales[1] != 1:
        node.fail(f"scales {scales} resize the batch or channel axis")
    return None, scales[2:]


@register("Resize", "Upsample")
def _resize(imp, node):
    mode = node.get("mode", "nearest")
    coord = node.get("coordinate_transformation_mode",
                     "half_pixel" if node.op == "Resize" else "asymmetric")
    if node.op == "Upsample":     # (X, scales)
        scales = [float(v) for v in imp.const(node.inputs[1]).reshape(-1)]
        if len(scales) != 4 or scales[:2] != [1.0, 1.0]:
            node.fail(f"scales {scales} are not those of a 4-d NCHW upsampling")
        sizes, hw = None, scales[2:]
    else:
        if mode != "nearest" and node.get("exclude_outside", 0):
            node.fail("exclude_outside=1 is not supported")
        sizes, hw = _resize_size(imp, node)
    x = _x(imp, node)
    if mode == "nearest":
        nearest = node.get("nearest_mode", "round_prefer_floor")
        if coord not in ("half_pixel", "pytorch_half_pixel", "asymmetric") or \
                (coord == "asymmetric" and nearest != "floor" and node.op == "Resize"):
            node.fail(f"nearest resize with coordinate_transformation_mode={coord} and "
                      f"nearest_mode={nearest} is not MXNet's UpSampling (which repeats each "
                      "pixel an integer number of times)")
        if sizes is not None:
            dims = imp.dims.get(node.inputs[0])
            if not dims or not dims[2] or not dims[3]:
                node.fail("sizes with an input of unknown height or width")
            hw = [sizes[2] / dims[2], sizes[3] / dims[3]]
            if sizes[:2] != list(dims[:2]):
                node.fail(f"sizes {sizes} resize the batch or channel axis")
        if hw[0] != hw[1] or hw[0] != int(hw[0]) or hw[0] < 1:
            node.fail(f"nearest resize by {hw}: MXNet's UpSampling takes one integer scale "
                      "for height and width")
        return S.UpSampling(x, scale=int(hw[0]), sample_type="nearest", num_args=1,
                            name=node.name)
    if mode != "linear":
        node.fail(f"mode {mode!r} is not supported (nearest and linear are)")
    if coord not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        node.fail(f"linear resize with coordinate_transformation_mode={coord} is not "
                  "supported (align_corners, half_pixel, pytorch_half_pixel are)")
    align = coord == "align_corners"
    if sizes is not None:
        if len(sizes) != 4:
            node.fail(f"sizes {sizes} are not those of a 4-d input")
        return S.contrib.BilinearResize2D(x, height=int(sizes[2]), width=int(sizes[3]),
                                          align_corners=align, name=node.name)
    dims = imp.dims.get(node.inputs[0])
    if dims and dims[2] and dims[3] and any(d * f != int(d * f) for d, f in zip(dims[2:], hw)):
        # ONNX maps coordinates by the scale, MXNet by the size ratio: equal only when the
        # scaled size is a whole number
        node.fail(f"linear resize of {dims[2:]} by {hw} does not give whole sizes")
    return S.contrib.BilinearResize2D(x, scale_height=hw[0], scale_width=hw[1],
                                      align_corners=align, name=node.name)

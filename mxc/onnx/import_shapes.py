"""Shape tensors computed inside an ONNX graph, for the importer.

An MXNet symbol's shapes are fixed when it is bound, so a graph's shape arithmetic
(``Shape -> Gather -> Unsqueeze -> Concat -> Reshape``, the ``-2/-3/-4`` codes mxc's exporter
writes for a dynamic batch) is evaluated here, at import, instead of becoming operators:

- nodes whose inputs are all constants are folded with numpy into constants;
- ``Shape(x)`` becomes a *shape expression*: one :class:`Dim` per element, a product of
  dimensions of graph tensors times a fraction, which Gather, Slice, Concat, (Un)Squeeze,
  Cast, Mul, Div and ReduceProd carry along;
- a Reshape of such an expression becomes MXNet's reshape codes (``0`` copy, ``-3`` merge two,
  ``-4`` split one, ``-1`` infer), and any other consumer gets the numbers when shape
  inference knows every dimension involved.
"""
from fractions import Fraction

import numpy as np


class Dim:
    """``coef * prod(dims of graph tensors)``: factors are (tensor name, axis) pairs."""
    __slots__ = ("coef", "factors")

    def __init__(self, coef, factors=()):
        self.coef = Fraction(coef)
        self.factors = tuple(factors)

    def __mul__(self, other):
        return Dim(self.coef * other.coef, self.factors + other.factors)

    def __truediv__(self, other):
        if other.factors:
            raise ValueError("a division by a graph dimension")
        return Dim(self.coef / other.coef, self.factors)

    def const(self):
        """The integer value of a dimension-free element, else None."""
        if self.factors or self.coef.denominator != 1:
            return None
        return int(self.coef)


def _dims_of(value):
    """Constant int array (0-d or 1-d) -> [Dim]."""
    return [Dim(int(v)) for v in np.asarray(value).reshape(-1)]


# ---- constant folding -------------------------------------------------------------------

def _fold_gather(node, data, idx):
    return np.take(data, idx, axis=node.get("axis", 0))


def _fold_slice(node, data, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    index = [slice(None)] * data.ndim
    for a, b, e, s in zip(axes, starts, ends, steps):
        index[a] = slice(int(b), int(e), s)
    return data[tuple(index)]


def _fold_unsqueeze(node, data, axes=None):
    axes = [int(a) for a in (axes if axes is not None else node.get("axes"))]
    out = data
    rank = data.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        out = np.expand_dims(out, a)
    return out


def _fold_squeeze(node, data, axes=None):
    axes = axes if axes is not None else node.get("axes")
    return np.squeeze(data, axis=tuple(int(a) for a in axes) if axes is not None else None)


def _fold_reduce_prod(node, data, axes=None):
    axes = axes if axes is not None else node.get("axes")
    return np.prod(data, axis=tuple(int(a) for a in axes) if axes is not None else None,
                   keepdims=bool(node.get("keepdims", 1)))


def _fold_cast(node, data):
    from onnx import helper
    return data.astype(helper.tensor_dtype_to_np_dtype(node.get("to")))


def _fold_constant_of_shape(node, shape):
    value = node.get("value")
    if value is None:
        fill = np.zeros(1, np.float32)
    else:
        from onnx import numpy_helper
        fill = numpy_helper.to_array(value).reshape(-1)
    return np.full([int(v) for v in shape], fill[0], fill.dtype)


def _int_div(a, b):
    # ONNX's integer Div truncates toward zero; shapes are non-negative
    return a // b if np.issubdtype(a.dtype, np.integer) else a / b


_FOLD = {
    "Shape": lambda node, x: np.array(x.shape, np.int64)[node.get("start", 0):node.get("end")],
    "Gather": _fold_gather,
    "Slice": _fold_slice,
    "Concat": lambda node, *xs: np.concatenate(xs, axis=node.get("axis")),
    "Unsqueeze": _fold_unsqueeze,
    "Squeeze": _fold_squeeze,
    "Cast": _fold_cast,
    "Mul": lambda node, a, b: a * b,
    "Add": lambda node, a, b: a + b,
    "Sub": lambda node, a, b: a - b,
    "Div": lambda node, a, b: _int_div(a, b),
    "ReduceProd": _fold_reduce_prod,
    "Range": lambda node, a, b, d: np.arange(a, b, d),
    "ConstantOfShape": _fold_constant_of_shape,
    "Identity": lambda node, x: x,
}


# ---- shape expressions ------------------------------------------------------------------

def _expr_inputs(imp, node):
    """Each input as ('const', array) or ('expr', [Dim], is_scalar); None if one is neither."""
    out = []
    for name in node.inputs:
        if name == "":
            out.append(None)
        elif imp.is_const(name):
            out.append(("const", imp.consts[name]))
        elif name in imp.shape_exprs:
            out.append(("expr",) + imp.shape_exprs[name])
        else:
            return None
    return out


def _as_dims(item):
    if item[0] == "const":
        return _dims_of(item[1]), np.ndim(item[1]) == 0
    return item[1], item[2]


def _shape_expr(imp, node, ins):
    """(list of Dim, is_scalar) for a shape-arithmetic node, or None when it is not one."""
    op = node.op
    if op == "Shape":
        x = node.inputs[0]
        rank = imp.rank(x)
        if rank is None:
            return None
        start, end = node.get("start", 0), node.get("end", rank)
        axes = list(range(rank))[start:end]
        return [Dim(1, [(x, a)]) for a in axes], False
    if ins is None or not any(i is not None and i[0] == "expr" for i in ins):
        return None
    if op in ("Cast", "Identity"):
        return _as_dims(ins[0])
    if op in ("Unsqueeze", "Squeeze"):
        dims, _ = _as_dims(ins[0])
        return dims, op == "Squeeze" and len(dims) == 1
    if op == "Gather" and node.get("axis", 0) == 0 and ins[1][0] == "const":
        dims, _ = _as_dims(ins[0])
        idx = ins[1][1]
        picked = [dims[int(i)] for i in np.asarray(idx).reshape(-1)]
        return picked, np.ndim(idx) == 0
    if op == "Slice" and all(i[0] == "const" for i in ins[1:] if i is not None):
        dims, _ = _as_dims(ins[0])
        consts = [None if i is None else i[1] for i in ins[1:]]
        consts += [None] * (4 - len(consts))
        starts, ends, axes, steps = consts
        if axes is not None and [int(a) for a in axes] not in ([0], [-1]):
            return None
        step = int(steps[0]) if steps is not None else 1
        return dims[slice(int(starts[0]), int(min(ends[0], 2 ** 62)), step)], False
    if op == "Concat":
        out = []
        for i in ins:
            out += _as_dims(i)[0]
        return out, False
    if op in ("Mul", "Div"):
        (a, sa), (b, sb) = _as_dims(ins[0]), _as_dims(ins[1])
        if len(a) != len(b):
            if len(a) == 1:
                a = a * len(b)
            elif len(b) == 1:
                b = b * len(a)
            else:
                return None
        try:
            return [x * y if op == "Mul" else x / y for x, y in zip(a, b)], sa and sb
        except ValueError:
            return None
    if op == "ReduceProd":
        dims, _ = _as_dims(ins[0])
        prod = Dim(1)
        for d in dims:
            prod = prod * d
        return [prod], not node.get("keepdims", 1)
    return None


def evaluate(imp, node):
    """Fold `node` into constants or shape expressions; whether it was."""
    ins = _expr_inputs(imp, node)
    if node.op in _FOLD and ins is not None and all(i is None or i[0] == "const" for i in ins) \
            and (node.op != "Shape" or ins[0] is not None):
        args = [None if i is None else i[1] for i in ins]
        while args and args[-1] is None:
            args.pop()
        imp.consts[node.outputs[0]] = np.asarray(_FOLD[node.op](node, *args))
        return True
    got = _shape_expr(imp, node, ins)
    if got is None:
        return False
    # kept symbolic even where shape inference knows every dimension: a Reshape matches the
    # structure (merge, split) first; a consumer wanting numbers gets them (static_value)
    imp.shape_exprs[node.outputs[0]] = got
    return True


def static_value(imp, name):
    """A shape expression's value as a constant array when shape inference knows all its
    dimensions, else None."""
    dims, scalar = imp.shape_exprs[name]
    values = [_static(imp, d) for d in dims]
    if any(v is None for v in values):
        return None
    value = np.array(values, np.int64)
    return value.reshape(()) if scalar else value


def _static(imp, d):
    """The value of Dim `d` when shape inference knows its dimensions, else None."""
    value = d.coef
    for tensor, axis in d.factors:
        known = imp.dims.get(tensor)
        if not known or not known[axis]:
            return None
        value *= known[axis]
    return int(value) if value.denominator == 1 else None


def static_ints(imp, name, what):
    """The integers of a constant or of a shape expression whose dimensions shape inference
    knows; a clear error otherwise."""
    if imp.is_const(name):
        return [int(v) for v in np.asarray(imp.consts[name]).reshape(-1)]
    if name in imp.shape_exprs:
        out = []
        for d in imp.shape_exprs[name][0]:
            v = d.coef
            for tensor, axis in d.factors:
                known = imp.dims.get(tensor)
                if not known or not known[axis]:
                    raise _unknown(what, name, tensor, axis)
                v *= known[axis]
            out.append(int(v))
        return out
    raise ValueError(f"{what} '{name}' must be a constant or computed from shapes")


def _unknown(what, name, tensor, axis):
    return ValueError(f"{what} '{name}' depends on dimension {axis} of '{tensor}', which is not "
                      f"known until the model runs, and MXNet's operator takes it as a number")


def reshape_codes(imp, name, data, allowzero):
    """MXNet reshape codes for ONNX's Reshape(data, shape tensor `name`)."""
    if imp.is_const(name):
        items = _dims_of(imp.consts[name])
    elif name in imp.shape_exprs:
        items = imp.shape_exprs[name][0]
    else:
        raise ValueError(f"the shape '{name}' must be a constant or computed from shapes")
    codes, src, k = [], 0, 0
    while k < len(items):
        d = items[k]
        c = d.const()
        nxt = items[k + 1] if k + 1 < len(items) else None
        if c is not None:
            if c == 0 and (allowzero or src != k):
                raise ValueError("a 0 in the shape (copy a dimension) at a position MXNet's "
                                 "reshape cannot copy from")
            codes.append(c)
            src, k = src + 1, k + 1
        elif d.coef == 1 and d.factors == ((data, src),):
            codes.append(0)
            src, k = src + 1, k + 1
        elif d.coef == 1 and d.factors == ((data, src), (data, src + 1)):
            codes.append(-3)
            src, k = src + 2, k + 1
        elif d.factors == ((data, src),) and d.coef.numerator == 1 and nxt is not None \
                and nxt.const() == d.coef.denominator:
            codes += [-4, -1, nxt.const()]                # dim / c, c: split one in two
            src, k = src + 1, k + 2
        elif d.factors == ((data, src - 1),) and d.coef.numerator == 1 and codes \
                and codes[-1] == d.coef.denominator and codes[-1] > 0 \
                and (len(codes) < 2 or codes[-2] != -4):
            codes[-1:] = [-4, codes[-1], -1]              # c, dim / c: the const took its dim
            k += 1
        else:
            value = d.coef
            for tensor, axis in d.factors:
                known = imp.dims.get(tensor)
                if not known or not known[axis]:
                    raise _unknown("the shape", name, tensor, axis)
                value *= known[axis]
            codes.append(int(value))
            src, k = src + 1, k + 1
    return tuple(codes)

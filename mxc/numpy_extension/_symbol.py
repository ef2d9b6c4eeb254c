"""``F.npx`` and ``F.np`` for HybridBlocks traced under numpy array semantics.

mxc has one Symbol type; these namespaces build the same graph nodes ``mx.sym`` builds (so the
graph exports to MXNet's JSON as usual) and mark the results as ``NpSymbol`` (numpy-style
broadcasting arithmetic). ``np`` covers the numpy functions that map onto one registry operator
(elementwise math, broadcasting binaries, reductions, shape functions); anything else raises
AttributeError naming the function.
"""
import numbers

from ._gluon import np_sym
from .. import symbol


def _sym():
    return symbol


class _Ops:
    """Attribute access builds wrappers over mx.sym operators that mark results NpSymbol."""

    def __init__(self, kind, table, custom):
        self._kind = kind
        self._table = table
        self._custom = custom

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._custom:
            return self._custom[name]
        op_name = self._table.get(name)
        if op_name is None:
            raise AttributeError(f"F.{self._kind}.{name} is not available while tracing a "
                                 f"HybridBlock in mxc (numpy semantics); run the block without "
                                 f"hybridize() or use the mx.sym operator")
        f = getattr(_sym(), op_name)

        def fn(*args, **kwargs):
            return np_sym(f(*args, **kwargs))
        fn.__name__ = name
        return fn

    def __dir__(self):
        return sorted(set(self._table) | set(self._custom))


_NPX = {"activation": "Activation", "batch_dot": "batch_dot", "batch_flatten": "Flatten",
        "batch_norm": "BatchNorm", "convolution": "Convolution",
        "deconvolution": "Deconvolution", "dropout": "Dropout", "embedding": "Embedding",
        "erf": "erf", "fully_connected": "FullyConnected", "gamma": "gamma",
        "gammaln": "gammaln", "gather_nd": "gather_nd", "layer_norm": "LayerNorm",
        "leaky_relu": "LeakyReLU", "log_softmax": "log_softmax", "one_hot": "one_hot",
        "multibox_detection": "_contrib_MultiBoxDetection",
        "multibox_prior": "_contrib_MultiBoxPrior", "multibox_target": "_contrib_MultiBoxTarget",
        "pick": "pick", "pooling": "Pooling", "relu": "relu", "reshape_like": "reshape_like",
        "rnn": "RNN", "roi_pooling": "ROIPooling", "sequence_mask": "SequenceMask",
        "shape_array": "shape_array", "sigmoid": "sigmoid", "slice": "slice",
        "smooth_l1": "smooth_l1", "softmax": "softmax", "topk": "topk", "cast": "cast"}


def _npx_reshape(a, newshape, reverse=False, order="C"):
    """npx.reshape on a Symbol: the codes -1, -2 (copy), -3 (drop a 1), -4 (copy the rest) map
    onto legacy Reshape codes; -5/-6 (merge/split) map to -3/-4 of the legacy operator."""
    if isinstance(newshape, numbers.Integral):
        newshape = (newshape,)
    legacy, i = [], 0
    newshape = list(newshape)
    while i < len(newshape):
        d = newshape[i]
        if d == -2:
            legacy.append(0)
        elif d == -3:
            legacy.append(-5)        # marker, handled below
        elif d == -4:
            legacy.append(-2)
        elif d == -5:
            legacy.append(-3)
        elif d == -6:
            legacy.extend([-4, newshape[i + 1], newshape[i + 2]])
            i += 2
        else:
            legacy.append(d)
        i += 1
    if -5 in legacy:
        raise NotImplementedError("npx.reshape code -3 (drop a size-1 dimension) is not "
                                  "supported while tracing; use F.np.squeeze")
    return np_sym(_sym().Reshape(a, shape=tuple(legacy), reverse=reverse))


_NP = {"maximum": "broadcast_maximum",
       "minimum": "broadcast_minimum", "equal": "broadcast_equal",
       "not_equal": "broadcast_not_equal", "greater": "broadcast_greater",
       "greater_equal": "broadcast_greater_equal", "less": "broadcast_lesser",
       "less_equal": "broadcast_lesser_equal", "exp": "exp", "log": "log", "sqrt": "sqrt",
       "square": "square", "abs": "abs", "absolute": "abs", "tanh": "tanh", "sin": "sin",
       "cos": "cos", "tan": "tan", "negative": "negative", "sign": "sign", "floor": "floor",
       "ceil": "ceil", "log1p": "log1p", "expm1": "expm1", "reciprocal": "reciprocal",
       "arctan": "arctan", "sinh": "sinh", "cosh": "cosh", "log2": "log2", "log10": "log10",
       "ones_like": "ones_like", "zeros_like": "zeros_like", "where": "where",
       "dot": "dot", "copy": "identity", "clip": "clip", "broadcast_to": "broadcast_to",
       "swapaxes": "swapaxes", "flip": "flip", "argmax": "argmax", "argmin": "argmin",
       "take": "take", "repeat": "repeat", "tile": "tile"}


def _reduce(op):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False):
        kwargs = {"keepdims": keepdims}
        if axis is not None:
            kwargs["axis"] = axis
        r = getattr(_sym(), op)(a, **kwargs)
        if dtype is not None:
            r = _sym().cast(r, dtype=dtype)
        return np_sym(r)
    fn.__name__ = op
    return fn


def _np_reshape(a, newshape, order="C"):
    if isinstance(newshape, numbers.Integral):
        newshape = (newshape,)
    return np_sym(_sym().Reshape(a, shape=tuple(newshape)))


def _transpose(a, axes=None):
    return np_sym(_sym().transpose(a, axes=axes) if axes is not None else _sym().transpose(a))


def _concatenate(seq, axis=0, out=None):
    return np_sym(_sym().concat(*seq, dim=axis))


def _stack(arrays, axis=0, out=None):
    return np_sym(_sym().stack(*arrays, axis=axis))


def _expand_dims(a, axis):
    return np_sym(_sym().expand_dims(a, axis=axis))


def _squeeze(a, axis=None):
    return np_sym(_sym().squeeze(a, axis=axis) if axis is not None else _sym().squeeze(a))


npx = _Ops("npx", _NPX, {"reshape": _npx_reshape})


def _split(a, indices_or_sections, axis=0):
    """np.split on a Symbol: equal sections through the split operator, explicit indices
    through slice_axis pieces; a list of NpSymbols either way."""
    if isinstance(indices_or_sections, numbers.Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError("F.np.split: number sections must be larger than 0.")
        parts = _sym().split(a, num_outputs=n, axis=axis)
        return [np_sym(parts)] if n == 1 else [np_sym(parts[i]) for i in range(n)]
    bounds = [0] + [int(i) for i in indices_or_sections] + [None]
    return [np_sym(_sym().slice_axis(a, axis=axis, begin=b, end=e))
            for b, e in zip(bounds[:-1], bounds[1:])]


def _hsplit(a, indices_or_sections):
    return _split(a, indices_or_sections, axis=1)


def _vsplit(a, indices_or_sections):
    return _split(a, indices_or_sections, axis=0)


def _dsplit(a, indices_or_sections):
    return _split(a, indices_or_sections, axis=2)


def basic_index(a, key):
    """a[key] for a basic numpy index on a traced value (see mx.np's _core.basic_index); the
    rank is unknown while tracing, so an Ellipsis must come last."""
    if not isinstance(key, tuple):
        key = (key,)
    if Ellipsis in key:
        if key.index(Ellipsis) != len(key) - 1 or key.count(Ellipsis) > 1:
            raise IndexError("indexing a traced array: an Ellipsis is supported only as the "
                             "last index")
        key = key[:-1]
    from ..numpy._core import basic_index as generic
    return np_sym(generic(_sym(), a, key))


def _arith(name):
    """np.add ... np.mod on traced values and scalars: the _npi_* operators NpSymbol's Python
    operators build (numpy broadcasting and dtype promotion)."""
    def fn(x1, x2, out=None, **kwargs):
        if out is not None:
            raise NotImplementedError(f"F.np.{name}(..., out=...) while tracing")
        if isinstance(x1, symbol.Symbol):
            return np_sym(x1)._np_arith(x2, name)
        if isinstance(x2, symbol.Symbol):
            return np_sym(x2)._np_arith(x1, name, reflected=True)
        raise TypeError(f"F.np.{name}: one operand must be a traced array, got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    fn.__name__ = name
    return fn


def _creation(op, **fixed):
    """np.zeros / ones / full / identity as the legacy creation operators (float32 default,
    MXNet's numpy default dtype)."""
    def fn(*args, dtype=None, order="C", ctx=None, **kwargs):
        if order != "C":
            raise NotImplementedError(f"F.np: order={order!r} (only 'C')")
        kwargs.update(fixed)
        return np_sym(op(*args, dtype="float32" if dtype is None else dtype, **kwargs))
    return fn


def _zeros(shape, dtype=None, order="C", ctx=None):
    return _creation(lambda **k: _sym().zeros(shape=shape, **k))(dtype=dtype, order=order)


def _ones(shape, dtype=None, order="C", ctx=None):
    return _creation(lambda **k: _sym().ones(shape=shape, **k))(dtype=dtype, order=order)


def _full(shape, fill_value, dtype=None, order="C", ctx=None):
    return _creation(lambda **k: _sym().full(shape=shape, val=fill_value, **k))(
        dtype=dtype, order=order)


def _identity(n, dtype=None, ctx=None):
    return _creation(lambda **k: _sym().eye(n, **k))(dtype=dtype)


np = _Ops("np", _NP, {
    "add": _arith("add"), "subtract": _arith("subtract"), "multiply": _arith("multiply"),
    "divide": _arith("true_divide"), "true_divide": _arith("true_divide"),
    "power": _arith("power"), "mod": _arith("mod"), "remainder": _arith("mod"),
    "zeros": _zeros, "ones": _ones, "full": _full, "identity": _identity,
    "sum": _reduce("sum"), "mean": _reduce("mean"), "max": _reduce("max"),
    "min": _reduce("min"), "prod": _reduce("prod"), "amax": _reduce("max"),
    "amin": _reduce("min"), "reshape": _np_reshape, "transpose": _transpose,
    "concatenate": _concatenate, "stack": _stack, "expand_dims": _expand_dims,
    "squeeze": _squeeze, "split": _split, "array_split": _split, "hsplit": _hsplit,
    "vsplit": _vsplit, "dsplit": _dsplit})

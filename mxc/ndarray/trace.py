"""Tracing: operators applied to *traced values* (shape, dtype and device only) instead of
arrays, recording each step. The executor and CachedOp trace a symbol's nodes into a plan
(mxc/executor/graph.py); autograd traces a node's ``OpDef.grad`` once to replay its backward as
kernel pushes (mxc/autograd.py). Both call the same OpDefs as ``mx.nd``: ``infer`` gives every
shape and dtype, composite operators and gradient functions get ``Trace.F``, a graph-building
namespace in place of ``mx.nd``. What cannot be traced raises ``Untraceable`` (which lives in the
operator registry, so that operators can raise it too).
"""
import math

import numpy as np

from ..base import MXNetError
from ..ops import registry
from ..ops.registry import Untraceable
from .ndarray import NDArray, _nd

__all__ = ["Untraceable", "Trace", "TVal", "EXT", "CONST", "INT", "OWN", "RESHAPES"]

# value kinds
EXT = 0      # given by the caller at run time (inputs, aux states, head gradients)
CONST = 1    # an array made while tracing (F.array, F.zeros...)
INT = 2      # an intermediate: planned storage
OWN = 3      # has its own array (graph outputs, gradient results)


# ---- tracing -------------------------------------------------------------------------------------
_BINOPS = {
    # name: (same-shape op, broadcast op, x OP s, s OP x)
    "add": ("elemwise_add", "broadcast_add", "_plus_scalar", "_plus_scalar"),
    "sub": ("elemwise_sub", "broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "mul": ("elemwise_mul", "broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "truediv": ("elemwise_div", "broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": (None, "broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "pow": (None, "broadcast_power", "_power_scalar", "_rpower_scalar"),
    "eq": (None, "broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "ne": (None, "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": (None, "broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "ge": (None, "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lt": (None, "broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "le": (None, "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}
_SCALARS = (int, float, np.generic)


class TVal:
    """A traced value: what a gradient function sees instead of an NDArray."""
    __slots__ = ("t", "vid")

    def __init__(self, t, vid):
        self.t = t
        self.vid = vid

    shape = property(lambda self: self.t.shapes[self.vid])
    _shape = shape
    dtype = property(lambda self: self.t.dtypes[self.vid].type)
    _dtype = property(lambda self: self.t.dtypes[self.vid])
    ndim = property(lambda self: len(self.t.shapes[self.vid]))
    size = property(lambda self: math.prod(self.t.shapes[self.vid]))
    context = property(lambda self: self.t.ctxs[self.vid])
    ctx = context
    stype = "default"
    _sparse = False

    def _bin(self, other, name, reflected):
        same, bcast, sc, rsc = _BINOPS[name]
        F = self.t.F
        if isinstance(other, (TVal, NDArray)):
            other = self.t.lift(other)
            a, b = (other, self) if reflected else (self, other)
            if same is not None and a.shape == b.shape and a._dtype == b._dtype:
                return F._call(same, (a, b), {})
            return F._call(bcast, (a, b), {})
        if isinstance(other, _SCALARS) and not isinstance(other, bool):
            op = registry.get(rsc if reflected else sc)
            return self.t.apply1(op, {"scalar": float(other), "is_int": True}, [self])
        raise Untraceable(f"operand of type {type(other).__name__}")

    def __neg__(self):
        return self.t.F._call("negative", (self,), {})

    def __getitem__(self, key):
        raise Untraceable("indexing a traced value")

    def __bool__(self):
        raise Untraceable("truth value of a traced value")

    def __len__(self):
        return self.shape[0]

    @property
    def T(self):
        return self.t.F._call("transpose", (self,), {})

    def astype(self, dtype, copy=True):
        return self.t.F._call("cast", (self,), {"dtype": np.dtype(dtype).name})

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = shape
        return self.t.F._call("reshape", (self,), kwargs)

    def copy(self):
        return self.t.F._call("_copy", (self,), {})

    def asnumpy(self):
        raise Untraceable("asnumpy of a traced value")

    asscalar = asnumpy
    wait_to_read = asnumpy

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        F = self.t.F

        def method(*args, **kwargs):
            return F._call(name, (self,) + args, kwargs)
        return method


def _make_binop(name, reflected):
    def f(self, other):
        return self._bin(other, name, reflected)
    return f


for _n in _BINOPS:
    setattr(TVal, f"__{_n}__", _make_binop(_n, False))
    if _n in ("add", "sub", "mul", "truediv", "mod", "pow"):
        setattr(TVal, f"__r{_n}__", _make_binop(_n, True))
setattr(TVal, "__div__", TVal.__truediv__)
TVal.__hash__ = object.__hash__


class _TraceF:
    """The graph-building namespace handed to composites and gradient functions as ``F``."""

    def __init__(self, t):
        self._t = t

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ("array", "zeros", "ones", "full", "empty", "arange"):
            return self._const_maker(name)
        return lambda *args, **kwargs: self._call(name, args, kwargs)

    def _const_maker(self, name):
        def make(*args, **kwargs):
            kwargs.setdefault("ctx", self._t.cur)
            return self._t.lift(getattr(_nd(), name)(*args, **kwargs))
        return make

    def _call(self, name, args, kwargs):
        t = self._t
        try:
            op = registry.get(name)
        except MXNetError:
            raise Untraceable(f"F.{name} is not a registered operator") from None
        kwargs = dict(kwargs)
        kwargs.pop("name", None)
        kwargs.pop("ctx", None)
        if kwargs.pop("out", None) is not None:
            raise Untraceable(f"F.{name}(..., out=...)")
        if op.variadic:
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            kwargs.setdefault(op.variadic, len(args))
            inputs = list(args)
        else:
            nin = len(op.inputs)
            if len(args) > nin:
                free = [p.name for p in op.params if p.name not in kwargs]
                kwargs.update(zip(free, args[nin:]))
                args = args[:nin]
            given = list(args) + [kwargs.pop(n, None) for n in op.inputs[len(args):]]
            if op.input_names is None:
                inputs = given
            else:
                by_name = dict(zip(op.inputs, given))
                inputs = [by_name.get(n) for n in op.input_names(op.parse(kwargs))]
            if any(x is None for x in inputs):
                raise Untraceable(f"F.{name}: an input is missing")
        attrs = op.parse(kwargs)
        inputs = [t.lift(x) for x in inputs]
        if op.composite is not None:
            return t.composite(op, attrs, inputs)
        outs = t.apply(op, attrs, inputs)
        if op.name == "zeros_like":
            t.zeros.add(outs[0].vid)
        nvis = op.n_visible(attrs)
        return outs[0] if nvis == 1 else outs[:nvis]


class Trace:
    """Values (shape, dtype, kind, context) and the steps that compute them. ``cur`` is the
    context new values get: the placed context of the node being traced (group2ctx)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.cur = ctx
        self.shapes, self.dtypes, self.kinds, self.ctxs = [], [], [], []
        self.const = {}
        self.zeros = set()      # values known to be zero (zeros_like): gradients that vanish
        self.steps = []
        self.label = None
        self.F = _TraceF(self)

    def new(self, shape, dtype, kind=INT):
        self.shapes.append(tuple(int(d) for d in shape))
        self.dtypes.append(np.dtype(dtype))
        self.kinds.append(kind)
        self.ctxs.append(self.cur)
        return TVal(self, len(self.shapes) - 1)

    def lift(self, x):
        if isinstance(x, TVal):
            if x.t is not self:
                raise Untraceable("a traced value of another graph")
            return x
        if isinstance(x, NDArray):
            if x._sparse:
                raise Untraceable("sparse constant")
            v = self.new(x.shape, x.dtype, CONST)
            self.ctxs[v.vid] = x.context
            self.const[v.vid] = x
            return v
        raise Untraceable(f"an input of type {type(x).__name__}")

    def composite(self, op, attrs, inputs):
        if op.name == "Custom" or op.open_params:
            raise Untraceable(f"{op.name} runs Python")
        return op.composite(self.F, attrs, *inputs)

    def apply(self, op, attrs, inputs):
        """Add a step for kernel operator `op`; returns every output (hidden ones too)."""
        if op.forward is None or op.infer is None:
            raise Untraceable(f"{op.name} has no kernel forward")
        for x in inputs:
            if self.kinds[x.vid] is None:
                raise Untraceable("bad value")
        shapes = [self.shapes[x.vid] for x in inputs]
        dtypes = [self.dtypes[x.vid].type for x in inputs]
        oshapes, odtypes = op.infer(attrs, shapes, dtypes)
        outs = [self.new(s, d) for s, d in zip(oshapes, odtypes)]
        self.steps.append((op, attrs, [x.vid for x in inputs], [o.vid for o in outs], self.label))
        return outs

    def apply1(self, op, attrs, inputs):
        return self.apply(op, attrs, inputs)[0]

    def nbytes(self, vid):
        # math.prod: np.prod costs microseconds per short tuple, and planning asks thousands
        return math.prod(self.shapes[vid]) * self.dtypes[vid].itemsize


# operators that only reinterpret the shape: a view when the plan allows
RESHAPES = frozenset(("Reshape", "Flatten", "expand_dims", "squeeze"))

"""``mx.operator``: operators written in Python, with MXNet 1.x's CustomOp API.

    @mx.operator.register("sqr")
    class SqrProp(mx.operator.CustomOpProp):
        def list_arguments(self): return ["data"]
        def list_outputs(self): return ["output"]
        def infer_shape(self, in_shape): return in_shape, [in_shape[0]], []
        def create_operator(self, ctx, shapes, dtypes): return Sqr()

    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    y = mx.nd.Custom(x, op_type="sqr")       # works under autograd.record() too
"""
import ctypes
import itertools
import warnings
from collections import namedtuple

import numpy as np

from . import symbol as _sym
from .base import MXNetError, NDArrayHandle
from .ndarray import NDArray
from .ops import registry
from .ops.custom import PROPS

# MXNet's module has no __all__: code written for it (its test_operator.py) takes ctypes,
# NDArrayHandle and NDArray from ``from mxnet.operator import *`` to unwrap a monitor's arrays
__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "PythonOp", "NumpyOp", "NDArrayOp", "OperatorArguments", "get_operator_arguments",
           "ctypes", "NDArrayHandle", "NDArray"]


class CustomOp:
    """Base class of a Python operator's computation."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute out_data from in_data (use self.assign(dst, req, src))."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute in_grad from out_grad (use self.assign(dst, req, src))."""

    def assign(self, dst, req, src):
        """Write src into dst as req says: 'null' (skip), 'write'/'inplace', or 'add'."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise MXNetError(f"CustomOp.assign: unknown req {req!r}")


class CustomOpProp:
    """Base class of a Python operator's properties: arguments, outputs, shapes and types."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        for i, st in enumerate(in_stype):
            if st != "default":
                raise MXNetError(f"CustomOpProp: input {i} has storage type {st!r}; implement "
                                 "infer_storage_type for non-default storage")
        return in_stype, ["default"] * len(self.list_outputs()), \
            ["default"] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        return (["default"] * len(ograd_stype), ["default"] * len(in_stype),
                ["default"] * len(out_stype), ["default"] * len(igrad_stype),
                ["default"] * len(aux_stype))

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


def register(reg_name):
    """Class decorator registering a CustomOpProp subclass as op_type `reg_name`."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"mx.operator.register({reg_name!r}) expects a CustomOpProp subclass")
        PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_all_registered_operators():
    """Names of every operator: the registry's and the registered custom ones."""
    return sorted(set(registry.names()) | set(PROPS))


# ---- MXNet 1.x's deprecated Python operators and operator introspection ----------------------
# MXNet ran NumpyOp and NDArrayOp through C callbacks of a ``_Native``/``_NDArray`` operator;
# here ``get_symbol`` registers a ``Custom`` operator for the instance (one op_type per instance,
# held for the life of the process as MXNet held the callbacks) and returns ``mx.sym.Custom``.
_ids = itertools.count()


class PythonOp:
    """Base class of the deprecated Python operators (use CustomOp)."""

    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn("PythonOp has been deprecated. Please use CustomOp", stacklevel=2)

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def need_top_grad(self):
        return self.need_top_grad_

    # ---- shared by NumpyOp and NDArrayOp --------------------------------------------------
    def _custom_symbol(self, args, kwargs, to_user, from_user):
        pyop = self

        class _Op(CustomOp):
            def forward(self, is_train, req, in_data, out_data, aux):
                outs = [to_user(o, True) for o in out_data]
                pyop.forward(in_data=[to_user(x, False) for x in in_data], out_data=outs)
                for dst, r, src in zip(out_data, req, outs):
                    self.assign(dst, r, from_user(src, dst))

            def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
                grads = [to_user(g, True) for g in in_grad]
                pyop.backward(out_grad=[to_user(g, False) for g in out_grad],
                              in_data=[to_user(x, False) for x in in_data],
                              out_data=[to_user(o, False) for o in out_data], in_grad=grads)
                for dst, r, src in zip(in_grad, req, grads):
                    self.assign(dst, r, from_user(src, dst))

        class _Prop(CustomOpProp):
            def __init__(self, **_ignored):
                super().__init__(need_top_grad=pyop.need_top_grad())

            def list_arguments(self):
                return pyop.list_arguments()

            def list_outputs(self):
                return pyop.list_outputs()

            def infer_shape(self, in_shape):
                ishape, oshape = pyop.infer_shape(in_shape)
                if len(ishape) != len(in_shape) or len(oshape) != len(pyop.list_outputs()):
                    raise MXNetError(f"{type(pyop).__name__}.infer_shape returned "
                                     f"{len(ishape)} input and {len(oshape)} output shapes")
                return ishape, oshape, []

            def create_operator(self, ctx, in_shapes, in_dtypes):
                return _Op()

        op_type = f"_{type(self).__name__}_{next(_ids)}"
        PROPS[op_type] = _Prop
        self.info_ = op_type
        PythonOp._ref_holder.append(self)
        return _sym.Custom(*args, op_type=op_type, **kwargs)


class NumpyOp(PythonOp):
    """A deprecated operator whose forward and backward work on numpy arrays (float32 as
    MXNet gave them); results written into out_data / in_grad are copied back."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn("NumpyOp has been deprecated. Please use CustomOp", stacklevel=2)

    def get_symbol(self, *args, **kwargs):
        def to_user(x, writable):
            a = x.asnumpy()
            return a if writable else a.copy()

        def from_user(a, dst):
            return np.asarray(a, dtype=dst.dtype)
        return self._custom_symbol(args, kwargs, to_user, from_user)


class NDArrayOp(PythonOp):
    """A deprecated operator whose forward and backward work on NDArrays."""

    def __init__(self, need_top_grad=True):
        super().__init__(need_top_grad)
        warnings.warn("NDArrayOp has been deprecated. Please use CustomOp", stacklevel=2)

    def get_symbol(self, *args, **kwargs):
        def to_user(x, writable):
            return x.copy() if writable else x

        def from_user(a, dst):
            return a
        return self._custom_symbol(args, kwargs, to_user, from_user)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps


OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])


def _type_string(p):
    """A parameter's type as MXNet's operator documentation writes it (its quirks included:
    no space after an enumeration, booleans' defaults as 0/1, empty shapes as [])."""
    if p.choices is not None:
        text = "{" + ", ".join(repr(c) for c in sorted(p.choices)) + "},"
    else:
        text = {bool: "boolean", int: "int", float: "float", str: "string"}.get(
            p.kind, "Shape(tuple)" if p.kind in ("shape", "shape_opt") else str(p.kind))
        if p.optional:
            text += " or None"
        text += ","
    if p.required:
        return text + " required"
    default = p.default
    if isinstance(default, bool):
        default = repr(int(default))
    elif isinstance(default, tuple):
        default = "[" + ",".join(str(v) for v in default) + "]"
    else:
        default = repr(default)
    return f"{text}{'' if p.choices is not None else ' '}optional, default={default}"


def get_operator_arguments(op_name):
    """OperatorArguments(narg, names, types) of a registered operator: its array inputs
    ('NDArray-or-Symbol') then its parameters, as MXNet's MXSymbolGetAtomicSymbolInfo."""
    try:
        op = registry.get(op_name)
    except (KeyError, ValueError, MXNetError):
        raise MXNetError(f"get_operator_arguments: no operator named {op_name!r}") from None
    names = list(op.inputs) + [p.name for p in op.params]
    types = ["NDArray-or-Symbol"] * len(op.inputs) + [_type_string(p) for p in op.params]
    return OperatorArguments(len(names), names, types)

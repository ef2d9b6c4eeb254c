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
from .base import MXNetError
from .ops.custom import PROPS
from .ops._python_op import (NDArrayOp, NumpyOp, OperatorArguments, PythonOp,  # noqa: F401
                             get_operator_arguments)

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "PythonOp", "NumpyOp", "NDArrayOp", "OperatorArguments", "get_operator_arguments"]


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
    from .ops import registry
    return sorted(set(registry.names()) | set(PROPS))

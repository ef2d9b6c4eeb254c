"""``Custom``: operators written in Python (``mx.operator.CustomOp`` / ``CustomOpProp``).

The user's classes are registered by name in PROPS (``mx.operator.register``). A Custom call
creates the prop from the call's keyword arguments (strings, as MXNet passes them), infers
output shapes and dtypes through it, creates the operator and runs its ``forward`` on NDArrays
right away in the calling thread (its NDArray operations are queued on the engine as usual).
Under autograd the call is one node whose gradient runs the operator's ``backward``.

An exception in the user's ``forward`` or ``backward`` does not leave the call: as in MXNet,
where the operator runs on an engine worker, the outputs (input gradients) carry it and the
next wait on them raises it as MXNetError (mxc/ops/held_error.py).
"""
import traceback

import numpy as np

from .._core import engine as _engine
from ..base import MXNetError
from .params import Param
from .registry import OpDef, register, is_training
from .held_error import hold_error

PROPS = {}          # op_type -> CustomOpProp subclass


def _prop(attrs):
    op_type = attrs["op_type"]
    try:
        cls = PROPS[op_type]
    except KeyError:
        raise MXNetError(f"Custom: op_type {op_type!r} is not registered "
                         f"(use @mx.operator.register({op_type!r}))") from None
    kwargs = {k: v for k, v in attrs.items()
              if k not in ("op_type", "num_args") and not k.startswith("_mxc")}
    return cls(**kwargs)


def _shapes_dtypes(prop, inputs):
    n_args = len(prop.list_arguments())
    n_aux = len(prop.list_auxiliary_states())
    if len(inputs) != n_args + n_aux:
        raise MXNetError(f"Custom({type(prop).__name__}): expected {n_args} argument(s) and "
                         f"{n_aux} auxiliary state(s), got {len(inputs)} input(s)")
    res = prop.infer_shape([list(x.shape) for x in inputs[:n_args]])
    out_shapes = res[1]
    tres = prop.infer_type([x.dtype for x in inputs[:n_args]])
    out_types = tres[1]
    return [tuple(s) for s in out_shapes], [np.dtype(t) for t in out_types], n_args


def _hold(attrs, stage, exc, inputs, outputs):
    """Leave `exc` (raised by the user's `stage`) on `outputs`, with its innermost frame."""
    where = traceback.format_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    hold_error(f"Custom({attrs.get('op_type')})",
               MXNetError(f"{stage} raised {type(exc).__name__}: {exc}\n{''.join(where)}"),
               inputs, outputs)


def _forward(F, attrs, *inputs):
    prop = _prop(attrs)
    out_shapes, out_types, n_args = _shapes_dtypes(prop, inputs)
    ctx = inputs[0].context if inputs else None
    outs = [F.zeros(s, ctx=ctx, dtype=t) for s, t in zip(out_shapes, out_types)]
    op = prop.create_operator(ctx, [x.shape for x in inputs[:n_args]],
                              [x.dtype for x in inputs[:n_args]])
    try:
        # profiled as MXNet names it: "<op_type>::pure_python", its operations "<op_type>::<op>"
        with _engine.ProfileScope(attrs["op_type"], span=True):
            op.forward(is_train=is_training(), req=["write"] * len(outs),
                       in_data=list(inputs[:n_args]), out_data=outs, aux=list(inputs[n_args:]))
    except Exception as e:      # noqa: BLE001  (any error of the user's code, as MXNet)
        _hold(attrs, "forward", e, inputs, outs)
    attrs["_mxc_op"] = (prop, op)       # the instance backward runs (this call's attrs only)
    return outs[0] if len(outs) == 1 else outs


def _grad(F, attrs, inputs, outputs, out_grads):
    prop, op = attrs["_mxc_op"]
    n_args = len(prop.list_arguments())
    in_grads = [F.zeros_like(x) for x in inputs[:n_args]]
    try:
        with _engine.ProfileScope(f"_backward_{attrs.get('op_type')}", span=True):
            op.backward(req=["write"] * n_args, out_grad=list(out_grads),
                        in_data=list(inputs[:n_args]), out_data=list(outputs), in_grad=in_grads,
                        aux=list(inputs[n_args:]))
    except Exception as e:      # noqa: BLE001
        _hold(attrs, "backward", e, list(inputs) + list(outputs) + list(out_grads), in_grads)
    return in_grads + [None] * (len(inputs) - n_args)


def _infer_inputs(attrs, shapes):
    """Argument and auxiliary-state shapes the prop's infer_shape completes (MXNet asks the
    prop for them: an aux state's shape usually follows from the data's)."""
    prop = _prop(attrs)
    na = len(prop.list_arguments())
    if any(s is None for s in shapes[:na]):
        return shapes
    res = prop.infer_shape([list(s) for s in shapes[:na]])
    ins = [tuple(int(d) for d in x) for x in res[0]]
    aux = [tuple(int(d) for d in x) for x in res[2]] if len(res) > 2 and res[2] else []
    out = list(shapes)
    for i, x in enumerate(ins + aux):
        if i < len(out) and out[i] is None:
            out[i] = x
    return out


register(OpDef(
    "Custom", inputs=("data",), variadic="num_args", infer_inputs=_infer_inputs,
    params=(Param("op_type", str, required=True), Param("num_args", int, 0)),
    composite=_forward, grad=_grad, open_params=True,
    num_outputs=lambda a: len(_prop(a).list_outputs()),
    doc="Apply a custom operator implemented in Python (mx.operator.register)."))

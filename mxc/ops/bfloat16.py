"""bfloat16 on the CPU: an operator computes in float32, rounded to bfloat16 at its boundary.

mxc's CPU kernels have no bfloat16 instances (its CUDA kernels do). Every kernel operator takes
bfloat16 arrays on the CPU by one rule, which the tests take as the reference: its bfloat16
inputs are cast to float32, the float32 operator runs, and its outputs that come out float32
are rounded to bfloat16 (round to nearest even, ml_dtypes' conversion: the cast kernel's).
bfloat16 values are float32 values, so data movement (reshape, slice, concat) stays bit-exact.
`wrap` puts the rule around an OpDef's ``infer`` and ``forward`` when it is registered, so
mx.nd, autograd, the executor, CachedOp and the symbol front's dtype inference agree:

- infer: bfloat16 input dtypes, and a "dtype" parameter of bfloat16 (zeros, full, arange,
  one_hot), reach the operator as float32; its float32 outputs are bfloat16.
- forward on the CPU: float32 copies of the bfloat16 inputs and float32 temporaries for the
  bfloat16 outputs, the operator's forward on them, then casts into the outputs; bfloat16
  inputs the operator updates in place (``mutate``: BatchNorm's moving statistics, optimizer
  states) are cast back too.
- forward with a GPU array: the operator's own (the CUDA kernels have bfloat16 instances:
  _launch.TRAIN_FLOATS, the elementwise family).

MXNet 1.9.1's CPU (oneDNN) takes bfloat16 in fewer operators (Convolution, FullyConnected,
Pooling, Activation, BatchNorm, the elementwise ones...; dot, batch_dot and LayerNorm refuse it);
mxc takes it wherever the float32 operator runs. An operator whose float32 form refuses the
inputs (dequantize wants int8/uint8 data) raises MXNetError naming it and bfloat16.
"""
import functools

import numpy as np

from .._core import handle as _h
from ..base import OperatorInputError, bfloat16

__all__ = ["wrap", "BFLOAT16_CODE"]

BFLOAT16_CODE = 12              # MXNet's type flag (mshadow kBfloat16)
_F32 = np.dtype(np.float32)
_BF_TYPE = bfloat16.type        # traced graphs hand infer dtype types, not dtypes
# the cast kernel takes every bfloat16 pair itself
_NATIVE = frozenset(("Cast",))
_CAST = None


def _is_bf(d):
    # (identity, not ==: a dtype compared with a str parses the str)
    return d is bfloat16 or d is _BF_TYPE or (type(d) is str and d == "bfloat16")


def _attrs_f32(attrs):
    """attrs with a bfloat16 "dtype" parameter made float32."""
    if attrs and attrs.get("dtype") == "bfloat16":
        return dict(attrs, dtype="float32")
    return attrs


def _refuse(op, why):
    return OperatorInputError(f"{op.name}: bfloat16 is not supported ({why})")


def _wrap_infer(op, infer):
    # (this runs on every operator call: the common case, no bfloat16, is one loop in line)
    @functools.wraps(infer)     # the operator's own name, module and attributes
    def infer_bf16(attrs, shapes, dtypes):
        for d in dtypes:
            if d is bfloat16 or d is _BF_TYPE or (type(d) is str and d == "bfloat16"):
                break
        else:
            if not attrs or attrs.get("dtype") != "bfloat16":
                return infer(attrs, shapes, dtypes)
        in32 = [_F32 if d is not None and _is_bf(d) else d for d in dtypes]
        try:
            oshapes, odtypes = infer(_attrs_f32(attrs), shapes, in32)
        except ValueError as e:
            raise _refuse(op, f"its float32 form refused: {e}") from None
        return oshapes, [bfloat16 if d is not None and np.dtype(d) == _F32 else d
                         for d in odtypes]
    return infer_bf16


def _cast(x, y):
    global _CAST
    if _CAST is None:
        from .registry import get
        _CAST = get("Cast")
    _CAST.forward(_CAST.parse({"dtype": y._dtype.name}), [x], [y])


def _wrap_forward(op, forward):
    mutate = op.mutate

    @functools.wraps(forward)   # (kernel_forward's .kernel and the module stay readable)
    def forward_bf16(attrs, inputs, outputs):
        for x in inputs:
            if x._dcode == BFLOAT16_CODE:
                break
        else:
            for x in outputs:
                if x._dcode == BFLOAT16_CODE:
                    break
            else:
                return forward(attrs, inputs, outputs)
        for arrays in (inputs, outputs):
            for x in arrays:
                if x._ctx.device_typeid == 2:       # a GPU: its own bfloat16 kernels
                    return forward(attrs, inputs, outputs)
        ins = []
        for x in inputs:
            if x._dcode == BFLOAT16_CODE:
                t = _h.empty(type(x), x._shape, _F32, x._ctx)
                _cast(x, t)
                x = t
            ins.append(x)
        outs = [_h.empty(type(o), o._shape, _F32, o._ctx) if o._dcode == BFLOAT16_CODE else o
                for o in outputs]
        forward(_attrs_f32(attrs), ins, outs)
        for o, t in zip(outputs, outs):
            if t is not o:
                _cast(t, o)
        for i in mutate:
            if ins[i] is not inputs[i]:
                _cast(ins[i], inputs[i])
    return forward_bf16


def wrap(op):
    """Give kernel operator `op` the bfloat16 rule (module doc); composites need none (their
    parts have it), the cast kernel takes bfloat16 itself, and Custom (open_params) hands the
    user's code the arrays as they are (bfloat16 NDArrays, whose operators have the rule)."""
    if op.forward is None or op.name in _NATIVE or op.open_params:
        return op
    op.infer = _wrap_infer(op, op.infer)
    op.forward = _wrap_forward(op, op.forward)
    return op

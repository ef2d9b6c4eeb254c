"""``_contrib_quantized_embedding``: MXNet 1.9.1's Embedding over an int8 weight (kernel
``embedding`` in csrc/kernels/quantization.h).

Inputs: data (the indices, float32 or any integer dtype, not quantized: MXNet keeps Embedding's
data input float when it quantizes the layer), weight (int8, input_dim x output_dim), min_weight,
max_weight. The output is the looked-up int8 rows with the weight's range.
"""
import numpy as np

from ..base import OperatorInputError
from .gather import _EMB_PARAMS, _emb_check
from .quantization import _RANGE_OUTPUTS, _check_dtype, _check_ranges, _nd, _qforward, _rules
from .quantization import _zero_grad
from .registry import OpDef, register

_OP = "_contrib_quantized_embedding"
_INDEX_DTYPES = ("float32", "float64", "int32", "int64", "uint8", "int8")


def _infer(a, shapes, dtypes):
    _emb_check(a)
    _check_dtype(_OP, "data", dtypes[0], _INDEX_DTYPES)
    _check_dtype(_OP, "weight", dtypes[1], ("int8",))
    _check_ranges(_OP, shapes, dtypes, 2)
    want = (a["input_dim"], a["output_dim"])
    if _nd(shapes[1]) != want:
        raise OperatorInputError(f"{_OP}: weight has shape {_nd(shapes[1])}, expected {want}")
    return [_nd(shapes[0]) + (a["output_dim"],), (1,), (1,)], [np.int8, np.float32, np.float32]


def _infer_inputs(a, shapes):
    shapes = list(shapes)
    if len(shapes) > 1 and shapes[1] is None:
        shapes[1] = (a["input_dim"], a["output_dim"])
    for i in (2, 3):
        if i < len(shapes) and shapes[i] is None:
            shapes[i] = (1,)
    return shapes


register(OpDef(_OP, inputs=("data", "weight", "min_weight", "max_weight"), params=_EMB_PARAMS,
               **_rules(_infer, "float32", 2, _infer_inputs, infer_back=None),
               forward=_qforward("embedding", ints=(), name=_OP), grad=_zero_grad,
               infer_dtypes=lambda a, d: ["int8", "float32", "float32"], num_outputs=3,
               output_names=_RANGE_OUTPUTS,
               doc="Rows of the int8 weight at the indices in data (truncated and clipped into "
                   "range, as Embedding); the weight's range passes through."))

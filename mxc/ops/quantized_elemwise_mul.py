"""``_contrib_quantized_elemwise_mul``: MXNet 1.9.1's int8 elementwise product (kernel
``elemwise_mul`` in csrc/kernels/quantization.h, MXNet's plain CPU loop).

lhs and rhs are int8 of one shape (no broadcasting, as MXNet), then the min and max of each.
The output is int32 with the product's range (uncalibrated), int8 in the calibrated range
``min_calib_range``/``max_calib_range``, or, with ``enable_float_output``, float32 and alone.
"""
import numpy as np

from ..base import OperatorInputError
from .quantization import _CALIB_PARAMS, _RANGE_OUTPUTS, _calibrated, _check_dtype
from .quantization import _check_ranges, _nd, _qforward, _rules, _zero_grad
from .params import Param
from .registry import OpDef, register

_OP = "_contrib_quantized_elemwise_mul"


def _out_dtypes(a, d=None):
    if a["enable_float_output"]:
        return ["float32"]
    return ["int8" if _calibrated(a) else "int32", "float32", "float32"]


def _infer(a, shapes, dtypes):
    _check_dtype(_OP, "lhs", dtypes[0], ("int8",))
    _check_dtype(_OP, "rhs", dtypes[1], ("int8",))
    _check_ranges(_OP, shapes, dtypes, 2)
    if _nd(shapes[0]) != _nd(shapes[1]):
        raise OperatorInputError(f"{_OP}: lhs has shape {_nd(shapes[0])} but rhs has shape "
                                 f"{_nd(shapes[1])} (no broadcasting, as MXNet)")
    outs = _out_dtypes(a)
    return [_nd(shapes[0])] + [(1,)] * (len(outs) - 1), [np.dtype(t) for t in outs]


register(OpDef(_OP, inputs=("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"),
               params=_CALIB_PARAMS[1:] + (Param("enable_float_output", bool, False),),
               **_rules(_infer, "int8", 2),
               forward=_qforward("elemwise_mul", ints=("calibrated", "float_output"),
                                 floats=("min_calib_range", "max_calib_range"),
                                 fill={"calibrated": lambda a, i, o: int(_calibrated(a)),
                                       "float_output":
                                           lambda a, i, o: int(a["enable_float_output"]),
                                       ("min_calib_range", "max_calib_range"):
                                           lambda a, i, o: (a["min_calib_range"] or 0.0,
                                                            a["max_calib_range"] or 0.0)},
                                 name=_OP),
               grad=_zero_grad, infer_dtypes=_out_dtypes,
               num_outputs=lambda a: 1 if a["enable_float_output"] else 3,
               output_names=lambda a: ("output",) if a["enable_float_output"] else
               _RANGE_OUTPUTS,
               doc="lhs * rhs of int8 arrays: int32 with the product's range, int8 in the "
                   "calibrated range (truncated, as MXNet), or float32 with "
                   "enable_float_output."))

"""``_contrib_quantized_batch_norm``: MXNet 1.9.1's int8 BatchNorm (inference only), as its oneDNN
CPU build computes it (kernel ``batch_norm`` in csrc/kernels/quantization.h).

Inputs as MXNet: data (int8/uint8), gamma, beta, moving_mean, moving_var (float32, one per
channel; the statistics are auxiliary states, as BatchNorm's), min_data, max_data. The output is
int8 in the calibrated range ``min_calib_range``/``max_calib_range``, which the operator needs
(MXNet refuses to run it uncalibrated); ``mx.contrib.quantization`` writes it there, as
BatchNorm's quantized form calibrates its own output (FNeedCalibrateOutput).
"""
import numpy as np

from ..base import MXNetError, OperatorInputError
from .normalization import _BN_PARAMS, _bn_axis
from .quantization import _RANGE_OUTPUTS, _calibrated, _check_dtype, _check_ranges, _nd
from .quantization import _qforward, _rules, _zero_grad
from .registry import OpDef, register

_OP = "_contrib_quantized_batch_norm"
_INPUTS = ("data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data")


def _infer(a, shapes, dtypes):
    _check_dtype(_OP, "data", dtypes[0], ("int8", "uint8"))
    for i in range(1, 5):
        _check_dtype(_OP, _INPUTS[i], dtypes[i], ("float32",))
    _check_ranges(_OP, shapes, dtypes, 5)
    ds = _nd(shapes[0])
    ch = ds[_bn_axis(_OP, a, len(ds))]
    for i in range(1, 5):
        if _nd(shapes[i]) != (ch,):
            raise OperatorInputError(f"{_OP}: {_INPUTS[i]} has shape {_nd(shapes[i])}, expected "
                                     f"{(ch,)} (the data's channels)")
    return [ds, (1,), (1,)], [np.int8, np.float32, np.float32]


def _infer_inputs(a, shapes):
    shapes = list(shapes)
    if shapes[0] is not None and len(shapes[0]) >= 1:
        ch = tuple(shapes[0])[_bn_axis(_OP, a, len(shapes[0]))]
        for i in range(1, 5):
            if shapes[i] is None:
                shapes[i] = (ch,)
    for i in (5, 6):
        if i < len(shapes) and shapes[i] is None:
            shapes[i] = (1,)
    return shapes


def _layout(a, inputs, outputs):
    """(outer, channels, inner): the data around its channel axis."""
    shape = inputs[0].shape
    ax = _bn_axis(_OP, a, len(shape))
    return (int(np.prod(shape[:ax], dtype=np.int64)), int(shape[ax]),
            int(np.prod(shape[ax + 1:], dtype=np.int64)))


_kernel = _qforward("batch_norm", ints=("outer", "channels", "inner"),
                    floats=("eps", "min_calib_range", "max_calib_range"),
                    fill={("outer", "channels", "inner"): _layout}, name=_OP)


def _forward(a, inputs, outputs):
    if not _calibrated(a):
        raise MXNetError(f"{_OP}: min_calib_range and max_calib_range are required (MXNet's "
                         f"quantized BatchNorm does not run uncalibrated; quantize with "
                         f"calib_mode 'naive' or 'entropy')")
    _kernel(a, inputs, outputs)


register(OpDef(_OP, inputs=_INPUTS, params=_BN_PARAMS,
               **_rules(_infer, "int8", infer_inputs=_infer_inputs),
               forward=_forward, grad=_zero_grad, mutate=(3, 4), num_outputs=3,
               output_names=_RANGE_OUTPUTS, infer_dtypes=lambda a, d: ["int8", "float32",
                                                                       "float32"],
               doc="BatchNorm of int8/uint8 data with the moving statistics (inference), into "
                   "int8 in the calibrated range: y = x * gamma / sqrt(var + eps) + beta - "
                   "mean * gamma / sqrt(var + eps), scaled from the data's range to the "
                   "output's. Returns (output, min_calib_range, max_calib_range)."))

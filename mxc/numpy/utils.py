"""numpy's dtype objects and constants, as ``mxnet.numpy`` re-exports them."""
import numpy as _onp

__all__ = ["bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "dtype", "pi", "e", "euler_gamma", "inf",
           "nan", "NINF", "PINF", "NAN", "NaN", "NZERO", "PZERO", "newaxis", "finfo", "iinfo",
           "integer", "floating", "number", "generic", "signedinteger", "unsignedinteger",
           "inexact", "can_cast", "promote_types"]

bool_ = _onp.bool_
bool = _onp.bool_           # noqa: A001  (mxnet.numpy exports numpy's bool, as numpy 2 does)
int8, int16, int32, int64 = _onp.int8, _onp.int16, _onp.int32, _onp.int64
uint8, uint16, uint32, uint64 = _onp.uint8, _onp.uint16, _onp.uint32, _onp.uint64
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
dtype = _onp.dtype
pi, e, euler_gamma = _onp.pi, _onp.e, _onp.euler_gamma
inf, nan, NINF, PINF, NAN, NaN, NZERO, PZERO = (_onp.inf, _onp.nan, -_onp.inf, _onp.inf,
                                                _onp.nan, _onp.nan, -0.0, 0.0)
newaxis = None
finfo, iinfo = _onp.finfo, _onp.iinfo
integer, floating, number, generic = _onp.integer, _onp.floating, _onp.number, _onp.generic
signedinteger, unsignedinteger, inexact = _onp.signedinteger, _onp.unsignedinteger, _onp.inexact
can_cast, promote_types = _onp.can_cast, _onp.promote_types

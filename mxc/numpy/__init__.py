"""``mx.np``: numpy's API on mxc arrays (MXNet 1.9.1's ``mxnet.numpy``).

Arrays are ``mx.np.ndarray`` (an NDArray with numpy semantics); functions follow numpy's names,
signatures and dtype rules (with MXNet's float32 default) and run on the device through the
registry operators, so autograd records them."""
import numpy as _onp

from .multiarray import *  # noqa: F401,F403
from .multiarray import ndarray  # noqa: F401
from ._op import *  # noqa: F401,F403
from ._op import abs, round, max, min, sum, all, any  # noqa: F401,A004
from ._core import is_np_default_dtype  # noqa: F401

# numpy's dtype objects and constants, as mxnet.numpy re-exports them
bool_ = _onp.bool_
bool = _onp.bool_           # noqa: A001  (mxnet.numpy exports numpy's bool, as numpy 2 does)
int8, int16, int32, int64 = _onp.int8, _onp.int16, _onp.int32, _onp.int64
uint8, uint16, uint32, uint64 = _onp.uint8, _onp.uint16, _onp.uint32, _onp.uint64
float16, float32, float64 = _onp.float16, _onp.float32, _onp.float64
dtype = _onp.dtype
pi, e, euler_gamma = _onp.pi, _onp.e, _onp.euler_gamma
inf, nan, NINF, PINF, NAN, NZERO, PZERO = (_onp.inf, _onp.nan, -_onp.inf, _onp.inf, _onp.nan,
                                           -0.0, 0.0)
newaxis = None
finfo, iinfo = _onp.finfo, _onp.iinfo
integer, floating, number, generic = _onp.integer, _onp.floating, _onp.number, _onp.generic
signedinteger, unsignedinteger, inexact = _onp.signedinteger, _onp.unsignedinteger, _onp.inexact
can_cast, promote_types = _onp.can_cast, _onp.promote_types
from . import random, linalg  # noqa: F401,E402

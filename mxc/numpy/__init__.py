"""``mx.np``: numpy's API on mxc arrays (MXNet 1.9.1's ``mxnet.numpy``).

Arrays are ``mx.np.ndarray`` (an NDArray with numpy semantics); functions follow numpy's names,
signatures and dtype rules (with MXNet's float32 default) and run on the device through the
registry operators, so autograd records them. The numpy functions MXNet itself runs with
official numpy on the host are in ``fallback``; numpy functions called on mx.np arrays
dispatch to these (``_dispatch``)."""
from .multiarray import *  # noqa: F401,F403
from .multiarray import ndarray  # noqa: F401
from ._op import *  # noqa: F401,F403
from ._op import abs, round, max, min, sum, all, any  # noqa: F401,A004
from ._core import is_np_default_dtype  # noqa: F401
from .utils import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .arrayprint import *  # noqa: F401,F403
from . import random, linalg  # noqa: F401,E402
from . import fallback, fallback_linalg, function_base, stride_tricks, utils, io  # noqa: F401
from . import arrayprint  # noqa: F401
from . import _dispatch  # noqa: F401  (installs __array_function__ / __array_ufunc__)

# fallback names mxc has no operator version of (those it has come from _op above)
globals().update({_n: getattr(fallback, _n) for _n in fallback.__all__ if _n not in globals()})

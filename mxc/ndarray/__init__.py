"""``mx.nd``: NDArray, creation functions and one function per registered operator."""
from .. import ops as _ops  # noqa: F401  registers every operator family
from .ndarray import (NDArray, array, empty, zeros, ones, full, arange, linspace, eye,  # noqa: F401
                      zeros_like, ones_like, waitall, from_numpy, from_dlpack, concatenate,
                      moveaxis, histogram, split_v2, onehot_encode, to_dlpack_for_read,
                      to_dlpack_for_write)
from .ufunc import *  # noqa: F401,F403
from .ufunc import install_operators
from .serialize_nd import save, load, load_frombuffer  # noqa: F401
from . import register as _register
from . import methods as _methods

_register.populate(globals())
_methods.attach(NDArray)
install_operators()
from . import random  # noqa: F401
from . import _internal  # noqa: F401  (MXNet's mx.nd._internal: the underscore operators)
from . import op  # noqa: F401  (MXNet's mx.nd.op: every operator under its own name)
from . import contrib  # noqa: F401
from . import linalg  # noqa: F401  (mx.nd.linalg.gemm2 ...)
from . import image  # noqa: F401  (mx.nd.image.to_tensor ...)
from . import sparse  # noqa: F401  (CSRNDArray, RowSparseNDArray, mx.nd.sparse.*)
from .sparse import CSRNDArray, RowSparseNDArray  # noqa: F401
from . import sparse_impls as _sparse_impls  # noqa: F401  (fills sparse.IMPLS)
from ..ops import services as _services
import sys as _sys

# operators that allocate arrays, run other operators or reach the sparse classes get them here
_services.install_ndarray(_sys.modules[__name__], _register.run, sparse)

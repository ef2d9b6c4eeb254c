"""``mx.nd.linalg``: the ``_linalg_<name>`` operators as ``<name>`` (``mx.nd.linalg.gemm2``), as
MXNet's generated linalg namespace."""
from ._prefixed import populate

populate(globals(), "_linalg_")

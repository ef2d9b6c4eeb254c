"""``mx.nd.op``: one function per registered operator under each of its names, as MXNet's
generated ``mxnet.ndarray.op``. Where a Python helper of ``mx.nd`` shadows an operator's name
(``zeros_like``, ``ones_like``: sparse arrays, ``out=``), this holds the operator itself."""
from . import register as _register

_register.populate(globals())

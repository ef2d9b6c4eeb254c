"""What Gluon needs to run blocks on ``mx.np`` arrays (numpy array semantics, ``npx.set_np()``).

* ``F`` namespaces: imperatively ``F`` is ``mx.nd`` with ``F.np`` (mx.np) and ``F.npx``
  (mx.npx); while tracing for ``hybridize()`` it is ``mx.sym`` with ``F.npx`` (the npx
  operators on Symbols) and ``F.np`` (a symbolic subset of numpy's functions, broadcasting as
  numpy does). mxc has no separate numpy Symbol type: traced values are ``NpSymbol``, a Symbol
  whose ``+ - * / **`` broadcast as numpy's do.
* Conversions without copies between NDArray and mx.np.ndarray (``as_np``/``as_nd``, nested).
* ``legacy_block(block)``: whether a block's ``hybrid_forward`` is mxc's own (written against
  MXNet's legacy NDArray semantics: gluon.nn, loss, rnn ...). Those run on NDArray views of the
  np inputs and parameters, which is exactly their legacy behaviour; the results are handed
  back as np arrays. User blocks get the np arrays themselves.
"""
import numbers

from ..ndarray.ndarray import NDArray
from ..symbol import Symbol
from ._op import as_np, as_nd

__all__ = ["as_np", "as_nd", "nd_namespace", "sym_namespace", "NpSymbol", "legacy_block"]


def legacy_block(block):
    hf = getattr(type(block), "hybrid_forward", None)
    mod = getattr(hf, "__module__", None) or ""
    return mod == "mxc" or mod.startswith("mxc.")


class _Namespace:
    """A module stand-in: named attributes first, then the wrapped module's."""

    def __init__(self, base, **extra):
        self._base = base
        self.__dict__.update(extra)

    def __getattr__(self, name):
        return getattr(self._base, name)

    def __repr__(self):
        return f"<np-mode namespace over {self._base.__name__}>"


class _LazyModule:
    def __init__(self, loader):
        self._loader = loader
        self._mod = None

    def __getattr__(self, name):
        if self._mod is None:
            self._mod = self._loader()
        return getattr(self._mod, name)


_ND = None
_SYM = None


def nd_namespace():
    """``F`` for imperative hybrid_forward under numpy array semantics."""
    global _ND
    if _ND is None:
        from .. import ndarray
        from .. import numpy_extension

        def load_np():
            from .. import numpy as np_mod
            return np_mod
        _ND = _Namespace(ndarray, np=_LazyModule(load_np), npx=numpy_extension)
    return _ND


def sym_namespace():
    """``F`` for hybrid_forward traced under numpy array semantics."""
    global _SYM
    if _SYM is None:
        from .. import symbol
        from . import _symbol
        _SYM = _Namespace(symbol, np=_symbol.np, npx=_symbol.npx)
    return _SYM


def np_sym(s):
    """A Symbol (or nested list) as NpSymbol: a new object on the same graph entries."""
    if isinstance(s, Symbol):
        return s if type(s) is NpSymbol else NpSymbol(s._outputs)
    if isinstance(s, (list, tuple)):
        return type(s)(np_sym(v) for v in s)
    return s


def plain_sym(s):
    """An NpSymbol (or nested list) as a plain Symbol: a new object on the same entries."""
    if isinstance(s, NpSymbol):
        return Symbol(s._outputs)
    if isinstance(s, (list, tuple)):
        return type(s)(plain_sym(v) for v in s)
    return s


def traced_args(block, args, params):
    """(F, args, params) for tracing `block`'s hybrid_forward under numpy array semantics:
    mxc's own layers get plain Symbols (their legacy code), user blocks NpSymbols."""
    conv = plain_sym if legacy_block(block) else np_sym
    return sym_namespace(), conv(args), {k: conv(v) for k, v in params.items()}


def _sym():
    from .. import symbol
    return symbol


class NpSymbol(Symbol):
    """A traced value under numpy semantics: arithmetic with another Symbol broadcasts."""

    __slots__ = ()

    def _np_binary(self, other, bop, scalar_method, reflected=False):
        if isinstance(other, Symbol):
            a, b = (other, self) if reflected else (self, other)
            return np_sym(getattr(_sym(), bop)(a, b))
        if isinstance(other, numbers.Number) or hasattr(other, "dtype"):
            return np_sym(getattr(Symbol, scalar_method)(self, other))
        return NotImplemented

    def __add__(self, other): return self._np_binary(other, "broadcast_add", "__add__")
    def __radd__(self, other): return self._np_binary(other, "broadcast_add", "__radd__", True)
    def __sub__(self, other): return self._np_binary(other, "broadcast_sub", "__sub__")
    def __rsub__(self, other): return self._np_binary(other, "broadcast_sub", "__rsub__", True)
    def __mul__(self, other): return self._np_binary(other, "broadcast_mul", "__mul__")
    def __rmul__(self, other): return self._np_binary(other, "broadcast_mul", "__rmul__", True)
    def __truediv__(self, other): return self._np_binary(other, "broadcast_div", "__truediv__")

    def __rtruediv__(self, other):
        return self._np_binary(other, "broadcast_div", "__rtruediv__", True)

    def __pow__(self, other): return self._np_binary(other, "broadcast_power", "__pow__")
    def __rpow__(self, other): return self._np_binary(other, "broadcast_power", "__rpow__", True)
    def __neg__(self): return np_sym(Symbol.__neg__(self))

    __hash__ = Symbol.__hash__


def to_np(out):
    """Nested results as mx.np.ndarray (NDArray views, no copies)."""
    if isinstance(out, NDArray):
        return as_np(out)
    if isinstance(out, (list, tuple)):
        return type(out)(to_np(v) for v in out)
    return out


def to_nd(args):
    """Nested inputs as NDArray views (no copies)."""
    if isinstance(args, NDArray):
        return as_nd(args)
    if isinstance(args, (list, tuple)):
        return type(args)(to_nd(v) for v in args)
    return args

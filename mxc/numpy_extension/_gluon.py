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

    def _np_arith(self, other, name, reflected=False):
        """numpy `name` (_npi_* operators: broadcasting, numpy dtype promotion)."""
        sym = _sym()
        if isinstance(other, Symbol):
            a, b = (other, self) if reflected else (self, other)
            return np_sym(getattr(sym, f"_npi_{name}")(a, b))
        if isinstance(other, numbers.Number) or hasattr(other, "dtype"):
            op = f"_npi_r{name}_scalar" if reflected and name not in ("add", "multiply") \
                else f"_npi_{name}_scalar"
            is_int = isinstance(other, numbers.Integral) or getattr(other, "dtype", None) is not \
                None and other.dtype.kind in "iub"
            return np_sym(getattr(sym, op)(self, scalar=float(other), is_int=bool(is_int)))
        return NotImplemented

    def __add__(self, other): return self._np_arith(other, "add")
    def __radd__(self, other): return self._np_arith(other, "add", True)
    def __sub__(self, other): return self._np_arith(other, "subtract")
    def __rsub__(self, other): return self._np_arith(other, "subtract", True)
    def __mul__(self, other): return self._np_arith(other, "multiply")
    def __rmul__(self, other): return self._np_arith(other, "multiply", True)
    def __truediv__(self, other): return self._np_arith(other, "true_divide")
    def __rtruediv__(self, other): return self._np_arith(other, "true_divide", True)
    def __pow__(self, other): return self._np_arith(other, "power")
    def __rpow__(self, other): return self._np_arith(other, "power", True)
    def __mod__(self, other): return self._np_arith(other, "mod")
    def __rmod__(self, other): return self._np_arith(other, "mod", True)

    # comparisons give bool arrays, as mx.np's do
    def _np_compare(self, other, bop, scalar_method):
        if isinstance(other, Symbol):
            r = getattr(_sym(), bop)(self, other)
        elif isinstance(other, numbers.Number) or hasattr(other, "dtype"):
            r = getattr(Symbol, scalar_method)(self, other)
        else:
            return NotImplemented
        return np_sym(_sym().cast(r, dtype="bool"))

    def __eq__(self, other): return self._np_compare(other, "broadcast_equal", "__eq__")
    def __ne__(self, other): return self._np_compare(other, "broadcast_not_equal", "__ne__")
    def __gt__(self, other): return self._np_compare(other, "broadcast_greater", "__gt__")
    def __ge__(self, other):
        return self._np_compare(other, "broadcast_greater_equal", "__ge__")
    def __lt__(self, other): return self._np_compare(other, "broadcast_lesser", "__lt__")
    def __le__(self, other):
        return self._np_compare(other, "broadcast_lesser_equal", "__le__")
    def __neg__(self): return np_sym(Symbol.__neg__(self))

    def __getitem__(self, key):
        """numpy basic indexing on the traced value (a one-output NpSymbol); on a grouped
        symbol an int picks an output as Symbol's does."""
        from ._symbol import basic_index
        if len(self._outputs) > 1 and isinstance(key, (int, str)):
            return np_sym(Symbol.__getitem__(self, key))
        return basic_index(self, key)

    # the mx.np.ndarray methods a traced value needs most, as F.np's functions
    def _np(self, name, *args, **kwargs):
        from ._symbol import np as np_ops
        return getattr(np_ops, name)(self, *args, **kwargs)

    def dot(self, b): return self._np("dot", b)
    def sum(self, axis=None, dtype=None, keepdims=False): return self._np("sum", axis, dtype,
                                                                          None, keepdims)
    def mean(self, axis=None, dtype=None, keepdims=False): return self._np("mean", axis, dtype,
                                                                           None, keepdims)
    def max(self, axis=None, keepdims=False): return self._np("max", axis, None, None, keepdims)
    def min(self, axis=None, keepdims=False): return self._np("min", axis, None, None, keepdims)
    def prod(self, axis=None, dtype=None, keepdims=False): return self._np("prod", axis, dtype,
                                                                           None, keepdims)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = shape[0]
        return self._np("reshape", tuple(shape), **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = axes[0]
        return self._np("transpose", tuple(axes) if axes else None)

    def squeeze(self, axis=None): return self._np("squeeze", axis)
    def astype(self, dtype, copy=True): return np_sym(Symbol.astype(self, dtype, copy))
    def expand_dims(self, axis): return self._np("expand_dims", axis)

    def as_nd_ndarray(self):
        return plain_sym(self)

    def as_np_ndarray(self):
        return self

    __hash__ = Symbol.__hash__


def check_np_outputs(block, out):
    """A user block's imperative results under numpy semantics must all be mx.np arrays
    (MXNet raises TypeError for a legacy NDArray among them)."""
    if isinstance(out, NDArray):
        from ..numpy import ndarray as np_ndarray
        if not isinstance(out, np_ndarray):
            raise TypeError(f"Block {block.name}'s output ndarrays/symbols must be of type "
                            f"`mxnet.numpy.ndarray` or numpy symbols, while got output type "
                            f"{type(out)}")
    elif isinstance(out, (list, tuple)):
        for v in out:
            check_np_outputs(block, v)


def check_same_symbol_type(block, outs):
    """Traced results of a user block are all numpy-style or all legacy Symbols (MXNet raises
    TypeError for a mix)."""
    kinds = {type(o) is NpSymbol for o in outs if isinstance(o, Symbol)}
    if len(kinds) > 1:
        raise TypeError(f"Block {block.name}'s outputs mix numpy-style and legacy symbols; "
                        "use as_np_ndarray()/as_nd_ndarray() to make them all of one kind")


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

"""Typed operator parameters, parsed from Python values or from MXNet attribute strings.

Symbol JSON stores every attribute as a string ("(3, 3)", "True", "None", "float32"); imperative
calls pass Python values. Both go through the same parser so an operator sees one typed value.
"""
import ast
import warnings

import numpy as np

from ..base import np_dtype

__all__ = ["Param", "parse_attrs", "attrs_to_strings", "DTYPES"]

# dtype names MXNet accepts in operator attributes
DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool", "bfloat16")


def _literal(s):
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError):
        raise ValueError(f"cannot parse {s!r}") from None


def _to_bool(v):
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "1"):
            return True
        if low in ("false", "0"):
            return False
        raise ValueError(f"expected a boolean, got {v!r}")
    if isinstance(v, (bool, int, np.bool_, np.integer)):
        return bool(v)
    raise ValueError(f"expected a boolean, got {v!r}")


def _to_int(v):
    if isinstance(v, str):
        v = _literal(v.strip())
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise ValueError(f"expected an integer, got {v!r}")


def _to_float(v):
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("inf", "+inf", "infinity"):
            return float("inf")
        if s in ("-inf", "-infinity"):
            return float("-inf")
        if s == "nan":
            return float("nan")
        v = _literal(v.strip())
    if isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)):
        return float(v)
    raise ValueError(f"expected a number, got {v!r}")


def _to_shape(v):
    """A tuple of ints from (3, 3), [3, 3], 3, "(3, 3)", "[3,3]", "3", "()"."""
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "()", "[]"):
            return ()
        v = _literal(s)
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (int(v),)
    if isinstance(v, (tuple, list)):
        return tuple(_to_int(x) for x in v)
    raise ValueError(f"expected a shape (tuple of ints), got {v!r}")


def _to_shape_opt(v):
    """Like a shape, but entries may be None (slice's begin/end/step: "(0, None)")."""
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "()", "[]"):
            return ()
        v = _literal(s)
    if v is None or isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return (None if v is None else int(v),)
    if isinstance(v, (tuple, list)):
        return tuple(None if x is None else _to_int(x) for x in v)
    raise ValueError(f"expected a tuple of ints or None, got {v!r}")


def _to_dtype(v):
    if v is None:
        return None
    try:
        name = np_dtype(v).name
    except TypeError:
        raise ValueError(f"unknown dtype {v!r}") from None
    if name not in DTYPES:
        raise ValueError(f"dtype {name} is not supported; expected one of {DTYPES}")
    return name


def _to_floats(v):
    """A tuple of floats (MXNet's Tuple<float>: multi-tensor lrs/wds) from a tuple, list,
    number or string; lists arrive per optimizer step, so only strings are parsed."""
    if isinstance(v, str):
        s = v.strip()
        v = () if s in ("", "()", "[]") else _literal(s)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)):
        return (float(v),)
    if isinstance(v, (tuple, list)):
        if all(type(x) is float for x in v):      # an optimizer's learning rates, per step
            return tuple(v)
        return tuple(_to_float(x) for x in v)
    raise ValueError(f"expected a tuple of numbers, got {v!r}")


def _to_float_tuple(v):
    """A tuple of floats from (4, 8.0), [0.5], 2, "(4.0, 8.0)" (Proposal's scales/ratios)."""
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "()", "[]"):
            return ()
        v = _literal(s)
    if isinstance(v, (tuple, list)):
        return tuple(_to_float(x) for x in v)
    return (_to_float(v),)


_CONVERT = {bool: _to_bool, "shape_f": _to_float_tuple, int: _to_int, float: _to_float, "shape": _to_shape,
            "dtype": _to_dtype, "shape_opt": _to_shape_opt, "floats": _to_floats,
            str: lambda v: v if isinstance(v, str) else str(v)}


class Param:
    """One operator parameter.

    kind: bool, int, float, str, "shape", "shape_opt", "floats" or "dtype". optional: None (or
    "None") is allowed.
    choices: allowed values for str parameters. A parameter with ``required=True`` has no default.
    "shape" with ``axis_like=True`` also accepts a single int and keeps None for "all axes".
    """

    __slots__ = ("name", "kind", "default", "required", "optional", "choices", "doc")

    def __init__(self, name, kind, default=None, required=False, optional=False, choices=None, doc=""):
        self.name, self.kind, self.default = name, kind, default
        self.required, self.optional, self.choices, self.doc = required, optional, choices, doc

    def parse(self, op, value):
        if value is None or (isinstance(value, str) and value.strip() == "None"):
            if self.optional or self.default is None and not self.required:
                return None
            raise ValueError(f"{op}: parameter '{self.name}' may not be None")
        try:
            v = _CONVERT[self.kind](value)
        except ValueError as e:
            raise ValueError(f"{op}: parameter '{self.name}': {e}") from None
        if self.choices is not None and v not in self.choices:
            raise ValueError(f"{op}: parameter '{self.name}' must be one of {self.choices}, got {v!r}")
        return v


_IGNORED_WARNED = set()


def parse_attrs(op, params, kwargs):
    """Typed values for every parameter of `op` from kwargs (Python values or strings)."""
    out = {}
    for p in params:
        if p.name in kwargs:
            out[p.name] = p.parse(op, kwargs[p.name])
        elif p.required:
            raise ValueError(f"{op}: missing required parameter '{p.name}'")
        else:
            out[p.name] = p.default
    extra = set(kwargs) - set(out)
    if extra and not params:
        # MXNet ignores keyword arguments of operators that take no parameters at all (nothing
        # parses them: `broadcast_maximum(a, b, axis=1)` runs); say so once instead of silently
        key = (op, tuple(sorted(extra)))
        if key not in _IGNORED_WARNED:
            _IGNORED_WARNED.add(key)
            warnings.warn(f"{op}: takes no parameters; {sorted(extra)} ignored, as MXNet does",
                          stacklevel=6)
    elif extra:
        raise ValueError(f"{op}: unknown parameter(s) {sorted(extra)}; it takes "
                         f"{[p.name for p in params]}")
    return out


def _fmt(v):
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(str(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def attrs_to_strings(attrs):
    """MXNet's attribute strings for a typed attribute dict (what symbol JSON stores)."""
    return {k: _fmt(v) for k, v in attrs.items() if v is not None}

"""Errors and environment flags shared by every layer of mxc."""
import os


class MXNetError(RuntimeError):
    """The error mxc raises for failures inside operators, files and the engine.

    Named as in MXNet so ``except mx.base.MXNetError`` keeps working.
    """


class OperatorInputError(MXNetError, ValueError):
    """An operator refused its inputs (shapes, dtypes, parameters): MXNet raised MXNetError
    there, Python code expects ValueError; this is both."""


def env_int(name, default):
    """Integer environment flag; a malformed value is a clear error, not a silent default."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not an integer") from None


def env_str(name, default):
    raw = os.environ.get(name)
    return default if raw is None or raw.strip() == "" else raw.strip()


# ---- names MXNet code imports from mxnet.base ----------------------------------------------
import numbers as _numbers

import numpy as _np

integer_types = (int, _np.integer)
numeric_types = (float, int, _np.generic)
string_types = (str,)
mx_real_t = _np.float32          # MXNet's default real type (tests import it)
py_str = lambda x: x.decode("utf-8") if isinstance(x, bytes) else str(x)  # noqa: E731
_Null = None


class NotImplementedForSymbol(MXNetError):
    """An NDArray-only function was called on a Symbol."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__ if callable(function) else str(function)
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f" (namely operator \"{self.alias}\")"
        if self.args:
            msg += " with arguments (" + ", ".join(self.args) + ")"
        return msg + " is not implemented for Symbol and only available in NDArray."


def _as_list(obj):
    """A list holding obj, or obj itself when it is already a list or tuple."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


def data_dir():
    """Where datasets and model files go (MXNET_HOME, else ~/.mxnet)."""
    return os.path.expanduser(os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet")))


def check_call(ret):
    """MXNet's C-API return check; mxc has no C API, so any nonzero value is an error."""
    if ret != 0:
        raise MXNetError(f"call failed with code {ret}")


del _numbers

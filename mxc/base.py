"""Errors and environment flags shared by every layer of mxc."""
import os


class MXNetError(RuntimeError):
    """The error mxc raises for failures inside operators, files and the engine.

    Named as in MXNet so ``except mx.base.MXNetError`` keeps working.
    """


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

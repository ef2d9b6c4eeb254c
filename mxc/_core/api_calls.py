"""The profiler's API records (``profile_api``): calls of mxc's front doors under MXNet's names.

MXNet's profiler, in its API mode, records every call of its C API as a task of the domain
``MXNET_C_API`` named after the C function (``MXImperativeInvokeEx``, ``MXNDArrayWaitAll``, ...).
mxc has no C API; the Python functions that stand where a Python program called one record
themselves under that function's name while ``STATE.on`` (mxc/profiler.py sets it). Only the
outermost such call of a thread is recorded: MXNet's Python never calls its C API from inside
another C API call, while mxc's front doors may call one another (``asnumpy`` waits to read).
Off, a call costs one attribute test.
"""
import functools
import threading
import time

from . import engine as _engine


class _State:
    on = False          # profile_api is on and the profiler records (Python's test)


STATE = _State()
_tls = threading.local()


def set_recording(on):
    """Record the API calls from now on (True) or not; Cython code tests the engine's copy."""
    STATE.on = bool(on)
    _engine.profile_set_api(STATE.on)


def timed(name, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` recorded as a call of MXNet's C API function `name` (the caller
    tested ``STATE.on``)."""
    depth = getattr(_tls, "depth", 0)
    if depth:
        return fn(*args, **kwargs)
    _tls.depth = 1
    t0 = time.monotonic_ns()          # the engine's clock (CLOCK_MONOTONIC)
    try:
        return fn(*args, **kwargs)
    finally:
        _tls.depth = 0
        _engine.profile_api_span(name, t0, time.monotonic_ns())


def api_call(name):
    """Decorator: the function is a front door standing for MXNet's C API function `name`."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if STATE.on:
                return timed(name, fn, *args, **kwargs)
            return fn(*args, **kwargs)
        return call
    return wrap

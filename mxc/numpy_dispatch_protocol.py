"""MXNet 1.9.1's ``mxnet.numpy_dispatch_protocol``: which numpy functions and ufuncs called on
mx.np arrays dispatch to mx.np (the tables live in ``mxc.numpy._dispatch``), and the test
decorators MXNet's suite imports from here."""
import functools

from .numpy import _dispatch

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol"]

# the names mxc dispatches with the numpy installed (MXNet's lists, less what numpy lacks)
_NUMPY_ARRAY_FUNCTION_LIST = list(_dispatch.ARRAY_FUNCTION_NAMES)
_NUMPY_ARRAY_UFUNC_LIST = [n for n in _dispatch.NUMPY_ARRAY_UFUNC_NAMES
                           if n in _dispatch.ARRAY_UFUNCS]
_NUMPY_ARRAY_FUNCTION_DICT = _dispatch.ARRAY_FUNCTIONS
_NUMPY_ARRAY_UFUNC_DICT = _dispatch.ARRAY_UFUNCS


def _protocol_runner(func, what):
    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            raise RuntimeError(f"Running function {func.__name__} with NumPy array {what} "
                               f"protocol failed with exception {e}") from e
    return run


def with_array_function_protocol(func):
    """Runs `func`, reporting a failure as one of the array function protocol (MXNet's
    decorator; numpy >= 1.17, which mxc requires, always has the protocol)."""
    return _protocol_runner(func, "function")


def with_array_ufunc_protocol(func):
    return _protocol_runner(func, "ufunc")

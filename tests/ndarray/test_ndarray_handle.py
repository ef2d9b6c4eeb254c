"""MXNet's handle round trip: ``NDArray(ctypes.cast(arr, NDArrayHandle), writable=...)``, as
monitor callbacks and custom Functions written for MXNet unwrap what they are given. Behaviour
checked on MXNet 1.9.1: the array shares storage; writable=False refuses in-place arithmetic
("trying to add to a readonly NDArray") but not item assignment."""
import ctypes

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError, NDArrayHandle
from mxc.ndarray import NDArray


def test_round_trip_shares_storage_and_autograd():
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    b = NDArray(ctypes.cast(a, NDArrayHandle))
    assert b.writable and b.shape == (2, 2)
    b[:] = 7
    assert a.asnumpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]
    a.attach_grad()
    with mx.autograd.record():
        y = (NDArray(handle=ctypes.cast(a, NDArrayHandle)) * 3).sum()
    y.backward()
    assert a.grad.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_read_only_view():
    a = mx.nd.array([1.0, 2.0, 3.0])
    r = NDArray(ctypes.cast(a, NDArrayHandle), writable=False)
    assert not r.writable
    assert mx.nd.min(r).asscalar() == 1.0
    for op, msg in [("__iadd__", "add to"), ("__isub__", "subtract from"),
                    ("__imul__", "multiply to"), ("__itruediv__", "divide from"),
                    ("__imod__", "take modulo from")]:
        with pytest.raises(ValueError, match=f"trying to {msg} a readonly NDArray"):
            getattr(r, op)(1)
    r[0] = 5            # MXNet 1.9.1 lets item assignment through
    assert a.asnumpy().tolist() == [5.0, 2.0, 3.0]


def test_bad_handles():
    with pytest.raises(TypeError, match="NDArrayHandle"):
        NDArray(3)
    a = mx.nd.ones((2,))
    key = ctypes.cast(a, NDArrayHandle).value
    del a
    with pytest.raises(MXNetError, match="names no live array"):
        NDArray(ctypes.c_void_p(key))


def test_monitor_callback_unwraps_as_in_mxnet():
    """MXNet's test_monitor_with_variable_input_shape in small: the callback casts its array."""
    mins = {}

    def callback(name, arr):
        arr = NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        mins[mx.base.py_str(name)] = mx.nd.min(arr).asscalar()

    data = mx.sym.var("data")
    sym = mx.sym.Convolution(data, kernel=(1, 1), num_filter=1, no_bias=True, name="conv")
    ex = sym.simple_bind(mx.cpu(), data=(1, 2, 3, 3), grad_req="null")
    x = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["conv_weight"][:] = np.array([1.0, -1.0]).reshape(1, 2, 1, 1)
    ex.set_monitor_callback(callback, monitor_all=True)
    ex.forward()
    mx.nd.waitall()
    # MXNet 1.9.1's names and minima (MXNET_SUBGRAPH_BACKEND=NONE, as its test sets)
    assert mins == {"data": 0.0, "conv_data": 0.0, "conv_weight": -1.0, "conv_output": -9.0}

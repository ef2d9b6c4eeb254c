"""Thread-local scopes as in MXNet: each thread starts with its own default context, attribute
scope, name manager and numpy flags; setting one in a thread leaves the others alone."""
import threading

import numpy as np

import mxc as mx
from mxc.test_utils import default_context, set_default_context


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as err:        # noqa: BLE001  (reported to the caller)
            out["error"] = err
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_default_context_is_per_thread():
    def f():
        set_default_context(mx.cpu(3))
        return default_context(), mx.current_context()
    assert _in_thread(f) == (mx.cpu(3), mx.cpu(3))
    assert default_context() == mx.cpu(0) and mx.current_context() == mx.cpu(0)


def test_symbols_and_blocks_in_a_new_thread():
    def f():
        with mx.AttrScope(group="g"):
            a = mx.sym.var("a")
        out = (a * 2 + mx.sym.var("b")).eval(a=mx.nd.array([1, 2]), b=mx.nd.array([3, 4]))[0]
        net = mx.gluon.nn.Dense(2, in_units=3)
        net.initialize(mx.init.One())
        return (a.attr("group"), out.asnumpy().tolist(), net(mx.nd.ones((1, 3))).asnumpy().tolist(),
                mx.sym.var("c").name, mx.sym.relu(a).name)
    group, out, dense, cname, relu_name = _in_thread(f)
    assert group == "g" and out == [5.0, 8.0] and dense == [[3.0, 3.0]]
    assert cname == "c" and relu_name == "relu0"       # a fresh name manager in the thread


def test_numpy_array_flag_is_per_thread():
    from mxc.util import _NumpyArrayScope
    with _NumpyArrayScope(True):
        assert mx.is_np_array()
        assert _in_thread(mx.is_np_array) is False
    assert not mx.is_np_array()
    assert np.array_equal(_in_thread(lambda: mx.nd.ones((2,)).asnumpy()), [1, 1])

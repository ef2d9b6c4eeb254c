"""The numpy-semantics switches (mxc/util.py, exported by mx.npx): set_np/reset_np, scopes,
per-thread state, and the use_np decorators on functions and classes, as MXNet 1.9.1."""
import threading

import pytest

import mxc as mx
from mxc import npx, util


@pytest.fixture(autouse=True)
def _clean():
    util.reset_np()
    yield
    util.reset_np()


def test_set_np_and_reset():
    assert not util.is_np_shape() and not util.is_np_array()
    npx.set_np()
    assert npx.is_np_shape() and npx.is_np_array()
    npx.reset_np()
    assert not npx.is_np_shape() and not npx.is_np_array()
    npx.set_np(shape=True, array=False)
    assert util.is_np_shape() and not util.is_np_array()
    with pytest.raises(ValueError, match="Shape semantics is required"):
        npx.set_np(shape=False, array=True)
    npx.set_np(dtype=True)
    assert util.is_np_default_dtype()
    npx.set_np()
    assert not util.is_np_default_dtype()


def test_shape_cannot_go_off_under_array_semantics():
    npx.set_np()
    with pytest.raises(ValueError, match="Deactivating NumPy shape semantics"):
        mx.set_np_shape(False)
    with pytest.raises(ValueError, match="Deactivating NumPy shape semantics"):
        with mx.np_shape(False):
            pass
    assert util.is_np_shape()
    with mx.np_array(False):            # array first, then shape may go off (as Gluon does)
        with mx.np_shape(False):
            assert not util.is_np_shape() and not util.is_np_array()
    assert util.is_np_shape() and util.is_np_array()


def test_set_np_shape_returns_previous_and_scopes_nest():
    assert mx.set_np_shape(True) is False
    assert mx.set_np_shape(True) is True
    assert mx.set_np_shape(False) is True
    with mx.np_shape():
        assert util.is_np_shape()
        with mx.np_shape(False):
            assert not util.is_np_shape()
        assert util.is_np_shape()
    assert not util.is_np_shape()
    with mx.np_array():
        assert util.is_np_array() and not util.is_np_shape()
    assert not util.is_np_array()


def test_state_is_per_thread():
    npx.set_np()
    seen = {}

    def worker():
        seen["shape"], seen["array"] = util.is_np_shape(), util.is_np_array()
        npx.set_np()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"shape": False, "array": False}
    npx.reset_np()
    assert not util.is_np_array()


def test_function_decorators():
    @util.use_np
    def both():
        return util.is_np_shape(), util.is_np_array()

    @util.use_np_shape
    def shape_only():
        return util.is_np_shape(), util.is_np_array()

    @util.use_np_array
    def array_only():
        return util.is_np_shape(), util.is_np_array()

    assert both() == (True, True)
    assert shape_only() == (True, False)
    assert array_only() == (False, True)
    assert both.__name__ == "both"
    assert not util.is_np_shape() and not util.is_np_array()
    with pytest.raises(TypeError, match="can only decorate"):
        util.use_np(3)


def test_class_decorator_wraps_methods_properties_static_and_inherited():
    class Base:
        def inherited(self):
            return util.is_np_array()

    @util.use_np
    class C(Base):
        def __init__(self):
            self.at_init = (util.is_np_shape(), util.is_np_array())

        def __call__(self):
            return util.is_np_array()

        @property
        def prop(self):
            return util.is_np_shape()

        @staticmethod
        def stat(x):
            return x, util.is_np_array()

        @classmethod
        def klass(cls):
            return cls.__name__, util.is_np_array()

    c = C()
    assert c.at_init == (True, True)
    assert c() and c.prop and c.inherited()
    assert C.stat(1) == (1, True) and c.stat(2) == (2, True)
    assert C.klass() == ("C", True)
    assert not Base().inherited()          # the base class itself is untouched
    assert not util.is_np_array()


def test_decorated_gluon_block_makes_np_parameters():
    from mxc.gluon import nn
    from mxc.numpy.multiarray import ndarray as np_ndarray

    @util.use_np
    class Net(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.dense = nn.Dense(3, in_units=2)

        def hybrid_forward(self, F, x):
            return F.npx.relu(self.dense(x))

    net = Net()
    net.initialize()
    assert type(net.dense.weight.data()) is np_ndarray
    x = mx.nd.ones((4, 2)).as_np_ndarray() if hasattr(mx.nd.NDArray, "as_np_ndarray") else None
    if x is None:
        from mxc.numpy.multiarray import array
        x = array([[1.0, 2.0]] * 4)
    out = net(x)
    assert type(out) is np_ndarray and out.shape == (4, 3)
    assert not util.is_np_array()

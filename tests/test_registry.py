"""mx.registry (MXNet's factory helpers client libraries build on) and the mx.base C-API names."""
import ctypes
import warnings

import pytest

import mxc as mx
from mxc import registry


class _Base:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def test_register_create_alias():
    class Base(_Base):
        pass
    register = registry.get_register_func(Base, "thing")
    alias = registry.get_alias_func(Base, "thing")
    create = registry.get_create_func(Base, "thing")

    @register
    class Alpha(Base):
        pass

    @alias("b1", "B2")
    class Beta(Base):
        pass
    assert set(registry.get_registry(Base)) == {"alpha", "b1", "b2"}
    a = create("ALPHA", 1, x=2)
    assert type(a) is Alpha and a.args == (1,) and a.kwargs == {"x": 2}
    assert create(a) is a
    assert type(create(thing="b2")) is Beta
    assert create('["alpha", {"y": 3}]').kwargs == {"y": 3}
    assert type(create('{"thing": "b1", "z": 1}')) is Beta
    assert create({"thing": "alpha", "k": 0}).kwargs == {"k": 0}
    with pytest.raises(ValueError, match="gamma is not registered"):
        create("gamma")
    with pytest.raises(ValueError, match="already an instance"):
        create(a, 1)
    with pytest.raises(TypeError, match="subclass of Base"):
        register(int)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        register(Beta, "alpha")
    assert "overriding" in str(w[0].message) and type(create("alpha")) is Beta
    # the mapping handed out is a copy
    registry.get_registry(Base).clear()
    assert "b1" in registry.get_registry(Base)


def test_base_c_api_names():
    b = mx.base
    assert b.c_str("héllo").value == "héllo".encode("utf-8")
    assert list(b.c_array(b.mx_uint, [3, 4])) == [3, 4]
    assert [x for x in b.c_str_array(["a", "bc"])] == [b"a", b"bc"]
    assert b.NDArrayHandle is ctypes.c_void_p and b.SymbolHandle is ctypes.c_void_p
    buf = ctypes.create_string_buffer(b"abc", 3)
    assert b.ctypes2buffer(ctypes.cast(buf, ctypes.POINTER(ctypes.c_char)), 3) == b"abc"
    b.check_call(0)
    with pytest.raises(mx.MXNetError, match="MXNDArrayCreate"):
        b._LIB.MXNDArrayCreate
    with pytest.raises(mx.MXNetError, match="code 1"):
        b.check_call(1)
    err = b.NotSupportedForSparseNDArray(test_base_c_api_names, "dot", 1)
    assert "not supported for SparseNDArray" in str(err) and "dot" in str(err)


def test_numpy_array_scope_names():
    from mxc.util import _NumpyArrayScope, _NumpyShapeScope
    assert not mx.is_np_array()
    with _NumpyArrayScope(True) as scope:
        assert scope._is_np_array and mx.is_np_array()
    assert not mx.is_np_array()
    with _NumpyShapeScope(True):
        assert mx.is_np_shape()
    assert not mx.is_np_shape()

"""KVStoreBase's registry, mx.kv.create of registered stores, TestStore."""
import numpy as np
import pytest

import mxc as mx


def test_register_and_create_a_python_store():
    @mx.kv.KVStoreBase.register
    class H3MemStore(mx.kv.KVStoreBase):
        @property
        def type(self):
            return "h3memstore"

    kv = mx.kv.create("H3MemStore")
    assert isinstance(kv, H3MemStore) and kv.type == "h3memstore"
    with pytest.warns(UserWarning, match="overriding"):
        mx.kv.KVStoreBase.register(type("H3MemStore", (mx.kv.KVStoreBase,), {}))
    with pytest.raises(TypeError):
        mx.kv.KVStoreBase.register(3)
    with pytest.raises(NotImplementedError):
        mx.kv.KVStoreBase().pushpull(0, mx.nd.ones((1,)))


def test_teststore():
    kv = mx.kv.create("teststore")
    assert kv.type == "teststore" and kv.rank == 0 and kv.num_workers == 1
    assert not kv.is_capable("optimizer")
    vals = [mx.nd.ones((2, 2)) * i for i in (1, 2, 3)]
    out = mx.nd.zeros((2, 2))
    kv.pushpull(0, vals, out=out)
    np.testing.assert_array_equal(out.asnumpy(), 6)
    kv.pushpull(0, vals)
    for v in vals:
        np.testing.assert_array_equal(v.asnumpy(), 6)
    outs = [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))]
    kv.broadcast(0, mx.nd.ones((2, 2)) * 4, out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), 4)
    with pytest.raises(ValueError):
        kv.is_capable("x")

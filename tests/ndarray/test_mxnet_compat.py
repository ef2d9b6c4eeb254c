"""MXNet 1.9.1 NDArray front-end behaviour that its own test_ndarray.py relies on: inplace views
of shape methods, broadcast_to/moveaxis argument forms, mx.nd._internal / mx.nd.contrib,
mx.np_shape and save/load semantics, mx.name, DLPack functions, from_numpy zero-copy rules,
__getstate__/__setstate__ bytes, setitem value broadcasting and setitem under autograd."""
import gc
import os
import struct
from itertools import combinations_with_replacement, permutations

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError


def _arange(*shape):
    return mx.nd.array(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


# ---- shape methods with inplace= ------------------------------------------------------------
def test_flatten_inplace_is_a_view_and_default_is_a_copy():
    t = _arange(2, 3, 5)
    copy, ref = t.flatten(), t.flatten(inplace=True)
    assert copy.shape == ref.shape == (2, 15)
    t[0] = -1
    assert ref.asnumpy()[0].tolist() == [-1.0] * 15
    assert copy.asnumpy()[0].tolist() == list(range(15))


@pytest.mark.parametrize("shape,axis,expect", [
    ((1, 5, 1, 3, 1), None, (5, 3)), ((1, 5, 1, 3, 1), (0, 4), (5, 1, 3)),
    ((1, 5, 1, 3, 1), -3, (1, 5, 3, 1)), ((1, 1, 1), None, (1,)), ((1, 5, 1), 0, (5, 1))])
def test_squeeze_inplace(shape, axis, expect):
    x = mx.nd.array(np.random.rand(*shape))
    copy, ref = x.squeeze(axis=axis), x.squeeze(axis=axis, inplace=True)
    assert copy.shape == ref.shape == expect
    x[:] = 3.0
    assert (ref.asnumpy() == 3.0).all() and not (copy.asnumpy() == 3.0).all()


def test_squeeze_inplace_errors():
    x = mx.nd.ones((1, 3))
    with pytest.raises(ValueError, match="size 1"):
        x.squeeze(axis=1, inplace=True)
    with pytest.raises(ValueError, match="out of range"):
        x.squeeze(axis=2, inplace=True)


@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
def test_expand_dims_inplace(axis):
    x = _arange(2, 3)
    copy, ref = x.expand_dims(axis=axis), x.expand_dims(axis=axis, inplace=True)
    assert ref.shape == copy.shape == np.expand_dims(np.zeros((2, 3)), axis).shape
    x[:] = 7
    assert (ref.asnumpy() == 7).all() and copy.asnumpy().sum() == 15


def test_expand_dims_inplace_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        mx.nd.ones((2, 3)).expand_dims(axis=3, inplace=True)


# ---- broadcast_to / broadcast_like / moveaxis -------------------------------------------------
def test_broadcast_to_takes_numpy_shapes_and_adds_leading_axes():
    x = mx.nd.array([[1.0], [2.0]])
    out = x.broadcast_to(shape=np.array([2, 3]))
    assert out.asnumpy().tolist() == [[1, 1, 1], [2, 2, 2]]
    out = x.broadcast_to((4, 2, 3))
    assert out.shape == (4, 2, 3) and out.asnumpy()[3, 1].tolist() == [2, 2, 2]
    assert x.broadcast_like(mx.nd.zeros((2, 2))).asnumpy().tolist() == [[1, 1], [2, 2]]
    with pytest.raises(ValueError, match="could not be broadcast"):
        x.broadcast_to((3,))
    with pytest.raises(ValueError, match="could not be broadcast"):
        x.broadcast_to((3, 3))


@pytest.mark.parametrize("src,dst,expect", [
    (0, 2, (2, 3, 4, 1)[1:] + (1,)), ([0, 1], [2, 3], (2, 3, 4, 1)),
    ([3, 0], [1, 0], (4, 3, 1, 2)), (range(4), range(4), (4, 1, 2, 3)), (-1, 0, (3, 4, 1, 2))])
def test_moveaxis_like_numpy(src, dst, expect):
    x = np.random.rand(4, 1, 2, 3)
    out = mx.nd.moveaxis(mx.nd.array(x), src, dst)
    ref = np.moveaxis(x, list(src) if isinstance(src, range) else src,
                      list(dst) if isinstance(dst, range) else dst)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)


@pytest.mark.parametrize("src,dst", [(3, 0), (-4, 0), (0, 5), ([0, 0], [0, 1]),
                                     ([0, 1], [1, 1]), (0, [0, 1]), ([0, 1], [0])])
def test_moveaxis_errors(src, dst):
    with pytest.raises(ValueError):
        mx.nd.moveaxis(mx.nd.zeros((1, 2, 3)), src, dst)


def test_split_v2():
    x = _arange(2, 6)
    parts = mx.nd.split_v2(x, 3, axis=1)
    assert [p.asnumpy().tolist() for p in parts] == [[[0, 1], [6, 7]], [[2, 3], [8, 9]],
                                                     [[4, 5], [10, 11]]]
    parts = x.split_v2((1, 4), axis=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 3), (2, 2)]
    # empty sections, as MXNet 1.9.1 gives them: [(0,), (2,), (1,)] for (0, 2) on 3 elements
    assert [p.shape for p in mx.nd.split_v2(mx.nd.ones((3,)), (0, 2))] == [(0,), (2,), (1,)]
    assert [p.shape for p in x.split_v2((1, 1), axis=-1)] == [(2, 1), (2, 0), (2, 5)]
    sq = mx.nd.split_v2(x, 2, axis=0, squeeze_axis=True)
    assert sq[1].shape == (6,) and sq[1].asnumpy().tolist() == list(range(6, 12))
    with pytest.raises(ValueError, match="equal division"):
        mx.nd.split_v2(x, 4, axis=1)


def test_fluent_methods_added():
    x = mx.nd.array(np.random.rand(5, 3))
    np.testing.assert_allclose(x.softmin().asnumpy(), mx.nd.softmin(x).asnumpy())
    assert x.slice_like(mx.nd.zeros((2, 2))).shape == (2, 2)
    assert x.reshape_like(rhs=mx.nd.zeros((15,))).shape == (15,)


# ---- namespaces -------------------------------------------------------------------------------
def test_internal_namespace_has_the_underscore_operators():
    assert mx.nd._internal._crop_assign is mx.nd._crop_assign
    x = mx.nd.ones((2, 3, 4))
    mx.nd._internal._crop_assign_scalar(x, scalar=5, begin=(0, 0, 0), end=(2, 1, 3), out=x)
    ref = np.ones((2, 3, 4), np.float32)
    ref[:, :1, :3] = 5
    np.testing.assert_array_equal(x.asnumpy(), ref)
    assert not hasattr(mx.nd._internal, "sum")


def test_contrib_isinf_isnan_isfinite():
    x = mx.nd.array([np.inf, -np.inf, np.nan, 5.0, 0.0])
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [1, 1, 0, 0, 0]
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [0, 0, 1, 0, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [0, 0, 0, 1, 1]
    # the _contrib_ operators appear without their prefix
    assert mx.nd.contrib.boolean_mask is mx.nd._contrib_boolean_mask


def test_top_level_np_shape_exports():
    assert mx.np_shape is mx.util.np_shape and mx.is_np_shape is mx.util.is_np_shape
    assert not mx.is_np_shape()
    with mx.np_shape(True):
        assert mx.is_np_shape()
    assert not mx.is_np_shape()
    prev = mx.set_np_shape(True)
    assert prev is False and mx.is_np_shape()
    mx.set_np_shape(False)
    for name in ("use_np_shape", "is_np_array", "np_array", "use_np_array", "use_np"):
        assert getattr(mx, name) is getattr(mx.util, name)


def test_name_manager_and_prefix():
    with mx.name.NameManager() as nm:
        assert mx.name.NameManager._current.value is nm
        assert [nm.get(None, "fc"), nm.get(None, "fc"), nm.get("x", "fc"), nm.get("", "conv")] \
            == ["fc0", "fc1", "x", "conv0"]
        with mx.name.Prefix("net_") as p:
            assert p.get(None, "fc") == "net_fc0" and p.get("w", "fc") == "net_w"
        assert mx.name.NameManager._current.value is nm
    assert mx.name.NameManager._current.value is not nm


# ---- indexing --------------------------------------------------------------------------------
def test_basic_indexing_slice_is_contiguous_matches_numpy():
    x = np.arange(3 * 4 * 5).reshape(3, 4, 5)
    slices = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
              slice(None, None, -1)]
    f = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    for idx in combinations_with_replacement(slices, 3):
        for slc in permutations(idx):
            assert f(slc, x.shape) == x[slc].flags.contiguous, slc


def test_setitem_value_broadcasts_over_non_int_axes():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    m = mx.nd.array(x)
    v = np.arange(3, dtype=np.float32) * -1
    m[:, :, 1, 2] = mx.nd.array(v)               # non-contiguous: (2, 3) target, (3,) value
    x[:, :, 1, 2] = v
    np.testing.assert_array_equal(m.asnumpy(), x)
    m[0] = mx.nd.ones((1, 1, 1, 5)) * 9          # leading size-1 axes of the value are dropped
    x[0] = 9
    np.testing.assert_array_equal(m.asnumpy(), x)
    m[1, ::2] = mx.nd.ones((1, 1, 5)) * 4
    x[1, ::2] = 4
    np.testing.assert_array_equal(m.asnumpy(), x)


def test_setitem_of_a_recorded_value_into_part_of_an_array_raises():
    x = mx.nd.zeros((3, 4))
    y = mx.nd.ones((4,))
    y.attach_grad()
    with mx.autograd.record():
        with pytest.raises(MXNetError, match="Inplace operations"):
            x[0] = y
        with pytest.raises(MXNetError, match="Inplace operations"):
            x[[0, 2]] = y
        x[None] = mx.nd.broadcast_to(y, shape=(3, 4))   # a whole-array copy is allowed
    assert x.asnumpy().tolist() == [[1.0] * 4] * 3
    x[1] = y                                             # outside record: fine
    z = mx.nd.zeros((3, 4))
    with mx.autograd.record():
        z[1] = mx.nd.ones((4,))                          # value not in a graph: fine
    assert z.asnumpy()[1].tolist() == [1.0] * 4


# ---- DLPack and from_numpy ----------------------------------------------------------------------
def test_dlpack_functions():
    a = mx.nd.array(np.random.rand(3, 4))
    ref = a.asnumpy()
    for pack in (mx.nd.to_dlpack_for_read(a), mx.nd.to_dlpack_for_write(a.copy()),
                 a.to_dlpack_for_read()):
        np.testing.assert_array_equal(mx.nd.from_dlpack(pack).asnumpy(), ref)


def test_from_numpy_zero_copy_rules():
    arr = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    m = mx.nd.from_numpy(arr)
    with pytest.raises(ValueError):
        arr[2, 1] = 0                         # read-only while shared, as MXNet
    m[2, 1] = 100
    assert m.asnumpy()[2, 1] == 100 and arr[2, 1] == 100
    del m
    gc.collect()
    arr[0, 0] = -1                            # writable again once no NDArray shares it
    with pytest.raises(ValueError, match="c-contiguous"):
        mx.nd.from_numpy(np.ones((3, 2)).T)
    c = mx.nd.from_numpy(np.ones((3, 2)).T, zero_copy=False)
    assert c.shape == (2, 3) and c.dtype == np.float64
    assert mx.nd.from_numpy(np.zeros((1, 0, 2))).shape == (1, 0, 2)
    assert mx.nd.from_numpy(np.array(5).reshape(())).asnumpy() == 5


# ---- serialization ---------------------------------------------------------------------------
def test_save_load_np_shape_semantics(tmp_path):
    fname = os.fspath(tmp_path / "a.params")
    arrays = [mx.nd.array(np.zeros((2, 0, 1))), mx.nd.array(np.arange(6).reshape(2, 3))]
    mx.nd.save(fname, arrays)
    loaded = mx.nd.load(fname)
    assert [a.shape for a in loaded] == [(2, 0, 1), (2, 3)]
    with mx.np_shape(True):
        with pytest.raises(MXNetError, match="not saved in np shape"):
            mx.nd.load(fname)
        scalar = mx.nd.array(np.array(3.0).reshape(()))
        mx.nd.save(fname, arrays + [scalar])       # V3 entries
        back = mx.nd.load(fname)
        assert [a.shape for a in back] == [(2, 0, 1), (2, 3), ()]
        assert back[2].asnumpy() == 3.0
    with pytest.raises(MXNetError, match="saved in np shape"):
        mx.nd.load(fname)
    with open(fname, "rb") as f:
        raw = f.read()
    with pytest.raises(MXNetError, match="saved in np shape"):
        mx.nd.load_frombuffer(raw)


def _raw_state(values, dev_type):
    """NDArray::Save bytes of a 1-d float32 array (V2 magic, dense, shape, context, type flag,
    data), what MXNet's NDArray.__getstate__ returns in its 'handle'."""
    values = np.asarray(values, "<f4")
    return (struct.pack("<Iiiq", 0xF993FAC9, 0, 1, values.size)
            + struct.pack("<iii", dev_type, 0, 0) + values.tobytes())


def test_getstate_setstate_mxnet_bytes():
    a = mx.nd.array([5.0, 6.0])
    a.__setstate__({"handle": bytearray(_raw_state([7.0, -1.0], 2))})   # saved on a GPU
    assert a.asnumpy().tolist() == [7.0, -1.0] and a.context == mx.cpu()
    b = mx.nd.array([[1.5, 2.5]])
    state = b.__getstate__()
    assert isinstance(state["handle"], bytearray) and bytes(state["handle"][:4]) == \
        bytes.fromhex("c9fa93f9")
    c = mx.nd.zeros((1, 2))
    c.__setstate__(state)
    assert c.asnumpy().tolist() == [[1.5, 2.5]]
    with pytest.raises(MXNetError, match="shape"):
        mx.nd.zeros((3,)).__setstate__(state)


def test_cpu_shared_context_allocates_host_memory():
    a = mx.nd.ones((2, 3), ctx=mx.Context("cpu_shared", 0))
    assert a.context.device_type == "cpu_shared"
    assert (a * 2).asnumpy().tolist() == [[2, 2, 2], [2, 2, 2]]


def test_broadcast_like_axes_must_pair_up():
    lhs, rhs = mx.nd.ones((1, 3)), mx.nd.ones((2, 3))
    with pytest.raises(mx.MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())
    with pytest.raises(mx.MXNetError, match="broadcast_like"):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0, 1))
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0,)).shape == (2, 3)


def test_rcbrt():
    np.testing.assert_allclose(mx.nd.rcbrt(mx.nd.array([8.0, 27.0])).asnumpy(), [0.5, 1 / 3],
                               rtol=1e-6)

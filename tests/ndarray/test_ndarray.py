"""NDArray front end: creation, dtypes, contexts, views, indexing, async behaviour, interop."""
import subprocess
import sys

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_creation_dtypes(dtype):
    a = mx.nd.array([[1, 0, 3], [4, 5, 0]], dtype=dtype)
    assert a.dtype == np.dtype(dtype).type and a.shape == (2, 3) and a.size == 6 and a.ndim == 2
    np.testing.assert_array_equal(a.asnumpy(), np.array([[1, 0, 3], [4, 5, 0]], dtype=dtype))
    assert mx.nd.empty((2, 2), dtype=dtype).shape == (2, 2)
    assert mx.nd.zeros_like(a).asnumpy().sum() == 0
    assert mx.nd.ones_like(a).dtype == np.dtype(dtype).type


def test_defaults_follow_mxnet():
    # MXNet 1.9.1: mx.nd.array of a numpy array or list is float32 unless dtype is given
    assert mx.nd.array(np.arange(3)).dtype == np.float32
    assert mx.nd.array(np.arange(3.0)).dtype == np.float32
    assert mx.nd.array(mx.nd.ones(2, dtype="int32")).dtype == np.int32
    base = mx.current_context()          # cpu(0), or gpu(0) in tests/gpu's re-run
    assert mx.nd.ones((2, 3)).context == base
    assert repr(mx.nd.ones((2, 3))) == "\n[[1. 1. 1.]\n [1. 1. 1.]]\n<NDArray 2x3 @%s>" % base
    assert mx.nd.ones(3).stype == "default"


def test_contexts():
    base = mx.current_context()
    with mx.cpu(1):
        a = mx.nd.zeros(2)
        assert a.context == mx.cpu(1)
        assert mx.current_context() == mx.cpu(1)
    assert mx.current_context() == base
    b = a.as_in_context(mx.cpu(0))
    assert b.context == mx.cpu(0) and b.asnumpy().tolist() == [0, 0]
    assert mx.nd.ones(2, ctx=mx.cpu_pinned()).context == mx.cpu_pinned(0)


def test_default_ctx_class_property_is_deprecated_but_works():
    base = mx.current_context()
    with pytest.warns(DeprecationWarning):
        assert mx.Context.default_ctx == base
    try:
        with pytest.warns(DeprecationWarning):
            mx.Context.default_ctx = mx.cpu(2)
        assert mx.nd.zeros(1).context == mx.cpu(2)
    finally:
        with pytest.warns(DeprecationWarning):
            mx.Context.default_ctx = base
    assert mx.current_context() == base


def test_creation_functions_take_mxnet_s_ignored_keywords():
    x = mx.nd.ones(2)
    assert mx.nd.zeros((2,), name="z", __layout__="NC").asnumpy().tolist() == [0, 0]
    assert mx.nd.ones_like(x, name="o").asnumpy().tolist() == [1, 1]
    mx.nd.zeros_like(x, out=x)
    assert x.asnumpy().tolist() == [0, 0]
    with pytest.raises(TypeError, match="zeros.*foo"):
        mx.nd.zeros((2,), foo=1)
    assert mx.context.num_gpus() >= 0
    if mx.context.num_gpus() == 0:
        with pytest.raises(MXNetError, match="gpu"):
            mx.nd.zeros((2,), ctx=mx.gpu(0))


def test_copy_astype_reshape():
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    c = a.copy()
    c[:] = 0
    assert a.asnumpy().sum() == 66 and c.asnumpy().sum() == 0
    d = mx.nd.zeros((3, 4))
    a.copyto(d)
    assert d.asnumpy().sum() == 66
    assert a.astype("int32").dtype == np.int32
    assert a.astype("float32", copy=False) is a
    r = a.reshape((2, -1))
    assert r.shape == (2, 6) and r._same_memory(a)
    assert a.reshape(0, 2, -1).shape == (3, 2, 2)
    assert a.reshape((-4, 1, 3, -2)).shape == (1, 3, 4)
    assert a.T.shape == (4, 3)
    assert a.asscalar if True else None
    with pytest.raises(ValueError, match="scalar"):
        a.asscalar()
    assert mx.nd.array([2.5]).asscalar() == 2.5


def test_basic_indexing_views_and_copies():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.nd.array(x)
    cases = [1, (1, 2), (1, 2, 3), slice(0, 1), (slice(None), 1), (0, slice(1, 3)),
             (Ellipsis, 1), (1, Ellipsis), (slice(None), slice(None), slice(None, None, -2)),
             (None, 1), (0, None, slice(1, 2)), (slice(1, None), slice(None, None, 2))]
    for key in cases:
        exp = x[key]
        exp = exp.reshape(1) if exp.ndim == 0 else exp
        np.testing.assert_array_equal(a[key].asnumpy(), exp, err_msg=str(key))
    assert a[1]._same_memory(a) and a[1, 1:3]._same_memory(a)   # contiguous -> views
    assert not a[:, 1]._same_memory(a)                           # strided -> copy, as MXNet
    with pytest.raises(IndexError):
        a[2]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]


def test_empty_basic_selection_is_numpys_empty_array():
    """Basic indexing that selects nothing gives numpy's empty array (the slice operator under
    it refuses an empty result outside numpy shape semantics, as MXNet's)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.nd.array(x)
    for key in [slice(1, 1), slice(5, 7), (slice(None), slice(5, 7)), (slice(None), slice(1, 1)),
                (slice(1, 1), slice(1, 3)), (slice(None, None, 2), slice(3, 1))]:
        assert a[key].shape == x[key].shape, key
    assert not mx.util.is_np_shape()


def test_writes_through_views_are_ordered():
    a = mx.nd.zeros((4, 5))
    row = a[2]
    row[:] = 7
    row += 1
    a[0] = mx.nd.ones(5) * 3
    np.testing.assert_array_equal(a.asnumpy()[2], np.full(5, 8.0))
    np.testing.assert_array_equal(a.asnumpy()[0], np.full(5, 3.0))


def test_setitem_forms():
    x = np.zeros((3, 4), np.float32)
    a = mx.nd.zeros((3, 4))
    a[1] = 5; x[1] = 5
    a[:, 2] = 7; x[:, 2] = 7
    a[0, 1:3] = np.array([1, 2]); x[0, 1:3] = [1, 2]
    a[2, ::2] = mx.nd.array([9, 9]); x[2, ::2] = 9
    a[:, -1] = mx.nd.array([1, 2, 3]); x[:, -1] = [1, 2, 3]
    a[[0, 2]] = 4; x[[0, 2]] = 4
    np.testing.assert_array_equal(a.asnumpy(), x)
    a[:] = np.arange(12).reshape(3, 4); x[:] = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(a.asnumpy(), x)
    a[mx.nd.array([1], dtype="int32")] = mx.nd.ones((1, 4))
    x[1] = 1
    np.testing.assert_array_equal(a.asnumpy(), x)


def test_integer_array_indexing():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = mx.nd.array(x)
    np.testing.assert_array_equal(a[[3, 0, 3]].asnumpy(), x[[3, 0, 3]])
    np.testing.assert_array_equal(a[np.array([[1], [2]])].asnumpy(), x[np.array([[1], [2]])])
    np.testing.assert_array_equal(a[mx.nd.array([2, 1])].asnumpy(), x[[2, 1]])
    with pytest.raises(MXNetError):
        a[[7]].asnumpy()


def test_comparisons_give_0_1_arrays():
    a = mx.nd.array([1, 2, 3])
    assert (a > 2).asnumpy().tolist() == [0, 0, 1]
    assert (a == 2).dtype == np.float32
    assert (a != mx.nd.array([1, 0, 3])).asnumpy().tolist() == [0, 1, 0]


def test_numpy_interop_and_dlpack():
    a = mx.nd.array([[1, 2], [3, 4]], ctx=mx.cpu())      # numpy reads host memory only
    assert np.asarray(a).tolist() == [[1, 2], [3, 4]]
    n = np.from_dlpack(a)               # zero-copy view through DLPack
    a[0, 0] = 10
    a.wait_to_read()
    assert n[0, 0] == 10
    src = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = mx.nd.from_dlpack(src)
    src[0, 0] = 42
    assert b.asnumpy()[0, 0] == 42 and b.dtype == np.float64
    c = mx.nd.from_dlpack(a.to_dlpack_for_read())
    assert c.asnumpy().tolist() == [[10, 2], [3, 4]]
    w = mx.nd.from_dlpack(a.to_dlpack_for_write())
    w[:] = 0
    w.wait_to_read()     # w is a second handle on a's memory: its writes are ordered on w
    assert a.asnumpy().sum() == 0


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    a = mx.nd.array([[1, 2], [3, 4]])
    t = torch.from_dlpack(a)
    t[0, 0] = 5
    assert a.asnumpy()[0, 0] == 5
    b = mx.nd.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4.0)))
    assert b.asnumpy().tolist() == [0, 1, 2, 3]


def test_push_returns_before_work_is_done():
    from mxc._core import engine
    x = mx.nd.ones((512, 512))
    y = x
    for _ in range(50):
        y = mx.nd.exp(y * 0.0)
    pending = engine.pending()
    y.wait_to_read()
    assert engine.pending() == 0
    assert pending > 0 or engine.engine_type() == "NaiveEngine"
    np.testing.assert_allclose(y.asnumpy(), 1.0)


def test_errors_surface_at_the_wait_and_engine_survives():
    a = mx.nd.ones((3, 2))
    bad = mx.nd.take(a, mx.nd.array([9], dtype="int32"), mode="raise")
    dep = bad + 1
    with pytest.raises(MXNetError, match="take"):
        dep.asnumpy()
    assert (a + 1).asnumpy().sum() == 12


def test_waitall_and_truthiness():
    a = mx.nd.ones(3) * 2
    mx.nd.waitall()
    assert bool(mx.nd.array([1]))
    with pytest.raises(ValueError):
        bool(a)
    assert len(a) == 3 and [x.asscalar() for x in a] == [2, 2, 2]


def test_save_load_roundtrip(tmp_path):
    d = {"w": mx.nd.array(np.random.rand(3, 4)), "b": mx.nd.arange(5, dtype="int64")}
    f = str(tmp_path / "m.params")
    mx.nd.save(f, d)
    back = mx.nd.load(f)
    assert sorted(back) == ["b", "w"]
    np.testing.assert_array_equal(back["w"].asnumpy(), d["w"].asnumpy())
    mx.nd.save(f, [d["w"]])
    assert len(mx.nd.load(f)) == 1
    with pytest.raises(ValueError):
        mx.nd.save(f, {"a": np.zeros(2)})


def test_import_and_exit_with_queued_work_in_subprocess():
    code = ("import mxc as mx\nx = mx.nd.ones((256, 256))\n"
            "for _ in range(2000):\n    x = x + 1\nprint('pushed')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "pushed" in r.stdout, r.stderr


def test_load_files_written_by_mxnet_and_save_identical_bytes(tmp_path):
    """mx.nd.load reads .params written by MXNet 1.9.1 (tests/data/params, made by
    tests/data/make_params_fixtures.py) and mx.nd.save writes the same bytes back."""
    import pathlib
    data = pathlib.Path(__file__).parent.parent / "data" / "params"
    src = data / "dict_dtypes.params"
    loaded = mx.nd.load(str(src))
    expected = np.load(data / "dict_dtypes.npz", allow_pickle=False)
    assert sorted(loaded) == sorted(expected.files)
    for k in expected.files:
        np.testing.assert_array_equal(loaded[k].asnumpy(), expected[k])
        assert loaded[k].dtype == expected[k].dtype.type
    out = tmp_path / "again.params"
    mx.nd.save(str(out), {k: loaded[k] for k in loaded})
    assert out.read_bytes() == src.read_bytes()
    with pytest.raises(MXNetError, match="again_cut"):
        cut = tmp_path / "again_cut.params"
        cut.write_bytes(src.read_bytes()[:-5])
        mx.nd.load(str(cut))


def test_queued_work_holds_no_memory_for_results_not_yet_computed():
    """Output blocks are allocated when an operation runs (MXNet's delayed allocation), so a
    long queue of pending work on big arrays costs memory for live results only."""
    from mxc._core import storage
    x = mx.nd.ones((1 << 20,))           # 4 MB
    x.wait_to_read()
    base = storage.stats()["in_use"]
    storage.reset_peak()
    for _ in range(100):
        x = mx.nd.exp(x * 0.0)
    x.wait_to_read()
    grown = storage.stats()["peak"] - base
    assert grown <= 8 * (4 << 20), f"peak grew by {grown} bytes for 200 queued 4 MB ops"
    assert x.asnumpy()[0] == 1.0


def test_concurrent_first_reads_of_an_unwritten_array_share_one_block():
    code = (
        "import mxc as mx, numpy as np\n"
        "for _ in range(20):\n"
        "    a = mx.nd.empty((4096,))\n"
        "    outs = [a * 1.0 for _ in range(16)]\n"
        "    vals = [o.asnumpy() for o in outs]\n"
        "    ref = a.asnumpy()\n"
        "    assert all(np.array_equal(v, ref, equal_nan=True) for v in vals)\n"
        "print('ok')\n")
    env = dict(__import__("os").environ, MXNET_CPU_WORKER_NTHREADS="4")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


def test_pickle_and_deepcopy_by_value():
    import copy
    import pickle
    a = mx.nd.array([[1, 2], [3, 4]], dtype="int32", ctx=mx.cpu(1))
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype == np.int32 and b.context == mx.cpu(1)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())
    a.attach_grad()
    c = copy.deepcopy(a)
    assert c.dtype == np.int32 and c.context == mx.cpu(1) and c.grad is None
    c[:] = 0
    assert a.asnumpy().sum() == 10
    box = copy.deepcopy({"x": a, "y": [a]})             # one copy per array, shared as in the source
    assert box["x"] is box["y"][0] and box["x"] is not a
    np.testing.assert_array_equal(box["x"].asnumpy(), a.asnumpy())
    rs = mx.nd.array([[0, 1], [2, 0]]).tostype("row_sparse")
    rc = copy.deepcopy(rs)
    assert rc.stype == "row_sparse" and rc is not rs
    np.testing.assert_array_equal(rc.asnumpy(), rs.asnumpy())


def test_no_storage_leak_across_many_operations():
    """Every block goes back to the pool once its arrays and pending operations are gone,
    including through failed operations, views, slicing copies and out= writes."""
    import gc
    from mxc._core import storage
    mx.nd.waitall()
    gc.collect()
    base = storage.stats()["in_use"]
    for _ in range(200):
        a = mx.nd.ones((64, 64))
        b = (a * 2 + 1)[3:9]
        c = mx.nd.sum(b, axis=1)
        d = b[:, ::2]
        mx.nd.elemwise_add(c, c, out=c)
        bad = mx.nd.take(a, mx.nd.array([99], dtype="int32"), mode="raise")
        with pytest.raises(MXNetError):
            (bad + 1).asnumpy()
        del a, b, c, d, bad
    mx.nd.waitall()
    gc.collect()
    assert storage.stats()["in_use"] == base


def test_overlapping_in_place_updates_read_the_old_values():
    # numpy's answer; a kernel writing over what it still has to read would give a running sum
    x = mx.nd.arange(6)
    x[1:] += x[:-1]
    assert x.asnumpy().tolist() == [0, 1, 3, 5, 7, 9]
    y = mx.nd.arange(6)
    mx.nd.elemwise_add(y[:-1], y[1:], out=y[1:])
    assert y.asnumpy().tolist() == [0, 1, 3, 5, 7, 9]
    z = mx.nd.arange(6)
    mx.nd.negative(z[:-1], out=z[1:])
    assert z.asnumpy().tolist() == [0, 0, -1, -2, -3, -4]


ADVANCED_KEYS = [
    (slice(None), [0, 2]), ([1, 0], 2), (1, slice(None), [3, 0]), (Ellipsis, [1]), ([0, 1], [1, 2]),
    ([[0], [1]], slice(1, 3)), (slice(None), [2, 0], slice(1, None, 2)), (None, [1, 0]),
    ([1, 1], [2, 0], [3, 3]), (slice(None), [[0, 1], [2, 2]], 1), ([-1, 0], slice(None, None, -1)),
]


def test_repeated_positions_keep_the_last_write(rng):
    """x[idx] = v with repeated positions: the last write wins, as in numpy. The scatter gets
    only the last write to each position, so a GPU (no order between the writers of one
    position) gives the same result; which entries are kept is checked directly, since a
    sequential host scatter would hide a wrong choice."""
    from mxc.ndarray.indexing import _last_writes
    assert _last_writes(np.array([3, 1, 2]), 5) is None
    assert _last_writes(np.array([3, 1, 3, -1, 1]), 5).tolist() == [2, 3, 4]
    assert _last_writes(np.array([3, 1, 3, -2, 1]), 5).tolist() == [3, 4]     # -2 is 3
    p = rng.integers(-6, 6, 200)
    keep = _last_writes(p, 6)
    ref = np.zeros(6)
    ref[p] = np.arange(200)
    got = np.zeros(6)
    got[p[keep]] = keep
    np.testing.assert_array_equal(got, ref)
    assert len(np.unique(p[keep] % 6)) == len(keep)
    x = np.zeros((6, 3), np.float32)
    a = mx.nd.array(x)
    rows = [4, 1, 4, -2, 0, 1]
    v = rng.standard_normal((6, 3)).astype(np.float32)
    x[rows] = v
    a[rows] = v
    np.testing.assert_array_equal(a.asnumpy(), x)
    y = np.zeros((4, 5), np.float32)
    b = mx.nd.array(y)
    key = ([0, 3, 0, 3], [2, 2, 2, -3])
    w = np.arange(1, 5, dtype=np.float32)
    y[key] = w
    b[key] = w
    np.testing.assert_array_equal(b.asnumpy(), y)


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=[str(k) for k in ADVANCED_KEYS])
def test_advanced_indexing_follows_numpy(key, rng):
    """Tuples mixing integer arrays with ints/slices/None/Ellipsis select and assign exactly as
    numpy (MXNet 1.9 does the same; a few of these are also in the MXNet golden set)."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.nd.array(x)
    got, exp = a[key].asnumpy(), x[key]
    assert got.shape == exp.shape and np.array_equal(got, exp)
    val = rng.standard_normal(exp.shape).astype(np.float32)
    x[key] = val
    a[key] = val
    np.testing.assert_array_equal(a.asnumpy(), x)
    x[key] = 7
    a[key] = 7
    np.testing.assert_array_equal(a.asnumpy(), x)
    with pytest.raises(IndexError):
        a[(slice(None), [0, 9])]


def test_mxnet_helper_methods():
    a = mx.nd.zeros((3, 4))
    a.slice_assign(mx.nd.ones((2, 2)), begin=(0, 1), end=(2, 3), step=(1, 1))
    a.slice_assign_scalar(5, begin=(2, 0), end=(3, 4), step=(1, 2))
    exp = np.zeros((3, 4), np.float32)
    exp[0:2, 1:3] = 1
    exp[2, 0:4:2] = 5
    np.testing.assert_array_equal(a.asnumpy(), exp)
    assert a.tostype("default") is a
    assert a.tostype("csr").stype == "csr"       # sparse storage: tests/ndarray/test_sparse.py
    a._sync_copyfrom(np.arange(12).reshape(3, 4))
    assert a.asnumpy()[2, 3] == 11
    b = mx.nd.ones((2, 1, 3)).broadcast_axes(axis=1, size=4)
    assert b.shape == (2, 4, 3) and b.asnumpy().sum() == 24
    assert mx.nd.broadcast_axis(mx.nd.ones((1, 3)), axis=(0,), size=(2,)).shape == (2, 3)


def test_histogram_front_and_ordering_methods():
    x = mx.nd.array([1, 2, 2, 3, 5.0])
    counts, edges = mx.nd.histogram(x, bins=3, range=(0, 6))
    assert counts.asnumpy().tolist() == [1, 3, 1] and counts.dtype == np.int64
    np.testing.assert_allclose(edges.asnumpy(), [0, 2, 4, 6])
    c2, e2 = mx.nd.histogram(x, bins=3)               # edges from the data, as numpy
    ref_c, ref_e = np.histogram(x.asnumpy(), bins=3)
    assert c2.asnumpy().tolist() == ref_c.tolist()
    np.testing.assert_allclose(e2.asnumpy(), ref_e, rtol=1e-6)
    assert x.sort(is_ascend=False).asnumpy().tolist() == [5, 3, 2, 2, 1]
    assert x.topk(k=2).asnumpy().tolist() == [4, 3]


def test_an_operator_refusing_its_inputs_raises_mxneterror_that_is_also_valueerror():
    a = mx.nd.ones((2, 3))
    with pytest.raises(mx.base.MXNetError, match="dot"):
        mx.nd.dot(a, a)
    with pytest.raises(ValueError, match="dot"):
        mx.nd.dot(a, a)


def test_zeros_and_ones_refuse_the_unknown_shape_in_legacy_shape_mode():
    # MXNet 1.x: () is an unknown shape unless numpy shape semantics is on
    for fn in (mx.nd.zeros, mx.nd.ones):
        with pytest.raises(mx.base.MXNetError, match=r"shape \(\) is unknown"):
            fn(shape=())
    assert mx.nd.zeros((0, 3)).shape == (0, 3)          # empty arrays stay allowed
    with mx.np_shape():
        assert mx.nd.ones(shape=()).asnumpy() == np.ones(())
        assert mx.nd.zeros(shape=(0, 1, 0, 4)).shape == (0, 1, 0, 4)

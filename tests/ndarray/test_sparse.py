"""Sparse NDArrays (mxc/ndarray/sparse.py): creation, storage casts, CSR slicing, check_format,
autograd with sparse gradients, and .params files with sparse entries written by MXNet 1.9.1
(tests/data/sparse_mxnet.params, from tests/data/make_sparse_golden.py)."""
import os
import pickle
import struct
import warnings

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ndarray import serialize
from mxc.test_utils import rand_ndarray, rand_sparse_ndarray

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
PARAMS = os.path.join(DATA, "sparse_mxnet.params")
GOLD = np.load(os.path.join(DATA, "sparse_golden.npz"))
warnings.simplefilter("ignore", UserWarning)

A = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 4, 0]], dtype=np.float32)


def test_storage_ids():
    sp = mx.nd.sparse
    assert sp._STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1,
                                          "csr": 2}
    assert sp._STORAGE_TYPE_ID_TO_STR[2] == "csr"


def test_tostype_every_way():
    d = mx.nd.array(A)
    for st in ("csr", "row_sparse"):
        s = d.tostype(st)
        assert s.stype == st and s.shape == A.shape and s.dtype == np.float32
        np.testing.assert_array_equal(s.asnumpy(), A)
        for st2 in ("csr", "row_sparse", "default"):
            np.testing.assert_array_equal(s.tostype(st2).asnumpy(), A)
            assert s.tostype(st2).stype == st2
    c = d.tostype("csr")
    np.testing.assert_array_equal(c.indptr.asnumpy(), [0, 2, 2, 4])
    np.testing.assert_array_equal(c.indices.asnumpy(), [1, 3, 0, 2])
    np.testing.assert_array_equal(c.data.asnumpy(), [1, 2, 3, 4])
    r = d.tostype("row_sparse")
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(r.data.asnumpy(), A[[0, 2]])
    assert isinstance(c, mx.nd.sparse.CSRNDArray) and isinstance(r, mx.nd.RowSparseNDArray)
    assert repr(c) == "\n<CSRNDArray 3x4 @cpu(0)>"


def test_creation():
    sp = mx.nd.sparse
    c = sp.csr_matrix(([1, 2, 3, 4], [1, 3, 0, 2], [0, 2, 2, 4]), shape=(3, 4))
    np.testing.assert_array_equal(c.asnumpy(), A)
    c2 = sp.csr_matrix(([1, 2, 3, 4], ([0, 0, 2, 2], [1, 3, 0, 2])), shape=(3, 4))
    np.testing.assert_array_equal(c2.asnumpy(), A)
    np.testing.assert_array_equal(sp.csr_matrix(A).asnumpy(), A)
    assert sp.csr_matrix((3, 4)).asnumpy().sum() == 0
    r = sp.row_sparse_array((A[[0, 2]], [0, 2]), shape=(3, 4))
    np.testing.assert_array_equal(r.asnumpy(), A)
    np.testing.assert_array_equal(sp.row_sparse_array(mx.nd.array(A)).asnumpy(), A)
    assert sp.row_sparse_array((5, 2)).shape == (5, 2)
    z = mx.nd.zeros((4, 2), stype="row_sparse", dtype="float64")
    assert z.stype == "row_sparse" and z.dtype == np.float64 and z.indices.shape == (0,)
    assert (mx.nd.sparse.zeros("csr", (2, 3)).asnumpy() == 0).all()
    assert mx.nd.sparse.empty("default", (2, 2)).stype == "default"
    with pytest.raises(ValueError, match="indptr"):
        sp.csr_matrix(([1.0], [0], [0, 1]), shape=(3, 4))
    # as MXNet, invalid parts build an array that check_format() rejects; here every operator
    # and conversion refuses it too
    bad = sp.row_sparse_array(([[1.0, 2.0]], [7]), shape=(3, 2))
    with pytest.raises(MXNetError, match="out of range"):
        bad.check_format()
    with pytest.raises(MXNetError, match="not in valid format"):
        bad.asnumpy()
    with pytest.raises(MXNetError, match="not in valid format"):
        mx.nd.dot(mx.nd.ones((2, 3)), bad)
    with pytest.raises(MXNetError, match="not in valid format"):
        mx.nd.square(bad.copy())
    unsorted = sp.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [2, 0]), shape=(3, 2))
    with pytest.raises(MXNetError, match="sorted"):
        unsorted.check_format()
    with pytest.raises(ValueError, match="shape"):
        sp.row_sparse_array((2, 2), shape=(3, 2))
    with pytest.raises(ValueError, match="shape"):
        sp.csr_matrix(mx.nd.ones((2, 2)), shape=(3, 2))
    with pytest.raises(MXNetError, match="unknown argument"):
        sp.retain(mx.nd.ones((2, 2)), invalid_arg="garbage_value")


def test_scipy_roundtrip():
    sps = pytest.importorskip("scipy.sparse")
    m = sps.random(6, 5, density=0.3, format="csr", dtype=np.float64, random_state=0)
    c = mx.nd.sparse.csr_matrix(m)
    assert c.dtype == np.float64
    np.testing.assert_array_equal(c.asnumpy(), m.toarray())
    np.testing.assert_array_equal(c.asscipy().toarray(), m.toarray())
    np.testing.assert_array_equal(mx.nd.sparse.array(m).asnumpy(), m.toarray())


def test_csr_slicing_and_copy():
    c = mx.nd.array(A).tostype("csr")
    np.testing.assert_array_equal(c[1:3].asnumpy(), A[1:3])
    np.testing.assert_array_equal(c[2].asnumpy(), A[2:3])
    assert c[0:1].stype == "csr"
    cp = c.copy()
    np.testing.assert_array_equal(cp.asnumpy(), A)
    r = mx.nd.array(A).tostype("row_sparse")
    assert r[:] is r
    out = mx.nd.zeros(A.shape)
    r.copyto(out)
    np.testing.assert_array_equal(out.asnumpy(), A)
    r2 = mx.nd.sparse.zeros("row_sparse", A.shape)
    r.copyto(r2)
    np.testing.assert_array_equal(r2.asnumpy(), A)
    r2[:] = 0
    assert r2.asnumpy().sum() == 0
    assert r.astype("float64").dtype == np.float64
    c.check_format()
    r.check_format()
    y = pickle.loads(pickle.dumps(c))
    assert y.stype == "csr"
    np.testing.assert_array_equal(y.asnumpy(), A)


def test_retain_method():
    r = mx.nd.array(A).tostype("row_sparse")
    k = r.retain(mx.nd.array([2], dtype="int64"))
    np.testing.assert_array_equal(k.asnumpy(), np.where(np.arange(3)[:, None] == 2, A, 0))


def test_check_format_errors():
    sp = mx.nd.sparse
    c = sp.csr_matrix(A)
    bad = sp._make("csr", (3, 4), [c.data, mx.nd.array([1, 9, 0, 2], dtype="int64"), c.indptr],
                   mx.cpu(), np.float32)
    with pytest.raises(MXNetError, match="column index"):
        bad.check_format()
    bad.check_format(full_check=False)


def test_rand_ndarray():
    for st in ("csr", "row_sparse"):
        x = rand_ndarray((8, 6), st, density=0.5)
        assert x.stype == st and x.shape == (8, 6)
        x.check_format()
    arr, (v, idx) = rand_sparse_ndarray((10, 3), "row_sparse", density=1.0)
    np.testing.assert_array_equal(arr.indices.asnumpy(), idx)


def test_arith_and_autograd():
    x = mx.nd.array(A).tostype("row_sparse")
    y = mx.nd.array(A * 2).tostype("row_sparse")
    np.testing.assert_array_equal((x + y).asnumpy(), 3 * A)
    np.testing.assert_array_equal((x - y).asnumpy(), -A)
    np.testing.assert_array_equal((x * y).asnumpy(), 2 * A * A)
    np.testing.assert_array_equal((x / 2).asnumpy(), A / 2)
    np.testing.assert_array_equal((1 + x).asnumpy(), A + 1)
    np.testing.assert_array_equal(mx.nd.sparse.add(x, y).asnumpy(), 3 * A)
    for st in ("csr", "row_sparse", "default"):
        v = mx.nd.array(A).tostype(st)
        v.attach_grad()
        assert v.grad.stype == st
        with mx.autograd.record():
            out = v * 2 + v * v
        out.backward()
        np.testing.assert_allclose(v.grad.asnumpy(), 2 + 2 * A)
        assert v.detach().stype == st


def test_params_load_mxnet_file():
    d = mx.nd.load(PARAMS)
    assert d["csr"].stype == "csr" and d["rsp"].stype == "row_sparse"
    assert d["rsp_empty"].stype == "row_sparse" and d["dense"].stype == "default"
    assert d["csr64"].dtype == np.float64
    for k, v in d.items():
        np.testing.assert_array_equal(v.asnumpy(), GOLD["params_" + k], err_msg=k)


def test_params_save_byte_identical(tmp_path):
    d = mx.nd.load(PARAMS)
    out = tmp_path / "x.params"
    mx.nd.save(str(out), d)
    assert out.read_bytes() == open(PARAMS, "rb").read()


def _corrupt(raw, pos, value, fmt="<q"):
    b = bytearray(raw)
    struct.pack_into(fmt, b, pos, value)
    return bytes(b)


def test_params_corrupted_sparse_entries():
    c = mx.nd.array(A).tostype("csr")
    raw = serialize.save_bytes([serialize.SparseEntry("csr", (3, 4), c.data.asnumpy(),
                                                      [c.indptr.asnumpy(), c.indices.asnumpy()])])
    assert serialize.load_bytes(raw)[0].stype == "csr"
    # header 24 bytes; magic 4, stype 4, sshape: ndim 4 + dim 8, shape: ndim 4 + 2*8
    huge = _corrupt(raw, 24 + 8 + 4, 1 << 40)
    with pytest.raises(MXNetError, match="inconsistent|truncated"):
        serialize.load_bytes(huge)
    # indices live at the end, before the names count (8 bytes): last index out of range
    bad_idx = _corrupt(raw, len(raw) - 8 - 8, 99)
    with pytest.raises(MXNetError, match="column index out of range"):
        serialize.load_bytes(bad_idx)
    # indptr (after the 4 float32 values) made non-monotonic
    data_start = len(raw) - 8 - 4 * 8 - 4 * 8 - 4 * 4
    bad_ptr = _corrupt(raw, data_start + 16 + 8, 9)
    with pytest.raises(MXNetError, match="indptr"):
        serialize.load_bytes(bad_ptr)
    with pytest.raises(MXNetError, match="truncated"):
        serialize.load_bytes(raw[:-20])
    r = mx.nd.array(A).tostype("row_sparse")
    raw = serialize.save_bytes([serialize.SparseEntry("row_sparse", (3, 4), r.data.asnumpy(),
                                                      [r.indices.asnumpy()])])
    with pytest.raises(MXNetError, match="strictly increasing|out of range"):
        serialize.load_bytes(_corrupt(raw, len(raw) - 8 - 8, 0))


def test_num_aux_scalar_setitem_and_comparisons():
    sp = mx.nd.sparse
    r = mx.nd.array(A).tostype("row_sparse")
    c = mx.nd.array(A).tostype("csr")
    assert r._num_aux == 1 and c._num_aux == 2
    x = sp.zeros("row_sparse", (3, 4))
    x[:] = 2
    assert x.indices.asnumpy().tolist() == [0, 1, 2]
    np.testing.assert_array_equal(x.asnumpy(), np.full((3, 4), 2, np.float32))
    with pytest.raises(MXNetError, match="CSRNDArray"):
        c[:] = 2
    for s in (r, c):
        z = s == 1                      # 0 == 1 is false: the storage is kept
        assert z.stype == s.stype
        np.testing.assert_array_equal(z.asnumpy(), (A == 1).astype(np.float32))
        z = s == 0                      # 0 == 0: dense
        assert z.stype == "default"
        np.testing.assert_array_equal(z.asnumpy(), (A == 0).astype(np.float32))
        for name, f in (("__gt__", np.greater), ("__lt__", np.less), ("__ne__", np.not_equal),
                        ("__ge__", np.greater_equal), ("__le__", np.less_equal)):
            for v in (-1.0, 0.0, 2.0):
                z = getattr(s, name)(v)
                assert z.stype == ("default" if f(0.0, v) else s.stype), (name, v)
                np.testing.assert_array_equal(z.asnumpy(), f(A, v).astype(np.float32))


def test_csr_take_and_getnnz(rng):
    sps = pytest.importorskip("scipy.sparse")
    a = rng.standard_normal((7, 5)).astype(np.float32)
    a[rng.random((7, 5)) > 0.4] = 0
    c = mx.nd.array(a).tostype("csr")
    ids = np.array([-3, 0, 6, 2, 9, 2])
    for mode in ("clip", "wrap"):
        t = mx.nd.take(c, mx.nd.array(ids), mode=mode)
        assert t.stype == "csr"
        t.check_format()
        np.testing.assert_array_equal(t.asnumpy(), np.take(a, ids, axis=0, mode=mode))
    m = sps.csr_matrix(a)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(mx.nd.contrib.getnnz(c, axis=axis).asnumpy(),
                                      np.atleast_1d(m.getnnz(axis=axis)))
    with pytest.raises(ValueError, match="csr"):
        mx.nd.contrib.getnnz(mx.nd.array(a))

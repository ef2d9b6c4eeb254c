"""mxc.test_utils: MXNet's testing helpers behave as MXNet's (tolerances, messages, gradient
checks on functions of NDArrays)."""
import numpy as np
import pytest

import mxc as mx
from mxc import test_utils as tu


def test_assert_almost_equal_uses_dtype_tolerances_and_names_the_worst_element():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    tu.assert_almost_equal(a, a + 1e-5)                   # within float32's default rtol 1e-4
    with pytest.raises(AssertionError, match="Location of maximum error: \\(2,\\)"):
        tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.5], np.float32))
    tu.assert_almost_equal(mx.nd.array(a), a)             # NDArrays compare by value
    assert tu.almost_equal(a, a) and not tu.almost_equal(a, a * 2)
    assert tu.same(mx.nd.array(a), a)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_assert_almost_equal_on_two_ndarrays_keeps_numpys_rule(dtype):
    """Two NDArrays are compared by the native pass first: it must accept and reject exactly
    what numpy's isclose does (infinities close only to themselves, NaN by equal_nan), and a
    failure still names the worst element."""
    a = np.linspace(-3, 3, 70001).astype(dtype)
    a[10] = np.inf
    a[20] = np.nan
    nd = lambda x: mx.nd.array(x, dtype=dtype)      # noqa: E731
    tu.assert_almost_equal(nd(a), nd(a.copy()), equal_nan=True)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(nd(a), nd(a.copy()))             # NaN != NaN by default
    b = a.copy()
    b[20] = 0
    a[20] = 0
    for bad in (30, 70000):
        c = b.copy()
        c[bad] = np.inf                                         # finite against infinite
        with pytest.raises(AssertionError, match=r"\({}\)|\b{}\b".format(bad, bad)):
            tu.assert_almost_equal(nd(a), nd(c))
    c = b.copy()
    c[40] = c[40] + np.asarray(1, dtype)
    with pytest.raises(AssertionError, match="40"):
        tu.assert_almost_equal(nd(a), nd(c))
    tu.assert_almost_equal(nd(a), nd(c), atol=2)


def test_np_reduce_and_shapes():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(x, (0, 2), True, np.sum), x.sum(axis=(0, 2), keepdims=True))
    s = tu.rand_shape_nd(3, dim=5)
    assert len(s) == 3 and all(1 <= d <= 5 for d in s)
    r = tu.rand_ndarray((3, 4))
    assert r.shape == (3, 4) and r.dtype == np.float32


def test_check_numeric_gradient_on_a_function():
    def f(x, y):
        return mx.nd.tanh(x) * y + mx.nd.sum(x * x, axis=1, keepdims=True)
    loc = [np.random.uniform(-1, 1, (3, 4)), np.random.uniform(-1, 1, (3, 4))]
    tu.check_numeric_gradient(f, loc, numeric_eps=1e-4, rtol=1e-3, atol=1e-4, dtype=np.float64)

    def wrong(x):       # a Function whose backward is off by a factor: the check must fail
        class Twice(mx.autograd.Function):
            def forward(self, a):
                return a * 1.0

            def backward(self, g):
                return g * 2.0
        return Twice()(x)
    with pytest.raises(AssertionError):
        tu.check_numeric_gradient(wrong, [np.ones((2, 2))], rtol=1e-3, atol=1e-4, dtype=np.float64)


def test_check_symbolic_forward_and_backward_on_a_function():
    x = np.array([[1.0, -2.0], [3.0, 0.5]])
    tu.check_symbolic_forward(lambda a: a * a, [x], [x * x], dtype=np.float64)
    og = np.ones_like(x) * 3
    tu.check_symbolic_backward(lambda a: a * a, [x], [og], [2 * x * og], dtype=np.float64)
    with pytest.raises(AssertionError):
        tu.check_symbolic_backward(lambda a: a * a, [x], [og], [x * og], dtype=np.float64)


def test_environment_restores_variables():
    import os
    os.environ.pop("MXC_TU_X", None)
    with tu.environment("MXC_TU_X", "1"):
        assert os.environ["MXC_TU_X"] == "1"
    assert "MXC_TU_X" not in os.environ


def test_with_seed_seeds_numpy_and_mx_random():
    @tu.with_seed(42)
    def draw():
        return np.random.rand(), mx.nd.random.uniform(shape=(3,)).asnumpy()
    a, b = draw(), draw()
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])


def test_compare_optimizer_agrees_and_catches_a_difference():
    from mxc.test_utils import compare_optimizer
    compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                      mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (4, 5), np.float32)
    with pytest.raises(AssertionError):
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                          mx.optimizer.SGD(learning_rate=0.2), (4, 5), np.float32)
    # the aggregated form against one update per tensor
    single = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    multi = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    multi.aggregate_num = 3
    compare_optimizer(single, multi, [(3, 4), (5,), (2, 2)], np.float32, ntensors=3)


def test_create_sparse_array_csr_shuffled_and_rsp_sorted():
    np.random.seed(3)
    a = tu.create_sparse_array((6, 9), "csr", density=0.5, shuffle_csr_indices=True)
    ptr, idx, val = a.indptr.asnumpy(), a.indices.asnumpy(), a.data.asnumpy()
    dense = np.zeros((6, 9), dtype=np.float32)
    for r in range(6):
        dense[r, idx[ptr[r]:ptr[r + 1]]] = val[ptr[r]:ptr[r + 1]]
    np.testing.assert_array_equal(a.asnumpy(), dense)
    assert any((np.diff(idx[ptr[r]:ptr[r + 1]]) < 0).any() for r in range(6))
    b = np.random.rand(9, 4).astype(np.float32)
    np.testing.assert_allclose(mx.nd.sparse.dot(a, mx.nd.array(b)).asnumpy(), dense @ b,
                               rtol=1e-5)
    r = tu.create_sparse_array_zd((7, 3), "row_sparse", 0.9, rsp_indices=[5, 0, 2])
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2, 5])
    assert r.shape == (7, 3)
    with pytest.raises(AssertionError):
        tu.create_sparse_array((2, 2), "dense")


def test_dummy_iter_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12.0).reshape(6, 2), np.arange(6.0), batch_size=2)
    d = tu.DummyIter(it)
    first = next(d).data[0].asnumpy()
    for _ in range(5):
        np.testing.assert_array_equal(next(d).data[0].asnumpy(), first)
    np.testing.assert_array_equal(first, [[0, 1], [2, 3]])


def test_check_speed_and_same_symbol_structure():
    x = mx.sym.var("x")
    y = mx.sym.relu(x * 2)
    t = tu.check_speed(y, N=3, x=(4, 5))
    assert 0 < t < 10
    assert tu.check_speed(y, location={"x": np.ones((2, 2))}, N=2, typ="forward") > 0
    assert tu.same_symbol_structure(y, mx.sym.relu(mx.sym.var("z") * 3))
    assert not tu.same_symbol_structure(y, mx.sym.sigmoid(mx.sym.var("z") * 3))


def test_check_gluon_hybridize_consistency():
    def build(prefix):
        net = mx.gluon.nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, use_bias=False, in_units=4,
                                      weight_initializer=mx.init.One()))
        return net
    data = [mx.nd.array(np.random.rand(2, 4))]
    tu.check_gluon_hybridize_consistency(build, data, numpy_func=lambda x: x @ np.ones((4, 3)))
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(build, data, numpy_func=lambda x: x @ np.ones((4, 3)) + 1)


def _write_idx_gz(path, arr):
    import gzip
    import struct
    with gzip.open(path, "wb") as f:
        f.write(b"\0\0\x08" + bytes([arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape))
        f.write(arr.astype(np.uint8).tobytes())


def test_get_mnist_reads_files_already_there(tmp_path):
    rng = np.random.RandomState(0)
    imgs = {p: rng.randint(0, 256, size=(n, 28, 28)) for p, n in (("train", 5), ("t10k", 3))}
    lbls = {p: rng.randint(0, 10, size=(n,)) for p, n in (("train", 5), ("t10k", 3))}
    for p in ("train", "t10k"):
        _write_idx_gz(tmp_path / f"{p}-images-idx3-ubyte.gz", imgs[p])
        _write_idx_gz(tmp_path / f"{p}-labels-idx1-ubyte.gz", lbls[p])
    d = tu.get_mnist(str(tmp_path))
    np.testing.assert_allclose(d["test_data"], imgs["t10k"].reshape(3, 1, 28, 28) / 255.0,
                               rtol=1e-6)
    np.testing.assert_array_equal(d["train_label"], lbls["train"])
    assert d["train_data"].dtype == np.float32 and d["train_data"].shape == (5, 1, 28, 28)
    _write_idx_gz(tmp_path / "t10k-labels-idx1-ubyte.gz", lbls["t10k"][:2])
    with pytest.raises(mx.base.MXNetError, match="3 test images but 2 labels"):
        tu.get_mnist(str(tmp_path))


def test_download_and_bz2_from_a_file_url(tmp_path):
    import bz2
    src = tmp_path / "src"
    src.mkdir()
    (src / "kdd.t.bz2").write_bytes(bz2.compress(b"1 1:0.5\n0 2:1.5\n"))
    out = tmp_path / "out"
    tu.get_bz2_data(str(out), "kdd.t", (src / "kdd.t.bz2").as_uri(), "kdd.t.bz2")
    assert (out / "kdd.t").read_bytes() == b"1 1:0.5\n0 2:1.5\n"
    assert not (out / "kdd.t.bz2").exists()
    (out / "keep.txt").write_text("mine")
    # an existing file is not fetched again (offline use)
    assert tu.download("http://nowhere.invalid/keep.txt", dirname=str(out)) == str(out / "keep.txt")
    with pytest.raises(mx.base.MXNetError, match="could not fetch"):
        tu.download((src / "missing.bin").as_uri(), dirname=str(out), retries=0)
    assert not list(out.glob("*.part*"))
    with pytest.raises(mx.base.MXNetError, match="never unpickles"):
        tu.get_mnist_pkl()


def test_check_symbolic_backward_binds_grad_stypes():
    # MXNet's grad_stypes: the gradient array is bound in that storage type and keeps it
    a = np.zeros((4, 3), np.float32)
    a[1] = [1, -2, 3]
    x = mx.nd.array(a).tostype("row_sparse")
    sym = mx.sym.relu(mx.sym.var("data"))
    head = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3)).tostype("row_sparse")
    want = np.where(a > 0, head.asnumpy(), 0)
    grads = mx.test_utils.check_symbolic_backward(sym, [x], [head], [want],
                                                  grad_stypes={"data": "row_sparse"})
    assert grads["data"].stype == "row_sparse"
    np.testing.assert_allclose(grads["data"].asnumpy(), want)
    with pytest.raises(AssertionError):
        mx.test_utils.check_symbolic_backward(sym, [x], [head], [want + 1],
                                              grad_stypes={"data": "row_sparse"})


def test_random_uniform_arrays_is_a_list_for_one_shape_too():
    """as MXNet's: MXNet's own tests index [0] into it (random_arrays unwraps one shape)"""
    from mxc.test_utils import random_arrays, random_uniform_arrays
    one = random_uniform_arrays((2, 3), low=-0.5, high=0.5)
    assert isinstance(one, list) and len(one) == 1 and one[0].shape == (2, 3)
    assert (one[0] >= -0.5).all() and (one[0] < 0.5).all()
    two = random_uniform_arrays((2,), (4, 1))
    assert [a.shape for a in two] == [(2,), (4, 1)]
    assert random_arrays((2, 3)).shape == (2, 3)

"""Write the .params fixtures in tests/data/params/ with real MXNet 1.9.1.

Run with the oracle's interpreter from the repository root::

    /work/mxnet-oracle/bin/python tests/data/make_params_fixtures.py

Every ``<name>.params`` is written by MXNet itself (mx.nd.save, mx.npx.save or
Gluon's save_parameters). Next to each dense fixture, ``<name>.npz`` holds the
values MXNet was given (written by numpy's savez_compressed, readable with
``allow_pickle=False``, in the saved order); entries of list files are named
``arr_0``, ``arr_1``, ...
The script checks that MXNet reads each dense file back to those values, so the
npz files are an independent reference for mxc's reader. The suite itself never
imports MXNet.
"""
import os

import numpy as np
import mxnet as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "params")


def path(name):
    return os.path.join(HERE, name)


def dtypes_dict():
    """One small array per dtype MXNet 1.9.1 can create, plus edge shapes."""
    return {
        "f32": np.array([[1.5, -2.25, 3.0], [0.0, -0.0, 1e-30]], dtype=np.float32),
        "f64": np.array([np.pi, -np.e, 1e300], dtype=np.float64),
        "f16": np.array([[0.5, -1.0], [65504.0, 6.1e-05]], dtype=np.float16),
        "u8": np.array([0, 1, 127, 255], dtype=np.uint8),
        "i8": np.array([[-128, -1], [0, 127]], dtype=np.int8),
        "i32": np.array([[-2147483648], [0], [2147483647]], dtype=np.int32),
        "i64": np.array([-(2 ** 63), 2 ** 63 - 1], dtype=np.int64),
        "bool": np.array([True, False, True], dtype=np.bool_),
        "empty_0x3": np.zeros((0, 3), dtype=np.float32),
        "one": np.array([42.0], dtype=np.float32),
        "rank5": np.arange(4, dtype=np.float32).reshape(1, 2, 1, 2, 1),
        "arg:name with spaces/and.dots": np.array([7], dtype=np.int32),
    }


def list_arrays():
    return [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1, 2, 3], dtype=np.int64),
        np.zeros((2, 0), dtype=np.float64),
        np.array([-1.0], dtype=np.float16),
    ]


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def check_dense(fname, expected):
    loaded = mx.nd.load(fname)
    if isinstance(expected, dict):
        assert list(loaded) == list(expected), (fname, list(loaded))
        pairs = [(loaded[k], expected[k]) for k in expected]
    else:
        assert isinstance(loaded, list) and len(loaded) == len(expected)
        pairs = list(zip(loaded, expected))
    for got, want in pairs:
        got = got.asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape, (fname, got, want)
        assert np.array_equal(got, want), (fname, got, want)


def save_npz(name, data):
    if isinstance(data, dict):
        np.savez_compressed(path(name + ".npz"), **data)
    else:
        np.savez_compressed(path(name + ".npz"), *data)


def main():
    os.makedirs(HERE, exist_ok=True)

    # V2 (np shape off): a dict of every dtype, a list, an empty list.
    d = dtypes_dict()
    mx.nd.save(path("dict_dtypes.params"), {k: nd(v) for k, v in d.items()})
    check_dense(path("dict_dtypes.params"), d)
    save_npz("dict_dtypes", d)

    lst = list_arrays()
    mx.nd.save(path("list_mixed.params"), [nd(a) for a in lst])
    check_dense(path("list_mixed.params"), lst)
    save_npz("list_mixed", lst)

    mx.nd.save(path("empty_list.params"), [])
    assert mx.nd.load(path("empty_list.params")) == []

    # A single NDArray is saved as a list of one.
    single = np.array([[3, 1], [4, 1]], dtype=np.uint8)
    mx.nd.save(path("single.params"), nd(single))
    check_dense(path("single.params"), [single])
    save_npz("single", [single])

    # A 0-d array with np shape off: MXNet 1.9.1 writes ndim 0 followed by the
    # context, type flag and one element, but with np shape off it cannot read
    # the file back (ndim 0 means "none" there); with np shape globally on it can.
    scalar = np.array(2.5, dtype=np.float32)
    s = mx.nd.array(scalar)
    assert s.shape == ()
    mx.nd.save(path("scalar_v2.params"), [s])
    save_npz("scalar_v2", [scalar])
    prev = mx.util.set_np_shape(2)  # 2 = GlobalOn, the only mode that reads V2 ndim 0
    try:
        check_dense(path("scalar_v2.params"), [scalar])
    finally:
        mx.util.set_np_shape(prev)

    # V3 (np shape semantics) through mx.npx.save.
    v3 = {
        "scalar": np.array(-4.0, dtype=np.float32),
        "zero_size": np.zeros((0, 2, 3), dtype=np.float32),
        "vec": np.array([1, 2, 3], dtype=np.int32),
        "flag": np.array([[False, True]], dtype=np.bool_),
    }
    mx.npx.set_np()
    try:
        mx.npx.save(path("np_v3.params"), {k: mx.np.array(v, dtype=v.dtype) for k, v in v3.items()})
        back = mx.npx.load(path("np_v3.params"))
        assert list(back) == list(v3)
        for k, v in v3.items():
            got = back[k].asnumpy()
            assert got.dtype == v.dtype and got.shape == v.shape and np.array_equal(got, v), k
    finally:
        mx.npx.reset_np()
    save_npz("np_v3", v3)

    # What Gluon writes: save_parameters of a tiny Dense layer.
    mx.random.seed(0)
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Uniform(1.0))
    net.save_parameters(path("gluon_dense.params"))
    gd = {name: p.data().asnumpy() for name, p in net._collect_params_with_prefix().items()}
    check_dense(path("gluon_dense.params"), gd)
    save_npz("gluon_dense", gd)

    # Sparse entries (mxc reports these as not supported yet).
    rsp = mx.nd.sparse.row_sparse_array(
        (np.array([[1, 2], [3, 4]], dtype=np.float32), np.array([0, 2])), shape=(4, 2))
    mx.nd.save(path("sparse_rsp.params"), {"dense": nd(np.ones(2, np.float32)), "rsp": rsp})
    csr = mx.nd.sparse.csr_matrix(
        (np.array([1, 2], dtype=np.float32), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    mx.nd.save(path("sparse_csr.params"), [csr])

    total = sum(os.path.getsize(path(f)) for f in os.listdir(HERE))
    print("wrote", len(os.listdir(HERE)), "files,", total, "bytes")


if __name__ == "__main__":
    main()

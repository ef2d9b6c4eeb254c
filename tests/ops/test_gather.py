"""Gather/scatter operators: pick, gather_nd, scatter_nd, boolean_mask, ravel/unravel, histogram,
argmax_channel, Embedding: forward against numpy, gradients against central differences, MXNet
1.9.1 golden cases (tests/data/indexing_golden.npz, made by tests/data/make_indexing_golden.py),
errors that name the operator."""
import json
import pathlib

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ndarray.register import invoke
from mxc.ops import registry

from .oputil import check_forward, check_grad

GOLDEN = pathlib.Path(__file__).parent.parent / "data" / "indexing_golden.npz"


def golden_cases(ops):
    """(case number, meta) of the golden cases of operators `ops`."""
    with np.load(GOLDEN) as z:
        meta = json.loads(str(z["meta"]))
    return [pytest.param(n, m, id=f"{n}-{m['op']}") for n, m in enumerate(meta) if m["op"] in ops]


def replay_golden(n, m):
    """Run golden case n through mxc (forward and autograd) and compare with MXNet's results."""
    with np.load(GOLDEN) as z:
        ins = [z[f"{n}/in{k}"] for k in range(m["nin"])]
        outs = [z[f"{n}/out{k}"] for k in range(m["nout"])]
        head = z[f"{n}/head"] if m["wrt"] else None
        grads = {k: z[f"{n}/grad{k}"] for k in m["wrt"]}
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in m["kwargs"].items()}
    arrs = [mx.nd.array(x, dtype=x.dtype) for x in ins]
    for k in m["wrt"]:
        arrs[k].attach_grad()
    op = registry.get(m["op"])
    if op.variadic:
        kwargs.setdefault(op.variadic, len(arrs))
    with mx.autograd.record():
        res = invoke(op, list(arrs), dict(kwargs))
    got = res if isinstance(res, list) else [res]
    assert len(got) == len(outs), m
    for g, e in zip(got, outs):
        g = g.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (m, g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=str(m))
    if m["wrt"]:
        mx.autograd.backward([got[0]], [mx.nd.array(head)])
        for k, e in grads.items():
            np.testing.assert_allclose(arrs[k].grad.asnumpy(), e, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{m} d/dinput{k}")


_OPS = ("pick", "gather_nd", "scatter_nd", "_contrib_boolean_mask", "_ravel_multi_index",
        "_unravel_index", "_histogram", "argmax_channel", "Embedding")


@pytest.mark.parametrize("n,m", golden_cases(_OPS))
def test_golden(n, m):
    replay_golden(n, m)


# ---- pick ------------------------------------------------------------------------------------------
def _np_pick(x, idx, axis, mode, keepdims):
    n = x.shape[axis]
    idx = idx.astype(np.int64)
    j = np.clip(idx, 0, n - 1) if mode == "clip" else np.mod(idx, n)
    j = j.reshape(x.shape[:axis] + (1,) + x.shape[axis + 1:])
    r = np.take_along_axis(x, j, axis=axis)
    return r if keepdims else np.squeeze(r, axis=axis)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("idtype", [np.float32, np.int32, np.int64])
def test_pick_forward(dtype, idtype, rng):
    x = rng.integers(0, 50, size=(3, 4, 5)).astype(dtype)
    for axis in (0, 1, 2, -1):
        ax = axis % 3
        shp = x.shape[:ax] + x.shape[ax + 1:]
        idx = rng.integers(-7, 9, size=shp).astype(idtype)
        if np.dtype(idtype).kind == "u":
            idx = np.abs(idx)
        for mode in ("clip", "wrap"):
            for keep in (False, True):
                check_forward("pick", [x, idx], {"axis": axis, "mode": mode, "keepdims": keep},
                              _np_pick(x, idx, ax, mode, keep))


def test_pick_grad_and_keepdims_index(rng):
    x = rng.standard_normal((3, 4))
    idx = np.array([0, 3, 3], np.float64)
    check_grad("pick", [x, idx], {"axis": 1}, rng, wrt=[0])
    check_grad("pick", [x, idx.reshape(3, 1)], {"axis": 1, "keepdims": True}, rng, wrt=[0])
    check_grad("pick", [x, np.array([5, -1, 2, 0.0])], {"axis": 0, "mode": "wrap"}, rng, wrt=[0])
    # the gradient op and its inverse
    og = rng.standard_normal((3,))
    check_grad("_backward_pick", [og, idx, x], {"axis": 1}, rng, wrt=[0])
    k_idx = np.array([[0, 2], [1, 1], [3, 0]], np.int64)
    check_forward("_take_along_axis", [x, k_idx], {"axis": 1}, np.take_along_axis(x, k_idx, axis=1))
    check_grad("_take_along_axis", [x, k_idx], {"axis": 1}, rng, wrt=[0])


def test_pick_errors():
    x = mx.nd.ones((3, 4))
    with pytest.raises(ValueError, match="pick"):
        mx.nd.pick(x, mx.nd.ones((4,)), axis=1)
    with pytest.raises(ValueError, match="pick.*axis"):
        mx.nd.pick(x, mx.nd.ones((3,)), axis=None)
    with pytest.raises(ValueError, match="pick.*mode"):
        mx.nd.pick(x, mx.nd.ones((3,)), mode="raise")


# ---- gather_nd / scatter_nd ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64, np.int8])
def test_gather_scatter_nd(dtype, rng):
    x = rng.integers(-20, 20, size=(3, 4, 5)).astype(dtype)
    idx = np.array([[0, 2, -1], [3, 1, 0]], np.int32)
    exp = x[(idx[0] % 3, idx[1] % 4)]
    check_forward("gather_nd", [x, idx], {}, exp)
    idx3 = np.array([[1, 2], [0, 3], [4, -5]], np.float32)
    check_forward("gather_nd", [x, idx3], {}, x[(np.array([1, 2]), np.array([0, 3]), np.array([4, 0]))])
    v = rng.integers(-5, 5, size=(3, 5)).astype(dtype)
    sidx = np.array([[0, 2, 1], [3, 1, 0]], np.int64)
    out = np.zeros((3, 4, 5), dtype)
    out[sidx[0], sidx[1]] = v
    check_forward("scatter_nd", [v, sidx], {"shape": (3, 4, 5)}, out)


def test_gather_nd_grad_accumulates_duplicates(rng):
    x = rng.standard_normal((3, 4))
    idx = np.array([[0, 0, 2], [1, 1, 3]], np.int64)
    check_grad("gather_nd", [x, idx], {}, rng, wrt=[0])
    check_grad("scatter_nd", [rng.standard_normal(3), np.array([[0, 1, 2], [1, 2, 3]], np.int64)],
               {"shape": (3, 4)}, rng, wrt=[0])
    g = np.array([1.0, 2.0, 4.0])
    exp = np.zeros((3, 4))
    np.add.at(exp, (idx[0], idx[1]), g)
    check_forward("_backward_gather_nd", [g, idx], {"shape": (3, 4)}, exp)
    check_grad("_backward_gather_nd", [g, idx], {"shape": (3, 4)}, rng, wrt=[0])


def test_scatter_set_nd(rng):
    lhs = rng.standard_normal((3, 4))
    rhs = rng.standard_normal(2)
    idx = np.array([[0, 2], [1, -1]], np.int64)
    exp = lhs.copy()
    exp[idx[0], idx[1]] = rhs
    check_forward("_scatter_set_nd", [lhs, rhs, idx], {"shape": (3, 4)}, exp)
    check_grad("_scatter_set_nd", [lhs, rhs, idx], {}, rng, wrt=[0, 1])


def test_gather_nd_errors():
    x = mx.nd.ones((3, 4))
    with pytest.raises(ValueError, match="gather_nd"):
        mx.nd.gather_nd(x, mx.nd.array([0, 1]))
    with pytest.raises(ValueError, match="gather_nd"):
        mx.nd.gather_nd(x, mx.nd.zeros((3, 1)))
    with pytest.raises(MXNetError, match="gather_nd.*out of bounds"):
        mx.nd.gather_nd(x, mx.nd.array([[3], [0]])).asnumpy()
    with pytest.raises(ValueError, match="scatter_nd"):
        mx.nd.scatter_nd(mx.nd.ones((2,)), mx.nd.zeros((2, 3)), shape=(3, 4))


# ---- Embedding ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_embedding(dtype, rng):
    w = rng.standard_normal((6, 3)).astype(dtype)
    data = np.array([[0, 5, 7], [-2, 2, 2]], np.float32)
    check_forward("Embedding", [data, w], {"input_dim": 6, "output_dim": 3, "dtype": np.dtype(dtype).name},
                  w[np.clip(data.astype(np.int64), 0, 5)])


def test_embedding_grad_and_infer_inputs(rng):
    w = rng.standard_normal((5, 2))
    data = np.array([[0, 4], [4, 1], [9, -1]], np.float64)
    check_grad("Embedding", [data, w], {"input_dim": 5, "output_dim": 2, "dtype": "float64"}, rng,
               wrt=[1])
    og = rng.standard_normal((3, 2, 2))
    exp = np.zeros((5, 2))
    np.add.at(exp, np.clip(data.astype(np.int64), 0, 4), og)
    check_forward("_backward_Embedding", [og, data], {"input_dim": 5, "output_dim": 2}, exp)
    check_grad("_backward_Embedding", [og, data], {"input_dim": 5, "output_dim": 2}, rng, wrt=[0])
    op = registry.get("Embedding")
    attrs = op.parse({"input_dim": 5, "output_dim": 2})
    assert op.infer_inputs(attrs, [(3, 2), None]) == [(3, 2), (5, 2)]
    with pytest.raises(ValueError, match="Embedding"):
        mx.nd.Embedding(mx.nd.ones((2,)), mx.nd.ones((4, 2)), input_dim=5, output_dim=2)


def test_embedding_large_vocabulary_threads(rng):
    w = rng.standard_normal((1000, 64)).astype(np.float32)
    data = rng.integers(0, 1000, size=(512,)).astype(np.int32)
    x = mx.nd.array(data, dtype=np.int32)
    wn = mx.nd.array(w)
    wn.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Embedding(x, wn, input_dim=1000, output_dim=64)
    head = rng.standard_normal((512, 64)).astype(np.float32)
    y.backward(mx.nd.array(head))
    exp = np.zeros_like(w, dtype=np.float64)
    np.add.at(exp, data, head)
    np.testing.assert_allclose(y.asnumpy(), w[data])
    np.testing.assert_allclose(wn.grad.asnumpy(), exp, rtol=1e-5, atol=1e-5)


# ---- boolean_mask ------------------------------------------------------------------------------
def test_boolean_mask(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    m = np.array([1, 0, 0, 1], np.float32)
    y = mx.nd._contrib_boolean_mask(mx.nd.array(x), mx.nd.array(m))
    np.testing.assert_array_equal(y.asnumpy(), x[m != 0])
    empty = mx.nd._npi_boolean_mask(mx.nd.array(x), mx.nd.zeros((4,)))
    assert empty.shape == (0, 3)
    one_d = mx.nd._contrib_boolean_mask(mx.nd.array(x[:, 0]), mx.nd.array(m, dtype="int32"))
    np.testing.assert_array_equal(one_d.asnumpy(), x[m != 0, 0])
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd._contrib_boolean_mask(xa, mx.nd.array(m))
    y.backward(mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(xa.grad.asnumpy(), np.repeat(m[:, None], 3, axis=1))
    with pytest.raises(ValueError, match="boolean_mask"):
        mx.nd._contrib_boolean_mask(xa, mx.nd.ones((3,)))
    with pytest.raises(ValueError, match="boolean_mask.*axis"):
        mx.nd._contrib_boolean_mask(xa, mx.nd.ones((4,)), axis=1)


# ---- ravel / unravel ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_ravel_unravel(dtype, rng):
    shape = (3, 5, 7)
    flat = rng.integers(0, 105, size=20)
    multi = np.array(np.unravel_index(flat, shape))
    check_forward("ravel_multi_index", [multi.astype(dtype)], {"shape": shape}, flat.astype(dtype))
    check_forward("_unravel_index", [flat.astype(dtype)], {"shape": shape}, multi.astype(dtype))
    check_forward("unravel_index", [flat.astype(dtype)], {"shape": shape}, multi.astype(dtype))
    check_forward("_ravel_multi_index", [multi.astype(dtype)], {"shape": shape}, flat.astype(dtype))
    with pytest.raises(ValueError, match="ravel_multi_index"):
        mx.nd.ravel_multi_index(mx.nd.ones((2, 3)), shape=shape)


# ---- histogram ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_histogram(dtype, rng):
    data = (rng.standard_normal(200) * 4).astype(dtype)
    op = registry.get("_histogram")
    cnt, edges = mx.nd._histogram(mx.nd.array(data, dtype=dtype), bin_cnt=6, range=(-5, 7))
    ec, ee = np.histogram(data.astype(np.float64), bins=6, range=(-5, 7))
    assert cnt.dtype == np.int64 and edges.dtype == dtype
    np.testing.assert_array_equal(cnt.asnumpy(), ec)
    np.testing.assert_allclose(edges.asnumpy(), ee.astype(dtype))
    bins = np.array([-6, -1, 0, 2, 9], dtype)
    check_forward("_histogram", [data, bins], {}, [np.histogram(data, bins=bins)[0].astype(np.int64), bins])
    with pytest.raises(ValueError, match="_histogram"):
        invoke(op, [mx.nd.array(data)], {"bin_cnt": 3})
    with pytest.raises(ValueError, match="_histogram"):
        mx.nd._npi_histogram(mx.nd.array(data), mx.nd.array([1.0]))


def test_argmax_channel(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    check_forward("argmax_channel", [x], {}, np.argmax(x, axis=1).astype(np.float32))
    y = rng.standard_normal((2, 4, 3)).astype(np.float32)
    assert mx.nd.argmax_channel(mx.nd.array(y)).asnumpy().tolist() == np.argmax(y, axis=1).tolist()


def test_boolean_mask_selecting_nothing_has_zero_gradient():
    prev = mx.util.set_np_shape(True)
    try:
        d = mx.nd.array([[1, 2, 3], [4, 5, 6]])
        d.attach_grad()
        with mx.autograd.record():
            out = mx.nd.contrib.boolean_mask(d, mx.nd.array([0, 0]))
        out.backward()
        assert out.shape == (0, 3)
        assert d.grad.asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    finally:
        mx.util.set_np_shape(prev)


def test_gather_nd_out_of_bounds_is_an_index_error_at_the_wait():
    # MXNet 1.9.1 raises IndexError ("IndexError: index ... out of bounds"), an MXNetError too
    data = mx.nd.arange(12).reshape((3, 4))
    idx = mx.nd.array([[0, 1], [1, 4]], dtype="int32")     # column 4 of 4
    out = mx.nd.gather_nd(data, idx)
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 4") as e:
        out.asnumpy()
    assert isinstance(e.value, mx.base.MXNetError)


def test_error_from_names_the_builtin_type():
    from mxc.base import MXNetError, error_from
    e = error_from("take: IndexError: index 9 is out of bounds")
    assert isinstance(e, IndexError) and isinstance(e, MXNetError)
    e = error_from("Error in operator fc: shapes differ")
    assert type(e) is MXNetError
    assert isinstance(error_from("op: ValueError: bad"), ValueError)

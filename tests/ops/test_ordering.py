"""Ordering operators (sort, argsort, topk): forward against numpy's stable sorts for every
dtype, axis and return type, both selection paths (full sort and bounded heap), threads, ties,
gradients against central differences, MXNet 1.9.1 golden cases, errors naming the operator."""
import numpy as np
import pytest

import mxc as mx

from .oputil import check_forward, check_grad
from .test_gather import golden_cases, replay_golden


@pytest.mark.parametrize("n,m", golden_cases(("sort", "argsort", "topk")))
def test_golden(n, m):
    replay_golden(n, m)


def _order(x, axis, ascend):
    """Stable order along axis (ties keep input order in both directions)."""
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    # descending and stable: sort the reversed array ascending on the negated key
    key = -x.astype(np.float64) if x.dtype.kind != "u" else -(x.astype(np.int64))
    return np.argsort(key, axis=axis, kind="stable")


def _ref(x, axis, k, ret, ascend, idtype):
    if axis is None:
        x = x.reshape(-1)
        ax = 0
    else:
        ax = axis % x.ndim
    n = x.shape[ax]
    k = n if k <= 0 else k
    order = np.take(_order(x, ax, ascend), np.arange(k), axis=ax)
    vals = np.take_along_axis(x, order, axis=ax)
    if ret == "value":
        return vals
    if ret == "indices":
        return order.astype(idtype)
    if ret == "both":
        return [vals, order.astype(idtype)]
    mask = np.zeros_like(x)
    np.put_along_axis(mask, order, 1, axis=ax)
    return mask


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.uint8, np.int64])
def test_topk_forward(dtype, rng):
    x = rng.integers(0, 7, size=(3, 4, 5)).astype(dtype)       # many ties: stability matters
    for axis in (0, 1, 2, -1, None):
        for ret in ("value", "indices", "both", "mask"):
            for asc in (False, True):
                k = 2
                if ret == "mask" and axis is None:
                    continue
                exp = _ref(x, axis, k, ret, asc, np.float32)
                check_forward("topk", [x], {"axis": axis, "k": k, "ret_typ": ret, "is_ascend": asc}, exp)


def test_topk_mask_flat_and_index_dtypes(rng):
    x = rng.permutation(24).reshape(2, 3, 4).astype(np.float32)
    mask = np.zeros(24, np.float32)
    mask[np.argsort(-x.reshape(-1))[:5]] = 1
    check_forward("topk", [x], {"axis": None, "k": 5, "ret_typ": "mask"}, mask.reshape(x.shape))
    for idt in ("uint8", "int32", "int64", "float16", "float64"):
        check_forward("topk", [x], {"k": 3, "dtype": idt}, _ref(x, -1, 3, "indices", False, idt))
        check_forward("argsort", [x], {"axis": 1, "dtype": idt}, _ref(x, 1, 0, "indices", True, idt))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32])
def test_sort_argsort_forward(dtype, rng):
    x = rng.integers(-9, 9, size=(4, 6)).astype(dtype)
    for axis in (0, 1, -1, None):
        for asc in (True, False):
            check_forward("sort", [x], {"axis": axis, "is_ascend": asc}, _ref(x, axis, 0, "value", asc, None))
            check_forward("argsort", [x], {"axis": axis, "is_ascend": asc},
                          _ref(x, axis, 0, "indices", asc, np.float32))


def test_k_zero_sorts_everything_and_heap_path(rng):
    x = rng.standard_normal((3, 200)).astype(np.float32)
    check_forward("topk", [x], {"k": 0, "ret_typ": "value"}, _ref(x, -1, 0, "value", False, None))
    # k * 8 <= n: the bounded-heap selection, with ties
    t = rng.integers(0, 20, size=(3, 200)).astype(np.float32)
    for asc in (False, True):
        check_forward("topk", [t], {"k": 7, "ret_typ": "both", "is_ascend": asc},
                      _ref(t, -1, 7, "both", asc, np.float32))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8])
def test_radix_path_ties_and_extremes(dtype, rng):
    # full sorts of rows >= 64 go through the radix sort: ties stay in input order both ways
    x = rng.integers(-5, 6, size=(3, 300)).astype(dtype) if dtype != np.uint8 else \
        rng.integers(0, 6, size=(3, 300)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[0, :4] = [np.inf, -np.inf, 1e-30 if dtype != np.float16 else 1e-7, -2.5]
    for asc in (False, True):
        check_forward("topk", [x], {"k": 0, "ret_typ": "both", "is_ascend": asc},
                      _ref(x, -1, 0, "both", asc, np.float32))
        check_forward("argsort", [x], {"axis": None, "is_ascend": asc, "dtype": "int64"},
                      _ref(x, None, 0, "indices", asc, np.int64))


def test_threads_over_rows(rng):
    x = rng.standard_normal((64, 50, 30)).astype(np.float32)     # 96000 elements, strided rows
    check_forward("topk", [x], {"axis": 1, "k": 4, "ret_typ": "both"}, _ref(x, 1, 4, "both", False, np.float32))
    check_forward("sort", [x], {"axis": 0}, np.sort(x, axis=0))


def test_gradients(rng):
    x = rng.permutation(24).reshape(2, 3, 4) * 0.25          # distinct: differences are smooth
    check_grad("topk", [x], {"k": 2, "ret_typ": "value"}, rng)
    check_grad("topk", [x], {"k": 2, "axis": 0, "ret_typ": "value", "is_ascend": True}, rng)
    check_grad("topk", [x], {"k": 3, "axis": None, "ret_typ": "value"}, rng)
    check_grad("sort", [x], {"axis": 1}, rng)
    check_grad("sort", [x], {"axis": None, "is_ascend": False}, rng)
    g = registry_grad("topk", x, {"k": 2, "ret_typ": "both"})
    assert g.shape == x.shape
    for kw in ({"k": 2}, {"k": 2, "ret_typ": "mask"}):
        assert not registry_grad("topk", x, kw).any()
    assert not registry_grad("argsort", x, {}).any()


def registry_grad(name, x, kw):
    from mxc.ops import registry
    op = registry.get(name)
    xs = [mx.nd.array(x)]
    outs = getattr(mx.nd, name)(*xs, **kw)
    outs = outs if isinstance(outs, list) else [outs]
    heads = [mx.nd.ones(o.shape, dtype=o.dtype) for o in outs]
    return op.grad(mx.nd, op.parse(kw), xs, outs, heads)[0].asnumpy()


def test_autograd_and_methods(rng):
    x = mx.nd.array(rng.permutation(12).reshape(3, 4).astype(np.float32))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.topk(x, k=1, ret_typ="value")
    y.backward()
    exp = np.zeros((3, 4), np.float32)
    exp[np.arange(3), np.argmax(x.asnumpy(), axis=1)] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), exp)


def test_errors():
    x = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match="topk.*k"):
        mx.nd.topk(x, k=4)
    with pytest.raises(ValueError, match="sort.*axis"):
        mx.nd.sort(x, axis=2)
    with pytest.raises(ValueError, match="argsort.*dtype"):
        mx.nd.argsort(x, dtype="int8")
    with pytest.raises(ValueError, match="topk.*ret_typ"):
        mx.nd.topk(x, ret_typ="values")

"""Reduction kernels (mxc/ops/cpu/reduce.pyx) against numpy, called directly through run_on_numpy.

References are computed in float64 (floats) or int64 (ints, where wrap-around modulo 2**64 gives
the same narrow result as MXNet's in-dtype accumulation) and cast to the output dtype. Literals
marked "MXNet 1.9.1" were observed with the real MXNet 1.9.1 (mx.nd.<op>).
"""
import itertools

import numpy as np
import pytest

from mxc._core.opcall import run_on_numpy, DTYPE_CODE
from mxc.base import MXNetError
from mxc.ops.cpu.reduce import KERNELS

NAMES = ["sum", "mean", "prod", "max", "min", "nansum", "nanprod", "norm", "argmax", "argmin"]
DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64, np.bool_]
FLOATS = (np.float16, np.float32, np.float64)
# relative tolerance of the result against the float64 reference cast to the dtype: the kernel
# accumulates in double too, so only the summation order (and one final rounding) differs
RTOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}


def code(dt):
    return DTYPE_CODE[np.dtype(dt)]


def run(op, x, mask, ord=2.0, nthreads=1):
    """Run reduce:<op> on x over the axes flagged in mask; returns the keepdims output."""
    oshape = tuple(1 if m else s for s, m in zip(x.shape, mask))
    out = np.zeros(oshape, x.dtype)
    run_on_numpy(KERNELS["reduce:" + op][code(x.dtype)], [np.require(x, requirements="C")], [out],
                 iattr=tuple(int(m) for m in mask), fattr=(ord,), nthreads=nthreads)
    return out


def trunc_div(s, n):
    q = np.abs(s) // n
    return np.where(s < 0, -q, q)


def reference(op, x, mask, ord=2.0):
    axes = tuple(i for i, m in enumerate(mask) if m)
    dt = x.dtype.type
    isf = dt in FLOATS
    if dt is np.bool_:
        b = x.astype(np.int64)
        if op in ("sum", "nansum", "mean", "max", "norm"):
            return b.max(axis=axes, keepdims=True, initial=0).astype(bool)
        if op in ("prod", "nanprod", "min"):
            return b.min(axis=axes, keepdims=True, initial=1).astype(bool)
    if op in ("argmax", "argmin"):
        kept = [i for i in range(x.ndim) if not mask[i]]
        moved = np.transpose(x, kept + list(axes))
        flat = moved.reshape([x.shape[i] for i in kept] + [-1])
        idx = getattr(np, op)(flat, axis=-1)
        with np.errstate(over="ignore"):     # float16 cannot hold indices > 65504: inf
            return idx.reshape([1 if m else s for s, m in zip(x.shape, mask)]).astype(dt)
    a = x.astype(np.float64) if isf else x.astype(np.int64)
    count = int(np.prod([x.shape[i] for i in axes])) if axes else 1
    with np.errstate(all="ignore"):
        if op == "sum" or (op == "nansum" and not isf):
            r = a.sum(axis=axes, keepdims=True)
        elif op == "nansum":
            r = np.nansum(a, axis=axes, keepdims=True)
        elif op == "prod" or (op == "nanprod" and not isf):
            r = a.prod(axis=axes, keepdims=True)
        elif op == "nanprod":
            r = np.nanprod(a, axis=axes, keepdims=True)
        elif op == "mean":
            s = a.sum(axis=axes, keepdims=True)
            r = s / count if isf else trunc_div(s, count)
        elif op in ("max", "min"):
            r = getattr(np, op)(a, axis=axes, keepdims=True)
        elif op == "norm":
            f = x.astype(np.float64)
            r = (np.abs(f).sum(axis=axes, keepdims=True) if ord == 1 else
                 np.sqrt((f * f).sum(axis=axes, keepdims=True)))
        return r.astype(dt)


def random_array(rng, shape, dt, nan=False):
    if dt is np.bool_:
        return rng.random(shape) < 0.5
    if dt in FLOATS:
        x = rng.standard_normal(shape).astype(dt)
        if nan and x.size:
            x.flat[rng.integers(0, x.size, max(1, x.size // 7))] = np.nan
        return x
    info = np.iinfo(dt)
    lo, hi = max(info.min, -100), min(info.max, 100)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dt)


def small_for_prod(rng, shape, dt):
    """values near 1 so products stay finite/meaningful"""
    if dt in FLOATS:
        return (1 + 0.1 * rng.standard_normal(shape)).astype(dt)
    if dt is np.bool_:
        return rng.random(shape) < 0.9
    return rng.integers(-3 if np.iinfo(dt).min < 0 else 0, 4, shape).astype(dt)


def check(op, x, mask, ord=2.0, nthreads=1):
    got = run(op, x, mask, ord, nthreads)
    exp = reference(op, x, mask, ord)
    assert got.dtype == x.dtype and got.shape == exp.shape
    dt = x.dtype.type
    if dt in FLOATS and op not in ("argmax", "argmin"):
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=RTOL[dt],
                                   atol=RTOL[dt] * 1e-3, equal_nan=True,
                                   err_msg=f"{op} {dt.__name__} {x.shape} {mask}")
    else:
        np.testing.assert_array_equal(got, exp, err_msg=f"{op} {dt.__name__} {x.shape} {mask}")


def test_kernel_table_complete():
    assert set(KERNELS) == {"reduce:" + n for n in NAMES}
    for n in NAMES:
        want = {code(d) for d in DTYPES}
        if n in ("argmax", "argmin"):
            want.discard(code(np.bool_))       # MXNet 1.9.1 rejects bool argmax/argmin
        assert set(KERNELS["reduce:" + n]) == want, n
        assert all(isinstance(a, int) and a != 0 for a in KERNELS["reduce:" + n].values())


@pytest.mark.parametrize("op,dt", [(op, dt) for op in NAMES for dt in DTYPES
                                   if not (dt is np.bool_ and op in ("argmax", "argmin"))],
                         ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_every_axis_combination_3d(op, dt):
    rng = np.random.default_rng(3)
    maker = small_for_prod if "prod" in op else random_array
    x = maker(rng, (3, 4, 5), dt)
    for mask in itertools.product((0, 1), repeat=3):
        check(op, x, mask, ord=2.0)
        if op == "norm":
            check(op, x, mask, ord=1.0)


@pytest.mark.parametrize("op", NAMES)
def test_random_shapes_all_dtypes(op):
    rng = np.random.default_rng(11)
    for dt in DTYPES:
        if dt is np.bool_ and op in ("argmax", "argmin"):
            continue
        for trial in range(12):
            ndim = int(rng.integers(0, 6))
            # size-0 axes where the reduction has an identity (error cases are tested apart)
            no_identity = op in ("argmax", "argmin", "max", "min") or (
                op == "mean" and dt not in FLOATS)
            shape = tuple(int(s) for s in rng.integers(1 if no_identity else 0, 5, ndim))
            mask = tuple(int(m) for m in rng.integers(0, 2, ndim))
            maker = small_for_prod if "prod" in op else random_array
            x = maker(rng, shape, dt)
            check(op, x, mask)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "nansum", "nanprod", "argmax",
                                "argmin", "prod"])
@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_nan_handling(op, dt):
    rng = np.random.default_rng(5)
    x = random_array(rng, (6, 7, 5), dt, nan=True)
    if "prod" in op:
        x = np.where(np.isnan(x), x, small_for_prod(rng, x.shape, dt)).astype(dt)
    for mask in [(0, 0, 1), (1, 0, 0), (0, 1, 0), (1, 1, 1), (1, 0, 1)]:
        check(op, x, mask)


# shapes whose plans exercise each threaded path: full, inner reduce, outer reduce, middle,
# kept-outer with reduced-inner alternations
LARGE = [((1 << 17) + 3,), (512, 257), (257, 512), (8, 300, 40), (40, 30, 9, 11)]


@pytest.mark.parametrize("op", NAMES)
def test_large_threaded_matches_numpy(op):
    rng = np.random.default_rng(7)
    for shape in LARGE:
        for dt in (np.float32, np.int32, np.float16):
            if "prod" in op:
                x = small_for_prod(rng, shape, dt)
            else:
                x = random_array(rng, shape, dt, nan=op.startswith("nan"))
            masks = [tuple([1] * len(shape)), tuple([0] * len(shape))] + [tuple(int(i == a) for i in range(len(shape)))
                                                 for a in range(len(shape))]
            if len(shape) >= 3:
                masks.append(tuple(int(i % 2 == 0) for i in range(len(shape))))
                masks.append(tuple(int(i % 2 == 1) for i in range(len(shape))))
            for mask in masks:
                if "prod" in op and dt in FLOATS and sum(mask) and \
                        np.prod([s for s, m in zip(shape, mask) if m]) > 5000:
                    continue        # products of thousands of factors only test overflow
                check(op, x, mask, nthreads=2)


def test_threads_agree_with_serial_exactly_for_ints_and_args():
    rng = np.random.default_rng(9)
    x = rng.integers(-50, 50, (300, 700)).astype(np.int64)
    for op in ("sum", "max", "argmax", "argmin", "prod"):
        for mask in [(1, 1), (1, 0), (0, 1)]:
            np.testing.assert_array_equal(run(op, x, mask, nthreads=2), run(op, x, mask))


def test_sum_4m_float32_threaded_rounds_like_float64_sum():
    x = np.random.default_rng(1).random(1 << 22, dtype=np.float32)
    got = run("sum", x, (1,), nthreads=2)[0]
    assert got == np.float32(x.astype(np.float64).sum())


def test_empty_reductions():
    e = np.zeros((2, 0, 3), np.float32)
    np.testing.assert_array_equal(run("sum", e, (0, 1, 0)), np.zeros((2, 1, 3)))
    np.testing.assert_array_equal(run("prod", e, (0, 1, 0)), np.ones((2, 1, 3)))
    np.testing.assert_array_equal(run("nanprod", e, (0, 1, 0)), np.ones((2, 1, 3)))
    np.testing.assert_array_equal(run("norm", e, (0, 1, 0)), np.zeros((2, 1, 3)))
    assert np.isnan(run("mean", e, (0, 1, 0))).all()        # numpy: nan (with a warning)
    for op in ("max", "min", "argmax", "argmin"):
        with pytest.raises(MXNetError, match=op + ".*zero-size"):
            run(op, e, (0, 1, 0))
    with pytest.raises(MXNetError, match="mean.*integer"):
        run("mean", np.zeros((2, 0), np.int32), (0, 1))
    # reducing a non-empty axis of an empty array gives an empty result, no error
    assert run("max", e, (1, 0, 0)).shape == (1, 0, 3)


def test_norm_bad_ord():
    with pytest.raises(MXNetError, match="ord"):
        run("norm", np.ones(3, np.float32), (1,), ord=3.0)


def test_missing_axis_flags_is_an_error():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(MXNetError, match="axis flags"):
        run_on_numpy(KERNELS["reduce:sum"][0], [x], [np.zeros((1, 3), np.float32)], iattr=(1,))


def test_mxnet_191_literals():
    """Behaviour observed with MXNet 1.9.1 (mx.nd.<op>(x, axis=1) unless noted)."""
    n = np.nan
    # output dtype = input dtype, argmax writes the index in it
    assert run("argmax", np.array([[1, 2, 3], [4, 5, 6]], np.int32), (0, 1)).dtype == np.int32
    # the first NaN wins argmax and argmin
    xf = np.array([[1, n, 3], [5, 1, n], [1, 2, 3]], np.float32)
    np.testing.assert_array_equal(run("argmax", xf, (0, 1)).ravel(), [1, 2, 2])
    np.testing.assert_array_equal(run("argmin", xf[:2], (0, 1)).ravel(), [1, 2])
    # max/min propagate NaN
    np.testing.assert_array_equal(run("max", xf, (0, 1)).ravel(), [n, n, 3])
    # ties: first index
    np.testing.assert_array_equal(
        run("argmax", np.array([[3, 1, 3], [5, 5, 5]], np.float32), (0, 1)).ravel(), [0, 0])
    # axis=None: flat index
    assert run("argmax", np.array([[3, 1, 3], [5, 7, 5]], np.float32), (1, 1)).item() == 4
    # integer sums and products wrap in the dtype
    assert run("sum", np.array([[100, 100]], np.int8), (0, 1)).item() == -56
    assert run("sum", np.array([[200, 100]], np.uint8), (0, 1)).item() == 44
    assert run("prod", np.array([[100, 3]], np.int8), (0, 1)).item() == 44
    # integer mean truncates toward zero
    np.testing.assert_array_equal(
        run("mean", np.array([[1, 2], [-1, -2], [3, 4]], np.int32), (0, 1)).ravel(), [1, -1, 3])
    # bool: sum/mean are "any"
    np.testing.assert_array_equal(
        run("mean", np.array([[1, 0], [0, 0]], bool), (0, 1)).ravel(), [True, False])
    np.testing.assert_array_equal(
        run("sum", np.array([[1, 1, 1], [0, 0, 0]], bool), (0, 1)).ravel(), [True, False])
    # argmax index cast to a narrow dtype: index 299 -> 43 in uint8 and int8; 3000 in float16
    z = np.zeros(300, np.uint8)
    z[299] = 1
    assert run("argmax", z, (1,)).item() == 43
    assert run("argmax", z.astype(np.int8), (1,)).item() == 43
    assert run("argmax", np.arange(3001).astype(np.float16), (1,)).item() == 3000
    # nan-aware reductions of all-NaN rows
    xn = np.array([[1, n, 3], [n, n, n]], np.float32)
    np.testing.assert_array_equal(run("nansum", xn, (0, 1)).ravel(), [4, 0])
    xp = np.array([[2, n, 3], [n, n, n]], np.float32)
    np.testing.assert_array_equal(run("nanprod", xp, (0, 1)).ravel(), [6, 1])
    # norm ord=1 / ord=2 on floats; integer norm is truncated
    np.testing.assert_array_equal(run("norm", np.array([[-3, -4.5]], np.float32), (0, 1), 1.0), [[7.5]])
    assert run("norm", np.array([[1, 2, 3]], np.uint8), (0, 1)).item() == 3
    assert run("norm", np.array([[-3, -4]], np.int8), (0, 1), 1.0).item() == 7


def test_documented_differences_from_mxnet():
    """Where mxc deliberately differs from MXNet 1.9.1 (int64/double accumulation)."""
    # MXNet 1.9.1 gives -28 (sums in int8, then divides); mxc sums in int64 first
    assert run("mean", np.array([[100, 100]], np.int8), (0, 1)).item() == 100
    # MXNet 1.9.1 gives 4 (a scaled int8 norm that truncates x/scale); mxc: sqrt(25) = 5
    assert run("norm", np.array([[-3, -4]], np.int8), (0, 1)).item() == 5
    # MXNet 1.9.1 gives 3.740234375 (float16 accumulation); mxc rounds the exact value once
    got = run("norm", np.array([[1, 2, 3]], np.float16), (0, 1)).item()
    assert got == float(np.float16(np.sqrt(14.0)))

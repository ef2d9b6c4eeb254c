"""Shape and indexing kernels (mxc/ops/cpu/shape.pyx) against numpy, through run_on_numpy.

These kernels move data, so results must be bit-identical to numpy's (compared as raw bytes, which
also covers NaN payloads and float16 bits). Literals marked "MXNet 1.9.1" were observed with the
real MXNet 1.9.1 (mx.nd.take / mx.nd.one_hot).
"""
import numpy as np
import pytest

from mxc._core.opcall import run_on_numpy, DTYPE_CODE
from mxc.base import MXNetError
from mxc.ops.cpu.shape import KERNELS

NAMES = ["transpose", "concat", "split", "slice", "slice_assign", "slice_assign_scalar",
         "broadcast_to", "flip", "take", "one_hot", "scatter_rows"]
DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64, np.bool_]
IDX_DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64]
DT_IDS = [np.dtype(d).name for d in DTYPES]


def code(dt):
    return DTYPE_CODE[np.dtype(dt)]


def C(a):
    return np.require(a, requirements="C")


def call(name, key, inputs, outputs, iattr=(), fattr=(), nthreads=1):
    run_on_numpy(KERNELS[name][key], [C(a) for a in inputs], outputs, iattr=iattr, fattr=fattr,
                 nthreads=nthreads)


def rand(rng, shape, dt):
    if dt is np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)


def same(got, exp):
    exp = np.asarray(exp)
    assert got.shape == exp.shape and got.dtype == exp.dtype, (got.shape, exp.shape)
    assert got.tobytes() == C(exp).tobytes()


def rand_shape(rng, lo=0, hi=5, ndim=None):
    nd = int(rng.integers(0, 6)) if ndim is None else ndim
    return tuple(int(s) for s in rng.integers(lo, hi, nd))


def test_kernel_table_complete():
    assert set(KERNELS) == set(NAMES)
    data = {code(d) for d in DTYPES}
    idx = {code(d) for d in IDX_DTYPES}
    for name in NAMES:
        keys = set(KERNELS[name])
        if name in ("take", "scatter_rows"):
            assert keys == {(d, i) for d in data for i in idx}, name
        elif name == "one_hot":
            assert keys == {(i, o) for i in idx for o in data}, name
        else:
            assert keys == data, name


# ---- transpose --------------------------------------------------------------------------------
def transpose(x, axes, nthreads=1):
    out = np.empty([x.shape[a] for a in axes], x.dtype)
    call("transpose", code(x.dtype), [x], [out], iattr=tuple(axes), nthreads=nthreads)
    return out


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_transpose_random(dt):
    rng = np.random.default_rng(1)
    for _ in range(25):
        shape = rand_shape(rng)
        x = rand(rng, shape, dt)
        axes = tuple(int(a) for a in rng.permutation(len(shape)))
        same(transpose(x, axes), np.transpose(x, axes))


@pytest.mark.parametrize("dt", [np.uint8, np.float16, np.float32, np.float64], ids=str)
def test_transpose_large_tiled(dt):
    rng = np.random.default_rng(2)
    for shape, axes in [((300, 517), (1, 0)), ((3, 130, 257), (0, 2, 1)),
                        ((65, 4, 33, 70), (3, 1, 2, 0)), ((2, 3, 4, 5, 6, 7, 8, 9),
                                                         (7, 6, 5, 4, 3, 2, 1, 0))]:
        x = rand(rng, shape, dt)
        for nt in (1, 2):
            same(transpose(x, axes, nt), np.transpose(x, axes))


def test_transpose_bad_axes():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(MXNetError, match="transpose.*permutation"):
        call("transpose", 0, [x], [np.empty((2, 2), np.float32)], iattr=(0, 0))
    with pytest.raises(MXNetError, match="transpose: output dim 0 is 3, expected 2"):
        call("transpose", 0, [x], [np.empty((3, 3), np.float32)], iattr=(0, 1))


# ---- concat / split ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_concat_split_random(dt):
    rng = np.random.default_rng(3)
    for _ in range(20):
        shape = rand_shape(rng, ndim=int(rng.integers(1, 6)))
        axis = int(rng.integers(0, len(shape)))
        parts = []
        for _ in range(int(rng.integers(1, 4))):
            s = list(shape)
            s[axis] = int(rng.integers(0, 4))
            parts.append(rand(rng, s, dt))
        exp = np.concatenate(parts, axis=axis)
        out = np.empty(exp.shape, dt)
        call("concat", code(dt), parts, [out], iattr=(axis,))
        same(out, exp)
        pieces = [np.empty(p.shape, dt) for p in parts]
        call("split", code(dt), [exp], pieces, iattr=(axis,))
        for got, p in zip(pieces, parts):
            same(got, p)


def test_concat_split_large_threaded():
    rng = np.random.default_rng(4)
    for axis in (0, 1, 2):
        parts = [rand(rng, (40, 50, 60), np.float32) for _ in range(3)]
        exp = np.concatenate(parts, axis=axis)
        out = np.empty(exp.shape, np.float32)
        call("concat", 0, parts, [out], iattr=(axis,), nthreads=2)
        same(out, exp)
        pieces = [np.empty(p.shape, np.float32) for p in parts]
        call("split", 0, [exp], pieces, iattr=(axis,), nthreads=2)
        for got, p in zip(pieces, parts):
            same(got, p)


def test_concat_shape_mismatch():
    a, b = np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32)
    with pytest.raises(MXNetError, match="concat: array 1 has size 3 on axis 0"):
        call("concat", 0, [a, b], [np.empty((2, 6), np.float32)], iattr=(1,))


# ---- slice family -----------------------------------------------------------------------------
def random_slice(rng, shape):
    """begin/step per axis (steps may be negative) and the matching python slices"""
    begin, step, sl = [], [], []
    for n in shape:
        if n == 0:
            begin.append(0)
            step.append(1)
            sl.append(slice(0, 0, 1))
            continue
        s = int(rng.choice([1, 1, 2, 3, -1, -2]))
        b = int(rng.integers(0, n))
        if s > 0:
            e = int(rng.integers(b, n + 1))
            sl.append(slice(b, e, s))
        else:
            e = int(rng.integers(-1, b + 1))
            sl.append(slice(b, None if e < 0 else e, s))
        begin.append(b)
        step.append(s)
    return begin, step, tuple(sl)


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_slice_random(dt):
    rng = np.random.default_rng(5)
    for _ in range(30):
        shape = rand_shape(rng)
        x = rand(rng, shape, dt)
        begin, step, sl = random_slice(rng, shape)
        exp = x[sl]
        out = np.empty(exp.shape, dt)
        call("slice", code(dt), [x], [out], iattr=tuple(begin + step))
        same(out, exp)


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_slice_assign_random(dt):
    rng = np.random.default_rng(6)
    for _ in range(30):
        shape = rand_shape(rng)
        x = rand(rng, shape, dt)
        begin, step, sl = random_slice(rng, shape)
        val = rand(rng, x[sl].shape, dt)
        exp = x.copy()
        exp[sl] = val
        got = x.copy()
        call("slice_assign", code(dt), [got, val], [got], iattr=tuple(begin + step))
        same(got, exp)
        # scalar version: iattr carries the slice lengths too
        scalar = float(rng.integers(-3, 100)) + (0.5 if np.dtype(dt).kind == "f" else 0)
        exp = x.copy()
        exp[sl] = np.array(scalar).astype(dt)
        got = x.copy()
        call("slice_assign_scalar", code(dt), [got], [got],
             iattr=tuple(begin + step + list(x[sl].shape)), fattr=(scalar,))
        same(got, exp)


def test_slice_large_threaded_negative_steps():
    rng = np.random.default_rng(7)
    x = rand(rng, (300, 400), np.float64)
    exp = x[299::-1, 398:0:-2]
    out = np.empty(exp.shape, x.dtype)
    call("slice", 1, [x], [out], iattr=(299, 398, -1, -2), nthreads=2)
    same(out, exp)
    got = x.copy()
    val = rand(rng, exp.shape, np.float64)
    call("slice_assign", 1, [got, val], [got], iattr=(299, 398, -1, -2), nthreads=2)
    ref = x.copy()
    ref[299::-1, 398:0:-2] = val
    same(got, ref)


def test_slice_out_of_bounds():
    x = np.zeros((4, 5), np.float32)
    with pytest.raises(MXNetError, match="slice: axis 1"):
        call("slice", 0, [x], [np.empty((2, 3), np.float32)], iattr=(0, 3, 1, 1))
    with pytest.raises(MXNetError, match="step on axis 0 is 0"):
        call("slice", 0, [x], [np.empty((2, 3), np.float32)], iattr=(0, 0, 0, 1))
    with pytest.raises(MXNetError, match="slice_assign_scalar: expected begin, step and length"):
        call("slice_assign_scalar", 0, [x], [x], iattr=(0, 0, 1, 1), fattr=(1.0,))


def test_slice_assign_scalar_casts_like_mxnet():
    # double scalars cast to the dtype: truncation toward zero and wrap for ints, RNE for float16
    for dt, v, want in [(np.uint8, 300.0, 44), (np.int8, -1.7, -1), (np.int32, 2.9, 2),
                        (np.bool_, 0.25, True), (np.float16, 0.1, np.float16(0.1))]:
        x = np.zeros(3, dt)
        call("slice_assign_scalar", code(dt), [x], [x], iattr=(1, 1, 2), fattr=(v,))
        same(x, np.array([0, want, want]).astype(dt))


# ---- broadcast_to / flip ----------------------------------------------------------------------
@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_broadcast_to_random(dt):
    rng = np.random.default_rng(8)
    for _ in range(25):
        oshape = rand_shape(rng)
        ishape = tuple(1 if rng.random() < 0.5 else n for n in oshape)
        x = rand(rng, ishape, dt)
        out = np.empty(oshape, dt)
        call("broadcast_to", code(dt), [x], [out])
        same(out, np.broadcast_to(x, oshape))


def test_broadcast_to_large_threaded():
    rng = np.random.default_rng(9)
    for ishape, oshape in [((1, 500), (300, 500)), ((300, 1), (300, 500)),
                           ((5, 1, 7), (5, 4000, 7)), ((1,), (100000,))]:
        x = rand(rng, ishape, np.int32)
        out = np.empty(oshape, np.int32)
        call("broadcast_to", code(np.int32), [x], [out], nthreads=2)
        same(out, np.broadcast_to(x, oshape))


def test_broadcast_to_bad_shape():
    with pytest.raises(MXNetError, match="broadcast_to: axis 0 of size 2 cannot broadcast to 3"):
        call("broadcast_to", 0, [np.zeros((2, 1), np.float32)], [np.empty((3, 4), np.float32)])


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_flip_random(dt):
    rng = np.random.default_rng(10)
    for _ in range(25):
        shape = rand_shape(rng)
        x = rand(rng, shape, dt)
        flags = tuple(int(f) for f in rng.integers(0, 2, len(shape)))
        out = np.empty(shape, dt)
        call("flip", code(dt), [x], [out], iattr=flags)
        axes = tuple(i for i, f in enumerate(flags) if f)
        same(out, np.flip(x, axes) if axes else x)


def test_flip_large_threaded():
    x = rand(np.random.default_rng(11), (200, 300, 3), np.float32)
    for flags in [(1, 0, 0), (0, 1, 1), (1, 1, 1), (0, 0, 1)]:
        out = np.empty(x.shape, x.dtype)
        call("flip", 0, [x], [out], iattr=flags, nthreads=2)
        same(out, np.flip(x, tuple(i for i, f in enumerate(flags) if f)))


# ---- take -------------------------------------------------------------------------------------
def take(x, idx, axis, mode, nthreads=1):
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    out = np.empty(shape, x.dtype)
    call("take", (code(x.dtype), code(idx.dtype)), [x, idx], [out], iattr=(axis, mode),
         nthreads=nthreads)
    return out


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_take_random(dt):
    rng = np.random.default_rng(12)
    for it in IDX_DTYPES:
        for _ in range(6):
            shape = rand_shape(rng, lo=1, ndim=int(rng.integers(1, 5)))
            axis = int(rng.integers(0, len(shape)))
            x = rand(rng, shape, dt)
            n = shape[axis]
            lo = 0 if np.dtype(it).kind == "u" else -2 * n
            raw = rng.integers(lo, 2 * n + 1, rand_shape(rng, ndim=int(rng.integers(0, 3))))
            idx = raw.astype(it)
            ii = idx.astype(np.int64)
            same(take(x, idx, axis, 0), np.take(x, np.clip(ii, 0, n - 1), axis=axis))
            same(take(x, idx, axis, 1), np.take(x, ii % n, axis=axis))
            ok = idx[(ii >= 0) & (ii < n)]
            same(take(x, ok, axis, 2), np.take(x, ok.astype(np.int64), axis=axis))


def test_take_float_indices_mxnet_191():
    """MXNet 1.9.1: nd.take(arange(5)*10, idx, mode=...) truncates float indices toward zero."""
    a = (np.arange(5) * 10).astype(np.float32)
    same(take(a, np.array([1.7, -0.5, 2.9, -1.2], np.float32), 0, 0),
         np.array([10, 0, 20, 0], np.float32))
    same(take(a, np.array([1.7, -0.5, 2.9, -1.2, -4.5], np.float32), 0, 1),
         np.array([10, 0, 20, 40, 10], np.float32))
    idx = np.array([-7, -1, 0, 4, 5, 12], np.float32)
    same(take(a, idx, 0, 0), np.array([0, 0, 0, 40, 40, 40], np.float32))
    same(take(a, idx, 0, 1), np.array([30, 40, 0, 40, 0, 20], np.float32))


def test_take_raise_names_bad_index():
    a = np.arange(5, dtype=np.float32)
    # MXNet 1.9.1 raise mode rejects every index outside [0, N), -1 included
    for bad in (7, -1):
        with pytest.raises(MXNetError, match=f"take: index {bad} is out of bounds for axis 0 "
                                             "with size 5"):
            take(a, np.array([1, bad], np.int64), 0, 2)
    with pytest.raises(MXNetError, match="take: index .*NaN"):
        take(a, np.array([1, np.nan], np.float32), 0, 2)
    with pytest.raises(MXNetError, match="take: cannot take from axis 0 of size 0"):
        take(np.zeros((0, 2), np.float32), np.array([0], np.int32), 0, 0)


def test_take_large_threaded():
    rng = np.random.default_rng(13)
    x = rand(rng, (1000, 64), np.float32)
    idx = rng.integers(0, 1000, 5000).astype(np.int64)
    same(take(x, idx, 0, 0, nthreads=2), x[idx])
    x1 = rand(rng, (70000,), np.int8)
    idx1 = rng.integers(0, 70000, 80000).astype(np.int32)
    same(take(x1, idx1, 0, 2, nthreads=2), x1[idx1])


# ---- one_hot ----------------------------------------------------------------------------------
def one_hot(idx, depth, on, off, dt):
    out = np.empty(idx.shape + (depth,), dt)
    call("one_hot", (code(idx.dtype), code(dt)), [idx], [out], iattr=(depth,), fattr=(on, off))
    return out


@pytest.mark.parametrize("it", IDX_DTYPES, ids=[np.dtype(d).name for d in IDX_DTYPES])
def test_one_hot_all_dtypes(it):
    rng = np.random.default_rng(14)
    for dt in DTYPES:
        for shape in [(), (0,), (7,), (3, 4)]:
            lo = 0 if np.dtype(it).kind == "u" else -2
            idx = rng.integers(lo, 8, shape).astype(it)
            ii = idx.astype(np.int64)
            exp = np.where((ii[..., None] == np.arange(6)), 3, 1).astype(dt)
            same(one_hot(idx, 6, 3.0, 1.0, dt), exp)


def test_one_hot_mxnet_191():
    """MXNet 1.9.1 nd.one_hot: out-of-range and negative indices give a row of off_value, float
    indices truncate, on/off values cast to the dtype (300 -> 44 in uint8, 2.7 -> 2 in int32)."""
    got = one_hot(np.array([-1, 0, 2, 3, 1.7, -0.5], np.float32), 3, 5.0, -1.0, np.float32)
    same(got, np.array([[-1, -1, -1], [5, -1, -1], [-1, -1, 5], [-1, -1, -1], [-1, 5, -1],
                        [5, -1, -1]], np.float32))
    same(one_hot(np.array([0, 2], np.int64), 3, 300.0, 0.0, np.uint8),
         np.array([[44, 0, 0], [0, 0, 44]], np.uint8))
    same(one_hot(np.array([0, 2], np.int64), 3, 2.7, -1.5, np.int32),
         np.array([[2, -1, -1], [-1, -1, 2]], np.int32))
    got = one_hot(np.array([0, 2], np.float16), 3, 0.1, 0.0, np.float16)
    assert got[0, 0] == np.float16(0.0999755859375)


# ---- scatter_rows -----------------------------------------------------------------------------
def scatter(dst, idx, val, nthreads=1):
    call("scatter_rows", (code(dst.dtype), code(idx.dtype)), [dst, idx, val], [dst],
         nthreads=nthreads)


@pytest.mark.parametrize("dt", DTYPES, ids=DT_IDS)
def test_scatter_rows_random(dt):
    rng = np.random.default_rng(15)
    for it in IDX_DTYPES:
        shape = rand_shape(rng, lo=1, ndim=int(rng.integers(1, 4)))
        n = shape[0]
        x = rand(rng, shape, dt)
        lo = 0 if np.dtype(it).kind == "u" else -n
        idx = rng.integers(lo, n, int(rng.integers(0, 6))).astype(it)
        val = rand(rng, idx.shape + shape[1:], dt)
        exp = x.copy()
        exp[idx.astype(np.int64)] = val        # duplicates: numpy keeps the last write
        got = x.copy()
        scatter(got, idx, val)
        same(got, exp)


def test_scatter_rows_duplicates_last_wins_threaded():
    rng = np.random.default_rng(16)
    x = rand(rng, (50, 20000), np.float32)      # 6 value rows of 20000: threaded path
    idx = np.array([3, 7, 3, -1, 49, 7], np.int64)
    val = rand(rng, (6, 20000), np.float32)
    exp = x.copy()
    for i, j in enumerate(idx):
        exp[j] = val[i]
    got = x.copy()
    scatter(got, idx, val, nthreads=2)
    same(got, exp)


def test_scatter_rows_bad_index_leaves_dst():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = x.copy()
    with pytest.raises(MXNetError, match="scatter_rows: index 5 is out of bounds for axis 0 "
                                         "with size 4"):
        scatter(got, np.array([1, 5], np.int32), np.ones((2, 2), np.float32))
    same(got, x)
    with pytest.raises(MXNetError, match="scatter_rows: index -5 is out of bounds"):
        scatter(got, np.array([-5], np.int64), np.ones((1, 2), np.float32))
    with pytest.raises(MXNetError, match="scatter_rows: value has 3 elements"):
        scatter(got, np.array([0], np.int64), np.ones(3, np.float32))

"""Elementwise CPU kernels (mxc/ops/cpu/elemwise.pyx) against numpy references and MXNet 1.9.1.

References are computed in float64 (or exact integer arithmetic) and cast to the kernel's dtype;
integer semantics that are MXNet's own (float routes, x86 casts) come from
tests/data/elemwise_golden.npz, written by real MXNet 1.9.1 (tests/data/make_elemwise_golden.py).
"""
import ctypes
import ctypes.util
import math
import os

import numpy as np
import pytest

from mxc._core.opcall import DTYPE_CODE, run_on_numpy
from mxc.base import MXNetError
from mxc.ops.cpu.elemwise import KERNELS

UNARY = ("negative abs sign round rint ceil floor trunc fix square sqrt rsqrt cbrt exp expm1 log "
         "log10 log2 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh "
         "arctanh degrees radians sigmoid relu softsign erf gamma gammaln reciprocal "
         "logical_not").split()
BINARY = ("add sub mul div mod power maximum minimum hypot equal not_equal greater greater_equal "
          "lesser lesser_equal logical_and logical_or logical_xor").split()
REVERSIBLE = ("sub", "div", "mod", "power")
NUMERIC = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32, np.int64]
FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.uint8, np.int8, np.int32, np.int64]
ALL8 = NUMERIC + [np.bool_]
# (rtol, atol) per dtype; integers are exact
TOL = {np.float16: (2e-3, 1e-4), np.float32: (2e-6, 1e-7), np.float64: (1e-12, 1e-14)}
BIG = 70000   # above the kernels' OpenMP threshold

DEG_F = float(np.float32(180.0) / np.float32(np.pi))   # MXNet's float constants
RAD_F = float(np.float32(np.pi) / np.float32(180.0))


def code(dt):
    return DTYPE_CODE[np.dtype(dt)]


def call(name, key, inputs, out, fattr=(), iattr=(), nthreads=1):
    run_on_numpy(KERNELS[name][key], [np.ascontiguousarray(x) for x in inputs], [out],
                 iattr=iattr, fattr=fattr, nthreads=nthreads)
    return out


def mx_cast(d, dt):
    """float64 -> dtype the way MXNet converts (x86: trunc, INT_MIN when nan/out of range)."""
    dt = np.dtype(dt)
    d = np.asarray(d, dtype=np.float64)
    if dt == np.float16:
        with np.errstate(over="ignore"):
            return d.astype(np.float32).astype(np.float16)
    if dt.kind == "f":
        return d.astype(dt)
    if dt == np.bool_:
        return d != 0
    with np.errstate(invalid="ignore"):
        if dt == np.int64:
            ok = (d >= -2.0 ** 63) & (d < 2.0 ** 63)
            r = np.trunc(np.where(ok, d, 0)).astype(np.int64)
            return np.where(ok, r, np.iinfo(np.int64).min)
        ok = (d > -2.0 ** 31 - 1) & (d < 2.0 ** 31)
        r = np.where(ok, np.trunc(np.where(ok, d, 0)), -2.0 ** 31).astype(np.int64)
    return r.astype(dt)   # numpy's int64 -> narrower astype wraps, as the low byte does


def assert_close(got, exp, dt, what):
    dt = np.dtype(dt).type
    assert got.dtype == np.dtype(dt), what
    if dt in TOL:
        rtol, atol = TOL[dt]
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, exp, err_msg=what)


# ---- registry shape -----------------------------------------------------------------------

def test_kernel_names_and_keys():
    want = {f"unary:{op}" for op in UNARY + ["copy"]} | {f"binary:{op}" for op in BINARY} \
        | {f"scalar:{op}" for op in BINARY} | {f"rscalar:{op}" for op in REVERSIBLE} \
        | {"cast", "clip", "where"}
    assert want <= set(KERNELS)
    num = {code(d) for d in NUMERIC}
    for op in UNARY:
        assert set(KERNELS[f"unary:{op}"]) == num, op
    assert set(KERNELS["unary:copy"]) == {code(d) for d in ALL8}
    for op in BINARY:
        assert set(KERNELS[f"binary:{op}"]) == num and set(KERNELS[f"scalar:{op}"]) == num, op
    for op in REVERSIBLE:
        assert set(KERNELS[f"rscalar:{op}"]) == num, op
    pairs = {(code(a), code(b)) for a in ALL8 for b in ALL8}
    assert set(KERNELS["where"]) == pairs
    # cast also converts to and from bfloat16 (flag 12): the boundary of its float32 compute
    nine = {code(d) for d in ALL8} | {12}
    assert set(KERNELS["cast"]) == {(a, b) for a in nine for b in nine}
    assert set(KERNELS["clip"]) == num
    assert all(isinstance(v, int) and v for t in KERNELS.values() for v in t.values())


# ---- against MXNet 1.9.1 ------------------------------------------------------------------

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "data", "elemwise_golden.npz")


def golden_records():
    z = np.load(GOLDEN)
    groups = sorted({k.split("/")[0] for k in z.files})
    for g in groups:
        names, off = z[g + "/names"], z[g + "/offsets"]
        a, b, out = z[g + "/a"], z[g + "/b"], z[g + "/out"]
        for i, name in enumerate(names):
            s = slice(off[i], off[i + 1])
            yield str(name), a[s], b[s], out[s]


def run_record(name, a, b, like):
    kind, op, param = name.split("|")
    y = np.empty_like(like)
    k = code(a.dtype)
    if kind == "unary":
        return call(f"unary:{op}", k, [a], y)
    if kind == "binary":
        return call(f"binary:{op}", k, [a, b], y)
    if kind in ("scalar", "rscalar"):
        return call(f"{kind}:{op}", k, [a], y, fattr=(float(param),))
    if kind == "clip":
        lo, hi = map(float, param.split(","))
        return call("clip", k, [a], y, fattr=(lo, hi))
    if kind == "cast":
        return call("cast", (k, code(like.dtype)), [a], y)
    raise AssertionError(name)


def mxnet_precision_artefacts(name, a, b):
    """Elements where the kernels are deliberately exact and MXNet is not.

    MXNet squares integers through float32 (math::sqr), so int32/int64 squares above 2^24 come
    back rounded or as INT_MIN; the kernels use exact wrap-around integer arithmetic instead.
    MXNet's integer mod, abs and rounding functions go through double, inexact for int64 beyond
    2^53 (abs(INT64_MAX) = INT64_MIN); the kernels' integer versions are exact.
    """
    if name.startswith("unary|square|") and a.dtype in (np.int32, np.int64):
        return np.abs(a.astype(np.float64)) >= 4096
    if a.dtype == np.int64 and name.split("|")[1] in ("abs", "round", "rint", "ceil", "floor",
                                                        "trunc", "fix"):
        return np.abs(a.astype(np.float64)) >= 2.0 ** 53   # MXNet: through double
    if "|mod|" in name and a.dtype == np.int64:
        big = 2.0 ** 53
        return (np.abs(a.astype(np.float64)) >= big) | (np.abs(b.astype(np.float64)) >= big)
    return np.zeros(a.shape, bool)


def test_matches_mxnet_golden():
    n = 0
    for name, a, b, exp in golden_records():
        got = run_record(name, a, b, exp)
        keep = ~mxnet_precision_artefacts(name, a, b)
        got, exp = got[keep], exp[keep]
        what = f"{name} {a.dtype} a={a[keep].tolist()} b={b[keep].tolist()}"
        if exp.dtype.kind == "f":
            rtol, atol = TOL[exp.dtype.type]
            np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=what)
            # zeros keep their sign where MXNet gives one (fix(-0.5) = -0.0, mod -> -0.0)
            z = (exp == 0) & (got == 0)
            assert np.array_equal(np.signbit(got[z]), np.signbit(exp[z])), what
        else:
            np.testing.assert_array_equal(got, exp, err_msg=what)
        n += 1
    assert n > 1200


def test_integer_corner_cases_from_mxnet():
    # literal values observed with MXNet 1.9.1
    i32 = np.int32
    x = np.array([7, -7, 7, -7, 100, 3, -3, 2, 2, -2, 1], i32)
    y = np.array([2, 2, -2, -2, 100, -1, -1, 10, -3, 3, 100], i32)
    assert call("binary:div", code(i32), [x, y], np.empty_like(x)).tolist() == \
        [3, -3, -3, 3, 1, -3, 3, 0, 0, 0, 0]
    assert call("binary:mod", code(i32), [x, y], np.empty_like(x)).tolist() == \
        [1, 1, -1, -1, 0, 0, 0, 2, -1, 1, 1]
    assert call("binary:power", code(i32), [x, y], np.empty_like(x)).tolist() == \
        [49, 49, 0, 0, -2147483648, 0, 0, 1024, 0, -8, 1]
    i8 = np.array([-128], np.int8)
    assert call("binary:div", code(np.int8), [i8, np.array([-1], np.int8)],
                np.empty_like(i8)).tolist() == [-128]
    a = np.array([7, -7, 0, 3, -3, 2, 100, 1, -1], i32)
    assert call("scalar:add", code(i32), [a], np.empty_like(a), fattr=(2.5,)).tolist() == \
        [9, -5, 2, 5, -1, 4, 102, 3, 1]
    u = a.astype(np.uint8)
    assert call("scalar:add", code(np.uint8), [u], np.empty_like(u), fattr=(-2.5,)).tolist() == \
        [5, 247, 254, 1, 251, 0, 98, 255, 253]
    assert call("rscalar:power", code(i32), [a], np.empty_like(a), fattr=(2.5,)).tolist() == \
        [128, 0, 1, 8, 0, 4, -2147483648, 2, 0]
    e = np.array([0, 1, 2, 3, 5, -1, -2, -7, 100], np.int8)
    assert call("unary:exp", code(np.int8), [e], np.empty_like(e)).tolist() == \
        [1, 2, 7, 20, -108, 0, 0, 0, 0]
    s = np.array([0, 1, 2, 3, 5, -1, -2, -7, 100], i32)
    assert call("unary:sqrt", code(i32), [s], np.empty_like(s)).tolist() == \
        [0, 1, 1, 1, 2, -2147483648, -2147483648, -2147483648, 10]
    assert call("unary:degrees", code(np.int8), [e], np.empty_like(e)).tolist() == \
        [0, 57, 114, -85, 30, -57, -114, 111, 97]


def test_integer_division_never_traps():
    # MXNet 1.9.1 dies of SIGFPE here; the kernels answer as numpy does for x / 0 and x % 0
    for dt in INTS:
        info = np.iinfo(dt)
        a = np.array([5, 0, info.min, info.max, info.min], dt)
        b = np.array([0, 0, 0, 0, -1 if info.min < 0 else 1], dt)
        q = call("binary:div", code(dt), [a, b], np.empty_like(a))
        r = call("binary:mod", code(dt), [a, b], np.empty_like(a))
        assert q[:4].tolist() == [0, 0, 0, 0] and r[:4].tolist() == [0, 0, 0, 0]
        assert q[4] == info.min and r[4] == 0
        z = call("scalar:div", code(dt), [a], np.empty_like(a), fattr=(0.0,))
        assert z.tolist() == [0] * 5
        z = call("rscalar:div", code(dt), [np.zeros(3, dt)], np.empty(3, dt), fattr=(3.0,))
        assert z.tolist() == [0] * 3


# ---- unary against numpy --------------------------------------------------------------------

def _vec(f):
    v = np.vectorize(f, otypes=[np.float64])
    return lambda x: v(x) if x.size else x


def _rint_mx(x):
    fl, ce = np.floor(x), np.ceil(x)
    with np.errstate(invalid="ignore"):
        return np.where(x - fl <= ce - x, fl, ce)


def _fix(x):
    fl, ce = np.floor(x), np.ceil(x)
    return np.where(np.abs(fl) < np.abs(ce), fl, ce)


def _lgamma(v):
    try:
        return math.lgamma(v)
    except ValueError:
        return math.inf


def _gamma(v):
    if v == 0:
        return math.copysign(math.inf, v)
    if math.isnan(v) or v == -math.inf or (v < 0 and v == math.floor(v)):
        return math.nan
    try:
        return math.gamma(v)
    except OverflowError:
        return math.inf


# The C library's tgamma, as MXNet calls it: integer results truncate its double (tgamma(13) is
# 479001599.99999994 there, so int32 gamma(13) = 479001599 in MXNet and here).
_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_LIBM.tgamma.restype = ctypes.c_double
_LIBM.tgamma.argtypes = [ctypes.c_double]
for _f in (_LIBM.powf, _LIBM.hypotf):
    _f.restype = ctypes.c_float
    _f.argtypes = [ctypes.c_float, ctypes.c_float]


# name -> (float64 reference, domain of random inputs, exact-integer reference or None)
UREF = {
    "negative": (np.negative, (-50, 50), lambda a: -a),
    "abs": (np.abs, (-50, 50), lambda a: np.abs(a)),
    "sign": (lambda x: np.nan_to_num(np.sign(x), nan=0.0), (-5, 5), lambda a: np.sign(a)),
    "round": (lambda x: np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)), (-10, 10), None),
    "rint": (_rint_mx, (-10, 10), None),
    "ceil": (np.ceil, (-10, 10), None),
    "floor": (np.floor, (-10, 10), None),
    "trunc": (np.trunc, (-10, 10), None),
    "fix": (_fix, (-10, 10), None),
    "square": (np.square, (-50, 50), lambda a: a * a),
    "sqrt": (np.sqrt, (0, 100), "via"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100), "via"),
    "cbrt": (np.cbrt, (-100, 100), "via"),
    "exp": (np.exp, (-20, 20), "via"),
    "expm1": (np.expm1, (-5, 5), "via"),
    "log": (np.log, (0.01, 100), "via"),
    "log10": (np.log10, (0.01, 100), "via"),
    "log2": (np.log2, (0.01, 100), "via"),
    "log1p": (np.log1p, (-0.9, 100), "via"),
    "sin": (np.sin, (-10, 10), "via"),
    "cos": (np.cos, (-10, 10), "via"),
    "tan": (np.tan, (-1.4, 1.4), "via"),
    "arcsin": (np.arcsin, (-1, 1), "via"),
    "arccos": (np.arccos, (-1, 1), "via"),
    "arctan": (np.arctan, (-20, 20), "via"),
    "sinh": (np.sinh, (-8, 8), "via"),
    "cosh": (np.cosh, (-8, 8), "via"),
    "tanh": (_vec(math.tanh), (-5, 5), "via"),   # libm: numpy rounds tanh(19) up to 1
    "arcsinh": (np.arcsinh, (-20, 20), "via"),
    "arccosh": (np.arccosh, (1, 20), "via"),
    "arctanh": (np.arctanh, (-0.99, 0.99), "via"),
    "degrees": (lambda x: x * DEG_F, (-10, 10), "viaf"),
    "radians": (lambda x: x * RAD_F, (-500, 500), "viaf"),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-20, 20), "via"),
    "relu": (lambda x: np.where(np.isnan(x) | (x > 0), x, 0.0), (-10, 10),
             lambda a: np.maximum(a, 0).astype(a.dtype)),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-20, 20), "via"),
    "erf": (_vec(math.erf), (-3, 3), "via"),
    "gamma": (_vec(_gamma), (0.2, 8), "via"),
    "gammaln": (_vec(_lgamma), (0.2, 40), "via"),
    "reciprocal": (lambda x: 1 / x, (0.1, 10), "viaf"),
    "logical_not": (lambda x: (x == 0).astype(np.float64), (-2, 2), lambda a: (a == 0)),
}
ROUNDING = {"round", "rint", "ceil", "floor", "trunc", "fix"}


def unary_float_inputs(op, dt, n, rng):
    lo, hi = UREF[op][1]
    x = rng.uniform(lo, hi, n)
    if op in ROUNDING:
        x[: n // 4] = np.round(x[: n // 4] * 2) / 2          # exact .5 ties
    edges = [0.0, -0.0, lo, hi, np.nan, np.inf, -np.inf]
    k = min(n, len(edges))
    x[:k] = edges[:k]
    return x.astype(dt)


def unary_ref(op, x, dt):
    f = UREF[op][0]
    with np.errstate(all="ignore"):
        return mx_cast(f(x.astype(np.float64)), dt)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_float(op, dt):
    rng = np.random.default_rng(UNARY.index(op))
    for n, nt in ((1, 1), (37, 1), (BIG, 2)):
        x = unary_float_inputs(op, dt, n, rng)
        got = call(f"unary:{op}", code(dt), [x], np.empty_like(x), nthreads=nt)
        exp = unary_ref(op, x, dt)
        if dt == np.float16 or op in ("tan", "gamma", "gammaln"):
            # float32 libm vs a float64 reference: compare where the function is well conditioned
            fin = np.isfinite(exp.astype(np.float64))
            assert_close(got[fin], exp[fin], dt, f"{op} {n}")
            assert np.array_equal(np.isnan(got), np.isnan(exp)), op
            inf = np.isinf(exp)
            np.testing.assert_array_equal(got[inf], exp[inf], err_msg=op)
        else:
            assert_close(got, exp, dt, f"{op} {np.dtype(dt)} n={n}")


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_int(op, dt):
    info = np.iinfo(dt)
    rng = np.random.default_rng(7)
    for n, nt in ((9, 1), (BIG, 2)):
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dt)
        if op in ("gamma", "exp", "sinh", "cosh", "expm1"):
            x = (x % 30).astype(dt)    # keep double results well inside the integer range
        x[:3] = [0, 1, info.max]
        got = call(f"unary:{op}", code(dt), [x], np.empty_like(x), nthreads=nt)
        ref, _, iref = UREF[op]
        if op in ROUNDING:
            exp = x
        elif iref == "via":
            if op == "gamma":
                ref = lambda v: _on_unique(_LIBM.tgamma, v)
            with np.errstate(all="ignore"):
                exp = mx_cast(ref(x.astype(np.float64)), dt)
        elif iref == "viaf":
            with np.errstate(all="ignore"):
                exp = mx_cast(ref(x.astype(np.float32)).astype(np.float32), dt)
        else:
            with np.errstate(all="ignore"):
                exp = np.asarray(iref(x.astype(np.int64))).astype(dt)
        np.testing.assert_array_equal(got, exp, err_msg=f"{op} {np.dtype(dt)}")


@pytest.mark.parametrize("dt", ALL8)
def test_copy(dt):
    x = (np.arange(BIG) % 7).astype(dt)
    for n, nt in ((5, 1), (BIG, 2)):
        got = call("unary:copy", code(dt), [x[:n]], np.empty(n, dt), nthreads=nt)
        np.testing.assert_array_equal(got, x[:n])


def test_unary_in_place_and_empty():
    x = np.linspace(-3, 3, 101).astype(np.float32)
    exp = np.exp(x.astype(np.float64)).astype(np.float32)
    call("unary:exp", code(np.float32), [x], x)           # out aliases in (req=INPLACE)
    np.testing.assert_allclose(x, exp, rtol=2e-6)
    e = np.empty(0, np.float32)
    call("unary:exp", code(np.float32), [e], np.empty(0, np.float32))


# ---- binary, scalar against numpy ---------------------------------------------------------

def _mx_mod(a, b):
    with np.errstate(all="ignore"):
        r = np.fmod(a, b)
        r = np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
        return np.where(b == 0, 0.0, r)


FREF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "mod": _mx_mod,
    "power": np.power, "hypot": np.hypot,
    "maximum": lambda a, b: np.where(np.isnan(a), a, np.where(a > b, a, b)),
    "minimum": lambda a, b: np.where(np.isnan(a), a, np.where(a < b, a, b)),
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}


def _idiv(a, b):
    a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, np.where(b == 0, 1, b))
        r = a - q * np.where(b == 0, 1, b)
        q = np.where((r != 0) & ((a < 0) != (b < 0)), q + 1, q)
    return np.where(b == 0, 0, q)


def _on_unique(f, *args):
    """f (a scalar C function) applied elementwise, calling it once per distinct argument tuple."""
    args = np.broadcast_arrays(*args)
    flat = np.stack([x.ravel().astype(np.float64) for x in args], axis=1)
    uniq, inv = np.unique(flat, axis=0, return_inverse=True)
    vals = np.array([f(*row) for row in uniq], dtype=np.float64)
    return vals[inv.ravel()].reshape(args[0].shape)


def int_ref(op, a, b, dt):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        if op in ("add", "sub", "mul"):
            r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a64, b64)
        elif op == "div":
            r = _idiv(a, b)
        elif op == "mod":
            r = np.mod(a64, np.where(b64 == 0, 1, b64)) * (b64 != 0)
        elif op in ("power", "hypot"):
            # MXNet: the C library's powf/hypotf on the operands as float32
            af, bf = a.astype(np.float32), b.astype(np.float32)
            if op == "hypot":   # hypotf is sqrt of the double sum of squares, rounded once
                return mx_cast(np.hypot(af.astype(np.float64), bf.astype(np.float64))
                               .astype(np.float32).astype(np.float64), dt)
            return mx_cast(_on_unique(_LIBM.powf, af, bf), dt)
        else:
            r = FREF[op](a64, b64)
    return np.asarray(r).astype(dt)


def binary_ref(op, a, b, dt):
    if np.dtype(dt).kind in "iu":
        return int_ref(op, a, b, dt)
    with np.errstate(all="ignore"):
        r = FREF[op](a.astype(np.float64), b.astype(np.float64))
    return mx_cast(np.asarray(r, dtype=np.float64), dt)


def rand_operand(dt, shape, rng, op):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -100), min(info.max, 100)
        if op == "power":
            lo, hi = max(lo, -4), 6
        return rng.integers(lo, hi, shape, endpoint=True).astype(dt)
    x = rng.uniform(-10, 10, shape)
    if op == "power":
        x = np.abs(x) / 3
    x.flat[::11] = np.round(x.flat[::11])   # exact ties for comparisons and mod
    return x.astype(dt)


BSHAPES = [((6,), (6,)), ((1,), (9,)), ((9,), (1,)), ((3, 1), (1, 4)), ((2, 3, 4), (2, 1, 4)),
           ((2, 1, 4, 1), (1, 3, 1, 5)), ((4, 5, 6), (1, 1, 1)), ((1, 1), (1, 1)),
           ((2, 3, 1, 2, 1), (1, 3, 4, 1, 5)), ((3, 1), (3, 1)), ((0, 3), (1, 3)),
           ((280, 256), (1, 256)), ((3, 1, 24000), (1, 1, 24000)), ((BIG,), (BIG,)),
           ((1,), (BIG,)), ((4, 1, 3, 1, 2, 1, 2, 1), (1, 2, 1, 3, 1, 2, 1, 2))]


@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("op", BINARY)
def test_binary_broadcast(op, dt):
    rng = np.random.default_rng(BINARY.index(op) + 100)
    for sa, sb in BSHAPES:
        if np.prod(np.broadcast_shapes(sa, sb)) >= BIG and dt not in (np.float16, np.float32,
                                                                       np.int32):
            continue   # the threaded sizes on three dtypes keep the suite fast
        a, b = rand_operand(dt, sa, rng, op), rand_operand(dt, sb, rng, op)
        if op in ("div", "mod") and np.dtype(dt).kind in "iu":
            b.flat[::5] = 0   # x / 0 = 0, x mod 0 = 0 (no trap)
        shape = np.broadcast_shapes(sa, sb)
        out = np.empty(shape, dt)
        nt = 2 if out.size >= BIG else 1
        got = call(f"binary:{op}", code(dt), [a, b], out, nthreads=nt)
        exp = binary_ref(op, np.broadcast_to(a, shape), np.broadcast_to(b, shape), dt)
        assert_close(got, exp, dt, f"{op} {sa} {sb}")


def test_binary_float_specials():
    nan, inf = np.nan, np.inf
    vals = np.array([0.0, -0.0, 1.0, -1.0, 2.5, nan, inf, -inf], np.float64)
    a, b = [v.ravel() for v in np.meshgrid(vals, vals)]
    for dt in FLOATS:
        for op in BINARY:
            got = call(f"binary:{op}", code(dt), [a.astype(dt), b.astype(dt)],
                       np.empty(a.size, dt))
            assert_close(got, binary_ref(op, a.astype(dt), b.astype(dt), dt), dt, op)


SCALARS = (2.5, -2.5, 0.4, 3.0, 0.0, -1.0, 130.7)


def scalar_as(s, dt):
    return mx_cast(np.array([s]), dt)


@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("op", BINARY)
def test_scalar(op, dt):
    rng = np.random.default_rng(BINARY.index(op) + 200)
    for n in (13, BIG):
        x = rand_operand(dt, (n,), rng, op)
        nt = 2 if n >= BIG else 1
        for s in (SCALARS if n < BIG else SCALARS[:2]):
            if op == "power" and np.dtype(dt).kind == "f" and abs(s) > 100:
                continue
            sv = np.broadcast_to(scalar_as(s, dt), x.shape)
            got = call(f"scalar:{op}", code(dt), [x], np.empty_like(x), fattr=(s,), nthreads=nt)
            assert_close(got, binary_ref(op, x, sv, dt), dt, f"{op} {s}")
            if op in REVERSIBLE:
                got = call(f"rscalar:{op}", code(dt), [x], np.empty_like(x), fattr=(s,),
                           nthreads=nt)
                assert_close(got, binary_ref(op, sv, x, dt), dt, f"r{op} {s}")


def test_binary_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(MXNetError, match="broadcast"):
        call("binary:add", code(np.float32), [a, np.ones((2, 2), np.float32)],
             np.empty((2, 3), np.float32))
    with pytest.raises(MXNetError, match="ndim"):
        call("binary:add", code(np.float32), [a, np.ones((2,), np.float32)],
             np.empty((2, 3), np.float32))


# ---- cast, clip, where ----------------------------------------------------------------------

@pytest.mark.parametrize("src", ALL8)
def test_cast_all_pairs(src):
    rng = np.random.default_rng(3)
    base = np.concatenate([[0, 1, -1, 2.7, -2.7, 126.9, -127.9, 255.0, 0.5],
                           rng.uniform(-120, 120, BIG)])
    src = np.dtype(src)
    if src.kind == "u":
        base = np.abs(base)
    x = base.astype(src) if src != np.bool_ else base > 0.4
    for dst in ALL8:
        dst = np.dtype(dst)
        for n, nt in ((9, 1), (x.size, 2)):
            got = call("cast", (code(src), code(dst)), [x[:n]], np.empty(n, dst), nthreads=nt)
            if src == np.float64 and dst == np.float16:
                exp = x[:n].astype(np.float32).astype(np.float16)
            else:
                exp = x[:n].astype(dst)
            np.testing.assert_array_equal(got, exp, err_msg=f"{src}->{dst}")


def test_cast_edges():
    x = np.array([np.nan, np.inf, -1e10, 300.0, -300.0, -0.9, 2 ** 62], np.float64)
    out = call("cast", (code(np.float64), code(np.int8)), [x], np.empty(7, np.int8))
    assert out.tolist() == [0, 0, 0, 44, -44, 0, 0]        # MXNet 1.9.1
    out = call("cast", (code(np.float64), code(np.bool_)), [x], np.empty(7, np.bool_))
    assert out.tolist() == [True] * 7
    big = np.array([2 ** 62 + 1, -2 ** 63, 2 ** 40 + 3], np.int64)
    out = call("cast", (code(np.int64), code(np.int32)), [big], np.empty(3, np.int32))
    np.testing.assert_array_equal(out, big.astype(np.int32))   # wraps, never via double
    out = call("cast", (code(np.int64), code(np.float32)), [big], np.empty(3, np.float32))
    np.testing.assert_array_equal(out, big.astype(np.float32))


@pytest.mark.parametrize("dt", NUMERIC)
def test_clip(dt):
    rng = np.random.default_rng(5)
    for n, nt in ((11, 1), (BIG, 2)):
        x = rand_operand(dt, (n,), rng, "add")
        for lo, hi in ((-2.5, 5.5), (0.0, 1e9), (-50.0, -10.0)):
            got = call("clip", code(dt), [x], np.empty_like(x), fattr=(lo, hi), nthreads=nt)
            ct = np.float64 if dt == np.float64 else np.float32
            v, flo, fhi = x.astype(ct), ct(np.float32(lo)), ct(np.float32(hi))
            exp = np.where(v > fhi, scalar_as(hi, dt), np.where(v < flo, scalar_as(lo, dt), x))
            np.testing.assert_array_equal(got, exp.astype(dt), err_msg=f"{lo} {hi}")
    if dt in FLOATS:
        x = np.array([np.nan, np.inf, -np.inf], dt)
        got = call("clip", code(dt), [x], np.empty_like(x), fattr=(-1.0, 1.0))
        np.testing.assert_array_equal(got, np.array([np.nan, 1, -1], dt))


@pytest.mark.parametrize("cdt", ALL8)
def test_where(cdt):
    rng = np.random.default_rng(9)
    for xdt in ALL8:
        big = xdt in (np.float32, np.uint8)   # the large, threaded sizes on two element widths
        for shape, nt in (((4, 3), 1),) + ((((BIG // 10, 10), 2), ((BIG,), 2)) if big else ()):
            c = rng.integers(0, 3, shape).astype(cdt)
            if np.dtype(cdt).kind == "f":
                c.flat[::7] = np.nan          # nan counts as true, as in MXNet
            x = rng.integers(0, 100, shape).astype(xdt)
            y = rng.integers(0, 100, shape).astype(xdt)
            got = call("where", (code(cdt), code(xdt)), [c, x, y], np.empty(shape, xdt),
                       nthreads=nt)
            np.testing.assert_array_equal(got, np.where(c != 0, x, y))
            crow = c.reshape(shape[0], -1)[:, 0].copy()
            got = call("where", (code(cdt), code(xdt)), [crow, x, y], np.empty(shape, xdt),
                       nthreads=nt)
            sel = (crow != 0).reshape((-1,) + (1,) * (len(shape) - 1))
            np.testing.assert_array_equal(got, np.where(sel, x, y))
    with pytest.raises(MXNetError, match="where"):
        call("where", (code(cdt), code(np.float32)), [np.ones(3, cdt), np.ones((4, 2), np.float32),
             np.ones((4, 2), np.float32)], np.empty((4, 2), np.float32))


def test_threads_agree_with_serial():
    rng = np.random.default_rng(11)
    x = rng.standard_normal(BIG * 3 + 17).astype(np.float32)
    y = rng.standard_normal(BIG * 3 + 17).astype(np.float32)
    for name, ins in (("unary:exp", [x]), ("unary:relu", [x]), ("binary:add", [x, y]),
                      ("binary:mul", [x, y[:1]])):
        one = call(name, code(np.float32), ins, np.empty_like(x), nthreads=1)
        two = call(name, code(np.float32), ins, np.empty_like(x), nthreads=2)
        np.testing.assert_array_equal(one, two)

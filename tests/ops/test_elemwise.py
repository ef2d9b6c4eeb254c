"""Registry-driven tests of the elementwise family: forward vs numpy for each dtype, inferred
shape/dtype vs the result, gradient vs central differences in float64."""
import math

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

from .oputil import check_forward, check_grad

_erf = np.vectorize(math.erf)
_gamma = np.vectorize(math.gamma)
_lgamma = np.vectorize(math.lgamma)


def _special():
    return pytest.importorskip("scipy.special")

# name: (numpy reference, input domain (lo, hi))
UNARY = {
    "negative": (np.negative, (-3, 3)), "abs": (np.abs, (-3, 3)), "sign": (np.sign, (-3, 3)),
    "round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), (-3, 3)),
    # MXNet's rint takes the floor at ties (2.5 -> 2, 1.5 -> 1, -2.5 -> -3), not numpy's even
    "rint": (lambda x: np.where(x - np.floor(x) <= np.ceil(x) - x, np.floor(x), np.ceil(x)),
             (-3, 3)), "ceil": (np.ceil, (-3, 3)), "floor": (np.floor, (-3, 3)),
    "trunc": (np.trunc, (-3, 3)), "fix": (np.fix, (-3, 3)), "square": (np.square, (-3, 3)),
    "sqrt": (np.sqrt, (0.1, 4)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)),
    "cbrt": (np.cbrt, (0.1, 4)), "exp": (np.exp, (-3, 3)), "expm1": (np.expm1, (-3, 3)),
    "log": (np.log, (0.1, 4)), "log10": (np.log10, (0.1, 4)), "log2": (np.log2, (0.1, 4)),
    "log1p": (np.log1p, (-0.5, 3)), "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1.2, 1.2)), "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)), "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "tanh": (np.tanh, (-3, 3)),
    "arcsinh": (np.arcsinh, (-3, 3)), "arccosh": (np.arccosh, (1.1, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)),
    # MXNet's constants are float32: degrees(x) = x * (180.0f / PI), even for float64 data
    "degrees": (lambda x: x * float(np.float32(180.0) / np.float32(np.pi)), (-3, 3)),
    "radians": (lambda x: x * float(np.float32(np.pi) / np.float32(180.0)), (-3, 3)), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-3, 3)),
    "relu": (lambda x: np.maximum(x, 0), (-3, 3)), "softsign": (lambda x: x / (1 + np.abs(x)), (-3, 3)),
    "erf": (_erf, (-2, 2)), "erfinv": (lambda x: _special().erfinv(x), (-0.95, 0.95)),
    "gamma": (_gamma, (-2.5, 4)), "gammaln": (_lgamma, (0.2, 4)),
    "reciprocal": (lambda x: 1 / x, (0.2, 3)), "logical_not": (lambda x: (x == 0), (-2, 2)),
}
FLOATS = [np.float16, np.float32, np.float64]


def _sample(rng, lo, hi, shape, dtype):
    x = rng.uniform(lo, hi, size=shape)
    if np.dtype(dtype).kind == "f":
        # keep clear of points where a float16 rounding lands on a discontinuity
        x = x.astype(dtype)
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_forward(name, dtype, rng):
    ref, (lo, hi) = UNARY[name]
    x = _sample(rng, lo, hi, (3, 4), dtype)
    if name == "gamma":
        x[np.abs(x - np.round(x)) < 0.1] += 0.25      # away from the poles
    if name in ("round", "rint"):
        # ties: round goes away from zero, rint to the floor (numpy's rint would give 2 at 1.5)
        x[0, 0], x[0, 1], x[0, 2] = 0.5, -1.5, 1.5
    expected = np.asarray(ref(x.astype(np.float64))).astype(dtype)
    check_forward(name, [x], {}, expected)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grad(name, rng):
    _, (lo, hi) = UNARY[name]
    x = rng.uniform(lo, hi, size=(2, 3))
    if name in ("round", "rint", "ceil", "floor", "trunc", "fix"):
        x = np.round(x) + 0.3          # away from jumps
    if name == "gamma":
        x[np.abs(x - np.round(x)) < 0.15] += 0.3
    check_grad(name, [x], {}, rng, rtol=1e-5, atol=1e-6)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "mod": np.mod,
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "hypot": np.hypot,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}
EW_NAME = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul", "div": "elemwise_div"}


def _pair(rng, name, shape_a, shape_b, dtype):
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(0.5, 3, size=shape_a).astype(dtype)
        b = rng.uniform(0.5, 3, size=shape_b).astype(dtype)
        if name in ("mod",):
            a = rng.uniform(-5, 5, size=shape_a).astype(dtype)
    else:
        a = rng.integers(-5, 6, size=shape_a).astype(dtype)
        b = rng.integers(1, 4, size=shape_b).astype(dtype)
        if name == "power":
            a = rng.integers(0, 4, size=shape_a).astype(dtype)
    if name in ("equal", "not_equal", "greater_equal", "lesser_equal"):
        b = b.copy()
        b.reshape(-1)[0] = a.reshape(-1)[0]
    return a, b


def test_erf_float32_within_two_ulps():
    """float32 erf runs on a vectorising erf in double (csrc/kernels/elemwise_common.h): within
    2 ulps of erf in double over [-6, 6] and near 0, on both sides of its |x| = 0.5 switch;
    erf(+-inf) = +-1, erf(-0) = -0, nan stays nan"""
    x = np.concatenate([np.linspace(-6, 6, 120001), np.geomspace(1e-38, 0.6, 3000),
                        -np.geomspace(1e-38, 0.6, 3000)]).astype(np.float32)
    want = _erf(x.astype(np.float64)).astype(np.float64)
    got = mx.nd.erf(mx.nd.array(x)).asnumpy().astype(np.float64)
    ulps = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32))
    assert ulps.max() <= 2.0, (ulps.max(), x[np.argmax(ulps)])
    sp = mx.nd.erf(mx.nd.array([np.inf, -np.inf, -0.0, np.nan])).asnumpy()
    assert sp[0] == 1 and sp[1] == -1 and sp[2] == 0 and np.signbit(sp[2]) and np.isnan(sp[3])


def _every_exponent(rng, lo_bits, hi_bits, n):
    """n float32 whose bit patterns are uniform in [lo_bits, hi_bits): every exponent alike,
    subnormals included"""
    return rng.integers(lo_bits, hi_bits, size=n, dtype=np.uint64).astype(np.uint32).view(
        np.float32)


LOG_FAMILY = {"log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
              "expm1": np.expm1}


@pytest.mark.parametrize("name", sorted(LOG_FAMILY))
def test_log_family_float32_nearest(name, rng):
    """float32 log, log2, log10, log1p and expm1 run on vectorising versions in double
    (csrc/kernels/elemwise_common.h): within 0.5 ulp plus 1e-3 of the exact value (the nearest
    float but within ~1e-12 of a tie) over every exponent, near their switches (1 for the logs,
    1e-4 for log1p, 1e-3 for expm1) and at exact powers; the ends as libm's"""
    ref = LOG_FAMILY[name]
    pos = _every_exponent(rng, 1, 0x7F800000, 200_000)
    near = np.concatenate([np.float32(1) + np.arange(-3000, 3000, dtype=np.float32) * 2**-23,
                           np.geomspace(1e-6, 2e-3, 4000, dtype=np.float32)])
    x = np.concatenate([pos, near, -near])
    if name in ("log1p", "expm1"):
        x = np.concatenate([x, -_every_exponent(rng, 1, 0x3F800000, 100_000)])  # (-1, 0)
    if name == "expm1":
        x = x[np.abs(x) < 88]
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    keep = np.isfinite(want)
    x, want = x[keep], want[keep]
    got = getattr(mx.nd, name)(mx.nd.array(x)).asnumpy().astype(np.float64)
    ulps = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 0.501, (ulps.max(), x[np.argmax(ulps)])
    if name in ("log", "log2", "log10"):
        k = np.arange(-149, 128)
        p2 = np.ldexp(np.float32(1), k).astype(np.float32)
        got2 = getattr(mx.nd, name)(mx.nd.array(p2)).asnumpy()
        assert np.array_equal(got2, ref(p2.astype(np.float64)).astype(np.float32))
    one = {"log": 0.0, "log2": 0.0, "log10": 0.0, "log1p": -1.0, "expm1": None}[name]
    sp = np.array([np.inf, -np.inf, 0.0, -0.0, np.nan, -2.0, 1e-30, -1e-30], np.float32)
    got = getattr(mx.nd, name)(mx.nd.array(sp)).asnumpy()
    with np.errstate(all="ignore"):
        want = ref(sp.astype(np.float64)).astype(np.float32)
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    assert np.array_equal(np.signbit(got[2:4]), np.signbit(want[2:4]))
    if one is not None:   # the pole and below it
        got = getattr(mx.nd, name)(mx.nd.array([one, one - 0.5])).asnumpy()
        assert got[0] == -np.inf and np.isnan(got[1])


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
def test_binary_forward(name, dtype, rng):
    if name == "hypot" and np.dtype(dtype).kind == "i":
        pytest.skip("hypot is defined for floats")
    ref = BINARY[name]
    a, b = _pair(rng, name, (3, 4), (3, 4), dtype)
    exp = np.asarray(ref(a.astype(np.float64), b.astype(np.float64))).astype(dtype)
    check_forward(EW_NAME.get(name, "_" + name), [a, b], {}, exp)
    a2, b2 = _pair(rng, name, (2, 1, 4), (3, 1), dtype)
    exp2 = np.asarray(ref(a2.astype(np.float64), b2.astype(np.float64))).astype(dtype)
    check_forward("broadcast_" + name, [a2, b2], {}, exp2)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "mod", "power", "maximum", "minimum", "hypot"])
def test_binary_grad(name, rng):
    a, b = _pair(rng, name, (2, 3), (2, 3), np.float64)
    check_grad(EW_NAME.get(name, "_" + name), [a, b], {}, rng)
    a, b = _pair(rng, name, (2, 3), (1, 3), np.float64)
    check_grad("broadcast_" + name, [a, b], {}, rng)


SCALAR = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": lambda x, s: np.mod(x, s), "_rmod_scalar": lambda x, s: np.mod(s, x),
    "_power_scalar": lambda x, s: x ** s, "_rpower_scalar": lambda x, s: s ** x,
    "_maximum_scalar": np.maximum, "_minimum_scalar": np.minimum, "_hypot_scalar": np.hypot,
    "_equal_scalar": np.equal, "_not_equal_scalar": np.not_equal, "_greater_scalar": np.greater,
    "_greater_equal_scalar": np.greater_equal, "_lesser_scalar": np.less,
    "_lesser_equal_scalar": np.less_equal, "_logical_and_scalar": np.logical_and,
    "_logical_or_scalar": np.logical_or, "_logical_xor_scalar": np.logical_xor,
}


@pytest.mark.parametrize("name", sorted(SCALAR))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scalar_forward(name, dtype, rng):
    x = rng.uniform(0.5, 3, size=(3, 4)).astype(dtype)
    s = 1.75
    exp = np.asarray(SCALAR[name](x.astype(np.float64), s)).astype(dtype)
    check_forward(name, [x], {"scalar": s}, exp)


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_grad(name, rng):
    x = rng.uniform(0.5, 3, size=(2, 3))
    check_grad(name, [x], {"scalar": 1.75}, rng)


def test_power_scalar_two_grad(rng):
    """x ** 2's gradient takes x itself for x ** 1 (its own branch of the rule)"""
    check_grad("_power_scalar", [rng.uniform(-3, 3, size=(2, 3))], {"scalar": 2.0}, rng)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_power_scalar_two_is_the_square(dtype, rng):
    """x ** 2 takes the multiply (the kernel's special case): bit for bit x * x, which is what
    powf/pow give, over a range that overflows, underflows to subnormals and holds -0, inf, nan;
    through the operator, the ``**`` front end and out=. Other exponents still go through pow."""
    info = np.finfo(dtype)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = np.concatenate([rng.standard_normal(100_000) * 10.0 ** rng.uniform(-30, 30, 100_000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max),
                             float(info.tiny), float(np.sqrt(info.max)) * 1.5]]).astype(dtype)
        want = x * x
    got = (mx.nd.array(x, dtype=dtype) ** 2).asnumpy()
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}")[~np.isnan(want)],
                                  want.view(f"u{want.itemsize}")[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()
    out = mx.nd.zeros(x.shape, dtype=dtype)
    mx.nd._power_scalar(mx.nd.array(x, dtype=dtype), scalar=2.0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), got)
    y = rng.uniform(0.5, 3, size=1000).astype(dtype)
    for s in (3.0, 0.5, -2.0, 2.5):
        np.testing.assert_allclose((mx.nd.array(y, dtype=dtype) ** s).asnumpy(),
                                   (y.astype(np.float64) ** s).astype(dtype),
                                   rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_int_scalar_truncates_like_mxnet():
    # MXNet 1.9.1: mx.nd.array([1,2,3], dtype='int32') + 2.5 -> [3, 4, 5]
    x = mx.nd.array([1, 2, 3], dtype="int32")
    assert (x + 2.5).asnumpy().tolist() == [3, 4, 5]


@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32,
                                 np.int64, np.bool_])
@pytest.mark.parametrize("dst", [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int32,
                                 np.int64, np.bool_])
def test_cast(src, dst, rng):
    x = (rng.uniform(0, 100, size=(2, 5))).astype(src)
    check_forward("cast", [x], {"dtype": np.dtype(dst).name}, x.astype(dst))


def test_cast_grad(rng):
    check_grad("cast", [rng.standard_normal((2, 3))], {"dtype": "float64"}, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_clip(dtype, rng):
    x = (rng.uniform(-5, 5, size=(3, 4))).astype(dtype)
    check_forward("clip", [x], {"a_min": -1, "a_max": 2}, np.clip(x, -1, 2).astype(dtype))
    check_grad("clip", [rng.uniform(-5, 5, size=(2, 3))], {"a_min": -1.0, "a_max": 2.0}, rng)


def test_where(rng):
    c = (rng.uniform(size=(3, 4)) > 0.5).astype(np.float32)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    check_forward("where", [c, x, y], {}, np.where(c != 0, x, y))
    row = np.array([1, 0, 1], np.float32)
    check_forward("where", [row, x, y], {}, np.where(row[:, None] != 0, x, y))
    check_grad("where", [c.astype(np.float64), x, y], {}, rng, wrt=[1, 2])


def test_shape_mismatch_is_clear():
    with pytest.raises(ValueError, match="elemwise_add"):
        mx.nd.elemwise_add(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))
    with pytest.raises(ValueError, match="broadcast_add"):
        mx.nd.broadcast_add(mx.nd.ones((2, 3)), mx.nd.ones((4,)))


def test_python_operators(rng):
    a = rng.uniform(1, 2, size=(2, 3)).astype(np.float32)
    b = rng.uniform(1, 2, size=(3,)).astype(np.float32)
    x, y = mx.nd.array(a), mx.nd.array(b)
    for got, exp in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
                     (x % y, np.mod(a, b)), (x ** y, a ** b), (2 - x, 2 - a), (2 / x, 2 / a),
                     (x // y, np.floor_divide(a, b)), (-x, -a), (abs(-x), a), (2 ** x, 2 ** a),
                     (x > y, a > b), (x <= 1.5, a <= 1.5), (x == x, np.ones_like(a))]:
        np.testing.assert_allclose(got.asnumpy(), np.asarray(exp, np.float32), rtol=1e-5)
    z = x.copy()
    z += 1
    z *= y
    np.testing.assert_allclose(z.asnumpy(), (a + 1) * b, rtol=1e-6)
    xi = mx.nd.array([7, -7, 8], dtype="int32")
    assert (xi // 2).asnumpy().tolist() == [3, -4, 4]


def test_out_aliasing_a_non_inplace_op_is_safe():
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    mx.nd.broadcast_add(x, x, out=x)
    assert x.asnumpy().tolist() == [[0, 2, 4], [6, 8, 10]]


def test_unsupported_dtype_is_a_clear_error():
    with pytest.raises(MXNetError, match="hypot"):
        mx.nd.broadcast_hypot(mx.nd.ones((2,), dtype="bool"), mx.nd.ones((2,), dtype="bool")).wait_to_read()


def test_internal_names_and_copies(rng):
    a, b = rng.uniform(1, 2, size=(2, 3)), rng.uniform(1, 2, size=(2, 3))
    for name, ref in [("_mod", np.mod), ("_power", np.power), ("_maximum", np.maximum),
                      ("_minimum", np.minimum), ("_hypot", np.hypot), ("_equal", np.equal),
                      ("_not_equal", np.not_equal), ("_greater", np.greater),
                      ("_greater_equal", np.greater_equal), ("_lesser", np.less),
                      ("_lesser_equal", np.less_equal), ("_logical_and", np.logical_and),
                      ("_logical_or", np.logical_or), ("_logical_xor", np.logical_xor)]:
        check_forward(name, [a, b], {}, ref(a, b).astype(np.float64))
    check_forward("_copy", [a], {}, a)
    check_grad("_copy", [a], {}, rng)
    out = mx.nd.zeros((2, 3), dtype="float64")
    mx.nd._copyto(mx.nd.array(a, dtype="float64"), out=out)
    np.testing.assert_array_equal(out.asnumpy(), a)


UNARY_BACKWARD = {
    "_backward_tanh": lambda g, y: g * (1 - y * y),
    "_backward_sigmoid": lambda g, y: g * y * (1 - y),
    "_backward_relu": lambda g, y: g * (y > 0),
    "_backward_sqrt": lambda g, y: g / (2 * y),
}


@pytest.mark.parametrize("name", sorted(UNARY_BACKWARD))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_backward_forward(name, dtype, rng):
    g = rng.uniform(-2, 2, (3, 4)).astype(dtype)
    y = rng.uniform(0.1, 0.9, (3, 4)).astype(dtype)
    if name == "_backward_relu":
        y = rng.uniform(-1, 1, (3, 4)).astype(dtype)
    expected = UNARY_BACKWARD[name](g.astype(np.float64), y.astype(np.float64)).astype(dtype)
    check_forward(name, [g, y], {}, expected)


@pytest.mark.parametrize("name", sorted(UNARY_BACKWARD))
def test_unary_backward_grad(name, rng):
    g = rng.uniform(-2, 2, (2, 3))
    y = rng.uniform(0.2, 0.8, (2, 3))
    check_grad(name, [g, y], {}, rng, rtol=1e-5, atol=1e-7)


def test_second_order_through_fused_unary_backward():
    xn = np.array([-0.7, 0.1, 1.3])
    x = mx.nd.array(xn, dtype=np.float64)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.tanh(x) + mx.nd.sigmoid(x)
        dy = mx.autograd.grad(y, [x], create_graph=True)[0]
    dy.backward()
    t, s = np.tanh(xn), 1 / (1 + np.exp(-xn))
    np.testing.assert_allclose(dy.asnumpy(), (1 - t * t) + s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(x.grad.asnumpy(), -2 * t * (1 - t * t) + s * (1 - s) * (1 - 2 * s),
                               rtol=1e-10)


def test_erfinv_matches_mxnet():
    """Values from MXNet 1.9.1 (mx.nd.erfinv, float64), the tails and edges; the gradient is
    sqrt(pi)/2 * exp(erfinv(x)^2) (MXNet's float32 gradients at the same points). MXNet's
    float64 erfinv is a float-grade approximation (5e-4 off at -0.999999, where scipy and mxc
    give -3.4589107); mxc is within 2e-16 of scipy (test_unary_forward)."""
    x = np.array([-0.999999, -0.7, -0.3, 0.2, 0.5, 0.9, 0.99999])
    mxnet = [-3.45707473, -0.73286906, -0.27246273, 0.17914346, 0.47693628, 1.16308707, 3.12320577]
    np.testing.assert_allclose(mx.nd.erfinv(mx.nd.array(x, dtype="float64")).asnumpy(), mxnet,
                               rtol=6e-4)
    edge = mx.nd.erfinv(mx.nd.array([-1, 1, 1.5, -2, 0], dtype="float32")).asnumpy()
    assert edge[0] == -np.inf and edge[1] == np.inf and np.isnan(edge[2:4]).all() and edge[4] == 0
    a = mx.nd.array(x.astype(np.float32))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.erfinv(a)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [1.3739059e+05, 1.5163633e+00, 9.5452040e-01,
                                                  9.1512942e-01, 1.1125849e+00, 3.4280424e+00,
                                                  1.5269785e+04], rtol=2e-3)


def test_gamma_gradient_at_the_poles_is_mxnets():
    # MXNet's psi returns its float maximum at 0, -1, -2, ...: gamma's gradient there is
    # gamma(x) * inf (+inf at 0, nan where gamma is nan), gammaln's +inf (MXNet 1.9.1's values)
    x = mx.nd.array([0, -1, -2, 0.5, -0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gamma(x)
    y.backward()
    g = x.grad.asnumpy()
    assert g[0] == np.inf and np.isnan(g[1]) and np.isnan(g[2])
    np.testing.assert_allclose(g[3:], [-3.480232, -0.12935339], rtol=1e-5)
    x = mx.nd.array([0, -1, 2])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gammaln(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [np.inf, np.inf, 0.42278433], rtol=1e-5)


def test_identity_with_attr_like_rhs_copies_lhs_and_constrains_shape():
    """MXNet's internal shape constraint: lhs's values, rhs's shape and dtype, gradient to lhs
    only (rhs gets zeros)"""
    x = mx.nd.array([[1.0, -2.0, 3.0]])
    y = mx.nd.array([[7.0, 8.0, 9.0]])
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = mx.nd._identity_with_attr_like_rhs(x, y)
    z.backward(mx.nd.array([[0.5, 1.5, 2.5]]))
    np.testing.assert_array_equal(z.asnumpy(), [[1, -2, 3]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0.5, 1.5, 2.5]])
    np.testing.assert_array_equal(y.grad.asnumpy(), [[0, 0, 0]])
    with pytest.raises(MXNetError):
        mx.nd._internal._identity_with_attr_like_rhs(x, mx.nd.zeros((3, 1)))

"""The math of the CUDA elementwise and broadcast kernels, run on the CPU: g++ compiles
mxc/ops/cuda/elemwise.cu and broadcast.cu (with mxc's headers inlined by the loader, exactly
the text NVRTC compiles) against an emulation of CUDA's built-ins (emu/cuda_fp16.h); a driver
runs each kernel over an odd grid (grid-stride loops, vector bodies and their tails) and the
results are compared with numpy and MXNet's rules. The kernels with block reductions run in
their own families' tests (test_emulated_reduce.py, test_emulated_gpu_ops.py)."""
import ctypes
import shutil

import numpy as np
import pytest

from ._emu import build, cuda_loader


pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

KERNELS = [  # (C name, template instance, signature kind)
    ("u_exp_f", "mxc_unary<mxc::op_exp, float>", "u:float"),
    ("u_rint_f", "mxc_unary<mxc::op_rint, float>", "u:float"),
    ("u_sigmoid_d", "mxc_unary<mxc::op_sigmoid, double>", "u:double"),
    ("u_relu_f", "mxc_unary<mxc::op_relu, float>", "u:float"),
    ("u_sqrt_i32", "mxc_unary<mxc::op_sqrt, int>", "u:int"),
    ("u_neg_i8", "mxc_unary<mxc::op_negative, signed char>", "u:signed char"),
    ("u_exp_h", "mxc_unary<mxc::op_exp, __half>", "u:__half"),
    ("u_erfinv_f", "mxc_unary<mxc::op_erfinv, float>", "u:float"),
    ("u_erfinv_d", "mxc_unary<mxc::op_erfinv, double>", "u:double"),
    ("u_erfinv_i32", "mxc_unary<mxc::op_erfinv, int>", "u:int"),
    ("b_add_f", "mxc_binary<mxc::op_add, float>", "b:float"),
    ("b_mod_f", "mxc_binary<mxc::op_mod, float>", "b:float"),
    ("b_div_i32", "mxc_binary<mxc::op_div, int>", "b:int"),
    ("b_mod_i32", "mxc_binary<mxc::op_mod, int>", "b:int"),
    ("b_pow_i32", "mxc_binary<mxc::op_power, int>", "b:int"),
    ("b_max_d", "mxc_binary<mxc::op_maximum, double>", "b:double"),
    ("s_sub_f", "mxc_scalar<mxc::op_sub, float>", "s:float"),
    ("s_add_i32", "mxc_scalar<mxc::op_add, int>", "s:int"),
    ("c_f_i8", "mxc_cast<float, signed char>", "c:float:signed char"),
    ("clip_f", "mxc_clip<float>", "clip:float"),
    ("where_f", "mxc_where<float, float>", "where:float"),
]
BCAST = [("bc_add_f", "mxc_bcast_binary<mxc::op_add, float>"),
         ("bc_greater_d", "mxc_bcast_binary<mxc::op_greater, double>")]

GRID, BLOCK = 3, 5   # 15 threads: every loop strides and leaves tails


def _driver():
    lines = ["template <class F> static void run(F f) { mxc_emu::run(%d, %d, f); }"
             % (GRID, BLOCK)]
    for cname, inst, kind in KERNELS:
        parts = kind.split(":")
        T = parts[1]
        if parts[0] == "u":
            lines.append('extern "C" void %s(const %s *x, %s *y, long long n) { run([&] { %s(x, y, n); }); }'
                         % (cname, T, T, inst))
        elif parts[0] == "b":
            lines.append('extern "C" void %s(const %s *a, const %s *b, %s *y, long long n) { run([&] { %s(a, b, y, n); }); }'
                         % (cname, T, T, T, inst))
        elif parts[0] == "s":
            lines.append('extern "C" void %s(const %s *x, %s *y, long long n, double s, int r) { run([&] { %s(x, y, n, s, r); }); }'
                         % (cname, T, T, inst))
        elif parts[0] == "c":
            lines.append('extern "C" void %s(const %s *x, %s *y, long long n) { run([&] { %s(x, y, n); }); }'
                         % (cname, T, parts[2], inst))
        elif parts[0] == "clip":
            lines.append('extern "C" void %s(const float *x, float *y, long long n, double lo, double hi) { run([&] { %s(x, y, n, lo, hi); }); }'
                         % (cname, inst))
        elif parts[0] == "where":
            lines.append('extern "C" void %s(const float *c, const float *x, const float *y, float *o, long long n, long long inner) { run([&] { %s(c, x, y, o, n, inner); }); }'
                         % (cname, inst))
    for cname, inst in BCAST:
        T = "double" if inst.endswith("double>") else "float"
        lines.append('extern "C" void %s(const %s *a, const %s *b, %s *y, long long n, const mxc::bcast2 *m) { run([&] { %s(a, b, y, n, *m); }); }'
                     % (cname, T, T, T, inst))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    L = cuda_loader()
    return build(tmp_path_factory, "kernels", L.source("elemwise") + "\n" +
                 L.source("broadcast").split("using namespace mxc;", 1)[1] + "\n" + _driver())


def _p(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def _run(lib, name, *args):
    getattr(lib, name)(*[_p(a) if isinstance(a, np.ndarray) else a for a in args])


N = 37   # not a multiple of any vector width


def test_unary(lib):
    rng = np.random.RandomState(0)
    x = rng.uniform(-3, 3, N).astype(np.float32)
    for name, ref, rtol in [("u_exp_f", np.exp(x), 1e-6), ("u_relu_f", np.maximum(x, 0), 0)]:
        y = np.zeros_like(x)
        _run(lib, name, x, y, ctypes.c_longlong(N))
        np.testing.assert_allclose(y, ref, rtol=rtol)
    r = np.array([2.5, -2.5, 3.5, 0.5, -0.5, 1.2], np.float32)
    y = np.zeros_like(r)
    _run(lib, "u_rint_f", r, y, ctypes.c_longlong(r.size))
    np.testing.assert_array_equal(y, [2, -3, 3, 0, -1, 1])      # MXNet: ties toward -inf
    xd = x.astype(np.float64)
    yd = np.zeros_like(xd)
    _run(lib, "u_sigmoid_d", xd, yd, ctypes.c_longlong(N))
    np.testing.assert_allclose(yd, 1 / (1 + np.exp(-xd)), rtol=1e-15)
    xi = np.array([4, 9, 10, -1, 0], np.int32)
    yi = np.zeros_like(xi)
    _run(lib, "u_sqrt_i32", xi, yi, ctypes.c_longlong(xi.size))
    np.testing.assert_array_equal(yi, [2, 3, 3, np.iinfo(np.int32).min, 0])
    x8 = np.array([-128, 5, -7, 127], np.int8)
    y8 = np.zeros_like(x8)
    _run(lib, "u_neg_i8", x8, y8, ctypes.c_longlong(x8.size))
    np.testing.assert_array_equal(y8, [-128, -5, 7, -127])
    xh = x.astype(np.float16)
    yh = np.zeros_like(xh)
    _run(lib, "u_exp_h", xh, yh, ctypes.c_longlong(N))
    np.testing.assert_array_equal(yh, np.exp(xh.astype(np.float32)).astype(np.float16))


def test_unary_math_is_the_cpus(lib):
    """The GPU functors expand the CPU's definitions (kernels/unary_math.h): erfinv's values
    on both devices are the same bits, tails, +-1 and out-of-range included."""
    import mxc as mx
    x = np.concatenate([np.linspace(-0.999, 0.999, 31), [-1, 1, 1.5, np.nan, 0, 1 - 1e-12]])
    for name, dt in (("u_erfinv_f", np.float32), ("u_erfinv_d", np.float64),
                     ("u_erfinv_i32", np.int32)):
        xs = (x * 3 if dt is np.int32 else x).astype(dt) if dt is not np.int32 else \
            np.array([-1, 0, 1, 2], np.int32)
        y = np.zeros_like(xs)
        _run(lib, name, xs, y, ctypes.c_longlong(xs.size))
        np.testing.assert_array_equal(y, mx.nd.erfinv(mx.nd.array(xs, dtype=dt)).asnumpy())


def test_binary(lib):
    rng = np.random.RandomState(1)
    a = rng.uniform(-5, 5, N).astype(np.float32)
    b = rng.uniform(-5, 5, N).astype(np.float32)
    b[3] = 0
    y = np.zeros_like(a)
    _run(lib, "b_add_f", a, b, y, ctypes.c_longlong(N))
    np.testing.assert_array_equal(y, a + b)
    _run(lib, "b_mod_f", a, b, y, ctypes.c_longlong(N))
    with np.errstate(invalid="ignore"):
        ref = np.mod(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    ref[3] = 0                                                      # x mod 0 = 0
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)
    ai = np.array([7, -7, 7, -7, 5, -2147483648], np.int32)
    bi = np.array([2, 2, -2, 0, 3, -1], np.int32)
    yi = np.zeros_like(ai)
    _run(lib, "b_div_i32", ai, bi, yi, ctypes.c_longlong(ai.size))
    np.testing.assert_array_equal(yi, [3, -3, -3, 0, 1, -2147483648])
    _run(lib, "b_mod_i32", ai, bi, yi, ctypes.c_longlong(ai.size))
    np.testing.assert_array_equal(yi, [1, 1, -1, 0, 2, 0])
    pa, pb = np.array([2, 100, 2, 3], np.int32), np.array([10, 100, -1, 3], np.int32)
    yp = np.zeros_like(pa)
    _run(lib, "b_pow_i32", pa, pb, yp, ctypes.c_longlong(4))
    np.testing.assert_array_equal(yp, [1024, np.iinfo(np.int32).min, 0, 27])
    da = np.array([1.0, np.nan, 2.0, 3.0])
    db = np.array([2.0, 1.0, np.nan, 1.0])
    yd = np.zeros_like(da)
    _run(lib, "b_max_d", da, db, yd, ctypes.c_longlong(4))
    np.testing.assert_array_equal(yd, [2.0, np.nan, np.nan, 3.0])    # nan in either propagates


def test_scalar_cast_clip_where(lib):
    x = np.linspace(-3, 3, N).astype(np.float32)
    y = np.zeros_like(x)
    _run(lib, "s_sub_f", x, y, ctypes.c_longlong(N), ctypes.c_double(1.5), ctypes.c_int(1))
    np.testing.assert_array_equal(y, np.float32(1.5) - x)
    xi = np.arange(N, dtype=np.int32)
    yi = np.zeros_like(xi)
    _run(lib, "s_add_i32", xi, yi, ctypes.c_longlong(N), ctypes.c_double(2.7), ctypes.c_int(0))
    np.testing.assert_array_equal(yi, xi + 2)                       # scalar cast to int32 first
    c = np.array([300.0, -1.7, 1e10, np.nan, 5.9], np.float32)
    y8 = np.zeros(5, np.int8)
    _run(lib, "c_f_i8", c, y8, ctypes.c_longlong(5))
    np.testing.assert_array_equal(y8, [44, -1, 0, 0, 5])            # MXNet's x86 casts
    _run(lib, "clip_f", x, y, ctypes.c_longlong(N), ctypes.c_double(-1), ctypes.c_double(2))
    np.testing.assert_array_equal(y, np.clip(x, -1, 2))
    cond = (np.arange(N) % 3 == 0).astype(np.float32)
    o = np.zeros_like(x)
    _run(lib, "where_f", cond, x, -x, o, ctypes.c_longlong(N), ctypes.c_longlong(1))
    np.testing.assert_array_equal(o, np.where(cond != 0, x, -x))


def test_broadcast(lib):
    from mxc.ops.cuda import _launch as S
    rng = np.random.RandomState(2)
    for ashape, bshape in [((4, 1, 3), (1, 5, 3)), ((2, 3, 4), (4,)), ((6, 1), (1, 7)),
                           ((3, 5), (3, 5))]:
        a = rng.randn(*ashape).astype(np.float32)
        b = rng.randn(*bshape).astype(np.float32)
        out_shape = np.broadcast_shapes(ashape, bshape)
        shp, (sa, sb) = S.collapse(out_shape, S.bcast_strides(ashape, out_shape),
                                   S.bcast_strides(bshape, out_shape))
        m = np.array([len(shp)] + S.pad(shp, 1) + S.pad(sa) + S.pad(sb), np.int64)
        y = np.zeros(out_shape, np.float32)
        _run(lib, "bc_add_f", a, b, y, ctypes.c_longlong(y.size), m)
        np.testing.assert_array_equal(y, a + b)
        ad, bd = a.astype(np.float64), b.astype(np.float64)
        yd = np.zeros(out_shape)
        _run(lib, "bc_greater_d", ad, bd, yd, ctypes.c_longlong(yd.size), m)
        np.testing.assert_array_equal(yd, (ad > bd).astype(np.float64))


"""The GPU launches of the indexing, LeakyReLU, softmax (length, dtype), sampling, optimizer
(mp_*, preloaded, adamw), add_n, slice-assignment and topk-mask operators, run on the CPU: the
spec that mxc.ops.cuda.launch_spec builds for the operator's CPU kernel call is executed
launch by launch (with its workspace and its device-side index check) by g++-compiled kernels
(tests/ops/cuda/_emu.py Launcher), and the results are compared with numpy references or with
mxc's CPU kernels. Kernels built on block reductions (prelu's gamma gradient, softmax rows) run
with a block's threads meeting as on a device (emu/mxc_emu_threads.h)."""
import shutil

import numpy as np
import pytest

from ._emu import Launcher, run_spec

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S
from mxc.ops.cuda._launch import instantiations, scalar_bits

NAMES = {
    "gather": ["mxc_pick<float, float>", "mxc_pick<int, long long>",
               "mxc_pick_grad<float, float>", "mxc_pick_grad<int, int>",
               "mxc_gather_nd<double, int>", "mxc_gather_nd<float, float>",
               "mxc_scatter_nd<float, float, true>", "mxc_scatter_nd<double, int, false>",
               "mxc_take<float, double>", "mxc_take<float, int>"],
    "init": ["mxc_fill<float>", "mxc_fill<double>"],
    "activation": ["mxc_leaky_relu<float>", "mxc_leaky_relu_grad<float>",
                   "mxc_leaky_relu<double>", "mxc_leaky_relu_grad<double>",
                   "mxc_prelu_gamma_grad<double>"],
    "elemwise": ["mxc_add_n<float>", "mxc_add_n<int>", "mxc_cast<float, double>",
                 "mxc_cast<__half, double>", "mxc_cast<double, double>"],
    "random": ["mxc_random32<float, 1>", "mxc_random64<0>", "mxc_random_reject<double, 0>",
               "mxc_random_reject<float, 1>", "mxc_random_reject<double, 2>",
               "mxc_random_reject<double, 3>", "mxc_multinomial<float, int>",
               "mxc_multinomial<double, double>", "mxc_multinomial_grad<float, int>"],
    "softmax": ["mxc_softmax_cols<false, float, double, int>",
                "mxc_softmax_cols<true, double, double, long long>",
                "mxc_softmax_cols<false, float, float, int>",
                "mxc_softmax_grad<false, double, float, int>",
                "mxc_softmax_grad<true, float, float, long long>",
                "mxc_softmax_rows<true, double, double, long long>",
                "mxc_softmax_rows<false, float, float, int>"],
    "optimizer_ops": ["mxc_sgd_mom_update<float>", "mxc_mp_sgd_update<__half>",
                      "mxc_mp_sgd_mom_update<__half>", "mxc_mp_nag_mom_update<__half>",
                      "mxc_adamw_update<float>", "mxc_mp_adamw_update<__half>",
                      "mxc_lamb1_update<float>", "mxc_mp_lamb1_update<__half>",
                      "mxc_lamb2_update<float>", "mxc_mp_lamb2_update<__half>",
                      "mxc_adagrad_update<double>"],
    "ordering": ["mxc_sort_prepare<float>", "mxc_bitonic_step", "mxc_sort_mask<float>"],
    "shape": ["mxc_scatter_map<unsigned int>", "mxc_scatter_value<unsigned int>",
              "mxc_scatter_value<unsigned char>"],
}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    # families whose helpers would clash in one translation unit get their own library
    first = {k: NAMES[k] for k in ("gather", "init", "activation", "shape", "ordering")}
    second = {k: NAMES[k] for k in ("elemwise", "random", "softmax", "optimizer_ops")}
    libs = [Launcher(tmp_path_factory, "ops1", first), Launcher(tmp_path_factory, "ops2", second)]

    class Both:
        def run_spec(self, spec, ins, outs, **kw):
            # each launch goes to the library that holds its kernel
            def run_launch(launch, ws):
                lib = next(L for L in libs if (launch["family"], launch["name"]) in L.fn_of)
                lib.run(launch, ins, outs, ws, **kw)
            return run_spec(spec, ins, outs, run_launch)
    return Both()


def _spec(op, family, kernel, ins, outs, iattr=None, fattr=None, attrs=None):
    spec = S.launch_spec(op, attrs or {}, ins, outs, family=family, kernel=kernel, iattr=iattr,
                         fattr=fattr)
    assert spec is not None, (op, kernel)
    for launch in spec.get("launches", [spec]):
        assert launch["name"] in instantiations(launch["family"]), launch["name"]
        assert launch["name"] in NAMES[launch["family"]], "add %s to NAMES" % launch["name"]
    return spec


def _cpu_index(v):
    """The CPU kernels' reading of an index value: truncation; NaN and huge values are 'bad'."""
    v = np.asarray(v, np.float64)
    bad = ~np.isfinite(v) | (np.abs(v) >= 4.6e18)
    return np.where(bad, 0, np.trunc(np.where(bad, 0, v))).astype(np.int64), bad


def _fix(v, n, mode):
    j, bad = _cpu_index(v)
    j = np.mod(j, n) if mode == 1 else np.clip(j, 0, n - 1)
    return np.where(bad, 0, j)


# ---- pick / take_along_axis / _backward_pick ---------------------------------------------------
@pytest.mark.parametrize("mode", [0, 1])
def test_pick_and_take_along(emu, mode):
    rng = np.random.RandomState(0)
    x = rng.randn(3, 5, 4).astype(np.float32)
    for k in (1, 3):
        idx = rng.uniform(-7, 12, (3, k, 4)).astype(np.float32)
        idx[0, 0, 0], idx[1, 0, 1] = np.nan, 1e30
        y = np.zeros((3, k, 4), np.float32)
        spec = _spec("pick", "gather", "take_along", [x, idx], [y], (3, 5, 4, k, mode))
        assert emu.run_spec(spec, [x, idx], [y], grid=3, block=5) is None
        want = np.take_along_axis(x, _fix(idx, 5, mode), axis=1)
        np.testing.assert_array_equal(y, want)
    # integer data, int64 indices
    xi = rng.randint(-100, 100, (2, 6, 1)).astype(np.int32)
    ii = rng.randint(-9, 9, (2, 2, 1)).astype(np.int64)
    yi = np.zeros((2, 2, 1), np.int32)
    spec = _spec("_take_along_axis", "gather", "take_along", [xi, ii], [yi], (2, 6, 1, 2, mode))
    emu.run_spec(spec, [xi, ii], [yi], grid=2, block=3)
    np.testing.assert_array_equal(yi, np.take_along_axis(xi, _fix(ii, 6, mode), axis=1))


def test_pick_from_empty_axis_fails_with_the_cpu_message(emu):
    x, idx, y = np.zeros((2, 0, 3), np.float32), np.zeros((2, 1, 3), np.float32), \
        np.zeros((2, 1, 3), np.float32)
    spec = _spec("pick", "gather", "take_along", [x, idx], [y], (2, 0, 3, 1, 0))
    assert "axis of size 0" in emu.run_spec(spec, [x, idx], [y])


@pytest.mark.parametrize("mode", [0, 1])
def test_put_along_adds_duplicates_and_zeroes(emu, mode):
    rng = np.random.RandomState(1)
    for dt, it, name in ((np.float32, np.float32, "float"), (np.int32, np.int32, "int")):
        k = 4
        g = rng.randint(-5, 5, (2, k, 3)).astype(dt)
        idx = rng.randint(-3, 8, (2, k, 3)).astype(it)       # duplicates and out-of-range
        y = np.full((2, 5, 3), 77, dt)                       # the kernel must zero it
        spec = _spec("_backward_pick", "gather", "put_along", [g, idx, y], [y],
                     (2, 5, 3, k, mode))
        emu.run_spec(spec, [g, idx, y], [y], grid=2, block=3)
        want = np.zeros((2, 5, 3), dt)
        j = _fix(idx, 5, mode)
        for p in range(2):
            for jj in range(k):
                for q in range(3):
                    want[p, j[p, jj, q], q] += g[p, jj, q]
        np.testing.assert_array_equal(y, want)


# ---- gather_nd / scatter_nd ---------------------------------------------------------------------
def test_gather_nd_with_negative_indices_and_its_check(emu):
    rng = np.random.RandomState(2)
    x = rng.randn(4, 3, 2)
    idx = np.array([[0, -1, 3, -4], [2, 0, -3, 1]], np.int32)       # M = 2, N = 4
    y = np.zeros((4, 2))
    spec = _spec("gather_nd", "gather", "gather_nd", [x, idx], [y], (2,))
    assert emu.run_spec(spec, [x, idx], [y], grid=2, block=3) is None
    np.testing.assert_array_equal(y, x[idx[0] % 4, idx[1] % 3])
    bad = idx.copy()
    bad[1, 2] = 3                                                   # dimension 1 has size 3
    msg = emu.run_spec(spec, [x, bad], [y])
    assert msg == "gather_nd: IndexError: index 3 is out of bounds for dimension 1 with size 3"
    fl = np.array([[0.5, -0.5, np.nan]], np.float32)
    spec = _spec("gather_nd", "gather", "gather_nd", [x.astype(np.float32), fl],
                 [np.zeros((3, 3, 2), np.float32)], (1,))
    assert "NaN or too large" in spec["check"](np, [x, fl])
    fl[0, 2] = -4.9                                                  # truncates to -4: in range
    assert spec["check"](np, [x, fl]) is None


def test_scatter_nd_set_and_dst(emu):
    rng = np.random.RandomState(3)
    data = rng.randn(3, 2)
    idx = np.array([[0, 3, -1]], np.int32)                         # M = 1, N = 3
    y = np.full((5, 2), 9.0)
    spec = _spec("scatter_nd", "gather", "scatter_nd", [data, idx], [y], (1, 0, 0, 0))
    assert spec["launches"][0]["name"] == "mxc_fill<double>"       # zeros first, as the CPU
    emu.run_spec(spec, [data, idx], [y], grid=2, block=3)
    want = np.zeros((5, 2))
    want[[0, 3, 4]] = data
    np.testing.assert_array_equal(y, want)
    # _scatter_set_nd: (dst, data, idx), output = dst's buffer
    dst = rng.randn(5, 2)
    spec = _spec("_scatter_set_nd", "gather", "scatter_nd", [dst, data, idx], [dst],
                 (1, 0, 1, 0))
    want = dst.copy()
    want[[0, 3, 4]] = data
    emu.run_spec(spec, [dst, data, idx], [dst])
    np.testing.assert_array_equal(dst, want)
    assert "index 5 is out of bounds for dimension 0 with size 5" in emu.run_spec(
        spec, [dst, data, np.array([[5, 0, 0]], np.int32)], [dst])


def test_embedding_gradient_adds_clipped_rows(emu):
    rng = np.random.RandomState(4)
    og = rng.randn(6, 3).astype(np.float32)
    data = np.array([[1, 1, -2, 9, 0.7, np.nan]], np.float32)      # clip: -2 -> 0, 9 -> 3
    dw = np.full((4, 3), 5.0, np.float32)
    spec = _spec("_backward_Embedding", "gather", "scatter_nd", [og, data], [dw], (1, 1, 0, 1))
    assert "check" not in spec                                      # clipped: nothing to raise
    emu.run_spec(spec, [og, data], [dw], grid=2, block=4)
    want = np.zeros((4, 3), np.float32)
    for r, v in enumerate(data[0]):
        want[_fix(v, 4, 0)] += og[r]
    np.testing.assert_allclose(dw, want, rtol=1e-6)


def test_scatter_rows(emu):
    rng = np.random.RandomState(18)
    dst = rng.randn(5, 2, 2)
    idx = np.array([4, -5, 2], np.int32)
    val = rng.randn(3, 2, 2)
    want = dst.copy()
    want[idx] = val
    spec = _spec("_scatter_set_rows", "shape", "scatter_rows", [dst, idx, val], [dst])
    assert emu.run_spec(spec, [dst, idx, val], [dst], grid=2, block=3) is None
    np.testing.assert_array_equal(dst, want)
    msg = emu.run_spec(spec, [dst, np.array([5, 0, 0], np.int32), val], [dst])
    assert msg == "scatter_rows: index 5 is out of bounds for axis 0 with size 5"


# ---- take --------------------------------------------------------------------------------------
def test_take_raise_checks_then_takes(emu):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([3.9, 0, -0.5, 2], np.float64)                  # truncation: all in range
    y = np.zeros((4, 3), np.float32)
    spec = _spec("take", "shape", "take", [x, idx], [y], (0, 2))
    assert emu.run_spec(spec, [x, idx], [y], grid=2, block=5) is None
    np.testing.assert_array_equal(y, x[[3, 0, 0, 2]])
    for v, shown in ((4.0, "4"), (-1.0, "-1"), (np.nan, "nan")):
        bad = idx.copy()
        bad[1] = v
        msg = emu.run_spec(spec, [x, bad], [y])
        assert msg.startswith("take: index " + shown), msg
        assert "axis 0 with size 4" in msg
    # clip and wrap take the bad index to 0, as the CPU
    ii = np.array([-1, 7, 2], np.int32)
    y3 = np.zeros((3, 3), np.float32)
    spec = _spec("take", "shape", "take", [x, ii], [y3], (0, 1))
    emu.run_spec(spec, [x, ii], [y3])
    np.testing.assert_array_equal(y3, x[[3, 3, 2]])


# ---- LeakyReLU -----------------------------------------------------------------------------------
SELU_A, SELU_L = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _erf(v):
    import math
    return np.vectorize(math.erf)(v)


@pytest.mark.parametrize("t", ["xelu", "elu", "selu", "gelu"])
def test_leaky_forward_and_backward(emu, t):
    rng = np.random.RandomState(5)
    x = rng.randn(3, 4, 5) * 2
    s = 0.3
    fwd = {"xelu": np.where(x > 0, x, s * x), "elu": np.where(x > 0, x, s * np.expm1(x)),
           "selu": SELU_L * np.where(x > 0, x, SELU_A * np.expm1(x)),
           "gelu": 0.5 * x * (1 + _erf(x / np.sqrt(2)))}[t]
    y = np.zeros_like(x)
    fa = (s,) if t in ("xelu", "elu") else ()
    spec = _spec("LeakyReLU", "activation", "fwd:" + t, [x], [y], None, fa)
    emu.run_spec(spec, [x], [y], grid=3, block=7)
    np.testing.assert_allclose(y, fwd, rtol=1e-13, atol=1e-15)
    g = rng.randn(*x.shape)
    second = x if t == "gelu" else y                # gelu's backward reads x, the others y
    pdf = np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    bwd = {"xelu": g * np.where(y > 0, 1, s), "elu": g * np.where(y > 0, 1, s + y),
           # MXNet 1.9.1's selu' from the output: L * (A + y) for y <= 0
           "selu": g * SELU_L * np.where(y > 0, 1, SELU_A + y),
           "gelu": g * (0.5 * (1 + _erf(x / np.sqrt(2))) + x * pdf)}[t]
    dx = np.zeros_like(x)
    spec = _spec("_backward_LeakyReLU", "activation", "bwd:" + t, [g, second], [dx], None, fa)
    emu.run_spec(spec, [g, second], [dx], grid=3, block=7)
    np.testing.assert_allclose(dx, bwd, rtol=1e-12, atol=1e-15)


def test_leaky_matches_the_cpu_operator_in_float32(emu):
    import mxc as mx
    rng = np.random.RandomState(6)
    x = (rng.randn(4, 6) * 2).astype(np.float32)
    for t, kw, fa in (("leaky", {"slope": 0.2}, (float(np.float32(0.2)),)),
                      ("elu", {"slope": 0.7}, (float(np.float32(0.7)),)), ("selu", {}, ()),
                      ("gelu", {}, ())):
        ref = mx.nd.LeakyReLU(mx.nd.array(x), act_type=t, **kw).asnumpy()
        y = np.zeros_like(x)
        kname = "xelu" if t == "leaky" else t
        emu.run_spec(_spec("LeakyReLU", "activation", "fwd:" + kname, [x], [y], None, fa),
                     [x], [y])
        np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-7)


def test_rrelu_and_prelu(emu):
    rng = np.random.RandomState(7)
    x = rng.randn(2, 3, 4)
    mask = rng.uniform(0.1, 0.3, x.shape)
    y = np.zeros_like(x)
    emu.run_spec(_spec("LeakyReLU", "activation", "fwd:xelu_arr", [x, mask], [y]), [x, mask], [y])
    np.testing.assert_array_equal(y, np.where(x > 0, x, mask * x))
    g = rng.randn(*x.shape)
    dx = np.zeros_like(x)
    emu.run_spec(_spec("_backward_LeakyReLU", "activation", "bwd:xelu_arr", [g, y, mask], [dx]),
                 [g, y, mask], [dx])
    np.testing.assert_array_equal(dx, g * np.where(y > 0, 1, mask))
    from mxc.ops.activation import gamma_view
    for gshape in [(3,), (1,), (2, 1), (2, 3)]:
        gamma = rng.uniform(0.1, 0.5, gshape)
        ia = gamma_view(x.shape, gshape)
        gb = gamma.reshape(gshape + (1,) * (x.ndim - len(gshape))) if len(gshape) == 2 else \
            gamma.reshape((1,) + gshape + (1,))
        y = np.zeros_like(x)
        emu.run_spec(_spec("LeakyReLU", "activation", "fwd:prelu", [x, gamma], [y], ia),
                     [x, gamma], [y])
        np.testing.assert_array_equal(y, np.where(x > 0, x, gb * x))
        dx, dg = np.zeros_like(x), np.zeros_like(gamma)
        spec = _spec("_backward_LeakyReLU", "activation", "bwd:prelu", [g, x, gamma], [dx, dg],
                     ia)
        emu.run_spec(spec, [g, x, gamma], [dx, dg])    # dx, then a block per channel of gamma
        np.testing.assert_array_equal(dx, g * np.where(x > 0, 1, gb))
        axes = tuple(a for a in range(x.ndim) if gb.shape[a] == 1)
        want = (g * x * (x <= 0)).sum(axis=axes, keepdims=True).reshape(gshape)
        np.testing.assert_allclose(dg, want, rtol=1e-12)


# ---- softmax with use_length and an output dtype --------------------------------------------------
def _softmax_ref(x, lens, axis, t, log):
    x = np.moveaxis(x.astype(np.float64), axis, -1) / t
    out = np.zeros_like(x)
    for pos in np.ndindex(x.shape[:-1]):
        m = x.shape[-1] if lens is None else int(np.clip(lens[pos], 0, x.shape[-1]))
        if m:
            v = x[pos][:m] - x[pos][:m].max()
            e = np.exp(v)
            out[pos][:m] = v - np.log(e.sum()) if log else e / e.sum()
    return np.moveaxis(out, -1, axis)


def test_softmax_length_and_dtype(emu):
    rng = np.random.RandomState(8)
    x = rng.randn(2, 5, 3).astype(np.float32)                      # axis 1: inner = 3
    lens = np.array([[5, 0, 3], [9, -2, 1]], np.int32)             # clamped into [0, 5]
    y = np.zeros(x.shape, np.float64)
    spec = _spec("softmax", "softmax", "softmax", [x, lens], [y], (2, 5, 3, 0, 0, 1), (2.0,))
    assert spec["name"] == "mxc_softmax_cols<false, float, double, int>"
    emu.run_spec(spec, [x, lens], [y], grid=2, block=2)
    np.testing.assert_allclose(y, _softmax_ref(x, lens, 1, 2.0, False), rtol=1e-6, atol=1e-7)
    # log_softmax over float64 with int64 lengths on the last axis: a block per row
    xd = rng.randn(4, 300)
    ld = np.array([300, 2, 0, 257], np.int64)
    yd = np.full_like(xd, 7.0)
    spec = _spec("softmax", "softmax", "softmax", [xd, ld], [yd], (4, 300, 1, 1, 0, 1), (1.0,))
    assert spec["name"] == "mxc_softmax_rows<true, double, double, long long>"
    emu.run_spec(spec, [xd, ld], [yd])
    np.testing.assert_allclose(yd, _softmax_ref(xd, ld, 1, 1.0, True), rtol=1e-12, atol=1e-12)
    assert not yd[2].any()
    # softmax of float32 rows longer than the block, with a temperature
    xf = (rng.randn(3, 600) * 4).astype(np.float32)
    yf = np.zeros_like(xf)
    spec = _spec("softmax", "softmax", "softmax", [xf], [yf], (3, 600, 1, 0, 0, 0), (0.5,))
    assert spec["name"] == "mxc_softmax_rows<false, float, float, int>"
    emu.run_spec(spec, [xf], [yf], grid=2)
    np.testing.assert_allclose(yf, _softmax_ref(xf, None, 1, 0.5, False), rtol=1e-5, atol=1e-9)


def test_softmax_backward_with_length_and_dtype(emu):
    rng = np.random.RandomState(9)
    yv = _softmax_ref(rng.randn(3, 4, 2), np.array([[4, 1], [2, 0], [3, 4]]), 1, 1.0, False)
    lens = np.array([[4, 1], [2, 0], [3, 4]], np.int32)
    g = rng.randn(3, 4, 2)
    dx = np.full((3, 4, 2), 7, np.float32)                         # the input was float32
    spec = _spec("_backward_softmax", "softmax", "softmax_bwd", [g, yv, lens], [dx],
                 (3, 4, 2, 0, 0, 1), (1.0,))
    emu.run_spec(spec, [g, yv, lens], [dx], grid=2, block=2)
    want = np.zeros_like(yv)
    for o in range(3):
        for c in range(2):
            m = lens[o, c]
            yy, gg = yv[o, :m, c], g[o, :m, c]
            want[o, :m, c] = yy * (gg - (gg * yy).sum())
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-7)
    # log form, float32 in and out, int64 lengths
    ylog = np.log(np.maximum(yv, 1e-30)).astype(np.float32)
    g32 = g.astype(np.float32)
    dx = np.zeros((3, 4, 2), np.float32)
    l64 = lens.astype(np.int64)
    spec = _spec("_backward_log_softmax", "softmax", "softmax_bwd", [g32, ylog, l64], [dx],
                 (3, 4, 2, 1, 0, 1), (1.0,))
    emu.run_spec(spec, [g32, ylog, l64], [dx])
    want = np.zeros_like(dx)
    for o in range(3):
        for c in range(2):
            m = lens[o, c]
            want[o, :m, c] = g32[o, :m, c] - np.exp(ylog[o, :m, c]) * g32[o, :m, c].sum()
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=1e-6)


# ---- sampling: the same numbers as mxc's CPU kernels for the same key and counter ----------------
def _cpu_kernel(kname, ins, out_shape, dtype, iattr, fattr=()):
    import importlib
    import mxc as mx
    from mxc._core.handle import push_kernel
    table = importlib.import_module("mxc.ops.cpu.random").KERNELS[kname]
    out = mx.nd.zeros(out_shape, dtype=dtype)
    nd_ins = [mx.nd.array(a, dtype=a.dtype) for a in ins]
    push_kernel(table[out._dcode], nd_ins, [out], tuple(iattr), tuple(fattr), kname.encode(), 1)
    return out.asnumpy()


KEY, BASE = 0x1234_5678_9ABC_DEF0, 1000


def test_sample_normal_casts_parameters_then_draws(emu):
    mu = np.array([0.0, 10.0, -5.0], np.float16)
    sigma = np.array([1.0, 0.5, 2.0], np.float16)
    y = np.zeros((3, 7), np.float32)
    spec = _spec("_sample_normal", "random", "normal", [mu, sigma], [y], (KEY, BASE))
    assert [L["name"] for L in spec["launches"]][:2] == ["mxc_cast<__half, double>"] * 2
    emu.run_spec(spec, [mu, sigma], [y], grid=2, block=3)
    ref = _cpu_kernel("normal", [mu, sigma], (3, 7), "float32", (KEY, BASE))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    lo = np.array([[0.0, 1.0]], np.float32)
    hi = np.array([[1.0, 3.0]], np.float32)
    yd = np.zeros((1, 2, 5))
    spec = _spec("_sample_uniform", "random", "uniform", [lo, hi], [yd], (KEY, BASE))
    emu.run_spec(spec, [lo, hi], [yd])
    np.testing.assert_array_equal(yd, _cpu_kernel("uniform", [lo, hi], (1, 2, 5), "float64",
                                                  (KEY, BASE)))


@pytest.mark.parametrize("kname,params,dtype", [
    ("gamma", (0.4, 2.0), np.float64), ("gamma", (3.5, 0.5), np.float64),
    ("poisson", (4.0,), np.float32), ("poisson", (30.0,), np.float32),
    ("negative_binomial", (3.0, 0.4), np.float64),
    ("generalized_negative_binomial", (2.0, 0.3), np.float64)])
def test_rejection_samplers_follow_the_cpu_streams(emu, kname, params, dtype):
    n = 400
    y = np.zeros(n, dtype)
    spec = _spec("_random_" + kname, "random", kname, [], [y], (KEY, BASE), params)
    emu.run_spec(spec, [], [y], grid=3, block=7)
    ref = _cpu_kernel(kname, [], (n,), np.dtype(dtype).name, (KEY, BASE), params)
    # the device's tan(pi u) is sinpi/cospi: a last-bit difference may flip a rare Poisson
    # acceptance (lambda >= 12); everything else is the CPU's arithmetic
    same = np.isclose(y, ref, rtol=1e-12, atol=0)
    assert same.mean() >= (0.98 if kname != "gamma" else 1.0), same.mean()
    a = params[0]
    b = params[-1]
    mean = {"gamma": a * b, "poisson": a, "negative_binomial": a * (1 - b) / b,
            "generalized_negative_binomial": a}[kname]
    assert abs(y.mean() - mean) < 4 * max(y.std(), 1e-9) / np.sqrt(n) + 1e-9


def test_sample_gamma_per_parameter_element(emu):
    alpha = np.array([0.5, 2.0, 9.0])
    beta = np.array([1.0, 3.0, 0.1])
    y = np.zeros((3, 50))
    spec = _spec("_sample_gamma", "random", "gamma", [alpha, beta], [y], (KEY, BASE))
    assert spec["workspace"] == 2 * 8 * 3
    emu.run_spec(spec, [alpha, beta], [y])
    np.testing.assert_allclose(y, _cpu_kernel("gamma", [alpha, beta], (3, 50), "float64",
                                              (KEY, BASE)), rtol=1e-12)


def test_multinomial_and_its_gradient(emu):
    import importlib
    import mxc as mx
    from mxc._core.handle import push_kernel
    table = importlib.import_module("mxc.ops.cpu.random").KERNELS
    rng = np.random.RandomState(17)
    p = rng.uniform(0, 1, (5, 7)).astype(np.float32)
    p[1, 5:] = 0
    p /= p.sum(axis=1, keepdims=True)
    p[2] *= 0.5                           # sums to 0.5: draws past it take the last non-zero
    M = 9
    smp, logp = np.zeros((5, M), np.int32), np.zeros((5, M), np.float32)
    spec = _spec("_sample_multinomial", "random", "multinomial", [p], [smp, logp], (KEY, BASE))
    emu.run_spec(spec, [p], [smp, logp], grid=2, block=5)
    cs, cl = mx.nd.zeros((5, M), dtype="int32"), mx.nd.zeros((5, M))
    push_kernel(table["multinomial"][mx.nd.array(p)._dcode], [mx.nd.array(p)], [cs, cl],
                (KEY, BASE), (), b"multinomial", 1)
    np.testing.assert_array_equal(smp, cs.asnumpy())
    np.testing.assert_array_equal(logp, cl.asnumpy())
    assert (smp[2] == 6).any() and not (smp[1] >= 5).any()
    g = rng.randn(5, M).astype(np.float32)
    dp = np.full(p.shape, 3, np.float32)
    spec = _spec("_backward_sample_multinomial", "random", "multinomial_backward", [g, p, smp],
                 [dp])
    emu.run_spec(spec, [g, p, smp], [dp], grid=2, block=2)
    want = np.zeros_like(p)
    for i in range(5):
        for j in range(M):
            want[i, smp[i, j]] += g[i, j] / p[i, smp[i, j]]
    np.testing.assert_allclose(dp, want, rtol=1e-6)
    pd = p.astype(np.float64)
    sd = np.zeros((5, 3))
    emu.run_spec(_spec("_sample_multinomial", "random", "multinomial", [pd], [sd], (KEY, 77)),
                 [pd], [sd])
    cd = mx.nd.zeros((5, 3), dtype="float64")
    push_kernel(table["multinomial"][mx.nd.array(pd, dtype="float64")._dcode],
                [mx.nd.array(pd, dtype="float64")], [cd], (KEY, 77), (), b"multinomial", 1)
    np.testing.assert_array_equal(sd, cd.asnumpy())


# ---- optimizers: mixed precision, preloaded, adamw against mxc's CPU operators ---------------
def _f32(*v):
    return tuple(float(np.float32(x)) for x in v)


def test_mp_and_preloaded_sgd(emu):
    import mxc as mx
    rng = np.random.RandomState(10)
    n = 23
    w32 = rng.randn(n).astype(np.float32)
    w = w32.astype(np.float16)
    g = rng.randn(n).astype(np.float16)
    mom = rng.randn(n).astype(np.float32)
    kw = dict(lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=1.0)
    # mp_sgd_update
    ref_w32 = mx.nd.array(w32)
    ref = mx.nd.mp_sgd_update(mx.nd.array(w, dtype="float16"), mx.nd.array(g, dtype="float16"),
                              ref_w32, **kw).asnumpy()
    o, s32 = np.zeros_like(w), w32.copy()
    spec = _spec("mp_sgd_update", "optimizer_ops", "opt:mp_sgd", [w, g, s32], [o, s32], (),
                 _f32(0.1, 0.01, 0.5, 1.0))
    emu.run_spec(spec, [w, g, s32], [o, s32], grid=2, block=5)
    np.testing.assert_array_equal(o, ref)
    np.testing.assert_array_equal(s32, ref_w32.asnumpy())
    # mp_sgd_mom_update
    ref_m, ref_w32 = mx.nd.array(mom), mx.nd.array(w32)
    ref = mx.nd.mp_sgd_mom_update(mx.nd.array(w, dtype="float16"), mx.nd.array(g, dtype="float16"),
                                  ref_m, ref_w32, momentum=0.9, **kw).asnumpy()
    o, m, s32 = np.zeros_like(w), mom.copy(), w32.copy()
    spec = _spec("mp_sgd_mom_update", "optimizer_ops", "opt:mp_msgd", [w, g, m, s32],
                 [o, m, s32], (1, -1), _f32(0.1, 0.01, 0.9, 0.5, 1.0))
    emu.run_spec(spec, [w, g, m, s32], [o, m, s32])
    np.testing.assert_array_equal(o, ref)
    np.testing.assert_array_equal(m, ref_m.asnumpy())
    np.testing.assert_array_equal(s32, ref_w32.asnumpy())
    # mp_nag_mom_update
    ref_m, ref_w32 = mx.nd.array(mom), mx.nd.array(w32)
    ref = mx.nd.mp_nag_mom_update(mx.nd.array(w, dtype="float16"), mx.nd.array(g, dtype="float16"),
                                  ref_m, ref_w32, momentum=0.9, **kw).asnumpy()
    o, m, s32 = np.zeros_like(w), mom.copy(), w32.copy()
    spec = _spec("mp_nag_mom_update", "optimizer_ops", "opt:mp_nag", [w, g, m, s32],
                 [o, m, s32], (), _f32(0.1, 0.01, 0.9, 0.5, 1.0))
    emu.run_spec(spec, [w, g, m, s32], [o, m, s32])
    np.testing.assert_array_equal(o, ref)
    np.testing.assert_array_equal(m, ref_m.asnumpy())
    # preloaded_multi_sgd_mom_update: lr and wd of weight 1 from the float32 arrays
    wf = rng.randn(n).astype(np.float32)
    gf = rng.randn(n).astype(np.float32)
    lrs = np.array([0.5, 0.05], np.float32)
    wds = np.array([0.0, 0.02], np.float32)
    ref_m = mx.nd.array(mom)
    ref = mx.nd.preloaded_multi_sgd_mom_update(
        mx.nd.array(wf), mx.nd.array(gf), mx.nd.array(mom), mx.nd.array(wf), mx.nd.array(gf),
        ref_m, mx.nd.array(lrs), mx.nd.array(wds), momentum=0.9, rescale_grad=0.5,
        clip_gradient=-1.0, num_weights=2)
    o, m = np.zeros_like(wf), mom.copy()
    spec = _spec("preloaded_multi_sgd_mom_update", "optimizer_ops", "opt:msgd",
                 [wf, gf, m, lrs, wds], [o, m], (1, 1), _f32(0.0, 0.0, 0.9, 0.5, -1.0))
    emu.run_spec(spec, [wf, gf, m, lrs, wds], [o, m])
    np.testing.assert_array_equal(o, ref[1].asnumpy())
    np.testing.assert_array_equal(m, ref_m.asnumpy())


@pytest.mark.parametrize("mp", [False, True])
@pytest.mark.parametrize("scale", [0.5, np.nan])
def test_adamw(emu, mp, scale):
    import mxc as mx
    rng = np.random.RandomState(11)
    n = 19
    w32 = rng.randn(n).astype(np.float32)
    w = w32.astype(np.float16) if mp else w32
    g = rng.randn(n).astype(w.dtype)
    mean, var = rng.randn(n).astype(np.float32), np.abs(rng.randn(n)).astype(np.float32)
    sc = np.array([scale], np.float32)
    kw = dict(lr=0.01, beta1=0.9, beta2=0.99, epsilon=1e-6, wd=0.1, eta=0.5, clip_gradient=2.0)
    fa = _f32(0.01, 0.9, 0.99, 1e-6, 0.1, 0.5, 2.0)
    nd = [mx.nd.array(w, dtype=w.dtype), mx.nd.array(g, dtype=g.dtype), mx.nd.array(mean),
          mx.nd.array(var)] + ([mx.nd.array(w32)] if mp else []) + [mx.nd.array(sc)]
    op = "_mp_adamw_update" if mp else "_adamw_update"
    ref = getattr(mx.nd, op)(*nd, **kw).asnumpy()
    m, v, s32, o = mean.copy(), var.copy(), w32.copy(), np.zeros_like(w)
    ins = [w, g, m, v] + ([s32] if mp else []) + [sc]
    outs = [o, m, v] + ([s32] if mp else [])
    spec = _spec(op, "optimizer_ops", "opt:mp_adamw" if mp else "opt:adamw", ins, outs, (0,), fa)
    emu.run_spec(spec, ins, outs, grid=2, block=3)
    np.testing.assert_array_equal(o, ref)
    np.testing.assert_array_equal(m, nd[2].asnumpy())
    np.testing.assert_array_equal(v, nd[3].asnumpy())
    if mp:
        np.testing.assert_array_equal(s32, nd[4].asnumpy())


@pytest.mark.parametrize("bc", [True, False])
def test_lamb_phases(emu, bc):
    import math
    import mxc as mx
    rng = np.random.RandomState(15)
    n = 17
    w32 = rng.randn(n).astype(np.float32)
    g = (3 * rng.randn(n)).astype(np.float32)
    mean, var = rng.randn(n).astype(np.float32), np.abs(rng.randn(n)).astype(np.float32)
    kw = dict(beta1=0.9, beta2=0.999, epsilon=1e-6, t=3, bias_correction=bc, wd=0.01,
              rescale_grad=0.5, clip_gradient=1.0)
    fa = _f32(0.9, 0.999, 1e-6, 0.01, 0.5, 1.0) + (math.pow(np.float32(0.9), 3),
                                                     math.pow(np.float32(0.999), 3))
    for mp in (False, True):
        w = w32.astype(np.float16) if mp else w32
        gg = g.astype(w.dtype)
        nd = [mx.nd.array(w, dtype=w.dtype), mx.nd.array(gg, dtype=w.dtype), mx.nd.array(mean),
              mx.nd.array(var)] + ([mx.nd.array(w32)] if mp else [])
        op = "mp_lamb_update_phase1" if mp else "lamb_update_phase1"
        ref = getattr(mx.nd, op)(*nd, **kw).asnumpy()
        m, v, d = mean.copy(), var.copy(), np.zeros(n, np.float32)
        ins = [w, gg, m, v] + ([w32] if mp else [])
        spec = _spec(op, "optimizer_ops", "opt:mp_lamb1" if mp else "opt:lamb1", ins, [d, m, v],
                     (int(bc),), fa)
        emu.run_spec(spec, ins, [d, m, v], grid=2, block=3)
        np.testing.assert_array_equal(d, ref)
        np.testing.assert_array_equal(m, nd[2].asnumpy())
        np.testing.assert_array_equal(v, nd[3].asnumpy())
        r1 = np.array([np.sqrt((w32 ** 2).sum())], np.float32)
        r2 = np.array([np.sqrt((d ** 2).sum())], np.float32)
        k2 = dict(lr=0.05, lower_bound=0.1, upper_bound=2.0)
        nd2 = [mx.nd.array(w, dtype=w.dtype), mx.nd.array(d, dtype=w.dtype if not mp else None),
               mx.nd.array(r1, dtype=w.dtype if not mp else None),
               mx.nd.array(r2, dtype=w.dtype if not mp else None)] + \
            ([mx.nd.array(w32)] if mp else [])
        op2 = "mp_lamb_update_phase2" if mp else "lamb_update_phase2"
        ref2 = getattr(mx.nd, op2)(*nd2, **k2).asnumpy()
        o = np.zeros_like(w)
        ins2 = [w, d, r1, r2] + ([w32] if mp else [])
        spec = _spec(op2, "optimizer_ops", "opt:mp_lamb2" if mp else "opt:lamb2", ins2, [o],
                     (), _f32(0.05, 0.1, 2.0))
        emu.run_spec(spec, ins2, [o])
        np.testing.assert_array_equal(o, ref2)


def test_adagrad(emu):
    import mxc as mx
    rng = np.random.RandomState(16)
    w, g, h = rng.randn(11), rng.randn(11), np.abs(rng.randn(11))
    nh = mx.nd.array(h, dtype="float64")
    ref = mx.nd._sparse_adagrad_update(mx.nd.array(w, dtype="float64"),
                                       mx.nd.array(g, dtype="float64"), nh, lr=0.1,
                                       epsilon=1e-7, rescale_grad=2.0, clip_gradient=1.5)
    o, hh = np.zeros_like(w), h.copy()
    spec = _spec("_sparse_adagrad_update", "optimizer_ops", "opt:adagrad", [w, g, hh], [o, hh],
                 (), _f32(0.1, 1e-7, 2.0, 1.5))
    emu.run_spec(spec, [w, g, hh], [o, hh])
    np.testing.assert_array_equal(o, ref.asnumpy())
    np.testing.assert_array_equal(hh, nh.asnumpy())


# ---- add_n, slice assignment, topk's mask --------------------------------------------------------
def test_add_n_in_groups_of_eight(emu):
    rng = np.random.RandomState(12)
    for dt in (np.float32, np.int32):
        xs = [rng.randint(-50, 50, (3, 7)).astype(dt) for _ in range(11)]
        y = np.full((3, 7), 99, dt)
        spec = _spec("add_n", "shape_extra", "add_n", xs, [y])
        assert len(spec["launches"]) == 2
        emu.run_spec(spec, xs, [y], grid=2, block=5)
        np.testing.assert_array_equal(y, np.sum(xs, axis=0, dtype=dt))
    xs = xs[:3]
    y = np.zeros((3, 7), np.int32)
    emu.run_spec(_spec("add_n", "shape_extra", "add_n", xs, [y]), xs, [y])
    np.testing.assert_array_equal(y, xs[0] + xs[1] + xs[2])


def test_slice_assign_and_scalar(emu):
    rng = np.random.RandomState(13)
    dst = rng.randn(6, 5).astype(np.float32)
    val = rng.randn(2, 3).astype(np.float32)
    want = dst.copy()
    want[1:5:2, 4:0:-2] = val[:, :2]
    v2 = val[:, :2].copy()
    spec = _spec("_slice_assign", "shape", "slice_assign", [dst, v2], [dst], (1, 4, 2, -2))
    emu.run_spec(spec, [dst, v2], [dst], grid=2, block=2)
    np.testing.assert_array_equal(dst, want)
    spec = _spec("_slice_assign_scalar", "shape", "slice_assign_scalar", [dst], [dst],
                 (0, 1, 3, 1, 2, 4), (-2.5,))
    emu.run_spec(spec, [dst], [dst])
    want[0:6:3, 1:5:1] = -2.5
    np.testing.assert_array_equal(dst, want)
    di = np.zeros((4,), np.uint8)
    spec = _spec("_slice_assign_scalar", "shape", "slice_assign_scalar", [di], [di],
                 (1, 2, 2), (-2.7,))
    emu.run_spec(spec, [di], [di])
    np.testing.assert_array_equal(di, [0, 254, 0, 254])             # -2.7 -> -2 -> wraps


def test_scalar_bits_follow_the_cpu_conversion():
    cases = [(1.5, "float32", np.float32(1.5)), (-2.7, "int32", -2), (300.0, "uint8", 44),
             (np.nan, "int64", 0), (0.1, "float16", np.float16(0.1)), (2.0, "bool", True),
             (-1.0, "uint8", 255), (1e300, "float32", np.float32(np.inf))]
    for v, dt, want in cases:
        kind, bits = scalar_bits(v, dt)
        size = np.dtype(dt).itemsize
        assert kind == {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[size]
        got = np.frombuffer(bits.to_bytes(size, "little"), dtype=dt)[0]
        assert got == np.array(want).astype(dt), (v, dt, got)


def test_topk_mask(emu):
    rng = np.random.RandomState(14)
    x = rng.randn(3, 6, 2).astype(np.float32)
    x[0, 1, 0] = x[0, 4, 0]                                        # a tie: the first one wins
    for k, asc in ((2, 0), (4, 1)):
        y = np.full(x.shape, 5, np.float32)
        spec = _spec("topk", "ordering", "topk", [x], [y], (3, 6, 2, k, 2, asc))
        emu.run_spec(spec, [x], [y])
        order = np.argsort(x if asc else -x, axis=1, kind="stable")[:, :k]
        want = np.zeros_like(x)
        np.put_along_axis(want, order, 1, axis=1)
        np.testing.assert_array_equal(y, want)

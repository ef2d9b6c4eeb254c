"""Mixed precision on the GPU, run on the CPU: the float16 and bfloat16 kernels of the layer
operators (Pooling, nearest UpSampling, BatchNorm, LayerNorm/GroupNorm/InstanceNorm, softmax,
SoftmaxOutput and the softmax cross-entropy losses, Dropout, Convolution, Embedding), the
multi-precision optimizer updates and AMP's overflow check (all_finite / multi_all_finite).

Each launch sequence is the one mxc.ops.cuda.launch_spec builds from the operator's own kernel
call (tests/ops/cuda/_gpucall.py) on float16 or bfloat16 arrays (ml_dtypes'), which pick the
__half or __nv_bfloat16 instances; the kernels are g++-compiled from the same .cu text and
compared with mxc's CPU operator in float32 on the same inputs (stored in the low-precision type
first). Tolerances: the low-precision result may differ from
the float32 reference by its own rounding and that of the intermediates stored in it, so
relative and absolute 4e-3 for float16 (2**-11 ulp, a few roundings) and 3e-2 for bfloat16
(2**-8 ulp), absolute ones scaled by the reference's magnitude; where the kernels only move or
compare values (max pooling, Embedding's lookup, nearest upsampling, the optimizer's float32
master step, the overflow flag) the results are exact."""
import importlib
import shutil

import ml_dtypes  # noqa: F401  (registers the dtype name "bfloat16")
import numpy as np
import pytest

import mxc as mx

from ._emu import Launcher, run_spec
from ._gpucall import kernel_calls
from .test_gemm_mapping import colmajor_gemm

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402
from mxc.ops.cuda._launch import instantiations  # noqa: E402

LOWP = ("float16", "bfloat16")
TOL = {"float16": 4e-3, "bfloat16": 3e-2}


def rounded(x32, dtype):
    """float32 values of x32 once stored in dtype (the reference's inputs)."""
    return np.asarray(x32, np.float32).astype(dtype).astype(np.float32)


def _lowp_names(family, keep=lambda n: True):
    return sorted(n for n in instantiations(family)
                  if ("__half" in n or "__nv_bfloat16" in n) and keep(n))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    """Launcher per family, built on first use (each is one g++ compile)."""
    made = {}
    keep = {"gather": lambda n: ("take" in n or "scatter_nd" in n) and n.endswith(", float>")
            or n.endswith(", float, true>"),
            "random": lambda n: n.startswith("mxc_dropout"),
            "init": lambda n: n.startswith("mxc_fill"),
            "reduce": lambda n: "finite" in n,
            "optimizer_ops": lambda n: "_mp_" in n or n.startswith("mxc_mp_")}

    def get(family):
        if family not in made:
            names = _lowp_names(family, keep.get(family, lambda n: True))
            if family == "reduce":
                names += ["mxc_finite_init", "mxc_all_finite<float>", "mxc_all_finite<double>"]
            if family == "normalization":
                names.append("mxc_bn_mean")
            made[family] = Launcher(tmp_path_factory, "lowp_" + family, {family: names})
        return made[family]
    return get


def emu_spec(emu, spec, ins, outs):
    run_spec(spec, ins, outs,
             lambda L, ws: emu(L["family"]).run(L, ins, outs, ws, grid=3, block=7))


def run_gpu(emu, opname, inputs, outputs, **kw):
    """Run operator `opname`'s GPU launches on numpy arrays (their dtypes pick the instances;
    a GEMM step is cuBLAS's call in numpy, accumulated in float64, rounded once into C)."""
    calls = kernel_calls(opname, inputs, outputs, **kw)
    assert calls, opname
    for name, a, ins, outs, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (opname, kern)
        if "steps" not in spec:
            # each launch on its family's kernels (Embedding's backward zeroes its output with
            # init.cu, then adds with gather.cu)
            emu_spec(emu, spec, ins, outs)
            continue
        lib = emu("convolution")
        ws = np.zeros(int(spec["workspace"]) + 256, np.uint8)
        dt = outs[0].dtype

        def buf(ref):
            kind, v = ref
            if kind == "ws":
                return ws[int(v):][: (ws.size - int(v)) // dt.itemsize * dt.itemsize].view(dt)
            return (ins if kind == "in" else outs)[v].reshape(-1)
        for step in spec["steps"]:
            if "gemm" not in step:
                lib.run(step, ins, outs, ws, grid=3, block=7)
            else:
                colmajor_gemm(step["gemm"], step["alpha"], step["beta"], buf(step["a"]),
                              buf(step["b"]), buf(step["c"]))
    return outputs


def _close(got, want, dtype, exact=False):
    want = np.asarray(want, np.float64)
    if exact:
        np.testing.assert_array_equal(np.asarray(got, np.float64), want)
        return
    t = TOL[dtype]
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=t, atol=t * scale)


def _nd(v):
    return mx.nd.array(np.asarray(v, np.float32))


def _data(rng, shape, scale=1.0, shift=0.0):
    return (rng.randn(*shape) * scale + shift).astype(np.float32)


# ---- Pooling and nearest UpSampling -------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("kw", [
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
    dict(kernel=(2, 2), stride=(1, 1), pool_type="lp", p_value=2),
    dict(kernel=(2, 2), stride=(2, 2), pool_type="max", layout="NHWC"),
    dict(global_pool=True, pool_type="avg", kernel=()),
], ids=lambda k: "-".join(str(v) for v in k.values()))
def test_pooling(emu, dtype, kw):
    rng = np.random.RandomState(0)
    x = rounded(_data(rng, (2, 6, 7, 3) if kw.get("layout") == "NHWC" else (2, 3, 6, 7)), dtype)
    if kw["pool_type"] == "lp":
        x = rounded(np.abs(x) + 0.25, dtype)
    want = mx.nd.Pooling(_nd(x), **kw).asnumpy()
    y = run_gpu(emu, "Pooling", [x.astype(dtype)],
                [np.zeros(want.shape, dtype)], **kw)[0]
    y32 = y.astype(np.float32)
    _close(y32, want, dtype, exact=kw["pool_type"] == "max")
    dy = rounded(_data(rng, want.shape), dtype)
    want = mx.nd._backward_Pooling(_nd(dy), _nd(x), _nd(y32), **kw).asnumpy()
    dx = run_gpu(emu, "_backward_Pooling",
                 [dy.astype(dtype), x.astype(dtype), y], [np.zeros(x.shape, dtype)],
                 **kw)[0]
    _close(dx.astype(np.float32), want, dtype)    # overlapping windows add: one rounding


@pytest.mark.parametrize("dtype", LOWP)
def test_upsampling_nearest(emu, dtype):
    rng = np.random.RandomState(1)
    a, b = rounded(_data(rng, (2, 3, 4, 4)), dtype), rounded(_data(rng, (2, 3, 2, 2)), dtype)
    kw = dict(scale=2, sample_type="nearest", num_args=2, multi_input_mode="concat")
    want = mx.nd.UpSampling(_nd(a), _nd(b), **kw).asnumpy()
    y = run_gpu(emu, "UpSampling", [a.astype(dtype), b.astype(dtype)],
                [np.zeros(want.shape, dtype)], **kw)[0]
    _close(y.astype(np.float32), want, dtype, exact=True)
    dy = rounded(_data(rng, want.shape), dtype)
    want = mx.nd._backward_UpSampling(_nd(dy), _nd(a), _nd(b), **kw)
    got = run_gpu(emu, "_backward_UpSampling", [v.astype(dtype) for v in (dy, a, b)],
                  [np.zeros(a.shape, dtype), np.zeros(b.shape, dtype)], **kw)
    for g, w in zip(got, want):
        _close(g.astype(np.float32), w.asnumpy(), dtype)


# ---- normalization --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("train", [True, False])
def test_batchnorm(emu, dtype, train):
    # low-precision data with float32 gamma, beta and statistics (MXNet's rule)
    rng = np.random.RandomState(2)
    x = rounded(_data(rng, (4, 3, 5, 6), 2.0, 1.0), dtype)
    c = 3
    gamma, beta = rng.rand(c).astype(np.float32) + 0.5, rng.randn(c).astype(np.float32)
    mm, mv = rng.randn(c).astype(np.float32), rng.rand(c).astype(np.float32) + 0.5
    kw = dict(fix_gamma=False, eps=1e-3, output_mean_var=True, momentum=0.8)
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        want = [o.asnumpy() for o in mx.nd.BatchNorm(_nd(x), _nd(gamma), _nd(beta), _nd(mm),
                                                      _nd(mv), **kw)]
        got = run_gpu(emu, "BatchNorm", [x.astype(dtype), gamma, beta, mm, mv],
                      [np.zeros(x.shape, dtype), np.zeros(c, np.float32),
                       np.zeros(c, np.float32)], **kw)
        _close(got[0].astype(np.float32), want[0], dtype)
        for g, w in zip(got[1:], want[1:]):
            _close(g, w, dtype)
        dy = rounded(_data(rng, x.shape), dtype)
        bkw = {k: v for k, v in kw.items() if k != "output_mean_var"}
        mm_c, mv_c = _nd(mm), _nd(mv)
        want = [o.asnumpy() for o in mx.nd._backward_BatchNorm(_nd(dy), _nd(x), _nd(gamma),
                                                                _nd(beta), mm_c, mv_c, **bkw)]
        mm_g, mv_g = mm.copy(), mv.copy()
        got = run_gpu(emu, "_backward_BatchNorm",
                      [dy.astype(dtype), x.astype(dtype), gamma, beta, mm_g, mv_g],
                      [np.zeros(x.shape, dtype), np.zeros(c, np.float32),
                       np.zeros(c, np.float32)], **bkw)
    _close(got[0].astype(np.float32), want[0], dtype)
    for g, w in zip(got[1:], want[1:]):
        _close(g, w, dtype)
    _close(mm_g, mm_c.asnumpy(), dtype)
    _close(mv_g, mv_c.asnumpy(), dtype)


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("op,shape,kw", [
    ("LayerNorm", (4, 6, 10), dict(axis=-1)),
    ("InstanceNorm", (3, 4, 5, 2), dict()),
    ("GroupNorm", (3, 6, 4, 2), dict(num_groups=3)),
])
def test_row_norms(emu, dtype, op, shape, kw):
    rng = np.random.RandomState(3)
    x = rounded(_data(rng, shape, 3.0, 2.0), dtype)
    pshape = {"LayerNorm": (shape[-1],), "InstanceNorm": (shape[1],),
              "GroupNorm": (kw.get("num_groups", 1),)}[op]
    gamma = rounded(rng.rand(*pshape).astype(np.float32) + 0.5, dtype)
    beta = rounded(rng.randn(*pshape).astype(np.float32), dtype)
    kw = dict(kw, eps=1e-4)
    want = getattr(mx.nd, op)(_nd(x), _nd(gamma), _nd(beta), **kw).asnumpy()
    y = run_gpu(emu, op, [v.astype(dtype) for v in (x, gamma, beta)],
                [np.zeros(shape, dtype)], **kw)[0]
    _close(y.astype(np.float32), want, dtype)
    dy = rounded(_data(rng, shape), dtype)
    want = getattr(mx.nd, "_backward_" + op)(_nd(dy), _nd(x), _nd(gamma), **kw)
    got = run_gpu(emu, "_backward_" + op, [v.astype(dtype) for v in (dy, x, gamma)],
                  [np.zeros(shape, dtype), np.zeros(pshape, dtype),
                   np.zeros(pshape, dtype)], **kw)
    for g, w in zip(got, want):
        _close(g.astype(np.float32), w.asnumpy(), dtype)


# ---- softmax and the losses -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("out_f32", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_softmax(emu, dtype, out_f32, axis):
    # (the rows kernel of a last-axis softmax shares a block's threads: not emulated)
    rng = np.random.RandomState(4)
    x = rounded(_data(rng, (3, 5, 4), 2.0), dtype)
    kw = dict(axis=axis)
    if out_f32:
        kw["dtype"] = "float32"        # AMP's softmax: low-precision input, float32 output
    want = mx.nd.softmax(_nd(x), axis=axis).asnumpy()
    y = run_gpu(emu, "softmax", [x.astype(dtype)],
                [np.zeros(x.shape, np.float32 if out_f32 else dtype)], **kw)[0]
    y32 = y if out_f32 else y.astype(np.float32)
    _close(y32, want, dtype)
    if out_f32:
        return
    dy = rounded(_data(rng, x.shape), dtype)
    want = mx.nd._backward_softmax(_nd(dy), _nd(y32), axis=axis).asnumpy()
    dx = run_gpu(emu, "_backward_softmax", [dy.astype(dtype), y],
                 [np.zeros(x.shape, dtype)], axis=axis)[0]
    _close(dx.astype(np.float32), want, dtype)


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("kw", [dict(), dict(normalization="valid", use_ignore=True,
                                             ignore_label=2, grad_scale=2.0)])
def test_softmax_output_backward(emu, dtype, kw):
    rng = np.random.RandomState(5)
    x = rounded(_data(rng, (6, 5)), dtype)
    lab = rng.randint(0, 5, 6).astype(np.float32)
    y = rounded(mx.nd.SoftmaxOutput(_nd(x), _nd(lab), **kw).asnumpy(), dtype)
    want = mx.nd._backward_SoftmaxOutput(_nd(y), _nd(lab), **kw).asnumpy()
    got = run_gpu(emu, "_backward_SoftmaxOutput",
                  [y.astype(dtype), lab.astype(dtype)],
                  [np.zeros(y.shape, dtype)], **kw)[0]
    _close(got.astype(np.float32), want, dtype)


@pytest.mark.parametrize("dtype", LOWP)
def test_softmax_cross_entropy_losses(emu, dtype):
    rng = np.random.RandomState(6)
    x = rounded(_data(rng, (7, 6), 3.0), dtype)
    lab = np.array([0, 5, 2, 1, 4, 3, 3], np.float32)
    L = lab.astype(dtype)
    want = mx.nd._softmax_ce_rows(_nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "_softmax_ce_rows", [x.astype(dtype), L],
                  [np.zeros(7, dtype)])[0]
    _close(got.astype(np.float32), want, dtype)
    g = rounded(rng.rand(7).astype(np.float32), dtype)
    want = mx.nd._backward_softmax_ce_rows(_nd(g), _nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "_backward_softmax_ce_rows",
                  [g.astype(dtype), x.astype(dtype), L], [np.zeros(x.shape, dtype)])[0]
    _close(got.astype(np.float32), want, dtype)
    want = mx.nd.softmax_cross_entropy(_nd(x), _nd(lab)).asnumpy()
    got = run_gpu(emu, "softmax_cross_entropy", [x.astype(dtype), L],
                  [np.zeros(1, dtype)])[0]
    _close(got.astype(np.float32), want, dtype)


# ---- Dropout ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
def test_dropout_keeps_the_cpu_stream(emu, dtype):
    # the mask is the CPU's Philox draw (float32 kernel, same key and counter); kept values
    # are x * 1/(1-p) in the low-precision type
    from mxc._core.handle import push_kernel
    p = 0.3
    x = rounded(_data(np.random.RandomState(7), (5, 11)), dtype)
    out, mask = np.zeros(x.shape, dtype), np.zeros(x.shape, dtype)
    with mx.autograd.train_mode():
        calls = kernel_calls("Dropout", [x.astype(dtype)], [out, mask], p=p)
    (name, a, ins, outs, fam, kern, ia, fa), = calls
    spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
    emu_spec(emu, spec, ins, outs)
    table = importlib.import_module("mxc.ops.cpu.random").KERNELS["dropout"]
    co, cm = mx.nd.zeros(x.shape), mx.nd.zeros(x.shape)
    push_kernel(table[cm._dcode], [_nd(x)], [co, cm], tuple(ia), tuple(fa), b"dropout", 1)
    kept = cm.asnumpy() != 0
    assert 0 < kept.sum() < kept.size
    m = mask.astype(np.float32)
    np.testing.assert_array_equal(m != 0, kept)
    scale = rounded(np.float32(1) / np.float32(1 - p), dtype)
    np.testing.assert_array_equal(m[kept], scale)
    np.testing.assert_array_equal(out.astype(np.float32), rounded(x * np.where(kept, scale, 0),
                                                                   dtype))


# ---- Convolution -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("shape,kw", [
    ((2, 4, 7, 6), dict(kernel=(3, 3), num_filter=6, pad=(1, 1))),
    ((2, 4, 9, 8), dict(kernel=(3, 2), num_filter=4, stride=(2, 1), dilate=(2, 1), pad=(1, 0),
                        num_group=2)),
])
def test_convolution(emu, dtype, shape, kw):
    rng = np.random.RandomState(8)
    cg = shape[1] // kw.get("num_group", 1)
    x = rounded(_data(rng, shape), dtype)
    w = rounded(_data(rng, (kw["num_filter"], cg) + kw["kernel"], 0.3), dtype)
    b = rounded(_data(rng, (kw["num_filter"],)), dtype)
    want = mx.nd.Convolution(_nd(x), _nd(w), _nd(b), **kw).asnumpy()
    y = run_gpu(emu, "Convolution", [v.astype(dtype) for v in (x, w, b)],
                [np.zeros(want.shape, dtype)], **kw)[0]
    _close(y.astype(np.float32), want, dtype)
    dy = rounded(_data(rng, want.shape), dtype)
    want = mx.nd._backward_Convolution(_nd(dy), _nd(x), _nd(w), _nd(b), **kw)
    got = run_gpu(emu, "_backward_Convolution",
                  [v.astype(dtype) for v in (dy, x, w, b)],
                  [np.zeros(x.shape, dtype), np.zeros(w.shape, dtype),
                   np.zeros(b.shape, dtype)], **kw)
    for g, wv in zip(got, want):
        _close(g.astype(np.float32), wv.asnumpy(), dtype)


# ---- Embedding --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", LOWP)
def test_embedding(emu, dtype):
    rng = np.random.RandomState(9)
    idx = np.array([[0, 3, 3], [5, 1, 9]], np.float32)        # 9 is clipped to the last row
    w = rounded(_data(rng, (6, 4)), dtype)
    kw = dict(input_dim=6, output_dim=4)
    want = mx.nd.Embedding(_nd(idx), _nd(w), **kw).asnumpy()
    y = run_gpu(emu, "Embedding", [idx, w.astype(dtype)],
                [np.zeros(want.shape, dtype)], dtype=dtype, **kw)[0]
    _close(y.astype(np.float32), want, dtype, exact=True)
    g = rounded(_data(rng, want.shape), dtype)
    want = mx.nd._backward_Embedding(_nd(g), _nd(idx), **kw).asnumpy()
    dw = run_gpu(emu, "_backward_Embedding", [g.astype(dtype), idx],
                 [np.zeros(w.shape, dtype)], **kw)[0]
    _close(dw.astype(np.float32), want, dtype)


# ---- multi-precision optimizer updates ------------------------------------------------------------
_MP = [
    # (mp operator, its float32 form, extra state count, attributes)
    ("mp_sgd_update", "sgd_update", 0, dict(lr=0.1, wd=0.01, rescale_grad=0.5,
                                             clip_gradient=1.0)),
    ("mp_sgd_mom_update", "sgd_mom_update", 1, dict(lr=0.05, wd=0.001, momentum=0.9)),
    ("_mp_adamw_update", "_adamw_update", 2, dict(lr=0.01, eta=0.5, wd=0.01, beta1=0.9,
                                                  beta2=0.99, epsilon=1e-6, clip_gradient=2.0)),
]


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("op,op32,nstate,kw", _MP, ids=[m[0] for m in _MP])
def test_multi_precision_updates(emu, dtype, op, op32, nstate, kw):
    # the float32 master weight and states step exactly as the float32 operator steps them on
    # the gradient's low-precision values (the same step function, kernels/hd_math.h); the
    # weight is the new master weight stored in the low-precision type
    rng = np.random.RandomState(10)
    n = 37
    w32 = _data(rng, (n,))
    g = rounded(_data(rng, (n,), 3.0), dtype)
    st = [np.abs(_data(rng, (n,))) for _ in range(nstate)]
    adamw = op == "_mp_adamw_update"
    scale = [np.array([0.5], np.float32)] if adamw else []
    st_c = [_nd(s) for s in st]
    want = getattr(mx.nd, op32)(_nd(w32), _nd(g), *st_c, *[_nd(s) for s in scale],
                                **kw).asnumpy()
    w = w32.astype(dtype)
    st_g = [s.copy() for s in st]
    w32_g = w32.copy()
    out = run_gpu(emu, op, [w, g.astype(dtype)] + st_g + [w32_g] + scale,
                  [np.zeros(n, dtype)], **kw)[0]
    np.testing.assert_array_equal(w32_g, want)
    np.testing.assert_array_equal(out.astype(np.float32), rounded(want, dtype))
    for s, c in zip(st_g, st_c):
        np.testing.assert_array_equal(s, c.asnumpy())


def test_multi_mp_sgd_mom_matches_the_cpu_operator(emu):
    # float16: the multi-tensor operator's GPU launches against the CPU operator, bit for bit
    rng = np.random.RandomState(11)
    arrays = []
    for n in (5, 9):
        arrays += [rng.randn(n).astype(np.float16), rng.randn(n).astype(np.float16),
                   rng.randn(n).astype(np.float32), rng.randn(n).astype(np.float32)]
    arrays[2::4] = [np.abs(a) for a in arrays[2::4]]
    for i in (3, 7):
        arrays[i] = arrays[i - 3].astype(np.float32)
    kw = dict(lrs=(0.1, 0.2), wds=(0.0, 0.01), momentum=0.9, num_weights=2, rescale_grad=0.5)
    cpu = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    want = mx.nd.multi_mp_sgd_mom_update(*cpu, **kw)
    gpu = [a.copy() for a in arrays]
    got = run_gpu(emu, "multi_mp_sgd_mom_update", gpu,
                  [np.zeros(5, np.float16), np.zeros(9, np.float16)], **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w.asnumpy())
    for g, c in zip(gpu, cpu):         # momenta and master weights, updated in place
        np.testing.assert_array_equal(g, c.asnumpy())


# ---- AMP's overflow check ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("float32", "float64") + LOWP)
@pytest.mark.parametrize("bad", [None, np.inf, -np.inf, np.nan])
def test_all_finite(emu, dtype, bad):
    x = np.linspace(-3, 3, 29).astype(np.float32)
    if bad is not None:
        x[17] = bad
    arr = x.astype(dtype)
    want = mx.nd.all_finite(_nd(x)).asnumpy()
    assert want[0] == (bad is None)
    got = run_gpu(emu, "all_finite", [arr], [np.full(1, 7, np.float32)])[0]
    np.testing.assert_array_equal(got, want)


def test_all_finite_checks_as_float32(emu):
    # a float64 beyond float32's range overflows, as on the CPU
    x = np.array([1.0, 1e300], np.float64)
    assert mx.nd.all_finite(mx.nd.array(x, dtype="float64")).asnumpy()[0] == 0
    got = run_gpu(emu, "all_finite", [x], [np.ones(1, np.float32)])[0]
    assert got[0] == 0


@pytest.mark.parametrize("init_output", [True, False])
def test_multi_all_finite_keeps_the_flag(emu, init_output):
    # init_output=False only clears the flag (the loss scaler checks its chunks into one flag)
    ok = [np.ones(4, np.float32), np.arange(6, dtype=np.float16)]
    for start in (1.0, 0.0):
        kw = dict(num_arrays=2, init_output=init_output)
        flag = mx.nd.array([start])
        mx.nd.multi_all_finite(*[mx.nd.array(a, dtype=a.dtype) for a in ok], out=flag, **kw)
        got = run_gpu(emu, "multi_all_finite", ok, [np.array([start], np.float32)],
                      **kw)[0]
        np.testing.assert_array_equal(got, flag.asnumpy())
        assert got[0] == (1.0 if init_output else start)
    bad = [np.ones(4, np.float32), np.array([1, np.inf], np.float16)]
    got = run_gpu(emu, "multi_all_finite", bad, [np.ones(1, np.float32)],
                  num_arrays=2, init_output=False)[0]
    assert got[0] == 0

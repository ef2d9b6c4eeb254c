"""bfloat16 NDArrays reach the GPU's __nv_bfloat16 kernel instances (mxc/ops/bfloat16.py hands
an operator with a GPU array its own forward; mxc/ops/cuda/_launch.py TRAIN_FLOATS).

The operators' GPU calls are taken with arrays of ml_dtypes' bfloat16 (tests/ops/cuda/
_gpucall.py), their launch specs built from those arrays as they are (no float16 stand-ins),
and one spec run through the g++ emulation of its kernel against the CPU's bfloat16 result."""
import shutil

import ml_dtypes
import numpy as np
import pytest

import mxc as mx
from mxc.ops import cuda as S

from ._emu import Launcher
from ._gpucall import kernel_calls

BF = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32


def _bf(rng, *shape):
    return rng.uniform(-2, 2, shape).astype(F32).astype(BF)


def _names(spec):
    launches = spec.get("launches") or spec.get("steps") or [spec]
    return [s["name"] for s in launches if "name" in s]


CASES = [
    ("Pooling", lambda r: ([_bf(r, 2, 3, 6, 6)], [np.empty((2, 3, 3, 3), BF)]),
     dict(kernel=(2, 2), stride=(2, 2), pool_type="max"), "mxc_pool_fwd<__nv_bfloat16>"),
    ("BatchNorm", lambda r: ([_bf(r, 2, 3, 4, 4)] + [np.ones(3, F32)] * 4,
                             [np.empty((2, 3, 4, 4), BF), np.empty(3, F32), np.empty(3, F32)]),
     dict(fix_gamma=False), "mxc_bn_apply<__nv_bfloat16>"),
    ("softmax", lambda r: ([_bf(r, 3, 5)], [np.empty((3, 5), BF)]), {},
     "mxc_softmax_rows<false, __nv_bfloat16, __nv_bfloat16, int>"),
    ("Convolution", lambda r: ([_bf(r, 2, 3, 6, 6), _bf(r, 4, 3, 3, 3)],
                               [np.empty((2, 4, 4, 4), BF)]),
     dict(kernel=(3, 3), num_filter=4, no_bias=True), "mxc_im2col<__nv_bfloat16>"),
    ("Embedding", lambda r: ([np.array([0, 4, 1], F32), _bf(r, 5, 3)], [np.empty((3, 3), BF)]),
     dict(input_dim=5, output_dim=3), "mxc_take<__nv_bfloat16, float>"),
    ("sgd_update", lambda r: ([_bf(r, 7), _bf(r, 7)], [np.empty(7, BF)]), dict(lr=0.1),
     "mxc_sgd_update<__nv_bfloat16>"),
    ("_zeros", lambda r: ([], [np.empty(4, BF)]), dict(shape=(4,), dtype="bfloat16"),
     "mxc_fill<__nv_bfloat16>"),
]


@pytest.mark.parametrize("op,make,kw,want", CASES, ids=[c[0] for c in CASES])
def test_bfloat16_arrays_launch_the_bfloat16_instance(op, make, kw, want):
    ins, outs = make(np.random.RandomState(0))
    calls = kernel_calls(op, ins, outs, **kw)
    assert calls
    names = []
    for name, a, i, o, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (op, kern)
        names += _names(spec)
    assert want in names, names
    assert all("__half" not in n for n in names)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_emulated_bfloat16_pooling_equals_the_cpu(tmp_path_factory):
    """The GPU kernel stores its float average rounded to nearest even, as the CPU's float32
    kernel plus the cast does: the same bits."""
    lib = Launcher(tmp_path_factory, "bf16_arrays_pool", {"pooling": ["mxc_pool_fwd<__nv_bfloat16>"]})
    x = _bf(np.random.RandomState(1), 2, 3, 6, 7)
    y = np.zeros((2, 3, 3, 4), BF)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")
    for name, a, i, o, fam, kern, ia, fa in kernel_calls("Pooling", [x], [y], **kw):
        spec = S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa)
        lib.run_spec(spec, i, o, grid=3, block=7)
    cpu = mx.nd.Pooling(mx.nd.array(x, dtype=BF), **kw).asnumpy()
    assert cpu.dtype == BF
    np.testing.assert_array_equal(y.view(np.uint16), cpu.view(np.uint16))


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_emulated_bfloat16_elementwise_equals_the_cpu(tmp_path_factory):
    """elemwise.cu's bfloat16 instances (float math, rounded to nearest even once) give the
    CPU's bits for exact operations and casts; scalars exactly representable in bfloat16."""
    cases = [("elemwise_add", 2, {}, "mxc_binary<mxc::op_add, __nv_bfloat16>"),
             ("elemwise_mul", 2, {}, "mxc_binary<mxc::op_mul, __nv_bfloat16>"),
             ("broadcast_sub", 2, {}, "mxc_bcast_binary<mxc::op_sub, __nv_bfloat16>"),
             ("relu", 1, {}, "mxc_unary<mxc::op_relu, __nv_bfloat16>"),
             ("square", 1, {}, "mxc_unary<mxc::op_square, __nv_bfloat16>"),
             ("_mul_scalar", 1, {"scalar": 1.5}, "mxc_scalar<mxc::op_mul, __nv_bfloat16>"),
             ("Cast", 1, {"dtype": "float32"}, "mxc_cast<__nv_bfloat16, float>")]
    names = {"elemwise": [c[3] for c in cases if "bcast" not in c[3]]
             + ["mxc_cast<float, __nv_bfloat16>"],
             "broadcast": ["mxc_bcast_binary<mxc::op_sub, __nv_bfloat16>"]}
    lib = Launcher(tmp_path_factory, "bf16_arrays_elemwise", names)
    rng = np.random.RandomState(2)
    for op, nin, kw, want in cases:
        ins = [_bf(rng, 3, 5) for _ in range(nin)]
        if op == "broadcast_sub":
            ins[1] = _bf(rng, 1, 5)
        cpu = getattr(mx.nd, op)(*[mx.nd.array(x, dtype=BF) for x in ins], **kw).asnumpy()
        out = np.zeros(cpu.shape, cpu.dtype)
        calls = kernel_calls(op, ins, [out], **kw)
        for name, a, i, o, fam, kern, ia, fa in calls:
            spec = S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa)
            assert spec is not None and spec["name"] == want, (op, spec)
            lib.run_spec(spec, i, o, grid=3, block=7)
        np.testing.assert_array_equal(out.view(np.uint8), cpu.view(np.uint8), err_msg=op)
    # float32 -> bfloat16 on the device rounds as ml_dtypes (and the CPU's cast kernel)
    f = np.concatenate([rng.uniform(-3, 3, 64).astype(F32),
                        np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38, np.inf], F32)])
    out = np.zeros(f.shape, BF)
    for name, a, i, o, fam, kern, ia, fa in kernel_calls("Cast", [f], [out], dtype="bfloat16"):
        lib.run_spec(S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa),
                     i, o, grid=3, block=7)
    np.testing.assert_array_equal(out.view(np.uint16), f.astype(BF).view(np.uint16))


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_emulated_bfloat16_where_equals_the_cpu(tmp_path_factory):
    """where on bfloat16 data picks bits: a bfloat16 or float32 condition, of the output's shape
    or one per row (elemwise.cu), and broadcast operands (broadcast.cu)."""
    lib = Launcher(tmp_path_factory, "bf16_arrays_where",
                   {"elemwise": ["mxc_where<__nv_bfloat16, __nv_bfloat16>",
                                 "mxc_where<__nv_bfloat16, float>"],
                    "broadcast": ["mxc_bcast_where<__nv_bfloat16, __nv_bfloat16>"]})
    rng = np.random.RandomState(3)
    x, y = _bf(rng, 4, 5), _bf(rng, 4, 5)
    conds = [((rng.randint(0, 2, (4, 5)) * _bf(rng, 4, 5)).astype(BF),
              "mxc_where<__nv_bfloat16, __nv_bfloat16>"),
             (np.array([0, 1, 0, 2], F32), "mxc_where<__nv_bfloat16, float>")]
    for cond, want in conds:
        cpu = mx.nd.where(*[mx.nd.array(a, dtype=a.dtype) for a in (cond, x, y)]).asnumpy()
        assert cpu.dtype == BF
        out = np.zeros((4, 5), BF)
        for name, a, i, o, fam, kern, ia, fa in kernel_calls("where", [cond, x, y], [out]):
            spec = S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa)
            assert spec is not None and spec["name"] == want, spec
            lib.run_spec(spec, i, o, grid=3, block=7)
        np.testing.assert_array_equal(out.view(np.uint16), cpu.view(np.uint16), err_msg=want)
        assert np.count_nonzero(out.view(np.uint16) == x.view(np.uint16)) > 0
        assert np.count_nonzero(out.view(np.uint16) == y.view(np.uint16)) > 0
    # a (1, 5) condition and a (4, 1) x broadcast to (4, 5): the broadcast kernel
    cond, xb = (rng.randint(0, 2, (1, 5)) * 1.0).astype(BF), _bf(rng, 4, 1)
    out = np.zeros((4, 5), BF)
    spec = S.launch_spec("where", {}, [cond, xb, y], [out], family="elemwise", kernel="where")
    assert spec["name"] == "mxc_bcast_where<__nv_bfloat16, __nv_bfloat16>", spec
    lib.run_spec(spec, [cond, xb, y], [out], grid=3, block=7)
    want = np.where(np.broadcast_to(cond, (4, 5)) != 0, np.broadcast_to(xb, (4, 5)), y)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def _specs(op, ins, outs, **kw):
    out = []
    for name, a, i, o, fam, kern, ia, fa in kernel_calls(op, ins, outs, **kw):
        spec = S.launch_spec(name, a, i, o, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (op, kern)
        out.append((fam, spec, i, o))
    return out


def _ulps(a, b):
    return np.abs(a.view(np.int16).astype(np.int32) - b.view(np.int16).astype(np.int32)).max()


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_emulated_bfloat16_activation_equals_the_cpu(tmp_path_factory):
    """What a bfloat16 AMP training step also runs on the GPU (tools/bench/bench_gpu_train.py
    --precision amp_bf16 found it missing): Activation forward (relu and sigmoid are
    elemwise.cu's unary kernels) and backward (activation.cu), computing in float and rounding
    once. relu and its gradient are exact; sigmoid may round
    a last float bit differently from the CPU's float32 kernel: one bfloat16 unit at most."""
    rng = np.random.RandomState(4)
    x, dy = _bf(rng, 3, 4, 5), _bf(rng, 3, 4, 5)
    runs, names = [], {}
    for act in ("relu", "sigmoid"):
        y = mx.nd.Activation(mx.nd.array(x, dtype=BF), act_type=act).asnumpy()
        y32 = y.astype(F32)
        dx = (dy.astype(F32) * ((y32 > 0) if act == "relu" else y32 * (1 - y32))).astype(BF)
        for op, ins, cpu, tol in (("Activation", [x], y, 0 if act == "relu" else 1),
                                  ("_backward_Activation", [dy, y], dx, 0)):
            out = np.zeros(cpu.shape, BF)
            specs = _specs(op, ins, [out], act_type=act)
            for fam, spec, i, o in specs:
                assert "__nv_bfloat16" in spec["name"], spec["name"]
                names.setdefault(spec["family"], set()).add(spec["name"])
            runs.append((op, act, tol, specs, out, cpu))
    libs = {f: Launcher(tmp_path_factory, "bf16_arrays_" + f, {f: sorted(n)})
            for f, n in names.items()}
    for op, act, tol, specs, out, cpu in runs:
        for fam, spec, i, o in specs:
            libs[spec["family"]].run_spec(spec, i, o, grid=3, block=7)
        assert _ulps(out, cpu) <= tol, (op, act, out, cpu)


def test_bfloat16_sum_launches_the_bfloat16_reduction():
    """sum of bfloat16 arrays (the loss's mean in AMP) takes reduce.cu's bfloat16 instances,
    accumulating in double as float16's do (the reductions need a block of threads at once, so
    the GPU suite runs them; NVRTC compiles them in CI)."""
    x = _bf(np.random.RandomState(5), 3, 4, 5)
    for kw in ({"keepdims": True}, {"axis": 1, "keepdims": True}, {"axis": 2, "keepdims": True}):
        shape = mx.nd.sum(mx.nd.array(x, dtype=BF), **kw).shape
        for fam, spec, i, o in _specs("sum", [x], [np.zeros(shape, BF)], **kw):
            launches = spec.get("launches") or [spec]
            assert launches and all("__nv_bfloat16" in s["name"] for s in launches), spec

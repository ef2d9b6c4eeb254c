"""BatchNorm (training and inference, fix_gamma, use_global_stats, output_mean_var, the moving
statistics' update in the backward, float16 data with float32 parameters, any axis) and
LayerNorm / InstanceNorm / GroupNorm forward and backward on the GPU, run on the CPU: the launch
sequence mxc.ops.cuda.launch_spec builds from the operator's own kernel call
(tests/ops/cuda/_gpucall.py) runs on g++-compiled normalization.cu (tests/ops/cuda/_emu.py
Launcher) and must match the CPU operator. The GPU sums in double in another order than the
CPU's blocked sums: float64 agrees to 1e-12, float32 to a few ulp, float16 to one half ulp.

BatchNorm also runs through cuDNN (mxc/ops/cuda/cudnn_norm.py, the ``path`` fixture's "cudnn"):
the fake frontend builds the plans, and each cuDNN step is computed here in numpy from its
descriptor (the pass, the (A, K, B) view, eps) on the buffers its uids name, between the
emulated launches of the same spec (statistics, the moving-statistics update, gamma's ones),
so the graphs each call asks for, their operands and the launches around them are checked
against the CPU operator; float64 data and the inference-formula backward stay on the CUDA C
launches on that path too."""
import shutil

import numpy as np
import pytest

import mxc as mx

from . import _fake_cudnn
from ._emu import Launcher
from ._gpucall import kernel_calls

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")

from mxc.ops import cuda as S  # noqa: E402
from mxc.ops.cuda._launch import instantiations  # noqa: E402

TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-5),
       "float16": dict(rtol=2e-3, atol=2e-3)}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return Launcher(tmp_path_factory, "normalization",
                    {"normalization": sorted(instantiations("normalization")),
                     "init": ["mxc_fill<float>"]})


@pytest.fixture(params=["cuda", "cudnn"])
def path(request, monkeypatch, tmp_path):
    if request.param == "cuda":
        yield request.param
        return
    with _fake_cudnn.installed(monkeypatch, tmp_path):
        yield request.param


def cudnn_bn_step(desc, bufs):
    """What cuDNN computes for one BatchNorm graph, in numpy (float64): bufs {uid: flat array
    of the tensor's dtype}; the data is (A, K, B), the parameters and statistics K floats."""
    from mxc.ops.cuda import cudnn_norm as N
    A, K, B = desc.A, desc.K, desc.B
    for uid, b in bufs.items():
        data = uid in (N.UID_X, N.UID_Y, N.UID_DY, N.UID_DX)
        assert b.size == (A * K * B if data else K), (desc.pass_, uid, b.size)
        assert b.dtype == (np.dtype(desc.dtype) if data else np.float32), (uid, b.dtype)

    def get(uid, data=False):
        v = bufs[uid].astype(np.float64)
        return v.reshape(A, K, B) if data else v.reshape(1, K, 1)

    def put(uid, v):
        bufs[uid][...] = v.reshape(-1)
    x = get(N.UID_X, True)
    if desc.pass_ == "train":
        mean = x.mean(axis=(0, 2), keepdims=True)
        inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=(0, 2), keepdims=True) + desc.eps)
        put(N.UID_MEAN, mean)
        put(N.UID_INVSTD, inv)
    else:
        mean, inv = get(N.UID_MEAN), get(N.UID_INVSTD)
    xhat = (x - mean) * inv
    if desc.pass_ != "bwd":
        put(N.UID_Y, xhat * get(N.UID_SCALE) + get(N.UID_BIAS))
        return
    dy, n = get(N.UID_DY, True), A * B
    db = dy.sum(axis=(0, 2), keepdims=True)
    dg = (dy * xhat).sum(axis=(0, 2), keepdims=True)
    put(N.UID_DBIAS, db)
    put(N.UID_DSCALE, dg)
    put(N.UID_DX, get(N.UID_SCALE) * inv / n * (n * dy - db - xhat * dg))


def run_steps(emu, spec, ins, outs):
    """A spec of launches and cuDNN steps in order on one workspace, as the device worker."""
    ws = np.zeros(int(spec["workspace"]) + 256, np.uint8)

    def buf(ref, uid, desc):
        from mxc.ops.cuda import cudnn_norm as N
        kind, v = ref
        if kind != "ws":
            return (ins if kind == "in" else outs)[v].reshape(-1)
        assert uid not in (N.UID_X, N.UID_Y, N.UID_DY, N.UID_DX)
        return ws[int(v):int(v) + 4 * desc.K].view(np.float32)
    for step in spec["steps"]:
        if "cudnn" in step:
            assert step["ws_at"] % 256 == 0 and step["ws_at"] + 256 <= spec["workspace"]
            cudnn_bn_step(step["cudnn"], {uid: buf(ref, uid, step["cudnn"])
                                          for uid, ref in step["tensors"].items()})
        else:
            emu.run(step, ins, outs, ws, grid=3, block=5)


def run_gpu(emu, opname, inputs, outputs, cudnn=None, **kw):
    """outputs filled by the GPU spec of each kernel call; cudnn: whether each call must go
    through cuDNN (None: not checked)."""
    calls = kernel_calls(opname, inputs, outputs, **kw)
    assert calls
    for name, a, ins, outs, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (opname, kern)
        if cudnn is not None:
            assert any("cudnn" in st for st in spec.get("steps", ())) == cudnn, (kern, cudnn)
        if "steps" in spec:
            run_steps(emu, spec, ins, outs)
        else:
            emu.run_spec(spec, ins, outs, grid=3, block=5)
    return outputs


def _close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("train,kw", [
    (True, dict(fix_gamma=False)),
    (True, dict(fix_gamma=True, momentum=0.8)),
    (True, dict(fix_gamma=False, axis=-1)),
    (True, dict(fix_gamma=False, use_global_stats=True)),
    (False, dict(fix_gamma=False)),
])
def test_batchnorm_matches_the_cpu(emu, path, dtype, train, kw):
    rng = np.random.RandomState(0)
    pdt = "float32" if dtype == "float16" else dtype
    x = (rng.randn(4, 3, 5, 6) * 2 + 1).astype(dtype)
    c = x.shape[kw.get("axis", 1)]
    gamma, beta = rng.rand(c).astype(pdt) + 0.5, rng.randn(c).astype(pdt)
    mm, mv = rng.randn(c).astype(pdt), rng.rand(c).astype(pdt) + 0.5
    kw = dict(kw, eps=1e-3, output_mean_var=True)
    nd = lambda v: mx.nd.array(v, dtype=v.dtype)  # noqa: E731
    # cuDNN takes 16/32-bit data; its backward is the batch-statistics gradient only
    fwd_cudnn = path == "cudnn" and dtype != "float64"
    bwd_cudnn = fwd_cudnn and train and not kw.get("use_global_stats")
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        want = [o.asnumpy() for o in mx.nd.BatchNorm(nd(x), nd(gamma), nd(beta), nd(mm),
                                                      nd(mv), **kw)]
        got = run_gpu(emu, "BatchNorm", [x, gamma, beta, mm, mv],
                      [np.zeros_like(x), np.zeros(c, pdt), np.zeros(c, pdt)], cudnn=fwd_cudnn,
                      **kw)
        for g, w in zip(got, want):
            _close(g, w, dtype)
        dy = rng.randn(*x.shape).astype(dtype)
        bkw = {k: v for k, v in kw.items() if k != "output_mean_var"}
        mm_c, mv_c = nd(mm), nd(mv)
        want = [o.asnumpy() for o in mx.nd._backward_BatchNorm(nd(dy), nd(x), nd(gamma),
                                                                nd(beta), mm_c, mv_c, **bkw)]
        mm_g, mv_g = mm.copy(), mv.copy()
        got = run_gpu(emu, "_backward_BatchNorm", [dy, x, gamma, beta, mm_g, mv_g],
                      [np.zeros_like(x), np.full(c, 7, pdt), np.zeros(c, pdt)],
                      cudnn=bwd_cudnn, **bkw)
    for g, w in zip(got, want):
        _close(g, w, dtype)
    # the moving statistics: updated in training without use_global_stats, else untouched
    _close(mm_g, mm_c.asnumpy(), dtype)
    _close(mv_g, mv_c.asnumpy(), dtype)
    assert (not np.array_equal(mm_g, mm)) == (train and not kw.get("use_global_stats"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op,shape,kw", [
    ("LayerNorm", (4, 6, 10), dict(axis=-1)),
    ("LayerNorm", (4, 6, 10), dict(axis=1, output_mean_var=True)),
    ("InstanceNorm", (3, 4, 5, 2), dict()),
    ("GroupNorm", (3, 6, 4, 2), dict(num_groups=3, output_mean_var=True)),
])
def test_row_norms_match_the_cpu(emu, dtype, op, shape, kw):
    rng = np.random.RandomState(1)
    x = (rng.randn(*shape) * 3 + 2).astype(dtype)
    pshape = {"LayerNorm": (shape[kw.get("axis", -1)],), "InstanceNorm": (shape[1],),
              "GroupNorm": (kw.get("num_groups", 1),)}[op]
    gamma, beta = rng.rand(*pshape).astype(dtype) + 0.5, rng.randn(*pshape).astype(dtype)
    kw = dict(kw, eps=1e-4)
    nd = lambda v: mx.nd.array(v, dtype=v.dtype)  # noqa: E731
    want = getattr(mx.nd, op)(nd(x), nd(gamma), nd(beta), **kw)
    want = [o.asnumpy() for o in (want if isinstance(want, (list, tuple)) else [want])]
    got = run_gpu(emu, op, [x, gamma, beta], [np.zeros(w.shape, dtype) for w in want], **kw)
    for g, w in zip(got, want):
        _close(g, w, dtype)
    dy = rng.randn(*shape).astype(dtype)
    bkw = {k: v for k, v in kw.items() if k != "output_mean_var"}
    want = [o.asnumpy() for o in getattr(mx.nd, "_backward_" + op)(nd(dy), nd(x), nd(gamma),
                                                                    **bkw)]
    got = run_gpu(emu, "_backward_" + op, [dy, x, gamma],
                  [np.zeros_like(x), np.zeros(pshape, dtype), np.zeros(pshape, dtype)], **bkw)
    for g, w in zip(got, want):
        _close(g, w, dtype if dtype != "float16" else "float16")

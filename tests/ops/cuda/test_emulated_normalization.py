"""BatchNorm (training and inference, fix_gamma, use_global_stats, output_mean_var, the moving
statistics' update in the backward, float16 data with float32 parameters, any axis) and
LayerNorm / InstanceNorm / GroupNorm forward and backward on the GPU, run on the CPU: the launch
sequence mxc.ops.cuda.launch_spec builds from the operator's own kernel call
(tests/ops/cuda/_gpucall.py) runs on g++-compiled normalization.cu (tests/ops/cuda/_emu.py
Launcher) and must match the CPU operator. The GPU sums in double in another order than the
CPU's blocked sums: float64 agrees to 1e-12, float32 to a few ulp, float16 to one half ulp."""
import shutil

import numpy as np
import pytest

import mxc as mx

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
                    {"normalization": sorted(instantiations("normalization"))})


def run_gpu(emu, opname, inputs, outputs, **kw):
    calls = kernel_calls(opname, inputs, outputs, **kw)
    assert calls
    for name, a, ins, outs, fam, kern, ia, fa in calls:
        spec = S.launch_spec(name, a, ins, outs, family=fam, kernel=kern, iattr=ia, fattr=fa)
        assert spec is not None, (opname, kern)
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
def test_batchnorm_matches_the_cpu(emu, dtype, train, kw):
    rng = np.random.RandomState(0)
    pdt = "float32" if dtype == "float16" else dtype
    x = (rng.randn(4, 3, 5, 6) * 2 + 1).astype(dtype)
    c = x.shape[kw.get("axis", 1)]
    gamma, beta = rng.rand(c).astype(pdt) + 0.5, rng.randn(c).astype(pdt)
    mm, mv = rng.randn(c).astype(pdt), rng.rand(c).astype(pdt) + 0.5
    kw = dict(kw, eps=1e-3, output_mean_var=True)
    nd = lambda v: mx.nd.array(v, dtype=v.dtype)  # noqa: E731
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        want = [o.asnumpy() for o in mx.nd.BatchNorm(nd(x), nd(gamma), nd(beta), nd(mm),
                                                      nd(mv), **kw)]
        got = run_gpu(emu, "BatchNorm", [x, gamma, beta, mm, mv],
                      [np.zeros_like(x), np.zeros(c, pdt), np.zeros(c, pdt)], **kw)
        for g, w in zip(got, want):
            _close(g, w, dtype)
        dy = rng.randn(*x.shape).astype(dtype)
        bkw = {k: v for k, v in kw.items() if k != "output_mean_var"}
        mm_c, mv_c = nd(mm), nd(mv)
        want = [o.asnumpy() for o in mx.nd._backward_BatchNorm(nd(dy), nd(x), nd(gamma),
                                                                nd(beta), mm_c, mv_c, **bkw)]
        mm_g, mv_g = mm.copy(), mv.copy()
        got = run_gpu(emu, "_backward_BatchNorm", [dy, x, gamma, beta, mm_g, mv_g],
                      [np.zeros_like(x), np.zeros(c, pdt), np.zeros(c, pdt)], **bkw)
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

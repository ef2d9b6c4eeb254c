"""The CUDA reductions (mxc/ops/cuda/reduce.cu) run on the CPU: g++ compiles the family's text
(as NVRTC gets it) against the emulation header. ``mxc::unravel`` (flat index over the reduced
or kept dims -> element offset) is compared with numpy's unravel_index for every index of
random shapes and strides; then each launch path the operators take (a block per output row
with its block reduction, the two-stage split of few long rows, a thread per output, argmax /
argmin with their NaN and tie rules, all_finite) runs from the operator's own kernel call and
launch spec, with a block's threads meeting as on a device, against numpy."""
import ctypes
import shutil

import numpy as np
import pytest

from mxc.ops.cuda._launch import instantiations

from ._emu import Launcher, build, cuda_loader, run_spec
from ._gpucall import kernel_calls

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    text = cuda_loader().source("reduce") + r'''
extern "C" long long t_unravel(long long i, long long nd, const long long *shape,
                               const long long *stride) {
  return mxc::unravel(i, nd, shape, stride);
}
'''
    so = build(tmp_path_factory, "reduce_index", text)
    so.t_unravel.restype = ctypes.c_longlong
    so.t_unravel.argtypes = [ctypes.c_longlong, ctypes.c_longlong,
                             ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(ctypes.c_longlong)]
    return so


@pytest.mark.parametrize("shape", [(), (1,), (7,), (1 << 20,), (3, 5), (1, 6), (2, 3, 4),
                                   (5, 1, 3, 2), (2, 2, 2, 2, 3)])
def test_unravel_matches_numpy(lib, shape, rng):
    nd = len(shape)
    stride = rng.integers(1, 1000, size=max(nd, 1)).astype(np.int64)
    shp = np.array(shape or (1,), np.int64)
    total = int(np.prod(shape)) if shape else 1
    idx = np.arange(total) if total <= 4096 else rng.integers(0, total, 4096)
    P = ctypes.POINTER(ctypes.c_longlong)
    got = [lib.t_unravel(int(i), nd, shp.ctypes.data_as(P), stride.ctypes.data_as(P)) for i in idx]
    if nd == 0:
        want = [0] * len(idx)
    else:
        want = (np.stack(np.unravel_index(idx, shape)) * stride[:nd, None]).sum(axis=0).tolist()
    assert got == want


# ---- the reductions through their launch specs ------------------------------------------------
def _specs(opname, x, out, **kw):
    from mxc.ops import cuda as S
    calls = kernel_calls(opname, [x], [out], **kw)
    return [S.launch_spec(n, a, i, o, family=f, kernel=k, iattr=ia, fattr=fa)
            for n, a, i, o, f, k, ia, fa in calls]


def _x(shape, dtype, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 3
    return x.astype(dtype) if np.dtype(dtype).kind == "f" else np.round(x * 10).astype(dtype)


# (operator, input shape, dtype, attributes, the kernels its spec launches)
CASES = [
    ("sum", (3, 1000), "float32", dict(axis=1), ["mxc_reduce_rows"]),
    ("mean", (4, 40, 5), "float64", dict(axis=(1, 2)), ["mxc_reduce_rows"]),
    ("max", (2, 70001), "float32", dict(axis=1), ["mxc_reduce_rows", "mxc_reduce_parts"]),
    ("min", (70001,), "float64", dict(axis=0), ["mxc_reduce_rows", "mxc_reduce_parts"]),
    ("sum", (5, 333), "int32", dict(axis=1), ["mxc_reduce_rows"]),
    ("prod", (2, 50), "float64", dict(axis=1), ["mxc_reduce_rows"]),
    ("norm", (6, 300), "float32", dict(axis=1), ["mxc_reduce_rows"]),
    ("norm", (6, 300), "float64", dict(axis=1, ord=1), ["mxc_reduce_rows"]),
    ("sum", (40, 7), "float32", dict(axis=0), ["mxc_reduce_cols"]),
    ("argmax", (5, 300), "float32", dict(axis=1), ["mxc_argreduce"]),
    ("argmin", (4, 37, 3), "float64", dict(axis=1), ["mxc_argreduce"]),
]

_NP = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
       "argmax": np.argmax, "argmin": np.argmin}


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    names = set()
    for op, shape, dt, kw, _ in CASES:
        x = _x(shape, dt)
        out = np.zeros(_reduced(shape, kw), dt)
        for spec in _specs(op, x, out, keepdims=True, **kw):
            names.update(l["name"] for l in spec.get("launches", [spec]))
    names.update(n for n in instantiations("reduce")
                 if n.startswith(("mxc_all_finite", "mxc_finite_init")))
    return Launcher(tmp_path_factory, "reduce", {"reduce": sorted(names)})


def _reduced(shape, kw):
    axes = kw["axis"] if isinstance(kw["axis"], tuple) else (kw["axis"],)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _run(emu, specs, x, out):
    for spec in specs:
        # the spec's block of 256 threads; at most 5 blocks (the kernels stride over the grid)
        run_spec(spec, [x], [out], lambda launch, ws: emu.run(
            launch, [x], [out], ws, grid=min(launch["grid"][0], 5)))


@pytest.mark.parametrize("case", CASES, ids=["%s-%s-%s" % (c[0], c[2], "x".join(map(str, c[1])))
                                            for c in CASES])
def test_reduction_through_its_spec(emu, case):
    op, shape, dt, kw, kernels = case
    x = _x(shape, dt, seed=len(shape))
    if op in ("argmax", "argmin"):
        x = np.round(x)                        # ties: the first index wins
        x[1, 4] = np.nan                       # the first NaN wins, as on the CPU and in numpy
        x[1, 9] = np.nan
    out = np.full(_reduced(shape, kw), -7, dt)
    specs = _specs(op, x, out, keepdims=True, **kw)
    launched = [l["name"].split("<")[0] for s in specs for l in s.get("launches", [s])]
    assert launched == kernels
    assert all(l["block"] == (256,) for s in specs for l in s.get("launches", [s]))
    _run(emu, specs, x, out)
    x64 = x.astype(np.float64)
    axis = kw["axis"]
    if op == "norm":
        want = (np.abs(x64).sum(axis=axis, keepdims=True) if kw.get("ord") == 1
                else np.sqrt((x64 * x64).sum(axis=axis, keepdims=True)))
    else:
        want = _NP[op](x64, axis=axis, keepdims=True)
    if np.dtype(dt).kind == "f":
        np.testing.assert_allclose(out, want.astype(dt), rtol=2e-7 if dt == "float32" else 1e-13)
    else:
        np.testing.assert_array_equal(out, want.astype(dt))


@pytest.mark.parametrize("init", [True, False])
def test_all_finite_through_its_spec(emu, init):
    from mxc.ops.cuda.reduce import all_finite

    class Arr:
        def __init__(self, a):
            self.shape, self.dtype, self.ndim = a.shape, a.dtype.type, a.ndim
    good, bad = np.ones(1000, np.float32), np.arange(3000, dtype=np.float64)
    bad[2999] = 1e300                           # finite in float64, inf as float32: an overflow
    for arrays, want in [([good], 1.0), ([good, bad], 0.0), ([bad, good], 0.0)]:
        flag = np.array([0.5], np.float32)       # without init_output the flag only clears
        spec = all_finite([Arr(a) for a in arrays], init)
        run_spec(spec, arrays, [flag], lambda launch, ws: emu.run(launch, arrays, [flag], ws))
        assert flag[0] == (want if init or want == 0.0 else 0.5), (arrays, init)

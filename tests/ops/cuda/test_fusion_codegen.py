"""The generated kernel of a fused pointwise chain (mxc/ops/cuda/fusion.py): run on the CPU
through the g++ emulation (tests/ops/cuda/_emu.py) it writes, bit for bit, what the per-operator
kernels of elemwise.cu write when launched one after the other (emulated the same way); and it
compiles through NVRTC (skipped without cupy + NVRTC, as test_compile.py)."""
import types

import numpy as np
import pytest

from mxc.ops import registry
from mxc.ops.cuda import elemwise, fusion, loader

from ._emu import _PACKED, Launcher, build

try:
    from cupy.cuda import nvrtc
    nvrtc.getVersion()
    HAVE_NVRTC = True
except Exception:  # cupy or libnvrtc missing
    HAVE_NVRTC = False


class Arr:
    """A stand-in for a gpu(0) NDArray in a recorded call (what fusion reads of one)."""

    def __init__(self, n, dtype):
        self.shape, self.dtype, self._offset = (n,), np.dtype(dtype).type, 0
        self._chunk = object()
        self._ctx = types.SimpleNamespace(device_typeid=2, device_id=0)


def _chain(n, dt, in_place):
    """Records of exp, add, scalar mul, clip, rscalar sub, sigmoid, binary mul over 2 inputs
    (an intermediate read twice; with in_place the last result overwrites input x)."""
    x, w = Arr(n, dt), Arr(n, dt)
    t = [Arr(n, dt) for _ in range(6)]
    out = x if in_place else Arr(n, dt)
    calls = [("unary:exp", [x], t[0], ()), ("binary:add", [t[0], w], t[1], ()),
             ("scalar:mul", [t[1]], t[2], (3.0,)), ("clip", [t[2]], t[3], (-1.0, 2.5)),
             ("rscalar:sub", [t[3]], t[4], (1.5,)), ("unary:sigmoid", [t[4]], t[5], ()),
             ("binary:mul", [t[5], t[1]], out, ())]
    recs = [("op", {}, ins, [y], "elemwise", k, (), f) for k, ins, y, f in calls]
    return recs, (x, w)


DTYPES = ("float32", "float16", "float64")


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    """(per-operator Launcher, {dtype: (library of the generated kernel, records, inputs)})."""
    gen, texts, names = {}, [], set()
    for dt in DTYPES:
        recs, xs = _chain(1000, dt, in_place=(dt == "float16"))
        name, src, *_ = fusion.chain_launch(recs)
        gen[dt] = (name, recs, xs)
        texts.append(loader.inline_text(src))
        for r in recs:
            names.add(elemwise.build("op", r[5], {}, r[2], r[3], (), _floats(r))["name"])
    # one library per generated kernel (each text repeats the headers)
    libs = {}
    for dt, text in zip(DTYPES, texts):
        name = gen[dt][0]
        libs[dt] = build(tmp_path_factory, "fused_" + dt, text + _PACKED
                         + 'extern "C" void k0(unsigned g, unsigned b, void **a) { '
                           'mxc_emu_run(g, b, [&] { mxc_emu_packed(%s, a); }); }' % name)
    ref = Launcher(tmp_path_factory, "unfused", {"elemwise": sorted(names)})
    return ref, libs, gen


def _floats(rec):
    return registry.declared_kernel("elemwise", rec[5]).floats_of(rec[7])


@pytest.mark.parametrize("dt", DTYPES)
def test_fused_equals_unfused_bitwise(emu, dt):
    ref, libs, gen = emu
    name, recs, (x, w) = gen[dt]
    rng = np.random.default_rng(7)
    start = {id(x): rng.standard_normal(1000).astype(dt),
             id(w): rng.standard_normal(1000).astype(dt)}
    # unfused: each call's own kernel, in order, on buffers per array
    bufs = {k: v.copy() for k, v in start.items()}
    for r in recs:
        y = r[3][0]
        bufs.setdefault(id(y), np.zeros(1000, dt))
        launch = elemwise.build("op", r[5], {}, r[2], r[3], (), _floats(r))
        ref.run(launch, [bufs[id(a)] for a in r[2]], [bufs[id(y)]])
    # fused: one launch of the generated kernel
    _, _, ins, outs, args, grid, block = fusion.chain_launch(recs)
    fb = {k: v.copy() for k, v in start.items()}
    for a in outs:
        fb.setdefault(id(a), np.zeros(1000, dt))
    assert len(ins) == 2 and len(outs) == 7
    fused = Launcher.__new__(Launcher)
    fused.lib, fused.fn_of = libs[dt], {("gen", name): "k0"}
    fused.run({"family": "gen", "name": name, "args": args, "grid": grid, "block": block},
              [fb[id(a)] for a in ins], [fb[id(a)] for a in outs])
    for a in outs:
        assert fb[id(a)].tobytes() == bufs[id(a)].tobytes(), dt
    # the chain computed something (not all zeros, not the inputs)
    last = recs[-1][3][0]
    assert np.count_nonzero(fb[id(last)]) > 900
    assert not np.array_equal(fb[id(last)], start[id(x)])


def test_source_keyed_by_signature():
    """Scalars are arguments: the same chain with other scalars reuses the source; another
    dtype or operator makes another."""
    a, _ = _chain(64, "float32", False)
    b, _ = _chain(128, "float32", False)
    b[2] = b[2][:7] + ((7.0,),)
    c, _ = _chain(64, "float64", False)
    na, sa, *_ = fusion.chain_launch(a)
    nb, sb, *_, args_b, _, _ = fusion.chain_launch(b)
    nc, _, *_ = fusion.chain_launch(c)
    assert (na, sa) == (nb, sb) and na != nc
    assert ("f64", 7.0) in args_b and ("i64", 128) in args_b


@pytest.mark.skipif(not HAVE_NVRTC, reason="cupy with NVRTC not installed (pip install 'mxc[gpu]')")
@pytest.mark.parametrize("dt", DTYPES)
def test_generated_source_compiles(dt):
    recs, _ = _chain(1000, dt, in_place=False)
    name, src, *_ = fusion.chain_launch(recs)
    prog = nvrtc.createProgram(loader.inline_text(src), name + ".cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(loader.options(90)) + ["-Werror=all-warnings"])
        except nvrtc.NVRTCError:
            raise AssertionError(nvrtc.getProgramLog(prog)) from None
        assert nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)

"""The generated kernel of a fused pointwise chain (mxc/ops/cuda/fusion.py): run on the CPU
through the g++ emulation (tests/ops/cuda/_emu.py) it writes, bit for bit, what the per-operator
kernels of elemwise.cu write when launched one after the other (emulated the same way); and it
compiles through NVRTC (skipped without cupy + NVRTC, as test_compile.py)."""
import ctypes
import importlib
import types

import ml_dtypes  # noqa: F401  (registers the dtype name "bfloat16")
import numpy as np
import pytest

from mxc.ops import registry
from mxc.ops.cuda import elemwise, fusion, loader

from ._emu import PACKED, Launcher, build, packed_wrapper

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


def _act_chain(n, dt, in_place):
    """Activation/LeakyReLU forwards (gelu, softrelu, leaky with a slope; relu, sigmoid and tanh
    are elemwise unary kernels) and a backward
    chain (tanh', relu', elu', softsign', gelu', leaky'), over inputs x, w, y."""
    x, w, y = Arr(n, dt), Arr(n, dt), Arr(n, dt)
    t = [Arr(n, dt) for _ in range(12)]
    out = x if in_place else Arr(n, dt)
    calls = [("activation", "fwd:gelu", [x], t[0], ()),
             ("elemwise", "scalar:mul", [t[0]], t[1], (0.75,)),
             ("activation", "fwd:softrelu", [t[1]], t[2], ()),
             ("elemwise", "binary:add", [t[2], w], t[3], ()),
             ("elemwise", "unary:tanh", [t[3]], t[4], ()),
             ("activation", "fwd:xelu", [t[4]], t[5], (0.2,)),
             ("activation", "bwd:tanh", [w, t[4]], t[6], ()),
             ("activation", "bwd:relu", [t[6], y], t[7], ()),
             ("activation", "bwd:elu", [t[7], y], t[8], (0.3,)),
             ("activation", "bwd:softsign", [t[8], x], t[9], ()),
             ("activation", "bwd:gelu", [t[9], t[5]], t[10], ()),
             ("activation", "bwd:xelu", [t[10], y], out, (0.1,))]
    recs = [("op", {}, ins, [o], fam, k, (), f) for fam, k, ins, o, f in calls]
    return recs, (x, w, y)


CHAINS = {"elemwise": _chain, "activation": _act_chain}


CASES = [("elemwise", "float32"), ("elemwise", "float16"), ("elemwise", "float64"),
         ("elemwise", "bfloat16"),
         ("activation", "float32"), ("activation", "float16")]


def _spec(rec):
    build = importlib.import_module("mxc.ops.cuda." + rec[4]).build
    sig = registry.declared_kernel(rec[4], rec[5])
    return build("op", rec[5], {}, rec[2], rec[3], (), sig.floats_of(rec[7]))


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    """({family: per-operator Launcher}, {case: library of its generated kernel}, {case: (kernel name,
    records, inputs)})."""
    gen, libs, names = {}, {}, {}
    for chain, dt in CASES:
        recs, xs = CHAINS[chain](1001, dt, in_place=(dt == "float16"))
        name, src, *_ = fusion.chain_launch(recs)
        gen[chain, dt] = (name, recs, xs)
        for r in recs:
            names.setdefault(r[4], set()).add(_spec(r)["name"])
        # one library per generated kernel (each text repeats the headers)
        libs[chain, dt] = build(tmp_path_factory, "fused_%s_%s" % (chain, dt),
                                loader.inline_text(src) + PACKED + packed_wrapper("k0", name))
        libs[chain, dt].k0.restype = ctypes.c_char_p
    # one Launcher per family (each family's text keeps its own headers)
    ref = {f: Launcher(tmp_path_factory, "unfused_" + f, {f: sorted(v)})
           for f, v in names.items()}
    return ref, libs, gen


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_fused_equals_unfused_bitwise(emu, case):
    ref, libs, gen = emu
    dt = case[1]
    name, recs, xs = gen[case]
    rng = np.random.default_rng(7)
    start = {id(a): (rng.standard_normal(1001) * 2).astype(dt) for a in xs}
    # unfused: each call's own kernel, in order, on buffers per array
    bufs = {k: v.copy() for k, v in start.items()}
    for r in recs:
        y = r[3][0]
        bufs.setdefault(id(y), np.zeros(1001, dt))
        ref[r[4]].run(_spec(r), [bufs[id(a)] for a in r[2]], [bufs[id(y)]])
    # fused: one launch of the generated kernel
    _, _, ins, outs, args, grid, block = fusion.chain_launch(recs)
    fused = Launcher.__new__(Launcher)
    fused.lib, fused.fn_of = libs[case], {("gen", name): "k0"}
    assert len(ins) == len(xs) and len(outs) == len(recs)

    def buffer(shift, like=None):
        """1001 elements `shift` elements into a 16-byte aligned block (shift 1: the kernel
        takes its element-by-element path)."""
        raw = np.zeros(1001 + 8 + shift, dt)
        off = (-raw.ctypes.data % 16) // raw.itemsize
        b = raw[off + shift:off + shift + 1001]
        if like is not None:
            b[:] = like
        return b

    for shift in (0, 1):
        fb = {k: buffer(shift, v) for k, v in start.items()}
        for a in outs:
            fb.setdefault(id(a), buffer(shift))
        fused.run({"family": "gen", "name": name, "args": args, "grid": grid, "block": block},
                  [fb[id(a)] for a in ins], [fb[id(a)] for a in outs])
        for k, a in enumerate(outs):
            assert fb[id(a)].tobytes() == bufs[id(a)].tobytes(), (case, shift, k)
    # the chain computed something (not all zeros, not the first input)
    last = recs[-1][3][0]
    assert np.count_nonzero(fb[id(last)]) > 300
    assert not np.array_equal(fb[id(last)], start[id(xs[0])])


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
@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_generated_source_compiles(case):
    recs, _ = CHAINS[case[0]](1000, case[1], in_place=False)
    name, src, *_ = fusion.chain_launch(recs)
    for arch in (80, 90):
        prog = nvrtc.createProgram(loader.inline_text(src), name + ".cu", [], [])
        try:
            try:
                nvrtc.compileProgram(prog, list(loader.options(arch))
                                     + ["-Werror=all-warnings", "--ptxas-options=-v"])
            except nvrtc.NVRTCError:
                raise AssertionError(nvrtc.getProgramLog(prog)) from None
            assert nvrtc.getCUBIN(prog)
            (stats,) = loader.parse_ptxas(nvrtc.getProgramLog(prog)).values()
            assert stats["stack"] == stats["spill_st"] == stats["lmem"] == 0, (arch, stats)
        finally:
            nvrtc.destroyProgram(prog)

"""What every family's launch builder (mxc/ops/cuda/<family>.py) shares: dtypes and their C
names, launch geometry, argument packing, index maps, and the checks a spec may run on the device.

A launch is a dict (family, name, grid, block, args) whose args are (kind, value) pairs that the
device launcher (mxc/_core/cuda.pyx ``push_launch``) packs: ("in", i) / ("out", i) the device
pointer of input / output i, ("ptr", 0) a null pointer, ("bytes", b) a struct by value (here
always int64 arrays, see common.cuh), ("ws", offset) a pointer into the spec's workspace, and
scalars "i32", "i64", "u8".."u64", "f32", "f64".
"""
import importlib
import struct

import numpy as np


class NoKernel(Exception):
    """Raised by a builder for arrays the GPU kernels do not cover (a dtype without
    instantiations, more dims than an index map holds): the operator has no GPU kernel for
    them. Any other exception from a builder is a bug and propagates."""


DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64")
FLOATS = ("float32", "float64", "float16")
# the layer, loss, dropout, embedding and optimizer kernels (what mixed-precision training runs)
# also come in bfloat16 (a numpy dtype named "bfloat16", e.g. ml_dtypes'), computing in float
TRAIN_FLOATS = FLOATS + ("bfloat16",)
CTYPE = {"float32": "float", "float64": "double", "float16": "__half", "uint8": "unsigned char",
         "int8": "signed char", "int32": "int", "int64": "long long", "bool": "bool",
         "bfloat16": "__nv_bfloat16"}

def ctypes_of(dts):
    return [CTYPE[d] for d in dts]

# ---- launch geometry ------------------------------------------------------------------------
BLOCK = 256
MAX_GRID = 132 * 16   # H100: 132 SMs; grid-stride loops need no more blocks to fill the GPU


def grid_for(n, per_thread=1, block=BLOCK):
    return (max(1, min(MAX_GRID, -(-int(n) // (block * per_thread)))),)


def ctype(dtype):
    name = np.dtype(dtype).name
    try:
        return CTYPE[name]
    except KeyError:
        raise NoKernel("no CUDA kernels for dtype %s" % name) from None


def i64s(*vals):
    return ("bytes", struct.pack("<%dq" % len(vals), *[int(v) for v in vals]))


def pad(vals, fill=0):
    vals = [int(v) for v in vals]
    return vals + [fill] * (8 - len(vals))


def nelem(a):
    """Number of elements of an array (its shape's product)."""
    n = 1
    for d in a.shape:
        n *= int(d)
    return n


_INST = {}


def instantiations(family):
    """Every template instantiation of a family's .cu (the name expressions NVRTC compiles; the
    only names ``loader.kernel`` accepts), from ``mxc.ops.cuda.<family>.instantiations()``;
    memoised."""
    names = _INST.get(family)
    if names is None:
        mod = importlib.import_module("%s.%s" % (__package__, family))
        names = _INST[family] = frozenset(mod.instantiations())
    return names


def launch(family, name, n, args, per_thread=1, block=BLOCK, grid=None):
    """One launch of `name` over n elements; None when the family does not instantiate it."""
    if name not in instantiations(family):
        return None
    return {"family": family, "name": name, "grid": grid or grid_for(n, per_thread, block),
            "block": (block,), "args": list(args)}


def vec(dtype):
    """elements per thread of the vectorised elementwise loops (common.cuh vec4)"""
    return min(4, 16 // np.dtype(dtype).itemsize)


def bcast_strides(ishape, oshape):
    """Per-output-dim element strides of an input broadcast to oshape (0 on broadcast dims)."""
    ishape = (1,) * (len(oshape) - len(ishape)) + tuple(ishape)
    st, acc = [0] * len(oshape), 1
    for d in range(len(oshape) - 1, -1, -1):
        st[d] = 0 if ishape[d] == 1 and oshape[d] != 1 else acc
        acc *= ishape[d]
    return st


def collapse(oshape, *strides):
    """Merge neighbouring output dims where every operand is contiguous across them; drop
    size-1 dims. Returns (shape, [strides per operand])."""
    shp, sts = [], [[] for _ in strides]
    for d, n in enumerate(oshape):
        if n == 1:
            continue
        if shp and all(s[d] * n == sts[k][-1] or (s[d] == 0 and sts[k][-1] == 0)
                       for k, s in enumerate(strides)):
            shp[-1] *= n
            for k, s in enumerate(strides):
                sts[k][-1] = s[d]
            continue
        shp.append(n)
        for k, s in enumerate(strides):
            sts[k].append(s[d])
    if not shp:
        shp, sts = [1], [[1] for _ in strides]
    return shp, sts


# ---- shape ------------------------------------------------------------------------------------
# the unsigned type of each element size: kernels that only move elements
BYTES_T = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def index_map_bytes(begin, shape, stride, div=None, mod=None):
    nd = len(shape)
    if nd > 8:
        raise NoKernel("index maps hold at most 8 dims")
    div = div or [1] * nd
    mod = mod or [1 << 62] * nd
    return i64s(nd, begin, *(pad(shape, 1) + pad(stride) + pad(div, 1) + pad(mod, 1 << 62)))


def cstrides(shape):
    st, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        st[d] = acc
        acc *= shape[d]
    return st

# ---- checks on the device before a launch ---------------------------------------------------
# A spec may carry "check": check(xp, inputs) -> None or an error message, run on the device's
# worker with xp = CuPy and the inputs as CuPy views (on the engine's stream, reading back one
# flag), before the spec's launches; a message fails the operator (its outputs get the error,
# its launches are skipped). Tests call the same checks with xp = numpy.
def fail(message):
    def check(xp, inputs):
        return message
    return check


def bounds_check(j, bounds, message):
    """Input j holds len(bounds) rows of indices (one row per bound when there are several:
    gather_nd's (M, N)); row m must lie in [lo, hi) after the CPU's conversion (floats truncate
    toward zero, NaN is out). message: a format with {v} (the first bad index), {m} (its row),
    {d} (that row's hi)."""
    def check(xp, inputs):
        idx = inputs[j]
        rows = idx.reshape((len(bounds), -1)) if len(bounds) > 1 else idx.reshape((1, -1))
        for m, (lo, hi) in enumerate(bounds):
            v = rows[m].astype(xp.float64)
            # trunc(v) in [lo, hi) <=> lo - 1 < v < hi for integer bounds; NaN fails both
            bad = ~((v > lo - 1) & (v < hi))
            if bool(bad.any()):
                first = float(v[int(xp.argmax(bad))])
                shown = str(int(first)) if np.isfinite(first) else "%r (NaN or too large)" % first
                return message.format(v=shown, m=m, d=hi)
        return None
    return check


def scalar_bits(value, dtype):
    """(kind, value) of a launch argument holding `value` converted to `dtype`'s storage bits as
    the CPU's slice_assign_scalar converts it: floats round to nearest, integers truncate toward
    zero through int64 and wrap, NaN -> 0, bool = value != 0."""
    dt = np.dtype(dtype)
    size = dt.itemsize
    kind = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}[size]
    v = float(value)
    if dt.kind == "f":
        with np.errstate(over="ignore"):
            raw = np.array(v, dtype=np.float64).astype(dt).tobytes()
    elif dt.kind == "b":
        raw = bytes([1 if v != 0 else 0])
    else:
        i = 0 if v != v else (2**63 - 1 if v >= 9.2e18 else (-2**63 if v <= -9.2e18 else int(v)))
        raw = (i & (2**(8 * size) - 1)).to_bytes(size, "little")
    return kind, int.from_bytes(raw, "little")


"""Run-time compilation of mxc's CUDA kernels (``mxc/ops/cuda/<family>.cu``).

A family's source is read once and its own headers (``#include "mxc/..."`` from
``mxc/ops/cuda/include`` and ``#include "kernels/..."``, the ``__host__ __device__`` arithmetic
shared with the CPU kernels in ``csrc/kernels``) are inlined into one text, so the text CuPy
hashes for its on-disk cache covers every header: editing a header can never load a stale
binary. CUDA's own headers (``cuda_fp16.h``) come from the CUDA runtime headers found by
``cuda.pathfinder`` (the nvidia-cuda-runtime wheel) or a CUDA toolkit.

``kernel(family, name_expression, device_id)`` compiles one instantiation of a family
(``instantiations(family)`` lists them) on first use per device and returns the loaded function;
``compile_all(arch)`` compiles every family for one architecture straight through NVRTC (no
GPU or driver needed) and reports the resources ptxas gave each kernel: the CI check
(``tools/check_cuda.py``).

This module imports nothing from mxc at import time (the check loads it by path) and CuPy only
when a kernel is asked for; the kernel names come from the registry's operators
(``mxc.ops.cuda.<family>.instantiations()``), so listing them imports mxc.
"""
import os
import re
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
_INCLUDE = os.path.join(_HERE, "include")

FAMILIES = ("elemwise", "broadcast", "reduce", "shape", "gather", "ordering", "init", "random",
            "activation", "softmax", "optimizer_ops", "pooling", "normalization", "convolution",
            "rnn_cell")

# Options every compile uses: C++17 and IEEE math, without contracting a*b+c into one fused
# multiply-add: the __host__ __device__ arithmetic shared with the CPU kernels must round as
# the CPU build (and MXNet's) does. With contraction on, the multi-tensor AdamW updates missed
# MXNet's float32 values by up to 1.1e-5 relative on an H200 (contraction is the one difference
# in arithmetic between the two builds of that code). The kernels are memory-bound: no speed is
# lost. 64-bit index arithmetic is explicit in the sources.
BASE_OPTIONS = ("-std=c++17", "--fmad=false")

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)


def _error(msg):
    try:
        from ...base import MXNetError
    except Exception:  # loaded by path (tools/check_cuda.py) or mxc not built
        MXNetError = RuntimeError
    return MXNetError(msg)


def _shared_dirs():
    """Directories that hold ``kernels/hd_math.h``: the source tree's csrc/ (in-place builds),
    or the copy shipped inside the package (include/shared/, see the report on package data)."""
    out = []
    env = os.environ.get("MXC_CSRC")
    if env:
        out.append(env)
    out.append(os.path.normpath(os.path.join(_HERE, "..", "..", "..", "csrc")))
    out.append(os.path.join(_INCLUDE, "shared"))
    return out


def _find_header(name):
    for d in [_INCLUDE] + _shared_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    return None


def _inline(path, seen):
    with open(path, encoding="utf-8") as f:
        return inline_text(f.read(), path, seen)


def inline_text(text, path="<generated>", seen=None):
    """`text` with mxc's headers inlined (a family's .cu, or a generated kernel's source)."""
    seen = set() if seen is None else seen

    def repl(m):
        name = m.group(1)
        hp = _find_header(name)
        if hp is None:
            raise _error("CUDA kernel source %s includes %r, which is not in %s"
                         % (path, name, [_INCLUDE] + _shared_dirs()))
        if hp in seen:
            return "// (already included: %s)" % name
        seen.add(hp)
        body = re.sub(r"^\s*#\s*pragma\s+once\s*$", "", _inline(hp, seen), flags=re.M)
        return "// ---- begin %s\n%s\n// ---- end %s" % (name, body, name)

    return _INCLUDE_RE.sub(repl, text)


_SOURCES = {}


def source(family):
    """The complete text of a family: its .cu with mxc's headers inlined."""
    if family not in _SOURCES:
        path = os.path.join(_HERE, family + ".cu")
        if not os.path.isfile(path):
            raise _error("no CUDA kernels for family %r (%s is missing)" % (family, path))
        _SOURCES[family] = _inline(path, set())
    return _SOURCES[family]


def cuda_include_dirs():
    """Where cuda_fp16.h is: the CUDA runtime headers (wheel or toolkit)."""
    dirs = []
    try:
        from cuda import pathfinder
        d = pathfinder.find_nvidia_header_directory("cudart")
        if d:
            dirs.append(str(d))
    except Exception:
        pass
    for env in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(env):
            dirs.append(os.path.join(os.environ[env], "include"))
    dirs.append("/usr/local/cuda/include")
    return [d for d in dirs if os.path.isfile(os.path.join(d, "cuda_fp16.h"))][:1]


def options(arch=None):
    opts = list(BASE_OPTIONS) + ["-I" + d for d in cuda_include_dirs()]
    if arch is not None:
        opts.append("-arch=sm_%d" % arch)
    return tuple(opts)


def instantiations(family):
    """Every name expression of `family` (a frozenset): mxc.ops.cuda._launch.instantiations."""
    import importlib
    return importlib.import_module("mxc.ops.cuda._launch").instantiations(family)


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise _error("GPU kernels need CuPy: pip install 'mxc[gpu]' (cupy-cuda13x); "
                     "importing cupy failed: %s" % e) from None
    return cupy


_lock = threading.Lock()
_functions = {}  # (family, name_expression, device) -> (cupy.RawKernel, CUfunction as an int)


def function_pointer(fn):
    """The CUfunction (an int) of a CuPy ``RawKernel``, loaded on the current device.

    CuPy 14's RawKernel has no ``ptr`` of its own: its ``kernel`` property loads the module on
    the current device and returns a ``cupy.cuda.function.Function`` whose ``ptr`` is the
    handle; an object that is already such a Function (or a test's stand-in) has ``ptr``."""
    inner = getattr(fn, "kernel", None)
    return int(inner.ptr if inner is not None else fn.ptr)


def kernel(family, name_expression, device_id=0):
    """The CUfunction (an int, for ``cuda.push_launch``) of ``name_expression`` (e.g.
    ``mxc_unary<mxc::op_exp, float>``) in ``family``, loaded on device ``device_id``; the
    module that holds it stays loaded for the life of the process.

    Each kernel is its own NVRTC program (the family's text with that one name expression):
    a first call costs one small compile (~0.1-0.3 s) instead of the family's hundreds of
    instantiations (minutes for elemwise), and CuPy keeps the binary on disk, so a new process
    only loads it. Memoised per device: the second run of a kernel never recompiles."""
    key = (family, name_expression, device_id)
    hit = _functions.get(key)
    if hit is not None:
        return hit[1]
    if name_expression not in instantiations(family):
        raise _error("CUDA family %r has no kernel %r (not in its instantiations)"
                     % (family, name_expression))
    cupy = _cupy()
    with _lock:
        hit = _functions.get(key)
        if hit is None:
            with cupy.cuda.Device(device_id):
                mod = cupy.RawModule(code=source(family), options=options(),
                                     name_expressions=[name_expression])
                fn = mod.get_function(name_expression)
                hit = (fn, function_pointer(fn))
            _functions[key] = hit
    return hit[1]


def generated_kernel(name, text, device_id=0):
    """The CUfunction of ``extern "C"`` kernel `name` in generated source `text` (mxc's headers
    not yet inlined: the fused pointwise chains of fusion.py), compiled on first use per device
    and kept like the families' kernels: in memory here, on disk by CuPy's cache (keyed by the
    inlined text, so a header edit recompiles)."""
    key = ("<generated>", name, device_id)
    hit = _functions.get(key)
    if hit is not None:
        return hit[1]
    cupy = _cupy()
    with _lock:
        hit = _functions.get(key)
        if hit is None:
            with cupy.cuda.Device(device_id):
                mod = cupy.RawModule(code=inline_text(text), options=options())
                fn = mod.get_function(name)
                hit = (fn, function_pointer(fn))
            _functions[key] = hit
    return hit[1]


# ---- the offline check: NVRTC straight to a cubin, with ptxas's resource report -------------
_PTXAS_FN = re.compile(r"Compiling entry function '([^']+)' for 'sm_(\d+)'")
_PTXAS_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_LMEM = re.compile(r"(\d+) bytes lmem")


def parse_ptxas(log):
    """{mangled name: {regs, stack, spill_st, spill_ld, lmem}} from a `-v` ptxas log."""
    out, cur = {}, None
    for line in log.splitlines():
        m = _PTXAS_FN.search(line)
        if m:
            cur = out.setdefault(m.group(1), {"regs": 0, "stack": 0, "spill_st": 0,
                                              "spill_ld": 0, "lmem": 0})
            continue
        if cur is None:
            continue
        m = _PTXAS_STACK.search(line)
        if m:
            cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
        m = _PTXAS_REGS.search(line)
        if m:
            cur["regs"] = int(m.group(1))
        m = _PTXAS_LMEM.search(line)
        if m:
            cur["lmem"] = int(m.group(1))
    return out


def compile_family(family, arch, extra_options=()):
    """Compile one family for sm_<arch> through NVRTC; returns (log, {name expression: stats}).
    Raises on a compile error; warnings are left in the log for the caller to judge."""
    from cupy.cuda import nvrtc
    names = sorted(instantiations(family))
    prog = nvrtc.createProgram(source(family), family + ".cu", [], [])
    try:
        for n in names:
            nvrtc.addNameExpression(prog, n)
        opts = list(options(arch)) + ["--ptxas-options=-v"] + list(extra_options)
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError:
            raise _error("NVRTC failed on %s.cu for sm_%d:\n%s"
                         % (family, arch, nvrtc.getProgramLog(prog))) from None
        log = nvrtc.getProgramLog(prog)
        stats = parse_ptxas(log)
        lowered = {n: nvrtc.getLoweredName(prog, n) for n in names}
        nvrtc.getCUBIN(prog)  # the binary exists (the real arch was given)
    finally:
        nvrtc.destroyProgram(prog)
    by_name = {}
    for n, low in lowered.items():
        if low not in stats:
            raise _error("ptxas reported nothing for %s (%s) in %s.cu" % (n, low, family))
        by_name[n] = stats[low]
    return log, by_name


def compile_all(arch, families=FAMILIES, extra_options=()):
    """{family: (log, {name expression: stats})} for every family, compiled for sm_<arch>."""
    return {f: compile_family(f, arch, extra_options) for f in families}

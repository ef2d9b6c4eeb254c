"""An emulated GPU for a child process on the fake CUDA driver (tests/_core/fake_libcuda.py):
every kernel mxc launches is its CUDA C source compiled by g++ against the emulation header
(tests/ops/cuda/emu, as the per-operator emulation tests), run serially over the launch's
grid and block by the fake's cuLaunchKernel, with the fake's tagged device addresses turned
back into host addresses; every cuBLAS GEMM runs in numpy exactly as cuBLAS defines it
(column-major, strided-batched, on the operands' memory). So a whole network's GPU step runs
through mxc's dispatch, launch specs, engine and storage, and computes real numbers.

A block's threads meet at __syncthreads and warp shuffles as on a device
(tests/ops/cuda/emu/mxc_emu_threads.h), so block reductions (softmax rows, sums) run too; a
kernel that deadlocks or meets wrongly prints why and fails its launch (CUDA_ERROR_LAUNCH_FAILED,
reported at the next sync).

    names = record(step)                 # phase 1: the kernels a step launches (no-op kernels)
    install(names, workdir)              # phase 2: compile them, route the launches to them
"""
import ctypes
import os
import sys
import types

import numpy as np

TAG = 1 << 62

_PRELUDE = r"""
#include <utility>
#include <type_traits>
#include <cstdint>
static long long (*mxc_emu_stat)(int);
extern "C" void mxc_emu_set_stat(void *f) { mxc_emu_stat = (long long (*)(int))f; }
template <class P> static P mxc_emu_untag(P v) {
  if constexpr (std::is_pointer<P>::value)
    return (P)((uintptr_t)v & ~((uintptr_t)1 << 62));
  else
    return v;
}
template <class... P, std::size_t... I>
static void mxc_emu_call(void (*f)(P...), void **a, std::index_sequence<I...>) {
  f(mxc_emu_untag(*(typename std::remove_reference<P>::type *)a[I])...);
}
template <class... P> static void mxc_emu_packed(void (*f)(P...), void **a) {
  mxc_emu_call(f, a, std::index_sequence_for<P...>{});
}
"""


GENERATED = "<generated>"     # names' entry for generated kernels (fusion.py): {name: source}


def record(step):
    """{family: [name expressions]} of the kernels step() launches (run with no-op kernels),
    and under GENERATED the generated kernels' sources by name."""
    from mxc.ops import _gpu
    from mxc.ops.cuda import loader
    lib = ctypes.CDLL(os.environ["MXC_LIBCUDA"])
    noop = ctypes.cast(lib.fake_noop, ctypes.c_void_p).value
    names, generated = {}, {}
    saved = loader.kernel, loader.generated_kernel, _gpu._push_cupy, _gpu._push_check

    def kernel(family, name, device_id=0):
        names.setdefault(family, set()).add(name)
        return noop

    def generated_kernel(name, text, device_id=0):
        generated[name] = text
        return noop
    loader.kernel, loader.generated_kernel = kernel, generated_kernel
    _gpu._push_cupy = _gpu._push_check = lambda *a: None
    try:
        step()
        import mxc
        mxc.nd.waitall()
    finally:
        loader.kernel, loader.generated_kernel, _gpu._push_cupy, _gpu._push_check = saved
    out = {f: sorted(v) for f, v in names.items()}
    if generated:
        out[GENERATED] = generated
    return out


def _wrapper(cname, name):
    """The fake driver's kernel `cname`: `name` over the launch's grid and block, 0 or
    CUDA_ERROR_LAUNCH_FAILED (719) with the reason on stderr."""
    return ('extern "C" int %s(void **a) { const char *e = mxc_emu::run((unsigned)mxc_emu_stat(9), '
            '(unsigned)mxc_emu_stat(10), [&] { mxc_emu_packed(%s, a); }); '
            'if (e) fprintf(stderr, "emulated %s: %%s\\n", e); return e ? 719 : 0; }'
            % (cname, name, name))


def install(names, workdir):
    """Compile the kernels `names` ({family: [name expressions]}) with g++ and make mxc launch
    them (loader.kernel, loader.generated_kernel), and run cuBLAS GEMMs in numpy
    (mxc.ops._gpu._push_cupy)."""
    from mxc.ops.cuda import loader
    srcs, wrappers, addr_of, seen = [], [], {}, set()
    generated = names.get(GENERATED, {})
    for family, exprs in sorted(names.items()):
        if family == GENERATED:
            continue
        # one text: each family's .cu with mxc's headers inlined once (the first to include
        # them), so the families' shared headers are not defined twice
        path = os.path.join(os.path.dirname(loader.__file__), family + ".cu")
        with open(path, encoding="utf-8") as f:
            srcs.append(loader.inline_text(f.read(), path, seen))
        for e in exprs:
            c = "k%d" % len(addr_of)
            addr_of[(family, e)] = c
            wrappers.append(_wrapper(c, e))
    for name, text in sorted(generated.items()):
        # extern "C" kernels with unique names: appended to the same text, the headers the
        # families already brought skipped
        srcs.append(loader.inline_text(text, GENERATED, seen))
        c = "k%d" % len(addr_of)
        addr_of[(GENERATED, name)] = c
        wrappers.append(_wrapper(c, name))
    from tests.ops.cuda._emu import compile_emulation
    cpp, so = os.path.join(workdir, "emu_gpu.cpp"), os.path.join(workdir, "emu_gpu.so")
    with open(cpp, "w") as f:
        f.write("\n".join(srcs) + _PRELUDE + "\n".join(wrappers))
    compile_emulation(cpp, so)
    emu = ctypes.CDLL(so)
    fake = ctypes.CDLL(os.environ["MXC_LIBCUDA"])
    emu.mxc_emu_set_stat(ctypes.cast(fake.fake_stat, ctypes.c_void_p))
    fns = {k: ctypes.cast(getattr(emu, c), ctypes.c_void_p).value for k, c in addr_of.items()}

    def kernel(family, name, device_id=0):
        return fns[(family, name)]       # a kernel not recorded in phase 1: KeyError

    def generated_kernel(name, text, device_id=0):
        return fns[(GENERATED, name)]
    loader.kernel, loader.generated_kernel = kernel, generated_kernel
    _install_gemm()
    return emu


class _HostArray(np.ndarray):
    """A numpy view of device memory standing in for a CuPy array (``.data.ptr``)."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])


def _host_view(a):
    from mxc._core import cuda
    nbytes = max(1, a.size * np.dtype(a.dtype).itemsize)
    addr = cuda.data_address(a) & ~TAG
    buf = (ctypes.c_char * nbytes).from_address(addr)
    return np.frombuffer(buf, dtype=a.dtype, count=a.size).reshape(a.shape).view(_HostArray)


def _at(addr, rows, cols, ld, dtype):
    """The column-major (rows, cols) matrix with leading dimension ld at host address addr."""
    es = np.dtype(dtype).itemsize
    extent = ((rows - 1) + (cols - 1) * ld + 1) * es
    base = np.frombuffer((ctypes.c_char * extent).from_address(addr), dtype=dtype)
    return np.lib.stride_tricks.as_strided(base, shape=(rows, cols), strides=(es, ld * es))


def _install_gemm():
    from mxc._core import engine
    from mxc.ops import _gpu
    from mxc.ops.cuda import dot
    dtypes = {}
    for dt in (np.float32, np.float64, np.float16):
        ctype_, comp, scal = dot.cublas_types(np.dtype(dt))
        dtypes[ctype_] = (np.dtype(dt), np.dtype(scal))

    def gemm(handle, transa, transb, m, n, k, alpha, A, atype, lda, sa, B, btype, ldb, sb,
             beta, C, ctype_, ldc, sc, batch, compute, algo):
        dt, scal = dtypes[atype]
        al = np.frombuffer((ctypes.c_char * scal.itemsize).from_address(alpha), scal)[0]
        be = np.frombuffer((ctypes.c_char * scal.itemsize).from_address(beta), scal)[0]
        es = dt.itemsize
        for b in range(batch):
            X = _at(A + es * b * sa, *((m, k) if transa == dot.OP_N else (k, m)), lda, dt)
            Y = _at(B + es * b * sb, *((k, n) if transb == dot.OP_N else (n, k)), ldb, dt)
            X = X if transa == dot.OP_N else X.T
            Y = Y if transb == dot.OP_N else Y.T
            Z = _at(C + es * b * sc, m, n, ldc, dt)
            prod = float(al) * (X.astype(np.float64) @ Y.astype(np.float64))
            if float(be) != 0.0:                 # beta 0: C is not read (cuBLAS's rule)
                prod += float(be) * Z.astype(np.float64)
            Z[...] = prod.astype(dt)
    dot.cublas_module = lambda: types.SimpleNamespace(gemmStridedBatchedEx=gemm)
    cp = types.ModuleType("cupy")
    cp.copyto = np.copyto
    cp.cuda = types.ModuleType("cupy.cuda")
    cp.cuda.device = types.ModuleType("cupy.cuda.device")
    cp.cuda.device.get_cublas_handle = lambda: 0
    sys.modules.update({"cupy": cp, "cupy.cuda": cp.cuda, "cupy.cuda.device": cp.cuda.device})

    def push_cupy(run, opname, inputs, outputs, dev):
        def op():
            run([_host_view(a) for a in inputs], [_host_view(a) for a in outputs])
        engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                    device=dev)
    _gpu._push_cupy = push_cupy
    _gpu._push_check = lambda check, opname, inputs, outputs, dev: None

"""An emulated GPU on the fake CUDA driver (tests/_core/fake_libcuda.py): every kernel mxc
launches is its CUDA C source compiled by g++ against the emulation header (tests/ops/cuda/emu,
as the per-operator emulation tests) on its first launch, and run over the launch's grid and
block by the fake's cuLaunchKernel, with the fake's tagged device addresses turned back into
host addresses; every cuBLAS GEMM runs in numpy exactly as cuBLAS defines it (column-major,
strided-batched, on the operands' memory), and the device-side index checks in numpy. So a
whole network's GPU step runs through mxc's dispatch, launch specs, engine and storage, and
computes real numbers.

A block's threads meet at __syncthreads and warp shuffles as on a device
(tests/ops/cuda/emu/mxc_emu_threads.h), so block reductions (softmax rows, sums) run too; a
kernel that deadlocks or meets wrongly prints why and fails its launch (CUDA_ERROR_LAUNCH_FAILED,
reported at the next sync).

    os.environ["MXC_LIBCUDA"] = fake_driver(cache)   # before mxc first opens the driver
    install(cache)                                   # route kernels, GEMMs and checks here

Each kernel is one small library (~0.3 s of g++), kept in `cache` under the hash of its text,
so later processes (and the next run) load it at once.
"""
import ctypes
import hashlib
import os
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

from tests.ops.cuda._emu import PACKED, emulation_command, emulation_fingerprint

TAG = 1 << 62


@pytest.fixture(scope="session")
def emu_cache(tmp_path_factory):
    """One kernel cache for the emulated-GPU tests of a run (child processes share it)."""
    return str(tmp_path_factory.mktemp("emulated-gpu"))

# PACKED (the launch's argument array unpacked, device addresses untagged), the fake driver's
# counters (grid and block of the launch) and the argument sizes a stream capture copies
_PRELUDE = PACKED + r"""
static long long (*mxc_emu_stat)(int);
extern "C" void mxc_emu_set_stat(void *f) { mxc_emu_stat = (long long (*)(int))f; }
template <class... P> static int mxc_emu_param_sizes(void (*)(P...), int *sz) {
  int i = 0;
  ((sz[i++] = (int)sizeof(typename std::remove_reference<P>::type)), ...);
  return i;
}
"""


def _wrapper(name):
    """The fake driver's kernel mxc_emu_kernel: `name` over the launch's grid and block, 0 or
    CUDA_ERROR_LAUNCH_FAILED (719) with the reason on stderr; and mxc_emu_sizes, its arguments'
    sizes (a stream capture copies them)."""
    return ('extern "C" int mxc_emu_kernel(void **a) { const char *e = mxc_emu::run('
            '(unsigned)mxc_emu_stat(9), (unsigned)mxc_emu_stat(10), '
            '[&] { mxc_emu_packed(%s, a); }); '
            'if (e) fprintf(stderr, "emulated %s: %%s\\n", e); return e ? 719 : 0; }\n'
            'extern "C" int mxc_emu_sizes(int *sz) { return mxc_emu_param_sizes(%s, sz); }'
            % (name, name, name))


def fake_driver(cache):
    """The fake libcuda built (once) in `cache`; its path."""
    from tests._core.fake_libcuda import SOURCE
    return _built(cache, SOURCE, "c", ["gcc", "-O1", "-shared", "-fPIC"])


def _built(cache, text, ext, cmd):
    """The library `cmd` builds from `text`, kept in `cache` by the hash of both."""
    os.makedirs(cache, exist_ok=True)
    key = hashlib.sha1((" ".join(cmd) + "\0" + text).encode()).hexdigest()[:20]
    so = os.path.join(cache, key + ".so")
    if not os.path.exists(so):
        src = os.path.join(cache, "%s.%d.%s" % (key, os.getpid(), ext))
        with open(src, "w") as f:
            f.write(text)
        tmp = src + ".so"
        subprocess.run(cmd + [src, "-o", tmp], check=True)
        os.replace(tmp, so)            # another process may have built it too: same bytes
        os.remove(src)
    return so


def install(cache):
    """Make mxc launch g++-compiled kernels (loader.kernel, loader.generated_kernel), each
    built on its first use, run cuBLAS GEMMs in numpy (mxc.ops._gpu._push_cupy) and the
    device-side checks in numpy (_gpu._push_check)."""
    from mxc.ops.cuda import loader
    head = "// emulation headers %s\n" % emulation_fingerprint()
    fake = ctypes.CDLL(os.environ["MXC_LIBCUDA"])
    stat = ctypes.cast(fake.fake_stat, ctypes.c_void_p)
    fns, libs, lock = {}, [], threading.Lock()

    def compiled(key, text, name):
        with lock:
            if key not in fns:
                lib = ctypes.CDLL(_built(cache, head + text + _PRELUDE + _wrapper(name),
                                         "cpp", emulation_command()))
                lib.mxc_emu_set_stat(stat)
                libs.append(lib)
                fn = ctypes.cast(lib.mxc_emu_kernel, ctypes.c_void_p).value
                sizes = (ctypes.c_int * 64)()
                # (a kernel the fake cannot copy the arguments of refuses stream capture)
                fake.fake_register_kernel(ctypes.c_void_p(fn), lib.mxc_emu_sizes(sizes), sizes)
                fns[key] = fn
            return fns[key]

    def kernel(family, name, device_id=0):
        return compiled((family, name), loader.source(family), name)

    def generated_kernel(name, text, device_id=0):
        return compiled(("<generated>", name), loader.inline_text(text), name)
    loader.kernel, loader.generated_kernel = kernel, generated_kernel
    _install_gemm(fake)
    _install_check()


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


_KEEP = []      # host-node callbacks: alive while a graph may replay them


def _install_gemm(fake):
    from mxc._core import cuda, engine
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

    hostfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    def push_cupy(run, opname, inputs, outputs, dev):
        def gemm(_=None):
            run([_host_view(a) for a in inputs], [_host_view(a) for a in outputs])
        capture = cuda.capturing(dev)

        def op():
            if not capture:
                return gemm()
            # queued while the stream is captured: cuBLAS's kernels would be graph nodes, so
            # the numpy GEMM is one too (a host node, run by every replay)
            cb = hostfn(gemm)
            _KEEP.append(cb)
            if fake.fake_capture_host(cb, None) != 0:
                raise RuntimeError(f"{opname}: the fake driver did not take the GEMM node")
        engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                    device=dev)
    _gpu._push_cupy = push_cupy


def _install_check():
    from mxc._core import cuda, engine
    from mxc.base import MXNetError
    from mxc.ops import _gpu

    def push_check(check, opname, inputs, outputs, dev):
        if cuda.capturing(dev):
            raise cuda.CaptureUnsafe(f"{opname}: its index check is read back on the host")

        def op():
            message = check(np, [_host_view(a) for a in inputs])
            if message:
                raise MXNetError(message)
        engine.push(op, [a._chunk for a in inputs], [a._chunk for a in outputs], name=opname,
                    device=dev)
    _gpu._push_check = push_check

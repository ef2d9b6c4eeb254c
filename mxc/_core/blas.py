"""The BLAS that CPU kernels call: OpenBLAS from the scipy-openblas32 package.

Chosen by measurement (tools/bench/bench_nn.py): it is the OpenBLAS build numpy itself ships,
with runtime CPU dispatch (DYNAMIC_ARCH), and it is a wheel on every platform numpy supports.
It is opened here with ctypes and its function addresses are handed to the kernel modules
(csrc/mxc/blas.h), which call them from engine workers without the GIL.

Threads: a kernel that calls BLAS alone gets mxc's threads per kernel (OMP_NUM_THREADS, else the
cores this process may run on shared among the engine's workers): a float32 GEMM as blocks of C,
one single-threaded OpenBLAS call per OpenMP thread; the other routines on OpenBLAS's own pool. A
call made while another caller is inside BLAS (a second worker, or a waiting thread running ops)
runs single-threaded, so that no two callers share the pool: the gate in csrc/mxc/blas.h, whose
state is GATE here. So does a call from a thread that may not fork an OpenMP team (a waiter
running an op; mxc/_core/engine.pyx, engine_team_thread). An idle pool thread spins
for 2^OPENBLAS_THREAD_TIMEOUT cycles before it sleeps; OpenBLAS's default (2^28, ~0.1 s) keeps it
spinning through a whole training step, where products come every few milliseconds, so it holds
one of the cores that the engine worker and the Python thread between them need. mxc sets 2^16
(~25 us) unless the variable is set: MLP 784-512-512-10 imperative steps took 14.9-16.8 ms
against 18.8-19.3 ms with the default, alternated in one session.
"""
import ctypes
import os

from ..base import MXNetError
from . import engine
from .threads import omp_threads, follow_load
from . import pool as _pool

__all__ = ["ADDRESSES", "GATE", "POOL", "SYMBOLS", "config", "set_num_threads", "get_num_threads"]

# the order of enum mxc_blas_fn in csrc/mxc/blas.h
SYMBOLS = ("cblas_sgemm", "cblas_dgemm", "cblas_strsm", "cblas_dtrsm", "cblas_strmm",
           "cblas_dtrmm", "cblas_ssyrk", "cblas_dsyrk", "spotrf_", "dpotrf_", "spotri_", "dpotri_",
           "cblas_sgemv", "cblas_dgemv", "openblas_set_num_threads")
_PREFIX = "scipy_"


def _open():
    try:
        import scipy_openblas32 as pkg
    except ImportError:
        raise MXNetError("mxc needs the scipy-openblas32 package for its matrix kernels "
                         "(pip install scipy-openblas32)") from None
    path = os.path.join(pkg.get_lib_dir(), "lib" + pkg.get_library() + ".so")
    if not os.path.exists(path):      # macOS / Windows names
        for f in os.listdir(pkg.get_lib_dir()):
            if f.startswith("lib" + pkg.get_library()) and f.endswith((".dylib", ".dll", ".so")):
                path = os.path.join(pkg.get_lib_dir(), f)
                break
    return ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)


# read by OpenBLAS when the library loads, so it must be set first
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "16")
_LIB = _open()
ADDRESSES = tuple(ctypes.cast(getattr(_LIB, _PREFIX + s), ctypes.c_void_p).value for s in SYMBOLS)
_LIB.scipy_openblas_get_config.restype = ctypes.c_char_p
_LIB.scipy_openblas_set_num_threads.argtypes = [ctypes.c_int]
_LIB.scipy_openblas_get_num_threads.restype = ctypes.c_int


def config():
    """OpenBLAS's build description (version, DYNAMIC_ARCH, the core it runs on)."""
    return _LIB.scipy_openblas_get_config().decode()


class _Gate(ctypes.Structure):
    # mxc_blas_gate_t in csrc/mxc/blas.h
    _fields_ = [("lock", ctypes.c_int), ("inside", ctypes.c_int), ("cur", ctypes.c_int),
                ("max", ctypes.c_int), ("team_thread", ctypes.c_void_p)]


_GATE = _Gate()
_GATE.team_thread = engine.team_thread_address()   # which threads may fork OpenMP teams
GATE = ctypes.addressof(_GATE)
POOL = _pool.ADDRESS     # the load pool's state (mxc/_core/pool.pyx)


_asked = 1          # set_num_threads's n; a lone caller gets it capped at the free cores
_free = 1 << 30     # the cores other processes leave free (mxc/_core/threads.py follows them)


def set_num_threads(n):
    """The threads a lone BLAS caller gets (a caller beside another one always gets 1)."""
    global _asked
    _asked = max(1, int(n))
    n = min(_asked, _free)
    _GATE.max = n
    if _GATE.inside == 0:
        _LIB.scipy_openblas_set_num_threads(n)
        _GATE.cur = n


def get_num_threads():
    return _asked


def _on_free_cores(n):
    # the gate hands the new count to OpenBLAS at the next lone call (under its lock)
    global _free
    _free = n
    _GATE.max = max(1, min(_asked, n))
    _pool.follow(n < omp_threads())


set_num_threads(omp_threads())
follow_load(_on_free_cores)
def _after_fork_in_child():
    # a forked child computes on one thread, as the kernels do (mxc/_core/opcall.pyx); the
    # callers that were inside BLAS (and the gate's lock) stayed behind in the parent
    _GATE.lock = _GATE.inside = 0
    set_num_threads(1)


os.register_at_fork(after_in_child=_after_fork_in_child)

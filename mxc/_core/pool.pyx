"""The load pool (csrc/mxc/pool.h): one helper thread that takes blocks of float32 GEMMs while
the watcher (threads.py) caps kernels and BLAS at fewer threads than the cores, without a caller
ever waiting for it. Kernel modules reach the state through csrc/mxc/blas.h (ADDRESS, installed by
mxc/ops/cpu/_blas.pxi); opcall.run_call waits after each kernel for a dropped block the helper may
still be running.

MXC_LOAD_POOL=0 keeps it off; MXC_LOAD_POOL=force keeps it on whenever OpenBLAS runs on one
thread (tests and benchmarks); otherwise it follows the watcher.
"""
import os
from libc.stdint cimport uintptr_t, int64_t

from mxc._core import opcall

cdef extern from *:
    """
    #define MXC_POOL_IMPL 1
    #include "mxc/pool.h"
    static mxc_pool_t mxc_pool_state;
    """
    ctypedef struct mxc_pool_t:
        int mode
        int alive
        int owner
        int busy
        int quiescing
        float min_mflop
        int64_t n_done, n_dropped, n_jobs, n_waits, wait_ns
    mxc_pool_t mxc_pool_state
    int mxc_pool_start(mxc_pool_t *p) nogil
    int MXC_POOL_OFF, MXC_POOL_ON, MXC_POOL_INLINE

__all__ = ["ADDRESS", "follow", "set_mode", "stats"]

ADDRESS = <uintptr_t>&mxc_pool_state
# the least work (MFLOP) per block: a block is one sgemm call. 2, not 4: the convolutions' per-sample
# products of 4-8 MFLOP then go through the pool too (2.5x the jobs on CIFAR ResNet-18), and
# loaded training, alternated with 4, ran 4% faster beside 4 busy processes (181-185 against
# 175-177 samples/s), 8% beside 2 (315-345 against 311) and level beside 1 (370-379 against 377-379)
mxc_pool_state.min_mflop = float(os.environ.get("MXC_LOAD_POOL_MFLOP", "2"))
_setting = os.environ.get("MXC_LOAD_POOL", "").strip()
_forked = False


def set_mode(mode):
    """0 off, 1 on (starting the helper thread on first use), 2 blocked on the caller alone
    (the reference the tests compare the pool with). A forked child stays off."""
    mode = int(mode)
    if mode not in (0, 1, 2):
        raise ValueError(f"load pool mode must be 0, 1 or 2, not {mode}")
    if _forked:
        mode = 0
    if mode == MXC_POOL_ON and mxc_pool_start(&mxc_pool_state) != 0:
        mode = 0
    mxc_pool_state.mode = mode


def follow(bint capped):
    """The watcher's switch: on while the kernels' threads are capped below the cores."""
    if _setting == "0" or _setting == "force":
        return
    set_mode(1 if capped else 0)


def stats():
    """Blocks the helper finished (used), blocks the caller took back, jobs run through the pool,
    and the waits after kernels for a dropped block (count, seconds)."""
    return {"done": mxc_pool_state.n_done, "dropped": mxc_pool_state.n_dropped,
            "jobs": mxc_pool_state.n_jobs, "waits": mxc_pool_state.n_waits,
            "wait_s": mxc_pool_state.wait_ns * 1e-9, "mode": mxc_pool_state.mode,
            "alive": bool(mxc_pool_state.alive)}


def _after_fork_in_child():
    # the helper thread stayed in the parent; a block it was running there is not running here
    global _forked
    _forked = True
    mxc_pool_state.mode = 0
    mxc_pool_state.alive = 0
    mxc_pool_state.owner = 0
    mxc_pool_state.busy = 0
    mxc_pool_state.quiescing = 0


os.register_at_fork(after_in_child=_after_fork_in_child)
opcall.install_pool(ADDRESS)
if _setting == "force":
    set_mode(1)

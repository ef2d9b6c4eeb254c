"""How many OpenMP threads one kernel uses (the CPU kernels and OpenBLAS share the answer), and
how that number follows the cores other processes leave free."""
import os
import threading
import time

from . import engine, opcall

__all__ = ["omp_threads", "follow_load"]


def omp_threads():
    """OpenMP threads per kernel, decided once in Python: OMP_NUM_THREADS when set, else the
    cores this process may run on (its CPU affinity, which a job scheduler or taskset narrows)
    shared out among the engine's workers (as MXNet does), so that several workers running
    kernels at once do not oversubscribe the cores (libgomp's spinning barriers collapse then)."""
    n = os.environ.get("OMP_NUM_THREADS", "")
    if n.strip().isdigit():
        return max(1, int(n))
    return max(1, len(_cpus()) // max(1, engine.num_workers()))


def _cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):     # no affinity on macOS / Windows
        return list(range(os.cpu_count() or 1))


# ---- following the free cores ----------------------------------------------------------------
# A kernel's threads meet at barriers: when another process keeps one of the cores busy, the
# thread that shares it arrives late at every barrier and the whole team waits for it (a
# 2-thread kernel beside busy processes on 2 cores ran slower than a 1-thread one). So while
# other processes compete for the cores, kernels and BLAS get only the cores left: a watcher
# samples every SAMPLE s how many threads of other processes are runnable (the kernel's
# procs_running less this process's own runnable threads) and, every DECIDE samples, caps the
# threads at the cores minus their mean (at least 1, at most the count above). Runnable
# threads, not CPU time: under group scheduling (a container, a systemd slice) and nice levels
# CPU time says who got the cores, not who waited for them. Off when OMP_NUM_THREADS is set
# (the user chose), with MXC_FOLLOW_LOAD=0, where /proc is missing, and in a forked child
# (which computes on one thread). A sample counts only while this process has work in the
# engine: others busy while it idles (a neighbour's burst between two of its steps, or the
# other process of a benchmark that takes turns with it) do not compete with its kernels, and
# caps decided from them put it on one thread (MLP training taking turns with a torch process
# every 0.1 s: 25k samples/s, 34k once such samples were left out).
SAMPLE = 0.1
DECIDE = 5
_callbacks = []
_lock = threading.Lock()
_watcher = None


def follow_load(callback):
    """Call callback(n) whenever the threads a kernel should use change (n: 1 up to
    omp_threads()); starts the watcher on first use."""
    global _watcher
    with _lock:
        _callbacks.append(callback)
        if _watcher is None and _wanted():
            _watcher = threading.Thread(target=_watch, name="mxc-load-watch", daemon=True)
            _watcher.start()


def _wanted():
    return (omp_threads() > 1 and not os.environ.get("OMP_NUM_THREADS", "").strip()
            and os.environ.get("MXC_FOLLOW_LOAD", "1") != "0"
            and os.path.exists("/proc/stat") and os.path.isdir("/proc/self/task"))


def _running_total():
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"procs_running"):
                return int(line.split()[1])
    raise ValueError("no procs_running in /proc/stat")


def _running_own():
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                st = f.read()
        except OSError:          # the thread ended meanwhile
            continue
        if st[st.rfind(b")") + 2:st.rfind(b")") + 3] == b"R":
            n += 1
    return n


# One reading can count this process's own threads as others: a thread that is running when
# procs_running is read and asleep by the time the scan of /proc/self/task reaches it (an engine
# worker or an OpenMP thread between two kernels). Training CIFAR ResNet-18 on a quiet 2-core
# machine, single readings saw others in 22% of samples (1 in 242 of 1,239, 2 in 34) where an
# idle process saw them in 1.5%, and would have capped the threads in 40 of 247 half-second
# windows; the least of three back-to-back readings capped in 2 of 247 and still read 4 (mean
# 4.02) beside 4 busy processes, whose threads are runnable in all three.
READINGS = 3


def others_running():
    """Runnable threads of other processes now (the watcher's own sample): the least of
    READINGS back-to-back readings, so that own threads changing state during one do not
    count."""
    return max(0, min(_running_total() - _running_own() for _ in range(READINGS)))


def _watch():
    ncpu, top = len(_cpus()), omp_threads()
    cur = top
    pid = os.getpid()
    samples = []
    while os.getpid() == pid:
        busy = engine.pending() > 0
        try:
            others = others_running()
        except (OSError, ValueError):
            return
        if busy or engine.pending() > 0:
            samples.append(others)
        if len(samples) >= DECIDE:
            others = sum(samples) / len(samples)
            samples.clear()
            n = max(1, min(top, int(ncpu - others + 0.5)))
            if n != cur:
                cur = n
                opcall.set_load_cap(0 if n == top else n)
                with _lock:
                    for cb in _callbacks:
                        cb(n)
        time.sleep(SAMPLE)

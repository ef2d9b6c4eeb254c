"""How many OpenMP threads one kernel uses (the CPU kernels and OpenBLAS share the answer)."""
import os

from . import engine

__all__ = ["omp_threads"]


def omp_threads():
    """OpenMP threads per kernel, decided once in Python: OMP_NUM_THREADS when set, else the
    cores this process may run on (its CPU affinity, which a job scheduler or taskset narrows)
    shared out among the engine's workers (as MXNet does), so that several workers running
    kernels at once do not oversubscribe the cores (libgomp's spinning barriers collapse then)."""
    n = os.environ.get("OMP_NUM_THREADS", "")
    if n.strip().isdigit():
        return max(1, int(n))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):     # no affinity on macOS / Windows
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, engine.num_workers()))

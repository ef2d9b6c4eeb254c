"""Benchmark the reduction and transpose CPU kernels against numpy (and torch if importable).

Prints one JSON line per figure: {"bench", "n", "dtype", "impl", "nthreads", "ms", "gbps"}.
"ms" is the best of --repeat runs (the machine is shared; the minimum is the least noisy
figure), "gbps" counts bytes read + written once.

    python tools/bench/bench_kernels_reduce.py [--repeat 15] [--nthreads 2]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

# run from a source checkout without installing: the repo root is two levels up
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from mxc._core.opcall import run_on_numpy
from mxc.ops.cpu.reduce import KERNELS as RED
from mxc.ops.cpu.shape import KERNELS as SHAPE


def best_ms(fn, repeat):
    fn()                                   # warm up (page faults, thread pool start)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def emit(bench, n, dtype, impl, nthreads, ms, nbytes):
    print(json.dumps({"bench": bench, "n": n, "dtype": dtype, "impl": impl, "nthreads": nthreads,
                      "ms": round(ms, 3), "gbps": round(nbytes / ms / 1e6, 2)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--nthreads", type=int, default=2)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    nt = args.nthreads

    # sum over 16M float32
    n = 1 << 24
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    out = np.zeros(1, np.float32)
    k = RED["reduce:sum"][0]
    for t in sorted({1, nt}):
        ms = best_ms(lambda: run_on_numpy(k, [x], [out], iattr=(1,), nthreads=t), args.repeat)
        emit("sum", n, "float32", "mxc-kernel", t, ms, x.nbytes)
    emit("sum", n, "float32", "numpy", 1, best_ms(lambda: np.sum(x), args.repeat), x.nbytes)
    if torch is not None:
        torch.set_num_threads(nt)
        tx = torch.from_numpy(x)
        emit("sum", n, "float32", "torch", nt, best_ms(lambda: tx.sum(), args.repeat), x.nbytes)

    # 4096 x 4096 float32 transpose into a new contiguous array
    m = 4096
    a = np.random.default_rng(1).random((m, m), dtype=np.float32)
    b = np.empty_like(a)
    kt = SHAPE["transpose"][0]
    nbytes = 2 * a.nbytes
    for t in sorted({1, nt}):
        ms = best_ms(lambda: run_on_numpy(kt, [a], [b], iattr=(1, 0), nthreads=t), args.repeat)
        emit("transpose", m * m, "float32", "mxc-kernel", t, ms, nbytes)
    assert np.array_equal(b, a.T)
    emit("transpose", m * m, "float32", "numpy", 1,
         best_ms(lambda: np.copyto(b, a.T), args.repeat), nbytes)
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        emit("transpose", m * m, "float32", "torch", nt,
             best_ms(lambda: tb.copy_(ta.t()), args.repeat), nbytes)


if __name__ == "__main__":
    main()

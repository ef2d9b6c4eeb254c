"""Memory bandwidth of the elementwise CPU kernels against numpy (and torch when importable).

Prints one JSON line per figure:
    {"bench": "add", "n": 16777216, "dtype": "float32", "impl": "mxc-kernel", "gbps": ...}
GB/s = (bytes read + bytes written) / best time over repeats (1e9 bytes per GB), the
implementations interleaved. Every
implementation writes into a preallocated output and uses the same thread count (default 2).

    python tools/bench/bench_kernels_elemwise.py [--threads N] [--sizes 1048576,16777216]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

# run from a source checkout (built in place) without installing
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from mxc._core.opcall import DTYPE_CODE, run_on_numpy
from mxc.ops.cpu.elemwise import KERNELS

# op -> (number of inputs, numpy function writing into out)
OPS = {
    "add": (2, lambda a, b, out: np.add(a, b, out=out)),
    "mul": (2, lambda a, b, out: np.multiply(a, b, out=out)),
    "relu": (1, lambda a, out: np.maximum(a, 0, out=out)),
    "exp": (1, lambda a, out: np.exp(a, out=out)),
    "log": (1, lambda a, out: np.log(a, out=out)),
    "log1p": (1, lambda a, out: np.log1p(a, out=out)),
    "expm1": (1, lambda a, out: np.expm1(a, out=out)),
}
POSITIVE = ("log", "log1p")   # run on |x| + 0.01: a nan per other element is not the usual work


def best_times(fns, rounds=6, reps=4):
    """Best time of each function; the functions take turns, round after round, so that a burst
    of load from other processes on a shared machine hits all of them alike."""
    for fn in fns.values():
        fn()   # warm up: page faults, thread team creation
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                best[k] = min(best[k], time.perf_counter() - t0)
    return best


def torch_impls(threads):
    try:
        import torch
    except Exception:   # not installed, or installed without its native dependencies
        return None
    torch.set_num_threads(threads)
    return {
        "add": lambda a, b, out: torch.add(a, b, out=out),
        "mul": lambda a, b, out: torch.mul(a, b, out=out),
        "relu": lambda a, out: torch.clamp_min(a, 0, out=out),
        "exp": lambda a, out: torch.exp(a, out=out),
        "log": lambda a, out: torch.log(a, out=out),
        "log1p": lambda a, out: torch.log1p(a, out=out),
        "expm1": lambda a, out: torch.expm1(a, out=out),
    }, torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sizes", default="1048576,16777216")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(0)
    tor = torch_impls(args.threads)
    key = DTYPE_CODE[np.dtype(np.float32)]
    for n in sizes:
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        pos = np.abs(a) + np.float32(0.01)
        out = np.empty_like(a)
        for op, (nin, npfn) in OPS.items():
            ins = [pos] if op in POSITIVE else [a, b][:nin]
            nbytes = (nin + 1) * 4 * n
            k = KERNELS["binary:" + op if nin == 2 else "unary:" + op][key]
            figures = {
                "mxc-kernel": lambda: run_on_numpy(k, ins, [out], nthreads=args.threads),
                "numpy": lambda: npfn(*ins, out),
            }
            if tor is not None:
                tfns, torch = tor
                tins = [torch.from_numpy(x) for x in ins]
                tout = torch.from_numpy(out)
                figures["torch"] = lambda: tfns[op](*tins, out=tout)
            for impl, t in best_times(figures).items():
                print(json.dumps({"bench": op, "n": n, "dtype": "float32", "impl": impl,
                                  "gbps": round(nbytes / t / 1e9, 2),
                                  "threads": args.threads if impl != "numpy" else 1}),
                      flush=True)


if __name__ == "__main__":
    main()

"""What the profiler costs per operation: one JSON line per figure.

    python tools/bench/bench_profiler.py [--quick]

Figures, each with the profiler off and recording (best of several rounds, alternating; the
records are taken and dropped between rounds so the buffer never grows past one round):
- engine_chain: a no-op native operation pushed 20,000 times on one var, then one wait
  (engine._bench_native), us per operation;
- engine_single: one push and its wait, us;
- pool_alloc_free: a storage_alloc + storage_free pair of 4 KiB with profile_memory, ns.
The "delta" lines are recording minus off. (A loop of small ``mx.nd`` adds was dropped from
the figures: on 2 shared cores its time was set by how the pushing thread and the worker were
scheduled, 0.6 to 4 us per add either way, not by the profiler.)
"""
import argparse
import json
import time

import mxc  # noqa: F401  (the package sets the engine up as users get it)
from mxc._core import engine, storage


def emit(bench, mode, value, unit):
    print(json.dumps(dict(bench=bench, mode=mode, value=round(value, 4), unit=unit)), flush=True)


def best_pair(fn, switch, repeat):
    """Best of `repeat` rounds each way, off and recording alternating (a busy machine then
    slows both alike)."""
    off = on = float("inf")
    for _ in range(repeat):
        switch(False)
        off = min(off, fn())
        switch(True)
        on = min(on, fn())
        switch(False)
        engine.profile_take()
        storage.profile_take_memory()
    return off, on


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 3 if args.quick else 7
    n = 5000 if args.quick else 20000
    figures = {
        "engine_chain": (lambda: engine._bench_native(n, 1)["chain_us_per_op"], "us/op",
                         engine.profile_set_ops),
        "engine_single": (lambda: engine._bench_native(1, n // 4)["single_us"], "us",
                          engine.profile_set_ops),
        "pool_alloc_free": (lambda: storage._bench_pool(4096, n), "ns",
                            storage.profile_set_memory),
    }
    for bench, (fn, unit, switch) in figures.items():
        fn()                                    # warm up
        off, on = best_pair(fn, switch, repeat)
        emit(bench, "off", off, unit)
        emit(bench, "recording", on, unit)
        emit(bench, "delta", on - off, unit)


if __name__ == "__main__":
    main()

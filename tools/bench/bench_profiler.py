"""What the profiler costs per operation: one JSON line per figure.

    python tools/bench/bench_profiler.py [--quick]

Figures, each with the profiler off and recording (best of several rounds, alternating; the
records are taken and dropped between rounds so the buffer never grows past one round):
- engine_chain: a no-op native operation pushed 20,000 times on one var, then one wait
  (engine._bench_native), us per operation;
- engine_single: one push and its wait, us;
- nd_add: ``a + b`` on 16-element arrays then one wait at the end, 5,000 times, us per add;
- pool_alloc_free: a storage_alloc + storage_free pair of 4 KiB with profile_memory, ns.
The "delta" lines are recording minus off.
"""
import argparse
import json
import time

import mxc as mx
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
    a = mx.nd.ones((16,))
    b = mx.nd.ones((16,))

    def nd_add():
        t0 = time.perf_counter()
        c = a
        for _ in range(n // 4):
            c = c + b
        c.wait_to_read()
        return (time.perf_counter() - t0) / (n // 4) * 1e6

    figures = {
        "engine_chain": (lambda: engine._bench_native(n, 1)["chain_us_per_op"], "us/op",
                         engine.profile_set_ops),
        "engine_single": (lambda: engine._bench_native(1, n // 4)["single_us"], "us",
                          engine.profile_set_ops),
        "nd_add": (nd_add, "us/op", engine.profile_set_ops),
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

"""Push+pull of one 25M-float32 key per step on N workers (dist_sync) against a raw mpi4py
Allreduce of the same buffer, in the same run (issue 10 section 5: at most 1.25x).

    mpiexec -n 2 python tools/bench/bench_dist_kvstore.py [--size 25000000] [--steps 10]
        [--rounds 3] [--keys 1] [--one-core]

Rounds alternate a block of raw Allreduce calls and a block of push+pull; ``--one-core`` pins
each rank to its own core (when there are enough; then the store's threads share it, as in
the one-core-per-process training target). Rank 0 prints one JSON line per figure: the median and
the minimum time per step of each (the minimum is the figure least disturbed by other load),
the CPU time per step of the whole process (all threads: the store sums on its communication
thread), and the ratios. ``--keys K`` splits the buffer into K keys pushed in one step (a
model's gradients; the store sums them together). Set MXC_KVSTORE_SHM=0 to measure the store
over MPI_Iallreduce instead of its shared-memory window."""
import argparse
import json
import os
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=25_000_000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1)
    ap.add_argument("--one-core", action="store_true")
    args = ap.parse_args()
    import mxc as mx
    from mpi4py import MPI
    kv = mx.kv.create("dist_sync")
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if args.one_core and len(cores) >= kv.num_workers > 1:
        os.sched_setaffinity(0, {cores[kv.rank]})
    comm = MPI.COMM_WORLD
    cuts = [args.size * i // args.keys for i in range(args.keys + 1)]
    sizes = [cuts[i + 1] - cuts[i] for i in range(args.keys)]
    grads = [mx.nd.ones((n,)) for n in sizes]
    outs = [mx.nd.zeros((n,)) for n in sizes]
    for k, o in enumerate(outs):
        kv.init(k, o)
    for o in outs:
        o.wait_to_read()
    a = np.ones(args.size, np.float32)
    b = np.empty_like(a)
    raw, ours, raw_cpu, ours_cpu = [], [], [], []
    for _ in range(args.rounds):
        comm.Barrier()
        c = time.process_time()
        for _ in range(args.steps):
            t = time.perf_counter()
            comm.Allreduce(a, b)
            raw.append(time.perf_counter() - t)
        raw_cpu.append((time.process_time() - c) / args.steps)
        kv.barrier()
        c = time.process_time()
        for _ in range(args.steps):
            t = time.perf_counter()
            for k in range(args.keys):
                kv.push(k, grads[k], priority=-k)
            for k in range(args.keys):
                kv.pull(k, out=outs[k], priority=-k)
            for o in outs:
                o.wait_to_read()
            ours.append(time.perf_counter() - t)
        ours_cpu.append((time.process_time() - c) / args.steps)
    assert all(float(o.asnumpy()[0]) == kv.num_workers for o in outs if o.size)
    if kv.rank == 0:
        common = {"bench": "dist_kvstore", "workers": kv.num_workers, "floats": args.size,
                  "keys": args.keys, "steps": len(ours), "one_core_per_rank": args.one_core,
                  "store_sums_over": "MPI_Iallreduce" if getattr(kv._comm, "_node", None) is None
                  else "shared-memory window"}

        def ms(v):
            return round(v * 1e3, 1)
        for name, vals, cpu in (("raw_mpi_allreduce", raw, raw_cpu),
                                ("dist_sync_push_pull", ours, ours_cpu)):
            print(json.dumps(dict(figure=name + "_ms", median=ms(np.median(vals)),
                                  min=ms(min(vals)), cpu_ms_per_step=ms(np.median(cpu)),
                                  **common)))
        print(json.dumps(dict(figure="ratio_push_pull_over_raw",
                              median=round(float(np.median(ours) / np.median(raw)), 3),
                              min=round(min(ours) / min(raw), 3), target=1.25, **common)))


if __name__ == "__main__":
    main()

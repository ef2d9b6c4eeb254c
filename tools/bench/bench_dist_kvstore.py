"""Push+pull of one 25M-float32 key per step on N workers (dist_sync) against a raw mpi4py
Allreduce of the same buffer, in the same run. Run: mpiexec -n 2 python tools/bench/bench_dist_kvstore.py
Prints one JSON line per figure from rank 0."""
import argparse
import json
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=25_000_000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import mxc as mx
    from mpi4py import MPI
    kv = mx.kv.create("dist_sync")
    comm = MPI.COMM_WORLD
    grad = mx.nd.ones((args.size,))
    out = mx.nd.zeros((args.size,))
    kv.init(0, out)
    out.wait_to_read()
    a = np.ones(args.size, np.float32)
    b = np.empty_like(a)
    raw, ours = [], []
    for _ in range(args.rounds):
        comm.Barrier()
        for _ in range(args.steps):
            t = time.perf_counter()
            comm.Allreduce(a, b)
            raw.append(time.perf_counter() - t)
        kv.barrier()
        for _ in range(args.steps):
            t = time.perf_counter()
            kv.push(0, grad)
            kv.pull(0, out=out)
            out.wait_to_read()
            ours.append(time.perf_counter() - t)
    assert float(out.asnumpy()[0]) == kv.num_workers
    if kv.rank == 0:
        med_raw, med_ours = float(np.median(raw)), float(np.median(ours))
        common = {"workers": kv.num_workers, "floats": args.size, "steps": len(ours)}
        print(json.dumps(dict(figure="raw_mpi_allreduce_ms", value=round(med_raw * 1e3, 1),
                              **common)))
        print(json.dumps(dict(figure="dist_sync_push_pull_ms", value=round(med_ours * 1e3, 1),
                              **common)))
        print(json.dumps(dict(figure="ratio_push_pull_over_raw",
                              value=round(med_ours / med_raw, 3), target=1.25, **common)))


if __name__ == "__main__":
    main()

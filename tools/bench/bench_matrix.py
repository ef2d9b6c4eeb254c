"""FullyConnected (batch 2048, 2048 -> 2048, float32) and dot 2048^3 (float32): GFLOP/s of mxc,
numpy (``x @ w.T + b``, ``a @ b``) and PyTorch (``F.linear``, ``torch.mm``), interleaved in one run,
best of N each. One JSON line per figure.

    PYTHONPATH=. python tools/bench/bench_matrix.py [--n 2048] [--repeat 5]
"""
import argparse
import json
import time

import numpy as np


def best(fn, repeat):
    fn()
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.n
    import mxc as mx
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n), dtype=np.float32)
    w = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n,), dtype=np.float32)
    mx_x, mx_w, mx_b = mx.nd.array(x), mx.nd.array(w), mx.nd.array(b)
    impls = {
        "fc": {"mxc": lambda: mx.nd.FullyConnected(mx_x, mx_w, mx_b, num_hidden=n).wait_to_read(),
               "numpy": lambda: x @ w.T + b},
        "dot": {"mxc": lambda: mx.nd.dot(mx_x, mx_w).wait_to_read(),
                "numpy": lambda: x @ w},
    }
    try:
        import torch
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        impls["fc"]["torch"] = lambda: torch.nn.functional.linear(tx, tw, tb)
        impls["dot"]["torch"] = lambda: torch.mm(tx, tw)
        threads = {"torch": torch.get_num_threads()}
    except ImportError:
        threads = {}
    flops = 2.0 * n * n * n
    times = {(f, i): float("inf") for f in impls for i in impls[f]}
    for f in impls:                       # warm up
        for i, fn in impls[f].items():
            fn()
    for _ in range(args.repeat):          # interleaved: one run of each per round
        for f in impls:
            for i, fn in impls[f].items():
                times[(f, i)] = min(times[(f, i)], best(fn, 1))
    from mxc._core import blas
    for f in impls:
        for i in impls[f]:
            print(json.dumps({"figure": f"{'FullyConnected' if f == 'fc' else 'dot'} n={n} float32",
                              "impl": i, "value": round(flops / times[(f, i)] / 1e9, 2),
                              "unit": "GFLOP/s"}))
    print(json.dumps({"figure": "threads", "impl": "mxc", "value": blas.get_num_threads(),
                      "unit": "BLAS threads", **({"torch": threads["torch"]} if threads else {})}))


if __name__ == "__main__":
    main()

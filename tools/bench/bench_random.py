"""Random generation throughput: mxc (Philox4x32-10, OpenMP) vs numpy's Generator (PCG64) vs
PyTorch (CPU), in one run. One JSON line per figure: best-of-N milliseconds for 1M float32
uniform / normal samples and a 1M-element Dropout (training mode)."""
import argparse
import json
import time

import numpy as np


def best(fn, n):
    fn()
    t = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    n, r = args.size, args.repeat

    import mxc as mx
    mx.random.seed(0)
    x = mx.nd.ones((n,))

    def run(f):
        def go():
            f()
            mx.nd.waitall()
        return go
    figures = {
        "uniform_1M_f32": {"mxc": run(lambda: mx.nd.random.uniform(shape=(n,)))},
        "normal_1M_f32": {"mxc": run(lambda: mx.nd.random.normal(shape=(n,)))},
        "dropout_1M_f32": {"mxc": run(lambda: mx.nd.Dropout(x, p=0.5, mode="always"))},
    }
    g = np.random.default_rng(0)
    xn = np.ones(n, np.float32)
    figures["uniform_1M_f32"]["numpy"] = lambda: g.random(n, dtype=np.float32)
    figures["normal_1M_f32"]["numpy"] = lambda: g.standard_normal(n, dtype=np.float32)
    figures["dropout_1M_f32"]["numpy"] = lambda: xn * ((g.random(n, dtype=np.float32) >= 0.5) * 2.0)
    try:
        import torch
        torch.manual_seed(0)
        xt = torch.ones(n)
        figures["uniform_1M_f32"]["torch"] = lambda: torch.rand(n)
        figures["normal_1M_f32"]["torch"] = lambda: torch.randn(n)
        figures["dropout_1M_f32"]["torch"] = lambda: torch.nn.functional.dropout(xt, 0.5, True)
    except ImportError:
        pass
    for fig, impls in figures.items():
        for impl, fn in impls.items():
            print(json.dumps({"figure": fig, "impl": impl, "value": round(best(fn, r), 3),
                              "unit": "ms"}))


if __name__ == "__main__":
    main()

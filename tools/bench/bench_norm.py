"""Benchmark BatchNorm training forward + backward on (32, 64, 32, 32) float32: mxc (through
mx.nd, and the bare kernels), numpy, and PyTorch (torch.nn.functional.batch_norm with autograd),
in the same run, best of N, interleaved.

Prints one JSON line per figure: {"figure", "impl", "value", "unit"} (value: milliseconds for one
forward + backward), then the ratios peer / mxc.

    python tools/bench/bench_norm.py [--repeat 20] [--shape 32,64,32,32]

Threads: mxc's kernels use registry.omp_threads() (OMP_NUM_THREADS when set, else the cores);
torch is set to the same count. On a busy machine, OMP_NUM_THREADS=1 gives steadier minima.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import mxc as mx  # noqa: E402
from mxc._core import modes  # noqa: E402
from mxc._core.opcall import run_on_numpy  # noqa: E402
from mxc.ops import registry  # noqa: E402
from mxc.ops.cpu.normalization import KERNELS  # noqa: E402


def emit(figure, impl, ms):
    print(json.dumps({"figure": figure, "impl": impl, "value": round(ms, 3), "unit": "ms"}),
          flush=True)


def numpy_bn(x, gamma, beta, dy, eps):
    red = (0, 2, 3)
    mean = x.mean(axis=red, keepdims=True)
    xc = x - mean
    var = (xc * xc).mean(axis=red, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    xh = xc * inv
    y = xh * gamma[None, :, None, None] + beta[None, :, None, None]
    db = dy.sum(axis=red)
    dg = (dy * xh).sum(axis=red)
    n = x.size // x.shape[1]
    dx = (gamma[None, :, None, None] * inv) * (dy - db[None, :, None, None] / n
                                               - xh * dg[None, :, None, None] / n)
    return y, dx, dg, db


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--shape", default="32,64,32,32")
    args = ap.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    c = shape[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.standard_normal(c).astype(np.float32)
    eps = 1e-3
    fig = f"batchnorm_train_fwd_bwd_{'x'.join(map(str, shape))}_float32"

    # mxc through mx.nd: forward in training mode, then the registry gradient (what autograd runs)
    op = registry.get("BatchNorm")
    attrs = op.parse({"fix_gamma": False, "eps": eps})
    nx, ndy, ng, nb = (mx.nd.array(a) for a in (x, dy, gamma, beta))
    nmm, nmv = mx.nd.zeros(c), mx.nd.ones(c)

    def run_mxc():
        prev = modes.set_training(True)
        try:
            y = mx.nd.BatchNorm(nx, ng, nb, nmm, nmv, fix_gamma=False, eps=eps)
            dx, dg, db, _, _ = op.grad(mx.nd, attrs, [nx, ng, nb, nmm, nmv], [y], [ndy])
        finally:
            modes.set_training(prev)
        dx.wait_to_read()
        db.wait_to_read()

    # the bare kernels on numpy buffers (no engine, no allocation)
    nt = registry.omp_threads()
    A, B = shape[0], int(np.prod(shape[2:]))
    y_k, dx_k = np.empty_like(x), np.empty_like(x)
    dg_k, db_k = np.empty(c, np.float32), np.empty(c, np.float32)
    mm_k, mv_k = np.zeros(c, np.float32), np.ones(c, np.float32)

    def run_kernels():
        run_on_numpy(KERNELS["bn_fwd"][0], [x, gamma, beta, mm_k, mv_k], [y_k],
                     iattr=(A, c, B, 1, 0, 0), fattr=(eps,), nthreads=nt)
        run_on_numpy(KERNELS["bn_bwd"][0], [dy, x, gamma], [dx_k, dg_k, db_k, mm_k, mv_k],
                     iattr=(A, c, B, 1, 0, 1), fattr=(eps, 0.9), nthreads=nt)

    def run_numpy():
        numpy_bn(x, gamma, beta, dy, eps)

    print(json.dumps({"figure": fig + "_threads", "impl": "all", "value": nt, "unit": "threads"}))
    runs = {"mxc": run_mxc, "mxc-kernels": run_kernels, "numpy": run_numpy}
    try:
        import torch
        import torch.nn.functional as tF
        torch.set_num_threads(nt)
        tx = torch.from_numpy(x).requires_grad_(True)
        tg = torch.from_numpy(gamma.copy()).requires_grad_(True)
        tb = torch.from_numpy(beta.copy()).requires_grad_(True)
        tdy = torch.from_numpy(dy)
        tmm, tmv = torch.zeros(c), torch.ones(c)

        def run_torch():
            tx.grad = tg.grad = tb.grad = None
            y = tF.batch_norm(tx, tmm, tmv, tg, tb, training=True, momentum=0.1, eps=eps)
            y.backward(tdy)

        runs["torch"] = run_torch
    except ImportError:
        torch = None

    # correctness of what is timed: mxc against torch / numpy
    run_mxc()
    ref = numpy_bn(x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64),
                   dy.astype(np.float64), eps)
    run_kernels()
    assert np.allclose(y_k, ref[0], rtol=1e-3, atol=1e-4)
    assert np.allclose(dx_k, ref[1], rtol=1e-3, atol=1e-4)

    best = {k: float("inf") for k in runs}
    for fn in runs.values():
        fn()                                    # warm up
    for _ in range(args.repeat):
        for k, fn in runs.items():              # interleaved: each round runs every impl once
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
    for k in runs:
        emit(fig, k, best[k] * 1e3)
    for k in runs:
        if k != "mxc":
            print(json.dumps({"figure": fig + "_ratio", "impl": f"{k}/mxc",
                              "value": round(best[k] / best["mxc"], 3), "unit": "x"}))


if __name__ == "__main__":
    main()

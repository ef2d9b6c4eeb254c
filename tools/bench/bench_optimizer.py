"""Adam step on one float32 parameter of N elements: mxc's adam_update (one fused pass), numpy
(MXNet's formula in place, one pass per array expression) and PyTorch's torch.optim.Adam
(foreach=False, and fused=True where this torch has a fused CPU Adam), side by side.

Prints one JSON line per figure; "GB/s" counts the bytes an Adam step must move (read weight,
grad, mean, var; write weight, mean, var: 28 bytes per element), whatever an implementation
moves in fact.

    PYTHONPATH=. python tools/bench/bench_optimizer.py [--n 10000000] [--repeat 7]
"""
import argparse
import json
import time

import numpy as np


def best(fn, repeat, sync=None):
    fn()
    if sync:
        sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def emit(figure, impl, value, unit):
    print(json.dumps({"figure": figure, "impl": impl, "value": round(value, 4), "unit": unit}),
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    n, rep = a.n, a.repeat
    moved = 28.0 * n
    fig = f"adam_update float32 n={n}"
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(n).astype(np.float32)
    g0 = rng.standard_normal(n).astype(np.float32)
    lr, b1, b2, eps, wd = 1e-3, 0.9, 0.999, 1e-8, 0.0

    import mxc as mx
    w, g, m, v = mx.nd.array(w0), mx.nd.array(g0), mx.nd.zeros(n), mx.nd.zeros(n)
    t = best(lambda: mx.nd.adam_update(w, g, m, v, lr=lr, beta1=b1, beta2=b2, epsilon=eps, wd=wd,
                                       out=w), rep, mx.nd.waitall)
    emit(fig, "mxc", moved / t / 1e9, "GB/s")
    emit(fig + " time", "mxc", t * 1e3, "ms")

    wn, mn, vn = w0.copy(), np.zeros(n, np.float32), np.zeros(n, np.float32)
    tmp = np.empty(n, np.float32)
    f1, f2 = np.float32(1 - b1), np.float32(1 - b2)

    def numpy_step():
        np.multiply(mn, np.float32(b1), out=mn)
        np.multiply(g0, f1, out=tmp)
        np.add(mn, tmp, out=mn)
        np.multiply(vn, np.float32(b2), out=vn)
        np.multiply(g0, g0, out=tmp)
        np.multiply(tmp, f2, out=tmp)
        np.add(vn, tmp, out=vn)
        np.sqrt(vn, out=tmp)
        np.add(tmp, np.float32(eps), out=tmp)
        np.divide(mn, tmp, out=tmp)
        np.multiply(tmp, np.float32(lr), out=tmp)
        np.subtract(wn, tmp, out=wn)
    t = best(numpy_step, rep)
    emit(fig, "numpy", moved / t / 1e9, "GB/s")
    emit(fig + " time", "numpy", t * 1e3, "ms")

    try:
        import torch
    except ImportError:
        return
    for variant, kw in (("foreach=False", dict(foreach=False)), ("fused=True", dict(fused=True))):
        p = torch.nn.Parameter(torch.from_numpy(w0.copy()))
        p.grad = torch.from_numpy(g0.copy())
        try:
            opt = torch.optim.Adam([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd, **kw)
            opt.step()
        except (RuntimeError, TypeError, ValueError) as e:
            print(json.dumps({"figure": fig, "impl": f"torch {variant}", "skipped": str(e)[:120]}))
            continue
        with torch.no_grad():
            t = best(opt.step, rep)
        emit(fig, f"torch {variant}", moved / t / 1e9, "GB/s")
        emit(fig + " time", f"torch {variant}", t * 1e3, "ms")


if __name__ == "__main__":
    main()

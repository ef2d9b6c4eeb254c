"""Max pooling forward and forward+backward at ResNet's stem shape (batch 8, 64 channels,
112x112, float32): 2x2 stride 2 and 3x3 stride 2 pad 1, mxc against PyTorch.

Figures per pool (``p2`` / ``p3``):

- ``<pool>_fwd``: inference forward (mxc: Pooling outside autograd; PyTorch: max_pool2d under
  no_grad);
- ``<pool>_fwd_bwd``: a recorded forward and its backward (mxc: autograd.record + backward,
  whose max backward scatters from the argmax the forward kept; PyTorch: max_pool2d on a tensor
  that requires grad, then backward);
- ``<pool>_fwd_bwd_search`` (mxc only): the same work as mxc did it before the argmax was kept,
  the plain forward then ``_backward_Pooling``'s search of every window for its first maximum;
  ``<pool>_fwd_bwd_argmax`` (mxc only): the forward keeping the argmax then
  ``_backward_Pooling_argmax``, operator by operator (no autograd), the like-for-like pair.

Each figure is the best of --reps timings of --inner back-to-back calls, per call, in ms. One
JSON line per (figure, impl), then same-run ratios: ``<figure>_mxc_over_torch`` (< 1: mxc is
faster) and ``<pool>_argmax_over_search`` (< 1: keeping the argmax is faster). PyTorch runs
on --threads threads (default 2); ``--clock cpu`` counts the process's CPU time, which on a
shared machine says more about the kernels' own cost than the wall clock.

    python tools/bench/bench_pool.py [--reps 5] [--inner 5] [--threads N] [--clock wall|cpu]
"""
import argparse
import json
import os
import time

import numpy as np

SHAPE = (8, 64, 112, 112)
POOLS = {"p2": dict(kernel=(2, 2), stride=(2, 2), pad=(0, 0)),
         "p3": dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))}


def mxc_steps(x, head):
    import mxc as mx
    from mxc.ops import registry
    pool, back, aback = (registry.get(n) for n in
                         ("Pooling", "_backward_Pooling", "_backward_Pooling_argmax"))
    xm = mx.nd.array(x)
    xm.attach_grad()
    steps = {}
    for name, kw in POOLS.items():
        kw = dict(kw, pool_type="max")
        a = pool.parse(kw)
        ak = pool.train_attrs(a)
        y = mx.nd.Pooling(xm, **kw)
        ix = mx.nd.zeros(y.shape, dtype="int32")
        dy = mx.nd.array(head[name])
        dx = mx.nd.zeros(xm.shape)
        ba, aa = back.parse(kw), aback.parse(kw)

        def fwd(kw=kw):
            mx.nd.Pooling(xm, **kw).wait_to_read()

        def fwd_bwd(kw=kw, dy=dy):
            with mx.autograd.record():
                out = mx.nd.Pooling(xm, **kw)
            out.backward(dy)
            xm.grad.wait_to_read()

        def search(a=a, ba=ba, y=y, dy=dy, dx=dx):
            pool.forward(a, [xm], [y])
            back.forward(ba, [dy, xm, y], [dx])
            dx.wait_to_read()

        def argmax(ak=ak, aa=aa, y=y, ix=ix, dy=dy, dx=dx):
            pool.forward(ak, [xm], [y, ix])
            aback.forward(aa, [dy, ix, xm], [dx])
            dx.wait_to_read()
        steps.update({f"{name}_fwd": fwd, f"{name}_fwd_bwd": fwd_bwd,
                      f"{name}_fwd_bwd_search": search, f"{name}_fwd_bwd_argmax": argmax})
    return steps


def torch_steps(x, head, threads):
    import torch
    torch.set_num_threads(threads)
    xt = torch.tensor(x, requires_grad=True)
    steps = {}
    for name, kw in POOLS.items():
        k, s, p = kw["kernel"][0], kw["stride"][0], kw["pad"][0]
        dy = torch.tensor(head[name])

        def fwd(k=k, s=s, p=p):
            with torch.no_grad():
                torch.nn.functional.max_pool2d(xt, k, s, p)

        def fwd_bwd(k=k, s=s, p=p, dy=dy):
            xt.grad = None
            torch.nn.functional.max_pool2d(xt, k, s, p).backward(dy)
        steps.update({f"{name}_fwd": fwd, f"{name}_fwd_bwd": fwd_bwd})
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--inner", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--impl", default="mxc,torch")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    head = {}
    for name, kw in POOLS.items():
        o = [(SHAPE[2 + i] + 2 * kw["pad"][i] - kw["kernel"][i]) // kw["stride"][i] + 1
             for i in range(2)]
        head[name] = rng.standard_normal(SHAPE[:2] + tuple(o)).astype(np.float32)
    impls = {}
    want = args.impl.split(",")
    if "mxc" in want:
        impls["mxc"] = mxc_steps(x, head)
    if "torch" in want:
        try:
            impls["torch"] = torch_steps(x, head, args.threads)
        except ImportError:
            print(json.dumps({"note": "PyTorch is not installed: no torch figures"}))
    best = {}
    for impl, steps in impls.items():
        for fig, fn in steps.items():
            time.sleep(0.2)                  # let the other runtime's threads go to sleep
            fn()
            b = float("inf")
            for _ in range(args.reps):
                t = clock()
                for _ in range(args.inner):
                    fn()
                b = min(b, (clock() - t) * 1e3 / args.inner)
            best[(fig, impl)] = b
            print(json.dumps({"figure": fig, "impl": impl, "value": round(b, 3), "unit": "ms",
                              "clock": args.clock}), flush=True)
    for (fig, impl), v in best.items():
        if impl == "mxc" and (fig, "torch") in best:
            print(json.dumps({"figure": fig + "_mxc_over_torch", "impl": "mxc",
                              "value": round(v / best[(fig, "torch")], 3), "unit": "ratio"}))
    for name in POOLS:
        s, a = best.get((f"{name}_fwd_bwd_search", "mxc")), best.get((f"{name}_fwd_bwd_argmax", "mxc"))
        if s and a:
            print(json.dumps({"figure": f"{name}_argmax_over_search", "impl": "mxc",
                              "value": round(a / s, 3), "unit": "ratio"}))


if __name__ == "__main__":
    main()

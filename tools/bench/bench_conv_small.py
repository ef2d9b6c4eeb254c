"""Convolutions with a small output (ResNet-18 v1 on 32x32 inputs, batch 32): mxc against PyTorch.

Figures (float32, batch 32, no bias; forward, and forward + backward for data and weight):
- stem7x7s2          (32, 3, 32, 32), 64 filters 7x7, stride 2, pad 3        -> (32, 64, 16, 16)
- conv3x3s2_8to4     (32, 64, 8, 8), 128 filters 3x3, stride 2, pad 1        -> (32, 128, 4, 4)
- conv3x3s1_4x4      (32, 256, 4, 4), 256 filters 3x3, stride 1, pad 1       -> (32, 256, 4, 4)
- conv3x3s1_2x2      (32, 256, 2, 2), 256 filters 3x3, stride 1, pad 1       -> (32, 256, 2, 2)
- conv3x3s2_2to1     (32, 256, 2, 2), 512 filters 3x3, stride 2, pad 1      -> (32, 512, 1, 1)
- conv3x3s1_1x1      (32, 512, 1, 1), 512 filters 3x3, stride 1, pad 1       -> (32, 512, 1, 1)

Each figure gets a suffix ``_fwd`` or ``_fwd_bwd``. One JSON line per (figure, implementation)
({"figure", "impl": "mxc" | "torch", "value", "unit": "ms"}), best of N; then one line per figure
with the ratio mxc/torch (unit "ratio", < 1: mxc is faster). Each implementation runs its N
repetitions of a figure as one block after a pause, so that the other runtime's spinning threads
have gone to sleep (see bench_conv.py). PyTorch runs on 2 threads.

    python tools/bench/bench_conv_small.py [--reps 10] [--impl mxc,torch]
"""
import argparse
import json
import time

import numpy as np

N = 32
# name: (data shape, num_filter, kernel, stride, pad)
SHAPES = {
    "stem7x7s2": ((N, 3, 32, 32), 64, 7, 2, 3),
    "conv3x3s2_8to4": ((N, 64, 8, 8), 128, 3, 2, 1),
    "conv3x3s1_4x4": ((N, 256, 4, 4), 256, 3, 1, 1),
    "conv3x3s1_2x2": ((N, 256, 2, 2), 256, 3, 1, 1),
    "conv3x3s2_2to1": ((N, 256, 2, 2), 512, 3, 2, 1),
    "conv3x3s1_1x1": ((N, 512, 1, 1), 512, 3, 1, 1),
}


def _out(shape, f, k, s, p):
    return (shape[0], f, (shape[2] + 2 * p - k) // s + 1, (shape[3] + 2 * p - k) // s + 1)


def _data(shape, f, k):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((f, shape[1], k, k)) * 0.05).astype(np.float32)
    return x, w


def mxc_steps():
    import mxc as mx
    steps = {}
    for name, (shape, f, k, s, p) in SHAPES.items():
        x, w = (mx.nd.array(a) for a in _data(shape, f, k))
        for a in (x, w):
            a.attach_grad()
        head = mx.nd.ones(_out(shape, f, k, s, p))
        kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), num_filter=f, no_bias=True)

        def fwd(x=x, w=w, kw=kw):
            mx.nd.Convolution(x, w, **kw).wait_to_read()

        def fwd_bwd(x=x, w=w, kw=kw, head=head):
            with mx.autograd.record():
                y = mx.nd.Convolution(x, w, **kw)
            y.backward(head)
            x.grad.wait_to_read()
            w.grad.wait_to_read()

        steps[name + "_fwd"] = fwd
        steps[name + "_fwd_bwd"] = fwd_bwd
    return steps


def torch_steps():
    import torch
    import torch.nn.functional as tf
    torch.set_num_threads(2)
    steps = {}
    for name, (shape, f, k, s, p) in SHAPES.items():
        x, w = (torch.from_numpy(a).requires_grad_() for a in _data(shape, f, k))
        head = torch.ones(_out(shape, f, k, s, p))

        def fwd(x=x, w=w, s=s, p=p):
            with torch.no_grad():
                tf.conv2d(x, w, None, stride=s, padding=p)

        def fwd_bwd(x=x, w=w, s=s, p=p, head=head):
            x.grad = w.grad = None
            tf.conv2d(x, w, None, stride=s, padding=p).backward(head)

        steps[name + "_fwd"] = fwd
        steps[name + "_fwd_bwd"] = fwd_bwd
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--impl", default="mxc,torch")
    ap.add_argument("--only", default=None, help="comma-separated shape names")
    args = ap.parse_args()
    want = args.impl.split(",")
    impls = {}
    if "mxc" in want:
        impls["mxc"] = mxc_steps()
    if "torch" in want:
        try:
            impls["torch"] = torch_steps()
        except ImportError:
            print(json.dumps({"note": "PyTorch is not installed: no torch figures"}))
    names = args.only.split(",") if args.only else list(SHAPES)
    figures = [n + suf for n in names for suf in ("_fwd", "_fwd_bwd")]
    best = {}
    for fig in figures:
        for impl, steps in impls.items():
            time.sleep(0.5)                     # let the other runtime's threads go to sleep
            steps[fig]()                        # warm up (allocations, lazy kernel tables)
            steps[fig]()
            for _ in range(args.reps):
                t = time.perf_counter()
                steps[fig]()
                dt = (time.perf_counter() - t) * 1e3
                best[fig, impl] = min(best.get((fig, impl), float("inf")), dt)
        for impl in impls:
            if (fig, impl) in best:
                print(json.dumps({"figure": fig, "impl": impl, "value": round(best[fig, impl], 3),
                                  "unit": "ms"}), flush=True)
        if (fig, "torch") in best and (fig, "mxc") in best:
            print(json.dumps({"figure": fig + "_mxc_over_torch", "impl": "mxc",
                              "value": round(best[fig, "mxc"] / best[fig, "torch"], 3),
                              "unit": "ratio"}), flush=True)


if __name__ == "__main__":
    main()

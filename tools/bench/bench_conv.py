"""Convolution and pooling speed: mxc against PyTorch (and numpy for the forwards), one run.

Figures (float32, batch 32, 64 channels, 32x32):
- conv3x3_fwd       3x3 convolution 64->64, pad 1, with bias
- conv3x3_fwd_bwd   the same forward, then backward through autograd for data and weight
                    (and bias) gradients
- maxpool2x2_fwd    2x2 max pooling, stride 2
- maxpool2x2_fwd_bwd the same forward and its backward through autograd

One JSON line per (figure, implementation): milliseconds, best of N; then one line per figure
with the ratio torch/mxc (> 1: mxc is faster). Each implementation runs its N repetitions of a
figure as one block, after a pause: interleaving them call by call measures mostly how each
runtime's spinning worker threads (PyTorch's OpenMP, OpenBLAS's) slow the other down on a
machine with few cores.

    python tools/bench/bench_conv.py [--reps 10] [--impl mxc,torch,numpy]
"""
import argparse
import json
import time

import numpy as np

N, C, H, W, F = 32, 64, 32, 32, 64


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((F, C, 3, 3)) * 0.05).astype(np.float32)
    b = rng.standard_normal(F).astype(np.float32)
    return x, w, b


def mxc_steps():
    import mxc as mx
    x, w, b = (mx.nd.array(a) for a in _data())
    for a in (x, w, b):
        a.attach_grad()
    head = mx.nd.ones((N, F, H, W))
    phead = mx.nd.ones((N, C, H // 2, W // 2))
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=F)

    def conv_fwd():
        mx.nd.Convolution(x, w, b, **kw).wait_to_read()

    def conv_fwd_bwd():
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, b, **kw)
        y.backward(head)
        x.grad.wait_to_read()
        w.grad.wait_to_read()
        b.grad.wait_to_read()

    def pool_fwd():
        mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2)).wait_to_read()

    def pool_fwd_bwd():
        with mx.autograd.record():
            y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2))
        y.backward(phead)
        x.grad.wait_to_read()

    return {"conv3x3_fwd": conv_fwd, "conv3x3_fwd_bwd": conv_fwd_bwd,
            "maxpool2x2_fwd": pool_fwd, "maxpool2x2_fwd_bwd": pool_fwd_bwd}


def torch_steps():
    import torch
    import torch.nn.functional as tf
    x, w, b = (torch.from_numpy(a).requires_grad_() for a in _data())
    head = torch.ones((N, F, H, W))
    phead = torch.ones((N, C, H // 2, W // 2))

    def conv_fwd():
        with torch.no_grad():
            tf.conv2d(x, w, b, padding=1)

    def conv_fwd_bwd():
        x.grad = w.grad = b.grad = None
        tf.conv2d(x, w, b, padding=1).backward(head)

    def pool_fwd():
        with torch.no_grad():
            tf.max_pool2d(x, 2, 2)

    def pool_fwd_bwd():
        x.grad = None
        tf.max_pool2d(x, 2, 2).backward(phead)

    return {"conv3x3_fwd": conv_fwd, "conv3x3_fwd_bwd": conv_fwd_bwd,
            "maxpool2x2_fwd": pool_fwd, "maxpool2x2_fwd_bwd": pool_fwd_bwd}


def numpy_steps():
    from numpy.lib.stride_tricks import sliding_window_view
    x, w, b = _data()

    def conv_fwd():
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = sliding_window_view(xp, (3, 3), axis=(2, 3))          # N, C, H, W, 3, 3
        y = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))      # N, H, W, F
        np.ascontiguousarray(y.transpose(0, 3, 1, 2)) + b[:, None, None]

    def pool_fwd():
        x.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))

    return {"conv3x3_fwd": conv_fwd, "maxpool2x2_fwd": pool_fwd}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--impl", default="mxc,torch,numpy")
    ap.add_argument("--peer-python", default=None,
                    help="a python with MXNet 1.9.1: its Convolution is timed right after")
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
    if "numpy" in want:
        impls["numpy"] = numpy_steps()
    figures = ["conv3x3_fwd", "conv3x3_fwd_bwd", "maxpool2x2_fwd", "maxpool2x2_fwd_bwd"]
    best = {}
    for fig in figures:
        for impl, steps in impls.items():
            if fig not in steps:
                continue
            time.sleep(0.5)                     # let the other runtimes' threads go to sleep
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
                                  "unit": "ms"}))
        if (fig, "torch") in best and (fig, "mxc") in best:
            print(json.dumps({"figure": fig + "_torch_over_mxc", "impl": "mxc",
                              "value": round(best[fig, "torch"] / best[fig, "mxc"], 3),
                              "unit": "ratio"}))
    if args.peer_python:
        import subprocess
        out = subprocess.run([args.peer_python, "-c", MXNET_SNIPPET % {"reps": args.reps}],
                             capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            if line.startswith("{"):
                print(line)


# MXNet 1.9.1 (MKLDNN build) on the same shapes, timed the same way in its own interpreter
MXNET_SNIPPET = r"""
import json, time
import numpy as np
import mxnet as mx
x = mx.nd.array(np.random.rand(32, 64, 32, 32).astype(np.float32))
w = mx.nd.array(np.random.rand(64, 64, 3, 3).astype(np.float32) * 0.1)
b = mx.nd.zeros(64)
for a in (x, w, b):
    a.attach_grad()
def fwd():
    mx.nd.Convolution(x, w, b, kernel=(3, 3), pad=(1, 1), num_filter=64).wait_to_read()
def fwd_bwd():
    with mx.autograd.record():
        y = mx.nd.Convolution(x, w, b, kernel=(3, 3), pad=(1, 1), num_filter=64)
    y.backward()
    x.grad.wait_to_read(); w.grad.wait_to_read(); b.grad.wait_to_read()
for fig, f in (("conv3x3_fwd", fwd), ("conv3x3_fwd_bwd", fwd_bwd)):
    f(); f()
    best = min((lambda t: (f(), time.perf_counter() - t)[1])(time.perf_counter())
               for _ in range(%(reps)d))
    print(json.dumps({"figure": fig, "impl": "mxnet", "value": round(best * 1e3, 3), "unit": "ms"}))
"""


if __name__ == "__main__":
    main()

"""Every convolution, pooling and BatchNorm layer shape of LeNet (batch 64) and CIFAR ResNet-18 v1
(batch 32), the convolutions of model-zoo ResNet-18 v1 at 224px (batch 8, ``z18_*``) and
DenseNet-121's layer shapes at 224px (batch 8, ``d121_*``: one mid-block layer of each dense
block, the transitions): mxc against PyTorch, forward and backward operator by operator.

Figures per layer (float32): ``<layer>_fwd`` (the forward operator) and ``<layer>_bwd`` (the
backward operator: mxc's ``_backward_Convolution`` / ``_backward_Pooling`` (max pooling:
``_backward_Pooling_argmax``, what autograd runs) / ``_backward_BatchNorm`` with every gradient;
PyTorch's ``aten.convolution_backward`` with the same gradients,
``max_pool2d_with_indices_backward``, ``native_batch_norm_backward``). For convolutions
PyTorch's data-only (``_bwd_data``) and weight-only (``_bwd_weight``) backward are printed as
well, to show where the time goes, and mxc's weight-only backward (``_bwd_weight``: the data
gradient skipped, as autograd runs a network's first layer).

Each figure is the best of --reps timings of --inner back-to-back calls (then a wait), divided
by --inner: per-call milliseconds including each runtime's dispatch. One JSON line per
(figure, impl), then ``<figure>_mxc_over_torch`` ratios (< 1: mxc is faster). PyTorch runs on 2
threads; mxc with its defaults. Each implementation runs a figure's repetitions as one block
after a pause (see bench_conv.py for why).

On a shared, loaded machine wall-clock figures mean little: ``--threads 1 --clock cpu`` runs
both implementations on one thread and counts the process's CPU time, which measures the kernels'
own cost whatever else runs.

    python tools/bench/bench_conv_layers.py [--reps 5] [--only lenet_conv1,...] [--impl mxc,torch]
                                            [--threads N] [--clock wall|cpu]
"""
import argparse
import json
import os
import time

import numpy as np

# name: (kind, data shape, params)
#   conv: (num_filter, kernel, stride, pad, bias)   pool: (kind, kernel, stride, pad)   bn: ()
LAYERS = {
    "lenet_conv1": ("conv", (64, 1, 28, 28), (20, 5, 1, 0, True)),
    "lenet_pool1": ("pool", (64, 20, 24, 24), ("max", 2, 2, 0)),
    "lenet_conv2": ("conv", (64, 20, 12, 12), (50, 5, 1, 0, True)),
    "lenet_pool2": ("pool", (64, 50, 8, 8), ("max", 2, 2, 0)),
    "r18_stem": ("conv", (32, 3, 32, 32), (64, 7, 2, 3, False)),
    "r18_bn64x16": ("bn", (32, 64, 16, 16), ()),
    "r18_pool": ("pool", (32, 64, 16, 16), ("max", 3, 2, 1)),
    "r18_s1_conv": ("conv", (32, 64, 8, 8), (64, 3, 1, 1, False)),
    "r18_bn64x8": ("bn", (32, 64, 8, 8), ()),
    "r18_s2_conv_s2": ("conv", (32, 64, 8, 8), (128, 3, 2, 1, False)),
    "r18_s2_down": ("conv", (32, 64, 8, 8), (128, 1, 2, 0, False)),
    "r18_s2_conv": ("conv", (32, 128, 4, 4), (128, 3, 1, 1, False)),
    "r18_bn128x4": ("bn", (32, 128, 4, 4), ()),
    "r18_s3_conv_s2": ("conv", (32, 128, 4, 4), (256, 3, 2, 1, False)),
    "r18_s3_down": ("conv", (32, 128, 4, 4), (256, 1, 2, 0, False)),
    "r18_s3_conv": ("conv", (32, 256, 2, 2), (256, 3, 1, 1, False)),
    "r18_bn256x2": ("bn", (32, 256, 2, 2), ()),
    "r18_s4_conv_s2": ("conv", (32, 256, 2, 2), (512, 3, 2, 1, False)),
    "r18_s4_down": ("conv", (32, 256, 2, 2), (512, 1, 2, 0, False)),
    "r18_s4_conv": ("conv", (32, 512, 1, 1), (512, 3, 1, 1, False)),
    "r18_bn512x1": ("bn", (32, 512, 1, 1), ()),
    "r18_gap": ("pool", (32, 512, 1, 1), ("avg_global", 1, 1, 0)),
    # model-zoo resnet18_v1 at 224px, batch 8 (bench_model_zoo.py): its convolutions
    "z18_stem": ("conv", (8, 3, 224, 224), (64, 7, 2, 3, False)),
    "z18_s1_conv": ("conv", (8, 64, 56, 56), (64, 3, 1, 1, False)),
    "z18_s2_conv_s2": ("conv", (8, 64, 56, 56), (128, 3, 2, 1, False)),
    "z18_s2_down": ("conv", (8, 64, 56, 56), (128, 1, 2, 0, False)),
    "z18_s2_conv": ("conv", (8, 128, 28, 28), (128, 3, 1, 1, False)),
    "z18_s3_conv_s2": ("conv", (8, 128, 28, 28), (256, 3, 2, 1, False)),
    "z18_s3_down": ("conv", (8, 128, 28, 28), (256, 1, 2, 0, False)),
    "z18_s3_conv": ("conv", (8, 256, 14, 14), (256, 3, 1, 1, False)),
    "z18_s4_conv_s2": ("conv", (8, 256, 14, 14), (512, 3, 2, 1, False)),
    "z18_s4_down": ("conv", (8, 256, 14, 14), (512, 1, 2, 0, False)),
    "z18_s4_conv": ("conv", (8, 512, 7, 7), (512, 3, 1, 1, False)),
    # model-zoo densenet121 at 224px, batch 8: a mid-block layer of each dense block
    # (BN-ReLU-1x1 conv to 128, BN-ReLU-3x3 conv to 32), the transitions' 1x1 convolutions
    # and 2x2 average pools
    "d121_b1_bn": ("bn", (8, 160, 56, 56), ()),
    "d121_b1_c1": ("conv", (8, 160, 56, 56), (128, 1, 1, 0, False)),
    "d121_b1_bn128": ("bn", (8, 128, 56, 56), ()),
    "d121_b1_c3": ("conv", (8, 128, 56, 56), (32, 3, 1, 1, False)),
    "d121_t1_c1": ("conv", (8, 256, 56, 56), (128, 1, 1, 0, False)),
    "d121_t1_pool": ("pool", (8, 128, 56, 56), ("avg", 2, 2, 0)),
    "d121_b2_bn": ("bn", (8, 320, 28, 28), ()),
    "d121_b2_c1": ("conv", (8, 320, 28, 28), (128, 1, 1, 0, False)),
    "d121_b2_bn128": ("bn", (8, 128, 28, 28), ()),
    "d121_b2_c3": ("conv", (8, 128, 28, 28), (32, 3, 1, 1, False)),
    "d121_t2_c1": ("conv", (8, 512, 28, 28), (256, 1, 1, 0, False)),
    "d121_b3_bn": ("bn", (8, 640, 14, 14), ()),
    "d121_b3_c1": ("conv", (8, 640, 14, 14), (128, 1, 1, 0, False)),
    "d121_b3_bn128": ("bn", (8, 128, 14, 14), ()),
    "d121_b3_c3": ("conv", (8, 128, 14, 14), (32, 3, 1, 1, False)),
    "d121_t3_c1": ("conv", (8, 1024, 14, 14), (512, 1, 1, 0, False)),
    "d121_b4_bn": ("bn", (8, 768, 7, 7), ()),
    "d121_b4_c1": ("conv", (8, 768, 7, 7), (128, 1, 1, 0, False)),
    "d121_b4_bn128": ("bn", (8, 128, 7, 7), ()),
    "d121_b4_c3": ("conv", (8, 128, 7, 7), (32, 3, 1, 1, False)),
}


def _conv_out(shape, f, k, s, p):
    return (shape[0], f, (shape[2] + 2 * p - k) // s + 1, (shape[3] + 2 * p - k) // s + 1)


def _pool_out(shape, kind, k, s, p):
    if kind == "avg_global":
        return shape[:2] + (1, 1)
    return shape[:2] + ((shape[2] + 2 * p - k) // s + 1, (shape[3] + 2 * p - k) // s + 1)


def _data(kind, shape, prm):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "conv":
        f, k, s, p, bias = prm
        w = (rng.standard_normal((f, shape[1], k, k)) * 0.05).astype(np.float32)
        b = rng.standard_normal(f).astype(np.float32) if bias else None
        dy = rng.standard_normal(_conv_out(shape, f, k, s, p)).astype(np.float32)
        return x, w, b, dy
    if kind == "pool":
        return x, None, None, rng.standard_normal(_pool_out(shape, *prm)).astype(np.float32)
    c = shape[1]
    g = (1 + 0.1 * rng.standard_normal(c)).astype(np.float32)
    b = (0.1 * rng.standard_normal(c)).astype(np.float32)
    return x, g, b, rng.standard_normal(shape).astype(np.float32)


def mxc_steps(names):
    import mxc as mx
    nd = mx.nd
    steps = {}
    for name in names:
        kind, shape, prm = LAYERS[name]
        x, w, b, dy = (None if a is None else nd.array(a) for a in _data(kind, shape, prm))
        if kind == "conv":
            f, k, s, p, bias = prm
            kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), num_filter=f, no_bias=not bias)
            ins = (x, w, b) if bias else (x, w)
            steps[name + "_fwd"] = lambda ins=ins, kw=kw: nd.Convolution(*ins, **kw)
            steps[name + "_bwd"] = (lambda ins=ins, kw=kw, dy=dy:
                                    nd._internal._backward_Convolution(dy, *ins, **kw))
            # the weight (and bias) gradients only, as autograd runs a first layer's backward
            bop = mx.ops.registry.get("_backward_Convolution")
            battrs = dict(bop.parse(kw), _skip_outputs=(0,))
            grads = [nd.zeros(a.shape) for a in ins]
            steps[name + "_bwd_weight"] = (lambda bop=bop, a=battrs, ins=(dy,) + ins, gs=grads:
                                           bop.forward(a, list(ins), gs))
        elif kind == "pool":
            pk, k, s, p = prm
            if pk == "avg_global":
                kw = dict(kernel=(1, 1), pool_type="avg", global_pool=True)
            else:
                kw = dict(kernel=(k, k), stride=(s, s), pad=(p, p), pool_type=pk)
            y = nd.Pooling(x, **kw)
            steps[name + "_fwd"] = lambda x=x, kw=kw: nd.Pooling(x, **kw)
            if pk == "max":
                # what autograd runs: the scatter from the argmax its forward kept (the
                # search of every window, _backward_Pooling, is bench_pool's "search")
                pool = mx.ops.registry.get("Pooling")
                ix = nd.zeros(y.shape, dtype="int32")
                pool.forward(pool.train_attrs(pool.parse(kw)), [x], [y, ix])
                steps[name + "_bwd"] = (lambda x=x, ix=ix, dy=dy, kw=kw:
                                        nd._internal._backward_Pooling_argmax(dy, ix, x, **kw))
            else:
                steps[name + "_bwd"] = (lambda x=x, y=y, dy=dy, kw=kw:
                                        nd._internal._backward_Pooling(dy, x, y, **kw))
        else:
            c = shape[1]
            mean, var = nd.zeros(c), nd.ones(c)
            kw = dict(fix_gamma=False, eps=1e-5, momentum=0.9)

            def bn_fwd(x=x, g=w, b=b, mean=mean, var=var, kw=kw):
                with mx.autograd.train_mode():
                    return nd.BatchNorm(x, g, b, mean, var, **kw)

            def bn_fb(x=x, g=w, b=b, mean=mean, var=var, kw=kw, dy=dy):
                with mx.autograd.record():
                    y = nd.BatchNorm(x, g, b, mean, var, **kw)
                y.backward(dy)
            for a in (x, w, b):
                a.attach_grad()
            steps[name + "_fwd"] = bn_fwd
            steps[name + "_fwd_bwd"] = bn_fb
    return steps, nd.waitall


def torch_steps(names, threads):
    import torch
    import torch.nn.functional as tf
    torch.set_num_threads(threads)
    aten = torch.ops.aten
    steps = {}
    for name in names:
        kind, shape, prm = LAYERS[name]
        x, w, b, dy = (None if a is None else torch.from_numpy(a) for a in _data(kind, shape, prm))
        if kind == "conv":
            f, k, s, p, bias = prm

            def cb(mask, x=x, w=w, dy=dy, s=s, p=p, bias=bias):
                return aten.convolution_backward(dy, x, w, [w.shape[0]] if bias else None,
                                                 [s, s], [p, p], [1, 1], False, [0, 0], 1,
                                                 [mask[0], mask[1], bias and mask[2]])
            steps[name + "_fwd"] = lambda x=x, w=w, b=b, s=s, p=p: tf.conv2d(x, w, b, s, p)
            steps[name + "_bwd"] = lambda cb=cb: cb((True, True, True))
            steps[name + "_bwd_data"] = lambda cb=cb: cb((True, False, False))
            steps[name + "_bwd_weight"] = lambda cb=cb: cb((False, True, True))
        elif kind == "pool":
            pk, k, s, p = prm
            if pk == "avg_global":
                steps[name + "_fwd"] = lambda x=x: tf.adaptive_avg_pool2d(x, 1)
                steps[name + "_bwd"] = (lambda x=x, dy=dy:
                                        aten._adaptive_avg_pool2d_backward(dy, x))
            elif pk == "avg":
                steps[name + "_fwd"] = lambda x=x, k=k, s=s, p=p: tf.avg_pool2d(x, k, s, p)
                steps[name + "_bwd"] = (lambda x=x, dy=dy, k=k, s=s, p=p:
                                        aten.avg_pool2d_backward(dy, x, [k, k], [s, s], [p, p],
                                                                 False, True, None))
            else:
                y, idx = aten.max_pool2d_with_indices(x, [k, k], [s, s], [p, p])
                steps[name + "_fwd"] = (lambda x=x, k=k, s=s, p=p:
                                        aten.max_pool2d_with_indices(x, [k, k], [s, s], [p, p]))
                steps[name + "_bwd"] = (lambda x=x, dy=dy, idx=idx, k=k, s=s, p=p:
                                        aten.max_pool2d_with_indices_backward(
                                            dy, x, [k, k], [s, s], [p, p], [1, 1], False, idx))
        else:
            c = shape[1]
            mean, var = torch.zeros(c), torch.ones(c)
            g = w.requires_grad_()
            bb = b.requires_grad_()
            xx = x.requires_grad_()
            steps[name + "_fwd"] = (lambda x=x, g=g, b=bb, mean=mean, var=var:
                                    tf.batch_norm(x.detach(), mean, var, g.detach(), b.detach(),
                                                  True, 0.1, 1e-5))

            def bn_fb(x=xx, g=g, b=bb, mean=mean, var=var, dy=dy):
                x.grad = g.grad = b.grad = None
                tf.batch_norm(x, mean, var, g, b, True, 0.1, 1e-5).backward(dy)
            steps[name + "_fwd_bwd"] = bn_fb
    return steps, (lambda: None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--inner", type=int, default=10)
    ap.add_argument("--impl", default="mxc,torch")
    ap.add_argument("--only", default=None, help="comma-separated layer names (prefixes)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of both runtimes (default: mxc's default, PyTorch 2)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()
    if args.threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    names = list(LAYERS)
    if args.only:
        pre = args.only.split(",")
        names = [n for n in names if any(n.startswith(q) for q in pre)]
    impls = {}
    want = args.impl.split(",")
    if "mxc" in want:
        impls["mxc"] = mxc_steps(names)
    if "torch" in want:
        try:
            impls["torch"] = torch_steps(names, args.threads or 2)
        except ImportError:
            print(json.dumps({"note": "PyTorch is not installed: no torch figures"}))
    figures = []
    for _, (steps, _) in impls.items():
        figures += [f for f in steps if f not in figures]
    order = {n: i for i, n in enumerate(names)}
    figures.sort(key=lambda f: order[next(n for n in names if f.startswith(n + "_"))])
    for fig in figures:
        best = {}
        for impl, (steps, sync) in impls.items():
            if fig not in steps:
                continue
            fn = steps[fig]
            time.sleep(0.3)                  # let the other runtime's threads go to sleep
            for _ in range(2):
                fn()
            sync()
            for _ in range(args.reps):
                t = clock()
                for _ in range(args.inner):
                    fn()
                sync()
                dt = (clock() - t) * 1e3 / args.inner
                best[impl] = min(best.get(impl, float("inf")), dt)
            print(json.dumps({"figure": fig, "impl": impl, "value": round(best[impl], 4),
                              "unit": "ms"}), flush=True)
        if "mxc" in best and "torch" in best:
            print(json.dumps({"figure": fig + "_mxc_over_torch", "impl": "mxc",
                              "value": round(best["mxc"] / best["torch"], 3), "unit": "ratio"}),
                  flush=True)


if __name__ == "__main__":
    main()

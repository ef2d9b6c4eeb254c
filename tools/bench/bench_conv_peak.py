"""Every convolution layer of ResNet-50 v1 and MobileNetV2 1.0 as a fraction of the GEMM peak
measured in the same run (float32, batch 8, 224x224), mxc and PyTorch.

The peak is the best GFLOP/s of a large square sgemm (``--gemm`` x ``--gemm``) through the BLAS mxc
uses (``mx.nd.dot``: same OpenBLAS, same thread gate and thread count as the convolutions). On a
shared machine a single peak figure is a lottery, so it is measured again before every layer
and the best of all of them is the peak every fraction divides by: a layer timed during a quiet
spell is never compared with a peak taken in a noisy one.

Layers come from the model zoo's own graphs (``gluon.model_zoo.vision``, traced to a symbol and
shape-inferred), one row per distinct shape with ``count``, the times it occurs in the network.
Per layer and direction (``fwd``: ``Convolution``; ``bwd``: ``_backward_Convolution``, the data
and weight (and bias) gradients; PyTorch: ``conv2d`` and ``aten.convolution_backward`` with the
same gradients) the best of ``--reps`` timings, each of enough back-to-back calls to last
``--min-ms``, taken in rounds (peak sample, mxc's block, PyTorch's block) so that each figure
gets its chances spread over the layer's time, not in one burst. FLOPs count multiply-adds as 2: forward ``2 N Ho Wo F (C / groups) kh kw``,
backward twice that.

Output: JSON lines. ``{"peak": ...}`` once, at the end, with every sample; per layer
``{"net", "layer", "count", "dir", "ms", "gflops", "frac_peak"}`` for mxc, and with
``"torch_ms", "torch_frac_peak", "mxc_over_torch"`` (time ratio, < 1: mxc faster) when PyTorch
imports; per network and direction a ``{"summary": ...}`` line with the FLOP-weighted fraction
(total FLOPs of the network's convolutions, each layer counted ``count`` times, over their total
time, divided by the peak) and the same-run ratio to PyTorch.

    python tools/bench/bench_conv_peak.py [--nets resnet50_v1,mobilenetv2_1.0] [--reps 4]
                                          [--threads N] [--clock wall|cpu] [--no-torch]
                                          [--only SUBSTRING]

On a loaded shared machine, ``--threads 1 --clock cpu`` measures every figure (the peak too) in
CPU time of one thread: the fractions and ratios then describe the code, not the load.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

BATCH, SIZE = 8, 224


def conv_layers(mx, name):
    """Distinct convolution shapes of a model-zoo network: list of dicts in graph order."""
    from mxc.gluon.model_zoo import vision
    net = vision.get_model(name)
    net.initialize()
    sym = net(mx.sym.var("data"))
    internals = sym.get_internals()
    _, outs, _ = internals.infer_shape(data=(BATCH, 3, SIZE, SIZE))
    shapes = dict(zip(internals.list_outputs(), outs))
    nodes = json.loads(sym.tojson())["nodes"]
    rows = {}
    for n in nodes:
        if n["op"] != "Convolution":
            continue
        src = nodes[n["inputs"][0][0]]
        x = shapes[src["name"] if src["op"] == "null" else src["name"] + "_output"]
        a = n["attrs"]
        k = tuple(int(v) for v in a["kernel"].strip("()").split(","))
        s = tuple(int(v) for v in a.get("stride", "(1, 1)").strip("()").split(","))
        p = tuple(int(v) for v in a.get("pad", "(0, 0)").strip("()").split(","))
        f, g = int(a["num_filter"]), int(a.get("num_group", "1"))
        bias = a.get("no_bias", "False") not in ("True", "1", "true")
        key = (tuple(x), f, k, s, p, g, bias)
        if key in rows:
            rows[key]["count"] += 1
            continue
        ho = (x[2] + 2 * p[0] - k[0]) // s[0] + 1
        wo = (x[3] + 2 * p[1] - k[1]) // s[1] + 1
        flops = 2.0 * x[0] * ho * wo * f * (x[1] // g) * k[0] * k[1]
        label = (f"{x[1]}x{x[2]}x{x[3]}->{f} k{k[0]}x{k[1]} s{s[0]} p{p[0]}"
                 + (f" g{g}" if g > 1 else "") + (" bias" if bias else ""))
        rows[key] = dict(layer=label, x=tuple(x), f=f, k=k, s=s, p=p, g=g, bias=bias,
                         y=(x[0], f, ho, wo), flops=flops, count=1)
    return list(rows.values())


def _arrays(r, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(r["x"]).astype(np.float32)
    w = (rng.standard_normal((r["f"], r["x"][1] // r["g"]) + r["k"]) * 0.05).astype(np.float32)
    b = rng.standard_normal(r["f"]).astype(np.float32) if r["bias"] else None
    dy = rng.standard_normal(r["y"]).astype(np.float32)
    return x, w, b, dy


def mxc_calls(mx, r, seed):
    nd = mx.nd
    x, w, b, dy = (None if a is None else nd.array(a) for a in _arrays(r, seed))
    kw = dict(kernel=r["k"], stride=r["s"], pad=r["p"], num_filter=r["f"], num_group=r["g"],
              no_bias=not r["bias"])
    ins = (x, w, b) if r["bias"] else (x, w)

    def fwd():
        return nd.Convolution(*ins, **kw)

    def bwd():
        return nd._internal._backward_Convolution(dy, *ins, **kw)
    return {"fwd": fwd, "bwd": bwd}


def torch_calls(torch, r, seed):
    x, w, b, dy = (None if a is None else torch.from_numpy(a) for a in _arrays(r, seed))
    s, p, g = list(r["s"]), list(r["p"]), r["g"]
    conv_bwd = torch.ops.aten.convolution_backward

    def fwd():
        return torch.nn.functional.conv2d(x, w, b, s, p, 1, g)

    def bwd():
        return conv_bwd(dy, x, w, [r["f"]] if r["bias"] else None, s, p, [1, 1], False, [0, 0],
                        g, [True, True, r["bias"]])
    return {"fwd": fwd, "bwd": bwd}


CLOCK = time.perf_counter     # --clock cpu: time.process_time (CPU seconds of every thread)


def calibrate(fn, sync, min_s):
    """Calls per timing so that one timing lasts about min_s (after two warm-up calls)."""
    fn()
    sync()
    t = CLOCK()
    fn()
    sync()
    return max(1, int(min_s / max(CLOCK() - t, 1e-6)))


def time_block(fn, sync, inner):
    """Seconds per call of `inner` back-to-back calls."""
    t = CLOCK()
    for _ in range(inner):
        fn()
    sync()
    return (CLOCK() - t) / inner


class Peak:
    """sgemm GFLOP/s through mx.nd.dot, sampled whenever asked; the best sample is the peak."""

    def __init__(self, mx, n):
        rng = np.random.default_rng(1)
        self.mx = mx
        self.n = n
        self.a = mx.nd.array(rng.standard_normal((n, n)).astype(np.float32))
        self.b = mx.nd.array(rng.standard_normal((n, n)).astype(np.float32))
        self.samples = []

    def sample(self):
        nd = self.mx.nd
        sec = min(time_block(lambda: nd.dot(self.a, self.b), nd.waitall, 1) for _ in range(2))
        self.samples.append(2.0 * self.n ** 3 / sec / 1e9)
        return self.samples[-1]

    @property
    def best(self):
        return max(self.samples)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nets", default="resnet50_v1,mobilenetv2_1.0")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--min-ms", type=float, default=60.0, help="length of one timing")
    ap.add_argument("--gemm", type=int, default=1536, help="side of the square peak sgemm")
    ap.add_argument("--threads", type=int, default=None,
                    help="OMP_NUM_THREADS for mxc (fixes the count; default: mxc's own) and "
                         "PyTorch's threads (default: mxc's count)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: CPU time of the process (with --threads 1, a per-core figure "
                         "that other processes on a shared machine barely move)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--only", default=None, help="only layers whose label contains this")
    args = ap.parse_args(argv)
    if args.threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if args.clock == "cpu":
        global CLOCK
        CLOCK = time.process_time
    import mxc as mx
    from mxc._core import blas
    threads = blas.get_num_threads()
    torch = None
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(args.threads or threads)
        except ImportError:
            print(json.dumps({"note": "PyTorch is not installed: mxc figures only"}), flush=True)
    print(json.dumps({"config": {"threads": threads, "torch_threads":
                                 torch.get_num_threads() if torch else None,
                                 "batch": BATCH, "size": SIZE, "gemm": args.gemm,
                                 "clock": args.clock,
                                 "blas": blas.config()}}), flush=True)
    peak = Peak(mx, args.gemm)
    for _ in range(3):
        peak.sample()
    min_s = args.min_ms / 1e3
    results = []
    for net in args.nets.split(","):
        for i, r in enumerate(conv_layers(mx, net)):
            if args.only and args.only not in r["layer"]:
                continue
            row = dict(net=net, layer=r["layer"], count=r["count"], flops=r["flops"])
            calls = {"mxc": (mxc_calls(mx, r, i), mx.nd.waitall)}
            if torch is not None:
                calls["torch"] = (torch_calls(torch, r, i), lambda: None)
            inner = {(impl, d): calibrate(fns[d], sync, min_s)
                     for impl, (fns, sync) in calls.items() for d in ("fwd", "bwd")}
            # rounds: the peak, then each implementation's block of each direction; the best
            # of the rounds counts, so every figure had --reps chances at a quiet moment
            for _ in range(args.reps):
                peak.sample()
                for impl, (fns, sync) in calls.items():
                    time.sleep(0.1)      # let the other runtime's pool threads go to sleep
                    for d in ("fwd", "bwd"):
                        key = f"{impl}_{d}"
                        row[key] = min(row.get(key, float("inf")),
                                       time_block(fns[d], sync, inner[(impl, d)]))
            del calls
            results.append(row)
            print(json.dumps({"progress": f"{net} {r['layer']}", "peak_so_far":
                              round(peak.best, 1)}), file=sys.stderr, flush=True)
    pk = peak.best
    print(json.dumps({"peak": {"gflops": round(pk, 1), "threads": threads,
                               "median": round(float(np.median(peak.samples)), 1),
                               "samples": [round(s, 1) for s in peak.samples]}}), flush=True)
    for row in results:
        for d, mult in (("fwd", 1.0), ("bwd", 2.0)):
            gf = mult * row["flops"] / row["mxc_" + d] / 1e9
            out = dict(net=row["net"], layer=row["layer"], count=row["count"], dir=d,
                       ms=round(row["mxc_" + d] * 1e3, 3), gflops=round(gf, 1),
                       frac_peak=round(gf / pk, 3))
            if "torch_" + d in row:
                tg = mult * row["flops"] / row["torch_" + d] / 1e9
                out.update(torch_ms=round(row["torch_" + d] * 1e3, 3),
                           torch_frac_peak=round(tg / pk, 3),
                           mxc_over_torch=round(row["mxc_" + d] / row["torch_" + d], 3))
            print(json.dumps(out), flush=True)
    for net in dict.fromkeys(r["net"] for r in results):
        rows = [r for r in results if r["net"] == net]
        for d, mult in (("fwd", 1.0), ("bwd", 2.0)):
            flops = sum(mult * r["flops"] * r["count"] for r in rows)
            sec = sum(r["mxc_" + d] * r["count"] for r in rows)
            out = dict(summary=f"{net}_{d}", gflop=round(flops / 1e9, 2),
                       ms=round(sec * 1e3, 2), frac_peak=round(flops / sec / 1e9 / pk, 3))
            if all("torch_" + d in r for r in rows):
                tsec = sum(r["torch_" + d] * r["count"] for r in rows)
                out.update(torch_ms=round(tsec * 1e3, 2),
                           torch_frac_peak=round(flops / tsec / 1e9 / pk, 3),
                           mxc_over_torch=round(sec / tsec, 3))
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

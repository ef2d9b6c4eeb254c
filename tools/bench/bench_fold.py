"""Inference of Conv+BN+ReLU and BN+ReLU blocks through a bound executor (batch 8, float32):
the graph as written, with Convolution + BatchNorm folded, and with the ReLU folded too
(mxc/executor/fold.py), against PyTorch eager (conv, batch_norm, relu under no_grad).

Blocks: ``stem`` (3->64, 7x7 stride 2 pad 3 at 224: ResNet's first layer), ``c3x3`` (64->64,
3x3 pad 1 at 56), ``c1x1`` (256->64, 1x1 at 56), ``bn_relu`` (BatchNorm + ReLU of 8x64x112x112
alone).

Figures per block: ``<block>_<impl>`` in ms for impl ``graph`` (nothing folded), ``conv_bn``
(fold_conv_bn only), ``folded`` (fold_inference: what executors and CachedOp run in
inference) and ``torch``; then same-run ratios ``<block>_folded_over_conv_bn``,
``<block>_folded_over_graph`` and ``<block>_folded_over_torch`` (< 1: faster). Each figure is
the best of --reps timings of --inner forwards. ``--clock cpu`` counts the process's CPU time.

    python tools/bench/bench_fold.py [--reps 5] [--inner 5] [--threads 2] [--clock wall|cpu]
"""
import argparse
import json
import os
import time

import numpy as np

BLOCKS = {"stem": ((8, 3, 224, 224), 64, 7, 2, 3),
          "c3x3": ((8, 64, 56, 56), 64, 3, 1, 1),
          "c1x1": ((8, 256, 56, 56), 64, 1, 1, 0),
          "bn_relu": ((8, 64, 112, 112), None, 0, 0, 0)}


def _params(rng, shape, f, k):
    c = shape[1] if f is None else f
    p = {"gamma": rng.random(c) + 0.5, "beta": rng.standard_normal(c),
         "mean": rng.standard_normal(c) * 0.1, "var": rng.random(c) + 0.5}
    if f is not None:
        p["weight"] = rng.standard_normal((f, shape[1], k, k)) * 0.05
    return {n: v.astype(np.float32) for n, v in p.items()}


def mxc_steps(x, prm, f, k, s, p):
    import mxc as mx
    from mxc.executor import fold
    os.environ["MXNET_USE_FUSION"] = "0"        # each executor runs its symbol as given
    data = mx.sym.var("data")
    h = data if f is None else mx.sym.Convolution(data, kernel=(k, k), stride=(s, s),
                                                  pad=(p, p), num_filter=f, no_bias=True,
                                                  name="c")
    sym = mx.sym.relu(mx.sym.BatchNorm(h, fix_gamma=False, name="bn"))
    feed = {"data": x, "bn_gamma": prm["gamma"], "bn_beta": prm["beta"],
            "bn_moving_mean": prm["mean"], "bn_moving_var": prm["var"]}
    if f is not None:
        feed["c_weight"] = prm["weight"]
    feed = {n: mx.nd.array(v) for n, v in feed.items()}
    steps, outs = {}, {}
    for name, sy in (("graph", sym), ("conv_bn", fold.fold_conv_bn(sym)),
                     ("folded", fold.fold_inference(sym))):
        ex = sy.bind(mx.cpu(), args={n: feed[n] for n in sy.list_arguments()},
                     aux_states={n: feed[n] for n in sy.list_auxiliary_states()},
                     grad_req="null")

        def run(ex=ex):
            ex.forward(is_train=False)[0].wait_to_read()
        steps[name] = run
        outs[name] = ex
    return steps, outs


def torch_steps(x, prm, f, k, s, p, threads):
    import torch
    torch.set_num_threads(threads)
    xt = torch.tensor(x)
    t = {n: torch.tensor(v) for n, v in prm.items()}

    def run():
        with torch.no_grad():
            h = xt if f is None else torch.nn.functional.conv2d(xt, t["weight"], None, s, p)
            h = torch.nn.functional.batch_norm(h, t["mean"], t["var"], t["gamma"], t["beta"],
                                               False, 0.0, 1e-3)
            torch.relu(h)
    return {"torch": run}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--inner", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--only", default=None, help="comma-separated block names")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    rng = np.random.default_rng(0)
    names = args.only.split(",") if args.only else list(BLOCKS)
    for blk in names:
        shape, f, k, s, p = BLOCKS[blk]
        x = rng.standard_normal(shape).astype(np.float32)
        prm = _params(rng, shape, f, k)
        steps, exs = mxc_steps(x, prm, f, k, s, p)
        ref = exs["graph"].outputs[0]
        exs["graph"].forward(is_train=False)
        for name in ("conv_bn", "folded"):
            exs[name].forward(is_train=False)
            err = float(np.abs(exs[name].outputs[0].asnumpy() - ref.asnumpy()).max())
            print(json.dumps({"figure": f"{blk}_{name}_max_abs_diff_from_graph",
                              "value": err, "scale": float(np.abs(ref.asnumpy()).max())}))
        try:
            steps.update(torch_steps(x, prm, f, k, s, p, args.threads))
        except ImportError:
            print(json.dumps({"note": "PyTorch is not installed: no torch figures"}))
        best = {}
        for name, fn in steps.items():
            time.sleep(0.2)
            fn()
            b = float("inf")
            for _ in range(args.reps):
                t0 = clock()
                for _ in range(args.inner):
                    fn()
                b = min(b, (clock() - t0) * 1e3 / args.inner)
            best[name] = b
            print(json.dumps({"figure": f"{blk}_{name}", "value": round(b, 3), "unit": "ms",
                              "clock": args.clock}), flush=True)
        for other in ("conv_bn", "graph", "torch"):
            if other in best and (other != "conv_bn" or f is not None):
                print(json.dumps({"figure": f"{blk}_folded_over_{other}",
                                  "value": round(best["folded"] / best[other], 3),
                                  "unit": "ratio"}))


if __name__ == "__main__":
    main()

"""Fusion of pointwise chains: forward+backward of elementwise chains as a bound executor and as
a hybridized Gluon block (static_alloc, static_shape), fused (default) against MXNET_USE_FUSION=0 in the same process, the
two taking turns; with torch installed, the same step in PyTorch eager and, with --compile,
under torch.compile (its compile time printed apart).

One JSON line per figure (microseconds per forward+backward, best of --rounds rounds of
--iters iterations), then the ratios:

    python tools/bench/bench_fusion.py [--rounds 5] [--iters 10] [--size 1048576] [--compile]

Graphs: "gelu_like" (x * 0.5 * (1 + tanh(0.79788 * (x + 0.044715 x^3)))) and "lstm_gates"
(sigmoid(a) * c + sigmoid(b) * tanh(g), the cell update of an LSTM) over --size float32
elements each.
"""
import argparse
import json
import os
import time

import numpy as np


def gelu_like(F, x, y):
    inner = (x + x * x * x * 0.044715) * 0.7978845608
    return x * 0.5 * (F.tanh(inner) + 1) * y


def lstm_gates(F, x, y):
    return F.sigmoid(x) * y + F.sigmoid(y * 0.5) * F.tanh(x - y)


GRAPHS = {"gelu_like": gelu_like, "lstm_gates": lstm_gates}


def _best(fn, rounds, iters):
    fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t) / iters)
    return best * 1e6


def mxc_runners(graph, n, fusion):
    """(bound executor step, hybridized block step) built with fusion on or off."""
    os.environ["MXNET_USE_FUSION"] = "1" if fusion else "0"
    import mxc as mx
    from mxc import autograd, gluon, nd
    rng = np.random.default_rng(0)
    xa, ya = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    x, y = mx.sym.var("x"), mx.sym.var("y")

    class S:        # the symbol namespace as F
        tanh, sigmoid = staticmethod(mx.sym.tanh), staticmethod(mx.sym.sigmoid)
    ex = GRAPHS[graph](S, x, y).simple_bind(mx.cpu(), x=(n,), y=(n,))
    ex.arg_dict["x"][:] = xa
    ex.arg_dict["y"][:] = ya
    head = nd.ones((n,))

    def bound():
        ex.forward(is_train=True)
        ex.backward(head)
        nd.waitall()

    class Block(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return GRAPHS[graph](F, a, b)
    net = Block()
    net.hybridize(static_alloc=True, static_shape=True)
    xn, yn = nd.array(xa), nd.array(ya)
    xn.attach_grad()
    yn.attach_grad()

    def hybrid():
        with autograd.record():
            out = net(xn, yn)
        out.backward()
        nd.waitall()
    bound()
    bound()             # the second run captures (and fuses) the bulk operations
    hybrid()
    hybrid()
    os.environ.pop("MXNET_USE_FUSION")
    return bound, hybrid


def torch_runners(graph, n, compile_):
    try:
        import torch
    except ImportError:
        return {}
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    y = torch.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    fn = GRAPHS[graph]
    out = {}

    def step(f):
        def run():
            x.grad = y.grad = None
            f(torch, x, y).sum().backward()
        return run
    out["torch_eager"] = step(fn)
    if compile_:
        compiled = torch.compile(lambda F, a, b: fn(F, a, b))
        t = time.perf_counter()
        step(compiled)()
        print(json.dumps({"graph": graph, "figure": "torch_compile_seconds",
                          "value": round(time.perf_counter() - t, 2)}), flush=True)
        out["torch_compile"] = step(compiled)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    for graph in GRAPHS:
        fb, fh = mxc_runners(graph, a.size, True)
        ub, uh = mxc_runners(graph, a.size, False)
        runners = {"mxc_bound_fused": fb, "mxc_bound_unfused": ub,
                   "mxc_hybrid_fused": fh, "mxc_hybrid_unfused": uh}
        runners.update(torch_runners(graph, a.size, a.compile))
        best = {k: float("inf") for k in runners}
        for _ in range(a.rounds):       # the runners take turns, so load hits all alike
            for k, fn in runners.items():
                best[k] = min(best[k], _best(fn, 1, a.iters))
        for k, us in best.items():
            print(json.dumps({"graph": graph, "impl": k, "us_per_step": round(us, 1)}),
                  flush=True)
        ratios = {"bound_fused_speedup": best["mxc_bound_unfused"] / best["mxc_bound_fused"],
                  "hybrid_fused_speedup": best["mxc_hybrid_unfused"] / best["mxc_hybrid_fused"]}
        for k in ("torch_eager", "torch_compile"):
            if k in best:
                ratios[f"hybrid_fused_vs_{k}"] = best[k] / best["mxc_hybrid_fused"]
        print(json.dumps({"graph": graph, "ratios": {k: round(v, 2) for k, v in ratios.items()}}),
              flush=True)


if __name__ == "__main__":
    main()

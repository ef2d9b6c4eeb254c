"""Make tests/data/control_flow/: symbols using MXNet 1.9.1's mx.sym.contrib.foreach,
while_loop and cond, exported by MXNet (-symbol.json), with inputs, outputs and input
gradients (head gradients of ones) from MXNet's executor.

Run with real MXNet 1.9.1 from the repository root:
    /work/mxnet-oracle/bin/python tests/data/make_control_flow_golden.py
"""
import os
from collections import defaultdict

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "control_flow")


def build(kind):
    """The same construction runs in mxc's test (tests/symbol/test_control_flow.py)."""
    mx.attribute.AttrScope._subgraph_names = defaultdict(int)
    with mx.name.NameManager():
        if kind == "foreach":
            data, s, w = mx.sym.var("data"), mx.sym.var("s"), mx.sym.var("w")
            w2 = w * 2      # an outer operator output read by the body: a cut input
            outs, states = mx.sym.contrib.foreach(
                lambda x, st: (x * w2 + st[0], [st[0] * 0.5 + mx.sym.tanh(x)]), data, [s])
            return mx.sym.Group([outs] + states)
        if kind == "while_loop":
            i, s, w = mx.sym.var("i"), mx.sym.var("s"), mx.sym.var("w")
            outs, states = mx.sym.contrib.while_loop(
                cond=lambda i, s: i < 4,
                func=lambda i, s: ([s * w], [i + 1, s * 0.9 + mx.sym.broadcast_mul(w, i)]),
                loop_vars=[i, s], max_iterations=6)
            # the first 4 rows of the padded output: the rows past the last step are unwritten
            return mx.sym.Group([mx.sym.slice_axis(outs[0], axis=0, begin=0, end=4)] + states)
        if kind == "cond":
            a, b = mx.sym.var("a"), mx.sym.var("b")
            return mx.sym.contrib.cond(mx.sym.sum(a * b) < 5,
                                       lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    raise ValueError(kind)


def inputs(kind, rng):
    if kind == "foreach":
        return {"data": rng.uniform(-1, 1, (5, 3)), "s": rng.uniform(-1, 1, (3,)),
                "w": rng.uniform(-1, 1, (3,))}
    if kind == "while_loop":
        return {"i": np.array([0.0]), "s": rng.uniform(-1, 1, (2,)), "w": rng.uniform(-1, 1, (2,))}
    return {"a": rng.uniform(0, 1, (3,)), "b": rng.uniform(0, 1, (3,))}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(7)
    for kind in ("foreach", "while_loop", "cond"):
        sym = build(kind)
        sym.save(os.path.join(OUT, f"{kind}-symbol.json"))
        args = {k: mx.nd.array(v, dtype="float32") for k, v in inputs(kind, rng).items()}
        grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
        ex = sym.bind(mx.cpu(), args=args, args_grad=grads)
        outs = ex.forward(is_train=True)
        ex.backward([mx.nd.ones(o.shape) for o in outs])
        arrays = {f"in_{k}": v.asnumpy() for k, v in args.items()}
        arrays.update({f"out_{i}": o.asnumpy() for i, o in enumerate(outs)})
        arrays.update({f"grad_{k}": v.asnumpy() for k, v in grads.items()})
        np.savez(os.path.join(OUT, f"{kind}.npz"), **arrays)


if __name__ == "__main__":
    main()

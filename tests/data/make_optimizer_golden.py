"""Writes tests/data/optimizer_golden.npz: MXNet 1.9.1's optimizer update operators run for a few
steps (with wd, clip_gradient, rescale_grad), their final weights and states.

Run with the oracle interpreter: /work/mxnet-oracle/bin/python tests/data/make_optimizer_golden.py

Layout: ``<case>/spec`` is JSON {op, params, steps, tparam (a parameter set to the step number
1, 2, ...), grads (input indices given a new gradient each step, stored stacked as
``<case>/in<k>`` of shape (steps, ...)), weights (input indices written with out=), check (input
indices compared after the last step), kind ("plain" or "lamb"/"mp_lamb")}; ``<case>/in<k>`` are
the initial inputs and ``<case>/out<k>`` the inputs k in `check` after the last step.
"""
import json
import os

import numpy as np
import mxnet as mx

rng = np.random.default_rng(7)
OUT = {}
STEPS = 3


def arr(shape, dtype, kind):
    if kind == "zeros":
        return np.zeros(shape, dtype)
    if kind == "pos":
        return rng.uniform(0.1, 1.0, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def run_plain(name, op, groups, params, dtype, tparam=None, extra=(), nweights=None,
              sparse_grad=False):
    """groups: per weight, a list of (input name, init kind, dtype or None = dtype); the first is
    the weight, the second the gradient. extra: trailing (name, numpy array) inputs."""
    inputs, grads, weights, check = [], [], [], []
    shapes = [(3, 4), (5,), (2, 3)]
    for gi, grp in enumerate(groups):
        shape = shapes[gi]
        for k, (nm, kind, dt) in enumerate(grp):
            dt = dt or dtype
            if k == 1:
                grads.append(len(inputs))
                inputs.append(np.stack([arr(shape, dt, "rand") for _ in range(STEPS)]))
            elif kind == "copy_w32":
                inputs.append(inputs[len(inputs) - k].astype(np.float32))   # the group's weight
                check.append(len(inputs) - 1)
            else:
                if k == 0:
                    weights.append(len(inputs))
                inputs.append(arr(shape, dt, kind))
                check.append(len(inputs) - 1)
    for nm, a in extra:
        inputs.append(a)
    nd = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for s in range(STEPS):
        args = []
        for k, a in enumerate(nd):
            if k in grads:
                g = mx.nd.array(inputs[k][s], dtype=inputs[k].dtype)
                args.append(g.tostype("row_sparse") if sparse_grad else g)
            else:
                args.append(a)
        kw = dict(params)
        if tparam:
            kw[tparam] = s + 1
        out = nd[weights[0]] if len(weights) == 1 else [nd[w] for w in weights]
        if op.startswith("_sparse"):
            fn = getattr(mx.nd.sparse, op[len("_sparse_"):])
        elif op.startswith("_"):
            fn = getattr(mx.nd._internal, op)
        else:
            fn = getattr(mx.nd, op)
        fn(*args, out=out, **kw)
    mx.nd.waitall()
    save(name, op, params, tparam, grads, weights, check, inputs, nd, "plain")


def save(name, op, params, tparam, grads, weights, check, inputs, nd, kind):
    spec = dict(op=op, params=params, steps=STEPS, tparam=tparam, grads=grads, weights=weights,
                check=check, kind=kind)
    OUT[f"{name}/spec"] = np.array(json.dumps(spec))
    for k, a in enumerate(inputs):
        OUT[f"{name}/in{k}"] = a
    for k in check:
        OUT[f"{name}/out{k}"] = nd[k].asnumpy()


def run_lamb(name, mp, params1, params2):
    dt = np.float16 if mp else np.float32
    shape = (3, 4)
    w = arr(shape, dt, "rand")
    inputs = [w, np.stack([arr(shape, dt, "rand") for _ in range(STEPS)]), arr(shape, np.float32 if mp else dt, "zeros"),
              arr(shape, np.float32 if mp else dt, "zeros")]
    if mp:
        inputs.append(w.astype(np.float32))
    nd = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for s in range(STEPS):
        g = mx.nd.array(inputs[1][s], dtype=inputs[1].dtype)
        if mp:
            d = mx.nd.mp_lamb_update_phase1(nd[0], g, nd[2], nd[3], nd[4], t=s + 1, **params1)
            r1, r2 = nd[4].norm(), d.norm()
            mx.nd.mp_lamb_update_phase2(nd[0], d, r1, r2, nd[4], out=nd[0], **params2)
        else:
            d = mx.nd.lamb_update_phase1(nd[0], g, nd[2], nd[3], t=s + 1, **params1)
            r1, r2 = nd[0].norm(), d.norm()
            mx.nd.lamb_update_phase2(nd[0], d, r1, r2, out=nd[0], **params2)
    mx.nd.waitall()
    spec_params = dict(p1=params1, p2=params2)
    save(name, "mp_lamb" if mp else "lamb", spec_params, "t", [1], [0], [0, 2, 3],
         inputs, nd, "mp_lamb" if mp else "lamb")


W, G = ("weight", "rand", None), ("grad", "rand", None)
Z = lambda n: (n, "zeros", None)          # noqa: E731
P = lambda n: (n, "pos", None)            # noqa: E731
Z32 = lambda n: (n, "zeros", np.float32)  # noqa: E731
W32 = ("weight32", "copy_w32", np.float32)
COMMON = dict(wd=0.01, rescale_grad=0.5, clip_gradient=0.3)

SINGLE = [
    ("sgd_update", [W, G], dict(lr=0.1, **COMMON), None),
    ("sgd_mom_update", [W, G, Z("mom")], dict(lr=0.1, momentum=0.9, **COMMON), None),
    ("nag_mom_update", [W, G, Z("mom")], dict(lr=0.1, momentum=0.9, **COMMON), None),
    ("adam_update", [W, G, Z("mean"), Z("var")], dict(lr=0.01, **COMMON), None),
    ("rmsprop_update", [W, G, Z("n")], dict(lr=0.01, clip_weights=1.5, **COMMON), None),
    ("rmspropalex_update", [W, G, Z("n"), Z("g"), Z("delta")],
     dict(lr=0.01, clip_weights=1.5, **COMMON), None),
    ("ftrl_update", [W, G, Z("z"), Z("n")], dict(lr=0.1, lamda1=0.01, **COMMON), None),
    ("ftml_update", [W, G, Z("d"), Z("v"), Z("z")],
     dict(lr=0.1, wd=0.01, rescale_grad=0.5, clip_grad=0.3), "t"),
    ("signsgd_update", [W, G], dict(lr=0.1, **COMMON), None),
    ("signum_update", [W, G, Z("mom")], dict(lr=0.1, momentum=0.9, wd_lh=0.05, **COMMON), None),
]
MP = [
    ("mp_sgd_update", [W, G, W32], dict(lr=0.1, **COMMON)),
    ("mp_sgd_mom_update", [W, G, Z32("mom"), W32], dict(lr=0.1, momentum=0.9, **COMMON)),
    ("mp_nag_mom_update", [W, G, Z32("mom"), W32], dict(lr=0.1, momentum=0.9, **COMMON)),
]


def main():
    for op, grp, params, tparam in SINGLE:
        for dt in (np.float32, np.float64):
            run_plain(f"{op}_{np.dtype(dt).name}", op, [grp], params, dt, tparam)
    # without clipping (the other branch of every kernel)
    for op, grp, params, tparam in SINGLE:
        p = dict(params)
        p.pop("clip_gradient", None)
        p.pop("clip_grad", None)
        run_plain(f"{op}_noclip", op, [grp], p, np.float32, tparam)
    for op, grp, params in MP:
        run_plain(f"{op}_float16", op, [grp], params, np.float16)
    run_plain("_sparse_adagrad_update_float32", "_sparse_adagrad_update",
              [[W, G, Z("history")]], dict(lr=0.1, rescale_grad=0.5, clip_gradient=0.3),
              np.float32, sparse_grad=True)
    for dt in (np.float32, np.float64):
        run_plain(f"_adamw_update_{np.dtype(dt).name}", "_adamw_update",
                  [[W, G, Z("mean"), Z("var")]], dict(lr=0.01, eta=0.5, wd=0.01, clip_gradient=0.3),
                  dt, extra=[("rescale_grad", np.array([0.5], np.float32))])
    run_plain("_adamw_update_skip", "_adamw_update", [[W, G, Z("mean"), Z("var")]],
              dict(lr=0.01, eta=0.5, wd=0.01), np.float32,
              extra=[("rescale_grad", np.array([np.inf], np.float32))])
    run_plain("_mp_adamw_update_float16", "_mp_adamw_update",
              [[W, G, Z32("mean"), Z32("var"), W32]], dict(lr=0.01, eta=0.5, wd=0.01, clip_gradient=0.3),
              np.float16, extra=[("rescale_grad", np.array([0.5], np.float32))])
    mp = dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), rescale_grad=0.5, clip_gradient=0.3, num_weights=2)
    run_plain("multi_sgd_update", "multi_sgd_update", [[W, G]] * 2, mp, np.float32)
    run_plain("multi_sgd_mom_update", "multi_sgd_mom_update", [[W, G, Z("mom")]] * 2,
              dict(momentum=0.9, **mp), np.float32)
    run_plain("multi_mp_sgd_update", "multi_mp_sgd_update", [[W, G, W32]] * 2, mp, np.float16)
    run_plain("multi_mp_sgd_mom_update", "multi_mp_sgd_mom_update",
              [[W, G, Z32("mom"), W32]] * 2, dict(momentum=0.9, **mp), np.float16)
    pre = dict(rescale_grad=0.5, clip_gradient=0.3, num_weights=2)
    lw = [("lrs", np.array([0.1, 0.2], np.float32)), ("wds", np.array([0.01, 0.0], np.float32))]
    run_plain("preloaded_multi_sgd_update", "preloaded_multi_sgd_update", [[W, G]] * 2, pre,
              np.float32, extra=lw)
    run_plain("preloaded_multi_sgd_mom_update", "preloaded_multi_sgd_mom_update",
              [[W, G, Z("mom")]] * 2, dict(momentum=0.9, **pre), np.float32, extra=lw)
    run_plain("preloaded_multi_mp_sgd_update", "preloaded_multi_mp_sgd_update",
              [[W, G, W32]] * 2, pre, np.float16, extra=lw)
    run_plain("preloaded_multi_mp_sgd_mom_update", "preloaded_multi_mp_sgd_mom_update",
              [[W, G, Z32("mom"), W32]] * 2, dict(momentum=0.9, **pre), np.float16, extra=lw)
    ma = dict(lrs=(0.01, 0.02), wds=(0.01, 0.0), etas=(0.5, 1.0), clip_gradient=0.3, num_weights=2)
    run_plain("_multi_adamw_update", "_multi_adamw_update", [[W, G, Z("mean"), Z("var")]] * 2,
              ma, np.float32, extra=[("rescale_grad", np.array([0.5], np.float32))])
    run_plain("_multi_mp_adamw_update", "_multi_mp_adamw_update",
              [[W, G, Z32("mean"), Z32("var"), W32]] * 2, ma, np.float16,
              extra=[("rescale_grad", np.array([0.5], np.float32))])
    p1 = dict(wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
    run_lamb("lamb", False, p1, dict(lr=0.01, lower_bound=0.1, upper_bound=10.0))
    run_lamb("lamb_nobias", False, dict(bias_correction=False, **p1), dict(lr=0.01))
    run_lamb("mp_lamb", True, p1, dict(lr=0.01, lower_bound=0.1, upper_bound=10.0))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_golden.npz")
    np.savez_compressed(path, **OUT)
    print(path, os.path.getsize(path), "bytes,", len([k for k in OUT if k.endswith("/spec")]), "cases")


if __name__ == "__main__":
    main()

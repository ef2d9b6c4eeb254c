"""Executor benchmark: forward+backward of one symbol run as a bound executor, as a CachedOp
under autograd (plain, and static_alloc+static_shape as Gluon's hybridize passes it: data
inputs by data_indices), and op by op under autograd (mx.nd), plus MXNet 1.9.1's executor on
the same symbol JSON with --mxnet; and the planned memory of a bound resnet18_v1 training
graph.

One JSON line per figure (microseconds per forward+backward, best of --rounds rounds of --iters
iterations, the implementations taking turns), then the ratios:

    python tools/bench/bench_executor.py [--mxnet] [--rounds 5] [--iters 20] [--image 224]

Graphs: an MLP 784-512-512-10 (batch 128, SoftmaxOutput) and a chain of 50 small elementwise
operators on a 100x100 array. Memory: resnet18_v1 (batch 32, 3x--image x--image) bound for
training: the plan's bytes (intermediates + outputs + gradients), the storage pool's peak
over the bound arrays during forward+backward, the same peak when the graph runs
imperatively under autograd, and MXNet's resident-set growth over binding and running it.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_PY = "/work/mxnet-oracle/bin/python"
NO_GRAD = ("data", "softmax_label")      # inputs without gradients


# ---- graphs (the builders use only API shared by mxc and MXNet 1.9.1) ----------------------------
def mlp(mx):
    data = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=512, name="fc1"), act_type="relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=512, name="fc2"), act_type="relu")
    h = mx.sym.FullyConnected(h, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(h, name="softmax"), {"data": (128, 784), "softmax_label": (128,)}


def chain(mx, n_ops=50):
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    y = x
    for i in range(n_ops // 5):
        y = y * w
        y = mx.sym.tanh(y)
        y = y + 1.0
        y = y - x
        y = mx.sym.exp(y * 0.1)
    return y, {"x": (100, 100), "w": (100, 100)}


def resnet18_v1(mx, image, classes=1000):
    """Gluon model zoo's resnet18_v1 as a symbol (BasicBlockV1, [2, 2, 2, 2])."""
    S = mx.sym
    counter = [0]

    def conv(x, ch, k, s, p):
        counter[0] += 1
        return S.Convolution(x, num_filter=ch, kernel=(k, k), stride=(s, s), pad=(p, p),
                             no_bias=True, name=f"conv{counter[0]}")

    def bn(x):
        counter[0] += 1
        return S.BatchNorm(x, fix_gamma=False, eps=1e-5, momentum=0.9, name=f"bn{counter[0]}")

    x = S.var("data")
    x = S.Activation(bn(conv(x, 64, 7, 2, 3)), act_type="relu")
    x = S.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    in_ch = 64
    for ch, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for b in range(2):
            s = stride if b == 0 else 1
            r = S.Activation(bn(conv(x, ch, 3, s, 1)), act_type="relu")
            r = bn(conv(r, ch, 3, 1, 1))
            if s != 1 or in_ch != ch:
                x = bn(conv(x, ch, 1, s, 0))
            x = S.Activation(r + x, act_type="relu")
            in_ch = ch
    x = S.Pooling(x, global_pool=True, pool_type="avg", kernel=(1, 1))
    x = S.FullyConnected(S.flatten(x), num_hidden=classes, name="fc")
    return x, {"data": (32, 3, image, image)}


# ---- mxc -------------------------------------------------------------------------------------------
def _fill(mx, arrays, np, label_classes=10):
    rng = np.random.RandomState(0)
    for name, a in arrays.items():
        if name.endswith("label"):
            a[:] = rng.randint(0, label_classes, a.shape)
        elif name.endswith("moving_var") or name.endswith("gamma"):
            a[:] = 1
        else:
            a[:] = rng.uniform(-0.1, 0.1, a.shape)


def mxc_steps(sym, shapes):
    """(name, step) for the bound executor, CachedOp under record and imperative autograd."""
    import numpy as np
    import mxc as mx
    from mxc.executor.executor import evaluate
    reqs = {n: ("null" if n in NO_GRAD else "write") for n in sym.list_arguments()}
    ex = sym.simple_bind(mx.cpu(), grad_req=reqs, **shapes)
    _fill(mx, ex.arg_dict, np)
    _fill(mx, ex.aux_dict, np)
    grads = list(ex.grad_dict.values())

    def bound():
        ex.forward(is_train=True)
        ex.backward()
        for g in grads:
            g.wait_to_read()

    names = sym.list_inputs()
    arrays = {n: a.copy() for n, a in list(ex.arg_dict.items()) + list(ex.aux_dict.items())}
    params = [arrays[n] for n in sym.list_arguments() if n not in NO_GRAD]
    for p in params:
        p.attach_grad()
    op = mx.nd.CachedOp(sym)
    inputs = [arrays[n] for n in names]

    def cached():
        with mx.autograd.record():
            out = op(*inputs)
        out.backward()
        for p in params:
            p.grad.wait_to_read()

    sop = mx.nd.CachedOp(sym, [("static_alloc", True), ("static_shape", True),
                               ("data_indices", [i for i, n in enumerate(names)
                                                 if n in NO_GRAD])])

    def cached_static():
        with mx.autograd.record():
            out = sop(*inputs)
        out.backward()
        for p in params:
            p.grad.wait_to_read()

    def imperative():
        with mx.autograd.record():
            out = evaluate(sym, arrays)
        out.backward()
        for p in params:
            p.grad.wait_to_read()
    return [("executor", bound), ("cachedop", cached), ("cachedop_static", cached_static),
            ("imperative", imperative)]


def time_steps(steps, rounds, iters):
    best = {n: float("inf") for n, _ in steps}
    for _, f in steps:
        for _ in range(3):
            f()
    for _ in range(rounds):
        for n, f in steps:
            t0 = time.perf_counter()
            for _ in range(iters):
                f()
            best[n] = min(best[n], (time.perf_counter() - t0) / iters * 1e6)
    return best


def mxc_memory(sym, shapes):
    """Storage-pool peak over forward+backward above what was allocated before it (arguments,
    gradient buffers, aux states), imperatively under autograd and bound; plus the plan's own
    figures."""
    import gc
    import numpy as np
    import mxc as mx
    from mxc._core import storage
    from mxc.executor.executor import evaluate
    reqs = {n: ("null" if n in NO_GRAD else "write") for n in sym.list_arguments()}
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    arrays = {n: mx.nd.zeros(s) for n, s in zip(sym.list_arguments(), arg_shapes)}
    arrays.update({n: mx.nd.zeros(s) for n, s in zip(sym.list_auxiliary_states(), aux_shapes)})
    _fill(mx, arrays, np)
    params = [arrays[n] for n in sym.list_arguments() if n not in NO_GRAD]
    for p in params:
        p.attach_grad()
        p.grad[:] = 0
    mx.nd.waitall()
    gc.collect()
    base = storage.stats()["in_use"]
    storage.reset_peak()
    with mx.autograd.record():
        out = evaluate(sym, arrays)
    out.backward()
    mx.nd.waitall()
    imp_peak = storage.stats()["peak"] - base
    del out
    gc.collect()
    mx.nd.waitall()
    ex = sym.bind(mx.cpu(), {n: arrays[n] for n in sym.list_arguments()},
                  args_grad={n: p.grad for n, p in arrays.items() if p.grad is not None},
                  grad_req=reqs, aux_states={n: arrays[n] for n in sym.list_auxiliary_states()})
    for o in ex.outputs:
        o.wait_to_read()
    mx.nd.waitall()
    gc.collect()
    base = storage.stats()["in_use"]
    storage.reset_peak()
    ex.forward(is_train=True)
    ex.backward()
    mx.nd.waitall()
    bound_peak = storage.stats()["peak"] - base
    plan = ex._state.plan
    t = plan.t
    return {"planned_slot_bytes": sum(plan.slot_bytes),
            "all_intermediates_bytes": sum(t.nbytes(v) for v, k in enumerate(t.kinds) if k == 2),
            "bound_pool_peak": bound_peak, "imperative_pool_peak": imp_peak,
            "imperative_over_bound": round(imp_peak / max(bound_peak, 1), 2)}


# ---- MXNet (run in its own interpreter) ----------------------------------------------------------
MXNET_SCRIPT = r'''
import json, sys, time, resource
import numpy as np
import mxnet as mx
cfg = json.loads(sys.stdin.read())
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
for job in cfg["jobs"]:
    sym = mx.sym.load_json(job["json"])
    shapes = {k: tuple(v) for k, v in job["shapes"].items()}
    reqs = {n: ("null" if n in ("data", "softmax_label") else "write")
            for n in sym.list_arguments()}
    r0 = rss()
    ex = sym.simple_bind(mx.cpu(), grad_req=reqs, **shapes)
    rng = np.random.RandomState(0)
    for n, a in list(ex.arg_dict.items()) + list(ex.aux_dict.items()):
        if n.endswith("label"):
            a[:] = rng.randint(0, 10, a.shape)
        elif n.endswith("moving_var") or n.endswith("gamma"):
            a[:] = 1
        else:
            a[:] = rng.uniform(-0.1, 0.1, a.shape)
    mx.nd.waitall()
    r1 = rss()
    grads = [g for g in ex.grad_dict.values() if g is not None]
    def step():
        ex.forward(is_train=True)
        ex.backward(None if job["loss"] else [mx.nd.ones(o.shape) for o in ex.outputs])
        for g in grads:
            g.wait_to_read()
    if job["kind"] == "memory":
        step()
        mx.nd.waitall()
        print(json.dumps({"graph": job["name"], "impl": "mxnet", "rss_bind_bytes": r1 - r0,
                          "rss_run_growth_bytes": rss() - r1}), flush=True)
        continue
    for _ in range(3):
        step()
    best = float("inf")
    for _ in range(job["rounds"]):
        t0 = time.perf_counter()
        for _ in range(job["iters"]):
            step()
        best = min(best, (time.perf_counter() - t0) / job["iters"] * 1e6)
    print(json.dumps({"graph": job["name"], "impl": "mxnet", "us": round(best, 1)}), flush=True)
'''


def run_mxnet(jobs):
    p = subprocess.run([MXNET_PY, "-c", MXNET_SCRIPT], input=json.dumps({"jobs": jobs}),
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        print(json.dumps({"impl": "mxnet", "error": p.stderr.strip()[-400:]}), flush=True)
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mxnet", action="store_true", help="also run MXNet 1.9.1 (oracle venv)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--image", type=int, default=224, help="resnet18 input size (32: CIFAR)")
    ap.add_argument("--no-memory", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    import mxc as mx
    results = {}
    jobs = []
    for name, build in (("mlp", mlp), ("chain50", chain)):
        sym, shapes = build(mx)
        best = time_steps(mxc_steps(sym, shapes), a.rounds, a.iters)
        for impl, us in best.items():
            results[(name, impl)] = us
            print(json.dumps({"graph": name, "impl": impl, "us": round(us, 1)}), flush=True)
        jobs.append({"name": name, "json": sym.tojson(), "shapes": shapes, "kind": "time",
                     "loss": name == "mlp", "rounds": a.rounds, "iters": a.iters})
    if not a.no_memory:
        sym, shapes = resnet18_v1(mx, a.image)
        mem = mxc_memory(sym, shapes)
        print(json.dumps(dict({"graph": f"resnet18_v1_b32_{a.image}", "impl": "mxc"}, **mem)),
              flush=True)
        jobs.append({"name": f"resnet18_v1_b32_{a.image}", "json": sym.tojson(),
                     "shapes": shapes, "kind": "memory", "loss": False})
    if a.mxnet:
        for r in run_mxnet(jobs):
            print(json.dumps(r), flush=True)
            if "us" in r:
                results[(r["graph"], "mxnet")] = r["us"]
    for name in ("mlp", "chain50"):
        ex = results[(name, "executor")]
        line = {"graph": name, "ratio": "speedup of the bound executor",
                "vs_imperative": round(results[(name, "imperative")] / ex, 2),
                "cachedop_vs_imperative": round(results[(name, "imperative")]
                                                / results[(name, "cachedop")], 2),
                "cachedop_static_vs_imperative": round(results[(name, "imperative")]
                                                       / results[(name, "cachedop_static")], 2),
                "cachedop_static_over_executor": round(results[(name, "cachedop_static")]
                                                       / ex, 2)}
        if (name, "mxnet") in results:
            line["vs_mxnet"] = round(results[(name, "mxnet")] / ex, 2)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

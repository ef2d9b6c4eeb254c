"""Autograd step cost: record a chain of small ops, then backward; mxc against PyTorch (and MXNet
through --peer-python), in the same run.

Two steps, both kept:

- ``chain60_4x8``: the project's first step, 10 x [mul, tanh, add-scalar, sub, mul-scalar, exp]
  on (4, 8) float32 arrays, summed;
- ``issue28_4x16``: issue 28's step, 10 x [mul, add, tanh, mul-scalar, sub] on (4, 16) arrays
  + sum (51 recorded ops), then backward.

Why the two once disagreed (issue 28 had 0.68x PyTorch where this bench had 0.93x): mostly not
the ops but the statistic. This bench took the best of many timings; the issue's figure fits a
mean of single steps on a loaded 2-core machine. Measured at 83b87d8, same run, issue 28's step:
mxc best 367 / median 509 / mean 1,852 us, PyTorch 329 / 338 / 758 us. mxc's typical step was far
above its best (each op woke the engine's worker thread, and the final read waited for that
thread to get a core; PyTorch runs everything on the calling thread), so only a mean or median
showed it. Small kernel calls now run on the pushing thread when the engine is idle. Both statistics are
printed now: ``best`` (the software's cost) and ``median`` of single steps (what a loaded machine
gives), with the implementations taking turns so that load falls on them alike.

One JSON line per (step, implementation, statistic) in microseconds, then one ratio line per
step and statistic, ``torch/mxc`` (above 1: mxc is faster).

    python tools/bench/bench_autograd.py [--reps 300] [--peer-python /path/to/mxnet/python]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def chain60(x, w, b, F):
    y = x
    for _ in range(10):
        y = y * w             # binary
        y = F.tanh(y)         # unary
        y = y + 1.0           # scalar
        y = y - x             # binary
        y = F.exp(y * 0.1)    # scalar, then unary
    return y.sum()


def issue28(x, w, b, F):
    y = x
    for _ in range(10):
        y = y * w
        y = y + b
        y = F.tanh(y)
        y = y * 0.5
        y = y - x
    return y.sum()


STEPS = {"chain60_4x8": (chain60, (4, 8)), "issue28_4x16": (issue28, (4, 16))}


def mxc_step(name):
    import numpy as np
    import mxc as mx
    fn, shape = STEPS[name]
    rng = np.random.default_rng(0)
    x, w, b = (mx.nd.array(rng.random(shape, dtype=np.float32)) for _ in range(3))
    for a in (x, w, b):
        a.attach_grad()

    def step():
        with mx.autograd.record():
            loss = fn(x, w, b, mx.nd)
        loss.backward()
        x.grad.wait_to_read()
    return step


def torch_step(name):
    import torch
    fn, shape = STEPS[name]
    x, w, b = (torch.rand(*shape, requires_grad=True) for _ in range(3))

    def step():
        x.grad = w.grad = b.grad = None
        fn(x, w, b, torch).backward()
    return step


def timings(step, n):
    """n single-step timings (us), after a warm-up."""
    for _ in range(10):
        step()
    out = []
    for _ in range(n):
        t = time.perf_counter()
        step()
        out.append((time.perf_counter() - t) * 1e6)
    return out


MXNET_SNIPPET = r"""
import json, sys, statistics
import numpy as np
import mxnet as mx
sys.path.insert(0, %(here)r)
from bench_autograd import STEPS, timings
for name, (fn, shape) in STEPS.items():
    x, w, b = (mx.nd.array(np.random.rand(*shape).astype(np.float32)) for _ in range(3))
    for a in (x, w, b):
        a.attach_grad()
    def step():
        with mx.autograd.record():
            loss = fn(x, w, b, mx.nd)
        loss.backward()
        x.grad.wait_to_read()
    t = timings(step, %(reps)d)
    print(json.dumps({"step": name, "best": min(t), "median": statistics.median(t)}))
"""


def emit(step, impl, stat, value):
    print(json.dumps({"figure": f"autograd step {step} (record + backward), {stat}",
                      "impl": impl, "value": round(value, 1), "unit": "us"}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300, help="single-step timings per round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of turns between implementations")
    ap.add_argument("--peer-python", default=None, help="a python with MXNet 1.9.1 installed")
    args = ap.parse_args()
    for name in STEPS:
        impls = {"mxc": mxc_step(name)}
        try:
            impls["torch"] = torch_step(name)
        except ImportError:
            pass
        times = {k: [] for k in impls}
        for _ in range(args.rounds):          # turns: load falls on every implementation alike
            for k, step in impls.items():
                times[k] += timings(step, args.reps)
        stats = {k: {"best": min(t), "median": statistics.median(t)} for k, t in times.items()}
        for k, s in stats.items():
            for stat, v in s.items():
                emit(name, k, stat, v)
        if "torch" in stats:
            for stat in ("best", "median"):
                print(json.dumps({"figure": f"autograd step {name}, {stat}", "ratio": "torch/mxc",
                                  "value": round(stats["torch"][stat] / stats["mxc"][stat], 2)}),
                      flush=True)
    if args.peer_python:
        import os
        here = os.path.dirname(os.path.abspath(__file__))
        out = subprocess.run([args.peer_python, "-c", MXNET_SNIPPET % {"here": here,
                                                                      "reps": args.reps}],
                             capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                for stat in ("best", "median"):
                    emit(r["step"], "mxnet", stat, r[stat])


if __name__ == "__main__":
    sys.exit(main())

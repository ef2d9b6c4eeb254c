"""Where the CPU of one training step goes: the Python thread's CPU time in each phase (forward
under autograd.record, backward, Trainer.step, the final waitall) and the whole process's CPU
time per step, for CIFAR ResNet-18 v1 (batch 32; --model picks another of
tools/bench/bench_training.py's models: mlp, lenet) imperative and hybridized, each in a process of
its own, alternated --repeat times; and the process CPU per step of the same network in PyTorch
eager (tools/bench/bench_training.py's), with the ratios torch / mxc of each repeat.

CPU time, not wall time, so that the figures hold on a shared machine: run with
OMP_NUM_THREADS=1 for the kernels' own cost. The Python thread's time is what imperative
dispatch costs beside the kernels (the engine worker runs them meanwhile); its time inside
waitall is what waiting costs (wake-ups, ops it runs itself). Each figure is the minimum over
--steps steps, with the median beside it. Also the Python thread's voluntary context switches
per step (Linux): each is a sleep and a wake-up, which on a 2-core machine takes a core from a
kernel's threads for a moment.

    OMP_NUM_THREADS=1 python tools/bench/bench_step_phases.py [--model resnet18] [--steps 30] [--repeat 2]
"""
import argparse
import json
import os
import subprocess
import sys
import time

# the source tree after PYTHONPATH (which may name another mxc to compare)
sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import bench_training  # tools/bench/bench_training.py: this script's directory is on sys.path

PHASES = ("forward", "backward", "trainer_step", "waitall")


def _label(model):
    """'resnet18 b32': the model and its batch in bench_training.py"""
    return f"{model} b{bench_training.BATCH[model]}"


def _switches():
    try:
        with open("/proc/thread-self/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def measure(model, hybrid, steps):
    import numpy as np
    import mxc as mx
    net, trainer, loss_fn, x, y, bs = bench_training.gluon_setup(mx, model, hybrid)
    T, P = time.thread_time, time.process_time

    def step():
        p0, t0 = P(), T()
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        t1 = T()
        loss.backward()
        t2 = T()
        trainer.step(bs)
        t3 = T()
        mx.nd.waitall()
        t4 = T()
        return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, P() - p0]

    for _ in range(3):
        step()
    s0 = _switches()
    rows = np.array([step() for _ in range(steps)]) * 1e3
    s1 = _switches()
    impl = "mxc-hybrid" if hybrid else "mxc-imperative"
    if s0 is not None:
        print(json.dumps({"figure": f"{_label(model)} step: python thread voluntary context switches",
                          "impl": impl, "value": round((s1 - s0) / steps, 1), "unit": "per step"}),
              flush=True)
    for k, name in enumerate(PHASES + ("process",)):
        what = "python thread " + name if name != "process" else "process"
        print(json.dumps({"figure": f"{_label(model)} step cpu: {what}", "impl": impl,
                          "value": round(float(rows[:, k].min()), 3),
                          "median": round(float(np.median(rows[:, k])), 3), "unit": "ms"}),
              flush=True)


def measure_torch(model, steps):
    import numpy as np
    import torch
    n = os.environ.get("OMP_NUM_THREADS", "")
    if n.isdigit():
        torch.set_num_threads(int(n))
    run, _ = bench_training.torch_step_fn(model)
    for _ in range(3):
        run()
    cpu = []
    for _ in range(steps):
        p0 = time.process_time()
        run()
        cpu.append((time.process_time() - p0) * 1e3)
    print(json.dumps({"figure": f"{_label(model)} step cpu: process", "impl": "torch-eager",
                      "value": round(float(min(cpu)), 3),
                      "median": round(float(np.median(cpu)), 3), "unit": "ms"}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18", choices=("resnet18", "mlp", "lenet"))
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--child", choices=("imperative", "hybrid", "torch"))
    args = ap.parse_args()
    if args.child == "torch":
        measure_torch(args.model, args.steps)
        return
    if args.child:
        measure(args.model, args.child == "hybrid", args.steps)
        return
    for _ in range(args.repeat):
        proc = {}
        for kind in ("imperative", "hybrid", "torch"):
            r = subprocess.run([sys.executable, __file__, "--child", kind, "--model", args.model,
                                "--steps", str(args.steps)], capture_output=True, text=True,
                               env=dict(os.environ))
            sys.stdout.write(r.stdout)
            if r.returncode != 0:
                if kind == "torch" and "No module named 'torch'" in r.stderr:
                    continue
                sys.stderr.write(r.stderr)
                sys.exit(r.returncode)
            for line in r.stdout.splitlines():
                rec = json.loads(line)
                if rec["figure"].endswith(": process"):
                    proc[rec["impl"]] = rec["value"]
        for a, b in (("mxc-hybrid", "mxc-imperative"), ("torch-eager", "mxc-imperative")):
            if a in proc and b in proc:
                print(json.dumps({"figure": f"{_label(args.model)} step cpu {a} / {b}", "impl": "ratio",
                                  "value": round(proc[a] / proc[b], 3),
                                  "unit": "x (speed of mxc-imperative relative to the other)"}),
                      flush=True)


if __name__ == "__main__":
    main()

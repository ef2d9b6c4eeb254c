"""Synchronous data-parallel training speed: the CIFAR ResNet-18 (model zoo resnet18_v1,
classes=10, 3x32x32 random data, batch 32 per process, SGD with momentum, hybridized) on
1 process with one core vs 2 processes with one core each under ``mxc-launch -n 2`` and the
``dist_sync`` KVStore (gradients summed over the processes every step).

One core per process: OMP_NUM_THREADS=1, MXNET_CPU_WORKER_NTHREADS=1, and each process pinned
to its own core (sched_setaffinity) when the machine has enough. One JSON line per figure:
samples/s of each run (all processes together), then their ratio (target >= 1.6).

    python tools/bench/bench_dist_training.py [--steps 20] [--warmup 3] [--batch 32]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def worker(args):
    rank = int(os.environ.get("DMLC_WORKER_ID", "0"))
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    nproc = int(os.environ.get("DMLC_NUM_WORKER", "1"))
    if len(cores) >= nproc:
        os.sched_setaffinity(0, {cores[rank]})
    import numpy as np
    import mxc as mx
    from mxc import autograd, gluon
    from mxc.gluon.model_zoo import vision

    kv = mx.kv.create(args.kvstore)
    mx.random.seed(1)
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4}, kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.RandomState(rank)
    x = mx.nd.array(rng.uniform(-1, 1, (args.batch, 3, 32, 32)).astype(np.float32))
    y = mx.nd.array(rng.randint(0, 10, args.batch).astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(args.batch * kv.num_workers)

    for _ in range(args.warmup):
        step()
    mx.nd.waitall()
    if kv.num_workers > 1:
        kv.barrier()
    t = time.perf_counter()
    for _ in range(args.steps):
        step()
    for p in net.collect_params().values():
        p.data().wait_to_read()
    mx.nd.waitall()
    if kv.num_workers > 1:
        kv.barrier()
    dt = time.perf_counter() - t
    if kv.rank == 0:
        print("RESULT " + json.dumps({"seconds": dt, "samples": args.steps * args.batch
                                      * kv.num_workers}), flush=True)


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       cwd=ROOT, timeout=1800)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        raise SystemExit("benchmark run failed (%d):\n%s" % (p.returncode, out[-4000:]))
    for line in out.splitlines():
        if "RESULT " in line:
            return json.loads(line.split("RESULT ", 1)[1])
    raise SystemExit("no result in the output:\n" + out[-4000:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32, help="per process")
    parser.add_argument("--kvstore", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update({"OMP_NUM_THREADS": "1", "MXNET_CPU_WORKER_NTHREADS": "1"})
    for k in list(env):
        if k.startswith(("DMLC_", "MXC_LAUNCH_", "PMI_")):
            del env[k]
    common = [__file__, "--worker", "--steps", str(args.steps), "--warmup", str(args.warmup),
              "--batch", str(args.batch)]
    one = run([sys.executable] + common + ["--kvstore", "local"], env)
    two = run([sys.executable, "-m", "mxc.tools.launch", "-n", "2", sys.executable] + common
              + ["--kvstore", "dist_sync"], env)
    rates = {}
    for name, res in (("1 process x 1 core", one), ("2 processes x 1 core, dist_sync", two)):
        rates[name] = res["samples"] / res["seconds"]
        print(json.dumps({"bench": "dist_training", "model": "resnet18_v1 cifar 3x32x32",
                          "run": name, "batch_per_process": args.batch,
                          "samples_per_s": round(rates[name], 2)}))
    ratio = rates["2 processes x 1 core, dist_sync"] / rates["1 process x 1 core"]
    print(json.dumps({"bench": "dist_training", "figure": "speedup 2 processes / 1 process",
                      "ratio": round(ratio, 3), "target": 1.6,
                      "cores_available": len(os.sched_getaffinity(0))
                      if hasattr(os, "sched_getaffinity") else os.cpu_count()}))


if __name__ == "__main__":
    main()

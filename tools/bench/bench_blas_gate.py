"""The BLAS gate (csrc/mxc/blas.h) against a build without it: a lone caller's sgemm 1024^3 and
an imperative LeNet training step (batch 64), and the concurrent-GEMM load of
tests/_core/test_blas.py, each in a fresh process per tree, the trees alternated (the machine may
be loaded, so pairs, best of each). One JSON line per figure, with the ratio new/old.

    python tools/bench/bench_blas_gate.py --old /path/to/tree/without/gate [--pairs 3]

--old is a directory holding an older ``mxc`` package (e.g. a copy of the tree before the gate).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_ONE = r"""
import json, sys, time
import numpy as np
import mxc as mx
from mxc import autograd, gluon

def best(fn, repeat):
    fn()
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); t = min(t, time.perf_counter() - t0)
    return t

a = mx.nd.array(np.random.rand(1024, 1024).astype(np.float32))
sgemm = best(lambda: mx.nd.dot(a, a).wait_to_read(), 10)

net = gluon.nn.HybridSequential()
net.add(gluon.nn.Conv2D(20, 5, activation="relu"), gluon.nn.MaxPool2D(2, 2),
        gluon.nn.Conv2D(50, 5, activation="relu"), gluon.nn.MaxPool2D(2, 2),
        gluon.nn.Dense(500, activation="relu"), gluon.nn.Dense(10))
net.initialize(mx.init.Xavier())
tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
loss = gluon.loss.SoftmaxCrossEntropyLoss()
x = mx.nd.array(np.random.rand(64, 1, 28, 28).astype(np.float32))
y = mx.nd.array(np.random.randint(0, 10, 64).astype(np.float32))

def step():
    with autograd.record():
        l = loss(net(x), y)
    l.backward()
    tr.step(64)
    mx.nd.waitall()

lenet = best(step, 15)
print(json.dumps({"sgemm1024_s": sgemm, "lenet_step_s": lenet}))
"""


def run(tree, code, env=None):
    e = dict(os.environ, PYTHONPATH=tree, **(env or {}))
    out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                         check=True, cwd="/")
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    from tests._core.test_blas import _CONCURRENT_GEMMS
    concurrent = _CONCURRENT_GEMMS.replace("assert blas._GATE.inside == 0, blas._GATE.inside\n",
                                           "")
    conc_env = {"OMP_NUM_THREADS": "4", "MXNET_CPU_WORKER_NTHREADS": "2"}
    res = {"new": {}, "old": {}}
    for _ in range(args.pairs):
        for name, tree in (("old", args.old), ("new", ROOT)):
            for k, v in json.loads(run(tree, _ONE).strip().splitlines()[-1]).items():
                res[name].setdefault(k, []).append(v)
            took = float(run(tree, concurrent, conc_env).split()[1])
            res[name].setdefault("concurrent_gemms_s", []).append(took)
    for k in res["new"]:
        new, old = min(res["new"][k]), min(res["old"][k])
        print(json.dumps({"figure": k, "new": round(new, 5), "old": round(old, 5),
                          "ratio_new_over_old": round(new / old, 3),
                          "all_new": [round(v, 5) for v in res["new"][k]],
                          "all_old": [round(v, 5) for v in res["old"][k]]}))


if __name__ == "__main__":
    main()

"""Slowdown under CPU oversubscription: CIFAR ResNet-18 training (batch 32, SGD with momentum;
tools/bench/bench_training.py's step) quiet and beside 4 busy processes, for mxc, PyTorch eager
and, with --peer-python, MXNet 1.9.1.

Each (implementation, condition) runs in a fresh interpreter; the conditions alternate, and the
implementations take turns, --repeat times. The busy processes are plain Python loops started
before a loaded run and stopped after it (each by its pid). Per implementation the figure is the
slowdown factor quiet / loaded (samples/s), one per repeat and their median; above 1 is slower
under load, and the target is mxc's <= MXNet's. The machine's other load comes and goes, so
compare the factors of one run only; the loaded throughputs are compared too (mxc / MXNet,
mxc / PyTorch), which that other load moves less.

An implementation named with "+one" runs with one thread (OMP_NUM_THREADS=1, and one torch
thread): its quiet figure against the plain implementation's is what the second core buys that
implementation quietly, and under load every process gets about its threads' fair share of the
cores, so the slowdown factor is roughly that fair share's factor times this parallel speedup
(printed as "parallel speedup" when both were run). "+all" runs with OMP_NUM_THREADS set to every
core: MXNet 1.9 halves omp_get_num_procs() on x86 for hyperthreads it assumes
(src/engine/openmp.cc), so on cores without SMT its default is half of them (one thread on two
cores), and "+all" gives it the threads mxc's default uses.

--share K measures, in the same run, the fair share the busy processes leave: K processes that
only compute, beside the busy ones, for a few seconds; the figure is the cores they got together.
Under that share no implementation with K computing threads can do better than
quiet speed / (one-thread speed per core x share), the floor of its slowdown factor.

    python tools/bench/bench_load.py [--busy 4] [--repeat 2] [--peer-python /path/to/mxnet/python]
        [--impls mxc-hybrid,mxc-hybrid+static,mxc-hybrid+one,torch-eager] [--share 1,2]
        # +static: MXC_FOLLOW_LOAD=0; +one: one thread; +all: a thread per core
        # ("--peer-one" / "--peer-all" add mxnet-hybrid+one / mxnet-hybrid+all)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAINING = os.path.join(HERE, "bench_training.py")
BUSY = "while True:\n    pass\n"
# a probe: computes for the given seconds of wall time, then prints the CPU seconds it got
PROBE = ("import os, sys, time\nend = time.monotonic() + float(sys.argv[1])\n"
         "while time.monotonic() < end:\n    pass\nprint(os.times().user)\n")


def start_busy(n):
    return [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]


def stop_busy(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def fair_share(k, busy, seconds=4.0):
    """Cores that k compute-only processes get together beside `busy` busy processes."""
    procs = start_busy(busy)
    try:
        time.sleep(0.5)
        probes = [subprocess.Popen([sys.executable, "-c", PROBE, str(seconds)],
                                   stdout=subprocess.PIPE, text=True) for _ in range(k)]
        cpu = sum(float(p.communicate()[0]) for p in probes)
    finally:
        stop_busy(procs)
    return cpu / seconds


def run(impl, args, peer):
    """samples/s of one run of `impl` in a fresh interpreter, or None when it failed."""
    common = ["--rounds", str(args.rounds), "--scale", str(args.scale), "--sustain", "0"]
    env = dict(os.environ)
    if impl.endswith("+static"):      # mxc with its thread counts fixed (MXC_FOLLOW_LOAD=0)
        env["MXC_FOLLOW_LOAD"] = "0"
    if impl.endswith("+one"):         # one thread (bench_training gives torch OMP_NUM_THREADS)
        env["OMP_NUM_THREADS"] = "1"
    if impl.endswith("+all"):         # a thread per core (MXNet's default is half of them)
        env["OMP_NUM_THREADS"] = str(len(os.sched_getaffinity(0)))
    if impl.split("+")[0] == "mxnet-hybrid":
        cmd = [peer, TRAINING, "--as-peer", "--models", "resnet18"] + common
    else:
        cmd = [sys.executable, TRAINING, "--only", f"resnet18:{impl.split('+')[0]}"] + common
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        print(json.dumps({"impl": impl, "error": f"no result in {args.timeout} s"}), flush=True)
        return None
    for line in proc.stdout.splitlines():
        if line.startswith("{") and '"value"' in line:
            return json.loads(line)["value"]
    print(json.dumps({"impl": impl, "error": proc.stderr[-400:]}), flush=True)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impls", default="mxc-hybrid,mxc-imperative,torch-eager")
    ap.add_argument("--busy", type=int, default=4, help="competing busy processes")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="timed rounds per run (best is kept)")
    ap.add_argument("--scale", type=float, default=0.5, help="bench_training's steps per round")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run may take")
    ap.add_argument("--peer-python", default=None, help="an interpreter with mxnet 1.9.1")
    ap.add_argument("--peer-one", action="store_true", help="also run mxnet-hybrid+one")
    ap.add_argument("--peer-all", action="store_true", help="also run mxnet-hybrid+all")
    ap.add_argument("--share", default="", help="comma list of K: measure K threads' fair share")
    args = ap.parse_args()
    impls = args.impls.split(",")
    if args.peer_python:
        impls += ["mxnet-hybrid"] + (["mxnet-hybrid+one"] if args.peer_one else []) + \
            (["mxnet-hybrid+all"] if args.peer_all else [])
    shares = {}
    for k in [int(x) for x in args.share.split(",") if x]:
        shares[k] = fair_share(k, args.busy)
        print(json.dumps({"figure": f"fair share of {k} computing threads beside {args.busy} "
                          "busy processes", "value": round(shares[k], 3), "unit": "cores"}),
              flush=True)
    factors = {k: [] for k in impls}
    loaded = {k: [] for k in impls}
    quiet = {k: [] for k in impls}
    for r in range(args.repeat):
        for impl in (impls if r % 2 == 0 else impls[::-1]):
            vals = {}
            for cond in (("quiet", "loaded") if r % 2 == 0 else ("loaded", "quiet")):
                busy = start_busy(args.busy) if cond == "loaded" else []
                try:
                    if busy:
                        time.sleep(0.5)        # let the busy loops take the cores
                    vals[cond] = run(impl, args, args.peer_python)
                finally:
                    stop_busy(busy)
                if vals[cond] is not None:
                    print(json.dumps({"figure": "train resnet18 b32", "impl": impl,
                                      "condition": cond, "busy": args.busy if busy else 0,
                                      "value": vals[cond], "unit": "samples/s"}), flush=True)
            if vals.get("quiet") and vals.get("loaded"):
                factors[impl].append(vals["quiet"] / vals["loaded"])
            if vals.get("loaded"):
                loaded[impl].append(vals["loaded"])
            if vals.get("quiet"):
                quiet[impl].append(vals["quiet"])
    for impl, f in factors.items():
        if f:
            print(json.dumps({"figure": f"slowdown quiet/loaded, {args.busy} busy processes",
                              "impl": impl, "repeats": [round(x, 2) for x in f],
                              "value": round(statistics.median(f), 2), "unit": "x"}), flush=True)
    for impl in impls:
        one = impl + "+one"
        if quiet[impl] and quiet.get(one):
            print(json.dumps({"figure": f"parallel speedup quiet, {impl} / {one}",
                              "value": round(statistics.median(quiet[impl])
                                             / statistics.median(quiet[one]), 2),
                              "unit": "ratio"}), flush=True)
            for k, share in shares.items():   # the best k threads could do under that share
                print(json.dumps({"figure": f"slowdown floor of {impl} with {k} threads",
                                  "value": round(statistics.median(quiet[impl])
                                                 / (statistics.median(quiet[one]) * share), 2),
                                  "unit": "x"}), flush=True)
    # the loaded throughputs side by side: the other load on a shared machine moves the quiet
    # runs most, so this ratio is the steadier one
    for ref in ("mxnet-hybrid", "torch-eager"):
        for impl in impls:
            if impl.startswith("mxc") and loaded[impl] and loaded.get(ref):
                print(json.dumps({"figure": f"loaded samples/s, {impl} / {ref}",
                                  "value": round(statistics.median(loaded[impl])
                                                 / statistics.median(loaded[ref]), 2),
                                  "unit": "ratio"}), flush=True)


if __name__ == "__main__":
    main()

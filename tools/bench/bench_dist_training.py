"""Synchronous data-parallel training speed: the CIFAR ResNet-18 (model zoo resnet18_v1,
classes=10, 3x32x32 random data, batch 32 per process, SGD with momentum, hybridized) with one
core per process, three runs side by side in each round:

- ``1 process``: one process alone;
- ``2 independent``: two processes at once that never communicate (each its own model): the
  ceiling for two processes on this machine (memory bandwidth and caches are shared);
- ``2 ranks dist_sync``: ``mxc-launch -n 2`` with the ``dist_sync`` KVStore (gradients summed
  over the ranks every step).

One core per process: OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MXNET_CPU_WORKER_NTHREADS=1,
each process pinned to its own core (sched_setaffinity) when the machine has enough. One JSON
line per figure: samples/s of each run (all processes together) with the CPU time its
processes used per step, then the ratios of the round (target: dist_sync / 1 process >= 1.6)
and how close dist_sync gets to the ceiling, and at the end the range of each ratio over the
rounds.

CPU per step is the load-resistant figure (wall-clock ratios need a quiet machine with a core
per process): with one core per process every millisecond of CPU that dist_sync adds per step
(summing, copying, polling, the communication thread's Python) is taken from compute, so
``cpu_bound_speedup`` = 2 x CPU(1 process) / CPU(one dist_sync rank) is what 2 ranks would
reach if they never waited for each other; the wall-clock ratio is lower by the waiting.

``--timeline`` also traces the dist_sync run (MXC_KVSTORE_TRACE) and prints, for the median
timed step of rank 0, when backward ended and when each gradient's allreduce ran, relative to
the step's start (``--timeline-all`` prints every key instead of a summary).

    python tools/bench/bench_dist_training.py [--rounds 3] [--steps 10] [--warmup 3] [--cpu]
        [--timeline] [--dist-env MXC_KVSTORE_POLL_MAX_US=500]

``--cpu`` prints each process's CPU time per step and its communication thread's share;
``--dist-env`` adds a dist_sync run with other settings to every round (before/after).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _file_barrier(path, rank, nproc, limit=600.0):
    """The independent processes start timing together (they share nothing else)."""
    open("%s.%d" % (path, rank), "w").close()
    end = time.monotonic() + limit
    while not all(os.path.exists("%s.%d" % (path, r)) for r in range(nproc)):
        if time.monotonic() > end:
            raise SystemExit("the other independent process did not start")
        time.sleep(0.01)


def _thread_cpu(comm):
    """CPU seconds the communication thread used so far (Linux), 0 without one."""
    tid = getattr(getattr(comm, "_thread", None), "native_id", None)
    if tid is None:
        return 0.0
    try:
        with open("/proc/self/task/%d/stat" % tid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker(args):
    rank = int(os.environ.get("DMLC_WORKER_ID", os.environ.get("BENCH_RANK", "0")))
    nproc = int(os.environ.get("DMLC_NUM_WORKER", os.environ.get("BENCH_NPROC", "1")))
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cores) >= nproc > 1:
        os.sched_setaffinity(0, {cores[rank]})
    import numpy as np
    import mxc as mx
    from mxc import autograd, gluon
    from mxc._core import engine
    from mxc.gluon.model_zoo import vision

    kv = mx.kv.create(args.kvstore)
    comm = getattr(kv, "_comm", None)
    trace = comm is not None and comm.trace is not None
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
    grads = []

    def step(n):
        if trace and n > 0:      # (parameters exist after the first forward)
            # step start = when the previous step's updates are done (what forward waits for)
            engine.push(lambda: comm.note("step", n),
                        const_vars=[p.data()._chunk for p in net.collect_params().values()],
                        priority=1 << 26, name="bench_mark")
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        if trace:
            if not grads:
                grads.extend(p.grad()._chunk for p in net.collect_params().values()
                             if p.grad_req != "null")
            engine.push(lambda: comm.note("backward_end", n), const_vars=grads,
                        priority=1 << 26, name="bench_mark")
        trainer.step(args.batch * kv.num_workers)

    if args.interleave:
        return interleave(args, net, x, y, loss_fn, trainer, kv)
    for i in range(args.warmup):
        step(i)
    mx.nd.waitall()
    if kv.num_workers > 1:
        kv.barrier()
    if args.sync:
        _file_barrier(args.sync, rank, nproc)
    t = time.perf_counter()
    cpu = time.process_time()
    comm_cpu = _thread_cpu(comm)
    for i in range(args.steps):
        step(args.warmup + i)
    for p in net.collect_params().values():
        p.data().wait_to_read()
    mx.nd.waitall()
    if kv.num_workers > 1:
        kv.barrier()
    dt = time.perf_counter() - t
    cpu = time.process_time() - cpu
    comm_cpu = _thread_cpu(comm) - comm_cpu
    print("CPU " + json.dumps({"rank": rank, "wall_ms_per_step": round(dt / args.steps * 1e3, 1),
                               "cpu_ms_per_step": round(cpu / args.steps * 1e3, 1),
                               "comm_thread_cpu_ms_per_step":
                               round(comm_cpu / args.steps * 1e3, 1)}), flush=True)
    if kv.rank == 0 or args.sync:
        print("RESULT " + json.dumps({"seconds": dt, "samples": args.steps * args.batch
                                      * kv.num_workers}), flush=True)


def interleave(args, net, x, y, loss_fn, trainer, kv):
    """Blocks of steps alternating between the dist_sync Trainer and a local one (kvstore
    None, same parameters) in the same processes: CPU and wall per step of each, under the
    same load, so their difference is what dist_sync adds."""
    import numpy as np
    import mxc as mx
    from mxc import autograd, gluon
    local = gluon.Trainer(net.collect_params(), "sgd",
                          {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4}, kvstore=None)
    per = {"dist_sync": ([], []), "local": ([], [])}
    block = 3
    for b in range(2 * (args.warmup + args.steps) // block + 2):
        which, tr = ("dist_sync", trainer) if b % 2 == 0 else ("local", local)
        kv.barrier()
        t, c = time.perf_counter(), time.process_time()
        for _ in range(block):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(args.batch * (kv.num_workers if tr is trainer else 1))
        for p in net.collect_params().values():
            p.data().wait_to_read()
        mx.nd.waitall()
        if b >= 2:            # the first block of each is warm-up
            per[which][0].append((time.perf_counter() - t) / block)
            per[which][1].append((time.process_time() - c) / block)
    fig = {"rank": kv.rank}
    for which, (wall, cpu) in per.items():
        fig[which + "_wall_ms_per_step"] = round(float(np.median(wall)) * 1e3, 1)
        fig[which + "_cpu_ms_per_step"] = round(float(np.median(cpu)) * 1e3, 1)
    fig["dist_sync_extra_cpu_ms_per_step"] = round(
        fig["dist_sync_cpu_ms_per_step"] - fig["local_cpu_ms_per_step"], 1)
    print("INTERLEAVE " + json.dumps(fig), flush=True)


def _results(out):
    return [json.loads(line.split("RESULT ", 1)[1]) for line in out.splitlines()
            if "RESULT " in line]


def run(cmds, env, verbose=False):
    """(samples/s of all processes, mean CPU ms per step of a process, mean communication
    thread CPU ms per step of a process)."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=dict(env, **extra), cwd=ROOT) for cmd, extra in cmds]
    res, cpus = [], []
    for p in procs:
        out = p.communicate(timeout=1800)[0].decode("utf-8", "replace")
        if p.returncode != 0:
            raise SystemExit("benchmark run failed (%d):\n%s" % (p.returncode, out[-4000:]))
        for line in out.splitlines():
            if "CPU " in line:
                cpu = json.loads(line.split("CPU ", 1)[1])
                cpus.append(cpu)
                if verbose:
                    print(json.dumps(dict({"bench": "dist_training", "figure": "per process"},
                                          **cpu)))
        got = _results(out)
        if not got:
            raise SystemExit("no result in the output:\n" + out[-4000:])
        res += got
    cpu = sum(c["cpu_ms_per_step"] for c in cpus) / max(1, len(cpus))
    comm = sum(c["comm_thread_cpu_ms_per_step"] for c in cpus) / max(1, len(cpus))
    return sum(r["samples"] / r["seconds"] for r in res), cpu, comm


def timeline(prefix, warmup, steps, every):
    """The median timed step of rank 0: backward's end and each allreduce, from step start."""
    with open(prefix + ".0.json") as f:
        ev = json.load(f)
    def tup(x):        # (names hold tuples, a bucket's keys among them: JSON made them lists)
        return tuple(tup(y) for y in x) if isinstance(x, list) else x

    at = {}
    for e, name, t, _ in ev:
        at[(e, tup(name))] = t
    rows = []
    for n in range(warmup, warmup + steps):
        t0 = at.get(("step", n))
        tb = at.get(("backward_end", n))
        if t0 is None or tb is None:
            continue
        pushes = sorted((k for (e, k) in at if e == "run" and isinstance(k, tuple)
                         and k[0] == "push" and k[2] == n + 1), key=lambda k: at[("run", k)])
        if not pushes:
            continue
        t1 = at.get(("step", n + 1), max(at[("ran", k)] for k in pushes))
        comm_before = sum(max(0.0, min(at[("ran", k)], tb) - at[("run", k)]) for k in pushes)
        comm_all = sum(at[("ran", k)] - at[("run", k)] for k in pushes)
        rows.append({
            "step": n, "step_ms": (t1 - t0) * 1e3, "backward_end_ms": (tb - t0) * 1e3,
            "first_ready_ms": (min(at[("ready", k)] for k in pushes) - t0) * 1e3,
            "first_allreduce_start_ms": (at[("run", pushes[0])] - t0) * 1e3,
            "last_allreduce_end_ms": (max(at[("ran", k)] for k in pushes) - t0) * 1e3,
            "allreduce_busy_ms": comm_all * 1e3,
            "allreduce_busy_before_backward_end_ms": comm_before * 1e3,
            "keys": len(pushes),
            "detail": [(k[1], round((at[("ready", k)] - t0) * 1e3, 1),
                        round((at[("run", k)] - t0) * 1e3, 1),
                        round((at[("ran", k)] - t0) * 1e3, 1),
                        round((at.get(("finished", k), at[("ran", k)]) - t0) * 1e3, 1))
                       for k in pushes]})
    if not rows:
        return
    rows.sort(key=lambda r: r["step_ms"])
    med = rows[len(rows) // 2]
    detail = med.pop("detail")
    print(json.dumps(dict({"bench": "dist_training", "figure": "timeline of the median step, "
                           "rank 0, ms from step start"},
                          **{k: (round(v, 1) if isinstance(v, float) else v)
                             for k, v in med.items()})))
    if every:
        print(json.dumps({"bench": "dist_training", "figure": "per key: [key, ready (staged), "
                          "allreduce start, allreduce end, finish done] ms", "keys": detail}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32, help="per process")
    parser.add_argument("--only", choices=("one", "indep", "dist"), action="append",
                        help="run only these (repeatable)")
    parser.add_argument("--timeline", action="store_true")
    parser.add_argument("--timeline-all", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="print each process's CPU time")
    parser.add_argument("--dist-env", action="append", default=[], metavar="NAME=VALUE",
                        help="also run dist_sync with these settings (before/after figures "
                        "in the same run; repeatable)")
    parser.add_argument("--interleave", action="store_true",
                        help="only: 2 ranks alternating dist_sync and local-update steps in the "
                        "same processes (what dist_sync adds per step, under equal load)")
    parser.add_argument("--kvstore", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--sync", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "MXNET_CPU_WORKER_NTHREADS": "1"})
    for k in list(env):
        if k.startswith(("DMLC_", "MXC_LAUNCH_", "PMI_", "MXC_KVSTORE_TRACE")):
            del env[k]
    common = [__file__, "--worker", "--steps", str(args.steps), "--warmup", str(args.warmup),
              "--batch", str(args.batch)]
    py = sys.executable
    only = args.only or ["one", "indep", "dist"]
    alt = dict(item.split("=", 1) for item in args.dist_env)
    if alt:
        only = only + ["dist_alt"]
    if args.interleave:
        for rnd in range(args.rounds):
            p = subprocess.run([py, "-m", "mxc.tools.launch", "-n", "2", py] + common
                               + ["--kvstore", "dist_sync", "--interleave"], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1800)
            out = p.stdout.decode("utf-8", "replace")
            if p.returncode != 0:
                raise SystemExit("benchmark run failed (%d):\n%s" % (p.returncode, out[-4000:]))
            for line in out.splitlines():
                if "INTERLEAVE " in line:
                    print(json.dumps(dict({"bench": "dist_training", "round": rnd,
                                           "figure": "2 ranks x 1 core, blocks of 3 steps "
                                           "alternating dist_sync / local update, medians"},
                                          **json.loads(line.split("INTERLEAVE ", 1)[1]))),
                          flush=True)
        return
    tmp = tempfile.mkdtemp(prefix="mxc-bench-dist-")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    names = {"one": "1 process x 1 core", "indep": "2 independent processes x 1 core",
             "dist": "2 ranks x 1 core, dist_sync",
             "dist_alt": "2 ranks x 1 core, dist_sync with %s" % " ".join(args.dist_env)}
    ratios, loads = {}, []
    for rnd in range(args.rounds):
        rates, cpus = {}, {}
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        loads.append(load)
        for what in only:
            if what == "one":
                rates[what], cpus[what], comm = run(
                    [([py] + common + ["--kvstore", "local"], {})], env, args.cpu)
            elif what == "indep":
                sync = os.path.join(tmp, "sync%d" % rnd)
                rates[what], cpus[what], comm = run(
                    [([py] + common + ["--kvstore", "local", "--sync", sync],
                      {"BENCH_RANK": str(r), "BENCH_NPROC": "2"}) for r in range(2)],
                    env, args.cpu)
            else:
                extra = dict(alt) if what == "dist_alt" else {}
                prefix = os.path.join(tmp, "trace%s%d" % (what, rnd))
                if args.timeline or args.timeline_all:
                    extra["MXC_KVSTORE_TRACE"] = prefix
                rates[what], cpus[what], comm = run(
                    [([py, "-m", "mxc.tools.launch", "-n", "2", py] + common
                      + ["--kvstore", "dist_sync"], extra)], env, args.cpu)
                if "MXC_KVSTORE_TRACE" in extra:
                    timeline(prefix, args.warmup, args.steps, args.timeline_all)
            print(json.dumps({"bench": "dist_training", "round": rnd, "run": names[what],
                              "model": "resnet18_v1 cifar 3x32x32",
                              "batch_per_process": args.batch,
                              "samples_per_s": round(rates[what], 2),
                              "cpu_ms_per_step_per_process": round(cpus[what], 1),
                              "of_which_comm_thread": round(comm, 1)}), flush=True)
        fig = {"bench": "dist_training", "round": rnd, "cores_available": cores,
               "load_average_before": round(load, 2)}
        if "one" in rates and "dist" in rates:
            fig["dist_sync_over_1_process"] = round(rates["dist"] / rates["one"], 3)
            fig["target"] = 1.6
        if "one" in rates and "indep" in rates:
            fig["ceiling_2_independent_over_1_process"] = round(rates["indep"] / rates["one"], 3)
        if "indep" in rates and "dist" in rates:
            fig["dist_sync_over_ceiling"] = round(rates["dist"] / rates["indep"], 3)
        if "one" in cpus and "dist" in cpus:
            fig["dist_sync_extra_cpu_ms_per_step"] = round(cpus["dist"] - cpus["one"], 1)
            fig["cpu_bound_speedup"] = round(2 * cpus["one"] / cpus["dist"], 3)
        if "dist_alt" in rates and "dist" in rates:
            fig["dist_sync_over_dist_sync_with_settings"] = round(
                rates["dist"] / rates["dist_alt"], 3)
            fig["cpu_ms_per_step_dist_sync_vs_with_settings"] = [
                round(cpus["dist"], 1), round(cpus["dist_alt"], 1)]
        print(json.dumps(fig), flush=True)
        for k, v in fig.items():
            if k not in ("bench", "round", "cores_available", "target",
                         "load_average_before"):
                ratios.setdefault(k, []).append(v)
    if args.rounds > 1:
        summary = {"bench": "dist_training", "figure": "range over %d rounds (min, max)"
                   % args.rounds, "cores_available": cores}
        for k, v in ratios.items():
            if all(isinstance(x, (int, float)) for x in v):
                summary[k] = [min(v), max(v)]
        # (the load before a later round includes this benchmark's own processes, up to 2)
        if loads[0] > 0.5 * cores or max(loads) > cores + 1:
            summary["note"] = ("other load on the machine (1-minute load average %.1f before "
                               "the first round, up to %.1f before a round, on %d cores): "
                               "wall-clock ratios are unreliable, CPU per step less so"
                               % (loads[0], max(loads), cores))
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()

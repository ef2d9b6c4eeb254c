"""The host side of GPU operators, without a GPU (issue 11 section 3): one JSON line per figure.

    python tools/bench/bench_gpu_host.py [--quick]

What a GPU operator costs the Python thread that issues it: the front end, the launch packing,
the engine, and the hand-offs between threads. It runs mxc against the fake CUDA driver of the
tests (tests/_core/fake_libcuda.py, built here with gcc), whose kernel launches return at once,
so these are the costs a real GPU adds its launch latency to. Every kernel is the fake driver's
no-op (the real launch specs and argument packing run, the arithmetic does not). Figures, us per
op (median of blocks, or of single ops for the latencies):
- chain_small_adds: x = x + b, 2,000 times on 16 floats on gpu(0), then one wait;
- chain_raw_push_launch: cuda.push_launch of one kernel with its arguments packed every call;
- chain_push_packed: the same launch packed once (cuda.pack_launch), pushed 2,000 times;
- chain_small_adds on cpu: the CPU fast path, for scale;
- op_then_wait and op_then_asnumpy: one add, then a wait or a host read, one at a time.
On an H200 (2026-11-28, before the packed launches and inline launches) the chain cost mxc 31.2
us/op, PyTorch 10.3, a raw launch 4.8: tools/bench/bench_gpu.py measures those where a GPU is.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent('''
    import ctypes, json, os, sys, time
    import numpy as np
    import mxc as mx
    from mxc._core import cuda
    import mxc.ops.cuda.loader as loader
    lib = ctypes.CDLL(os.environ["MXC_LIBCUDA"])
    fn = lambda name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    noop = fn("fake_noop")
    reps = int(sys.argv[1])
    def emit(bench, impl, us, **extra):
        print(json.dumps(dict(bench=bench, impl=impl, value=round(us, 3), unit="us/op", **extra)),
              flush=True)
    def per_op(run, n):
        run(n // 10)
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); run(n); ts.append((time.perf_counter() - t) / n * 1e6)
        return float(np.median(ts))
    def latency(op, n):
        for _ in range(100):
            op()
        ts = []
        for _ in range(n):
            t = time.perf_counter(); op(); ts.append(time.perf_counter() - t)
        return float(np.median(ts)) * 1e6
    loader.kernel = lambda family, name, dev=0: noop
    def chain_on(u, v):
        def run(n):
            x = u
            for _ in range(n):
                x = x + v
            mx.nd.waitall()
        return run
    arrays = {}
    for impl, p in (("mxc-gpu-host", mx.gpu(0)), ("mxc-cpu", mx.cpu(0))):
        u, v = (mx.nd.array(np.ones(16, np.float32), ctx=p) for _ in range(2))
        arrays[impl] = (u, v)
        emit("chain_small_adds", impl, per_op(chain_on(u, v), 2000))
        emit("op_then_wait", impl, latency(lambda: (u + v).wait_to_read(), 20 * reps))
        emit("op_then_asnumpy", impl, latency(lambda: (u + v).asnumpy(), 20 * reps))
    a, b = arrays["mxc-gpu-host"]
    args = [("in", 0), ("in", 1), ("out", 0), ("i64", 16)]
    def raw(n):
        for _ in range(n):
            cuda.push_launch(noop, (1,), (32,), 0, args, [a, b], [a], "add1", 0)
        mx.nd.waitall()
    emit("chain_raw_push_launch", "mxc-gpu-host", per_op(raw, 2000))
    packed = cuda.pack_launch(noop, (1,), (32,), 0, args, 2, 1, "add1", 0)
    def pushed(n):
        for _ in range(n):
            cuda.push_packed(packed, [a, b], [a])
        mx.nd.waitall()
    emit("chain_push_packed", "mxc-gpu-host", per_op(pushed, 2000))
''')


def build_fake_driver(d):
    if shutil.which("gcc") is None:
        raise SystemExit("bench_gpu_host: gcc is needed to build the fake CUDA driver")
    sys.path.insert(0, ROOT)
    from tests._core.fake_libcuda import SOURCE
    src, so = os.path.join(d, "fake_libcuda.c"), os.path.join(d, "libcuda_fake.so")
    with open(src, "w") as f:
        f.write(SOURCE)
    subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-o", so, src])
    return so


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, MXC_LIBCUDA=build_fake_driver(d),
                   PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
        r = subprocess.run([sys.executable, "-c", CHILD, "3" if args.quick else "9"], env=env)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()

"""Runtime-core benchmarks (issue 2 section 6): one JSON line per figure, every peer in one run.

    python tools/bench/bench_core.py [--quick]

    python tools/bench/bench_core.py --peer-python /path/to/mxnet-venv/bin/python

Figures: a chain of 1,000 dependent small adds then one wait (us/op); one op then asnumpy (us);
add/mul/relu/exp on 1M and 16M float32 (GB/s = bytes read + written / time); sum over 16M float32
(GB/s); `import mxc` plus the first op (s, fresh interpreter). Peers: numpy always; PyTorch and
MXNet when they import in this interpreter (run the script with MXNet's own python to get its
figures); their absence is not an error. Compare ratios within one run, not across runs.
"""
import argparse
import json
import subprocess
import sys
import time

import numpy as np


def emit(bench, impl, value, unit, **extra):
    if ONLY is not None and impl not in ONLY:
        return
    print(json.dumps(dict(bench=bench, impl=impl, value=round(value, 4), unit=unit, **extra)),
          flush=True)


def best(fn, repeat):
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


ONLY = None     # restrict to these implementations (used when this script runs as a peer)


def peers():
    out = {}
    try:
        import mxc
        out["mxc"] = mxc
    except ImportError:
        pass
    try:
        import torch
        out["torch"] = torch
    except ImportError:
        pass
    try:
        import mxnet
        out["mxnet"] = mxnet
    except ImportError:
        pass
    return out


def chain(libs, n=1000, repeat=5):
    a = np.ones((4, 4), np.float32)
    impls = {"numpy": (lambda: a.copy(), lambda x: x + a, lambda x: x)}
    for name in ("mxc", "mxnet"):
        if name in libs:
            nd = libs[name].nd
            b = nd.array(a)
            impls[name] = (lambda nd=nd, b=b: nd.array(a), lambda x, b=b: x + b,
                           lambda x: x.wait_to_read())
    if "torch" in libs:
        torch = libs["torch"]
        tb = torch.from_numpy(a)
        impls["torch"] = (lambda: torch.from_numpy(a.copy()), lambda x: x + tb, lambda x: x)
    for name, (make, step, wait) in impls.items():
        def run():
            x = make()
            for _ in range(n):
                x = step(x)
            wait(x)
        run()
        emit("chain_1000_small_adds", name, best(run, repeat) / n * 1e6, "us/op")
        x = make()

        def one():
            for _ in range(200):
                y = step(x)
                (y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y))
        one()
        emit("one_op_then_asnumpy", name, best(one, repeat) / 200 * 1e6, "us")


def bandwidth(libs, sizes, repeat):
    for n in sizes:
        a = np.random.rand(n).astype(np.float32) + 0.5
        b = np.random.rand(n).astype(np.float32) + 0.5
        ops = {"add": (2, lambda m, x, y: m["add"](x, y)), "mul": (2, lambda m, x, y: m["mul"](x, y)),
               "relu": (1, lambda m, x, y: m["relu"](x)), "exp": (1, lambda m, x, y: m["exp"](x))}
        impls = {"numpy": ({"add": np.add, "mul": np.multiply, "relu": lambda x: np.maximum(x, 0),
                            "exp": np.exp}, a, b, lambda r: r)}
        for name in ("mxc", "mxnet"):
            if name in libs:
                nd = libs[name].nd
                impls[name] = ({"add": nd.elemwise_add, "mul": nd.elemwise_mul, "relu": nd.relu,
                                "exp": nd.exp}, nd.array(a), nd.array(b), lambda r: r.wait_to_read())
        if "torch" in libs:
            torch = libs["torch"]
            impls["torch"] = ({"add": torch.add, "mul": torch.mul, "relu": torch.relu,
                               "exp": torch.exp}, torch.from_numpy(a), torch.from_numpy(b), lambda r: r)
        for op, (nin, call) in ops.items():
            nbytes = (nin + 1) * 4 * n
            # implementations take turns, so a slow moment of the machine hits them alike
            times = {name: float("inf") for name in impls}
            for name, (m, x, y, wait) in impls.items():
                wait(call(m, x, y))
            for _ in range(repeat):
                for name, (m, x, y, wait) in impls.items():
                    t0 = time.perf_counter()
                    wait(call(m, x, y))
                    times[name] = min(times[name], time.perf_counter() - t0)
            for name, t in times.items():
                emit(op, name, nbytes / t / 1e9, "GB/s", n=n, dtype="float32")
    n = sizes[-1]
    a = np.random.rand(n).astype(np.float32)
    impls = {"numpy": (lambda: np.sum(a))}
    for name in ("mxc", "mxnet"):
        if name in libs:
            nd = libs[name].nd
            x = nd.array(a)
            impls[name] = (lambda nd=nd, x=x: nd.sum(x).wait_to_read())
    if "torch" in libs:
        t_a = libs["torch"].from_numpy(a)
        impls["torch"] = (lambda: libs["torch"].sum(t_a))
    for name, fn in impls.items():
        fn()
        emit("sum", name, 4 * n / best(fn, repeat) / 1e9, "GB/s", n=n, dtype="float32")


def import_time(libs):
    snippets = {"mxc": "import mxc as mx; mx.nd.ones((2, 2)).__add__(1).asnumpy()",
                "torch": "import torch; (torch.ones(2, 2) + 1).numpy()",
                "mxnet": "import mxnet as mx; (mx.nd.ones((2, 2)) + 1).asnumpy()",
                "numpy": "import numpy as np; np.ones((2, 2)) + 1"}
    for name, code in snippets.items():
        if name != "numpy" and name not in libs:
            continue
        t = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            t = min(t, time.perf_counter() - t0)
        emit("import_and_first_op", name, t, "s")


def pool():
    """A pooled 256-byte alloc + free pair of the storage allocator (contract: well under
    100 ns; mxc only: no peer has a comparable pool call)."""
    try:
        from mxc._core import storage
    except ImportError:
        return
    emit("pool_alloc_free_256B", "mxc", min(storage._bench_pool(256, 100000) for _ in range(5)),
         "ns")


def main():
    global ONLY
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--only", help="comma-separated implementations to report")
    ap.add_argument("--section", choices=["chain", "bandwidth", "import", "pool"])
    ap.add_argument("--peer-python", help="another interpreter (e.g. one with MXNet 1.9.1) whose "
                    "mxnet figures are measured in the same run, section by section")
    args = ap.parse_args()
    ONLY = set(args.only.split(",")) if args.only else None
    libs = peers()
    sizes = [1 << 20, 1 << 22] if args.quick else [1 << 20, 1 << 24]
    sections = [("chain", lambda: chain(libs, repeat=3 if args.quick else 7)),
                ("bandwidth", lambda: bandwidth(libs, sizes, 5 if args.quick else 30)),
                ("import", lambda: import_time(libs)),
                ("pool", pool)]
    for name, run in sections:
        if args.section and args.section != name:
            continue
        run()
        if args.peer_python:
            cmd = [args.peer_python, __file__, "--only", "mxnet", "--section", name]
            if args.quick:
                cmd.append("--quick")
            subprocess.run(cmd, check=False)


if __name__ == "__main__":
    main()

"""GPU benchmarks (issue 11 section 3): one JSON line per figure, mxc beside PyTorch (and CuPy
where it has the figure) in ONE run; skips cleanly (one JSON line saying why) without a GPU.

    python tools/bench/bench_gpu.py [--quick]

Figures: a chain of 1,000 small dependent adds then one synchronise (us/op; mxc through mx.nd
and, independent of the operator kernels, raw launches of one CuPy-compiled kernel through mxc's
driver launcher); one op then a host read (us); add/mul/exp/relu on 16M float32 (GB/s = bytes
read + written / time); sum over 16M float32 (GB/s); dot 4096x4096 float32 with and without TF32
(TFLOP/s; mxc's cuBLAS path uses TF32 when MXNET_CUDA_ALLOW_TENSOR_CORE and
MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION are both 1, PyTorch allow_tf32); host<->device copies of
64 MiB from pinned memory (GB/s). A figure mxc cannot produce yet (an operator without a GPU
kernel) is printed with "error" instead of a value. Compare ratios within one run.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.append(ROOT)       # last: an installed mxc (tools/gpu_check.sh) wins


def emit(bench, impl, value=None, unit="", **extra):
    rec = dict(bench=bench, impl=impl, unit=unit, **extra)
    if value is not None:
        rec["value"] = round(value, 4)
    print(json.dumps(rec), flush=True)


def timed(fn, sync, repeat):
    """Best wall time of fn() followed by sync() (warm-up run first)."""
    fn()
    sync()
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        t = min(t, time.perf_counter() - t0)
    return t


def attempt(bench, impl, unit, make):
    try:
        v = make()
    except Exception as e:          # an operator without a GPU kernel, a missing peer...
        emit(bench, impl, unit=unit, error=f"{type(e).__name__}: {str(e)[:200]}")
        return
    emit(bench, impl, v, unit)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rep = 3 if args.quick else 10
    import mxc as mx
    import _fake_gpu
    _fake_gpu.install_if_asked()       # --dry-run of tools/gpu_check.sh only
    from mxc._core import cuda
    from mxc.ops.cuda.loader import function_pointer
    if mx.context.num_gpus() == 0:
        emit("gpu", "mxc", unit="", skipped=f"no CUDA device: {cuda.status()}")
        return
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    try:
        import cupy
    except ImportError:
        cupy = None
    g = mx.gpu(0)
    mxsync = mx.nd.waitall
    tsync = torch.cuda.synchronize if torch else None
    emit("device", "mxc", unit="", name=cuda.device_name(0), driver=cuda.driver_version())

    # ---- op chain
    n_chain = 1000

    def mx_chain():
        a = mx.nd.ones((16,), ctx=g)
        b = mx.nd.ones((16,), ctx=g)

        def run():
            x = a
            for _ in range(n_chain):
                x = x + b
        return timed(run, mxsync, rep) / n_chain * 1e6
    attempt("chain_1000_small_adds", "mxc", "us/op", mx_chain)
    if cupy is not None:
        def launch_chain():
            k = cupy.RawKernel(r'''extern "C" __global__ void add1(const float *a, const float *b,
                float *y, long long n) { long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
                if (i < n) y[i] = a[i] + b[i]; }''', "add1")
            k.compile() if hasattr(k, "compile") else None
            a = mx.nd.ones((16,), ctx=g)
            b = mx.nd.ones((16,), ctx=g)
            ptr = function_pointer(k)
            args = [("in", 0), ("in", 1), ("out", 0), ("i64", 16)]

            def run():
                for _ in range(n_chain):
                    cuda.push_launch(ptr, (1,), (32,), 0, args, [a, b], [a], "add1", 0)
            return timed(run, mxsync, rep) / n_chain * 1e6
        attempt("chain_1000_small_adds_raw_launch", "mxc", "us/op", launch_chain)

        def cupy_chain():
            a = cupy.ones(16, cupy.float32)
            b = cupy.ones(16, cupy.float32)

            def run():
                x = a
                for _ in range(n_chain):
                    x = x + b
            return timed(run, cupy.cuda.Device().synchronize, rep) / n_chain * 1e6
        attempt("chain_1000_small_adds", "cupy", "us/op", cupy_chain)
    if torch:
        def t_chain():
            a = torch.ones(16, device="cuda")
            b = torch.ones(16, device="cuda")

            def run():
                x = a
                for _ in range(n_chain):
                    x = x + b
            return timed(run, tsync, rep) / n_chain * 1e6
        attempt("chain_1000_small_adds", "torch", "us/op", t_chain)

    # ---- one op then a host read
    def mx_read():
        a = mx.nd.ones((16,), ctx=g)
        return timed(lambda: (a + a).asnumpy(), lambda: None, rep * 20) * 1e6
    attempt("one_op_then_host_read", "mxc", "us", mx_read)
    if torch:
        def t_read():
            a = torch.ones(16, device="cuda")
            return timed(lambda: (a + a).cpu().numpy(), lambda: None, rep * 20) * 1e6
        attempt("one_op_then_host_read", "torch", "us", t_read)

    # ---- bandwidth
    n = 1 << 24
    host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    for name, nin in (("add", 2), ("mul", 2), ("exp", 1), ("relu", 1)):
        nbytes = 4 * n * (nin + 1)

        def mx_bw(name=name, nbytes=nbytes):
            a = mx.nd.array(host, ctx=g)
            b = mx.nd.array(host, ctx=g)
            f = {"add": lambda: a + b, "mul": lambda: a * b, "exp": lambda: mx.nd.exp(a),
                 "relu": lambda: mx.nd.relu(a)}[name]
            return nbytes / timed(f, mxsync, rep) / 1e9
        attempt(f"{name}_16M_f32", "mxc", "GB/s", mx_bw)
        if torch:
            def t_bw(name=name, nbytes=nbytes):
                a = torch.from_numpy(host).cuda()
                b = torch.from_numpy(host).cuda()
                f = {"add": lambda: a + b, "mul": lambda: a * b, "exp": lambda: torch.exp(a),
                     "relu": lambda: torch.relu(a)}[name]
                return nbytes / timed(f, tsync, rep) / 1e9
            attempt(f"{name}_16M_f32", "torch", "GB/s", t_bw)

    def mx_sum():
        a = mx.nd.array(host, ctx=g)
        return 4 * n / timed(lambda: mx.nd.sum(a), mxsync, rep) / 1e9
    attempt("sum_16M_f32", "mxc", "GB/s", mx_sum)
    if torch:
        def t_sum():
            a = torch.from_numpy(host).cuda()
            return 4 * n / timed(lambda: torch.sum(a), tsync, rep) / 1e9
        attempt("sum_16M_f32", "torch", "GB/s", t_sum)

    # ---- GEMM 4096
    m = 4096
    flops = 2 * m ** 3
    mat = np.random.default_rng(1).standard_normal((m, m)).astype(np.float32)
    for tf32 in (False, True):
        tag = "tf32" if tf32 else "fp32"

        def mx_dot(tf32=tf32):
            os.environ["MXNET_CUDA_ALLOW_TENSOR_CORE"] = "1" if tf32 else "0"
            os.environ["MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION"] = "1" if tf32 else "0"
            a = mx.nd.array(mat, ctx=g)
            return flops / timed(lambda: mx.nd.dot(a, a), mxsync, rep) / 1e12
        attempt(f"dot_4096_{tag}", "mxc", "TFLOP/s", mx_dot)
        if torch:
            def t_dot(tf32=tf32):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                a = torch.from_numpy(mat).cuda()
                return flops / timed(lambda: a @ a, tsync, rep) / 1e12
            attempt(f"dot_4096_{tag}", "torch", "TFLOP/s", t_dot)

    # ---- pinned copies
    nb = 64 << 20
    src = np.ones(nb // 4, np.float32)

    def mx_h2d():
        p = mx.nd.array(src, ctx=mx.cpu_pinned())
        d = mx.nd.empty(src.shape, ctx=g)
        return nb / timed(lambda: p.copyto(d), mxsync, rep) / 1e9

    def mx_d2h():
        p = mx.nd.empty(src.shape, ctx=mx.cpu_pinned())
        d = mx.nd.array(src, ctx=g)
        return nb / timed(lambda: d.copyto(p), mxsync, rep) / 1e9
    attempt("h2d_pinned_64MiB", "mxc", "GB/s", mx_h2d)
    attempt("d2h_pinned_64MiB", "mxc", "GB/s", mx_d2h)
    if torch:
        def t_h2d():
            p = torch.from_numpy(src).pin_memory()
            d = torch.empty(p.shape, device="cuda")
            return nb / timed(lambda: d.copy_(p, non_blocking=True), tsync, rep) / 1e9

        def t_d2h():
            p = torch.empty(src.shape, dtype=torch.float32).pin_memory()
            d = torch.from_numpy(src).cuda()
            return nb / timed(lambda: p.copy_(d, non_blocking=True), tsync, rep) / 1e9
        attempt("h2d_pinned_64MiB", "torch", "GB/s", t_h2d)
        attempt("d2h_pinned_64MiB", "torch", "GB/s", t_d2h)


if __name__ == "__main__":
    main()

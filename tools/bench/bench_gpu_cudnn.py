"""Convolution on the GPU with and without cuDNN (issue 24), one JSON line per figure in
bench_gpu.py's format: each case's forward and forward+backward in ms through cuDNN's plans
(mxc/ops/cuda/cudnn_conv.py) and through im2col + cuBLAS (cudnn_off=True), same process, and
how far apart their results are; the first call's time (the plans built, or loaded from
MXC_CUDNN_PLAN_DIR when an earlier process stored them) and the plan cache's counters.

    python tools/bench/bench_gpu_cudnn.py [--quick]

tools/gpu_check.sh runs it twice on one plan directory: the second run's first calls load the
plans from disk instead of building them (its "plans" line says disk, not built).
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if ROOT not in sys.path:
    sys.path.append(ROOT)       # last: an installed mxc (tools/gpu_check.sh) wins
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_gpu import emit, timed  # noqa: E402

# name, data shape, Convolution attributes, dtype
CASES = [
    ("conv3x3_64_32x32_b32", (32, 64, 32, 32), dict(kernel=(3, 3), num_filter=64, pad=(1, 1)),
     "float32"),
    ("conv3x3_64_32x32_b32_fp16", (32, 64, 32, 32),
     dict(kernel=(3, 3), num_filter=64, pad=(1, 1)), "float16"),
    ("conv7x7s2_3_224_b32", (32, 3, 224, 224),
     dict(kernel=(7, 7), num_filter=64, stride=(2, 2), pad=(3, 3)), "float32"),
    ("conv1x1_256_64_56x56_b32", (32, 256, 56, 56), dict(kernel=(1, 1), num_filter=64),
     "float32"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rep = 3 if args.quick else 10
    import mxc as mx
    import _fake_gpu
    _fake_gpu.install_if_asked()       # --dry-run of tools/gpu_check.sh only
    from mxc._core import cuda
    from mxc.ops.cuda import cudnn_plans
    if mx.context.num_gpus() == 0:
        emit("gpu_cudnn", "mxc", skipped=f"no CUDA device: {cuda.status()}")
        return
    fe = cudnn_plans.frontend()
    if fe is None:
        emit("gpu_cudnn", "mxc", skipped="the cuDNN frontend (module cudnn) does not import")
    else:
        emit("gpu_cudnn", "mxc", cudnn=str(fe.backend_version()),
             frontend=getattr(fe, "__version__", "?"),
             autotune=os.environ.get("MXNET_CUDNN_AUTOTUNE_DEFAULT", "1"),
             plan_dir=cudnn_plans_dir())
    g = mx.gpu(0)
    rng = np.random.default_rng(0)
    for name, shape, kw, dtype in CASES:
        x = mx.nd.array(rng.standard_normal(shape), ctx=g, dtype=dtype)
        wshape = (kw["num_filter"], shape[1]) + kw["kernel"]
        w = mx.nd.array(rng.standard_normal(wshape) * 0.1, ctx=g, dtype=dtype)
        b = mx.nd.array(rng.standard_normal(kw["num_filter"]), ctx=g, dtype=dtype)
        results = {}
        for path in (["cudnn"] if fe is not None else []) + ["im2col"]:
            off = path == "im2col"
            for a in (x, w, b):
                a.attach_grad()

            def fwd():
                return mx.nd.Convolution(x, w, b, cudnn_off=off, **kw)

            def step():
                with mx.autograd.record():
                    y = mx.nd.Convolution(x, w, b, cudnn_off=off, **kw)
                y.backward()
                return y
            try:
                t0 = time.perf_counter()
                step()
                mx.nd.waitall()
                first = time.perf_counter() - t0
                emit(name + "_first_call", path, first * 1e3, "ms")
                emit(name + "_fwd", path, timed(fwd, mx.nd.waitall, rep) * 1e3, "ms")
                emit(name + "_fwdbwd", path, timed(step, mx.nd.waitall, rep) * 1e3, "ms")
                y = step()
                results[path] = [a.asnumpy().astype(np.float64)
                                 for a in (y, x.grad, w.grad, b.grad)]
            except Exception as e:
                emit(name, path, error=f"{type(e).__name__}: {str(e)[:200]}")
        if len(results) == 2:
            diff = max(float(np.max(np.abs(c - i)) / (np.max(np.abs(i)) + 1e-30))
                       for c, i in zip(results["cudnn"], results["im2col"]))
            emit(name + "_cudnn_vs_im2col", "mxc", diff, "max rel diff")
    if fe is not None:
        st = cudnn_plans.plans().stats
        emit("cudnn_plans", "mxc", built=st["built"], disk=st["disk"], memory=st["memory"],
             bad_files=st["bad_files"], last_build_s=round(st.get("build_seconds", 0.0), 4))


def cudnn_plans_dir():
    from mxc.ops.cuda import cudnn_plans
    return cudnn_plans.default_dir()


if __name__ == "__main__":
    main()

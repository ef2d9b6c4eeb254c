#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (issue 11): install mxc from this checkout, run the
# GPU tests (tests/gpu, plus the fake-driver runtime tests) and the GPU benchmarks beside
# PyTorch/CuPy, and write everything under $OUT (default /tmp/mxc-gpu-check):
#   nvidia-smi.txt, install.log, env.txt, tests.log, junit.xml, example_*.log, bench_gpu.jsonl,
#   bench_gpu_layers.jsonl, bench_gpu_cudnn_{1,2}.jsonl (convolution with and without cuDNN),
#   table.md (the speed table of issues 11 and 24: mxc / PyTorch, same run, with the issue's
#   targets), summary.txt
# Usage (repository root):  bash tools/gpu_check.sh          (PYTHON=... to pick the interpreter;
#   MXC_GPU_TEST_JOBS, MXC_GPU_TEST_TIMEOUT, MXC_GPU_BENCH_TIMEOUT size the steps to a lease)
# The whole run stays under MXC_GPU_CHECK_BUDGET seconds (default 540: a 15-minute lease with
# one 10-minute command): each step's timeout is cut to what is left, the benchmarks keep
# their share, and the table is written from whatever figures came back.
# Needs: Cython, setuptools, numpy and a C compiler in that interpreter's environment (no network:
# the install uses --no-build-isolation --no-deps); CuPy and PyTorch for the DLPack tests and peers.
set -u -o pipefail
OUT=${OUT:-/tmp/mxc-gpu-check}
PY=${PYTHON:-python3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
START=$(date +%s)
BUDGET=${MXC_GPU_CHECK_BUDGET:-540}
# seconds a step may take: its own limit, cut to what is left of the budget less `reserve`
left() {  # left LIMIT RESERVE
    local rest=$(( BUDGET - ($(date +%s) - START) - $2 ))
    (( rest < 10 )) && rest=10
    (( rest < $1 )) && echo $rest || echo $1
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/nvidia-smi.txt"

# 1. install (a private target: nothing of the image changes). The GPU machines have no package
# registry and their image lacks scipy-openblas32 (mxc's host GEMMs): wheels the caller put in
# .whl/ (ignored by git, carried) are installed first, beside it.
SITE=$(mktemp -d)/site
if ls "$ROOT"/.whl/*.whl > /dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE-deps" \
        "$ROOT"/.whl/*.whl > "$OUT/wheels.log" 2>&1 || { echo "wheels FAILED"; cat "$OUT/wheels.log"; }
    export PYTHONPATH="$SITE-deps${PYTHONPATH:+:$PYTHONPATH}"
fi
export MXC_BUILD_JOBS=${MXC_BUILD_JOBS:-$(nproc)}
if ! timeout $(left 240 200) "$PY" -m pip install -q --no-build-isolation --no-deps --no-compile --target "$SITE" "$ROOT" \
        > "$OUT/install.log" 2>&1; then
    echo "install FAILED (see install.log)"; tail -40 "$OUT/install.log"; exit 1
fi
echo "install: $(( $(date +%s) - START )) s" | tee "$OUT/summary.txt"

# 2. tests, from a copy of tests/ so the installed package (not the source tree) is imported
WORK=$(mktemp -d)
cp -r "$ROOT/tests" "$WORK/"
cd "$WORK"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - > "$OUT/env.txt" 2>&1 <<'PYEOF'
import mxc, mxc.context
from mxc._core import cuda
print("mxc:", mxc.__file__)
print("cuda status:", repr(cuda.status()), "gpus:", mxc.context.num_gpus(), "driver:", cuda.driver_version())
for i in range(mxc.context.num_gpus()):
    print(i, cuda.device_name(i), mxc.context.gpu_memory_info(i))
for m in ("cupy", "torch", "cudnn"):
    try:
        mod = __import__(m); print(m, mod.__version__)
    except Exception as e:
        print(m, "missing:", e)
PYEOF
cat "$OUT/env.txt"
# the first use of each kernel compiles it (0.1-0.3 s): spread the ~1,100 tests over processes
# where pytest-xdist is there (CuPy's on-disk kernel cache is shared and written atomically)
XDIST=""
if "$PY" -c "import xdist" 2>/dev/null; then XDIST="-n ${MXC_GPU_TEST_JOBS:-8}"; fi
PTO=""   # a hung test must not eat the lease (pytest-timeout where installed)
if "$PY" -c "import pytest_timeout" 2>/dev/null; then PTO="--timeout 120"; fi
timeout $(left ${MXC_GPU_TEST_TIMEOUT:-300} 240) "$PY" -m pytest tests/gpu tests/_core/test_cuda_fake.py \
    tests/_core/test_cuda_engine.py tests/executor/test_cuda_graphs.py $XDIST -q -p no:cacheprovider -rfEs $PTO \
    --durations=15 --junitxml="$OUT/junit.xml" > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests.log")" | tee -a "$OUT/summary.txt"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -60 | tee -a "$OUT/summary.txt"
grep -c "no GPU kernel" "$OUT/tests.log" | sed 's/^/skipped for a missing GPU kernel: /' | tee -a "$OUT/summary.txt"
# the cuBLAS GEMM path (specs.gemm_plan) and the device-side index checks, on their own line: they
# only ever ran in numpy before (tests/ops/cuda/test_gemm_mapping.py)
timeout $(left 90 170) "$PY" -m pytest tests/gpu/test_gemm_cublas.py -q -p no:cacheprovider -rs \
    > "$OUT/gemm.log" 2>&1
echo "cublas gemm rc=$?: $(tail -1 "$OUT/gemm.log")" | tee -a "$OUT/summary.txt"

# the examples on the GPU (issue 24): the ResNet example on CIFAR-shaped data and the README's
# main job with --gpu; "training on gpu(0)" must be in the log (no fallback to the CPU)
timeout $(left 60 150) "$PY" "$ROOT/examples/train_resnet_cifar.py" --gpu --steps 30 \
    > "$OUT/example_resnet.log" 2>&1
echo "resnet example rc=$?: $(grep -E "samples/s|loss .* ->|no usable GPU" "$OUT/example_resnet.log" | tr '\n' ' ')" \
    | tee -a "$OUT/summary.txt"
# (needs scikit-learn and tqdm, the 'examples' extra: without them the log says so)
timeout $(left 90 120) env MXNET_ENABLE_CUDA_GRAPHS=1 "$PY" "$ROOT/examples/train_digits_gluon.py" \
    --gpu > "$OUT/example_digits.log" 2>&1
echo "digits main job (--gpu) rc=$?: $(grep -E "^training on|^epoch 12|OK|Error|no usable GPU" "$OUT/example_digits.log" | tr '\n' ' ')" \
    | tee -a "$OUT/summary.txt"

# 3. benchmarks (one JSON line per figure; mxc beside torch/cupy in the same run)
timeout $(left ${MXC_GPU_BENCH_TIMEOUT:-100} 70) "$PY" "$ROOT/tools/bench/bench_gpu.py" > "$OUT/bench_gpu.jsonl" 2>&1
echo "bench rc=$?" | tee -a "$OUT/summary.txt"
# the layers (conv, pool, norms, an MLP step, ResNet-18): those without a GPU kernel yet print
# an error line instead of a figure
timeout $(left ${MXC_GPU_BENCH_TIMEOUT:-100} 65) "$PY" "$ROOT/tools/bench/bench_gpu_layers.py" \
    > "$OUT/bench_gpu_layers.jsonl" 2>&1
echo "layer bench rc=$?" | tee -a "$OUT/summary.txt"
# convolution with and without cuDNN (cudnn_off=True: im2col + cuBLAS), twice on one fresh plan
# directory: the first run builds the plans, the second loads them from disk ("cudnn_plans" line)
PLANS=$(mktemp -d)/cudnn-plans
for n in 1 2; do
    MXC_CUDNN_PLAN_DIR="$PLANS" timeout $(left 60 5) "$PY" "$ROOT/tools/bench/bench_gpu_cudnn.py" \
        --quick > "$OUT/bench_gpu_cudnn_$n.jsonl" 2>&1
    echo "cudnn bench $n rc=$?: $(grep -h '"cudnn_plans"\|"gpu_cudnn"' "$OUT/bench_gpu_cudnn_$n.jsonl" | tr '\n' ' ')" \
        | tee -a "$OUT/summary.txt"
done
"$PY" "$ROOT/tools/bench/gpu_table.py" "$OUT/bench_gpu.jsonl" "$OUT/bench_gpu_layers.jsonl" \
    > "$OUT/table.md" 2>&1
cat "$OUT/bench_gpu_cudnn_1.jsonl" >> "$OUT/table.md" 2>/dev/null
cat "$OUT/table.md"
echo "total: $(( $(date +%s) - START )) s" | tee -a "$OUT/summary.txt"

#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (issues 11 and 24): install mxc from this checkout,
# run the GPU tests (tests/gpu, plus the fake-driver runtime tests) and the GPU benchmarks beside
# PyTorch/CuPy, and write everything under $OUT (default /tmp/mxc-gpu-check):
#   nvidia-smi.txt, install.log, env.txt, tests.log, junit.xml, bench_gpu.jsonl,
#   bench_gpu_layers.jsonl, bench_gpu_train_{cold,fp32,amp_fp16,amp_bf16}.jsonl (ResNet-18/50 training, fp32
#   and AMP; "cold" compiles the kernels and builds the cuDNN plans, the next process must find
#   them all on disk), bench_gpu_cudnn_{1,2}.jsonl (convolution with and without cuDNN),
#   example_*.log, table.md (the speed table of issues 11 and 24: mxc / PyTorch, same run, with
#   the issues' targets), summary.txt (each step's rc and seconds)
# Usage (repository root):  bash tools/gpu_check.sh [--dry-run]
#   PYTHON=... picks the interpreter; MXC_GPU_TEST_JOBS, MXC_GPU_TEST_TIMEOUT, MXC_GPU_BENCH_TIMEOUT
#   size the steps to a lease. The whole run stays under MXC_GPU_CHECK_BUDGET seconds (default
#   540: a 15-minute lease with one 10-minute command): every step runs under `timeout`, its
#   limit cut to what is left of the budget less what the later steps need (so a hang costs one
#   step, never the table), and the table is written from whatever figures came back.
# --dry-run (no GPU needed, seconds to minutes): no install (the source tree is imported), the
#   fake CUDA driver of tests/_core is built with gcc and every benchmark runs its mxc code on it
#   with no-op kernels and the tests' fake cuDNN (tools/bench/_fake_gpu.py), the GPU tests are
#   only collected, and the table is written: a typo in any step shows before a GPU is lent.
# Needs: Cython, setuptools, numpy and a C compiler in that interpreter's environment (no network:
# the install uses --no-build-isolation --no-deps); CuPy and PyTorch for the DLPack tests and peers.
set -u -o pipefail
DRY=0
[[ "${1:-}" == "--dry-run" ]] && DRY=1
OUT=${OUT:-/tmp/mxc-gpu-check$( ((DRY)) && echo -dry)}
PY=${PYTHON:-python3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
: > "$OUT/summary.txt"
START=$(date +%s)
BUDGET=${MXC_GPU_CHECK_BUDGET:-540}
# seconds a step may take: its own limit, cut to what is left of the budget less `reserve`
left() {  # left LIMIT RESERVE
    local rest=$(( BUDGET - ($(date +%s) - START) - $2 ))
    (( rest < 10 )) && rest=10
    (( rest < $1 )) && echo $rest || echo $1
}
# step NAME LIMIT RESERVE LOG CMD...: CMD under timeout, stdout+stderr to $OUT/LOG; rc and
# seconds to the summary (rc 124: the step ran out of its time)
step() {
    local name=$1 limit; limit=$(left "$2" "$3"); local log=$4; shift 4
    local t0; t0=$(date +%s)
    timeout -k 5 "$limit" "$@" > "$OUT/$log" 2>&1
    local rc=$?
    echo "$name: rc=$rc $(( $(date +%s) - t0 ))s (limit ${limit}s)" | tee -a "$OUT/summary.txt"
    return $rc
}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/nvidia-smi.txt"
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$(mktemp -d)/cupy-cache}   # fresh: the cold run compiles
PLANS=$(mktemp -d)/cudnn-plans                                     # fresh: the cold run builds

if ((DRY)); then
    # 1'. the fake driver instead of a GPU, the source tree instead of an install
    FAKE=$(mktemp -d)
    (cd "$ROOT" && "$PY" -c "from tests._core.fake_libcuda import SOURCE; print(SOURCE)") \
        > "$FAKE/fake_libcuda.c" && gcc -O1 -shared -fPIC -o "$FAKE/libcuda.so" "$FAKE/fake_libcuda.c" \
        || { echo "building the fake CUDA driver FAILED"; exit 1; }
    export MXC_LIBCUDA=$FAKE/libcuda.so MXC_BENCH_FAKE_GPU=1 MXC_BENCH_FAKE_CUDNN=1
    export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
    echo "dry run: fake driver $MXC_LIBCUDA, mxc from $ROOT" | tee -a "$OUT/summary.txt"
    SMOKE="--smoke"
else
    # 1. install (a private target: nothing of the image changes). The GPU machines have no
    # package registry and their image lacks scipy-openblas32 (mxc's host GEMMs): wheels the
    # caller put in .whl/ (ignored by git, carried) are installed first, beside it.
    SITE=$(mktemp -d)/site
    if ls "$ROOT"/.whl/*.whl > /dev/null 2>&1; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE-deps" \
            "$ROOT"/.whl/*.whl > "$OUT/wheels.log" 2>&1 || { echo "wheels FAILED"; cat "$OUT/wheels.log"; }
        export PYTHONPATH="$SITE-deps${PYTHONPATH:+:$PYTHONPATH}"
    fi
    export MXC_BUILD_JOBS=${MXC_BUILD_JOBS:-$(nproc)}
    if ! step install 240 330 install.log "$PY" -m pip install -q --no-build-isolation --no-deps \
            --no-compile --target "$SITE" "$ROOT"; then
        echo "install FAILED (see install.log)"; tail -40 "$OUT/install.log"; exit 1
    fi
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    SMOKE=""
fi

# 2. tests, from a copy of tests/ so the installed package (not the source tree) is imported
WORK=$(mktemp -d)
cp -r "$ROOT/tests" "$WORK/"
cd "$WORK"
"$PY" - > "$OUT/env.txt" 2>&1 <<'PYEOF'
import mxc, mxc.context
from mxc._core import cuda
print("mxc:", mxc.__file__)
print("cuda status:", repr(cuda.status()), "gpus:", mxc.context.num_gpus(), "driver:", cuda.driver_version())
for i in range(mxc.context.num_gpus()):
    print(i, cuda.device_name(i), mxc.context.gpu_memory_info(i))
for m in ("cupy", "torch", "torchvision", "cudnn"):
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
PTO=""   # a hung test must not eat the step (pytest-timeout where installed)
if "$PY" -c "import pytest_timeout" 2>/dev/null; then PTO="--timeout 60"; fi
if ((DRY)); then
    # the fake driver says there is a GPU: the re-run files are collected (imports checked)
    step "tests (collect only)" 120 200 tests.log "$PY" -m pytest tests/gpu --collect-only -q \
        -p no:cacheprovider
else
    step tests ${MXC_GPU_TEST_TIMEOUT:-220} 270 tests.log "$PY" -m pytest tests/gpu \
        tests/_core/test_cuda_fake.py tests/_core/test_cuda_engine.py \
        tests/executor/test_cuda_graphs.py $XDIST -q -p no:cacheprovider -rfEs $PTO \
        --durations=15 --junitxml="$OUT/junit.xml"
fi
echo "tests: $(tail -1 "$OUT/tests.log")" | tee -a "$OUT/summary.txt"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -60 | tee -a "$OUT/summary.txt"
grep -c "no GPU kernel" "$OUT/tests.log" | sed 's/^/skipped for a missing GPU kernel: /' | tee -a "$OUT/summary.txt"

# 3. benchmarks (one JSON line per figure; mxc beside torch/cupy in the same run), with the
# later steps' shares reserved: what is left at the end goes to the examples
B=${MXC_GPU_BENCH_TIMEOUT:-60}
QUICK=$( ((DRY)) && echo --quick )
step "bench runtime" "$B" 210 bench_gpu.jsonl "$PY" "$ROOT/tools/bench/bench_gpu.py" $QUICK
step "bench layers" "$B" 170 bench_gpu_layers.jsonl "$PY" "$ROOT/tools/bench/bench_gpu_layers.py" $QUICK
# training: a cold process (compiles every kernel, builds every cuDNN plan: the first-step
# figures), then the same in a second process on the same cache and plan directory (its
# process_compiles line must say 0), then AMP fp16 and bf16
export MXC_CUDNN_PLAN_DIR=$PLANS
step "train cold" 120 110 bench_gpu_train_cold.jsonl "$PY" "$ROOT/tools/bench/bench_gpu_train.py" \
    --quick $SMOKE
step "train fp32" 70 60 bench_gpu_train_fp32.jsonl "$PY" "$ROOT/tools/bench/bench_gpu_train.py" $SMOKE
# (AMP is initialised once per process: float16 and bfloat16 run in processes of their own)
step "train amp fp16" 45 60 bench_gpu_train_amp_fp16.jsonl "$PY" \
    "$ROOT/tools/bench/bench_gpu_train.py" --precision amp_fp16 $SMOKE
step "train amp bf16" 40 25 bench_gpu_train_amp_bf16.jsonl "$PY" \
    "$ROOT/tools/bench/bench_gpu_train.py" --precision amp_bf16 $SMOKE
grep -H "\"process_compiles" "$OUT"/bench_gpu_train_*.jsonl | tee -a "$OUT/summary.txt"
# convolution with and without cuDNN (cudnn_off=True: im2col + cuBLAS), twice on its own fresh
# plan directory: the second run loads the plans from disk ("cudnn_plans" line)
CPLANS=$(mktemp -d)/cudnn-plans
for n in 1 2; do
    MXC_CUDNN_PLAN_DIR="$CPLANS" step "cudnn bench $n" 45 10 "bench_gpu_cudnn_$n.jsonl" \
        "$PY" "$ROOT/tools/bench/bench_gpu_cudnn.py" --quick
    grep -h '"cudnn_plans"\|"gpu_cudnn"' "$OUT/bench_gpu_cudnn_$n.jsonl" | tee -a "$OUT/summary.txt"
done
"$PY" "$ROOT/tools/bench/gpu_table.py" "$OUT/bench_gpu.jsonl" "$OUT/bench_gpu_layers.jsonl" \
    "$OUT/bench_gpu_train_fp32.jsonl" "$OUT/bench_gpu_train_amp_fp16.jsonl" \
    "$OUT/bench_gpu_train_amp_bf16.jsonl" > "$OUT/table.md" 2>&1
{ echo; echo "cold process (kernels compiled, plans built):"
  grep -h '"process_compiles\|_first_call' "$OUT/bench_gpu_train_cold.jsonl" "$OUT/bench_gpu_cudnn_1.jsonl"
  echo; echo "cuDNN vs im2col (bench_gpu_cudnn.py, first process):"
  cat "$OUT/bench_gpu_cudnn_1.jsonl"; } >> "$OUT/table.md" 2>/dev/null
cat "$OUT/table.md"

# 4. the examples on the GPU with what is left (issue 24): the ResNet example on CIFAR-shaped
# data and the README's main job with --gpu; "training on gpu(0)" must be in the log
if ((DRY)); then
    echo "examples: skipped in a dry run (they load real kernels)" | tee -a "$OUT/summary.txt"
else
    step "resnet example" 60 0 example_resnet.log "$PY" "$ROOT/examples/train_resnet_cifar.py" \
        --gpu --steps 30
    grep -E "samples/s|loss .* ->|no usable GPU" "$OUT/example_resnet.log" | tee -a "$OUT/summary.txt"
    # (needs scikit-learn and tqdm, the 'examples' extra: without them the log says so)
    MXNET_ENABLE_CUDA_GRAPHS=1 step "digits main job (--gpu)" 90 0 example_digits.log \
        "$PY" "$ROOT/examples/train_digits_gluon.py" --gpu
    grep -E "^training on|^epoch 12|OK|Error|no usable GPU" "$OUT/example_digits.log" | tee -a "$OUT/summary.txt"
fi
echo "total: $(( $(date +%s) - START )) s" | tee -a "$OUT/summary.txt"

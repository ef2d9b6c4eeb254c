#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (issue 11): install mxc from this checkout, run the
# GPU tests (tests/gpu, plus the fake-driver runtime tests) and the GPU benchmarks beside
# PyTorch/CuPy, and write everything under $OUT (default /tmp/mxc-gpu-check):
#   nvidia-smi.txt, install.log, env.txt, tests.log, junit.xml, bench_gpu.jsonl, summary.txt
# Usage (repository root):  bash tools/gpu_check.sh          (PYTHON=... to pick the interpreter;
#   MXC_GPU_TEST_JOBS, MXC_GPU_TEST_TIMEOUT, MXC_GPU_BENCH_TIMEOUT size the steps to a lease)
# Needs: Cython, setuptools, numpy and a C compiler in that interpreter's environment (no network:
# the install uses --no-build-isolation --no-deps); CuPy and PyTorch for the DLPack tests and peers.
set -u -o pipefail
OUT=${OUT:-/tmp/mxc-gpu-check}
PY=${PYTHON:-python3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
START=$(date +%s)
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
if ! "$PY" -m pip install -q --no-build-isolation --no-deps --no-compile --target "$SITE" "$ROOT" \
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
for m in ("cupy", "torch"):
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
timeout ${MXC_GPU_TEST_TIMEOUT:-300} "$PY" -m pytest tests/gpu tests/_core/test_cuda_fake.py \
    tests/_core/test_cuda_engine.py $XDIST -q -p no:cacheprovider -rfEs --timeout 120 \
    --durations=15 --junitxml="$OUT/junit.xml" > "$OUT/tests.log" 2>&1
echo "tests rc=$?: $(tail -1 "$OUT/tests.log")" | tee -a "$OUT/summary.txt"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -60 | tee -a "$OUT/summary.txt"
grep -c "no GPU kernel" "$OUT/tests.log" | sed 's/^/skipped for a missing GPU kernel: /' | tee -a "$OUT/summary.txt"
# the cuBLAS GEMM path (specs.gemm_plan) and the device-side index checks, on their own line: they
# only ever ran in numpy before (tests/ops/cuda/test_gemm_mapping.py)
timeout 90 "$PY" -m pytest tests/gpu/test_gemm_cublas.py -q -p no:cacheprovider -rs \
    > "$OUT/gemm.log" 2>&1
echo "cublas gemm rc=$?: $(tail -1 "$OUT/gemm.log")" | tee -a "$OUT/summary.txt"

# 3. benchmarks (one JSON line per figure; mxc beside torch/cupy in the same run)
timeout ${MXC_GPU_BENCH_TIMEOUT:-150} "$PY" "$ROOT/tools/bench/bench_gpu.py" > "$OUT/bench_gpu.jsonl" 2>&1
echo "bench rc=$?" | tee -a "$OUT/summary.txt"
cat "$OUT/bench_gpu.jsonl"
echo "total: $(( $(date +%s) - START )) s" | tee -a "$OUT/summary.txt"

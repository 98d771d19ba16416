#!/usr/bin/env bash
# Issue 32 on a GPU machine (an H200: numpy 2.5, numba-cuda 0.30.4, CuPy, JAX): the full
# benchmarks/gpu_check.py (every registry case and the real-size checks on the device, then
# the timing table next to JAX, launches per call), its output in $OUT/gpu_check.log, then a
# --profile run in $OUT/gpu_profile.log. Run from the repo root:
#     OUT=/some/dir bash benchmarks/gpu_issue32_check.sh
# --reps 5 (timed calls per row, default 10) and caps of 340 s + 150 s keep it under 9 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the output directory}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export AUTODIFF_CACHE_DIR="${AUTODIFF_CACHE_DIR:-$(mktemp -d)}"
log="$OUT/gpu_check.log"
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
    python3 -c 'import sys, numpy, numba, numba_cuda
print("python", sys.version.split()[0], "| numpy", numpy.__version__,
      "(row_stack present)" if hasattr(numpy, "row_stack") else "(no row_stack)",
      "| numba", numba.__version__, "| numba-cuda", numba_cuda.__version__)' 2>&1
} | tee "$log"
timeout -k 10 340 python3 benchmarks/gpu_check.py --reps 5 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
# where the time goes: each row once more with every launch timed (grid, block, ms) and
# the host remainder (correctness already checked above)
timeout -k 10 150 python3 benchmarks/gpu_check.py --reps 2 --skip-correctness --profile \
    > "$OUT/gpu_profile.log" 2>&1 || echo "profile run: exit $?" | tee -a "$log"
echo "gpu_check exit status: $rc (0: all agree; 1: a correctness check failed; 124: cut at 340 s)" | tee -a "$log"
# WITH_MLIR=1: the same check with numba-cuda-mlir compiling every kernel (its C++
# launcher; docs/cuda.md "The compiler"), in $OUT/gpu_check_mlir.log
if [ "${WITH_MLIR:-0}" = 1 ] && python3 -c 'import numba_cuda_mlir' 2>/dev/null; then
    AUTODIFF_CUDA_COMPILER=numba-cuda-mlir timeout -k 10 340 python3 benchmarks/gpu_check.py \
        --reps 5 > "$OUT/gpu_check_mlir.log" 2>&1 || echo "mlir run: exit $?" | tee -a "$log"
fi
exit "$rc"

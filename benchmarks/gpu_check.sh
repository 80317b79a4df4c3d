#!/usr/bin/env bash
# The GPU checks, run on the accelerator machine from the repository root, in stages that each fit
# one call: bash benchmarks/gpu_check.sh OUTDIR STAGE...
#   tests   the GPU tests (tests/test_gpu.py), every workload x GPU backend, mixed sweeps included
#   mixed   benchmarks/mixed_vs_alone.py: crossover sweep and bandwidth table, mixed against alone
#   bench   benchmarks/gpu_bench.py and the crossover sweep of the earlier docs
#   shots   screenshots of the window after GPU sweeps (needs Qt: gpu-stage qt or all)
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; shift; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
GPU_ALL=numpy,numba,cupy,cupy-fused,cupy-raw,numba-cuda,numba-cuda-x4
for stage in "$@"; do
  case $stage in
    tests)
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/nvidia-smi.txt"
      python3 -m workbench list > "$OUT/list.txt" 2>&1; head -12 "$OUT/list.txt"
      python3 -m pytest -m gpu tests/test_gpu.py -q -rs -p no:cacheprovider --durations=15 \
          > "$OUT/pytest-gpu.txt" 2>&1; echo "pytest exit $?"; tail -40 "$OUT/pytest-gpu.txt" ;;
    mixed)
      python3 benchmarks/mixed_vs_alone.py "$OUT" > "$OUT/mixed_vs_alone.log" 2>&1; echo "mixed exit $?"
      grep -E "^- |Verdict|largest|Device-to" "$OUT/mixed_vs_alone.log"; tail -3 "$OUT/mixed_vs_alone.log" ;;
    bench)
      python3 benchmarks/gpu_bench.py "$OUT" > "$OUT/gpu_bench.log" 2>&1; echo "gpu_bench exit $?"
      grep -E "^\| " "$OUT/gpu_bench.md" | grep -v -- "---" | tail -70 ;;
    shots)
      python3 benchmarks/screenshot.py "$OUT/screenshot-h200.png" source_terms $GPU_ALL 2^10 2^26 9 \
          > "$OUT/screenshot.log" 2>&1; echo "screenshot exit $?"; tail -5 "$OUT/screenshot.log" ;;
  esac
done

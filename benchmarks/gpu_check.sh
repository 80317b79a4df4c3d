#!/usr/bin/env bash
# Everything the GPU issue asks to run on the accelerator machine, in one go.
# Usage there (repo root): bash benchmarks/gpu_check.sh "$OUT"
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/nvidia-smi.txt"
python3 -m workbench list 2>&1 | tee "$OUT/list.txt"
python3 -m pytest -m gpu tests/test_gpu.py -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/pytest-gpu.txt" | tail -25
python3 benchmarks/gpu_bench.py "$OUT" > "$OUT/gpu_bench.log" 2>&1; echo "gpu_bench exit $?"
python3 -m workbench run -w source_terms -b numpy,numba,cupy,numba-cuda -s 2^10:2^26 -d float32 -q \
    -o "$OUT/crossover.csv" > "$OUT/crossover.txt" 2>&1; echo "sweep exit $?"
python3 benchmarks/crossover.py "$OUT/crossover.csv" >> "$OUT/crossover.txt" 2>&1
tail -30 "$OUT/crossover.txt"
grep -E "^\| " "$OUT/gpu_bench.md" | grep -v -- "---" | tail -70

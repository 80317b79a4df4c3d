#!/usr/bin/env bash
# Issue 35 on the accelerator machine, in one call (wheels staged by benchmarks/gpu_stage.sh all
# cupti, installed in /tmp/gpu-site): the energy sweep of the issue with each figure beside its own
# draw, the cuDF memory test, then the whole `pytest -m gpu`.   bash benchmarks/gpu_issue35.sh OUTDIR
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}"
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv,noheader | tee "$OUT/nvidia-smi.txt"
timeout 300 python3 -m workbench run -w source_terms -b numpy,cupy-fused,cupy-raw,numba-cuda -s 2^22,2^26 \
    --energy --budget 0.3 --out "$OUT/energy.json" --force > "$OUT/energy.txt" 2>&1; echo "energy sweep exit $?"
python3 benchmarks/energy_table.py "$OUT/energy.json" | tee "$OUT/energy-table.md"
timeout 240 python3 -m pytest -m gpu tests/test_memory_truth.py tests/test_energy_truth.py -v -rs -p no:cacheprovider \
    > "$OUT/pytest-memory-energy.txt" 2>&1; echo "memory and energy pytest exit $?"
grep -E "^(FAILED|ERROR)|PASSED|passed|failed" "$OUT/pytest-memory-energy.txt" | tail -12
timeout "${GPU_PYTEST_TIMEOUT:-500}" python3 -m pytest -m gpu -rs -p no:cacheprovider --durations=15 \
    > "$OUT/pytest-gpu-all.txt" 2>&1; echo "pytest -m gpu exit $?"
grep -E "^(FAILED|ERROR)" "$OUT/pytest-gpu-all.txt" | head -20; tail -1 "$OUT/pytest-gpu-all.txt"

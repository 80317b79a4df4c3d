#!/usr/bin/env bash
# Every GPU test in two calls of under ten minutes (wheels staged and installed as for
# benchmarks/gpu_issue37.sh):   bash benchmarks/gpu_all_tests.sh OUTDIR 1|2
#   1  the first half of tests/test_gpu.py and tests/test_gpu_cudf.py (sliced together, in that order, by
#      benchmarks/gpu_check.sh), then every GPU test of the other files
#   2  the second half of those two, then issue 35's energy sweep and its table
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; HALF=${2:-1}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}" QT_QPA_PLATFORM=offscreen
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
PART=$HALF/2 STAGE_TIMEOUT=${STAGE_TIMEOUT:-320} bash benchmarks/gpu_check.sh "$OUT" tests
if [ "$HALF" = 1 ]; then
  timeout 230 python3 -m pytest -m gpu tests/ --ignore=tests/test_gpu.py --ignore=tests/test_gpu_cudf.py \
      --ignore=tests/test_overlap_gpu.py \
      -rs -p no:cacheprovider --durations=10 > "$OUT/pytest-gpu-others.txt" 2>&1; echo "other GPU tests exit $?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest-gpu-others.txt" | tail -15
else
  timeout 200 python3 -m workbench run -w source_terms -b numpy,cupy-fused,cupy-raw,numba-cuda -s 2^22,2^26 \
      --energy --budget 0.3 --out "$OUT/energy.json" --force > "$OUT/energy.txt" 2>&1; echo "energy sweep exit $?"
  python3 benchmarks/energy_table.py "$OUT/energy.json" | tee "$OUT/energy-table.md"
fi

#!/usr/bin/env bash
# After the tree was split into layers (issue 19): the GPU paths that moved, in one call on the
# accelerator machine (wheels staged by ../shared/tools/gpu-stage all dask, installed in /tmp/gpu-site):
# supervised command-line sweeps (CuPy, Numba CUDA, cuDF, cudf.pandas: the preparation that now
# returns the reference converter), the driver asked in a child process, and the GPU tests of the
# engine, the memory cap, cuDF, the pipeline and the cluster.   bash benchmarks/gpu_layers_check.sh OUTDIR
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}"
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
T=${STAGE_TIMEOUT:-420}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/nvidia-smi.txt"
python3 -m workbench list > "$OUT/list.txt" 2>&1; echo "list exit $?"; grep -E "usable|not" "$OUT/list.txt" | head -14
python3 -c "from workbench.core import driver; import sys; a = driver.ask(); print('ask:', a.device_count, a.cuda_version, a.pci_bus_ids, a.error or 'ok')"
for sweep in "source_terms numpy,cupy,cupy-fused,numba-cuda 2^16,2^22" "groupby pandas,cudf,cudf-pandas 100000,1000000"; do
  set -- $sweep
  timeout 240 python3 -m workbench run -w "$1" -b "$2" -s "$3" --budget 0.1 --out "$OUT/$1.csv" --force > "$OUT/$1.txt" 2>&1
  echo "run $1: exit $? $(grep -c ',ok,' "$OUT/$1.csv" 2>/dev/null) ok rows; $(grep -ciE ',(error|cancelled),' "$OUT/$1.csv" 2>/dev/null) not ok"
done
K="(gpu_point_is_verified and (source_terms or matmul or transfer or groupby or pipeline)) or worker_thread or availability"
K="$K or device_memory_is_read or first_call_carries or broken_library or sweeps_in_the_long_lived or device_limits"
K="$K or free_device_memory or cudf_point_is_verified or runs_into_the_cap or with_pandas_cudf_and_cudf_pandas"
K="$K or pipeline_gpu_is_verified or memory_wall_moves or cluster"
timeout "$T" python3 -m pytest -m gpu tests/test_gpu.py tests/test_gpu_cudf.py tests/test_cluster.py -k "$K" -v -rs \
    -p no:cacheprovider --durations=10 > "$OUT/pytest-gpu.txt" 2>&1; echo "pytest exit $?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest-gpu.txt" | tail -20
# Issues 27, 28 and 29: device memory is each point's allocations in any order of sizes; a CuPy result of the wrong dtype is wrong; plain CuPy launches several kernels a call, fused one.
timeout 300 python3 -m pytest -m gpu tests/test_memory_truth.py tests/test_wrong_results.py tests/test_threads_energy.py -v -rs -p no:cacheprovider > "$OUT/pytest-memory.txt" 2>&1
echo "memory pytest exit $?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest-memory.txt" | tail -5

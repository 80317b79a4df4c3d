#!/usr/bin/env bash
# One call on a two-GPU machine (device kind nvidia-h200-x2, wheels staged by gpu-stage all dask,
# installed in /tmp/gpu-site): the multi-GPU scaling curves (dask-cudf group-by and merge, a
# dask.array reduction of CuPy chunks; strong and weak, N = 1 and 2), the dask.dataframe baseline on
# CPU workers, and the window's screenshots after GPU sweeps (the CPU baseline with WITH_CPU=1).     bash benchmarks/gpu_x2_session.sh OUTDIR
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}" QT_QPA_PLATFORM=offscreen
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
nvidia-smi -L | tee "$OUT/gpus.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
t0=$SECONDS
timeout ${SCREENS_TIMEOUT:-200} bash benchmarks/gpu_screens.sh "$OUT/screens" > "$OUT/screens.log" 2>&1
echo "screens exit $? in $((SECONDS - t0)) s: $(ls "$OUT/screens" | grep -c png) png"
t0=$SECONDS
timeout ${SCALING_TIMEOUT:-260} python3 benchmarks/cluster_scaling.py --gpus 1,2 --rows 2^26 --check-rows 2^27 --repeats 5 \
    --out "$OUT/scaling-gpu.json" > "$OUT/scaling-gpu.txt" 2> "$OUT/scaling-gpu.err"
echo "scaling-gpu exit $? in $((SECONDS - t0)) s"; cat "$OUT/scaling-gpu.txt"; grep "^{" "$OUT/scaling-gpu.err" | tail -12; t0=$SECONDS
[ "${WITH_CPU:-0}" = 1 ] || exit 0
timeout 120 python3 benchmarks/cluster_scaling.py --cpu --cpus 1,2,4,8 --rows 2^22 --check-rows 2^26 --repeats 3 \
    --out "$OUT/scaling-cpu.json" > "$OUT/scaling-cpu.txt" 2> "$OUT/scaling-cpu.err"
echo "scaling-cpu exit $? in $((SECONDS - t0)) s"; cat "$OUT/scaling-cpu.txt"; t0=$SECONDS

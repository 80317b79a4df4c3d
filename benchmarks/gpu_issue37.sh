#!/usr/bin/env bash
# Issue 37 on the accelerator machine, in one call (wheels staged by benchmarks/gpu_stage.sh all cupti,
# installed in /tmp/gpu-site): the GPU tests of the overlap workload and the timeline, the overlap
# table sweep, the lesson, a sequential and a 4-stream timeline exported (PNG and Chrome trace), and
# the probe of CUPTI's record costs.     bash benchmarks/gpu_issue37.sh OUTDIR
# Everything is written under a folder of its own and packed into OUTDIR/issue37.tgz at the end: a
# device call brings back at most 8 files (the first run lost its test log and timelines to that).
set -uo pipefail
DEST=${1:-/tmp/gpu-out}; mkdir -p "$DEST"
OUT=/tmp/issue37; rm -rf "$OUT"; mkdir -p "$OUT"
trap 'tar -czf "$DEST/issue37.tgz" -C /tmp issue37' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}" QT_QPA_PLATFORM=offscreen
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/nvidia-smi.txt"
timeout 240 python3 -m pytest -m gpu tests/test_overlap_gpu.py -v -rs -p no:cacheprovider > "$OUT/pytest-overlap.txt" 2>&1
echo "overlap gpu tests exit $?"; grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" "$OUT/pytest-overlap.txt" | tail -14
timeout 200 python3 -m workbench run -w overlap -b cupy,numba-cuda -s 2^20:2^26:x4 -d float32 --budget 0.2 \
    --out "$OUT/overlap.json" --force > "$OUT/overlap-run.txt" 2>&1; echo "overlap sweep exit $?"
python3 benchmarks/overlap_table.py "$OUT/overlap.json" > "$OUT/overlap-table.md" 2>&1; tail -45 "$OUT/overlap-table.md"
for p in "cupy@2^26:pinned sequential" "cupy@2^26:pinned 4 streams" "numba-cuda@2^26:pinned 4 streams"; do
  n=$(echo "$p" | tr ' @:^' '____')
  python3 -m workbench plot "$OUT/overlap.json" --kind timeline --point "$p" --chart "$OUT/timeline-$n.json" > /dev/null
  python3 -m workbench plot "$OUT/overlap.json" --kind timeline --point "$p" --chart "$OUT/timeline-$n.png" > /dev/null
done
ls "$OUT"/timeline-* | head
timeout 120 python3 -m workbench lesson hide-transfers --out "$OUT/lesson.json" > "$OUT/lesson.txt" 2>&1
echo "lesson exit $?"; cat "$OUT/lesson.txt" | head -30
timeout 100 python3 benchmarks/gpu_issue37_probe.py "$OUT" > "$OUT/probe.txt" 2>&1; echo "probe exit $?"
tail -8 "$OUT/probe.txt"

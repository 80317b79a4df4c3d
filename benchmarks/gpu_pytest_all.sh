#!/usr/bin/env bash
# The whole `pytest -m gpu` in four device calls of under ten minutes each, from the repository root on
# the accelerator machine (wheels staged by `bash benchmarks/gpu_stage.sh all dask cupti` and installed
# in /tmp/gpu-site):      bash benchmarks/gpu_pytest_all.sh OUTDIR a|b|c|d|focus
#   a  the first half of tests/test_gpu.py and test_gpu_cudf.py (sliced together by gpu_check.sh), then
#      the timeline and ladder tests ($FIRST)
#   b  the third quarter of tests/test_gpu.py        c  its last quarter
#   d  every GPU test of the other files
#   focus  the tests that failed on 2026-12-07 and the ladder's, then what time is left of the third quarter
# The halves of benchmarks/gpu_all_tests.sh ran past one call's limit (31 tests of the second half were
# cut on 2026-12-06), so the heavier second half is split in two. Each step's logs are packed into
# OUTDIR/STEP.tgz: a call brings back at most 8 files.
set -uo pipefail
DEST=${1:-/tmp/gpu-out}; STEP=${2:-a}; mkdir -p "$DEST"
OUT=/tmp/gpu-$STEP; rm -rf "$OUT"; mkdir -p "$OUT"
trap 'tar -czf "$DEST/$STEP.tgz" -C /tmp "gpu-$STEP"' EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/gpu-site:$PWD:${PYTHONPATH:-}" QT_QPA_PLATFORM=offscreen
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
git log --oneline -1 2>/dev/null | tee "$OUT/commit.txt"
FIRST="tests/test_overlap_gpu.py tests/test_gpu_stream.py"
case $STEP in
  a) # quarters, not a half: ceil(n/2) and ceil(n/4) slice bounds differ, and a half would skip a test
     PART=1/4 STAGE_TIMEOUT=120 bash benchmarks/gpu_check.sh "$OUT" tests
     PART=2/4 STAGE_TIMEOUT=120 bash benchmarks/gpu_check.sh "$OUT" tests
     # The timeline and ladder tests alone, with short tracebacks: cut by the old 320 s limit of all
     # the other files together, their failures on 2026-12-07 came back without assertion text.
     timeout 240 python3 -m pytest -m gpu $FIRST -v -rfs --tb=short -p no:cacheprovider \
         > "$OUT/pytest-gpu-timeline.txt" 2>&1; echo "timeline and ladder GPU tests exit $?"
     grep -E "^(FAILED|ERROR)|^E |passed|failed" "$OUT/pytest-gpu-timeline.txt" | tail -30 ;;
  d) # every GPU test of the other files (a call of its own: they took over 320 s on the H100)
     timeout 540 python3 -m pytest -m gpu tests/ --ignore=tests/test_gpu.py --ignore=tests/test_gpu_cudf.py \
         $(for f in $FIRST; do echo --ignore=$f; done) -v -rfs --tb=short -p no:cacheprovider \
         --durations=10 > "$OUT/pytest-gpu-others.txt" 2>&1; echo "other GPU tests exit $?"
     grep -E "^(FAILED|ERROR)|^E |passed|failed" "$OUT/pytest-gpu-others.txt" | tail -30 ;;
  focus) # where little device time is left: what failed on the H100 on 2026-12-07 (the mixed sweeps
     # past L2's ceiling, the timeline copy sums) with the ladder's own test, then the third quarter
     # (the ladder's test first, then the mixed sweeps, then the timeline: the order to cut from)
     timeout $(( ${FOCUS_S:-570} < 300 ? ${FOCUS_S:-570} - 20 : 300 )) python3 -m pytest -m gpu \
         tests/test_gpu_stream.py tests/test_gpu.py tests/test_overlap_gpu.py -k "stream or overlap_gpu or \
         (in_one_sweep_measures_as_alone and (source_terms or flux))" -v -rfs --tb=short -p no:cacheprovider \
         > "$OUT/pytest-gpu-focus.txt" 2>&1; echo "focused GPU tests exit $?"
     grep -E "^(FAILED|ERROR)|^E |passed|failed" "$OUT/pytest-gpu-focus.txt" | tail -40
     left=$(( ${FOCUS_S:-570} - SECONDS ))
     [ $left -gt 30 ] && PART=3/4 STAGE_TIMEOUT=$left bash benchmarks/gpu_check.sh "$OUT" tests ;;
  b) PART=3/4 STAGE_TIMEOUT=440 bash benchmarks/gpu_check.sh "$OUT" tests ;;
  c) PART=4/4 STAGE_TIMEOUT=440 bash benchmarks/gpu_check.sh "$OUT" tests ;;
esac

#!/usr/bin/env bash
# The window screenshots issue 8 asks of the GPU machine, all into one folder: after a
# source_terms sweep with every GPU backend, and after a groupby sweep with cuDF; each at
# 1920x1080 and 1280x720, normal and presentation mode, light and dark (16 PNGs + charts).
# Usage there (repo root, the cuda12/cuda13 extra installed): bash benchmarks/gpu_screens.sh OUTDIR
set -euo pipefail
OUT=${1:-/tmp/gpu-screens}; mkdir -p "$OUT"
export QT_QPA_PLATFORM=offscreen PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
$PY benchmarks/screenshot.py "$OUT" source_terms numpy,numba,cupy,cupy-fused,cupy-raw,numba-cuda,numba-cuda-x4 \
    2^10 2^26 9 --prefix gpu-source_terms --budget 0.05 2>&1 | grep -v propagateSizeHints | tee "$OUT/source_terms.log"
$PY benchmarks/screenshot.py "$OUT" groupby pandas,cudf 10,000 10,000,000 4 --prefix gpu-groupby --budget 0.1 \
    2>&1 | grep -v propagateSizeHints | tee "$OUT/groupby.log"
ls -l "$OUT"

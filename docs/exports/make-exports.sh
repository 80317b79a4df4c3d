#!/usr/bin/env bash
# Remakes every file in docs/exports from the result files beside it and docs/h200/crossover.csv.
# The two source_terms sweeps were measured on the CPU-only development machine with:
#   gpu-workbench run -w source_terms -b numpy,numba -s 2^10:2^22:x4 -d float32 -r 5 --budget 0.1 \
#                     -o source_terms-float32.csv        (and the same with -d float64)
set -euo pipefail
cd "$(dirname "$0")"
W=${GPU_WORKBENCH:-../../.venv/bin/gpu-workbench}
CPU=source_terms-float32.csv
rm -f ./*.png ./*.svg ./*.pdf ./*.html
$W plot $CPU --chart slide.png                                   # every chart, 1920x1080
$W plot $CPU --chart slide.pdf                                   # every chart, one page each
$W plot $CPU --chart slide-runtime.svg --kind runtime
$W plot $CPU --chart 4k-speedup.png --kind speedup --preset 4k   # 3840x2160
$W plot $CPU --chart paper.svg --preset paper                    # every chart, 3.5 in wide
$W plot $CPU --chart paper.pdf --preset paper
$W plot $CPU --chart paper-runtime.png --kind runtime --preset paper
$W plot $CPU source_terms-float64.csv --chart compare-float32-float64.png
$W plot $CPU source_terms-float64.csv --chart compare-speedup-over-float64-numpy.svg --kind speedup --baseline numpy@2
$W plot ../h200/crossover.csv --chart h200-transfer.png --kind transfer
$W plot ../h200/crossover.csv --chart h200-runtime-paper.svg --kind runtime --preset paper
$W report $CPU source_terms-float64.csv --out report.html
$W report ../h200/crossover.csv --out h200-report.html
$W report $CPU --out report.pdf

#!/usr/bin/env bash
# ../shared/tools/gpu-stage with parts of 44 MiB instead of 60: a call carries the working tree and
# one part within 64 MiB, and this project's tracked files (docs/screens, docs/exports) are about
# 15 MiB, so a 60 MiB part no longer fits ("the working tree is larger than 64 MiB").
#   bash benchmarks/gpu_stage.sh all dask nvbench cupti     (then make the calls it prints)
set -euo pipefail
TOOL=${GPU_STAGE:-../shared/tools/gpu-stage}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
sed 's/^PART = 60 \* 2\*\*20/PART = 44 * 2**20/' "$TOOL" > "$tmp"
python3 "$tmp" "$@"

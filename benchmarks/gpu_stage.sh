#!/usr/bin/env bash
# ../shared/tools/gpu-stage with parts that fit beside the working tree: a call carries the tree and
# one part within 64 MiB, and this project's tracked files (docs/screens, docs/exports) grow (15 MiB
# when 60 MiB parts stopped fitting, 20 MiB when 44 MiB ones did, on 2026-12-07), so the part is
# what is left of 62 MiB after them, in whole MiB (STAGE_PART_MIB overrides).
#   bash benchmarks/gpu_stage.sh all dask nvbench cupti     (then make the calls it prints)
set -euo pipefail
TOOL=${GPU_STAGE:-../shared/tools/gpu-stage}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
mib=${STAGE_PART_MIB:-$(( 62 - (tree + 2**20 - 1) / 2**20 ))}
echo "parts of $mib MiB (tracked files: $(( tree / 2**20 )) MiB)"
sed "s/^PART = 60 \* 2\*\*20/PART = $mib * 2**20/" "$TOOL" > "$tmp"
python3 "$tmp" "$@"

#!/usr/bin/env bash
# The cluster checks on a GPU machine, in one command (issue 20), from the repository root:
#
#   bash benchmarks/cluster_gpu_check.sh OUTDIR
#
# On the accelerator machine, after ../shared/tools/gpu-stage cudf numpy dask (its install step puts
# the wheels in /tmp/gpu-site). It starts a `dask scheduler` and a `dask cuda worker` as processes
# (one worker per GPU, as a lab starts them), then:
#   1. the gpu-marked cluster tests (a LocalCUDACluster sweep: one point per GPU, rows on GPUn);
#   2. a CuPy + Numba CUDA source_terms sweep and a cuDF groupby sweep, each run here and through the
#      cluster, compared point by point (`gpu-workbench compare`: medians within the noise or not);
#   3. --devices all: each GPU its own series;
#   4. dask-cudf group-by on one GPU against cuDF alone, by size (the cost of the Dask layer);
#   5. the scaling curves over every GPU here (1 on the H200 machine; unchanged on 8).
# Every log goes under OUTDIR; a short table is printed last.
set -uo pipefail
OUT=${1:-/tmp/cluster-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD:/tmp/gpu-site:${PYTHONPATH:-}"
[ -f /tmp/gpu-env.sh ] && source /tmp/gpu-env.sh
PY=python3
PORT=${PORT:-8786}
ADDR=tcp://127.0.0.1:$PORT
T=${STEP_TIMEOUT:-150}

nvidia-smi --query-gpu=index,name,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1
$PY -c "import dask, distributed, dask_cuda; print('dask', dask.__version__, 'distributed', distributed.__version__, 'dask-cuda', dask_cuda.__version__)" > "$OUT/versions.txt" 2>&1

$PY -m dask scheduler --host 127.0.0.1 --port "$PORT" --no-dashboard > "$OUT/scheduler.log" 2>&1 &
SCHED=$!
$PY -m dask cuda worker "$ADDR" --host 127.0.0.1 --no-dashboard > "$OUT/worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER $SCHED 2>/dev/null; wait 2>/dev/null' EXIT
$PY - "$ADDR" > "$OUT/ready.txt" 2>&1 <<'EOF'
import sys, time
from distributed import Client
deadline = time.monotonic() + 120
while True:
    try:
        with Client(sys.argv[1], timeout=5) as c:
            c.wait_for_workers(1, timeout=max(1, deadline - time.monotonic()))
            print("workers:", {a: w.get("name") for a, w in c.scheduler_info()["workers"].items()})
            break
    except OSError:
        if time.monotonic() > deadline:
            raise
EOF
cat "$OUT/ready.txt"

# 1. The gpu-marked cluster tests.
timeout "$T" $PY -m pytest -m gpu tests/test_cluster.py -rs -q -p no:cacheprovider -o addopts="" \
    > "$OUT/tests.txt" 2>&1; echo "tests: $(tail -1 "$OUT/tests.txt")"
grep -q " passed" "$OUT/tests.txt" && ! grep -qE "failed|error" <(tail -1 "$OUT/tests.txt") || tail -40 "$OUT/tests.txt"

# 2. The same sweeps here and through the cluster.
sweep() {   # NAME ARGS...
  local name=$1; shift
  timeout "$T" $PY -m workbench run "$@" -q --out "$OUT/here-$name.json" --force > "$OUT/here-$name.txt" 2>&1
  timeout "$T" $PY -m workbench run "$@" -q --cluster "$ADDR" --out "$OUT/cluster-$name.json" --force \
      > "$OUT/cluster-$name.txt" 2>&1
  $PY -m workbench compare "$OUT/here-$name.json" "$OUT/cluster-$name.json" > "$OUT/compare-$name.txt" 2>&1
  $PY -m workbench compare "$OUT/here-$name.json" "$OUT/cluster-$name.json" --figure compute \
      > "$OUT/compare-$name-compute.txt" 2>&1
  echo "$name: $(tail -1 "$OUT/compare-$name.txt") (end-to-end); $(tail -1 "$OUT/compare-$name-compute.txt") (compute)"
}
sweep gpu-kernels -w source_terms -b cupy,numba-cuda -s 2^18:2^24:x4 --budget 0.5
sweep cudf -w groupby -b cudf -s 2^18:2^24:x4 --budget 0.5

# 3. Each GPU its own series.
timeout "$T" $PY -m workbench run -w source_terms -b cupy -s 2^20 --budget 0.2 -q --cluster "$ADDR" --devices all \
    --out "$OUT/devices-all.json" --force > "$OUT/devices-all.txt" 2>&1
echo "devices all: $(grep -o 'cupy @ [^ ]*' "$OUT/devices-all.txt" | sort -u | tr '\n' ' ')"

kill $WORKER $SCHED 2>/dev/null; wait 2>/dev/null; trap - EXIT

# 4. The Dask layer's cost on one GPU, 5. the scaling curves.
timeout "$T" $PY benchmarks/cluster_scaling.py --overhead --sizes 2^16,2^20,2^24,2^26 --repeats 7 \
    --out "$OUT/overhead.json" > "$OUT/overhead.txt" 2> "$OUT/overhead.log"
timeout "$T" $PY benchmarks/cluster_scaling.py --rows 2^22 --cpus 1,4 --repeats 3 \
    --out "$OUT/scaling.json" > "$OUT/scaling.txt" 2> "$OUT/scaling.log"

# The short table.
echo
echo "== through the cluster against here (gpu-workbench compare, end-to-end) =="
for n in gpu-kernels cudf; do
  $PY - "$OUT/compare-$n.txt" "$OUT/compare-$n-compute.txt" <<'EOF'
import re, sys
for path in sys.argv[1:]:
    text = open(path).read().splitlines()
    rows = [l for l in text if re.search(r"\b(same|undecided|faster|slower)\b", l) and "verdict" not in l][:-1]
    for l in rows:
        print("  " + " ".join(l.split()))
    print("  " + (text[-1] if text else "(no output)"), "<-", path.rsplit("/", 1)[-1])
EOF
done
echo "== dask-cudf on one GPU against cuDF alone =="; cat "$OUT/overhead.txt"
echo "== scaling over the GPUs here =="; cat "$OUT/scaling.txt"
# The device tool returns a few files only: every log in one archive too.
(cd "$OUT" && tar czf "$OUT.tgz" . && mv "$OUT.tgz" "$OUT/all-logs.tgz")

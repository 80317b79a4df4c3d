#!/usr/bin/env bash
# The GPU checks, run on the accelerator machine from the repository root, in stages that each fit
# one call: bash benchmarks/gpu_check.sh OUTDIR STAGE...   (each stage has its own time limit, so one
# that runs long cannot take the others' time; every log goes under OUTDIR)
#   tests   the GPU tests ($GPU_TESTS: tests/test_gpu.py, then tests/test_gpu_cudf.py): every workload x
#           GPU backend, mixed sweeps, spmv, memory wall, cuDF, pipeline
#           (PART=i/n: the i-th of n slices, for calls of at most 10 minutes; STAGE_TIMEOUT=s its limit)
#   faults  a CuPy point out of device memory and a Numba CUDA out-of-bounds write, each followed by a
#           normal point, through the command line and through the window (needs Qt)
#   mixed   benchmarks/mixed_vs_alone.py: crossover sweep and bandwidth table, mixed against alone
#   shots   the window after source_terms with every GPU backend and groupby with cuDF (needs Qt)
#   sweeps  float32 and float64 source_terms sweeps for the exports (a comparison chart, a report)
#   bench   benchmarks/gpu_bench.py
#   wall    the memory-wall and cudf-pandas GPU tests (issue 11)
#   lessons every lesson once, each written to OUTDIR/lessons/NAME.csv (charts are drawn from them
#           on a machine with matplotlib: gpu-workbench plot OUTDIR/lessons/NAME.csv --chart ...)
#           (LESSONS="a b" runs only those, so that the nine can be split over two calls)
#   figs    spmv (float64, 2-D and 3-D, every backend) and pipeline (float32, every stack) sweeps
#   layers  Numba's CPU threading layers: which load, and a source_terms numba sweep under each (a
#           tbb wheel in $TBB_WHEEL, if given, is tried too)
#   rest    what mixed left on 2026-12-03: the stencil float64 table, then the crossover section
#   settle  the two bandwidth tables with rows past 5 % on 2026-12-03, over ROUNDS (default 4) rounds
#   verdicts (issue 17) the workbench beside nvbench (cuda-bench) on the same kernels; a GPU sweep with
#           its warm, cold and call figures; the A/A plug-in on this host's CPU, idle and loaded
set -uo pipefail
OUT=${1:-/tmp/gpu-out}; shift; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
T=${STAGE_TIMEOUT:-400}
# The files of the GPU tests, in this order: the second loads cuDF, which takes over CuPy's and Numba's
# allocators for the rest of the process. benchmarks/gpu_all_tests.sh leaves them out of its other files.
GPU_TESTS="tests/test_gpu.py tests/test_gpu_cudf.py"
for stage in "$@"; do
  start=$SECONDS
  case $stage in
    tests)
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/nvidia-smi.txt"
      python3 -m workbench list > "$OUT/list.txt" 2>&1; head -14 "$OUT/list.txt"
      # PART=i/n runs the i-th of n equal slices of the GPU tests (in collection order), so that
      # the whole set fits calls of at most 10 minutes each; -v names each test as it ends, so a
      # slice cut short by its time limit still says which passed.
      python3 -m pytest -m gpu $GPU_TESTS --collect-only -q -p no:cacheprovider 2>/dev/null \
          | grep '::' > "$OUT/gpu-test-ids.txt"
      IFS=/ read -r i n <<< "${PART:-1/1}"; total=$(wc -l < "$OUT/gpu-test-ids.txt"); per=$(( (total + n - 1) / n ))
      sed -n "$(( (i - 1) * per + 1 )),$(( i * per ))p" "$OUT/gpu-test-ids.txt" > "$OUT/gpu-test-part.txt"
      echo "GPU tests: part $i of $n, $(wc -l < "$OUT/gpu-test-part.txt") of $total"
      timeout "$T" python3 -m pytest -m gpu -v -rs -p no:cacheprovider --durations=15 $(cat "$OUT/gpu-test-part.txt") \
          > "$OUT/pytest-gpu-$i.txt" 2>&1; echo "pytest exit $?"
      grep -E "passed|failed|FAILED|^ERROR" "$OUT/pytest-gpu-$i.txt" | grep -v " PASSED" | tail -25
      grep -c " PASSED" "$OUT/pytest-gpu-$i.txt" ;;
    faults)
      timeout 60 python3 -m workbench --plugin benchmarks/faults_plugin.py run -w faults -b cupy,numba-cuda \
          -s 1,2,3,4,5 -q > "$OUT/faults-cli.txt" 2>&1; echo "faults cli exit $?"; tail -14 "$OUT/faults-cli.txt"
      QT_QPA_PLATFORM=offscreen timeout 90 python3 benchmarks/faults_window.py "$OUT/faults-window.png" \
          > "$OUT/faults-window.txt" 2>&1; echo "faults window exit $?"; grep -v propagateSize "$OUT/faults-window.txt" | tail -14 ;;
    mixed)
      timeout "$T" python3 benchmarks/mixed_vs_alone.py "$OUT" > "$OUT/mixed_vs_alone.log" 2>&1; echo "mixed exit $?"
      grep -E "^- |largest difference|rounds done" "$OUT/mixed_vs_alone.log" | tail -24 ;;
    shots)
      STAGE=1 timeout "$T" bash benchmarks/gpu_screens.sh "$OUT/screens" > "$OUT/screens.log" 2>&1; echo "shots exit $?"
      grep -E "saved|left out|not usable|Error|error" "$OUT/screens.log" | head -12 ;;
    sweeps)
      for dt in float32 float64; do
        timeout 120 python3 -m workbench run -w source_terms -b numpy,numba,cupy,cupy-fused,cupy-raw,numba-cuda,numba-cuda-x4 \
            -s 2^10:2^26:x4 -d $dt -q -o "$OUT/source_terms-gpu-$dt.csv" > "$OUT/sweep-$dt.txt" 2>&1
        echo "sweep $dt exit $?"; tail -3 "$OUT/sweep-$dt.txt"
      done ;;
    bench)
      timeout "$T" python3 benchmarks/gpu_bench.py "$OUT" > "$OUT/gpu_bench.log" 2>&1; echo "gpu_bench exit $?" ;;
    wall)
      timeout "$T" python3 -m pytest -m gpu $GPU_TESTS -q -rs -p no:cacheprovider \
          -k "memory_wall or free_device_memory or runs_into_the_cap or cudf_pandas" > "$OUT/pytest-wall.txt" 2>&1
      echo "pytest wall exit $?"; grep -E "passed|failed|^FAILED|^ERROR" "$OUT/pytest-wall.txt" | tail -12 ;;
    lessons)
      mkdir -p "$OUT/lessons"
      for name in ${LESSONS:-$(python3 -m workbench lesson | awk 'NR > 1 && /^  [a-z]/ {print $1}')}; do
        s0=$SECONDS
        timeout 120 python3 -m workbench lesson "$name" -o "$OUT/lessons/$name.csv" > "$OUT/lessons/$name.txt" 2>&1
        echo "lesson $name exit $? in $((SECONDS - s0)) s"; tail -3 "$OUT/lessons/$name.txt"
      done ;;
    figs)
      timeout 150 python3 -m workbench run -w spmv -s 2^12:2^24:x4 -d float64 -q -o "$OUT/spmv-float64.csv" \
          > "$OUT/spmv-float64.txt" 2>&1; echo "spmv exit $?"; tail -4 "$OUT/spmv-float64.txt"
      timeout 150 python3 -m workbench run -w pipeline -s 2^12:2^24:x4 -d float32 -q -o "$OUT/pipeline-float32.csv" \
          > "$OUT/pipeline-float32.txt" 2>&1; echo "pipeline exit $?"; tail -4 "$OUT/pipeline-float32.txt" ;;
    settle)
      timeout "$T" python3 benchmarks/mixed_vs_alone.py "$OUT/settle" --tables source_terms:float64,flux:float32 \
          --no-crossover --rounds "${ROUNDS:-4}" > "$OUT/mixed-settle.log" 2>&1; echo "settle exit $?"
      grep -hE "^\| numba|rounds done|largest" "$OUT/mixed-settle.log" | tail -12 ;;
    layers)
      python3 -c "import ctypes.util as u; print('libgomp:', u.find_library('gomp'), ' libtbb:', u.find_library('tbb'))"
      if [ -n "${TBB_WHEEL:-}" ]; then     # the wheel holds only the libraries, under .data/data/lib
        python3 -m zipfile -e "$TBB_WHEEL" /tmp/tbb-unpacked && \
            export LD_LIBRARY_PATH=$(echo /tmp/tbb-unpacked/*.data/data/lib):${LD_LIBRARY_PATH:-}
      fi
      for layer in default omp tbb workqueue; do
        NUMBA_THREADING_LAYER=$layer timeout 100 python3 -c "
from workbench.measure.environment import numba_threading_layer as f; print('layer $layer: loads', f())" 2>&1 | tail -1
        NUMBA_THREADING_LAYER=$layer timeout 100 python3 -m workbench run \
            -w source_terms -b numpy,numba -s 2^10:2^26:x4 -q -o "$OUT/layer-$layer.csv" > "$OUT/layer-$layer.txt" 2>&1
        echo "layer $layer exit $?"; grep -E "^ +numba " "$OUT/layer-$layer.txt" | awk '{print "   ", $2, $3 $4}' | tr '\n' ' '; echo
      done ;;
    rest)
      timeout "$T" python3 benchmarks/mixed_vs_alone.py "$OUT/rest-stencil" --tables stencil:float64 --no-crossover \
          > "$OUT/mixed-rest-stencil.log" 2>&1; echo "stencil float64 exit $?"
      timeout "$T" python3 benchmarks/mixed_vs_alone.py "$OUT/rest-crossover" --tables none \
          > "$OUT/mixed-rest-crossover.log" 2>&1; echo "crossover exit $?"
      grep -hE "^- |rounds done|Verdict|largest" "$OUT"/mixed-rest-*.log | tail -24 ;;
    verdicts)
      timeout "$T" python3 benchmarks/nvbench_side_by_side.py "$OUT/nvbench" > "$OUT/nvbench-side.log" 2>&1
      echo "side by side exit $?"; tail -26 "$OUT/nvbench-side.log"
      timeout 150 python3 -m workbench run -w source_terms -b numpy,numba,cupy,cupy-fused,numba-cuda \
          -s 2^12:2^24:x4 -q -o "$OUT/source_terms-verdicts.json" > "$OUT/sweep-verdicts.txt" 2>&1
      echo "gpu sweep exit $?"; head -20 "$OUT/sweep-verdicts.txt"
      for load in idle loaded; do
        pids=""
        if [ $load = loaded ]; then      # every core but two kept busy by other processes
          for _ in $(seq 3 "$(nproc)"); do python3 -c "while True: pass" & pids="$pids $!"; done
          sleep 2
        fi
        for order in twin-a,twin-b twin-b,twin-a; do
          timeout 150 python3 -m workbench --plugin benchmarks/aa_plugin.py run -w twins -b $order,twin-slow \
              -s 2^14:2^24:x4 -d float64 -q -o "$OUT/aa-$load-$order.json" > "$OUT/aa-$load-$order.txt" 2>&1
          echo "A/A $load $order exit $?"; python3 benchmarks/aa_verdicts.py "$OUT/aa-$load-$order.json"
        done
        [ -n "$pids" ] && kill $pids
      done ;;
  esac
  echo "== stage $stage took $((SECONDS - start)) s"
done

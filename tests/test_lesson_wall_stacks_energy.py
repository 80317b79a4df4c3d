"""Lessons' statements from synthetic rows, where the lesson holds and where it does not (then the
statement must say so, not repeat the lesson): the memory wall, the pipeline, dataframes and
energy. No GPU, no engine."""
from __future__ import annotations

from lesson_rows import ALL_USABLE, row, say

from workbench.results import rows as results
from workbench.catalog.backends import Availability


# The memory wall ---------------------------------------------------------------------------------

def wall_rows(wall32, wall64, per_element=16):
    out = []
    for label, wall in (("float32", wall32), ("float64", wall64)):
        per = per_element * (2 if label == "float64" else 1)
        for s in (2 ** k for k in range(22, 28)):
            if wall is not None and s >= wall:
                out.append(row("cupy", s, float("nan"), variant=label, dtype=label, status="error",
                               message=f"OutOfMemoryError: Out of memory allocating {per * s:,} bytes"))
            else:
                out.append(row("cupy", s, s * 1e-11, variant=label, dtype=label, peak_device_bytes=per * s))
    return out


def test_the_memory_wall_moving_twice_as_far_in_float32_is_said_and_marked():
    st = say("memory-wall", wall_rows(2 ** 26, 2 ** 25))
    assert st.holds is True
    assert "cupy ran out of device memory at 2^25 in float64 and at 2^26 in float32: float32 moved the wall " \
           "2.0x further." in st.text
    assert st.marks == ((2 ** 25, "float64 wall (cupy)"), (2 ** 26, "float32 wall (cupy)"))
    assert "point(s) failed" not in st.text       # the walls are the lesson, not failures


def test_a_wall_that_does_not_move_is_said():
    st = say("memory-wall", wall_rows(2 ** 25, 2 ** 25))
    assert st.holds is False and "float32 did not move the wall twice as far" in st.text


def test_without_a_wall_the_lesson_projects_it_from_the_memory_per_element():
    st = say("memory-wall", wall_rows(None, None))
    assert st.holds is True
    assert "cupy needed 16 bytes of device memory per element in float32 and 32 in float64 (2.0x); under a " \
           "1.25 GiB cap float32 would fit up to 2^26, float64 up to 2^25." in st.text
    assert "No point of cupy ran out of device memory: the largest used 4 GiB." in st.text


# The pipeline --------------------------------------------------------------------------------------

def pipeline_rows(zc, rt, cpu, handoff_rt=0.02):
    out = []
    for s in (10_000, 100_000, 1_000_000, 10_000_000):
        f = s / 10_000_000
        if s == 10_000:      # the CPU stack clearly ahead at the smallest size, beyond the noise
            f *= 0.8
        out.append(row("cpu-stack", s, cpu * f, workload="pipeline",
                       stages=results.encode_stages({"frame": 0.6 * cpu * f, "frame->array": 0.0,
                                                     "array": 0.3 * cpu * f, "kernel": 0.1 * cpu * f})))
        out.append(row("gpu-zero-copy", s, zc * f + 1e-3, workload="pipeline",
                       stages=results.encode_stages({"frame": zc * f, "frame->array": 1e-5})))
        out.append(row("gpu-round-trips", s, rt * f + 1e-3, workload="pipeline",
                       stages=results.encode_stages({"frame": zc * f, "frame->array": handoff_rt * f})))
    return out


def test_the_pipeline_on_the_gpu_beats_the_cpu_and_round_trips_cost_is_said():
    st = say("pipeline", pipeline_rows(zc=0.05, rt=0.09, cpu=1.0))
    assert st.holds is True
    assert "At 10,000,000 rows the zero-copy GPU pipeline took 51 ms, 20x faster than the CPU stack (1 s)." \
        in st.text
    assert "the same GPU stages took 91 ms, 1.8x the zero-copy time; its hand-offs took 20 ms (22 % of its " \
           "time) against 10 µs zero-copy" in st.text
    assert "frame 60 %, array 30 %, kernel 10 %" in st.text
    assert st.break_even is not None and 10_000 < st.break_even < 10_000_000


def test_a_pipeline_where_round_trips_cost_little_and_the_gpu_loses_says_so():
    st = say("pipeline", pipeline_rows(zc=2.0, rt=2.0, cpu=1.0))
    assert st.holds is False
    assert "was 2.0x slower than the CPU stack" in st.text and "did not pay off" in st.text
    assert "Host round trips cost little here" in st.text


# Dataframes --------------------------------------------------------------------------------------

def frame_rows(cudf, cudf_pandas=None, fell_back_at=()):
    out = []
    for s in (10_000, 100_000, 1_000_000, 10_000_000):
        out.append(row("pandas", s, s * 2e-8, workload="groupby"))
        out.append(row("cudf", s, cudf(s), compute=cudf(s) * 0.1, h2d=cudf(s) * 0.8, d2h=cudf(s) * 0.1,
                       workload="groupby"))
        if cudf_pandas:
            t = cudf_pandas(s)       # its proxies: the call alone 1.5x cuDF's; the same conversions
            message = "cudf.pandas: 2 pandas calls on the GPU, 1 fell back to the CPU (mean)" if s in fell_back_at \
                else "cudf.pandas: 3 pandas calls on the GPU, none fell back to the CPU"
            out.append(row("cudf-pandas", s, t, compute=cudf(s) * 0.15, h2d=t - cudf(s) * 0.25,
                           d2h=cudf(s) * 0.1, workload="groupby", message=message))
    return out


def test_cudf_pandas_is_compared_end_to_end_and_call_for_call():
    """Like with like: its end-to-end against pandas's, its call against cuDF's call; a fallback is said."""
    cudf = lambda s: 2e-3 + s * 1e-9                                     # noqa: E731
    st = say("dataframes", frame_rows(cudf, cudf_pandas=lambda s: cudf(s) * 1.05, fell_back_at=(100_000,)))
    assert st.holds is True
    assert "cudf.pandas ran the unchanged pandas code 16x faster than pandas at 10,000,000 rows, end to end " \
           "(the frame to the GPU and the result back included); the pandas call alone 111x pandas's; 1.5x " \
           "cuDF's own time for the same call (the cost of its proxies)." in st.text
    assert "fell back to the CPU under cudf.pandas at 100,000 rows" in st.text


def test_cudf_against_pandas_with_a_break_even_is_said():
    no_accelerator = {**ALL_USABLE, "cudf-pandas": Availability(False, "cudf-cu13 is not installed")}
    st = say("dataframes", frame_rows(lambda s: 2e-3 + s * 1e-9), no_accelerator)
    assert st.holds is True
    assert "At 10,000,000 rows cuDF's group-by alone is 167x pandas; with the conversion from and back to " \
           "pandas 17x." in st.text
    # At 100,000 rows the two are 5 % apart: within the minimum effect, neither side's.
    assert "cudf loses to pandas end-to-end (conversions included) up to 10,000 and wins from 1,000,000 on " \
           "(100,000: the two within the noise): break-even near 110,000; at 10,000 it is 10x slower" in st.text
    assert "Not run: cudf-pandas: cudf-cu13 is not installed." in st.text


def test_cudf_pandas_slower_than_pandas_is_said():
    st = say("dataframes", frame_rows(lambda s: 2e-3 + s * 1e-9, cudf_pandas=lambda s: s * 4e-8))
    assert st.holds is False
    assert "cudf.pandas was 2.0x slower than plain pandas at 10,000,000 rows" in st.text
    assert "ate the gain" in st.text


def test_cudf_pandas_whose_call_itself_is_slower_is_not_blamed_on_the_transfers():
    rows = [r for r in frame_rows(lambda s: 2e-3 + s * 1e-9) if True]
    for s in (10_000, 100_000, 1_000_000, 10_000_000):      # every call fell back: slower than pandas itself
        rows.append(row("cudf-pandas", s, s * 6e-8, compute=s * 4e-8, h2d=s * 1e-8, d2h=s * 1e-8, workload="groupby",
                        message="cudf.pandas: 0 pandas calls on the GPU, 3 fell back to the CPU (mean)"))
    st = say("dataframes", rows)
    assert "cudf.pandas was 3.0x slower than plain pandas" in st.text
    assert "the call itself was not faster" in st.text and "ate the gain" not in st.text
    assert "fell back to the CPU under cudf.pandas at 10,000, 100,000, 1,000,000, 10,000,000 rows" in st.text


def test_cudf_that_never_beats_pandas_is_said():
    st = say("dataframes", frame_rows(lambda s: s * 1e-7))
    assert st.holds is False
    assert "cuDF was not faster than pandas end-to-end" in st.text and "cudf never beat pandas" in st.text


# Faster and cheaper? -----------------------------------------------------------------------------

def energy_rows(cpu_joules, gpu_joules, cpu_s=0.1, gpu_s=0.001):
    out = []
    for b, t, j in (("numba", cpu_s, cpu_joules), ("cupy-fused", gpu_s, gpu_joules)):
        lo, mid, hi = j if isinstance(j, tuple) else (j, j, j)
        out.append(row(b, 2 ** 26, t, threads=16 if b == "numba" else 0, energy_j=mid, energy_lo_j=lo,
                       energy_hi_j=hi, power_w=300.0, idle_w=70.0,
                       energy_source="x" if mid == mid else "not measured here: no RAPL"))
    return out


def test_energy_says_faster_and_cheaper_only_where_every_reading_is_below():
    st = say("energy", energy_rows((9.0, 10.0, 11.0), (0.3, 0.4, 0.5)))
    assert st.holds is True and ("cupy-fused is 100x faster than numba x16 end to end, and its compute spends 25x "
                                 "less energy a call" in st.text)
    assert "numba x16 at 2^26" in st.text
    st = say("energy", energy_rows((0.9, 1.0, 1.1), (1.0, 1.05, 1.2)))
    assert st.holds is None and "could not be told apart" in st.text
    st = say("energy", energy_rows((0.1, 0.1, 0.1), (0.3, 0.4, 0.5)))
    assert st.holds is False and "its compute spends 4.0x more energy a call" in st.text


def test_energy_makes_no_claim_where_the_cpus_energy_is_not_measured():
    st = say("energy", energy_rows(float("nan"), (0.3, 0.4, 0.5)))
    assert st.holds is None and "not measured here, and no figure is guessed" in st.text


def test_energy_sets_the_computes_energy_against_the_cpus_and_says_the_whole_call_beside_it():
    rows = energy_rows((9.0, 10.0, 11.0), (0.3, 0.4, 0.5))
    rows[1] = dict(rows[1], energy_e2e_j=20.0, energy_e2e_lo_j=19.0, energy_e2e_hi_j=21.0, power_e2e_w=125.0)
    st = say("energy", rows)
    assert st.holds is True and "its compute spends 25x less energy a call than numba x16's" in st.text
    assert "End to end, copies and all, cupy-fused spends 20 J a call, 2.0x more than numba x16" in st.text
    assert "cupy-fused at 2^26: compute" in st.text and "its whole call, copies and all" in st.text
    # Readings of the whole call that overlap the CPU's: neither more nor less, whatever the medians.
    rows[1] = dict(rows[1], energy_e2e_j=10.5, energy_e2e_lo_j=8.0, energy_e2e_hi_j=12.0)
    st = say("energy", rows)
    assert "cupy-fused spends 10.5 J a call, not told apart from numba x16's 10 J (their readings overlap)" in st.text
    assert "more than numba" not in st.text and "less than numba" not in st.text

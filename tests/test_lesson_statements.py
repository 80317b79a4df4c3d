"""Lessons' statements from synthetic rows, where the lesson holds and where it does not (then the
statement must say so, not repeat the lesson): small problems to kernel style, hiding the transfers,
and what a statement is made of. No GPU, no engine."""
from __future__ import annotations

from lesson_rows import ALL_USABLE, NO_GPU, POW2, row, say

import math

import pytest

from workbench import lessons
from workbench.lessons import say as wording
from workbench.results import rows as results
from workbench.catalog.backends import BACKENDS


# Small problems lose ------------------------------------------------------------------------------

def small_rows(gpu_time):
    out = []
    for s in POW2:
        out.append(row("numpy", s, s * 1e-9))
        out.append(row("numba", s, 8e-6 + s * 1e-10))
        out.append(row("cupy", s, gpu_time(s), h2d=gpu_time(s) * 0.5, d2h=gpu_time(s) * 0.2))
    return out


def test_small_problems_with_a_break_even_names_it_with_the_measured_times():
    st = say("small-problems", small_rows(lambda s: 50e-6 + s * 2e-10))
    assert st.holds is True and st.verdict == "Measured here: as the lesson says."
    # 50 us + 0.2 ns/cell against 1 ns/cell: even near 62,500 cells, between 2^14 and 2^16
    assert 2 ** 14 < st.break_even < 2 ** 16
    # At 2^16 the two are within 5 % of each other: neither a loss nor a win, said as such.
    assert "cupy loses to numpy end-to-end (transfers included) up to 2^14 and wins from 2^18 on (2^16: the two " \
           "within the noise): break-even near 2^16" in st.text
    assert "at 2^10 it is 49x slower (50.2 µs against 1.02 µs)" in st.text
    assert "at 2^26 5.0x faster" in st.text
    assert st.marks == ((st.break_even, "break-even cupy vs numpy"),)
    assert "No GPU backend could run here" not in st.text


def test_the_break_even_is_where_the_time_ratio_crosses_one_between_the_sizes():
    st = say("small-problems", small_rows(lambda s: 50e-6 + s * 2e-10))
    lo, hi = 2 ** 14, 2 ** 16
    r = lambda s: (50e-6 + s * 2e-10) / (s * 1e-9)  # noqa: E731
    t = math.log(r(lo)) / (math.log(r(lo)) - math.log(r(hi)))
    assert st.break_even == pytest.approx(math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo))))


def test_small_problems_where_the_gpu_never_wins_says_so_instead_of_the_lesson():
    st = say("small-problems", small_rows(lambda s: 1e-3 + s * 2e-9))
    assert st.holds is False and st.verdict == "Measured here: not as the lesson says."
    assert "cupy never beat numpy end-to-end (transfers included) at these sizes (2^10 to 2^26)" in st.text
    assert "no break-even here" in st.text and "wins from there on" not in st.text.split("numba")[0]
    assert st.break_even is None and all("cupy" not in label for _, label in st.marks)


def test_small_problems_where_the_gpu_wins_even_the_smallest_says_no_problem_was_too_small():
    st = say("small-problems", small_rows(lambda s: s * 1e-10))
    assert st.holds is False
    assert "cupy beat numpy end-to-end (transfers included) at every size measured, even the smallest" in st.text
    assert "loses to" not in st.text.split("On the CPU")[0]


def test_small_problems_where_the_gpu_wins_only_in_the_middle_has_no_single_break_even():
    def middle(s):
        return s * 0.5e-9 if 2 ** 14 <= s <= 2 ** 20 else s * 2e-9
    st = say("small-problems", small_rows(middle))
    assert st.holds is False and st.break_even is None
    assert "No single break-even: cupy beats numpy end-to-end (transfers included) only at 2^14 to 2^20" in st.text


def test_small_problems_without_a_gpu_measures_the_cpu_part_and_says_what_the_gpu_would_show():
    rows = [r for r in small_rows(lambda s: 1.0) if r["backend"] != "cupy"]
    st = say("small-problems", rows, NO_GPU)
    assert "numba's parallel loop loses to numpy up to 2^12" in st.text
    assert st.holds is True and st.marks[0][1] == "break-even numba vs numpy"
    assert "No GPU backend could run here. On a GPU: cupy and numba-cuda lose to numpy" in st.text
    assert "Not run: cupy, numba-cuda: no GPU here." in st.text


def test_small_problems_without_a_gpu_where_threads_never_pay_off_says_so():
    rows = [row("numpy", s, s * 1e-9) for s in POW2] + [row("numba", s, 1.0) for s in POW2]
    st = say("small-problems", rows, NO_GPU)
    assert st.holds is False and "numpy stays faster than numba end-to-end at every size" in st.text


# Transfers --------------------------------------------------------------------------------------

def transfer_rows(pageable_transfer, pinned_transfer, kernel=lambda s: s * 1e-12):
    out = []
    for label, tr in (("pageable", pageable_transfer), ("pinned", pinned_transfer)):
        for s in POW2[3:]:
            out.append(row("numpy", s, s * 1e-9, variant=label))
            k, t = kernel(s), tr(s)
            out.append(row("cupy", s, k + t, compute=k, h2d=0.7 * t, d2h=0.3 * t, variant=label, host_memory=label))
    return out


def test_transfers_eating_the_speedup_is_said_with_kernel_only_and_end_to_end_figures():
    st = say("transfers", transfer_rows(lambda s: s * 5e-10, lambda s: s * 1e-10))
    assert st.holds is True
    s = "2^26"
    assert f"At {s}, cupy's kernel alone is 1,000x numpy; end-to-end only 2.0x: transfers take 100 % of the " \
           "GPU's time (pageable host memory)." in st.text
    assert "Pinned host memory moved the same data 5.0x faster" in st.text
    assert "end-to-end 9.9x numpy, transfers 99 % of the GPU's time" in st.text


def test_transfers_that_take_little_of_the_time_are_said_not_to_eat_the_speedup():
    st = say("transfers", transfer_rows(lambda s: s * 1e-13, lambda s: s * 0.5e-13, kernel=lambda s: s * 1e-11))
    assert st.holds is False
    assert "transfers took only 1 % of cupy's end-to-end time" in st.text
    assert "here they did not eat the speedup" in st.text
    assert "transfers take" not in st.text


def test_pinned_memory_that_is_not_faster_is_said():
    st = say("transfers", transfer_rows(lambda s: s * 5e-10, lambda s: s * 6e-10))
    assert st.holds is False
    assert "Pinned host memory was not faster here" in st.text and "moved the same data" not in st.text


# First call ----------------------------------------------------------------------------------------

def first_rows(numba_first):
    out = []
    for s in (2 ** 12, 2 ** 16, 2 ** 20):
        out.append(row("numpy", s, s * 1e-9, first=s * 3e-9))
        out.append(row("numba", s, s * 1e-10 + 5e-6, first=numba_first if s == 2 ** 12 else 1e-5))
    return out


def test_first_call_cost_is_said_with_its_ratio_and_when_it_pays_back():
    st = say("first-call", first_rows(0.75))
    assert st.holds is True
    assert "numba's first call took 750 ms" in st.text and "a steady call (5.41 µs) at 2^12: compilation." in st.text
    assert "its compilation pays back after about" in st.text
    assert "numpy's first call took" in st.text and "no compiler" in st.text


def test_a_first_call_that_compiled_nothing_is_said():
    st = say("first-call", first_rows(6e-6))
    assert st.holds is False
    assert "it compiled nothing here" in st.text and "compilation." not in st.text


# float32 against float64 ------------------------------------------------------------------------

def precision_rows(time_ratio, memory_ratio, f32_status="ok"):
    out = []
    for label in ("float32", "float64"):
        k = time_ratio if label == "float64" else 1.0
        mem = memory_ratio if label == "float64" else 1.0
        for s in POW2[5:]:
            out.append(row("numpy", s, k * s * 1e-9, variant=label, dtype=label, peak_host_bytes=mem * 12 * s,
                           max_rel_error=6e-8 if label == "float32" else 1e-16,
                           status=f32_status if label == "float32" and s == POW2[-1] else "ok",
                           message="result differs" if f32_status != "ok" else ""))
            out.append(row("cupy", s, k * s * 1e-11, variant=label, dtype=label, peak_device_bytes=mem * 16 * s,
                           max_rel_error=5e-8 if label == "float32" else 1e-16))
    return out


def test_float64_twice_the_time_and_memory_is_said_with_both_ratios():
    st = say("float32-float64", precision_rows(2.0, 2.0))
    assert st.holds is True
    assert "cupy: float64 took 2.0x the time of float32 at 2^26 and 2.0x the device memory (2 GiB against " \
           "1 GiB)." in st.text
    assert "numpy: float64 took 2.0x the time" in st.text and "host memory" in st.text
    assert "float32 results stayed within a relative error of 6.0e-08" in st.text


def test_float64_barely_slower_is_said_not_to_be_bandwidth_bound():
    st = say("float32-float64", precision_rows(1.1, 2.0))
    assert st.holds is False
    assert "cupy: float64 took only 1.1x the time of float32" in st.text
    assert "here its time is not set by the bytes it moves" in st.text


def test_memory_that_does_not_double_and_wrong_float32_results_are_said():
    st = say("float32-float64", precision_rows(2.0, 1.2, f32_status="wrong"))
    assert st.holds is False
    assert "peak device memory did not double" in st.text
    assert "float32 was not accurate enough for numpy: result differs" in st.text
    assert "stayed within" not in st.text


# Divergence ----------------------------------------------------------------------------------------

def divergence_rows(gpu_ratio, cpu_ratio=1.02):
    out = []
    for v in ("random", "sorted"):
        for s in POW2[3:7]:
            out.append(row("numba-cuda", s, s * 1e-10 * (gpu_ratio if v == "random" else 1), variant=v,
                           workload="divergence"))
            out.append(row("numba", s, s * 1e-9 * (cpu_ratio if v == "random" else 1), variant=v,
                           workload="divergence"))
    return out


def test_divergence_on_the_gpu_is_said_with_the_ratio():
    st = say("divergence", divergence_rows(3.2))
    assert st.holds is True
    assert "numba-cuda: random order took 3.2x the time of sorted at 2^22: each warp waits" in st.text
    assert "numba: random order took 1.0x the time of sorted at 2^22: a CPU core follows its own branch" in st.text


def test_divergence_that_costs_nothing_is_said():
    st = say("divergence", divergence_rows(1.05))
    assert st.holds is False and "divergence cost little here" in st.text and "waits" not in st.text


def test_a_cpu_that_cares_about_the_order_is_said():
    st = say("divergence", divergence_rows(3.0, cpu_ratio=2.0))
    assert st.holds is False and "the order mattered on the CPU too" in st.text


def test_a_cpu_slower_on_sorted_input_is_not_said_to_follow_its_own_branch():
    """Sorted input slower on the CPU (as on the H200's 16 cores: 0.62x) is load imbalance in the
    parallel loop's equal blocks, not indifference to the order: the statement must not say the CPU
    hardly cares."""
    st = say("divergence", divergence_rows(1.7, cpu_ratio=0.62))
    assert st.holds is False
    assert "numba: random order took 0.62x the time of sorted at 2^22: on the CPU sorted input was the slower" \
           in st.text and "load imbalance" in st.text
    assert "follows its own branch" not in st.text


def test_a_backend_that_changes_sides_twice_has_no_break_even():
    """numba measured on the H200 machine: it beat numpy at 2^18 to 2^20, lost at 2^22 and won again
    from 2^24. "Loses up to 2^22 and wins from 2^24" was false; the statement lists the ranges."""
    numpy_ = {2 ** 10: 1.5e-6, 2 ** 12: 3.4e-6, 2 ** 14: 6e-6, 2 ** 16: 45e-6, 2 ** 18: 125e-6, 2 ** 20: 706e-6,
              2 ** 22: 4.08e-3, 2 ** 24: 26.8e-3, 2 ** 26: 108e-3}
    numba_ = {2 ** 10: 8.2e-6, 2 ** 12: 9.35e-6, 2 ** 14: 5.98e-3, 2 ** 16: 5.99e-3, 2 ** 18: 13.4e-6,
              2 ** 20: 22.4e-6, 2 ** 22: 5.98e-3, 2 ** 24: 758e-6, 2 ** 26: 8.56e-3}
    rows = [row("numpy", s, t) for s, t in numpy_.items()] + [row("numba", s, t) for s, t in numba_.items()]
    st = say("small-problems", rows)
    assert "numba beats numpy end-to-end only at 2^18 to 2^20 and 2^24 to 2^26; numpy is faster elsewhere" \
        in st.text
    assert "break-even" not in st.text.split("On a GPU")[0] and st.break_even is None


# How the kernel is written ---------------------------------------------------------------------------

def style_rows(gbps):
    out = []
    for s in POW2[5:]:
        for b, g in gbps.items():
            out.append(row(b, s, 12 * s / (g * 1e9), gbps=g, gbps_limit=4000.0 if BACKENDS[b].device == "gpu"
                           else float("nan")))
    return out


def test_kernel_style_gives_each_kernels_bandwidth_and_share_of_the_copy():
    st = say("kernel-style", style_rows({"numpy": 5.3, "numba": 139, "cupy": 1227, "cupy-fused": 2442,
                                         "cupy-raw": 4143, "numba-cuda": 2969, "numba-cuda-x4": 3712}))
    assert st.holds is True
    assert "At 2^26, in GB/s and as a share of the device's copy bandwidth: cupy (one kernel per operation, " \
           "with a temporary) 1,227 GB/s (31 %); cupy-fused (fused into one kernel) 2,442 GB/s (61 %)" in st.text
    assert "Fusing the expression into one kernel took cupy's 1,227 GB/s to 2,442 GB/s." in st.text
    assert "numba's single loop moved 139.0 GB/s, numpy's expression with its temporaries 5.3 GB/s" in st.text


def test_kernel_style_without_a_gpu_checks_the_cpus_one_loop_against_temporaries():
    st = say("kernel-style", style_rows({"numpy": 5.1, "numba": 9.7}), NO_GPU)
    assert st.holds is True and "numba's single loop moved 9.7 GB/s, numpy's expression" in st.text
    st = say("kernel-style", style_rows({"numpy": 5.1, "numba": 5.0}), NO_GPU)
    assert st.holds is False and "was no faster than numpy's expression with its temporaries" in st.text


def test_kernel_style_quotes_the_kernels_one_call_launches_where_they_were_recorded():
    rows = style_rows({"cupy": 1227, "cupy-fused": 2442})
    for r in rows:
        r.update(kernel_count={"cupy": 3, "cupy-fused": 1}[r["backend"]])
    assert "One call launches cupy 3 kernels; cupy-fused 1 kernel." in say("kernel-style", rows).text
    assert "One call launches" not in say("kernel-style", style_rows({"cupy": 1227, "cupy-fused": 2442})).text


def test_a_fused_kernel_no_faster_than_the_plain_one_is_said():
    st = say("kernel-style", style_rows({"cupy": 2000, "cupy-fused": 1900, "cupy-raw": 4000}))
    assert st.holds is False
    assert "Fusing the expression into one kernel did not help here: cupy-fused 1,900 GB/s against cupy's " \
           "2,000 GB/s." in st.text


# What a statement is made of --------------------------------------------------------------------

def test_failed_points_that_are_not_the_lessons_subject_are_counted():
    rows = small_rows(lambda s: 50e-6 + s * 2e-10)
    rows.append(row("cupy", 2 ** 28, float("nan"), status="error", message="ZeroDivisionError"))
    st = say("small-problems", rows)
    assert "1 point(s) failed and are left out: cupy at 2^28: error." in st.text


def test_a_stopped_lesson_says_it_covers_only_what_was_measured():
    p = lessons.plan(lessons.get("small-problems"), ALL_USABLE)
    st = lessons.explain(p, results.to_frame(small_rows(lambda s: 50e-6 + s * 2e-10)), stopped=True)
    assert "stopped before its end" in st.text


def test_the_statement_goes_into_settings_as_plain_data():
    import json
    st = say("small-problems", small_rows(lambda s: 50e-6 + s * 2e-10))
    kept = json.loads(json.dumps(st.as_settings()))
    assert kept["name"] == "small-problems" and kept["statement"] == st.text and kept["holds"] is True
    assert kept["marks"] == [[st.break_even, "break-even cupy vs numpy"]]
    assert st.caption().startswith("Lesson: Small problems lose; the break-even size. Measured here: as the lesson")


def test_ratios_and_sizes_are_said_as_people_say_them():
    assert [wording.times(r) for r in (208.4, 17.2, 1.74, 0.42, 12345)] == ["208x", "17x", "1.7x", "0.42x",
                                                                             "12,345x"]
    assert wording.faster(1.0, 3.2) == "3.2x faster" and wording.faster(4.0, 1.0) == "4.0x slower"
    assert wording.approx_size(2 ** 16 * 1.05) == "2^16" and wording.approx_size(31_234, pow2=False) == "31,000"
    assert wording.approx_size(105_943, pow2=False) == "110,000"



# Hide the transfers (issue 37) -------------------------------------------------------------------

def _overlap_rows(pinned_k_total: float, pageable_k_total: float, backend: str = "cupy"):
    """The overlap workload at 2^26 float32 on a card moving 55 GB/s pinned, 8 GB/s pageable: the
    phases alone, and each variant's end to end (sequential: their sum)."""
    pin, page, comp = 4.9e-3, 33e-3, 2.5e-3
    def r(variant, total, copy):
        return row(backend, 2 ** 26, total, compute=comp, h2d=copy, d2h=copy, variant=variant, workload="overlap",
                   host_memory=variant.split(" ")[0])
    return [r("pinned sequential", 2 * pin + comp, pin), r("pinned 4 streams", pinned_k_total, pin),
            r("pageable sequential", 2 * page + comp, page), r("pageable 4 streams", pageable_k_total, page)]


def test_hide_the_transfers_says_how_close_the_overlap_came_to_its_limit_and_why_pageable_cannot():
    st = say("hide-transfers", _overlap_rows(pinned_k_total=5.9e-3, pageable_k_total=68.6e-3))
    text = " ".join(st.sentences)
    assert st.holds is True, text
    assert "4 streams from pinned memory took 5.9 ms" in text and "2.1x faster" in text
    assert "at 1.20x its limit, 4.9 ms (h2d)" in text
    assert "no faster" in text and "pinned buffer of its own" in text


def test_hide_the_transfers_is_contradicted_where_the_streams_did_not_help_and_undecided_in_the_noise():
    st = say("hide-transfers", _overlap_rows(pinned_k_total=12.0e-3, pageable_k_total=68.6e-3))
    assert st.holds is False and "were not faster" in " ".join(st.sentences)
    # Two copies that did not run at once: the note on one copy engine.
    assert "one copy engine" in " ".join(st.sentences)
    noisy = _overlap_rows(pinned_k_total=5.9e-3, pageable_k_total=68.6e-3)
    noisy[1]["total_ci_lo_s"], noisy[1]["total_ci_hi_s"] = 3e-3, 13e-3      # an interval over both sides
    st = say("hide-transfers", noisy)
    assert any(s.startswith("Undecided") and "pinned memory took" in s for s in st.sentences)


def test_the_summary_compares_each_overlapped_variant_with_its_sequential_one():
    from workbench.views import summary
    frame = results.to_frame(_overlap_rows(pinned_k_total=5.9e-3, pageable_k_total=68.6e-3))
    said = summary.overlap_sentences(frame)
    assert said[0] == "cupy pinned 4 streams: 2.08x faster than sequential end to end at 2^26, at 1.20x its limit."
    assert said[1].startswith("cupy pageable 4 streams: no faster than sequential") or "slower" in said[1]
    assert summary.overlap_sentences(results.to_frame([row("numpy", 2 ** 20, 1e-3)])) == []


def test_hide_the_transfers_holds_an_overlap_to_the_copies_at_once_where_the_card_measured_them():
    """The H100 host of docs/PERFORMANCE.md: 4.88 ms each way alone, 7.35 ms both at once."""
    rows = _overlap_rows(pinned_k_total=7.78e-3, pageable_k_total=68.6e-3)
    for r in rows:
        r["copies_together_s"] = 0.75 * (r["h2d_s"] + r["d2h_s"])
    st = say("hide-transfers", rows)
    text = " ".join(st.sentences)
    assert st.holds is True, text
    assert "at 1.06x its limit, 7.35 ms (the copies in and out at once)" in text
    assert "moves both directions at once in 75 % of the two copies' time alone" in text

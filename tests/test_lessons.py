"""Lessons: each declaration, each plan, and each statement from synthetic rows, where the lesson holds
and where it does not (then the statement must say so, not repeat the lesson). No GPU, no engine."""
from __future__ import annotations

from helpers import measured

import dataclasses
import math
import sys

import pytest

from workbench import lessons
from workbench.lessons import core, say as wording
from workbench.results import rows as results
from workbench.catalog.backends import BACKENDS, Availability

ALL_USABLE = {b: Availability(True, "", "test") for b in BACKENDS}
NO_GPU = {b: Availability(BACKENDS[b].device == "cpu", "" if BACKENDS[b].device == "cpu" else "no GPU here", "test")
          for b in BACKENDS}
POW2 = [2 ** k for k in range(10, 27, 2)]


def row(backend, size, total, compute=None, h2d=0.0, d2h=0.0, variant="", workload="source_terms",
        dtype="float32", host_memory=None, first=None, status="ok", **kw):
    gpu = backend in BACKENDS and BACKENDS[backend].device == "gpu"
    compute = total - h2d - d2h if compute is None else compute
    return measured(
        workload=workload, backend=backend, size=size, dtype=dtype, variant=variant,
        host_memory=(host_memory or "pageable") if gpu else "", compute_median_s=compute, total_median_s=total,
        h2d_s=h2d, d2h_s=d2h, first_call_s=2 * total if first is None else first, status=status, repeats=3,
        **kw)


def say(name, rows, availability=ALL_USABLE):
    p = lessons.plan(lessons.get(name), availability)
    return lessons.explain(p, results.to_frame(rows))


# Declarations and plans ------------------------------------------------------------------------

def test_every_lesson_is_declared_against_real_workloads_and_runs_somewhere():
    assert set(lessons.LESSONS) == {"small-problems", "transfers", "hide-transfers", "first-call", "float32-float64", "divergence",
                                    "kernel-style", "memory-wall", "pipeline", "dataframes", "energy"}
    for ls in lessons.LESSONS.values():
        assert lessons.problems(ls) == [], ls.name
        p = lessons.plan(ls, ALL_USABLE)
        assert len(p.specs) == len(ls.runs) and p.specs[0].workload == ls.workload
        assert ls.on_gpu and ls.claim and ls.chart in ("runtime", "speedup", "transfer", "memory", "first-call")


def test_the_lessons_are_the_package_modules_that_declare_one_in_their_declared_order():
    """No list to keep: a module of the package with a LESSON is a lesson, and the menu's order is
    the lessons' ``order`` (the order users have met them in)."""
    import importlib
    import pkgutil
    declaring = set()
    for info in pkgutil.iter_modules(lessons.__path__):
        module = importlib.import_module(f"workbench.lessons.{info.name}")
        if hasattr(module, "LESSON"):
            declaring.add(info.name)
    assert declaring == set(lessons.LESSON_MODULES)
    assert list(lessons.LESSONS) == ["small-problems", "transfers", "hide-transfers", "first-call", "float32-float64", "divergence",
                                     "kernel-style", "memory-wall", "pipeline", "dataframes", "energy"]
    assert all(callable(ls.explain) for ls in lessons.LESSONS.values())


TINY_LESSON = """
from workbench.lessons.core import Lesson
from workbench.lessons.say import Say

LESSON = Lesson(name="tiny-lesson", title="A lesson from outside the package",
                claim="One file and one entry point make a lesson.", workload="source_terms",
                backends=("numpy",), sizes=(1024, 4096), chart="runtime", on_gpu="nothing more.")


def explain(m, ls, say: Say) -> None:
    say.claim(m.has("numpy"), f"numpy measured {len(m.rows('numpy'))} sizes.", "numpy measured nothing.")
    say.mark(4096, "tiny mark")
"""


@pytest.fixture
def tiny_lesson(tmp_path, monkeypatch):
    """A lesson module in a package of its own, importable, but not yet in the registry."""
    pkg = tmp_path / "elsewhere_lessons"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tiny.py").write_text(TINY_LESSON)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "elsewhere_lessons.tiny"
    for name in [n for n in sys.modules if n.split(".")[0] == "elsewhere_lessons"]:
        del sys.modules[name]           # the next test's package lies in another tmp_path


def listing(capsys) -> str:
    from workbench.cli.commands import main
    assert main(["lesson"]) == 0
    return capsys.readouterr().out


@pytest.fixture
def lesson_entry_points(monkeypatch):
    """Sets the modules the lessons' entry-point group names; the lessons are looked for anew."""
    import importlib.metadata

    def declare(*modules: str) -> None:
        points = [importlib.metadata.EntryPoint(m.rsplit(".", 1)[-1], m, lessons.ENTRY_POINT_GROUP) for m in modules]
        monkeypatch.setattr(importlib.metadata, "entry_points",
                            lambda group=None: points if group == lessons.ENTRY_POINT_GROUP else [])
        lessons._found.cache_clear()
    yield declare
    lessons._found.cache_clear()


def test_a_lesson_module_an_entry_point_names_is_listed_by_the_command_line_and_explained(
        tiny_lesson, lesson_entry_points, capsys):
    assert "tiny-lesson" not in listing(capsys)                    # the file alone is not a lesson
    lesson_entry_points(tiny_lesson)
    out = listing(capsys)
    assert "  tiny-lesson      A lesson from outside the package" in out
    assert "One file and one entry point make a lesson." in out
    assert "  small-problems " in out                               # the built-in ones stay
    assert out.index("  energy ") < out.index("  tiny-lesson ")      # after them: it declares no order
    st = lessons.explain(lessons.plan(lessons.get("tiny-lesson"), ALL_USABLE),
                         results.to_frame([row("numpy", 1024, 1e-6), row("numpy", 4096, 4e-6)]))
    assert st.holds is True and st.text.startswith("numpy measured 2 sizes.")
    assert st.marks == ((4096.0, "tiny mark"),) and st.as_settings()["marks"] == [[4096.0, "tiny mark"]]


def test_a_module_without_a_lesson_or_a_name_declared_twice_is_refused(tiny_lesson, lesson_entry_points, tmp_path):
    (tmp_path / "elsewhere_lessons" / "helpers_only.py").write_text("def explain(m, ls, say):\n    pass\n")
    lesson_entry_points("elsewhere_lessons.helpers_only")
    with pytest.raises(TypeError, match="elsewhere_lessons.helpers_only: a lesson module declares LESSON"):
        lessons.get("tiny-lesson")
    lesson_entry_points(tiny_lesson, tiny_lesson)
    with pytest.raises(ValueError, match="'tiny-lesson' is declared twice"):
        list(lessons.LESSONS)


def test_a_declaration_that_names_a_missing_variant_or_dtype_is_a_problem():
    bad = dataclasses.replace(lessons.get("divergence"), variants=("shuffled",),
                              runs=(lessons.Run("x", dtype="int8"),))
    found = " ".join(lessons.problems(bad))
    assert "no variant 'shuffled'" in found and "no dtype int8" in found
    assert lessons.problems(dataclasses.replace(bad, workload="nope"))[0].startswith("unknown workload")


def test_unknown_lesson_names_the_lessons():
    with pytest.raises(KeyError, match="small-problems"):
        lessons.get("nope")


def test_without_a_gpu_the_plan_runs_the_cpu_backends_and_says_why_the_others_are_left_out():
    p = lessons.plan(lessons.get("small-problems"), NO_GPU)
    (spec,) = p.specs
    assert spec.backends == ("numpy", "numba")
    assert dict(p.skipped) == {"cupy": "no GPU here", "numba-cuda": "no GPU here"}


def test_a_backend_not_yet_in_the_workbench_is_skipped_with_its_reason():
    ls = dataclasses.replace(lessons.get("dataframes"), backends=("pandas", "cudf", "polars-gpu", "numpy"))
    p = lessons.plan(ls, ALL_USABLE)
    assert dict(p.skipped) == {"polars-gpu": "not a backend of this workbench yet",
                               "numpy": "groupby has no numpy implementation yet"}
    assert p.specs[0].backends == ("pandas", "cudf")


def test_cudf_pandas_is_in_the_dataframes_lesson_where_it_can_run_and_said_where_not():
    p = lessons.plan(lessons.get("dataframes"), ALL_USABLE)
    assert p.specs[0].backends == ("pandas", "cudf", "cudf-pandas") and not p.skipped
    p = lessons.plan(lessons.get("dataframes"), NO_GPU)
    assert dict(p.skipped) == {"cudf": "no GPU here", "cudf-pandas": "no GPU here"}


def test_a_lesson_with_nothing_to_run_here_says_what_the_gpu_would_show():
    p = lessons.plan(lessons.get("memory-wall"), {b: Availability(False, "no GPU here") for b in BACKENDS})
    assert p.specs == ()
    st = lessons.explain(p, results.to_frame([]))
    assert st.holds is None
    assert "Nothing of this lesson can run here." in st.text and "On a GPU: under a device-memory cap" in st.text


def test_overrides_replace_sizes_and_repeats_and_runs_are_one_spec_each():
    p = lessons.plan(lessons.get("transfers"), ALL_USABLE, sizes=(2 ** 10, 2 ** 12), min_repeats=1, budget_s=0.0)
    assert [s.host_memory for s in p.specs] == ["pageable", "pinned"]
    assert all(s.sizes == (2 ** 10, 2 ** 12) and s.min_repeats == 1 and s.budget_s == 0 for s in p.specs)
    assert p.labels == ("pageable", "pinned")


def test_without_a_gpu_a_pinned_run_that_would_repeat_the_pageable_one_is_left_out():
    ls = dataclasses.replace(lessons.get("transfers"), needs_gpu=False)
    p = lessons.plan(ls, NO_GPU)
    assert [s.host_memory for s in p.specs] == ["pageable"] and p.specs[0].backends == ("numpy",)
    assert len(lessons.plan(lessons.get("float32-float64"), NO_GPU).specs) == 2     # dtypes still differ


def test_a_lesson_whose_cpu_backends_alone_show_nothing_runs_none_of_them_without_a_gpu():
    p = lessons.plan(lessons.get("transfers"), NO_GPU)
    assert p.specs == () and "numpy alone would show nothing of this lesson: not run." in p.notes
    st = lessons.explain(p, results.to_frame([]))
    assert "Nothing of this lesson can run here." in st.text and "On a GPU: the kernel alone" in st.text


def test_a_lesson_with_no_cpu_backend_names_no_empty_one_without_a_gpu():
    p = lessons.plan(lessons.get("memory-wall"), NO_GPU)
    assert p.specs == () and not any("alone would show nothing" in n for n in p.notes)
    st = lessons.explain(p, results.to_frame([]))
    assert "Nothing of this lesson can run here." in st.text and "-  alone" not in st.text


def test_rows_of_several_runs_carry_their_run_in_the_variant():
    p = lessons.plan(lessons.get("float32-float64"), ALL_USABLE)
    r = row("numpy", 1024, 1e-3)
    assert lessons.tag(r, p, 1)["variant"] == "float64" and r["variant"] == ""
    single = lessons.plan(lessons.get("divergence"), ALL_USABLE)
    assert lessons.tag(row("numba", 8, 1.0, variant="sorted"), single, 0)["variant"] == "sorted"


def test_the_device_memory_limit_is_data_handed_on_where_the_sweep_has_the_field():
    ls = lessons.get("memory-wall")
    assert ls.device_memory_limit == 1280 * 2 ** 20
    from workbench.measure.engine import SweepSpec
    has_field = "device_memory_limit" in {f.name for f in dataclasses.fields(SweepSpec)}
    p = lessons.plan(ls, ALL_USABLE)
    if not has_field:
        assert any("cannot cap device memory yet" in n for n in p.notes)

    @dataclasses.dataclass(frozen=True)
    class AsBytes:
        device_memory_limit: int | None = None

    @dataclasses.dataclass(frozen=True)
    class AsText:
        device_memory_limit: str = ""

    assert core._with_device_limit(AsBytes(), ls.device_memory_limit).device_memory_limit == 1280 * 2 ** 20
    assert core._with_device_limit(AsText(), ls.device_memory_limit).device_memory_limit == "1280MiB"


def test_sizes_that_do_not_fit_in_host_memory_are_left_out_and_said(monkeypatch):
    from workbench.measure import engine

    def check(w, size, dtype):
        if size > 2 ** 20:
            raise engine.PlanError(f"too big: {size}")
    monkeypatch.setattr(engine, "check_memory", check)
    p = lessons.plan(lessons.get("small-problems"), ALL_USABLE)
    assert max(p.specs[0].sizes) == 2 ** 20
    assert any("2^22 left out: too big" in n for n in p.notes)


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

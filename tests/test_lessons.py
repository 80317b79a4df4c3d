"""Lessons: each declaration and each plan (the statements from synthetic rows are in
tests/test_lesson_statements.py and tests/test_lesson_wall_stacks_energy.py). No GPU, no engine."""
from __future__ import annotations

from lesson_rows import ALL_USABLE, NO_GPU, row

import dataclasses
import sys

import pytest

from workbench import lessons
from workbench.lessons import core
from workbench.results import rows as results
from workbench.catalog.backends import BACKENDS, Availability


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

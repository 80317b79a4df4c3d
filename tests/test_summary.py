"""The summary under the plots says only what the points show."""
from __future__ import annotations

from helpers import measured

import numpy as np
import pytest

from workbench.results import rows as results
from workbench.views.summary import comparisons, sentences, summarize


def frame_of(times: dict[str, list[float]], sizes: list[int], status: dict | None = None):
    rows = []
    for backend, ts in times.items():
        for size, t in zip(sizes, ts):
            st = (status or {}).get((backend, size), "ok")
            rows.append(measured(workload="source_terms", backend=backend, device="cpu", size=size,
                                          dtype="float32", total_median_s=t, compute_median_s=t,
                                          first_call_s=2 * t, h2d_s=0.0, d2h_s=0.0, status=st))
    return results.to_frame(rows)


SIZES = [2 ** k for k in range(10, 26, 2)]     # 2^10 ... 2^24


def test_a_win_in_the_middle_is_not_reported_as_from_a_size_on():
    """The bug of the first version: "numba beats numpy end-to-end from size 16,384" while numpy
    was faster at the largest size."""
    numpy_t = [1, 2, 4, 8, 16, 32, 64, 128]
    numba_t = [2, 3, 3, 5, 10, 40, 70, 200]       # faster at 2^14..2^18 only
    text = summarize(frame_of({"numpy": numpy_t, "numba": numba_t}, SIZES), "numpy")
    assert "numpy is faster than numba end to end at 2^24: 1.56x" in text
    assert "it wins only at 2^14 to 2^18" in text
    assert "from" not in text


def test_every_size_a_statement_names_is_a_win_and_every_win_is_named():
    rng = np.random.default_rng(8)
    for _ in range(200):
        sizes = SIZES[: rng.integers(1, len(SIZES) + 1)]
        base = rng.uniform(1, 2, len(sizes))
        other = rng.uniform(1, 2, len(sizes))
        frame = frame_of({"numpy": list(base), "numba": list(other)}, sizes)
        (c,) = comparisons(frame, "numpy")
        # Faster only beyond the 5 % minimum effect, with these +-1 % intervals.
        wins = {s for s, a, b in zip(sizes, other, base) if a / b < 1 / 1.05}
        named = {s for lo, hi in c.wins for s in sizes if lo <= s <= hi}
        assert named == wins
        sentence = c.sentence()
        losses = {s for s, a, b in zip(sizes, other, base) if a / b > 1.05}
        if not wins and losses == set(sizes):
            assert "stays faster" in sentence
        elif wins == set(sizes):
            assert "at every size" in sentence and "beats" in sentence


def test_a_failed_point_is_counted_and_not_compared():
    frame = frame_of({"numpy": [1, 1, 1], "numba": [0.5, 0.5, 0.5]}, SIZES[:3],
                     status={("numba", SIZES[2]): "implausible"})
    text = summarize(frame, "numpy")
    assert "<b>1</b> not ok (1 implausible)" in text
    (c,) = comparisons(frame, "numpy")
    assert c.sizes == tuple(SIZES[:2])


@pytest.mark.parametrize("baseline", ["numpy", "numba"])
def test_the_summary_follows_the_baseline(baseline):
    frame = frame_of({"numpy": [1, 1], "numba": [0.5, 0.5]}, SIZES[:2])
    other = {"numpy": "numba", "numba": "numpy"}[baseline]
    text = summarize(frame, baseline)
    assert ("numba is faster than numpy end to end at every size (2^10 to 2^12): 2x" in text) == (baseline == "numpy")
    assert ("numba is faster than numpy end to end at 2^12: 2x (1.96-2.04x)" in text) == (baseline == "numba")


def _frame_row(backend, size, total, compute, message=""):
    return measured(workload="groupby", backend=backend, size=size, dtype="float32", status="ok",
                             total_median_s=total, compute_median_s=compute, message=message,
                             host_memory="pageable" if backend != "pandas" else "")


def test_cudf_pandas_is_weighed_against_pandas_and_cudf_at_the_largest_common_size():
    from workbench.results import rows as results
    from workbench.views.summary import accelerator_sentences
    rows = [_frame_row("pandas", 10 ** 6, 0.20, 0.20), _frame_row("cudf", 10 ** 6, 0.05, 0.002),
            _frame_row("cudf-pandas", 10 ** 6, 0.004, 0.004,
                       "cudf.pandas: 3 pandas calls on the GPU, none fell back to the CPU"),
            _frame_row("pandas", 10 ** 3, 1e-4, 1e-4), _frame_row("cudf", 10 ** 3, 1e-3, 1e-4),
            _frame_row("cudf-pandas", 10 ** 3, 3e-3, 3e-3, "cudf.pandas: 1 pandas call on the GPU, 2 fell back to the "
                       "CPU (DataFrame.merge): pandas ran those, with copies between the devices")]
    ok = results.to_frame(rows)
    lines = accelerator_sentences(ok)
    assert lines[0].startswith("cudf.pandas at 1,000,000: the same pandas code runs 50x faster than pandas")
    assert "2x cuDF's own compute time (4 ms against 2 ms" in lines[0]
    assert lines[1].startswith("cudf.pandas fell back to the CPU for some calls at 1,000 (")   # not at 10^6: none
    # Where the accelerator loses, the sentence says so instead.
    slow = results.to_frame([_frame_row("pandas", 10 ** 3, 1e-4, 1e-4), _frame_row("cudf", 10 ** 3, 1e-3, 1e-4),
                             _frame_row("cudf-pandas", 10 ** 3, 3e-3, 3e-3)])
    assert "30x slower than pandas" in accelerator_sentences(slow)[0]
    assert accelerator_sentences(results.to_frame(rows[:2])) == []          # no cudf.pandas: nothing said


def test_the_rich_summary_escapes_names_and_stresses_only_its_figures():
    frame = frame_of({"numpy": [1, 1], "numba<!--": [0.5, 0.5]}, SIZES[:2])
    text = summarize(frame, "numpy")
    assert "numba&lt;!--" in text and "<!--" not in text
    assert "<b>4</b> points" in text


def test_one_sentence_a_backend_says_from_which_size_by_how_much_over_how_many_threads_and_why():
    """Issue 29: 'From 2^20 cells cupy-fused is 11x (10-13x) faster than numpy x1 end to end; its
    kernel runs at 96 % of HBM bandwidth', not lines of ranges."""
    sizes = SIZES[:4]
    frame = frame_of({"numpy": [1, 1, 10, 20], "gpu": [2, 1, 1, 2]}, sizes)
    frame.loc[frame["backend"] == "numpy", "threads"] = 1
    last = (frame["backend"] == "gpu") & (frame["size"] == sizes[-1])
    frame.loc[frame["backend"] == "gpu", "host_memory"] = "pinned"
    frame.loc[last, ["bound", "of_bound"]] = ["memory (device memory)", 0.96]
    (c,) = comparisons(frame, "numpy")
    assert c.headline() == ("gpu is faster than numpy x1 end to end from 2^14: 10x (9.8-10.2x) at 2^16; "
                            "its kernel runs at 96 % of the device memory bandwidth.")
    assert "undecided" not in c.headline() and "same" not in c.headline()


@pytest.mark.parametrize("bound,share,why", [
    ("launch", 0.12, "bound by its launch: device work is 12 % of a call"),
    ("transfer", 0.8, "bound by transfers: 80 % of end to end"),
    ("compute", 0.7, "its kernel runs at 70 % of the arithmetic peak"),
    ("unknown", 0.2, None), ("", float("nan"), None)])
def test_the_why_comes_from_the_bound_of_the_largest_point(bound, share, why):
    frame = frame_of({"numpy": [1, 1], "gpu": [0.5, 0.5]}, SIZES[:2])
    frame.loc[frame["backend"] == "gpu", ["host_memory", "bound", "of_bound"]] = ["pinned", bound, share]
    (c,) = comparisons(frame, "numpy")
    said = c.headline()
    assert (why in said) if why else said.endswith("at 2^12.")


def test_a_kernel_at_its_roof_inside_long_copies_says_both():
    """The H200's source_terms at 2^26: the kernel at 100 % of device memory, copies 99 % of end to end."""
    frame = frame_of({"numpy": [1, 1], "gpu": [0.5, 0.5]}, SIZES[:2])
    gpu = frame["backend"] == "gpu"
    frame.loc[gpu, ["host_memory", "bound", "of_bound"]] = ["pageable", "memory (device memory)", 1.0]
    frame.loc[gpu, "h2d_s"] = 0.6 * frame.loc[gpu, "total_median_s"]
    frame.loc[gpu, "d2h_s"] = 0.3 * frame.loc[gpu, "total_median_s"]
    (c,) = comparisons(frame, "numpy")
    assert c.headline().endswith("its kernel runs at 100 % of the device memory bandwidth; transfers take "
                                 "90 % of its end-to-end time.")


def _without_intervals(frame):
    for figure in ("total", "compute"):
        frame[f"{figure}_ci_lo_s"] = np.nan
        frame[f"{figure}_ci_hi_s"] = np.nan
    return frame


def test_results_without_intervals_say_so_once_and_call_no_backend_faster():
    """An older file has medians and no intervals: "numba and numpy are not told apart" claimed a
    measurement that could not separate 6 ms from 100 ms (issue 38). It says once that nothing can
    be decided, and gives the medians alone, fastest first."""
    sizes = [2 ** 10, 2 ** 26]
    times = {"numpy": [1e-5, 0.108], "numba": [2e-5, 0.00613], "cupy": [3e-5, 0.088]}
    text = " ".join(sentences(_without_intervals(frame_of(times, sizes)), "numpy"))
    assert "not told apart" not in text and " is faster than " not in text and "Fastest" not in text
    assert text.count("no intervals of their medians") == 1
    assert "no backend is called faster than another" in text
    assert "the medians alone, end to end at 2^26: numba 6.13 ms, cupy 88 ms, numpy 108 ms." in text


def test_results_with_intervals_keep_their_verdicts_and_wording():
    sizes = [2 ** 10, 2 ** 26]
    times = {"numpy": [1e-5, 0.108], "numba": [2e-5, 0.00613], "cupy": [3e-5, 0.0062]}
    lines = sentences(frame_of(times, sizes), "numpy")
    text = " ".join(lines)
    assert "no interval" not in text and "medians alone" not in text
    assert "Fastest end-to-end at 2^26: numba (6.13 ms), the same as cupy (6.2 ms)." in lines
    assert any(line.startswith("numba is faster than numpy end to end from 2^26: 17.") for line in lines)


def test_one_backend_without_intervals_is_named_and_the_others_keep_their_verdicts():
    frame = frame_of({"numpy": [1e-5, 0.108], "numba": [2e-5, 0.00613], "cupy": [3e-5, 0.088]}, [2 ** 10, 2 ** 26])
    blind = frame["backend"] == "cupy"
    frame.loc[blind, ["total_ci_lo_s", "total_ci_hi_s", "compute_ci_lo_s", "compute_ci_hi_s"]] = np.nan
    lines = sentences(frame, "numpy")
    assert "cupy has no interval of its median at 2^26" in " ".join(lines)
    assert any(line.startswith("numba is faster than numpy end to end from 2^26: 17.") for line in lines)
    assert not any("not told apart" in line and "cupy" in line for line in lines)

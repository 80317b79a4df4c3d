"""The summary under the plots says only what the points show."""
from __future__ import annotations

from helpers import measured

import numpy as np
import pytest

from workbench.results import rows as results
from workbench.views.summary import comparisons, summarize


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
    assert "numba beats numpy end-to-end only at 2^14 to 2^18" in text
    assert "from" not in text
    assert "2^24" not in text.split("beats")[1].split(";")[0]


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
    assert (f"{other} beats {baseline}" in text) == (baseline == "numpy")
    assert (f"{baseline} stays faster than {other}" in text) == (baseline == "numba")


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

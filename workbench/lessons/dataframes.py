"""cuDF against pandas against cudf.pandas: far ahead on large tables, not on small ones; the proxies' cost."""
from __future__ import annotations

from workbench.core.sizes import fmt_size
from workbench.lessons import claims
from workbench.lessons.core import TENS, Lesson
from workbench.lessons.measured import Measured, crossing
from workbench.lessons.say import Say, faster, times
from workbench.results.rows import human_seconds
from workbench.views.summary import fell_back

LESSON = Lesson(
    order=90,
    name="dataframes", title="cuDF against pandas against cudf.pandas",
    claim="cuDF is far ahead of pandas on large tables (joins, group-bys); on small tables pandas is as fast "
          "or faster. cudf.pandas runs unchanged pandas code on the GPU, at some overhead over cuDF itself.",
    workload="groupby", backends=("pandas", "cudf", "cudf-pandas"), sizes=TENS, baseline="pandas",
    chart="speedup",
    on_gpu="cuDF's group-by is far faster than pandas on millions of rows, less so once the conversion from "
           "and back to pandas is counted: on the H200 of docs/PERFORMANCE.md, 27x on the group-by alone "
           "at 10 million rows, 3.7x end-to-end; cudf.pandas 3.6x end to end, its call 1.5x cuDF's own.")


def explain(m: Measured, ls: Lesson, say: Say) -> None:
    base = ls.baseline
    if m.has("cudf"):
        s = m.largest(["cudf", base])
        if s is not None:
            alone = m.value(base, s, "compute_median_s") / m.value("cudf", s, "compute_median_s")
            end = m.value(base, s, "total_median_s") / m.value("cudf", s, "total_median_s")
            v = m.verdict("cudf", base, s)
            say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                       f"At {fmt_size(s)} rows cuDF's group-by alone is {times(alone)} pandas; with the conversion "
                       f"from and back to pandas {times(end)}.",
                       f"At {fmt_size(s)} rows cuDF was not faster than pandas end-to-end ({times(end)}; the "
                       f"group-by alone {times(alone)}).", v)
        c = crossing(m, "cudf", base)
        if c is not None:
            claims.break_even(m, say, "cudf", base, c, "end-to-end (conversions included)")
    if m.has("cudf-pandas"):
        s = m.largest(["cudf-pandas", base])
        if s is not None:
            # Like with like: end to end, both pandas in and pandas out (cudf.pandas moves its frames
            # to the GPU and the result back, as cuDF's conversions do); the calls alone, both on
            # frames already where they run.
            tp, tc = m.value(base, s, "total_median_s"), m.value("cudf-pandas", s, "total_median_s")
            cp, cc = m.value(base, s, "compute_median_s"), m.value("cudf-pandas", s, "compute_median_s")
            over = ""
            if m.has("cudf") and m.row("cudf", s) is not None:
                over = f"; {times(cc / m.value('cudf', s, 'compute_median_s'))} cuDF's own time for the same " \
                       "call (the cost of its proxies)"
            calls = f"the pandas call alone {times(cp / cc)} pandas's{over}"
            said = f"at {fmt_size(s)} rows, end to end (the frame to the GPU and the result back included)"
            why = "moving the frame ate the gain" if cp > cc else "the call itself was not faster"
            v = m.verdict("cudf-pandas", base, s)
            say.decide(None if v.verdict == "undecided" else v.verdict == "faster",
                       f"cudf.pandas ran the unchanged pandas code {faster(tc, tp)} than pandas {said}; {calls}.",
                       f"cudf.pandas was {faster(tc, tp)} than plain pandas {said}"
                       + (" (the same within the noise)" if v.verdict == "same" else "") + f": {why}; {calls}.", v)
            fell = fell_back(m.rows("cudf-pandas"))
            if not fell.empty:
                say.note("Some pandas calls fell back to the CPU under cudf.pandas at "
                         + ", ".join(fmt_size(int(x)) for x in fell["size"]) + " rows (the points' messages say which).")
    if not m.has("cudf") and m.has(base):
        s = int(m.rows(base)["size"].max())
        say.note(f"pandas took {human_seconds(m.value(base, s, 'total_median_s'))} at {fmt_size(s)} rows.")

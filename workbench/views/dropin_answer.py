"""The answer a drop-in gives, in one sentence (issue 36): whether the user's function ran
unchanged there, from which size it wins end to end and by how much, and why; or why it did not run.

Read from the rows alone (``workbench.catalog.dropin`` names the drop-ins), so the window, the
report, the command line and ``workbench.sweep``'s frame say the same."""
from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.catalog.dropin import NAMES
from workbench.views.summary import Comparison, comparisons, named

if TYPE_CHECKING:
    import pandas as pd

#: What an error row's message starts with before the drop-in's own words.
_RAISED = "DropInError: "


def answers(frame: "pd.DataFrame", baseline: str = "numpy") -> dict[str, str]:
    """{drop-in: its sentence} for each drop-in in ``frame``, set against ``baseline``."""
    if frame.empty or baseline not in set(frame["backend"]):
        return {}
    said: dict[str, str] = {}
    against = {c.backend: c for c in comparisons(frame[frame["backend"].isin([baseline, *NAMES])], baseline)}
    for name in NAMES:
        rows = frame[frame["backend"] == name]
        if rows.empty:
            continue
        f = str(rows["workload"].iloc[0])
        ok, wrong = rows[rows["status"] == "ok"], rows[rows["status"] == "wrong"]
        if not wrong.empty:
            said[name] = (f"{f} runs as {name} but gives wrong results: {_reason(wrong)}; "
                          "no figure of it counts.")
        elif ok.empty:
            said[name] = f"{f} does not run unchanged as {name}: {_reason(rows)}."
        elif name in against:
            said[name] = f"{f} runs unchanged as {name}: {_unnamed(against[name])}"
        else:
            said[name] = f"{f} runs unchanged as {name}, at no size {baseline} also measured."
    return said


def _unnamed(c: Comparison) -> str:
    """The headline without the drop-in's name in front, which the sentence has said already."""
    headline, me = c.headline(), named(c.label, c.last[0])
    if headline.startswith(me + " is "):
        return headline[len(me) + 4:]
    return "it" + headline[len(me):] if headline.startswith(me + " and ") else headline


def _reason(rows: "pd.DataFrame") -> str:
    message = next((str(m) for m in rows["message"] if str(m)), "no message")
    return message.split(_RAISED, 1)[-1].split("; ")[0].rstrip(".")

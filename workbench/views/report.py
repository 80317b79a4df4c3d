"""A one-file report of one or several result sets: HTML that opens offline anywhere, or PDF.

The HTML holds everything inline: every chart as SVG (text stays text, so the page can
be searched and copied from), the summary and the workload's lesson, the result table and
the environment. It names no external URL: no fonts, scripts or styles to fetch.
"""
from __future__ import annotations

import html
import json
import logging
import re
import textwrap
from pathlib import Path
from typing import Sequence

from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from workbench.catalog.workloads import REGISTRY
from workbench.core import atomic
from workbench.views import matplotlib_charts as charts
from workbench.views import provenance
from workbench.views import summary
from workbench.measure.environment import format_record
from workbench.results.files import ResultSet
from workbench.views.table_text import readable_table

log = logging.getLogger(__name__)

REPORT_FORMATS = (".html", ".pdf")
#: Charts in the report: a 16:9 slide a little smaller than full HD, scaled by the page's width.
CHART_PRESET = charts.preset(size=(1600, 900))

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; } .stamp { color: #666; font-size: 0.9em; }
figure { margin: 1.5em 0; } figure svg { width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
tr.notok td { background: #fde8e8; } pre { background: #f8f8f8; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
"""


def title(sets: Sequence[ResultSet]) -> str:
    shared = [rs.frame["workload"] for rs in sets]
    workloads = list(dict.fromkeys(w for col in shared for w in col if w))
    return "GPU Workbench: " + (", ".join(workloads) or "results")


def html_report(sets: Sequence[ResultSet], *, stamp: bool = True, baseline_name: str | None = None) -> str:
    """The report as one HTML document."""
    labels = provenance.labels(sets)
    b = charts.baseline(sets, baseline_name, labels)
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>{_e(title(sets))}</title><style>{_CSS}</style></head><body>",
             f"<h1>{_e(title(sets))}</h1>", f"<p class=\"stamp\">{_e(provenance.stamp(sets))}</p>"]
    parts.append("<h2>Summary</h2>")
    for rs, label in zip(sets, labels):
        baseline_here = b.backend if (rs.frame["backend"] == b.backend).any() else _first_backend(rs)
        heading = f"<h3>{_e(label)}</h3>" if label else ""
        parts.append(heading + "<ul>" + "".join(f"<li>{_e(s)}</li>" for s in
                                               summary.sentences(rs.frame, baseline_here, ranges=True)) + "</ul>")
    for told in _told(sets):
        parts.append(f"<h2 id=\"lesson\">Lesson: {_e(told.get('title') or told.get('name', ''))}</h2>"
                     f"<p><b>{_e(told.get('verdict', ''))}</b> {_e(told['statement'])}</p>")
    parts += [f"<p><b>{_e(w)}</b>: {_e(text)}</p>" for w, text in _lessons(sets)]
    parts.append("<h2>Charts</h2>")
    for kind in charts.KINDS:
        svg = charts.render(kind, sets, "svg", CHART_PRESET, stamp=stamp, baseline_name=baseline_name,
                            labels=labels).decode("utf-8")
        parts.append(f"<figure id=\"chart-{kind}\">{_inline(svg)}</figure>")
    parts.append("<h2>Results</h2>")
    for rs, label in zip(sets, labels):
        parts.append((f"<h3>{_e(label)}</h3>" if label else "") + _table(rs))
    parts.append("<h2>Environment and settings</h2>")
    for rs, label in zip(sets, labels):
        where = ", ".join(x for x in (rs.host and f"host {rs.host}", rs.written and f"written {rs.written}",
                                      rs.source and f"from {Path(rs.source).name}") if x)
        parts.append((f"<h3>{_e(label)}</h3>" if label else "") + (f"<p>{_e(where)}</p>" if where else "")
                     + f"<pre>{_e(format_record(rs.environment))}</pre>"
                     + (f"<pre>{_e(_settings_text(rs.settings))}</pre>" if rs.settings else ""))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _settings_text(settings: dict) -> str:
    """One line per setting: the sweep's sizes stay on one line."""
    return "\n".join(f"{key}: {json.dumps(value)}" for key, value in settings.items())


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _first_backend(rs: ResultSet) -> str:
    return str(rs.frame["backend"].iloc[0]) if len(rs.frame) else ""


def _told(sets: Sequence[ResultSet]) -> list[dict]:
    """The lesson statements the sets carry (``gpu-workbench lesson --out``, the window's export)."""
    return [rs.settings["lesson"] for rs in sets
            if isinstance(rs.settings.get("lesson"), dict) and rs.settings["lesson"].get("statement")]


def _lessons(sets: Sequence[ResultSet]) -> list[tuple[str, str]]:
    """Each workload's lesson, as the registry states it (left out for a plug-in not loaded here)."""
    out = []
    for name in dict.fromkeys(w for rs in sets for w in rs.frame["workload"] if w):
        try:
            out.append((name, REGISTRY.get(name).lesson))
        except KeyError:
            continue
    return out


def _inline(svg: str) -> str:
    """An SVG file's root element, for inlining: the XML declaration and DOCTYPE (which names a URL) go."""
    return svg[svg.index("<svg"):]


def _table(rs: ResultSet) -> str:
    """The result table; rows that are not ok are shaded and carry their message as a tooltip."""
    show = readable_table(rs.frame) if len(rs.frame) else None
    if show is None:
        return "<p>(no points)</p>"
    head = "<tr>" + "".join(f"<th>{_e(c)}</th>" for c in show.columns) + "</tr>"
    rows = []
    for (_, row), status, message in zip(show.iterrows(), rs.frame["status"], rs.frame["message"]):
        attrs = "" if status == "ok" else f" class=\"notok\" title=\"{_e(message)}\""
        rows.append(f"<tr{attrs}>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def write(sets: Sequence[ResultSet], path: str | Path, *, stamp: bool = True,
          baseline_name: str | None = None) -> Path:
    """Write the report as ``.html`` (self-contained) or ``.pdf`` (a summary page, then one page per chart)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ValueError(f"cannot write {path.name}: the report must end in .html or .pdf")
    if suffix == ".html":
        atomic.write_text(path, html_report(sets, stamp=stamp, baseline_name=baseline_name))
    else:
        _pdf(sets, path, stamp=stamp, baseline_name=baseline_name)
    return path


def _pdf(sets: Sequence[ResultSet], path: Path, *, stamp: bool, baseline_name: str | None) -> None:
    labels = provenance.labels(sets)
    b = charts.baseline(sets, baseline_name, labels)
    lines = [title(sets), provenance.stamp(sets), ""]
    for rs, label in zip(sets, labels):
        lines += ([label] if label else []) + ["  " + s for s in summary.sentences(
            rs.frame, b.backend if (rs.frame["backend"] == b.backend).any() else _first_backend(rs), ranges=True)] + [""]
    lines += [charts.lesson_caption(told) for told in _told(sets)] + [""] if _told(sets) else []
    lines += [f"{w}: {text}" for w, text in _lessons(sets)]
    p = charts.preset()
    with charts.style(p), atomic.replacing(path) as f, PdfPages(f, metadata={"CreationDate": None}) as pdf:
        page = Figure(figsize=(p.width_in, p.height_in))
        wrapped = [w for line in lines for w in (_wrap(line, 110) or [""])]
        page.text(0.05, 0.95, "\n".join(wrapped), va="top", ha="left", fontsize=0.8 * p.font_pt, linespacing=1.4)
        pdf.savefig(page)
        for kind in charts.KINDS:
            pdf.savefig(charts.figure(kind, sets, p, stamp=stamp, baseline_name=baseline_name, labels=labels))


def _wrap(line: str, width: int) -> list[str]:
    indent = re.match(r"\s*", line).group(0)
    return textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False)

"""The one-file report (HTML that opens offline, and PDF) and the summary sentences it carries."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from helpers import result_set, measured

from workbench.views import report
from workbench.views.presets import KINDS
from workbench.results import rows as results
from workbench.views import summary


class _Collect(HTMLParser):
    """Tags, attributes and text of a page, and whether every opened element was closed."""

    VOID = {"meta", "br", "img", "hr", "input", "link"}

    def __init__(self):
        super().__init__()
        self.tags, self.text, self.stack = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> _Collect:
    c = _Collect()
    c.feed(page)
    c.close()
    assert c.stack == []
    return c


def test_html_report_is_self_contained_and_holds_everything(tmp_path):
    rs = result_set()
    rs.frame.loc[rs.frame["status"] == "error", "message"] = "<script>alert(1)</script>"
    path = report.write([rs], tmp_path / "r.html")
    page = path.read_text()
    doc = parse(page)
    svgs = [a for t, a in doc.tags if t == "svg"]
    assert len(svgs) == len(KINDS)                                   # every chart, inline
    text = " ".join(doc.text)
    for expected in ("Runtime", "Speedup over numpy", "Where GPU end-to-end time goes", "Peak memory",
                     "First call vs steady call", "Elementwise work is bound by memory bandwidth",
                     "cpu: Test CPU", "14 points, 2 not ok (1 error, 1 implausible).", "Summary"):
        assert expected in text, expected
    # Offline: nothing to fetch. (SVG namespace declarations are names, not downloads.)
    for tag, attrs in doc.tags:
        for key in ("src", "href", "xlink:href"):
            assert not re.match(r"\s*(https?:)?//", attrs.get(key) or ""), (tag, attrs)
    assert "@import" not in page and "url(http" not in page and "<!DOCTYPE svg" not in page
    assert "<script" not in page                                     # the message is escaped
    rows = [a for t, a in doc.tags if t == "tr"]
    assert len(rows) == 1 + len(rs.frame)                            # header and one row per point
    assert sum(a.get("class") == "notok" for a in rows) == 2
    assert any(a.get("title") == "<script>alert(1)</script>" for a in rows)


def test_compare_report_labels_each_set(tmp_path):
    page = report.html_report([result_set("float32"), result_set("float64")])
    headings = re.findall(r"<h3>([^<]*)</h3>", page)
    assert headings.count("float32") == 3 and headings.count("float64") == 3   # summary, table, environment


def test_pdf_report_has_a_summary_page_and_one_page_per_chart(tmp_path):
    path = report.write([result_set()], tmp_path / "r.pdf")
    assert len(re.findall(rb"/Type\s*/Page\b", path.read_bytes())) == 1 + len(KINDS)


def test_report_refuses_other_suffixes(tmp_path):
    with pytest.raises(ValueError, match=".html or .pdf"):
        report.write([result_set()], tmp_path / "r.txt")


def test_ranges_of_sizes():
    sizes = [1, 2, 4, 8, 16]
    assert summary.ranges(sizes, [True, True, False, True, False]) == [(1, 2), (8, 8)]
    assert summary.ranges(sizes, [False, False, False, True, True]) == [(8, 16)]
    assert summary.ranges(sizes, [False] * 5) == []


def test_summary_never_claims_a_win_that_a_larger_size_contradicts():
    """issue 8: 'numba beats numpy from size 16,384' while numpy was faster at the largest size."""
    rows = []
    for size, numba_time in ((2 ** 10, 2.0), (2 ** 12, 0.5), (2 ** 14, 0.5), (2 ** 16, 2.0)):
        for backend, t in (("numpy", 1.0), ("numba", numba_time)):
            rows.append(measured(workload="source_terms", backend=backend, size=size, dtype="float32",
                                          total_median_s=t, compute_median_s=t, first_call_s=t, status="ok"))
    text = summary.sentences(results.to_frame(rows), "numpy", ranges=True)
    assert "numpy is faster than numba end to end at 2^16: 2x (1.96-2.04x); it wins only at 2^12 to 2^14." in text
    assert "Size by size: numba beats numpy end-to-end only at 2^12 to 2^14; numpy is faster elsewhere." in text
    assert "Fastest end-to-end at 2^16: numpy (1 s)." in text


def test_a_lessons_statement_goes_into_the_report(tmp_path):
    rs = result_set()
    rs.settings["lesson"] = {"name": "transfers", "title": "Transfers eat the speedup",
                             "verdict": "Measured here: not as the lesson says.",
                             "statement": "At 2^16, transfers took only 3 % of cupy's end-to-end time.", "marks": []}
    doc = parse(report.write([rs], tmp_path / "r.html").read_text())
    assert ("h2", {"id": "lesson"}) in doc.tags
    text = " ".join(doc.text)
    assert "Lesson: Transfers eat the speedup" in text
    assert "Measured here: not as the lesson says. At 2^16, transfers took only 3 % of cupy's" in text
    pdf = report.write([rs], tmp_path / "r.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")

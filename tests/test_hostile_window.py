"""Hostile input in the window (issue 18): a FIFO or a device opened changes nothing and never hangs,
and names (a backend called <b>, numba<!--, $x$) are shown as the text they are, never as markup."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from session import open_files  # noqa: E402
from test_gui import window  # noqa: E402,F401 - the fixture
from test_hostile_input import fifo, named_set  # noqa: E402,F401 - fifo is a fixture

from workbench.results import files as result_files  # noqa: E402


def test_the_window_opens_a_fifo_and_dev_zero_without_hanging(qtbot, window, fifo):
    """Read by the file job: a read that blocked would never answer, and waitSignal would fail."""
    w = window
    for path in (fifo, Path("/dev/zero")):
        for ask in (lambda: w.files.open_results([path]), lambda: w.files.open_session(path)):
            with qtbot.waitSignal(w.files.problem, timeout=20_000) as said:
                assert ask()
            assert said.args[0] == w.notice.label.text()
            assert f"cannot open {path}: is a" in said.args[0] and "Nothing on screen has changed" in said.args[0]


def test_the_window_shows_names_as_plain_text(window, tmp_path, qtbot):
    from html import escape

    from PySide6.QtWidgets import QLabel
    w = window
    names = ["<b>bold</b>", "numba<!--", "$x$"]
    rs = named_set(names)
    rs.frame.loc[rs.frame["status"] != "ok", "message"] = "<i>failed</i> in numba<!--"
    path = result_files.write(rs, tmp_path / "r.csv")
    open_files(qtbot, w, [path])
    strip = [lb for lb in w.findChildren(QLabel) if lb.text() in names]
    assert {lb.text() for lb in strip} == set(names), [lb.text() for lb in w.findChildren(QLabel)][:40]
    assert all(lb.textFormat() == Qt.TextFormat.PlainText for lb in strip)
    summary = w.findChild(QLabel, "plotSummary").text()
    assert "numba<!--" not in summary and escape("numba<!--") in summary, summary    # escaped, and what follows shows
    model = w.resultsTable.model()
    source = getattr(model, "sourceModel", lambda: model)()
    tips = [source.data(source.index(r, 0), Qt.ItemDataRole.ToolTipRole) for r in range(source.rowCount())]
    tips = [t for t in tips if t]
    assert tips and all("&lt;i&gt;failed&lt;/i&gt; in numba&lt;!--" in t and "<i>" not in t for t in tips)
    w.files.say_problem("cannot open <b>x</b>.csv: numba<!--")
    assert w.notice.label.text() == "cannot open <b>x</b>.csv: numba<!--"
    assert w.notice.label.textFormat() == Qt.TextFormat.PlainText

"""One window through a long, varied session, as on stage; and seeded random sessions.

What must hold after every sweep is checked in ``session.Session.check``: every finished
point in the table, every chart showing exactly the current sweep's points, the workload
unchanged by a click during the sweep. The window fixture checks, after closing, that no
thread, timer or engine process is left.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from session import QtBotWaiter, Session, long_session, play, random_session  # noqa: E402
from test_gui import window  # noqa: E402,F401 - the fixture


def test_a_long_session_of_sweeps_stops_switches_and_exports(qtbot, window, tmp_path):
    s = Session(window, QtBotWaiter(qtbot))
    plan = long_session()
    assert len(plan) >= 15
    assert {p.dtype for p in plan} == {"float32", "float64"} and any(p.stop for p in plan)
    stopped = 0
    for i, sweep in enumerate(plan):
        stopped += s.run(sweep)
        if i % 4 == 3:
            s.export(tmp_path)
    assert s.sweeps == len(plan)
    assert stopped >= 1                   # the long matmul sweep was stopped in the middle


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_random_session(qtbot, window, tmp_path, seed):
    s = Session(window, QtBotWaiter(qtbot))
    play(s, random_session(seed, n=7), tmp_path)
    assert window.isVisible()

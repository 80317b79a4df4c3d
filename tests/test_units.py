"""One way to write a time, in the table, the exported charts and the window's axes."""
from __future__ import annotations

import math

import pytest

from workbench.views import matplotlib_charts as charts
from workbench.results import rows as results
from workbench.core import units


@pytest.mark.parametrize("value,text", [(1.0, "1 s"), (0.0012, "1.2 ms"), (1e-5, "10 µs"), (5.41e-6, "5.41 µs"),
                                        (0.0009997, "1 ms"), (2e-9, "2 ns"), (1e-12, "0.001 ns"),
                                        (math.nan, "-"), (None, "-")])
def test_a_time_is_written_once_and_everywhere_alike(qapp, value, text):
    from panels import axes
    assert units.seconds(value) == text and results.human_seconds(value) == text
    if value is not None and not math.isnan(value):
        assert charts.time_label(value) == text and axes.fmt_time(value) == text

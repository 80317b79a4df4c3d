"""One way to write each kind of number, in the table, the exported charts, the window's axes, the
summary, the lessons and the messages."""
from __future__ import annotations

import math

import pytest

from workbench.results import rows as results
from workbench.core import sizes, units


@pytest.mark.parametrize("value,text", [(1.0, "1 s"), (0.0012, "1.2 ms"), (1e-5, "10 µs"), (5.41e-6, "5.41 µs"),
                                        (0.0009997, "1 ms"), (2e-9, "2 ns"), (1e-12, "0.001 ns"),
                                        (1234.0, "1,234 s"), (math.nan, "-"), (None, "-")])
def test_a_time_is_written_once_and_everywhere_alike(qapp, value, text):
    from panels import axes
    assert units.seconds(value) == text and results.human_seconds(value) == text
    if value is not None and not math.isnan(value):
        assert axes.fmt_time(value) == text


@pytest.mark.parametrize("value,text", [(0, "0 B"), (1000, "1,000 B"), (1023.9, "1 KiB"), (2 ** 18, "256 KiB"),
                                        (384 * 2 ** 10, "384 KiB"), (1.5 * 2 ** 20, "1.5 MiB"),
                                        (1.25 * 2 ** 30, "1.25 GiB"), (3 * 2 ** 40, "3 TiB"),
                                        (5000 * 2 ** 40, "5,000 TiB"), (math.nan, "-"), (None, "-")])
def test_an_amount_of_memory_is_written_once_and_everywhere_alike(qapp, value, text):
    from panels import axes
    assert units.nbytes(value) == text and results.human_bytes(value) == text
    if value is not None and not math.isnan(value):
        assert axes.fmt_bytes(value) == text


def test_no_formatter_writes_us_or_an_exponent():
    for v in (1e-7, 3.3e-6, 999e-6, 1e3, 1e5):
        assert "us" not in units.seconds(v) and "e+" not in units.seconds(v)
    for v in (999.0, 1e6, 1e12, 1e15):
        assert "e+" not in units.nbytes(v) and "e+" not in units.count(v)


@pytest.mark.parametrize("value,text,axis", [(2 ** 20, "2^20", "2²⁰"), (1024, "2^10", "2¹⁰"), (3000, "3,000", "3k")])
def test_powers_of_two_in_text_and_on_an_axis(value, text, axis):
    assert units.power(value) == text and units.power(value, superscript=True) == axis


@pytest.mark.parametrize("value,text", [(2 ** 20, "2^20"), (2 ** 10, "2^10"), (512, "512"), (10_000, "10,000"),
                                        (0, "0")])
def test_a_size_reads_back_as_it_is_written(value, text):
    assert units.size(value) == text and sizes.fmt_size(value) == text
    assert sizes.parse_int(text) == value


def test_speedups_counts_and_shares():
    assert [units.speedup(v) for v in (2.0, 0.5, 1.25, 1234.0)] == ["2×", "0.5×", "1.25×", "1,234×"]
    assert [units.count(v) for v in (300, 1000, 2.5e6, 1e9)] == ["300", "1k", "2.5M", "1G"]
    assert units.percent(25.0) == "25"
    assert units.formatter("speedup")(2.0) == "2×" and units.formatter("no such kind")(2.0) == "2"

"""Hostile input from files and the command line (issue 18): what is read is only a regular file of a
sane size, every value in it is checked, and what it holds is drawn and exported as the text it is.

Each refusal is one line naming the file (and for a value, its row and column); the command line
says it with exit status 2. Commands that could hang run in a subprocess with a time limit.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest
from helpers import result_set

from workbench.core import regular_file
from workbench.results import files as result_files
from workbench.results import session_file
from workbench.results.files import ResultsFileError, open_results

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, cwd=None, timeout=120):
    """The command as a user runs it, from ``cwd`` (this clone's package on the path either way)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, env=env)


def refused(proc, *expected: str) -> str:
    """Exit status 2 and one line on stderr, holding each expected piece; nothing on stdout."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for piece in expected:
        assert piece in lines[0], lines[0]
    assert proc.stdout == ""
    return lines[0]


def in_time(fn, *args, seconds: float = 20):
    """fn(*args) in a thread; fails (instead of hanging the suite) if it has not returned in time."""
    out: dict = {}

    def call():
        try:
            out["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc
    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn.__name__} still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "results.csv"
    os.mkfifo(path)
    return path


# Reads: only regular files, of a sane size -------------------------------------------------------

def test_a_fifo_is_refused_without_blocking(fifo):
    for read in (open_results, result_files.read_json, session_file.load):
        with pytest.raises(ResultsFileError, match="is a FIFO") as info:
            in_time(read, fifo)
        assert str(info.value).startswith(f"cannot open {fifo}: ") and "\n" not in str(info.value)


def test_a_fifo_named_by_a_sidecar_is_refused(tmp_path):
    path = result_files.write(result_set(), tmp_path / "r.csv")
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ResultsFileError, match=r"r\.csv: is a FIFO"):
        in_time(open_results, tmp_path / "r.meta.json")


def test_a_fifo_swapped_in_after_the_check_does_not_block(fifo, monkeypatch):
    """The stat saw a regular file; the FIFO opened in its place is refused from the opened descriptor."""
    real = os.stat
    monkeypatch.setattr(regular_file.os, "stat", lambda p, *a, **k: real(__file__))
    with pytest.raises(ResultsFileError, match="is a FIFO"):
        in_time(open_results, fifo)


@pytest.mark.parametrize("command", ["plot", "report"])
def test_the_command_line_refuses_a_fifo_in_one_line(fifo, tmp_path, command):
    out = ["--chart", tmp_path / "c.svg"] if command == "plot" else ["--out", tmp_path / "r.html"]
    refused(cli(command, fifo, *out, timeout=60), f"cannot open {fifo}: is a FIFO")


def test_a_device_is_refused():
    with pytest.raises(ResultsFileError, match="cannot open /dev/zero: is a device"):
        in_time(open_results, "/dev/zero")


def test_the_command_line_refuses_dev_zero(tmp_path):
    refused(cli("plot", "/dev/zero", "--chart", tmp_path / "c.svg", timeout=60), "/dev/zero: is a device")


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:     # sparse: no disk is spent
        f.truncate(result_files.MAX_FILE_BYTES + 1)
    with pytest.raises(ResultsFileError, match="too large for a results file.*at most 512 MiB"):
        in_time(open_results, path)
    with pytest.raises(ResultsFileError, match="too large"):
        in_time(session_file.load, path)
    refused(cli("report", path, "--out", tmp_path / "r.html", timeout=60), str(path), "too large")


def test_a_file_at_the_limit_is_still_read_as_far_as_its_content(tmp_path, monkeypatch):
    """The limit refuses by size only: a valid file just under it opens."""
    path = result_files.write(result_set(), tmp_path / "r.json")
    monkeypatch.setattr(result_files, "MAX_FILE_BYTES", path.stat().st_size)
    assert len(open_results(path).frame) == len(result_set().frame)
    monkeypatch.setattr(result_files, "MAX_FILE_BYTES", path.stat().st_size - 1)
    with pytest.raises(ResultsFileError, match="too large"):
        open_results(path)


# Values: each checked, refused by file, row and column --------------------------------------------

BAD_TIMES = [("1e308", "not a time in seconds"), ("1e-320", "not a time in seconds"),
             ("NaN", "not a number (NaN"), ("nan", "not a number (NaN"), ("abc", "'abc' is not a number"),
             ("-1.5", "not a time in seconds"), ("-0.000001", "not a time in seconds"),
             ("inf", "not a finite number"), ("-inf", "not a finite number"), ("1e7", "not a time in seconds")]


def _rows(**cells) -> list[dict]:
    rows = result_files.document(result_set())["rows"]
    rows[2].update(cells)       # the third row: the message must say row 3
    return rows


@pytest.mark.parametrize("text, expected", BAD_TIMES)
@pytest.mark.parametrize("column", ["total_median_s", "compute_median_s", "first_call_s", "h2d_s"])
def test_a_bad_time_in_a_csv_names_file_row_and_column(tmp_path, column, text, expected):
    path = result_files.write(result_set(), tmp_path / "r.csv")
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    table[3][table[0].index(column)] = text          # the third row after the header
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(table)
    with pytest.raises(ResultsFileError) as info:
        open_results(path)
    message = str(info.value)
    assert message.startswith(f"cannot open {path}: column {column}, row 3: ") and expected in message, message
    assert "\n" not in message


@pytest.mark.parametrize("value, expected", [(1e308, "not a time"), (1e-320, "not a time"), (-1.0, "not a time"),
                                             ("abc", "is not a number"), (True, "is not a number")])
def test_a_bad_time_in_json_names_file_row_and_column(tmp_path, value, expected):
    path = tmp_path / "r.json"
    doc = result_files.document(result_set())
    doc["rows"] = _rows(total_median_s=value)
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError, match=f"{path}: column total_median_s, row 3: .*{expected}"):
        open_results(path)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_json_nan_and_infinity_tokens_are_refused_by_row(tmp_path, token):
    """Python's json reads NaN and Infinity, which are not JSON: a figure of them is refused, where
    null (how NaN is written) reads as a figure not measured."""
    path = tmp_path / "r.json"
    doc = result_files.document(result_set())
    doc["rows"] = _rows(compute_median_s="@@")
    path.write_text(json.dumps(doc).replace('"@@"', token))
    with pytest.raises(ResultsFileError, match=r"column compute_median_s, row 3: .*not a (finite )?number"):
        open_results(path)
    path.write_text(json.dumps(doc).replace('"@@"', "null"))
    assert open_results(path).frame["compute_median_s"].isna().iloc[2]


@pytest.mark.parametrize("column, value", [("peak_host_bytes", -1.0), ("peak_device_bytes", 1e300),
                                           ("gflops", -2.0), ("gbps", 1e308), ("others_cores", 1e300),
                                           ("noise", -0.5), ("size", 0), ("size", -4), ("size", 1.5)])
def test_other_figures_out_of_range_are_refused(tmp_path, column, value):
    path = tmp_path / "r.json"
    doc = result_files.document(result_set())
    doc["rows"] = _rows(**{column: value})
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError, match=f"column {column}, row 3: "):
        open_results(path)


def test_a_session_holding_a_bad_time_names_its_set_row_and_column(tmp_path):
    path = session_file.save(tmp_path / "s.json", {}, [result_set()])
    doc = json.loads(path.read_text())
    doc["sets"][0]["results"]["rows"][1]["total_median_s"] = 1e308
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsFileError, match=r"s\.json: result set 1: column total_median_s, row 2: "):
        session_file.load(path)


def test_every_written_file_still_reads_back(tmp_path):
    """The checks refuse nothing this program writes: a result set with every kind of row, as CSV,
    JSON and in a session."""
    rs = result_set()
    frame = rs.frame.copy()
    frame.loc[0, ["compute_ci_lo_s", "compute_ci_hi_s", "gbps_limit", "max_rel_error"]] = \
        [float("-inf"), float("inf"), float("inf"), float("inf")]
    rs.frame = frame
    for name in ("r.csv", "r.json"):
        back = open_results(result_files.write(rs, tmp_path / name)).frame
        pd.testing.assert_series_equal(back["total_median_s"], frame["total_median_s"])
        assert back.loc[0, "compute_ci_lo_s"] == float("-inf") and back.loc[0, "gbps_limit"] == float("inf")
    back = session_file.load(session_file.save(tmp_path / "s.json", {}, [rs])).sets[0].frame
    pd.testing.assert_series_equal(back["compute_median_s"], frame["compute_median_s"])


# Drawing: extreme values never break the tick code; text from data is drawn as it is -------------

EXTREMES = [1e308, 1e-320, float("inf"), float("-inf"), -1.0, float("nan"), 0.0]


@pytest.mark.parametrize("value", EXTREMES)
def test_every_chart_draws_a_frame_holding_extreme_values(value):
    """A frame handed in (a live sweep, a test) is not checked as a file is: the charts clamp."""
    from workbench.views import matplotlib_charts as charts
    rs = result_set()
    for column in ("total_median_s", "compute_median_s", "compute_q1_s", "compute_q3_s", "first_call_s",
                   "h2d_s", "peak_host_bytes", "peak_device_bytes"):
        rs.frame.loc[0, column] = value
    for kind in charts.KINDS:
        assert charts.render(kind, [rs], "svg").startswith(b"<?xml")     # warnings are errors here


def test_log_ticks_stay_within_float_range():
    from workbench.views import matplotlib_charts as charts
    ticks = charts.log_ticks(1e-320, 1e308, 10)
    assert ticks and charts.AXIS_LO <= min(ticks) and max(ticks) <= charts.AXIS_HI
    assert charts.log_ticks(float("nan"), 1.0, 10) == [] and charts.log_ticks(-1.0, 1.0, 2) == []
    assert all(0 < t < float("inf") for t in charts.log_ticks(1.0, float("inf"), 2))


def test_the_windows_log_axes_label_extreme_views(qtbot):
    pytest.importorskip("pytestqt")
    from panels import axes
    for formatter, base in ((axes.fmt_time, 10), (axes.fmt_power_of_two, 2), (axes.fmt_bytes, 2)):
        axis = axes.ReadableAxis("left", formatter, base)
        for lo, hi in ((300.0, 330.0), (-330.0, -300.0), (-320.0, 308.0), (float("nan"), 1.0), (1.0, float("inf"))):
            levels = axis.tickValues(lo, hi, 400)
            for spacing, values in levels:
                assert all(-axes.VIEW_LIMIT <= v <= axes.VIEW_LIMIT for v in values)
                assert len(axis.tickStrings(values, 1.0, spacing)) == len(values)
        assert axis.tickStrings([400.0, -400.0], 1.0, axis._major_spacing)   # 10.0 ** 400 would overflow
    assert axes.fmt_power_of_two(float("inf")) == "inf" and axes.fmt_power_of_two(0.0) == "0"


NAMES = ["$x$", "a$b", "<b>bold</b>", "numba<!--", "=HYPERLINK(\"http://x\",\"y\")", "@SUM(1)", "-2+3", "+1"]


def named_set(names=NAMES, **environment):
    """The known result set with its backends renamed to hostile names (the same name per backend)."""
    rs = result_set()
    mapping = dict(zip(("numpy", "numba", "cupy"), names))
    rs.frame["backend"] = rs.frame["backend"].map(lambda b: mapping.get(b, b))
    rs.environment.update(environment)
    return rs


def svg_texts(svg: bytes) -> str:
    import xml.etree.ElementTree as ET
    root = ET.fromstring(svg)
    return "\n".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))


@pytest.mark.parametrize("names", [NAMES[:3], NAMES[3:6], NAMES[5:]])
def test_names_are_drawn_as_the_text_they_are(names):
    from workbench.views import matplotlib_charts as charts
    rs = named_set(names)
    rs.frame["device"] = rs.frame["device"].replace("CPU: Test CPU", "CPU: $5 $chip")
    rs.settings["lesson"] = {"title": "Costs $1", "verdict": "Shown: $x$.", "statement": "It costs $2 or $3."}
    texts = svg_texts(charts.render("runtime", [rs], "svg"))
    for name in names:
        assert name in texts, (name, texts)
    assert "CPU: $5 $chip" in texts and "$2 or $3" in texts


def test_plot_and_report_take_hostile_names_from_a_file(tmp_path):
    path = result_files.write(named_set(NAMES[:3], cpu="$cpu$"), tmp_path / "r.json")
    proc = cli("plot", path, "--chart", tmp_path / "c.svg", "--kind", "runtime")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    texts = svg_texts((tmp_path / "c.svg").read_bytes())
    assert all(name in texts for name in NAMES[:3])
    proc = cli("report", path, "--out", tmp_path / "r.html")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    page = (tmp_path / "r.html").read_text()
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page.split("<h2>Charts</h2>")[0]
    proc = cli("report", path, "--out", tmp_path / "r.pdf")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


# The command line's input: sizes as the window reads them, a plug-in path from anywhere -----------

@pytest.mark.parametrize("text, sizes", [
    ("10,000", [10_000]), ("10000", [10_000]), ("10_000", [10_000]), ("10 000", [10_000]),
    ("1,048,576", [2 ** 20]), ("1,024,2048", [1024, 2048]), ("256,512", [256, 512]), ("1,500", [1, 500]),
    ("10,000:100,000:x10", [10_000, 100_000]), ("2^20", [2 ** 20]), ("1e6", [10 ** 6]),
    ("2^10:2^20:x4", [4 ** k * 1024 for k in range(6)]), ("2^10,2,048", [1024, 2048])])
def test_sizes_read_as_the_window_reads_them(text, sizes):
    from workbench.core.sizes import parse_int, parse_sizes
    assert parse_sizes(text) == sizes
    if len(sizes) == 1 and ":" not in text:
        assert parse_int(text) == sizes[0]       # the window's size fields


def test_sizes_10_comma_000_runs_as_10000(tmp_path):
    out = {}
    for text in ("10,000", "10000"):
        path = tmp_path / f"{text.replace(',', '_')}.csv"
        proc = cli("run", "-w", "source_terms", "-b", "numpy", "--sizes", text, "-r", "1", "--budget", "0",
                   "--min-time", "0", "-q", "--in-process", "-o", path)
        assert proc.returncode == 0, proc.stderr
        out[text] = open_results(path).frame["size"].tolist()
    assert out["10,000"] == out["10000"] == [10_000]


PLUGIN = '''
import numpy as np
from workbench.catalog.workloads import Workload, register
W = register(Workload(name="relative_one", title="Relative", kind="kernels", description="a plug-in by a relative path",
                      lesson="none", size_unit="elements", default_sizes=(8,),
                      make_inputs=lambda n, dt, v, rng: (np.ones(n, dt),),
                      reference=lambda inp: inp[0].astype(np.float64) * 2,
                      flops=lambda n: n, bytes_moved=lambda n, i: n * i, footprint=lambda n, i: n * i))
W.implement("numpy")(lambda inputs, ctx: (lambda: inputs[0] * 2))
'''


def test_a_relative_plugin_path_works_from_another_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rel.py").write_text(PLUGIN)
    proc = cli("--plugin", "sub/rel.py", "list", cwd=tmp_path)
    assert proc.returncode == 0 and "relative_one" in proc.stdout, proc.stderr
    proc = cli("--plugin", "sub/rel.py", "run", "-w", "relative_one", "-b", "numpy", "-s", "8", "-r", "1",
               "--budget", "0", "-q", cwd=tmp_path)       # the supervised engine loads it too
    assert proc.returncode == 0 and "relative_one" in proc.stdout and "did not load" not in proc.stderr, proc.stderr


def test_a_missing_plugin_is_one_line_and_exit_2(tmp_path):
    line = refused(cli("--plugin", "nowhere.py", "list", cwd=tmp_path), "--plugin", "no such workload file")
    assert str(tmp_path / "nowhere.py") in line


# Export: no cell a spreadsheet runs as a formula -------------------------------------------------

FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "@SUM(1)", "-2+3", "+1", "\tx", "\rx", "'=already quoted", "''@x"]


def test_csv_text_cells_that_would_run_as_formulas_are_quoted_and_read_back(tmp_path):
    rs = named_set(FORMULAS[:3])
    rs.frame["message"] = [FORMULAS[k % len(FORMULAS)] for k in range(len(rs.frame))]
    rs.frame.loc[0, "noisy"] = "-"
    path = result_files.write(rs, tmp_path / "r.csv")
    with open(path, newline="") as f:
        table = list(csv.DictReader(f))
    for row, original in zip(table, rs.frame.to_dict("records")):
        for column in ("backend", "message", "noisy", "device"):
            cell, text = row[column], original[column]
            assert not cell[:1] in ("=", "+", "-", "@", "\t", "\r"), (column, cell)
            runs = text.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r")    # after any quotes of its own
            assert cell == ("'" + text if runs else text), (column, cell, text)
    assert table[0]["noisy"] == "'-"
    back = open_results(path).frame
    for column in ("backend", "message", "noisy"):
        assert back[column].tolist() == rs.frame[column].tolist()


def test_numbers_and_plain_text_are_never_quoted(tmp_path):
    rs = result_set()
    rs.frame["compute_ci_lo_s"] = float("-inf")
    rs.frame.loc[0, "message"] = "'plain, with a quote"
    path = result_files.write(rs, tmp_path / "r.csv")
    with open(path, newline="") as f:
        table = list(csv.DictReader(f))
    assert table[0]["compute_ci_lo_s"] == "-inf" and table[0]["message"] == "'plain, with a quote"
    assert all(not v.startswith("'") for row in table for k, v in row.items() if k != "message")
    assert open_results(path).frame.loc[0, "message"] == "'plain, with a quote"


def test_json_keeps_names_as_they_are(tmp_path):
    path = result_files.write(named_set(FORMULAS[:3]), tmp_path / "r.json")
    assert {r["backend"] for r in json.loads(path.read_text())["rows"]} >= set(FORMULAS[:3])


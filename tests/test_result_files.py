"""Result files: every format written and read back, the first version's files, and hostile files."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.measure.gpu import kernels
from workbench.results import files as result_files
from workbench.results import rows as results
from workbench.results.files import ResultsFileError, open_results
from workbench.views import table_text

ENV = {"cpu": "Test CPU", "libraries": {"numpy": "2.0.0", "numba": "0.60.0"}, "gpus": "none here"}
SETTINGS = {"workload": "source_terms", "dtype": "float32", "min_repeats": 5, "budget_s": 0.25, "seed": 0,
            "host_memory": "pageable", "sizes": [1024, 4096]}
REPO = Path(__file__).resolve().parents[1]


def sample_frame() -> pd.DataFrame:
    """Rows with what files find hard: NaN, an infinity, empty text, commas, quotes and newlines."""
    rows = [
        results.empty_row(workload="source_terms", backend="numpy", device="CPU: Test, Inc.", size=1024,
                          dtype="float32", repeats=5, compute_median_s=1.5e-6, compute_q1_s=1.25e-6,
                          compute_q3_s=1.75e-6, total_median_s=1.5e-6, h2d_s=0.0, d2h_s=0.0, first_call_s=3e-5,
                          peak_host_bytes=4096.0, gflops=1.0 / 3.0, gbps=12.5, max_rel_error=0.0, verified=True,
                          status="ok"),
        results.empty_row(workload="source_terms", backend="cupy", device="GPU: Test \"Quoted\" GPU", size=4096,
                          dtype="float32", host_memory="pinned", repeats=7, compute_median_s=2e-5,
                          total_median_s=5e-5, h2d_s=2e-5, d2h_s=1e-5, peak_device_bytes=2.0 ** 40,
                          max_rel_error=math.inf, verified=False, status="wrong",
                          message="result holds NaN,\nline two",
                          stages=results.encode_stages({"frame": 2e-3, "frame->array": 5e-4})),   # JSON in a cell
        results.empty_row(workload="source_terms", backend="numba", device="", size=2 ** 40, dtype="float32",
                          variant="sorted", status="implausible", message="faster than memory allows"),
    ]
    return results.to_frame(rows)


def assert_same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("name", ["r.csv", "r.json"])
def test_round_trip_keeps_rows_environment_and_settings(tmp_path, name):
    frame = sample_frame()
    path = result_files.save(frame, tmp_path / name, ENV, SETTINGS)
    back = open_results(path)
    assert_same_table(back.frame, frame)
    assert back.frame["max_rel_error"].iloc[1] == math.inf      # an infinity is a finding: it survives
    assert back.environment == ENV and back.settings == SETTINGS
    assert back.schema == result_files.SCHEMA and back.host and back.written.endswith("+00:00")
    assert list(back.frame.columns) == list(results.COLUMNS)


def test_csv_is_plain_and_pandas_reads_it_as_is(tmp_path):
    frame = sample_frame()
    path = result_files.save(frame, tmp_path / "r.csv", ENV, SETTINGS)
    text = path.read_text()
    in_csv = [c for c in results.COLUMNS if c not in results.JSON_ONLY]   # the raw samples are JSON's
    assert text.splitlines()[0] == ",".join(in_csv)        # one header line, nothing above it
    assert not any(line.startswith("#") for line in text.splitlines())
    plain = pd.read_csv(path)
    frame = frame[in_csv]
    assert plain.shape == frame.shape and list(plain.columns) == list(frame.columns)
    for column in frame.columns:
        if frame[column].dtype.kind in "fi":
            np.testing.assert_array_equal(plain[column].to_numpy(float), frame[column].to_numpy(float))
        else:   # pandas reads an empty text field as NaN
            assert plain[column].astype(object).fillna("").astype(str).tolist() == frame[column].astype(str).tolist()


def test_the_raw_samples_go_to_json_files_and_come_back(tmp_path):
    frame = sample_frame()
    frame.loc[0, "samples"] = results.encode_samples({"compute": [1e-3, 1.5e-3, 2e-3]})
    rs = result_files.open_results(result_files.save(frame, tmp_path / "r.json", ENV, SETTINGS))
    assert results.decode_samples(rs.frame.loc[0, "samples"]) == {"compute": [1e-3, 1.5e-3, 2e-3]}
    back = result_files.open_results(result_files.save(frame, tmp_path / "r.csv", ENV, SETTINGS))
    assert back.frame.loc[0, "samples"] == ""                  # a CSV keeps their count and interval only


def json_cells_frame() -> pd.DataFrame:
    """The sample rows with every JSON column filled, one of them holding NaN (not strict JSON)."""
    frame = sample_frame()
    frame.loc[0, "samples"] = results.encode_samples({"compute": [1e-3, 1.5e-3, 2e-3], "total": [2e-3]})
    frame.loc[0, "rounds"] = json.dumps({"group": "s:0", "compute": [1e-3, None], "kept": [0]}, separators=(",", ":"))
    frame.loc[1, "kernels"] = kernels.encode([kernels.Activity("kernel", "saxpy", 1.5e-6)])
    frame.loc[2, "rounds"] = '{"group":"s:1","compute":[NaN]}'
    return frame


def test_json_files_nest_the_json_columns_and_read_back_the_same_frame(tmp_path):
    frame = json_cells_frame()
    path = result_files.save(frame, tmp_path / "r.json", ENV, SETTINGS)
    first, second, third = json.loads(path.read_text())["rows"]
    assert first["samples"] == {"compute": [1e-3, 1.5e-3, 2e-3], "total": [2e-3]}
    assert first["rounds"] == {"group": "s:0", "compute": [1e-3, None], "kept": [0]} and first["stages"] is None
    assert second["stages"] == {"frame": 2e-3, "frame->array": 5e-4}
    assert second["kernels"] == [["kernel", "saxpy", 1.5e-6]]
    assert third["rounds"] == '{"group":"s:1","compute":[NaN]}'     # not strict JSON: kept as its text
    back = open_results(path).frame
    assert_same_table(back, frame)
    assert kernels.decode(back.loc[1, "kernels"]) == [kernels.Activity("kernel", "saxpy", 1.5e-6)]
    assert results.decode_stages(back.loc[1, "stages"]) == {"frame": 2e-3, "frame->array": 5e-4}


def test_a_json_file_of_schema_3_with_its_json_columns_as_text_opens_with_the_same_values(tmp_path):
    frame = json_cells_frame()
    data = json.loads(result_files.save(frame, tmp_path / "r.json", ENV, SETTINGS).read_text())
    data["schema"] = 3
    for row in data["rows"]:
        for column in results.JSON_COLUMNS:
            if not isinstance(row[column], str):
                row[column] = "" if row[column] is None else json.dumps(row[column], separators=(",", ":"))
    old = tmp_path / "old3.json"
    old.write_text(json.dumps(data))
    assert isinstance(json.loads(old.read_text())["rows"][0]["samples"], str)
    back = open_results(old)
    assert back.schema == 3 and back.environment == ENV
    assert_same_table(back.frame, frame)
    assert results.decode_samples(back.frame.loc[0, "samples"])["compute"] == [1e-3, 1.5e-3, 2e-3]


def test_a_nested_value_is_refused_outside_the_json_columns(tmp_path):
    data = json.loads(result_files.save(sample_frame(), tmp_path / "r.json", ENV).read_text())
    data["rows"][0]["message"] = {"not": "text"}
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ResultsFileError, match="column message, row 1"):
        open_results(tmp_path / "bad.json")


def test_csv_sidecar_is_strict_json_with_the_header(tmp_path):
    result_files.save(sample_frame(), tmp_path / "r.csv", ENV, SETTINGS)
    sidecar = tmp_path / "r.meta.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.meta.json"]

    def refuse(token):
        raise AssertionError(f"not strict JSON: {token}")
    meta = json.loads(sidecar.read_text(), parse_constant=refuse)
    assert meta["format"] == result_files.FORMAT and meta["schema"] == result_files.SCHEMA
    assert meta["data"] == "r.csv" and meta["environment"] == ENV and meta["settings"] == SETTINGS
    assert meta["columns"] == list(results.COLUMNS) and meta["host"] and meta["written"]
    assert_same_table(open_results(sidecar).frame, sample_frame())   # the sidecar opens its CSV


def test_json_is_strict_and_holds_the_rows(tmp_path):
    path = result_files.save(sample_frame(), tmp_path / "r.json", ENV, SETTINGS)

    def refuse(token):
        raise AssertionError(f"not strict JSON: {token}")
    data = json.loads(path.read_text(), parse_constant=refuse)
    assert data["format"] == result_files.FORMAT and len(data["rows"]) == 3
    assert data["rows"][1]["max_rel_error"] == "inf" and data["rows"][0]["peak_device_bytes"] is None
    assert {"schema", "written", "host", "environment", "settings"} <= set(data)


def test_a_csv_without_its_sidecar_still_opens(tmp_path):
    path = tmp_path / "bare.csv"
    sample_frame().to_csv(path, index=False)      # what a spreadsheet or a script writes back
    back = open_results(path)
    assert_same_table(back.frame, sample_frame())
    assert back.environment == {} and back.settings == {}


def test_files_of_the_first_version_open(tmp_path):
    """Schema 1: a CSV with '# key: json' lines on top, and JSON {"environment", "results"}."""
    frame = sample_frame().iloc[[0]]
    old_csv = tmp_path / "old.csv"
    with old_csv.open("w") as f:
        for key, value in ENV.items():
            f.write(f"# {key}: {json.dumps(value)}\n")
        frame.to_csv(f, index=False)
    old_json = tmp_path / "old.json"
    old_json.write_text(json.dumps({"environment": ENV, "results": json.loads(frame.to_json(orient="records"))}))
    for path in (old_csv, old_json):
        back = open_results(path)
        assert back.schema == 1 and back.environment == ENV and back.written == ""
        assert_same_table(back.frame, frame)


# Files of schema 2, as the version before the row's declaration wrote them: the header names its
# columns, without types or units. Written out here as text, so that no writer of today makes them.
SCHEMA_2_JSON = """{
 "format": "gpu-workbench-results", "schema": 2, "written": "2026-12-01T10:00:00+00:00", "host": "lab1",
 "environment": {"cpu": "Test CPU"}, "settings": {"workload": "source_terms", "dtype": "float32"},
 "columns": ["workload", "backend", "device", "size", "dtype", "variant", "host_memory", "repeats",
             "compute_median_s", "total_median_s", "max_rel_error", "verified", "status", "message"],
 "rows": [
  {"workload": "source_terms", "backend": "numpy", "device": "CPU: Test", "size": 1024, "dtype": "float32",
   "variant": "", "host_memory": "", "repeats": 9, "compute_median_s": 1.5e-06, "total_median_s": 1.5e-06,
   "max_rel_error": 0.0, "verified": true, "status": "ok", "message": ""},
  {"workload": "source_terms", "backend": "numba", "device": "CPU: Test", "size": 1024, "dtype": "float32",
   "variant": "", "host_memory": "", "repeats": 9, "compute_median_s": null, "total_median_s": null,
   "max_rel_error": "inf", "verified": false, "status": "wrong", "message": "NaN in the result"}
 ]
}"""
SCHEMA_2_CSV = ("workload,backend,device,size,dtype,variant,host_memory,repeats,compute_median_s,total_median_s,"
                "verified,status,message\n"
                "source_terms,numpy,CPU: Test,1024,float32,,,9,1.5e-06,1.5e-06,True,ok,\n")
SCHEMA_2_SIDECAR = """{"format": "gpu-workbench-results", "schema": 2, "written": "2026-12-01T10:00:00+00:00",
 "host": "lab1", "environment": {"cpu": "Test CPU"}, "settings": {}, "data": "old2.csv",
 "columns": ["workload", "backend", "device", "size", "dtype", "variant", "host_memory", "repeats",
             "compute_median_s", "total_median_s", "verified", "status", "message"]}"""


def test_files_of_schema_2_without_the_columns_types_and_units_open(tmp_path):
    (tmp_path / "old2.json").write_text(SCHEMA_2_JSON)
    (tmp_path / "old2.csv").write_text(SCHEMA_2_CSV)
    (tmp_path / "old2.meta.json").write_text(SCHEMA_2_SIDECAR)
    js = open_results(tmp_path / "old2.json")
    assert js.schema == 2 and js.host == "lab1" and js.environment == {"cpu": "Test CPU"}
    assert list(js.frame.columns) == list(results.COLUMNS)          # every column of today, filled
    assert js.frame["status"].tolist() == ["ok", "wrong"] and js.frame["max_rel_error"].iloc[1] == math.inf
    assert js.frame["compute_median_s"].iloc[0] == 1.5e-6 and math.isnan(js.frame["compute_median_s"].iloc[1])
    assert js.frame["gbps"].isna().all() and js.frame["rounds"].eq("").all()
    for path in (tmp_path / "old2.csv", tmp_path / "old2.meta.json"):
        csv_set = open_results(path)
        assert csv_set.schema == 2 and csv_set.environment == {"cpu": "Test CPU"}
        assert csv_set.frame["size"].tolist() == [1024] and bool(csv_set.frame["verified"].iloc[0])


def test_files_of_today_name_each_columns_type_and_unit_as_the_row_declares_them(tmp_path):
    """Since schema 3: the types and units in the header are the row's declaration, not a second list."""
    data = json.loads(result_files.save(sample_frame(), tmp_path / "r.json", ENV).read_text())
    assert data["schema"] == 5 == result_files.SCHEMA
    assert data["types"] == {c.name: c.type_name for c in results.DECLARED}
    assert data["units"]["compute_median_s"] == "s" and data["units"]["peak_device_bytes"] == "B"
    assert data["units"]["gbps"] == "GB/s" and "status" not in data["units"]
    assert data["types"]["size"] == "integer" and data["types"]["verified"] == "bool"
    assert data["types"]["message"] == "text" and data["types"]["gflops"] == "float"


def test_a_row_is_one_frozen_value_whose_declaration_gives_every_column():
    row = results.Row.of(results.empty_row(workload="w", backend="numpy", size=8, status="ok", gbps=2.0))
    assert tuple(row) == results.COLUMNS and row["gbps"] == 2.0 and row.get("noisy") == ""
    assert math.isnan(row["compute_median_s"])
    with pytest.raises(AttributeError):
        row.status = "wrong"                     # frozen: the table, a chart and a file share it
    assert results.Row.of(dict(row)) == row      # NaN (not measured) equals NaN
    assert results.Row.of({**dict(row), "from_the_future": 1}) == row    # a later version's column
    assert results.Row.of({"workload": "w", "size": 8.0})["size"] == 8   # a journal's number
    frame = results.to_frame([row, dict(row)])
    assert list(frame.columns) == list(results.COLUMNS) and frame["size"].tolist() == [8, 8]
    assert table_text.cell_text("compute_median_s", 1.5e-6) == "1.5 µs"
    assert table_text.cell_text("peak_host_bytes", 2048.0) == "2 KiB" and table_text.cell_text("gbps", math.nan) == "-"


def test_display_formatting_lives_with_the_views_and_the_rows_keep_only_their_units():
    assert not hasattr(results, "readable_table") and not hasattr(results, "cell_text")
    assert results.human_seconds(1.5e-6) == table_text.human_seconds(1.5e-6) == "1.5 µs"
    with pytest.raises(AttributeError):
        results.no_such_name


def test_the_h200_results_in_docs_open():
    """A real file of the first version, written by the command line on another machine."""
    back = open_results(REPO / "docs/h200/crossover.csv")
    assert back.schema == 1 and len(back.frame) == 68
    assert back.environment["gpus"][0]["name"] == "NVIDIA H200"
    assert set(back.frame["backend"]) == {"numpy", "numba", "cupy", "numba-cuda"}
    assert (back.frame["status"] == "ok").all()


def test_missing_columns_are_filled_and_unknown_ones_ignored(tmp_path):
    frame = sample_frame().drop(columns=["gbps", "peak_device_bytes", "variant", "repeats", "verified"])
    frame["from_the_future"] = 1
    path = tmp_path / "partial.csv"
    frame.to_csv(path, index=False)
    back = open_results(path).frame
    assert list(back.columns) == list(results.COLUMNS)
    assert back["gbps"].isna().all() and back["peak_device_bytes"].isna().all()
    assert (back["variant"] == "").all() and (back["repeats"] == 0).all() and not back["verified"].any()


def test_a_column_added_to_COLUMNS_is_read_as_numbers_or_nan(tmp_path, monkeypatch):
    """A later version adds a column: files without it still open, with NaN there."""
    path = result_files.save(sample_frame(), tmp_path / "r.csv", ENV)
    columns = list(results.COLUMNS)
    columns.insert(columns.index("gbps_limit") + 1, "watts")
    monkeypatch.setattr(results, "COLUMNS", tuple(columns))
    monkeypatch.setattr(result_files, "COLUMNS", tuple(columns))
    back = open_results(path).frame
    assert list(back.columns) == columns and back["watts"].isna().all()
    assert back["gbps"].tolist()[0] == 12.5


def test_files_from_before_the_hardware_limits_open_with_nan_limits(tmp_path):
    path = tmp_path / "before.csv"
    sample_frame().drop(columns=["gbps_limit", "gflops_limit"]).to_csv(path, index=False)
    back = open_results(path).frame
    assert list(back.columns) == list(results.COLUMNS)
    assert back["gbps_limit"].isna().all() and back["gflops_limit"].isna().all()
    assert back["gbps"].tolist()[0] == 12.5


def test_large_but_valid_numbers_are_kept(tmp_path):
    """The bounds' own values are read: the longest time, the shortest, the largest size."""
    frame = sample_frame()
    frame.loc[0, "compute_max_s"] = result_files.MAX_SECONDS
    frame.loc[0, "compute_min_s"] = result_files.MIN_SECONDS
    frame.loc[0, "size"] = 2 ** 62
    path = result_files.save(frame, tmp_path / "big.json", ENV)
    back = open_results(path).frame
    assert back.loc[0, "size"] == 2 ** 62 and back.loc[0, "compute_max_s"] == result_files.MAX_SECONDS
    assert back.loc[0, "compute_min_s"] == result_files.MIN_SECONDS


HEADER = ",".join(results.COLUMNS)
GOOD_ROW = sample_frame().iloc[[0]].to_csv(index=False, header=False).strip()


def _csv_with(**cells) -> str:
    """The first sample row as CSV, with some cells replaced by text of our choosing."""
    row = sample_frame().iloc[[0]].astype(str)
    for column, text in cells.items():
        row[column] = text
    return row.to_csv(index=False)


HOSTILE = {
    "empty": (b"", "empty"),
    "blank lines": (b"\n\n  \n", "empty"),
    "binary with NUL": (bytes(range(256)) * 4, "binary"),
    "invalid UTF-8": (b"\xff\xfe\xfa" * 100, "binary"),
    "JSON cut short": (b'{"format": "gpu-workbench-results", "schema": 2, "rows": [{"workload": "x"', "truncated"),
    "JSON broken inside": (b'{"format": "gpu-workbench-results",, "schema": 2}', "not valid JSON"),
    "JSON of someone else": (b'{"name": "my package", "version": "1.0"}', "not a GPU Workbench results file"),
    "JSON list": (b"[1, 2, 3]", "not a GPU Workbench results file"),
    "JSON nested too deep": (b"[" * 200000 + b"]" * 200000, "not a GPU Workbench results file"),
    "JSON from a newer schema": (b'{"format": "gpu-workbench-results", "schema": 99, "rows": []}', "newer"),
    "JSON schema not a number": (b'{"format": "gpu-workbench-results", "schema": "two", "rows": []}', "schema"),
    "JSON rows not a list": (b'{"format": "gpu-workbench-results", "schema": 2, "rows": {"a": 1}}', "rows"),
    "JSON environment a list": (b'{"environment": [1], "results": []}', "environment"),
    "JSON status a number": (json.dumps({"environment": {}, "results": [
        {"workload": "w", "backend": "numpy", "size": 8, "dtype": "float32", "status": 42}]}).encode(),
        "column status, row 1: 42 is not text"),
    "JSON boolean time": (json.dumps({"environment": {}, "results": [
        {"workload": "w", "backend": "numpy", "size": 8, "dtype": "float32", "status": "ok",
         "compute_median_s": True}]}).encode(), "is not a number"),
    "JSON huge size": (('{"environment": {}, "results": [{"workload": "w", "backend": "numpy", "size": '
                        + "9" * 30 + ', "dtype": "float32", "status": "ok"}]}').encode(), "from 1 to 2^63-1"),
    "CSV of someone else": (b"name,score\nada,3\n", "no column workload, backend, size, dtype, status"),
    "CSV header only, missing columns": (b"workload,backend\n", "no column size"),
    "CSV column twice": ((HEADER + ",status\n").encode(), "appears twice"),
    "CSV cut in the last row": ((HEADER + "\n" + GOOD_ROW + "\n" + GOOD_ROW[:40]).encode(), "truncated"),
    "CSV cut in a quoted field": ((HEADER + "\n" + GOOD_ROW[:-3] + ',"message cut').encode(), "truncated"),
    "CSV row too long": ((HEADER + "\n" + GOOD_ROW + ",1,2\n" + GOOD_ROW + "\n").encode(), "malformed"),
    "CSV size not a number": (_csv_with(size="abc").encode(), "column size, row 1: 'abc' is not a whole number"),
    "CSV size fractional": (_csv_with(size="2.5").encode(), "whole number"),
    "CSV size zero": (_csv_with(size="0").encode(), "from 1 to 2^63-1"),
    "CSV size 1e400": (_csv_with(size="1e400").encode(), "whole number"),
    "CSV size 2^64": (_csv_with(size=str(2 ** 64)).encode(), "from 1 to 2^63-1"),
    "CSV time not a number": (_csv_with(compute_median_s="fast").encode(), "'fast' is not a number"),
    "CSV verified neither": (_csv_with(verified="maybe").encode(), "true or false"),
    "CSV without status": (_csv_with(status="").encode(), "row 1 has no status"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_files_get_one_clear_line(tmp_path, name):
    content, expected = HOSTILE[name]
    path = tmp_path / ("hostile.json" if content.lstrip().startswith((b"{", b"[")) else "hostile.csv")
    path.write_bytes(content)
    with pytest.raises(ResultsFileError) as info:
        open_results(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"cannot open {path}: ")
    assert expected in message, message


def test_a_huge_float_is_refused_where_an_infinity_is_not_a_value(tmp_path):
    """1e400 overflows a double to inf: no time is infinite, so it is refused by row and column; an
    interval's open end and an unknown ceiling are infinite by design, and read back as such."""
    path = tmp_path / "inf.csv"
    path.write_text(_csv_with(compute_max_s="1e400"))
    with pytest.raises(ResultsFileError, match="column compute_max_s, row 1: '1e400' is not a finite number"):
        open_results(path)
    path.write_text(_csv_with(compute_ci_hi_s="inf", compute_ci_lo_s="-inf", gbps_limit="inf"))
    back = open_results(path).frame.iloc[0]
    assert (back["compute_ci_lo_s"], back["compute_ci_hi_s"], back["gbps_limit"]) == (-math.inf, math.inf, math.inf)


def test_missing_paths_and_folders_get_one_clear_line(tmp_path):
    with pytest.raises(ResultsFileError, match="no such file"):
        open_results(tmp_path / "nothing.csv")
    with pytest.raises(ResultsFileError, match="is a directory"):
        open_results(tmp_path)


def test_a_sidecar_of_a_newer_schema_refuses_its_csv(tmp_path):
    path = result_files.save(sample_frame(), tmp_path / "r.csv", ENV)
    sidecar = tmp_path / "r.meta.json"
    meta = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**meta, "schema": result_files.SCHEMA + 1}))
    with pytest.raises(ResultsFileError, match="newer GPU Workbench"):
        open_results(path)


def test_a_sidecar_whose_csv_is_gone(tmp_path):
    path = result_files.save(sample_frame(), tmp_path / "r.csv", ENV)
    path.unlink()
    with pytest.raises(ResultsFileError, match=r"r\.csv: no such file"):
        open_results(tmp_path / "r.meta.json")


def test_save_refuses_other_suffixes_and_leaves_no_temporary_file(tmp_path):
    with pytest.raises(ValueError, match=".csv or .json"):
        result_files.save(sample_frame(), tmp_path / "r.txt", ENV)
    result_files.save(sample_frame(), tmp_path / "r.json", ENV)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize("cut", ["nu", "n", "tru", "fals", "-Infin"])
def test_a_json_file_cut_inside_a_word_is_called_truncated(tmp_path, cut):
    """A file cut in the middle of `null` (as a window's 'truncated' test found once the rows grew a
    column) read as 'not valid JSON' at a line and column, not as cut short."""
    from workbench.results import files as result_files
    path = tmp_path / "cut.json"
    path.write_text('{"format": "gpu-workbench-results", "rows": [{"gbps": ' + cut)
    with pytest.raises(result_files.ResultsFileError, match="truncated"):
        result_files.open_results(path)


def test_a_file_read_in_a_child_process_is_the_file_read_here(tmp_path):
    """``via``: the window's file job reads in its child process (the read's calls into pandas held
    the GUI thread 20-33 ms at a time); the set, and a refusal, come back as read here."""
    from helpers import result_set
    from workbench.measure.offload import Offload
    path = result_files.write(result_set("float64"), tmp_path / "r.csv")
    child = Offload()
    try:
        there, here = open_results(path, via=child), open_results(path)
        pd.testing.assert_frame_equal(there.frame, here.frame)
        assert (there.environment, there.settings, there.source) == (here.environment, here.settings, here.source)
        (tmp_path / "bad.json").write_text("{")
        with pytest.raises(ResultsFileError) as refused:
            open_results(tmp_path / "bad.json", via=child)
        with pytest.raises(ResultsFileError) as said_here:
            open_results(tmp_path / "bad.json")
        assert str(refused.value) == str(said_here.value) and refused.value.reason == said_here.value.reason
    finally:
        child.close()

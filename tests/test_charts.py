"""Charts without Qt: each format written and opened, the points drawn, presets, stamp, compare."""
from __future__ import annotations

import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from helpers import result_set
from PIL import Image

from workbench.views import matplotlib_charts as charts
from workbench.views import palette
from workbench.views import provenance
from workbench.views.spec import kinds
from workbench.core import units

SVG = "{http://www.w3.org/2000/svg}"
OK_SIZES = [2 ** 10, 2 ** 12, 2 ** 14, 2 ** 16]


def png(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def svg_tree(data: bytes) -> ET.Element:
    return ET.fromstring(data)


def svg_texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def series_groups(root: ET.Element, kind: str, role: str) -> dict[str, ET.Element]:
    prefix = f"series-{kind}-{role}-"
    return {g.get("id")[len(prefix):]: g for g in root.iter(f"{SVG}g") if g.get("id", "").startswith(prefix)}


def legends(fig) -> list:
    """The figure's legends; the chart's own sits in the subfigure above the stamp."""
    return list(fig.legends) + [lg for sub in fig.subfigs for lg in sub.legends]


def lines_by_gid(fig) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    ax = fig.axes[0]
    return {line.get_gid(): (np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
            for line in ax.get_lines() if line.get_gid()}


@pytest.mark.parametrize("name,size", [("slide", (1920, 1080)), ("4k", (3840, 2160))])
def test_png_has_the_preset_size_and_is_not_blank(name, size):
    image = png(charts.render("runtime", [result_set()], "png", charts.preset(name)))
    assert image.shape == (size[1], size[0], 3)
    grey = image.mean(axis=2)
    assert grey.std() > 20                       # not one flat colour
    assert (grey < 250).mean() > 0.02            # ink on a few per cent of the pixels at least


def test_a_slide_of_any_size_has_that_size():
    image = png(charts.render("memory", [result_set()], "png", charts.preset(size=(1280, 720))))
    assert image.shape == (720, 1280, 3)


def test_4k_is_the_slide_drawn_twice_as_fine():
    """Fonts, legend and lines scale with the image: at 4k everything sits where it sits at 1080p."""
    def layout(name):
        p = charts.preset(name)
        with charts.style(p):
            fig = charts.figure("runtime", [result_set()], p)
            fig.draw_without_rendering()
        width, height = p.pixels
        boxes = [fig.axes[0].get_window_extent(), legends(fig)[0].get_window_extent(),
                 fig.axes[0].title.get_window_extent()]
        return np.array([[b.x0 / width, b.y0 / height, b.x1 / width, b.y1 / height] for b in boxes])
    np.testing.assert_allclose(layout("4k"), layout("slide"), atol=0.004)


def test_backend_colours_are_the_palette():
    image = png(charts.render("runtime", [result_set()], "png"))
    for backend in ("numpy", "numba", "cupy"):
        rgb = np.array([int(palette.color(backend)[i:i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(image.astype(int) - rgb).sum(axis=2) < 6).sum() > 200, backend


def test_svg_has_one_path_per_series_and_text_as_text():
    root = svg_tree(charts.render("runtime", [result_set()], "svg"))
    compute = series_groups(root, "runtime", "compute")
    assert sorted(compute) == ["cupy", "numba", "numpy"]
    for group in compute.values():
        assert len(group.findall(f".//{SVG}path")) >= 1
    assert sorted(series_groups(root, "runtime", "total")) == ["cupy"]    # only a GPU backend moves data
    texts = svg_texts(root)
    for expected in ("Runtime", "time per call", "cells N", "numpy", "2¹⁰", "10 µs"):
        assert any(expected == t.strip() for t in texts), (expected, texts)
    assert any("source_terms" in t and "float32" in t for t in texts)   # the stamp, as text


def test_the_runtime_band_is_each_medians_95_percent_interval_and_is_labelled_so():
    """Around each line (compute for all, end-to-end for a GPU backend) the band spans the CI columns;
    a file without them falls back to q1-q3, and the legend says which it is."""
    from workbench.views import bands
    rs = result_set()
    rs.frame.loc[rs.frame["status"] == "ok", "compute_ci_hi_s"] *= 1.4      # wide enough to see
    with charts.style(charts.preset()):
        fig = charts.figure("runtime", [rs])
    areas = {c.get_gid(): c for c in fig.axes[0].collections if c.get_gid()}
    assert sorted(g for g in areas if "-band-" in g) == ["series-runtime-band-compute-cupy",
                                                         "series-runtime-band-compute-numba",
                                                         "series-runtime-band-compute-numpy",
                                                         "series-runtime-band-total-cupy"]
    ok = rs.frame[rs.frame["status"] == "ok"]
    for backend, which in (("numpy", "compute"), ("cupy", "total")):
        rows = ok[ok["backend"] == backend].sort_values("size")
        ys = {}
        for x, y in areas[f"series-runtime-band-{which}-{backend}"].get_paths()[0].vertices:
            ys.setdefault(x, []).append(y)
        assert sorted(ys) == rows["size"].tolist()
        assert [min(v) for _, v in sorted(ys.items())] == pytest.approx(rows[f"{which}_ci_lo_s"].tolist())
        assert [max(v) for _, v in sorted(ys.items())] == pytest.approx(rows[f"{which}_ci_hi_s"].tolist())
    assert bands.INTERVAL in [t.get_text() for t in legends(fig)[0].get_texts()]
    for c in ("compute_ci_lo_s", "compute_ci_hi_s", "total_ci_lo_s", "total_ci_hi_s"):
        rs.frame[c] = np.nan                       # a file written before the intervals were kept
    root = svg_tree(charts.render("runtime", [rs], "svg"))
    assert sorted(series_groups(root, "runtime", "band-compute")) == ["cupy", "numba", "numpy"]
    said = " ".join(svg_texts(root))     # a long legend label wraps onto lines of their own (issue 38)
    assert bands.QUARTILES in said and bands.INTERVAL not in said


def test_paper_is_a_narrow_vector_figure():
    root = svg_tree(charts.render("runtime", [result_set()], "svg", charts.PAPER))
    assert root.get("width") == "252pt"          # 3.5 in
    pdf = charts.render("runtime", [result_set()], "pdf", charts.PAPER)
    box = re.search(rb"/MediaBox \[ *0 0 ([\d.]+) ([\d.]+) *\]", pdf)
    assert float(box.group(1)) == pytest.approx(252)


def test_the_same_chart_gives_the_same_svg():
    a = charts.render("speedup", [result_set()], "svg")
    assert a == charts.render("speedup", [result_set()], "svg")


def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", data))


def test_pdf_of_every_chart_has_one_page_each(tmp_path):
    paths = charts.export([result_set()], tmp_path / "all.pdf")
    assert paths == [tmp_path / "all.pdf"]
    assert pdf_pages(paths[0].read_bytes()) == len(charts.KINDS)
    assert pdf_pages(charts.render("memory", [result_set()], "pdf")) == 1


def test_every_chart_as_png_or_svg_writes_one_file_each(tmp_path):
    paths = charts.export([result_set()], tmp_path / "c.svg", p=charts.PAPER)
    assert [p.name for p in paths] == [f"c-{k}.svg" for k in charts.KINDS]
    for path in paths:
        svg_tree(path.read_bytes())


def test_only_ok_points_are_drawn_and_the_others_are_counted():
    with charts.style(charts.preset()):
        fig = charts.figure("runtime", [result_set()], stamp=False)
    lines = lines_by_gid(fig)
    for backend in ("numpy", "numba", "cupy"):
        x, _ = lines[f"series-runtime-compute-{backend}"]
        assert x.tolist() == OK_SIZES                  # not 2^18: those points failed
    texts = [t.get_text() for sub in fig.subfigs for t in sub.texts]
    assert texts == ["2 points not drawn (1 error, 1 implausible)"]   # the stamp is off, the count is not


def test_stamp_names_where_it_was_measured_and_can_be_switched_off():
    root = svg_tree(charts.render("runtime", [result_set()], "svg"))
    stamp = " ".join(t for t in svg_texts(root) if "source_terms" in t)
    for part in ("float32", "pageable host memory", "CPU: Test CPU", "GPU: Test GPU", "numpy 2.0.0",
                 "numba 0.60.0", "cupy-cuda12x 13.3.0", "2026-01-02"):
        assert part in stamp, part
    assert "pandas" not in stamp                  # no pandas backend: its version says nothing here
    off = svg_texts(svg_tree(charts.render("runtime", [result_set()], "svg", stamp=False)))
    assert not any("source_terms" in t for t in off)


def test_speedup_names_its_baseline_and_divides_by_it():
    with charts.style(charts.preset()):
        fig = charts.figure("speedup", [result_set()], baseline_name="numba")
    assert fig.axes[0].get_title() == "Speedup over numba"
    lines = lines_by_gid(fig)
    assert "series-speedup-compute-numba" not in lines        # the baseline is the line at 1
    x, y = lines["series-speedup-compute-numpy"]
    assert y == pytest.approx([0.5] * 4)                      # numpy takes twice numba's time
    assert "series-speedup-total-numpy" not in lines          # CPU: compute is end-to-end, one line
    # A GPU backend: compute solid, end-to-end dashed, as the window and the README draw them
    styles = {ln.get_gid(): ln.get_linestyle() for ln in fig.axes[0].get_lines() if ln.get_gid()}
    assert styles["series-speedup-compute-cupy"] == "-" and styles["series-speedup-total-cupy"] == "--"


def test_default_baseline_is_numpy_and_unknown_ones_are_refused():
    assert charts.baseline([result_set()]) == charts.Baseline("numpy")
    with pytest.raises(ValueError, match="no ok point of 'cudf'.*numpy, numba, cupy"):
        charts.baseline([result_set()], "cudf")
    with pytest.raises(ValueError, match="no result set '3'"):
        charts.baseline([result_set(), result_set("float64")], "numpy@3")


def test_transfer_bars_only_for_gpu_backends():
    with charts.style(charts.preset()):
        fig = charts.figure("transfer", [result_set()])
    ax = fig.axes[0]
    gids = {p.get_gid() for p in ax.patches}
    assert gids == {f"series-transfer-{p}-cupy" for p in ("h2d", "compute", "d2h")}
    tops = {}
    for patch in ax.patches:
        tops.setdefault(round(patch.get_x(), 6), []).append(patch.get_height())
    assert len(tops) == 4 and all(sum(h) == pytest.approx(100) for h in tops.values())


def test_transfer_without_gpu_says_so():
    cpu = result_set()
    cpu.frame = cpu.frame[cpu.frame["host_memory"] == ""]
    with charts.style(charts.preset()):
        fig = charts.figure("transfer", [cpu])
    assert "No GPU backend" in fig.axes[0].texts[0].get_text()


def test_zero_values_are_left_out_of_log_axes_and_counted():
    rs = result_set()
    rs.frame.loc[rs.frame["backend"] == "numba", "peak_host_bytes"] = 0.0
    with charts.style(charts.preset()):
        fig = charts.figure("memory", [rs])
    _, y = lines_by_gid(fig)["series-memory-host-numba"]
    assert np.isnan(y).all()
    sizes = sorted(rs.frame.loc[(rs.frame["backend"] == "numba") & (rs.frame["status"] == "ok"), "size"])
    # Under the chart, in the strip of its caption and stamp: in the plot it lay over the lines (issue 38).
    said = [" ".join(t.get_text().split()) for sub in fig.subfigs for t in sub.texts if t.get_gid() == "note"]
    assert not fig.axes[0].texts
    # Which points, not how many: a user can find each of them (issue 27).
    assert said == [f"0 at numba (host) {', '.join(units.size(s) for s in sizes)}: not drawn on the log scale"], said


def test_a_zero_note_names_a_few_series_and_counts_the_rest():
    zeros = [(f"b{i}", 2.0 ** 16) for i in range(5)] + [("b0", 2.0 ** 18)]
    assert kinds.zeros_note(zeros) == "0 at b0 2^16, 2^18; b1 2^16; b2 2^16 and 2 more: not drawn on the log scale"


def test_memory_axis_in_bytes_and_first_call_dashed():
    with charts.style(charts.preset()):
        mem = charts.figure("memory", [result_set()])
        first = charts.figure("first-call", [result_set()])
    labels = [t.get_text() for t in mem.axes[0].get_yticklabels()]
    assert labels and all(re.fullmatch(r"[\d.]+ (B|KiB|MiB|GiB)", t) for t in labels), labels
    dashed = [line for line in first.axes[0].get_lines() if line.get_gid() and line.get_linestyle() == "--"]
    assert sorted(line.get_gid() for line in dashed) == [f"series-first-call-first-{b}" for b in ("cupy", "numba", "numpy")]


def test_compare_overlays_sets_labelled_by_what_differs():
    sets = [result_set("float32"), result_set("float64", scale=2.0)]
    assert provenance.labels(sets) == ["float32", "float64"]
    with charts.style(charts.preset()):
        fig = charts.figure("speedup", sets, baseline_name="numpy@2")
    assert fig.axes[0].get_title() == "Speedup over numpy (float64)"
    lines = lines_by_gid(fig)
    _, y = lines["series-speedup-compute-numpy_float32"]        # float64 numpy / float32 numpy
    assert y == pytest.approx([2.0] * 4)
    assert "series-speedup-compute-numpy_float64" not in lines  # the baseline itself
    legend = [t.get_text() for t in legends(fig)[0].get_texts()]
    # Each backend's colour and each set's marker: backends x sets entries would not fit a small chart.
    assert legend[:5] == ["numpy", "numba", "cupy", "float32", "float64"]
    markers = {h.get_label(): h.get_marker() for h in legends(fig)[0].legend_handles}
    assert markers["float32"] != markers["float64"]
    assert {ln.get_marker() for ln in fig.axes[0].get_lines() if ln.get_gid() == "series-speedup-compute-numba_float32"} \
        == {markers["float32"]}
    with charts.style(charts.preset()):
        own = charts.figure("speedup", sets)
    assert own.axes[0].get_title() == "Speedup over numpy (each set's own)"
    stamp = provenance.stamp(sets)
    assert "float32" not in stamp and "CPU: Test CPU" in stamp    # shared facets only


@pytest.mark.parametrize("kwargs,labels", [
    ({"gpu": ("NVIDIA H200", "RTX 4090")}, ["GPU: NVIDIA H200", "GPU: RTX 4090"]),
    ({"libraries": ({"numpy": "2.0.0", "cupy-cuda12x": "13.3.0"}, {"numpy": "2.0.0", "cupy-cuda12x": "14.0.0"})},
     ["cupy-cuda12x 13.3.0", "cupy-cuda12x 14.0.0"]),
    ({"source": ("/x/monday.csv", "/y/tuesday.csv")}, ["monday", "tuesday"]),   # nothing recorded differs
    ({}, ["set 1", "set 2"]),
])
def test_compare_labels(kwargs, labels):
    sets = [result_set(**{k: v[i] for k, v in kwargs.items()}) for i in range(2)]
    assert provenance.labels(sets) == labels


def test_pinned_and_pageable_are_told_apart():
    a, b = result_set(), result_set()
    b.frame = b.frame.assign(host_memory=b.frame["host_memory"].replace("pageable", "pinned"))
    assert provenance.labels([a, b]) == ["pageable host memory", "pinned host memory"]


@pytest.mark.parametrize("value,text", [(1e-5, "10 µs"), (2.5e-3, "2.5 ms"), (3.0, "3 s"), (4e-9, "4 ns")])
def test_time_labels(value, text):
    assert units.seconds(value) == text


def test_byte_and_power_labels_and_ticks():
    assert units.nbytes(2 ** 18) == "256 KiB" and units.nbytes(3 * 2 ** 30) == "3 GiB"
    assert units.power(1024, 2, superscript=True) == "2¹⁰" and units.power(1e6, 10, superscript=True) == "10⁶"
    ticks = charts.log_ticks(2 ** 10, 2 ** 26, 2, most=7)
    assert ticks == [2.0 ** k for k in range(10, 27, 3)]
    assert charts.log_ticks(2e-6, 9e-6, 10) == [2e-6, 3e-6, 5e-6, 7e-6]   # a narrow axis still gets labels
    assert charts.log_ticks(0.3, 4.0, 10) == [0.5, 1.0, 2.0]


def test_size_axis_ticks_are_powers_of_two():
    with charts.style(charts.preset()):
        fig = charts.figure("runtime", [result_set()])
    ax = fig.axes[0]
    assert ax.get_xlabel() == "cells N"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2¹⁰", "2¹²", "2¹⁴", "2¹⁶"]


@pytest.mark.parametrize("name,size,message", [
    ("slide", (0, 0), "from 320 to 8192"),
    ("slide", (99999999, 2), "from 320 to 8192"),
    ("slide", (8000, 400), "factor of 4"),
    ("paper", (800, 600), "own size"),
    ("poster", None, "unknown preset"),
])
def test_bad_presets_are_refused(name, size, message):
    with pytest.raises(ValueError, match=message):
        charts.preset(name, size)


@pytest.mark.parametrize("text", ["abc", "1920", "1920x", "-5x4", "1e3x2"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="WIDTHxHEIGHT"):
        charts.parse_size(text)


def test_output_paths_refuse_unknown_formats_and_kinds():
    with pytest.raises(ValueError, match=".png, .svg or .pdf"):
        charts.output_paths("chart.jpg")
    with pytest.raises(ValueError, match="unknown chart"):
        charts.output_paths("chart.png", "pie")


def test_every_backend_is_drawn_in_its_palette_colour_and_marker_and_every_phase_in_its_own():
    """What the export drew, read back: each line in its backend's colour and marker (the window
    draws the same, tests/test_chart_parity.py), each transfer bar in its phase's colour."""
    from matplotlib.colors import to_hex
    rs = result_set()
    rs.frame.loc[rs.frame["backend"] == "numba", "backend"] = "a-plug-in-backend"     # not in the palette's table
    with charts.style(charts.preset()):
        runtime = charts.figure("runtime", [rs])
        transfer = charts.figure("transfer", [rs])
    lines = {ln.get_gid(): ln for ln in runtime.axes[0].get_lines() if ln.get_gid()}
    for backend in ("numpy", "a-plug-in-backend", "cupy"):
        line = lines[f"series-runtime-compute-{backend}"]
        assert line.get_color().lower() == palette.color(backend).lower()
        assert line.get_marker() == charts.MARKERS[palette.marker(backend)]
    assert len({ln.get_marker() for ln in lines.values()}) == 3          # three backends, three shapes
    for phase in ("h2d", "compute", "d2h"):
        bars = [p for p in transfer.axes[0].patches if p.get_gid() == f"series-transfer-{phase}-cupy"]
        assert bars and {to_hex(p.get_facecolor()) for p in bars} == {palette.PHASE_COLORS[phase].lower()}
    assert len(set(palette.PHASE_COLORS.values()) | {palette.color(b) for b in palette.BACKEND_STYLE}) == \
        len(palette.PHASE_COLORS) + len({palette.color(b) for b in palette.BACKEND_STYLE})   # no phase in a backend's colour


def test_matplotlib_is_not_imported_by_the_engine_the_command_line_or_the_window():
    code = ("import sys; import workbench.measure.engine, workbench.cli.commands, workbench.results.files, workbench.views.presets;"
            "import panels.window; import panels.plots;"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""}).stdout
    assert out.strip() == "False"


def _lesson_set(marks=((2 ** 13, "break-even cupy vs numpy"),)):
    rs = result_set()
    rs.settings["lesson"] = {"name": "small-problems", "title": "Small problems lose",
                             "verdict": "Measured here: as the lesson says.",
                             "statement": "cupy loses to numpy up to 2^12 and wins from 2^14 on.",
                             "marks": [list(m) for m in marks]}
    return rs


def test_a_lessons_statement_is_the_caption_and_its_break_even_a_labelled_line():
    root = svg_tree(charts.render("speedup", [_lesson_set()], "svg"))
    texts = " ".join(svg_texts(root))
    assert "Lesson: Small problems lose. Measured here: as the lesson says. cupy loses to numpy up to 2^12" \
        in texts
    assert "break-even cupy vs numpy" in texts
    assert [g.get("id") for g in root.iter(f"{SVG}g") if g.get("id") == "series-speedup-mark-break-even_cupy_vs_numpy"]
    fig = charts.figure("speedup", [_lesson_set()])
    x, _ = lines_by_gid(fig)["series-speedup-mark-break-even_cupy_vs_numpy"]
    assert list(x) == [2 ** 13, 2 ** 13]                  # a vertical line at the break-even size


def test_marks_off_the_size_axis_or_on_the_transfer_bars_are_left_out_and_captions_can_be_given():
    fig = charts.figure("runtime", [_lesson_set(marks=((2 ** 30, "far away"),))])
    assert not [g for g in lines_by_gid(fig) if "mark" in g]
    fig = charts.figure("transfer", [_lesson_set()])
    assert not [t for t in fig.axes[0].texts if "break-even" in t.get_text()]
    fig = charts.figure("runtime", [result_set()], caption="Said here.", marks=[(2 ** 12, "here")])
    assert "series-runtime-mark-here" in lines_by_gid(fig)
    assert any(t.get_text() == "Said here." for sub in fig.subfigs for t in sub.texts)


def test_a_long_caption_grows_the_figure_rather_than_crush_the_chart():
    fig = charts.figure("runtime", [result_set()], charts.PAPER, caption="A long lesson. " * 80)
    assert fig.get_figheight() > charts.PAPER.height_in
    assert charts.figure("runtime", [result_set()], charts.PAPER).get_figheight() == charts.PAPER.height_in


def _with_walls(*backends):
    """The known set plus, for each of ``backends``, a point at 2^20 that ran out of device memory."""
    from workbench.results import rows as results
    from workbench.measure.gpu.cap import OUT_OF_DEVICE_MEMORY
    rs = result_set()
    extra = [results.empty_row(workload="source_terms", backend=b, device="GPU: Test GPU", size=2 ** 20,
                               dtype="float32", host_memory="pageable", status="error",
                               message=f"{OUT_OF_DEVICE_MEMORY}: needs about 2 GiB; the cap is 1 GiB") for b in backends]
    rs.frame = results.to_frame(rs.frame.to_dict("records") + extra)
    return rs


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_walls_at_one_size_get_one_label_naming_every_series():
    """Two backends out of memory at one size: one label, not two stacked over each other."""
    fig = charts.figure("memory", [_with_walls("cupy", "numba")], stamp=False)
    said = [t for t in _texts(fig) if "out of memory" in t]
    assert len(said) == 1 and "cupy" in said[0] and "numba" in said[0], said
    walls = [line for line in fig.axes[0].get_lines() if (line.get_gid() or "").startswith("series-memory-wall-")]
    assert len(walls) == 2                                   # a line in each series' colour


def test_a_lessons_mark_at_a_wall_is_the_only_label_there_and_marks_at_one_size_merge():
    marks = [(2.0 ** 20, "float64 wall (cupy)"), (2.0 ** 20, "float64 wall (numba)"), (2.0 ** 12, "break-even")]
    fig = charts.figure("memory", [_with_walls("cupy", "numba")], stamp=False, marks=marks)
    texts = _texts(fig)
    assert not [t for t in texts if "out of memory" in t]
    assert [t.strip() for t in texts if "wall" in t] == ["float64 wall (cupy, numba)"]
    assert charts.merge_labels(["a (x)", "b", "a (y)"]) == "a (x, y); b"
    # A mark names some of the walls there, or another thing at that size: the others keep their label.
    fig = charts.figure("memory", [_with_walls("cupy", "numba")], stamp=False,
                        marks=[(2.0 ** 20, "float64 wall (cupy)")])
    assert [t.strip() for t in _texts(fig) if "out of memory" in t] == ["numba: out of memory"]
    fig = charts.figure("memory", [_with_walls("cupy", "numba")], stamp=False,
                        marks=[(2.0 ** 20, "break-even numba vs numpy")])
    assert [t.strip() for t in _texts(fig) if "out of memory" in t] == ["cupy, numba: out of memory"]


def test_a_chart_kind_declared_again_by_another_function_is_refused():
    """An entry point may not replace a shipped kind under its name (the same function again, a
    module reloaded, is the same declaration)."""
    from workbench.views import chart_kinds
    from workbench.views.spec import kinds as spec_kinds
    runtime = chart_kinds.get("runtime")
    with pytest.raises(ValueError, match="'runtime' is declared by workbench.views.spec.kinds.runtime already"):
        chart_kinds.chart_kind("runtime", short_title="Mine", short_y="s", order=1)(lambda c: None)
    assert chart_kinds.chart_kind("runtime", short_title=runtime.short_title, short_y=runtime.short_y,
                                  order=runtime.order)(spec_kinds.runtime) is spec_kinds.runtime
    assert chart_kinds.get("runtime").build is spec_kinds.runtime


def test_a_plugins_backend_is_never_drawn_in_numpys_blue_nor_near_it():
    from workbench.views import palette
    near = {palette.OKABE_ITO["blue"], palette.OKABE_ITO["sky"], palette.OKABE_ITO["yellow"]}
    names = [f"plugin-{i}" for i in range(200)] + ["numpy-power", "numpy-blas", "twin-a", "twin-b"]
    assert not {palette.color(n) for n in names} & near
    assert len({palette.color(n) for n in names}) == len(palette.PLUGIN_COLORS)     # all of the others used

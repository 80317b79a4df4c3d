"""Which charts exist and how large they are drawn: names and sizes only, no matplotlib.

The command line's parser and the window's menus read these without paying for matplotlib's
import; ``workbench.views.matplotlib_charts`` draws with them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbench.views import chart_kinds


#: Every chart kind's name, in order, read when first used (``workbench.views.chart_kinds``).
KINDS = chart_kinds.KINDS
FORMATS = (".png", ".svg", ".pdf")
#: The timeline's other export: Chrome's trace event JSON (``workbench.views.trace``).
TRACE_FORMAT = ".json"
MIN_PIXELS, MAX_PIXELS = 320, 8192
#: Every slide figure is this tall in inches: fonts and lines, set in points, then scale with the
#: pixel height (1080 px -> 150 dpi, 2160 px -> 300 dpi), and the layout is the same at any size.
SLIDE_HEIGHT_IN = 7.2


@dataclass(frozen=True)
class Preset:
    """A figure's size and the sizes of everything drawn on it, in points."""

    name: str
    width_in: float
    height_in: float
    dpi: float            # pixels per inch of a PNG (vector formats ignore it)
    font_pt: float
    line_pt: float
    marker_pt: float
    legend: str           # "right" of the plot (slides) or "below" it (a narrow paper column)

    @property
    def pixels(self) -> tuple[int, int]:
        return round(self.width_in * self.dpi), round(self.height_in * self.dpi)


PRESET_SIZES = {"slide": (1920, 1080), "4k": (3840, 2160)}
PRESETS = ("slide", "4k", "paper")
PAPER = Preset("paper", 3.5, 3.3, 600, 7.0, 1.0, 3.5, "below")   # one column of a two-column paper


def preset(name: str = "slide", size: tuple[int, int] | None = None) -> Preset:
    """The slide (1920x1080), 4k (3840x2160) or paper preset, or a slide of ``size`` pixels."""
    if name == "paper":
        if size is not None:
            raise ValueError("the paper preset has its own size (3.5 in wide); give --size only for slides")
        return PAPER
    if name not in PRESET_SIZES:
        raise ValueError(f"unknown preset {name!r}: use one of {', '.join(PRESETS)}")
    width, height = size or PRESET_SIZES[name]
    for side in (width, height):
        if not MIN_PIXELS <= side <= MAX_PIXELS:
            raise ValueError(f"size {width}x{height}: each side must be from {MIN_PIXELS} to {MAX_PIXELS} pixels")
    if not 0.25 <= width / height <= 4:
        raise ValueError(f"size {width}x{height}: the sides may differ by a factor of 4 at most")
    dpi = height / SLIDE_HEIGHT_IN
    return Preset(name if size is None else f"{width}x{height}", width / dpi, SLIDE_HEIGHT_IN, dpi,
                  16.0, 3.0, 9.0, "right")


def parse_size(text: str) -> tuple[int, int]:
    """``"1920x1080"`` -> (1920, 1080); ValueError, with what was wrong, otherwise."""
    m = re.fullmatch(r"\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*", text)
    if not m:
        raise ValueError(f"size {text!r}: write WIDTHxHEIGHT in pixels, e.g. 1920x1080")
    return int(m.group(1)), int(m.group(2))


def output_paths(path: str | Path, kind: str = "all") -> list[Path]:
    """The files a chart export writes: ``path`` itself, or, for every chart as PNG or SVG, one file
    per chart (``chart-runtime.png``, ...). Every chart as PDF is one file, one page per chart."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == TRACE_FORMAT and kind == "timeline":       # a point's timeline as a Chrome trace
        return [path]
    if suffix == TRACE_FORMAT:
        raise ValueError(f"cannot write {path.name}: a .json chart is a Chrome trace, of --kind timeline only")
    if suffix not in FORMATS:
        raise ValueError(f"cannot write {path.name}: the chart file must end in .png, .svg or .pdf")
    if kind != "all" and kind not in KINDS:
        raise ValueError(f"unknown chart {kind!r}: use one of {', '.join(KINDS)}, all")
    if kind != "all" or suffix == ".pdf":
        return [path]
    return [path.with_name(f"{path.stem}-{k}{path.suffix}") for k in KINDS]

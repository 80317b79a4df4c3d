"""The chart export dialog: which chart (or all), PNG, SVG or PDF, the preset, the stamp, the file.

It only asks: the charts are drawn by ``workbench.views.matplotlib_charts`` from the result sets on
screen, at the preset's size (the window's size never enters). A file name that cannot
be written is refused here, next to the field, before anything is drawn. It opens with
``open()``, never ``exec()``: nothing else waits on it, and a test fills it in by object name.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget)

from workbench.core import writable
from workbench.views import chart_kinds
from workbench.views.presets import FORMATS, PRESETS, TRACE_FORMAT, output_paths

log = logging.getLogger(__name__)
PRESET_TITLES = {"slide": "Slide, 1920x1080", "4k": "4K slide, 3840x2160", "paper": "Paper, one column (3.5 in)"}
FORMAT_TITLES = {".png": "PNG image", ".svg": "SVG (vector, text as text)", ".pdf": "PDF (vector; every chart: a page each)",
                 TRACE_FORMAT: "Chrome trace JSON (the timeline only: Perfetto, chrome://tracing)"}
ALL_FORMATS = FORMATS + (TRACE_FORMAT,)


@dataclass(frozen=True)
class ChartExport:
    """What to export: plain values, handed to the export job."""

    path: Path
    kind: str = "all"       # a name of workbench.views.presets.KINDS, or "all"
    preset: str = "slide"
    stamp: bool = True
    point: tuple | None = None   # the timeline's (backend, size, variant, set index); None: any


class ChartExportDialog(QDialog):
    exportRequested = Signal(object)     # a ChartExport, once its file name is known to be writable

    def __init__(self, parent: QWidget | None = None, settings: QSettings | None = None, kind: str = "all",
                 point: tuple | None = None) -> None:
        super().__init__(parent, objectName="chartExportDialog")
        self.point = point
        self.setWindowTitle("Export chart")
        self.settings = settings
        self.kindCombo = QComboBox(objectName="exportKind")
        self.kindCombo.addItem("Every chart", "all")
        for k in chart_kinds.declared():          # the title each kind declared, another package's too
            self.kindCombo.addItem(k.short_title, k.name)
        self.formatCombo = QComboBox(objectName="exportFormat")
        for suffix in ALL_FORMATS:
            self.formatCombo.addItem(FORMAT_TITLES[suffix], suffix)
        self.presetCombo = QComboBox(objectName="exportPreset")
        for name in PRESETS:
            self.presetCombo.addItem(PRESET_TITLES.get(name, name), name)
        self.stampCheck = QCheckBox("Stamp: workload, dtype, host memory, CPU or GPU, versions, date",
                                    objectName="exportStamp", checked=True)
        self.stampCheck.setToolTip("So that a chart out of context still says where it was measured")
        self.pathEdit = QLineEdit(objectName="exportPath")
        self.browseButton = QPushButton("Browse...", objectName="exportBrowse")
        self.filesLabel = QLabel(objectName="exportFiles", wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.filesLabel.setStyleSheet("color: #444;")
        self.errorLabel = QLabel(objectName="exportError", wordWrap=True, textFormat=Qt.TextFormat.PlainText)
        self.errorLabel.setStyleSheet("color: #b00020;")
        self.errorLabel.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setObjectName("exportOk")

        where = QHBoxLayout()
        where.addWidget(self.pathEdit, 1)
        where.addWidget(self.browseButton)
        form = QFormLayout(self)
        form.addRow("Chart", self.kindCombo)
        form.addRow("Format", self.formatCombo)
        form.addRow("Size", self.presetCombo)
        form.addRow(self.stampCheck)
        form.addRow("File", where)
        form.addRow(self.filesLabel)
        form.addRow(self.errorLabel)
        form.addRow(self.buttons)

        self._restore(kind)
        self.formatCombo.currentIndexChanged.connect(self._format_changed)
        self.kindCombo.currentIndexChanged.connect(self._show_files)
        self.pathEdit.textChanged.connect(self._path_edited)
        self.browseButton.clicked.connect(self._browse)
        self.buttons.accepted.connect(self.try_accept)
        self.buttons.rejected.connect(self.reject)
        self._show_files()

    # --- what is chosen ---------------------------------------------------------------------

    def request(self) -> ChartExport:
        return ChartExport(self._path(), self.kindCombo.currentData(), self.presetCombo.currentData(),
                           self.stampCheck.isChecked(), self.point if self.kindCombo.currentData() == "timeline" else None)

    def _path(self) -> Path:
        """The file name as typed, with the chosen format's suffix where it has none (another
        suffix is kept, and refused: a .jpg is not quietly written as a .jpg.png)."""
        path = Path(self.pathEdit.text().strip()).expanduser()
        if not path.suffix and path.name:
            path = path.with_name(path.name + self.formatCombo.currentData())
        return path

    def problem(self) -> str:
        """Why the export cannot be written ("" when it can): no name, a folder, no such folder, ..."""
        if not self.pathEdit.text().strip():
            return "Give the file a name."
        req = self.request()
        if Path(self.pathEdit.text().strip()).expanduser().is_dir():
            return f"Cannot write {req.path.parent}: is a folder, not a file name. Add a file name."
        try:
            paths = output_paths(req.path, req.kind)
        except ValueError as exc:
            return f"{exc}."
        for path in paths:
            why = writable.problem(path)
            if why:
                return f"Cannot write {path}: {why}. Choose another folder or name."
        return ""

    # --- reacting -----------------------------------------------------------------------------

    def try_accept(self) -> None:
        why = self.problem()
        self.errorLabel.setText(why)
        self.errorLabel.setVisible(bool(why))
        if why:
            return
        req = self.request()
        self._remember(req)
        self.accept()
        self.exportRequested.emit(req)

    def _format_changed(self, _index: int) -> None:
        text = self.pathEdit.text().strip()
        if text:
            path = Path(text)
            stem = path.with_suffix("") if path.suffix.lower() in ALL_FORMATS else path
            self.pathEdit.setText(str(stem) + self.formatCombo.currentData())
        self._show_files()

    def _path_edited(self, text: str) -> None:
        suffix = Path(text.strip()).suffix.lower()
        if suffix in ALL_FORMATS and suffix != self.formatCombo.currentData():
            self.formatCombo.blockSignals(True)
            self.formatCombo.setCurrentIndex(self.formatCombo.findData(suffix))
            self.formatCombo.blockSignals(False)
        self._show_files()

    def _show_files(self, *_) -> None:
        """Every chart as PNG or SVG is five files: name them before they are written."""
        if not self.pathEdit.text().strip():
            self.filesLabel.setText("")
            return
        try:
            paths = output_paths(self._path(), self.kindCombo.currentData())
        except ValueError:
            self.filesLabel.setText("")
            return
        self.filesLabel.setText("Writes " + (paths[0].name if len(paths) == 1 else
                                             f"{len(paths)} files: {paths[0].name}, ..., {paths[-1].name}"))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export chart to", str(self._path()),
                                              "Charts (*.png *.svg *.pdf);;Chrome trace (*.json)")
        if path:
            self.pathEdit.setText(path)

    # --- last choices, kept --------------------------------------------------------------------

    def _restore(self, kind: str) -> None:
        s = self.settings
        get = (lambda key, default: s.value(f"chartExport/{key}", default)) if s is not None else \
            (lambda key, default: default)
        self.kindCombo.setCurrentIndex(max(0, self.kindCombo.findData(kind)))
        remembered = str(get("format", ".png"))
        if remembered == TRACE_FORMAT and kind != "timeline":     # a trace is the timeline's alone
            remembered = ".png"
        self.formatCombo.setCurrentIndex(max(0, self.formatCombo.findData(remembered)))
        self.presetCombo.setCurrentIndex(max(0, self.presetCombo.findData(str(get("preset", "slide")))))
        self.stampCheck.setChecked(str(get("stamp", "true")).lower() == "true")
        folder = Path(str(get("folder", Path.home())))
        name = "charts" if kind == "all" else f"chart-{kind}"
        self.pathEdit.setText(str(folder / f"{name}{self.formatCombo.currentData()}"))

    def _remember(self, req: ChartExport) -> None:
        if self.settings is None:
            return
        self.settings.setValue("chartExport/format", req.path.suffix.lower())
        self.settings.setValue("chartExport/preset", req.preset)
        self.settings.setValue("chartExport/stamp", "true" if req.stamp else "false")
        self.settings.setValue("chartExport/folder", str(req.path.parent))

"""The experiment panel: workload, backends, sizes, dtype, repeats, noise target, time cap per point,
host memory, device memory cap.

It only describes a sweep: ``spec()`` returns an engine ``SweepSpec`` or None,
and ``validityChanged`` says whether Run may be pressed, with the reason shown
next to the field that is wrong.
"""
from __future__ import annotations

import logging
import sys
import time
from html import escape
from typing import Any, Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QListWidget, QListWidgetItem, QSpinBox, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from panels import style
from workbench.measure import engine
from workbench.catalog.backends import BACKENDS, BUILTIN_BACKENDS, Availability, availability_among, probe_all
from workbench.core import driver
from workbench.catalog.workloads import KINDS, REGISTRY
from workbench.core.sizes import fmt_size, parse_bytes, parse_int, steps
from workbench.workspace import Checked, Experiment, check
from workbench.workspace.experiment import memory_notes

log = logging.getLogger(__name__)
ERROR_STYLE = "color: #b00020;"
NOTE_STYLE = "color: #8a5a00;"      # a warning that does not block Run: amber, not red
FREE_MEMORY_TTL_S = 5.0             # how long a reading of the free device memory is reused
#: Ticked when a workload is chosen and none of the ticked backends runs it.
DEFAULT_BACKENDS = ("numpy", "numba", "pandas", "cupy", "numba-cuda", "cudf", "cudf-pandas")


class ExperimentPanel(QWidget):
    validityChanged = Signal(bool, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.availability: dict[str, Availability] = {}
        self._problem = ""
        self._checked: Checked | None = None     # the last check's result (validate)
        self._locked = False

        self.workloadList = QTreeWidget(objectName="workloadList")
        self.workloadList.setHeaderHidden(True)
        self.workloadList.setMinimumHeight(190)
        self.fill_workloads()
        self.description = QLabel(wordWrap=True, objectName="workloadDescription")
        self.description.setTextFormat(Qt.TextFormat.RichText)

        self.backendList = QListWidget(objectName="backendList")
        self.backendList.setMinimumHeight(120)
        self.backendStatus = QLabel(wordWrap=True, objectName="backendStatus", textFormat=Qt.TextFormat.PlainText)
        self.backendStatus.setStyleSheet("color: #666;")

        self.sizeFrom = QLineEdit(objectName="sizeFrom")
        self.sizeTo = QLineEdit(objectName="sizeTo")
        self.sizeSteps = QSpinBox(objectName="sizeSteps", minimum=1, maximum=60, value=8)
        for field in (self.sizeFrom, self.sizeTo):
            field.setPlaceholderText("e.g. 1024 or 2^20")
        self.sizeUnit = QLabel(objectName="sizeUnit")
        self.sizePreview = QLabel(wordWrap=True, objectName="sizePreview", textFormat=Qt.TextFormat.PlainText)
        self.sizePreview.setStyleSheet("color: #444;")
        self.sizeError = QLabel(wordWrap=True, objectName="sizeError", textFormat=Qt.TextFormat.PlainText)
        self.sizeError.setStyleSheet(ERROR_STYLE)

        self.dtypeCombo = QComboBox(objectName="dtypeCombo")
        self.dtypeCombo.addItems(["float32", "float64"])
        self.repeatsSpin = QSpinBox(objectName="repeatsSpin", minimum=1, maximum=10_000,
                                    value=engine.DEFAULT_MIN_REPEATS)
        self.budgetSpin = QDoubleSpinBox(objectName="budgetSpin", minimum=0.0, maximum=60.0, decimals=2,
                                         singleStep=0.05, value=engine.DEFAULT_BUDGET_S, suffix=" s")
        self.budgetSpin.setToolTip("The most seconds of samples a point may take: a point that reaches it "
                                   "before its noise target says so (the command line's --budget)")
        # In percent, as the command line's --noise takes it; the spec holds the fraction.
        self.noiseSpin = QDoubleSpinBox(objectName="noiseSpin", minimum=0.0, maximum=50.0, decimals=2,
                                        singleStep=0.25, value=100 * engine.DEFAULT_NOISE, suffix=" %")
        self.noiseSpin.setToolTip("Sample each point until the 95 % interval of its median is within this "
                                  "of it, or until the time cap; 0: always to the cap (the command line's --noise)")
        self.hostMemoryCombo = QComboBox(objectName="hostMemoryCombo")
        self.hostMemoryCombo.addItems(["pageable", "pinned"])
        self.hostMemoryCombo.setToolTip("How GPU backends hold host buffers for their transfers")
        self.deviceMemoryLimit = QLineEdit(objectName="deviceMemoryLimit")
        self.deviceMemoryLimit.setPlaceholderText("no cap (e.g. 8GiB)")
        self.deviceMemoryLimit.setToolTip(
            "Cap the device memory the GPU backends may use (CuPy's pool, RMM for cuDF, Numba's buffers), "
            "to reach the memory wall on a large GPU: a point past it is an error row and the sweep goes on")
        self.threadsEdit = QLineEdit(objectName="threadsEdit")
        self.threadsEdit.setPlaceholderText("each backend's own (e.g. 1,4,all)")
        self.threadsEdit.setToolTip(
            "Run each CPU backend whose threads can be set (Numba's loops, BLAS) once per count, as its own "
            "series: 1,4,all gives numba x1, numba x4 and one on every core (the command line's --threads)")
        self.energyCheck = QCheckBox("Energy per call", objectName="energyCheck")
        self.energyCheck.setToolTip(
            "After each point, a few seconds of its calls read on the GPU's energy counter (and the CPU's, "
            "where the machine exposes one), the idle draw taken off: a GPU's compute back to back, and its "
            "whole call with the copies beside it (the command line's --energy)")
        self.deviceMemoryNote = QLabel(wordWrap=True, objectName="deviceMemoryNote", textFormat=Qt.TextFormat.PlainText)
        self.deviceMemoryNote.setStyleSheet(NOTE_STYLE)
        self.deviceMemoryNote.setVisible(False)
        self._free: tuple[float, int | None] | None = None    # (when read, bytes free on the device)
        self.formError = QLabel(wordWrap=True, objectName="formError", textFormat=Qt.TextFormat.PlainText)
        self.formError.setStyleSheet(ERROR_STYLE)

        sizes = QGroupBox("Sizes")
        sf = QFormLayout(sizes)
        row = QHBoxLayout()
        row.addWidget(self.sizeFrom)
        row.addWidget(QLabel("to"))
        row.addWidget(self.sizeTo)
        sf.addRow("From", row)
        sf.addRow("Steps", self.sizeSteps)
        sf.addRow(self.sizeUnit)
        sf.addRow(self.sizePreview)
        sf.addRow(self.sizeError)

        params = QGroupBox("Measurement")
        pf = QFormLayout(params)
        pf.addRow("dtype", self.dtypeCombo)
        pf.addRow("Min repeats", self.repeatsSpin)
        pf.addRow("Noise target", self.noiseSpin)
        pf.addRow("Most time per point", self.budgetSpin)
        pf.addRow("GPU host memory", self.hostMemoryCombo)
        pf.addRow("GPU memory cap", self.deviceMemoryLimit)
        pf.addRow("CPU threads", self.threadsEdit)
        pf.addRow(self.energyCheck)
        pf.addRow(self.deviceMemoryNote)

        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("<b>Workload</b>"))
        lay.addWidget(self.workloadList, 3)
        lay.addWidget(self.description)
        lay.addWidget(QLabel("<b>Backends</b>"))
        lay.addWidget(self.backendList, 2)
        lay.addWidget(self.backendStatus)
        lay.addWidget(sizes)
        lay.addWidget(params)
        lay.addWidget(self.formError)

        self.workloadList.currentItemChanged.connect(self._workload_changed)
        self.backendList.itemChanged.connect(self.validate)
        for field in (self.sizeFrom, self.sizeTo):
            field.textChanged.connect(self.validate)
        self.sizeSteps.valueChanged.connect(self.validate)
        self.dtypeCombo.currentTextChanged.connect(self.validate)
        self.deviceMemoryLimit.textChanged.connect(self.validate)
        self.threadsEdit.textChanged.connect(self.validate)

    # --- what the user picked -------------------------------------------------------------------

    def workload_name(self) -> str | None:
        item = self.workloadList.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def fill_workloads(self, hidden: frozenset[str] = frozenset(), origins: Mapping[str, str] | None = None) -> None:
        """The workload tree, from the registry: again after a workload file is (re)loaded. ``hidden``:
        names the registry still holds but whose file no longer declares them; ``origins``: the file
        of a plug-in's workload, for its tooltip. The workload chosen stays chosen where it still exists."""
        current = self.workload_name()
        self.workloadList.blockSignals(True)       # the choice is made again below, once
        self.workloadList.clear()
        kinds = {k: QTreeWidgetItem(self.workloadList, [k.capitalize()]) for k in KINDS}
        for item in kinds.values():
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
        for w in REGISTRY.all():
            if w.name in hidden:
                continue
            child = QTreeWidgetItem(kinds[w.kind], [w.title])
            child.setData(0, Qt.ItemDataRole.UserRole, w.name)
            origin = (origins or {}).get(w.name)
            child.setToolTip(0, f"<b>{escape(w.title)}</b><br>{escape(w.description)}<br><br><i>{escape(w.lesson)}</i>"
                             + (f"<br><br>from {escape(origin)}" if origin else ""))    # a file's name is no markup
        self.workloadList.expandAll()
        if current is None:
            self.workloadList.blockSignals(False)
            return
        # Chosen again quietly: the user's sizes stay; the description and backends are the file's now.
        found = self.select_workload(current)
        self.workloadList.blockSignals(False)
        self._describe(current if found else None)
        self._fill_backends(keep=self.checked_backends())

    def set_locked(self, locked: bool) -> None:
        """While a sweep runs nothing here changes, by hand or by a script."""
        self._locked = locked
        self.setEnabled(not locked)

    def select_workload(self, name: str) -> bool:
        if self._locked:
            return False
        for kind in range(self.workloadList.topLevelItemCount()):
            top = self.workloadList.topLevelItem(kind)
            for i in range(top.childCount()):
                if top.child(i).data(0, Qt.ItemDataRole.UserRole) == name:
                    self.workloadList.setCurrentItem(top.child(i))
                    return True
        return False

    def checked_backends(self) -> list[str]:
        out = []
        for i in range(self.backendList.count()):
            item = self.backendList.item(i)
            if item.checkState() == Qt.CheckState.Checked and item.flags() & Qt.ItemFlag.ItemIsEnabled:
                out.append(item.data(Qt.ItemDataRole.UserRole))
        return out

    def set_checked_backends(self, names: list[str]) -> None:
        for i in range(self.backendList.count()):
            item = self.backendList.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in names and bool(item.flags() & Qt.ItemFlag.ItemIsEnabled)
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def settings(self) -> dict[str, Any]:
        """What is chosen, as plain values (``workbench.results.session_file.EXPERIMENT_FIELDS``)."""
        return {"workload": self.workload_name() or "", "backends": self.checked_backends(),
                "size_from": self.sizeFrom.text(), "size_to": self.sizeTo.text(), "size_steps": self.sizeSteps.value(),
                "dtype": self.dtypeCombo.currentText(), "repeats": self.repeatsSpin.value(),
                "budget_s": self.budgetSpin.value(), "noise_percent": self.noiseSpin.value(),
                "host_memory": self.hostMemoryCombo.currentText(),
                "device_memory_limit": self.deviceMemoryLimit.text(), "threads": self.threadsEdit.text().strip(),
                "energy": self.energyCheck.isChecked()}

    def apply_settings(self, settings: Mapping[str, Any]) -> list[str]:
        """Choose what ``settings`` names (as :meth:`settings` gives it, or as QSettings' text);
        keys it lacks are left as they are. Returns what could not be chosen here, in words."""
        if self._locked:
            return ["the experiment cannot change while a sweep runs"]
        problems = []
        workload = str(settings.get("workload") or "")
        if workload and not self.select_workload(workload):
            problems.append(f"no workload {workload} here (a plug-in not loaded?)")
        for key, field in (("size_from", self.sizeFrom), ("size_to", self.sizeTo)):
            if settings.get(key) not in (None, ""):
                field.setText(str(settings[key]))
        if settings.get("device_memory_limit") is not None:     # empty is a choice here: no cap
            self.deviceMemoryLimit.setText(str(settings["device_memory_limit"]))
        if settings.get("threads") is not None:
            self.threadsEdit.setText(str(settings["threads"]))
        if settings.get("energy") is not None:       # QSettings gives text: 'true' / 'false'
            self.energyCheck.setChecked(str(settings["energy"]).lower() in ("true", "1"))
        for key, spin, kind in (("size_steps", self.sizeSteps, int), ("repeats", self.repeatsSpin, int),
                                ("budget_s", self.budgetSpin, float), ("noise_percent", self.noiseSpin, float)):
            if settings.get(key) not in (None, ""):
                try:
                    spin.setValue(kind(float(settings[key])))
                except (TypeError, ValueError):
                    problems.append(f"{key} {settings[key]!r} is not a number")
        for key, combo in (("dtype", self.dtypeCombo), ("host_memory", self.hostMemoryCombo)):
            value = settings.get(key)
            if value not in (None, ""):
                if combo.findText(str(value)) < 0:
                    problems.append(f"{key} {value} is not offered here")
                else:
                    combo.setCurrentText(str(value))
        backends = settings.get("backends")
        if backends is not None:
            names = [b for b in (backends.split(",") if isinstance(backends, str) else backends) if b]
            self.set_checked_backends(names)
            missing = [b for b in names if b not in self.checked_backends()]
            if missing and self.availability:
                problems.append(f"not usable here: {', '.join(missing)}")
        return problems

    def sizes(self) -> list[int]:
        return steps(parse_int(self.sizeFrom.text()), parse_int(self.sizeTo.text()), self.sizeSteps.value())

    def device_memory_limit(self) -> int:
        """The cap typed in bytes (0: none); raises ValueError for what cannot be read."""
        text = self.deviceMemoryLimit.text().strip()
        return parse_bytes(text) if text else 0

    def experiment(self) -> Experiment:
        """What is chosen, as the workspace's Experiment (checked by ``workbench.workspace.check``)."""
        return Experiment.from_panel(self.settings())

    def spec(self) -> engine.SweepSpec | None:
        """The sweep the panel describes, as the workspace's check made it; None where it has a problem."""
        if self._problem or self.workload_name() is None:
            return None
        # Checked again: the repeats, the noise target and the time cap change no validity, so a
        # change of theirs does not validate the form.
        return check(self.experiment(), self._usable).spec

    def _usable(self, name: str) -> Availability:
        """What the probes found of a backend; one still being probed counts as usable here (it is
        only ticked once it is enabled, and the engine refuses it if it cannot run after all)."""
        return availability_among(name, self.availability) or Availability(True)

    def free_device_memory(self) -> int | None:
        """The device memory free now, read from the driver at most every few seconds (every key
        typed validates the form)."""
        now = time.monotonic()
        if self._free is None or now - self._free[0] > FREE_MEMORY_TTL_S:
            self._free = (now, driver.free_memory())
        return self._free[1]

    def memory_notes(self, spec: engine.SweepSpec | None = None) -> list[str]:
        """Sizes of ``spec`` (by default the sweep as the panel stands) whose device footprint passes
        the cap or the free device memory."""
        spec = spec or self.spec()
        if spec is None:
            return []
        return memory_notes(spec, free=self.free_device_memory())

    # --- availability, from the worker's probes --------------------------------------------------

    def set_availability(self, availability: dict[str, Availability]) -> None:
        self.availability = dict(availability)
        self._fill_backends(keep=self.checked_backends())

    def _fill_backends(self, keep: list[str]) -> None:
        name = self.workload_name()
        self.backendList.blockSignals(True)
        self.backendList.clear()
        unusable = []
        if name:
            for b in REGISTRY.get(name).backends:
                a = availability_among(b, self.availability)
                item = QListWidgetItem(BACKENDS[b].title if b in BACKENDS else b)
                item.setData(Qt.ItemDataRole.UserRole, b)
                item.setIcon(style.icon(b))     # the backend's marker and colour, as in the charts
                flags = Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsSelectable
                if a is None:
                    item.setToolTip(_tip(BACKENDS[b].description, "(checking whether it can run here...)"))
                    item.setFlags(flags)
                elif a.usable:
                    item.setFlags(flags | Qt.ItemFlag.ItemIsEnabled)
                    item.setToolTip(_tip(BACKENDS[b].description, f"version {a.version}"))
                else:
                    item.setFlags(flags)
                    item.setToolTip(_tip(f"Not usable here: {a.reason}"))
                    unusable.append(f"{b}: {a.reason}")
                item.setCheckState(Qt.CheckState.Checked if b in keep and a is not None and a.usable
                                   else Qt.CheckState.Unchecked)
                self.backendList.addItem(item)
        self.backendStatus.setText("Not usable here: " + "; ".join(unusable) if unusable else "")
        self.backendList.blockSignals(False)
        self.validate()

    # --- reacting ---------------------------------------------------------------------------------

    def _workload_changed(self, current, previous) -> None:
        name = self.workload_name()
        if name is None:
            return
        w = REGISTRY.get(name)
        self._describe(name)
        self.sizeUnit.setText(f"Size = {w.size_unit}")
        self.sizeFrom.setText(fmt_size(w.default_sizes[0]))
        self.sizeTo.setText(fmt_size(w.default_sizes[-1]))
        self.sizeSteps.setValue(len(w.default_sizes))
        # Keep the user's ticks where they apply; where none does (numpy/numba -> groupby), tick the
        # workload's usual backends rather than leave Run disabled with nothing ticked.
        keep = [b for b in self.checked_backends() if b in w.backends] or list(DEFAULT_BACKENDS)
        # A plug-in's own backends are what its file is about: ticked with them.
        keep += [b for b in w.backends if b not in BUILTIN_BACKENDS and b not in keep]
        self._fill_backends(keep=keep)

    def _describe(self, name: str | None) -> None:
        w = REGISTRY.get(name) if name else None
        self.description.setText(f"{escape(w.description)}<br><i>{escape(w.lesson)}</i>" if w else "")

    def validate(self, *_) -> bool:
        """Check every field (the workspace's one check); show each problem next to its field;
        emit validityChanged."""
        checked = self._checked = check(self.experiment(), self._usable)
        size_problem = checked.about("sizes")
        others = [p for p in checked.problems if p.setting != "sizes"]
        form_problem = ""
        if others:
            p = others[0]
            form_problem = {"device_memory_limit": f"GPU memory cap: {p.text}",
                            "threads": f"CPU threads: {p.text}"}.get(p.setting, p.text)
        preview = "Sizes: " + ", ".join(fmt_size(s) for s in checked.sizes) if checked.sizes else ""
        # Announced, never refused: a size past the cap is how the wall is reached on purpose.
        notes = self.memory_notes(checked.spec) if checked.spec is not None else []
        self.deviceMemoryNote.setText("\n".join(notes))
        self.deviceMemoryNote.setVisible(bool(notes))
        self.sizePreview.setText(preview if not size_problem else "")
        self.sizeError.setText(size_problem)
        self.sizeError.setVisible(bool(size_problem))
        self.formError.setText(form_problem)
        self.formError.setVisible(bool(form_problem))
        self._problem = size_problem or form_problem
        self.validityChanged.emit(not self._problem, self._problem)
        return not self._problem

    @property
    def problem(self) -> str:
        return self._problem


def _tip(*lines: str) -> str:
    """A tooltip of plain lines, a plug-in's text among them: shown as text, whatever it holds."""
    return "<p>" + "<br>".join(escape(line) for line in lines) + "</p>"


def _demo() -> None:  # pragma: no cover - a panel on its own, for quick work on it
    app = QApplication(sys.argv)
    panel = ExperimentPanel()
    panel.set_availability(probe_all(deep=False))
    panel.select_workload("source_terms")
    panel.show()
    app.exec()


if __name__ == "__main__":  # pragma: no cover
    _demo()

"""Where the window's sweeps run: this machine, a local Dask cluster, or a scheduler's address.

A small box under the experiment panel. It only says what was chosen (``target()``: None for this
machine, else a ``workbench.cluster.connect.Target``); the window hands that to the controller,
which swaps the engine its worker drives, so a sweep on a cluster takes the very path of one run
here (``workbench.cluster.runner.ClusterRunner`` is a ``workbench.measure.runner.Runner``, as the supervisor is). Dask is not
imported by this box, nor by choosing: only by the first sweep, or backend check, on a cluster.
"""
from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QWidget

from workbench.cluster.connect import LOCAL, Target

HERE, LOCAL_CLUSTER, SCHEDULER = "This machine", "Local Dask cluster", "Dask scheduler at..."


class RunOnBox(QWidget):
    #: The choice changed and is complete (an address given where one is needed).
    targetChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="runOnBox")
        self.choice = QComboBox(objectName="runOnCombo")
        self.choice.addItems([HERE, LOCAL_CLUSTER, SCHEDULER])
        self.choice.setToolTip("Where the points are measured: the engine of this machine, a Dask cluster started "
                               "here (one worker per GPU), or the workers of a lab's scheduler (docs/CLUSTER.md)")
        self.address = QLineEdit(objectName="runOnAddress", placeholderText="tcp://gpu-server:8786")
        self.address.setToolTip("The scheduler's address; tls:// takes its certificates from Dask's configuration "
                                "(distributed.comm.tls)")
        lay = QFormLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addRow("Run on", self.choice)
        lay.addRow("", self.address)
        self.choice.currentTextChanged.connect(self._on_choice)
        self.address.editingFinished.connect(self._on_address)
        self._on_choice(self.choice.currentText())

    def target(self) -> Target | None:
        """None: this machine's engine; else the cluster chosen (None too while its address is empty)."""
        text = self.choice.currentText()
        if text == LOCAL_CLUSTER:
            return Target(LOCAL)
        if text == SCHEDULER and self.address.text().strip():
            return Target(self.address.text().strip())
        return None

    def problem(self) -> str:
        """Why the choice cannot be used ('' when it can): an address missing or malformed."""
        if self.choice.currentText() != SCHEDULER:
            return ""
        text = self.address.text().strip()
        if not text:
            return "Give the Dask scheduler's address (tcp://HOST:8786), or run on this machine."
        try:
            Target(text).check()
        except ValueError as exc:
            return str(exc)
        return ""

    def settings(self) -> dict:
        return {"run_on": self.choice.currentText(), "scheduler": self.address.text()}

    def apply_settings(self, stored: dict) -> None:
        self.address.setText(str(stored.get("scheduler") or ""))
        if stored.get("run_on") in (HERE, LOCAL_CLUSTER, SCHEDULER):
            self.choice.setCurrentText(str(stored["run_on"]))

    @Slot(str)
    def _on_choice(self, text: str) -> None:
        self.address.setVisible(text == SCHEDULER)
        if text != SCHEDULER or not self.problem():
            self.targetChanged.emit()

    @Slot()
    def _on_address(self) -> None:
        if not self.problem():
            self.targetChanged.emit()


if __name__ == "__main__":        # shown on its own, for quick work on it
    import sys

    from PySide6.QtWidgets import QApplication
    app = QApplication(sys.argv)
    box = RunOnBox()
    box.targetChanged.connect(lambda: print("run on:", box.target()))
    box.show()
    sys.exit(app.exec())

"""The speedup baseline's chooser: the backends of the sets shown, each set's own or one set's for all."""
from __future__ import annotations

from typing import Sequence

from PySide6.QtWidgets import QComboBox

from workbench.results.files import ResultSet
from workbench.views import compare
from workbench.views.compare import Baseline


class BaselineChooser(QComboBox):
    """A combo box whose items are (shown, text) baselines: the text is what ``compare.baseline``
    reads, and what sessions and exports save ("numpy", "numpy@2"; "" is the default)."""

    def __init__(self) -> None:
        super().__init__(objectName="speedupBaseline")
        self.setToolTip("The backend every speedup is measured against; when sets are compared, each "
                        "set's own or one set's for all")

    def chosen(self) -> str:
        """The text chosen, read without making the sets ("" for the default)."""
        return self.currentData() or ""

    def offer_for(self, sets: Sequence[ResultSet], labels: Sequence[str]) -> None:
        """List the baselines of ``sets`` (``labels``: each set's), before their charts are drawn."""
        self.offer([(b.describe(labels), b.text) for b in compare.baseline_choices(sets, labels)],
                   lambda: compare.baseline(sets, labels=labels).text)

    def offer(self, items: Sequence[tuple[str, str]], default) -> None:
        """List ``items`` (shown, text); the one chosen stays chosen while it is there, else
        ``default`` (a text, or what makes it: making it may cost the sets) is. Nothing changes,
        and no signal fires, where the list is the same."""
        items = list(items)
        if not items or items == [(self.itemText(i), self.itemData(i)) for i in range(self.count())]:
            return
        current = self.currentData()
        texts = [text for _, text in items]
        if current not in texts and callable(default):
            default = default()
        self.blockSignals(True)
        self.clear()
        for shown, text in items:
            self.addItem(shown, text)
        self.setCurrentIndex(texts.index(current) if current in texts else texts.index(default))
        self.blockSignals(False)

    def choice(self, sets: Sequence[ResultSet], labels: Sequence[str]) -> Baseline:
        """The chosen baseline of ``sets`` (as ``compare.baseline`` reads it: the exports use it too)."""
        text = self.currentData()
        if not text:
            return Baseline("")
        try:
            return compare.baseline(sets, text, labels)
        except ValueError:          # the sets changed under the chooser: the default until it is rebuilt
            return compare.baseline(sets, labels=labels)

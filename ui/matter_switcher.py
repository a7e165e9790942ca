"""The matter switcher at the top of the library: the current matter, and every other one to switch to.

A matter past its retention date says so on its item ("retention due"), and a closed one too; choosing
one asks the window to work in it (the window checks it can, and answers with set_matters).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

from app.store.matters import Matter
from ui.safe_text import plain_tooltip

DUE_MARK = "retention due"
CLOSED_MARK = "closed"


def label(matter: Matter, today: str) -> str:
    """The matter's name with what the user should know at a glance."""
    marks = [m for m, on in ((DUE_MARK, matter.due(today)), (CLOSED_MARK, matter.closed)) if on]
    return matter.name + (f" ({', '.join(marks)})" if marks else "")


def tooltip(matter: Matter, today: str) -> str:
    lines = [matter.name]
    if matter.number:
        lines.append(f"number {matter.number}")
    lines.append(f"opened {matter.opened_at[:10]}")
    if matter.retain_until:
        due = ": past, due for destruction (Matter > Destroy matter…)" if matter.due(today) else ""
        lines.append(f"retain until {matter.retain_until}{due}")
    return plain_tooltip("\n".join(lines))


class MatterSwitcher(QWidget):
    matter_chosen = Signal(int)  # a matter id the user picked (not yet the current one)

    def __init__(self) -> None:
        super().__init__()
        self.combo = QComboBox()
        self.combo.setObjectName("matterSwitcher")
        self.combo.setAccessibleName("Matter")
        self.combo.setAccessibleDescription(
            "The matter the library, conversations, search and extraction tables show; choose another to switch"
        )
        # A long matter name is cut, never widening the library panel past the screen.
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(12)
        self.combo.activated.connect(self._activated)
        caption = QLabel("&Matter")
        caption.setBuddy(self.combo)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(caption)
        row.addWidget(self.combo, 1)
        self._current: int | None = None

    def set_matters(self, matters: list[Matter], current: int, today: str) -> None:
        self._current = current
        self.combo.blockSignals(True)
        self.combo.clear()
        for matter in matters:
            self.combo.addItem(label(matter, today), matter.id)
            self.combo.setItemData(self.combo.count() - 1, tooltip(matter, today), Qt.ItemDataRole.ToolTipRole)
            if matter.id == current:
                self.combo.setCurrentIndex(self.combo.count() - 1)
                self.combo.setToolTip(tooltip(matter, today))
        self.combo.blockSignals(False)

    def current_id(self) -> int | None:
        return self._current

    def labels(self) -> list[str]:
        return [self.combo.itemText(i) for i in range(self.combo.count())]

    def _activated(self, index: int) -> None:
        matter_id = self.combo.itemData(index)
        if matter_id is None:
            return
        if int(matter_id) != self._current:
            self.matter_chosen.emit(int(matter_id))
        # Until the window answers with set_matters the current matter is still the old one.
        self.combo.setCurrentIndex(max(self.combo.findData(self._current), 0))

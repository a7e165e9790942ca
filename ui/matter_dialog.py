"""New matter… and Rename matter…: a matter's name, client/matter number and retention date.

The dialog hands what was typed to `submit` (which writes it, audited, through app/store/matters.py) and
closes only when that worked; a refusal (a name already taken, an empty name) stays in the dialog as
one line, with what was typed still there to correct.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.errors import USER_ERRORS, one_line
from app.store.matters import Matter

DEFAULT_RETENTION_YEARS = 7  # a common period for client files; the user changes it before ticking


@dataclass(frozen=True)
class MatterFields:
    name: str
    number: str
    description: str
    retain_until: str | None  # YYYY-MM-DD, None: kept until destroyed by hand


class MatterDialog(QDialog):
    def __init__(
        self, parent: QWidget | None, submit: Callable[[MatterFields], object], matter: Matter | None = None
    ) -> None:
        super().__init__(parent)
        self._submit = submit
        self.setWindowTitle("Rename matter" if matter else "New matter")
        self.name = QLineEdit(matter.name if matter else "")
        self.name.setAccessibleName("Matter name")
        self.name.setPlaceholderText("Acme v. Beta")
        self.number = QLineEdit(matter.number if matter else "")
        self.number.setAccessibleName("Client or matter number")
        self.description = QLineEdit(matter.description if matter else "")
        self.description.setAccessibleName("Description")
        self.description.setEnabled(matter is None)  # written when the matter is opened
        self.retain = QCheckBox("Due for destruction after")
        self.retain.setAccessibleDescription(
            "After this date the matter is flagged as due; nothing is deleted until you destroy it"
        )
        self.until = QDateEdit()
        self.until.setCalendarPopup(True)
        self.until.setDisplayFormat("yyyy-MM-dd")
        self.until.setAccessibleName("Retention date")
        if matter is not None and matter.retain_until:
            self.retain.setChecked(True)
            self.until.setDate(QDate.fromString(matter.retain_until[:10], "yyyy-MM-dd"))
        else:
            self.until.setDate(QDate.currentDate().addYears(DEFAULT_RETENTION_YEARS))
        self.until.setEnabled(self.retain.isChecked())
        self.retain.toggled.connect(self.until.setEnabled)
        self.error = QLabel("")
        self.error.setObjectName("matterError")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        form = QFormLayout()
        form.addRow("&Name", self.name)
        form.addRow("N&umber", self.number)
        form.addRow("&Description", self.description)
        form.addRow(self.retain, self.until)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def fields(self) -> MatterFields:
        until = self.until.date().toString("yyyy-MM-dd") if self.retain.isChecked() else None
        return MatterFields(self.name.text(), self.number.text(), self.description.text(), until)

    def _ok(self) -> None:
        try:
            self._submit(self.fields())
        except USER_ERRORS as exc:
            self.error.setText(one_line(exc))
            self.error.setVisible(True)
            return
        self.accept()

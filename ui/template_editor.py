"""Create and edit user extraction templates: add, remove, rename fields, edit descriptions."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import USER_ERRORS, one_line
from app.templates import Template, TemplateField, TemplateStore, slug


class TemplateEditor(QDialog):
    """Edits a copy of a template; Save stores it (built-ins are saved as a user copy)."""

    def __init__(self, store: TemplateStore, template: Template, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.original = template
        self.saved: Template | None = None
        self.setWindowTitle(f"Template - {template.name}")
        self.resize(760, 560)
        self.key = QLineEdit(template.key if not template.builtin else f"my_{template.key}")
        self.key.setEnabled(template.builtin or not (store.user_dir / f"{template.key}.json").exists())
        self.name = QLineEdit(template.name if not template.builtin else f"{template.name} (copy)")
        self.fields = QTableWidget(0, 2)
        self.fields.setHorizontalHeaderLabels(["Field", "What counts"])
        self.fields.horizontalHeader().setStretchLastSection(True)
        self._keys: list[str | None] = []
        for f in template.fields:
            self._append(f.name, f.description, f.key)
        add = QPushButton("Add field")
        remove = QPushButton("Remove field")
        add.clicked.connect(lambda: self._append("New field", "", None, edit=True))
        remove.clicked.connect(self.remove_selected)
        self.error = QLabel("")
        self.error.setStyleSheet("color:#b91c1c;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(QLabel("Key"))
        row.addWidget(self.key)
        row.addWidget(QLabel("Name"))
        row.addWidget(self.name)
        tools = QHBoxLayout()
        tools.addWidget(add)
        tools.addWidget(remove)
        tools.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.fields)
        layout.addLayout(tools)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _append(self, name: str, description: str, key: str | None, *, edit: bool = False) -> None:
        row = self.fields.rowCount()
        self.fields.insertRow(row)
        self.fields.setItem(row, 0, QTableWidgetItem(name))
        self.fields.setItem(row, 1, QTableWidgetItem(description))
        self._keys.append(key)
        if edit:
            self.fields.setCurrentCell(row, 0)
            self.fields.editItem(self.fields.item(row, 0))  # type: ignore[arg-type]

    def remove_selected(self) -> None:
        row = self.fields.currentRow()
        if row >= 0:
            self.fields.removeRow(row)
            del self._keys[row]

    def _text(self, row: int, column: int) -> str:
        item = self.fields.item(row, column)
        return item.text().strip() if item is not None else ""

    def edited(self) -> Template:
        """The template as shown: existing fields keep their keys, so renamed fields stay aligned."""
        used = {k for k in self._keys if k}
        fields: list[TemplateField] = []
        for row, known in enumerate(self._keys):
            name = self._text(row, 0)
            key = known
            if key is None:
                base = key = slug(name)
                n = 2
                while key in used:
                    key, n = f"{base[:60]}_{n}", n + 1
                used.add(key)
            fields.append(TemplateField(key, name, self._text(row, 1)))
        key = self.key.text().strip()
        same = not self.original.builtin and key == self.original.key
        return Template(
            key=key,
            name=self.name.text().strip(),
            version=self.original.version if same else 1,
            fields=tuple(fields),
            description=self.original.description,
        )

    def save(self) -> None:
        try:
            self.saved = self.store.save(self.edited())
        except USER_ERRORS as exc:
            self.error.setText(one_line(exc))
            return
        self.accept()

"""Create and edit user extraction templates: add, remove, rename fields, edit descriptions, kinds
(short answer or yes/no clause) and the words the word search looks for."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
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
from app.extraction.templates import TEXT, YES_NO, Template, TemplateField, TemplateStore, slug

KIND_LABELS = {TEXT: "Short answer", YES_NO: "Yes / no clause"}


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
        self.fields = QTableWidget(0, 4)
        self.fields.setHorizontalHeaderLabels(["Field", "Kind", "What counts", "Search words"])
        self.fields.horizontalHeaderItem(3).setToolTip(  # type: ignore[union-attr]
            "Words a passage holding this field uses; a word search over the document points the model to them"
        )
        self.fields.horizontalHeader().setStretchLastSection(True)
        self._keys: list[str | None] = []
        for f in template.fields:
            self._append(f.name, f.description, f.key, kind=f.kind, search=f.search)
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

    def _append(
        self, name: str, description: str, key: str | None, *, edit: bool = False, kind: str = TEXT, search: str = ""
    ) -> None:
        row = self.fields.rowCount()
        self.fields.insertRow(row)
        self.fields.setItem(row, 0, QTableWidgetItem(name))
        chooser = QComboBox()
        for value, label in KIND_LABELS.items():
            chooser.addItem(label, value)
        chooser.setCurrentIndex(max(0, chooser.findData(kind)))
        chooser.setToolTip("A short answer (a date, a name) or whether a kind of clause is there, quoted when it is")
        self.fields.setCellWidget(row, 1, chooser)
        self.fields.setItem(row, 2, QTableWidgetItem(description))
        self.fields.setItem(row, 3, QTableWidgetItem(search))
        self._keys.append(key)
        if edit:
            self.fields.setCurrentCell(row, 0)
            self.fields.editItem(self.fields.item(row, 0))  # type: ignore[arg-type]

    def remove_selected(self) -> None:
        row = self.fields.currentRow()
        if row >= 0:
            self.fields.removeRow(row)
            del self._keys[row]

    def kind(self, row: int) -> str:
        chooser = self.fields.cellWidget(row, 1)
        return str(chooser.currentData()) if isinstance(chooser, QComboBox) else TEXT

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
            fields.append(TemplateField(key, name, self._text(row, 2), self.kind(row), self._text(row, 3)))
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

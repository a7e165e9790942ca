"""One search box over documents and conversations (of one matter); activating a hit asks to open its anchor."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.errors import USER_ERRORS, one_line
from app.store.search import Search, SearchHit


class SearchPanel(QWidget):
    open_page = Signal(int, int)  # document id, page
    open_message = Signal(int, int)  # conversation id, message id

    def __init__(self, search: Search, parent: QWidget | None = None, *, matter_id: int | None = None) -> None:
        super().__init__(parent)
        self.search = search
        self.matter_id = matter_id  # the matter searched (None: everything)
        self.box = QLineEdit()
        self.box.setPlaceholderText('Search documents and conversations ("phrase", prefix*)')
        self.box.setClearButtonEnabled(True)
        self.status = QLabel("")
        self.results = QListWidget()
        self.results.setWordWrap(True)
        self.hits: list[SearchHit] = []
        layout = QVBoxLayout(self)
        layout.addWidget(self.box)
        layout.addWidget(self.status)
        layout.addWidget(self.results)
        self.box.returnPressed.connect(self.run)
        self.results.itemActivated.connect(self._activated)

    def run(self) -> None:
        self.results.clear()
        self.hits = []
        if not self.box.text().strip():
            self.status.setText("")
            return
        try:
            self.hits = self.search.query(self.box.text(), matter_id=self.matter_id)
        except USER_ERRORS as exc:
            self.status.setText(one_line(exc))
            return
        self.status.setText(f"{len(self.hits)} match{'es' if len(self.hits) != 1 else ''}")
        for i, hit in enumerate(self.hits):
            label = QLabel(
                f"<b>{html.escape(hit.anchor)}</b> {html.escape(hit.title)}<br/>"
                + html.escape(hit.marked("\ue010", "\ue011")).replace("\ue010", "<b>").replace("\ue011", "</b>")
            )
            label.setWordWrap(True)
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, i)
            item.setText(f"{hit.anchor} {hit.snippet}")  # accessible text; the label shows the highlights
            item.setSizeHint(label.sizeHint())
            item.setForeground(Qt.GlobalColor.transparent)
            self.results.addItem(item)
            self.results.setItemWidget(item, label)

    def _activated(self, item: QListWidgetItem) -> None:
        hit = self.hits[int(item.data(Qt.ItemDataRole.UserRole))]
        if hit.kind == "document" and hit.document_id is not None:
            self.open_page.emit(hit.document_id, hit.page or 1)
        elif hit.conversation_id is not None and hit.message_id is not None:
            self.open_message.emit(hit.conversation_id, hit.message_id)

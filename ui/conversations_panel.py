"""Conversations about the selected set of documents: pick one, start a new one, rename, delete."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.errors import NotFound
from app.store.conversations import ConversationRow, Conversations
from ui.safe_text import plain_tooltip
from ui.sizing import compact


class ConversationsPanel(QWidget):
    conversation_chosen = Signal(object)  # conversation id, or None for a new conversation

    def __init__(self, conversations: Conversations) -> None:
        super().__init__()
        self.conversations = conversations
        self.matter_id: int | None = None  # the matter listed (None: every one)
        self.document_ids: list[int] = []
        self.rows: list[ConversationRow] = []
        self.list = QListWidget()
        self.list.setObjectName("conversations")
        self.list.setAccessibleName("Conversations")
        self.list.setAccessibleDescription("Earlier conversations about the selected documents, newest first")
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._chosen)
        self.list.itemDoubleClicked.connect(lambda _item: self.rename())
        self.new_button = QPushButton("New")
        self.new_button.setObjectName("newConversation")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.setToolTip("Start a new conversation about the selected documents")
        self.new_button.clicked.connect(self.new)
        self.rename_button = QPushButton("Rename…")
        self.rename_button.setObjectName("renameConversation")
        self.rename_button.setAccessibleName("Rename conversation")
        self.rename_button.setToolTip("Give the chosen conversation another title (F2)")
        self.rename_button.clicked.connect(self.rename)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setObjectName("deleteConversation")
        self.delete_button.setAccessibleName("Delete conversation")
        self.delete_button.setToolTip("Delete the chosen conversation and its messages, after asking (Delete)")
        self.delete_button.clicked.connect(self.delete)
        compact(self.new_button, self.rename_button, self.delete_button)
        for key, slot, what in (
            (QKeySequence(Qt.Key.Key_F2), self.rename, "Rename the chosen conversation"),
            (QKeySequence.StandardKey.Delete, self.delete, "Delete the chosen conversation (after asking)"),
        ):
            shortcut = QShortcut(key, self.list, slot, context=Qt.ShortcutContext.WidgetShortcut)
            shortcut.setWhatsThis(what)
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 6)
        heading = QLabel("<b>Conversations</b>")
        heading.setBuddy(self.list)
        layout.addWidget(heading)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self._update_buttons()

    def tab_order(self) -> list[QWidget]:
        return [self.list, self.new_button, self.rename_button, self.delete_button]

    def set_documents(self, document_ids: list[int], select: int | None = None) -> None:
        """List the conversations about exactly this set of documents in the matter, newest first."""
        self.document_ids = list(document_ids)
        wanted = sorted(document_ids)
        rows = self.conversations.all(document_id=document_ids[0], matter_id=self.matter_id) if document_ids else []
        self.rows = [r for r in rows if sorted(r.document_ids) == wanted]
        self.list.blockSignals(True)
        self.list.clear()
        for row in self.rows:
            item = QListWidgetItem(row.title)
            item.setData(Qt.ItemDataRole.UserRole, row.id)
            item.setToolTip(plain_tooltip(f"{row.title}\nlast used {row.updated_at.replace('T', ' ')[:16]} UTC"))
            self.list.addItem(item)
            if row.id == select:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._update_buttons()

    def current_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def _chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        self._update_buttons()
        if item is not None:
            self.conversation_chosen.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _update_buttons(self) -> None:
        chosen = self.list.currentItem() is not None
        self.new_button.setEnabled(bool(self.document_ids))
        self.rename_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)

    def new(self) -> None:
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.clearSelection()
        self.list.blockSignals(False)
        self._update_buttons()
        self.conversation_chosen.emit(None)

    def rename(self) -> None:
        conversation_id = self.current_id()
        if conversation_id is None:
            return
        old = self.list.currentItem().text()
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:", text=old)
        if not ok or not title.strip():
            return
        with contextlib.suppress(NotFound):  # deleted meanwhile: the refresh shows it is gone
            self.conversations.rename(conversation_id, title)
        self.set_documents(self.document_ids, select=conversation_id)

    def delete(self) -> None:
        conversation_id = self.current_id()
        if conversation_id is None:
            return
        title = self.list.currentItem().text()
        answer = QMessageBox.question(
            self,
            "Delete conversation",
            f"Delete the conversation “{title}” and all its messages?\nThe documents stay in the library.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        with contextlib.suppress(NotFound):
            self.conversations.delete(conversation_id)
        self.set_documents(self.document_ids)
        self.conversation_chosen.emit(None)

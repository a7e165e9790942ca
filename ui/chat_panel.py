"""The chat pane: the transcript, reading progress with its cancel button, and the question box."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.store.conversations import MessageRow
from ui.elided_label import ElidedLabel
from ui.first_hint import FirstHint
from ui.sizing import compact
from ui.transcript import Transcript

NO_SUBJECT = "Select a document to ask about it."


class ChatPanel(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()
    regenerate_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.header = ElidedLabel(NO_SUBJECT)
        self.header.setObjectName("chatSubject")
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        self.hint = FirstHint()
        self.hint_dismissed = self.hint.dismissed
        self.transcript = Transcript()
        self.transcript.setAccessibleName("Conversation")
        self.transcript.setAccessibleDescription(
            "Questions and answers. Each sentence of an answer ends with what was checked, in words; Tab moves "
            "between citations and checks, Enter opens the page"
        )
        self.citation_clicked = self.transcript.citation_clicked
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName("Reading the documents")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelReading")
        self.cancel_button.setAccessibleName("Cancel reading")
        self.cancel_button.setToolTip("Stop reading the documents (Esc)")
        self.cancel_button.clicked.connect(self.stop_requested)
        progress_row = QWidget()
        row = QHBoxLayout(progress_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        self.progress_row = progress_row
        self.progress_row.setVisible(False)
        self.input = QPlainTextEdit()
        self.input.setObjectName("question")
        self.input.setAccessibleName("Question")
        self.input.setAccessibleDescription("Ctrl+Enter sends it; Esc stops the answer; Tab leaves the box")
        self.input.setTabChangesFocus(True)  # Tab moves on, as everywhere else; a question needs no tabs
        self.input.setPlaceholderText("Ask about the selected document…  (Ctrl+Enter to send, Esc to stop)")
        # Four lines where there is room; two on a short screen (1280x720 at 200% has 360 points).
        lines = self.fontMetrics().lineSpacing()
        self.input.setMinimumHeight(lines * 2 + 12)
        self.input.setMaximumHeight(lines * 4 + 12)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("send")
        self.send_button.setToolTip("Send the question (Ctrl+Enter)")
        self.send_button.clicked.connect(self._send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stop")
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        self.regenerate_button = QPushButton("Regenerate")
        self.regenerate_button.setObjectName("regenerate")
        self.regenerate_button.setToolTip("Ask the last question again, replacing its answer")
        self.regenerate_button.clicked.connect(self.regenerate_requested)
        self.copy_button = QPushButton("Copy answer")
        self.copy_button.setObjectName("copyAnswer")
        self.copy_button.setToolTip("Copy the last answer, with its citations, as Markdown")
        self.copy_button.clicked.connect(self.copy_last_answer)
        compact(self.copy_button, self.regenerate_button, self.stop_button, self.send_button, self.cancel_button)
        send = QShortcut(QKeySequence("Ctrl+Return"), self.input, self._send, context=Qt.ShortcutContext.WidgetShortcut)
        send.setWhatsThis("Send the question (in the question box)")
        QShortcut(QKeySequence("Ctrl+Enter"), self.input, self._send, context=Qt.ShortcutContext.WidgetShortcut)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop_requested.emit)
        stop.setWhatsThis("Stop the answer, the reading or the extraction run")
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.regenerate_button)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.hint)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.progress_row)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        self._busy = False
        self._update_buttons()

    def tab_order(self) -> list[QWidget]:
        buttons = [self.copy_button, self.regenerate_button, self.stop_button, self.send_button]
        return [self.hint.button, self.transcript, self.cancel_button, self.input, *buttons]

    def set_subject(self, titles: list[str]) -> None:
        """Say which documents a question is about (elided to one line; the whole list in the tooltip)."""
        self.header.setText(f"Asking about: {', '.join(titles)}" if titles else NO_SUBJECT)

    # -- input ---------------------------------------------------------------------------------
    def _send(self) -> None:
        text = self.input.toPlainText().strip()
        if text and self.send_button.isEnabled():
            self.send_requested.emit(text)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        if not busy:
            self.progress_row.setVisible(False)
        self._update_buttons()

    def _update_buttons(self) -> None:
        answers = [m for m in self.transcript.messages if m.role == "assistant"]
        self.send_button.setEnabled(not self._busy)
        self.stop_button.setEnabled(self._busy)
        self.regenerate_button.setEnabled(not self._busy and bool(answers))
        self.copy_button.setEnabled(bool(answers))

    # -- transcript ----------------------------------------------------------------------------
    def show_messages(self, messages: list[MessageRow], document_ids: list[int] | None = None) -> None:
        self.transcript.show_messages(messages, document_ids or [])
        self._update_buttons()

    def begin_answer(self, question: str, document_ids: list[int]) -> None:
        self.input.clear()
        self.transcript.begin_answer(question, document_ids)

    def set_document_order(self, document_ids: list[int]) -> None:
        """The order the conversation keeps its documents in (D1, D2 of the citations count in it)."""
        self.transcript.document_ids = list(document_ids)

    def append(self, channel: str, text: str) -> None:
        self.transcript.append_text(channel, text)

    def finish_answer(self, message: MessageRow, user: MessageRow | None = None) -> None:
        self.progress_row.setVisible(False)
        self.transcript.finish_answer(message, user)
        self._update_buttons()

    def fail_answer(self, reason: str) -> None:
        self.progress_row.setVisible(False)
        self.transcript.fail_answer(reason)
        self._update_buttons()

    def set_prefill(self, done: int, total: int, eta_s: float) -> None:
        self.progress_row.setVisible(done < total)
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)
        left = f"about {eta_s:.0f} s left" if eta_s >= 1 else "almost done"
        self.progress.setFormat(f"Reading the documents: {done:,} / {total:,} tokens, {left}")

    def copy_last_answer(self) -> None:
        answers = [m for m in self.transcript.messages if m.role == "assistant"]
        if answers:
            self.transcript.copy_message(answers[-1].id)

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()

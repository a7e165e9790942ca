"""The chat pane: the transcript (Markdown, rendered as text only) and the question box."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.conversations import MessageRow
from ui.safe_text import SafeTextBrowser

# Model output is untrusted: Markdown only, never raw HTML.
MARKDOWN = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)
RENDER_INTERVAL_MS = 60


class ChatPanel(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.header = QLabel("Select a document to ask about it.")
        self.header.setWordWrap(True)
        self.transcript = SafeTextBrowser()  # answers are untrusted: no HTML, no loads, Folio links only
        self.transcript.setObjectName("transcript")
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.progress.setTextVisible(True)
        self.input = QPlainTextEdit()
        self.input.setObjectName("question")
        self.input.setPlaceholderText("Ask about the selected document…  (Ctrl+Enter to send)")
        self.input.setFixedHeight(72)
        self.send_button = QPushButton("Send")
        self.send_button.clicked.connect(self._send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, self._send)
        QShortcut(QKeySequence("Ctrl+Enter"), self.input, self._send)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop_requested.emit)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.input)
        layout.addLayout(buttons)
        self._history: list[tuple[str, str]] = []  # (speaker line, markdown body)
        self._live_answer = ""
        self._live_thinking = ""
        self._live = False
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.timeout.connect(self._render)

    # -- input ---------------------------------------------------------------------------------
    def _send(self) -> None:
        text = self.input.toPlainText().strip()
        if text and self.send_button.isEnabled():
            self.send_requested.emit(text)

    def set_busy(self, busy: bool) -> None:
        self.send_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if not busy:
            self.progress.setVisible(False)

    # -- transcript ----------------------------------------------------------------------------
    def show_messages(self, messages: list[MessageRow]) -> None:
        self._history = [(_speaker(m), _body(m)) for m in messages]
        self._live = False
        self._render()

    def begin_answer(self, question: str) -> None:
        self._history.append(("**You**", _quote_plain(question)))
        self._live_answer = ""
        self._live_thinking = ""
        self._live = True
        self.input.clear()
        self._render()

    def append(self, channel: str, text: str) -> None:
        if channel == "thinking":
            self._live_thinking += text
        else:
            self._live_answer += text
        if not self._render_timer.isActive():
            self._render_timer.start(RENDER_INTERVAL_MS)

    def finish_answer(self, message: MessageRow) -> None:
        self._live = False
        self._history.append((_speaker(message), _body(message)))
        self._render()

    def fail_answer(self, reason: str) -> None:
        self._live = False
        self._history.append(("**Folio**", f"*Could not answer:* {_quote_plain(reason)}"))
        self._render()

    def set_prefill(self, done: int, total: int, eta_s: float) -> None:
        self.progress.setVisible(done < total)
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"Reading the document: {done:,} / {total:,} tokens, about {eta_s:.0f} s left")

    def _render(self) -> None:
        chunks = [f"{who}\n\n{body}" for who, body in self._history]
        if self._live:
            live = ""
            if self._live_thinking:
                live += "> *thinking…* " + " ".join(self._live_thinking.split())[-400:] + "\n\n"
            live += self._live_answer or "*…*"
            chunks.append(f"**Folio**\n\n{live}")
        bar = self.transcript.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        self.transcript.set_untrusted_markdown("\n\n---\n\n".join(chunks), MARKDOWN)
        if at_bottom:
            bar.setValue(bar.maximum())

    def transcript_text(self) -> str:
        return self.transcript.toPlainText()


def _speaker(m: MessageRow) -> str:
    if m.role == "user":
        return "**You**"
    return f"**Folio** · {m.model or ''}"


def _body(m: MessageRow) -> str:
    if m.role == "user":
        return _quote_plain(m.text)
    body = m.text or "*(no answer)*"
    notes = []
    if m.status != "complete":
        notes.append(m.status + (f": {m.error}" if m.error else ""))
    if m.citations:
        checked = sum(1 for c in m.citations if c.get("valid"))
        notes.append(f"{checked} of {len(m.citations)} citations point at real pages")
    if m.completion_tokens:
        notes.append(f"{m.completion_tokens} tokens in {(m.generate_ms or 0) / 1000:.1f} s")
    return body + ("\n\n*" + _quote_plain(" · ".join(notes)) + "*" if notes else "")


def _quote_plain(text: str) -> str:
    # User text is shown literally: escape Markdown so '#' or '*' in a question is not markup.
    specials = "\\`*_{}[]()#+-.!|>"
    return "".join("\\" + ch if ch in specials else ch for ch in text)

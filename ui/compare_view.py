"""The Compare window: two versions side by side (old left, new right, clause beside clause), every
change coloured, the list of changes to jump with (a click scrolls both sides to it), and the model's
summary beside them once it is written. The redline and the summary are made on the chat worker's
thread (ui/workers.py); this window only shows what arrives.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.compare.markdown import change_text, summary
from app.compare.redline import Redline
from app.compare.summary import Summary
from app.compare.tracked import Paragraph, tracked_paragraphs
from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.export import Exporter, safe_filename
from ui.elided_label import ElidedLabel
from ui.sizing import compact, on_screen

DELETED_STYLE = "color:#b00000; text-decoration:line-through; background:#fde8e8"
INSERTED_STYLE = "color:#006000; text-decoration:underline; background:#e6f6e6"
NOTE_STYLE = "color:#6a5acd; font-style:italic"


def side_html(paragraphs: list[Paragraph], side: str) -> str:
    """One version as HTML: clause by clause (an empty line where the other side has a clause this one
    lacks, so both stay level), its own changes coloured, an anchor 'cN' at every change N."""
    shown = ("same", "deleted", "note") if side == "old" else ("same", "inserted", "note")
    out = []
    for paragraph in paragraphs:
        anchors = "".join(f'<a name="c{n}"></a>' for n in dict.fromkeys(p.change for p in paragraph) if n is not None)
        spans: list[str] = []
        for piece in paragraph:
            if piece.kind == "break":  # a heading on its own line, as the document prints it
                spans = [f"<b>{' '.join(spans)}</b><br>"] if spans else []
                continue
            if piece.kind not in shown:
                continue
            text = html.escape(piece.text)
            if piece.kind == "deleted":
                text = f'<span style="{DELETED_STYLE}">{text}</span>'
            elif piece.kind == "inserted":
                text = f'<span style="{INSERTED_STYLE}">{text}</span>'
            elif piece.kind == "note":
                text = f'<span style="{NOTE_STYLE}">[{text}]</span>'
            spans.append(text)
        out.append(f"<p>{anchors}{' '.join(spans) or '&nbsp;'}</p>")
    return "\n".join(out)


class CompareView(QDialog):
    cancel_requested = Signal()

    def __init__(self, ctx: AppContext, old_title: str, new_title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx  # exports are written (and audited) through the app's Exporter
        self.setWindowTitle(f"Compare: {old_title} → {new_title}")
        self.resize(on_screen(self, QSize(1400, 850)))
        self.redline: Redline | None = None
        self.written: Summary | None = None
        self.status = QLabel("Comparing…")
        self.status.setWordWrap(True)
        self.old_view, self.new_view = QTextBrowser(), QTextBrowser()
        for view, title, side in ((self.old_view, old_title, "Old"), (self.new_view, new_title, "New")):
            view.setOpenLinks(False)  # document text: nothing in it is followed
            view.setToolTip(title)
            view.setAccessibleName(f"{side} version")
            view.setAccessibleDescription(
                f"{title}. Deleted words are struck through, inserted ones underlined; "
                "the list of changes says each in words"
            )
        self.changes = QListWidget()
        self.changes.setObjectName("changes")
        self.changes.setAccessibleName("Changes")
        self.changes.setAccessibleDescription("Each change in words; choosing one shows it on both sides")
        self.changes.setWordWrap(True)
        self.changes.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.changes.currentRowChanged.connect(self.jump_to)
        self.summary_view = QTextBrowser()
        self.summary_view.setObjectName("compareSummary")
        self.summary_view.setAccessibleName("Summary of the material changes")
        self.summary_view.setAccessibleDescription("The model's summary, each sentence followed by what was checked")
        self.summary_view.setOpenLinks(False)
        self.summary_view.setPlaceholderText("The model's summary appears here when it is written.")
        self.export_button = QPushButton("Export…")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self.export)
        self.stop_button = QPushButton("Stop summary")
        self.stop_button.setToolTip("Stop the model's summary; the redline stays")
        self.stop_button.clicked.connect(self.cancel_requested)
        self.export_button.setToolTip("Save the redline as Word (tracked changes), PDF or Markdown")
        compact(self.export_button, self.stop_button)

        sides = QSplitter(Qt.Orientation.Horizontal)
        for label, view in ((f"Old: {old_title}", self.old_view), (f"New: {new_title}", self.new_view)):
            sides.addWidget(_titled(label, view))
        aside = QSplitter(Qt.Orientation.Vertical)
        aside.addWidget(_titled("Changes (click one to see it on both sides)", self.changes))
        aside.addWidget(_titled("Summary of the material changes", self.summary_view))
        aside.setSizes([260, 440])
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(sides)
        body.addWidget(aside)
        body.setSizes([950, 450])
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addWidget(body, 1)
        layout.addLayout(buttons)

    # -- what arrives from the worker -----------------------------------------------------------
    def show_redline(self, redline: Redline) -> None:
        self.redline = redline
        paragraphs = tracked_paragraphs(redline)
        self.old_view.setHtml(side_html(paragraphs, "old"))
        self.new_view.setHtml(side_html(paragraphs, "new"))
        self.changes.clear()
        for change in redline.changes:
            item = QListWidgetItem(f"{change.clause}: {change_text(change)}")
            item.setToolTip(change_text(change))
            self.changes.addItem(item)
        self.status.setText(summary(redline))
        self.export_button.setEnabled(True)

    def show_progress(self, text: str) -> None:
        if self.redline is not None:
            self.status.setText(f"{summary(self.redline)} Summary: {text}")

    def show_summary(self, written: Summary) -> None:
        from app.citations.verdicts import mark

        self.written = written  # also what Export… writes
        assert self.redline is not None
        lines = [f"Written by {written.model_label}. D1 is the old version, D2 the new one."]
        if written.note:
            lines.append(written.note)
        for part in written.parts:
            lines += [f"\n{part.title}" if part.title else "", part.text]
            lines += [f"  {m}  {' '.join(str(c['text']).split())}" for c in part.claims if (m := mark(c, 2))]
        other = written.other(self.redline)
        lines.append(f"\nOther changes: {len(other)} of the {len(self.redline.changes)} are not mentioned above.")
        lines += [f"- {change_text(self.redline.changes[k])}" for k in other]
        self.summary_view.setPlainText("\n".join(lines))  # the model's output: shown as text, never rendered
        self.stop_button.setEnabled(False)
        self.status.setText(f"{summary(self.redline)} Summary written; every sentence checked against both versions.")

    def summary_unavailable(self, reason: str) -> None:
        self.stop_button.setEnabled(False)
        self.summary_view.setPlainText(f"No summary: {reason}\n\nThe redline on the left is complete without it.")
        if self.redline is not None:
            self.status.setText(f"{summary(self.redline)} No summary: {reason}")
        else:
            self.status.setText(reason)

    # -- actions --------------------------------------------------------------------------------
    def jump_to(self, row: int) -> None:
        """Both sides to change `row` (an inserted clause's empty line on the old side, and so on)."""
        if row >= 0:
            self.old_view.scrollToAnchor(f"c{row}")
            self.new_view.scrollToAnchor(f"c{row}")

    def export(self) -> None:
        if self.redline is None:
            return
        name = safe_filename(f"Redline {self.redline.old.title} to {self.redline.new.title}", "docx")
        path, _ = QFileDialog.getSaveFileName(
            self, "Export the redline", str(Path.home() / name), "Word (*.docx);;PDF (*.pdf);;Markdown (*.md)"
        )
        if path:
            self.export_to(Path(path))

    def export_to(self, path: Path) -> None:
        assert self.redline is not None
        try:
            # The save dialog has already asked before replacing a file.
            Exporter(self.ctx).redline(self.redline, path, written=self.written, overwrite=True)
        except USER_ERRORS as exc:
            self.status.setText(one_line(exc))
            return
        self.status.setText(f"Exported to {path}")


def _titled(title: str, widget: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    label = ElidedLabel(title)  # a version's file name can be longer than its half of the window
    label.setBuddy(widget)
    layout.addWidget(label)
    layout.addWidget(widget, 1)
    return box

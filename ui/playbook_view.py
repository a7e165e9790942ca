"""The playbook review window (Work > Review against playbook…, Work > Playbook reviews…): every rule of
the playbook with its verdict, the clause quoted with its page, the reason, the confidence and the
grounding check; Accept / Reject per finding; a click on a finding opens its clause in the viewer; the
export of the report or the Word redline.

The review itself runs on the chat worker (the one owner of the engine, ui/workers.py); this window only
shows what arrives (the extraction events of the playbook's fields, then the stored review). A reviewer's
decision is a one-row write with its audit entry (app.playbook.review.decide_finding), made here on the UI
thread like an extraction table's review buttons.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMargins, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.context import AppContext
from app.engine.progress import Progress
from app.errors import USER_ERRORS, one_line
from app.export import Exporter, safe_filename
from app.extraction.cells import VERDICT_TEXT as CHECK_TEXT
from app.extraction.runner import CellsStored, RunStarted
from app.playbook.book import ABSENT, Playbook
from app.playbook.review import ACCEPTED, CLEARED, REJECTED, Finding, PlaybookReview, decide_finding
from app.playbook.values import FALLBACK, MET, MISSING, NEEDS_PERSON, NOT_MET, VERDICT_TEXT, VERDICTS
from ui.elided_label import ElidedLabel
from ui.safe_text import plain_tooltip
from ui.sizing import available, compact, on_screen
from ui.theme import high_contrast

# Two lines a row, so the view fits beside the document viewer it opens clauses in: the rule with where its
# clause is and the grounding check; the verdict with the confidence; the reason with the clause quoted.
COLUMNS = ("Rule", "Verdict", "Reason and clause", "Decision")
COLUMN_TIPS = (
    "The rule, and under it the page of its clause and the grounding check of the quote",
    "The verdict, and under it the model's confidence in the decision it rests on",
    "Why, in one sentence, and under it the clause as the contract words it",
    "The reviewer's decision: accepted, rejected or not reviewed",
)
RULE, VERDICT, CLAUSE, DECISION = range(len(COLUMNS))
SIDE_WIDTH = 560  # the narrowest the view is placed beside the viewer at; below it, it opens as any dialog
# The verdict's colour (light theme, dark theme) only repeats its word, and gives way in high contrast.
VERDICT_COLOURS = {
    MET: ("#166534", "#86efac"),
    FALLBACK: ("#92400e", "#fcd34d"),
    NOT_MET: ("#b91c1c", "#fca5a5"),
    MISSING: ("#b91c1c", "#fca5a5"),
    NEEDS_PERSON: ("#1e40af", "#93c5fd"),
}
DECISION_TEXT = {ACCEPTED: "accepted", REJECTED: "rejected", "": "not reviewed"}
CLOSE_RUNNING_TIP = "Close this window and stop the review; the fields read so far are kept for the next review"
CLOSE_STORED_TIP = "Close this window; the review stays in Work > Playbook reviews…"
EXPORT_FILTER = "Word with tracked changes (*.docx);;PDF report (*.pdf);;Markdown report (*.md)"


def confidence_text(finding: Finding) -> str:
    if finding.confidence is None:
        return "not scored"
    from app.extraction.decide import confidence_word

    return f"{finding.confidence:.0%} ({confidence_word(finding.confidence)})"


def check_text(finding: Finding) -> str:
    """The grounding check of the clause or value, in the chat's words ('-' when nothing was quoted)."""
    if not finding.grounding or not (finding.quote or finding.page):
        return "-"
    return CHECK_TEXT.get(finding.grounding, finding.grounding)


def finding_text(playbook: Playbook, finding: Finding) -> str:
    """One finding in full, as plain text (the quote is the document's words, the value the model's)."""
    rule = playbook.rule(finding.rule_key)
    lines = [f"{rule.name}: {finding.verdict_text}", f"Position: {rule.position}", f"Reason: {finding.reason}"]
    if finding.quote:
        quote = " ".join(finding.quote.split())
        lines.append(f"Clause ({finding.where or 'page unknown'}, {check_text(finding)}): “{quote}”")
    if rule.value_rule and finding.value and finding.value not in ("yes", "no"):
        read = f"; Folio read {finding.read_value}" if finding.read_value else ""
        lines.append(f"The model read: {' '.join(finding.value.split())}{read}.")
    decided = f", decided by {finding.decided_by}" if finding.decided_by else ""
    lines.append(f"Confidence: {confidence_text(finding)}{decided}.")
    if finding.decision:
        lines.append(f"Reviewer: {finding.decision}" + (f" ({finding.note})" if finding.note else "") + ".")
    if finding.short and (rule.proposed_wording or rule.kind == ABSENT):
        lines.append(f"Proposed wording: {rule.proposed_wording or '(remove the clause)'}")
    return "\n\n".join(lines)


class PlaybookReviewView(QDialog):
    """A review as it runs (progress, Stop) and once stored (findings, decisions, export)."""

    cancel_requested = Signal()
    # What a finding opens: extraction run, document id, field key (WorkMenu.open_evidence's path).
    evidence_requested = Signal(int, int, str)

    def __init__(self, ctx: AppContext, playbook: Playbook, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx  # decisions and exports are written (and audited) through the app's own code
        self.playbook = playbook
        self.review: PlaybookReview | None = None
        self.finished_status: str | None = None  # complete | cancelled | failed, once the run ends
        self.setWindowTitle(f"Playbook review: {title} against {playbook.name}")
        self.resize(on_screen(self, QSize(1300, 780)))
        self.status = QLabel(f"Reviewing against {playbook.name}: {len(playbook.rules)} rules…")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = ElidedLabel("")  # what the engine is doing; a long status is cut, not widening the window
        self.message = QLabel("")  # what a decision or an export did, the file's whole path included
        self.message.setObjectName("reviewMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setMaximum(0)  # busy until the run says how many fields it asks
        self.progress.setAccessibleName("Fields read")
        self.progress.setAccessibleDescription("How many of the playbook's fields the model has read")

        self.table = QTableWidget(len(playbook.rules), len(COLUMNS))
        self.table.setObjectName("findings")
        for col, (name, tip) in enumerate(zip(COLUMNS, COLUMN_TIPS, strict=True)):
            header_item = QTableWidgetItem(name)
            header_item.setToolTip(tip)
            self.table.setHorizontalHeaderItem(col, header_item)
        self.table.setAccessibleName("Findings")
        self.table.setAccessibleDescription(
            "One row per rule: the page of its clause and the grounding check, the verdict and the confidence, "
            "the reason and the clause quoted, and the reviewer's decision"
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)  # each line elided on its own; the finding below has them whole
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().lineSpacing() * 2 + 10)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(CLAUSE, QHeaderView.ResizeMode.Stretch)
        # Moving through the findings (keys or mouse) shows each in full; a click, Enter or a double-click
        # opens its clause in the viewer (the keys alone do not move the viewer under the reader).
        self.table.currentCellChanged.connect(lambda row, _c, _r, _pc: self._show_finding(row))
        self.table.cellClicked.connect(lambda row, _c: self.open_finding(row))
        self.table.cellActivated.connect(lambda row, _c: self.open_finding(row))
        self.finding_view = QTextBrowser()
        self.finding_view.setObjectName("finding")
        self.finding_view.setAccessibleName("The finding")
        self.finding_view.setAccessibleDescription("The chosen rule's position, reason, clause and proposed wording")
        self.finding_view.setOpenLinks(False)
        self.finding_view.setPlaceholderText("Choose a finding to read it in full and open its clause.")

        self.accept_button = QPushButton("&Accept")
        self.accept_button.setToolTip("Accept this finding: the Word export proposes its standard wording")
        self.accept_button.clicked.connect(lambda: self.decide(ACCEPTED))
        self.reject_button = QPushButton("&Reject")
        self.reject_button.setToolTip("Reject this finding: the Word export leaves its clause as it is")
        self.reject_button.clicked.connect(lambda: self.decide(REJECTED))
        self.clear_button = QPushButton("C&lear decision")
        self.clear_button.setToolTip("Take the decision on this finding back (the earlier one stays in the audit log)")
        self.clear_button.clicked.connect(lambda: self.decide(CLEARED))
        self.stop_button = QPushButton("&Stop")
        self.stop_button.setToolTip("Stop after the current field; the fields read so far are kept for the next review")
        self.stop_button.clicked.connect(self._stop)
        self.export_button = QPushButton("&Export…")
        self.export_button.setToolTip("Save the review as Word (the accepted findings as tracked changes), PDF or "
                                      "Markdown")  # fmt: skip
        self.export_button.clicked.connect(self.export)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip(CLOSE_RUNNING_TIP)
        self.close_button.clicked.connect(self.close)
        compact(self.accept_button, self.reject_button, self.clear_button, self.stop_button, self.export_button,
                self.close_button)  # fmt: skip
        for button in (self.accept_button, self.reject_button, self.clear_button, self.export_button):
            button.setEnabled(False)
        for button in (self.accept_button, self.reject_button, self.clear_button, self.stop_button,
                       self.export_button, self.close_button):  # fmt: skip
            # Enter in the findings opens a clause; it must never also press the button clicked last.
            button.setAutoDefault(False)

        top = QHBoxLayout()
        top.addWidget(self.progress, 1)
        top.addWidget(self.stop_button)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.table)
        body.addWidget(self.finding_view)
        body.setSizes([460, 220])
        body.setChildrenCollapsible(False)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.accept_button, self.reject_button, self.clear_button, self.export_button,
                       self.close_button):  # fmt: skip
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.message)
        layout.addLayout(top)
        layout.addWidget(self.detail)
        layout.addWidget(body, 1)
        layout.addLayout(buttons)
        self._fill_rules()

    # -- what arrives from the worker -----------------------------------------------------------
    def on_event(self, event: object) -> None:
        if isinstance(event, RunStarted):
            self.progress.setMaximum(max(event.cells_total, 1))
            self.progress.setValue(event.cells_done)
            self.progress.setFormat("%v / %m fields read")
            again = f", {event.cells_done} read before and kept" if event.cells_done else ""
            self.status.setText(
                f"Reviewing against {self.playbook.name} with {event.model_label}: "
                f"{len(self.playbook.rules)} rules, {event.cells_total} fields to read{again}."
            )
        elif isinstance(event, CellsStored):
            self.progress.setValue(event.cells_done)
        elif isinstance(event, Progress) and event.reading:
            self.detail.setText(f"Reading the document: {event.done:,} / {event.total:,} tokens")
        elif isinstance(event, Progress):
            self.detail.setText(event.text)

    def stopped(self, done: int, total: int) -> None:
        self._end("cancelled")
        self.status.setText(
            f"Stopped: {done} of {total} fields read and kept. Review again to go on from there "
            "(Work > Review against playbook…)."
        )

    def failed(self, reason: str) -> None:
        self._end("failed")
        self.status.setText(f"The review failed: {reason}")

    def _end(self, status: str) -> None:
        self.finished_status = status
        self.stop_button.setEnabled(False)
        self.detail.setText("")
        self.detail.setVisible(False)  # it said what the engine was doing; nothing now
        if self.progress.maximum() == 0:
            self.progress.setMaximum(1)

    def _stop(self) -> None:
        self.stop_button.setEnabled(False)
        self.status.setText("Stopping after the current field…")
        self.cancel_requested.emit()

    def done(self, result: int) -> None:
        """Esc, Close and the title bar's X all end here (QDialog closes by rejecting). A review still
        running is stopped with its window, as closing a comparison stops its summary: nobody is left to
        see the findings or press Stop, and the engine would stay busy for minutes behind the user's back.
        The fields read so far are kept, so reviewing again goes on from there."""
        if self.finished_status is None and self.stop_button.isEnabled():
            self._stop()
        super().done(result)

    def show_review(self, review: PlaybookReview) -> None:
        """The stored review: every rule with its verdict and the reviewer's decision."""
        self.review = review
        self.playbook = review.playbook  # as it was when the review ran
        self.close_button.setToolTip(CLOSE_STORED_TIP)
        self._end("complete")
        self.progress.setVisible(False)
        self.stop_button.setVisible(False)
        self.export_button.setEnabled(True)
        self._fill_findings(review)
        self._summary()
        if self.table.currentRow() < 0 and self.table.rowCount():
            self.table.selectRow(0)

    # -- filling the table ------------------------------------------------------------------------
    def _fill_rules(self) -> None:
        """Before the review is stored: the rules, their verdicts to come."""
        for row, rule in enumerate(self.playbook.rules):
            self._set(row, RULE, rule.name, rule.position)
            self._set(row, VERDICT, "…", "not decided yet")
            self._set(row, CLAUSE, f"Position: {rule.position}", rule.position)  # not a finding: said so
            self._set(row, DECISION, "")
        self._widths()

    def _fill_findings(self, review: PlaybookReview) -> None:
        current = self.table.currentRow()
        self.table.blockSignals(True)  # a refill is not the user choosing a finding
        self.table.setRowCount(len(review.findings))
        for row, f in enumerate(review.findings):
            rule = review.playbook.rule(f.rule_key)
            quote = " ".join(f.quote.split())
            where = f"{f.where} · {check_text(f)}" if f.where else "no clause"
            clause = f"“{quote}”" if quote else "no clause quoted"
            sure = confidence_text(f)
            decided = f", decided by {f.decided_by}" if f.decided_by else ""
            self._set(row, RULE, f"{rule.name}\n{where}", f"{rule.name}: {rule.position}\n{where}")
            self._set(row, VERDICT, f"{f.verdict_text}\n{sure}", f"{f.verdict_text}; confidence {sure}{decided}")
            self._set(row, CLAUSE, f"{f.reason}\n{clause}", f"{f.reason}\n{clause}")
            self._set(row, DECISION, DECISION_TEXT.get(f.decision, f.decision), f.note)
            item = self.table.item(row, VERDICT)
            assert item is not None
            font = item.font()
            font.setBold(True)
            item.setFont(font)
            if not high_contrast():
                dark = self.palette().base().color().lightness() < 128
                item.setForeground(QColor(VERDICT_COLOURS[f.verdict][int(dark)]))
        self.table.blockSignals(False)
        self._widths()
        if 0 <= current < self.table.rowCount():
            self.table.setCurrentCell(current, 0)
            self._show_finding(current)

    def _set(self, row: int, col: int, text: str, tip: str = "") -> None:
        item = QTableWidgetItem(text)
        if tip:
            item.setToolTip(plain_tooltip(tip))  # a clause or a model's value: shown as text, never rendered
        self.table.setItem(row, col, item)

    def _widths(self) -> None:
        """The short columns fit their words (a long rule name is cut); the reason and clause take the rest."""
        for col in (RULE, VERDICT, DECISION):
            self.table.resizeColumnToContents(col)
        most = self.fontMetrics().averageCharWidth() * 24
        self.table.setColumnWidth(RULE, min(self.table.columnWidth(RULE), most))

    def place_beside(self, keep_clear: QRect) -> None:
        """Beside the document viewer (global `keep_clear`), on the side with more room, so a finding's clause
        opened there stays in sight; where neither side has room for the findings, as any dialog opens."""
        screen = available(self)
        left = keep_clear.left() - screen.left()
        right = screen.right() - keep_clear.right()
        width = max(left, right)
        if width < SIDE_WIDTH:
            return
        x = screen.left() if left > right else keep_clear.right() + 1
        self.setGeometry(QRect(x, screen.top(), width, screen.height()).marginsRemoved(self._frame()))

    def _frame(self) -> QMargins:
        """The window manager's frame around the dialog (none known before it is first shown)."""
        outer, inner = self.frameGeometry(), self.geometry()
        return QMargins(
            inner.left() - outer.left(), inner.top() - outer.top(),
            outer.right() - inner.right(), outer.bottom() - inner.bottom(),
        )  # fmt: skip

    def _summary(self) -> None:
        review = self.review
        if review is None:
            return
        counts = review.counts()
        verdicts = ", ".join(f"{counts[v]} {VERDICT_TEXT[v]}" for v in VERDICTS if counts[v])
        decided = sum(1 for f in review.findings if f.decision)
        proposed = len(review.proposed())
        carried = "accepted" if review.reviewed else "falling short (none reviewed yet)"
        self.status.setText(
            f"Review {review.id} of {review.title} against {review.playbook.name} (v{review.playbook.version}) by "
            f"{review.model}: {verdicts}. {decided} of {len(review.findings)} reviewed; the Word export proposes "
            f"{proposed} edit(s), for the findings {carried}."
        )

    # -- choosing, deciding, opening ----------------------------------------------------------------
    def current_finding(self) -> Finding | None:
        row = self.table.currentRow()
        if self.review is None or not 0 <= row < len(self.review.findings):
            return None
        return self.review.findings[row]

    def _show_finding(self, row: int) -> None:
        if self.review is None or not 0 <= row < len(self.review.findings):
            return
        finding = self.review.findings[row]
        self.finding_view.setPlainText(finding_text(self.review.playbook, finding))
        self.accept_button.setEnabled(finding.decision != ACCEPTED)
        self.reject_button.setEnabled(finding.decision != REJECTED)
        self.clear_button.setEnabled(bool(finding.decision))

    def open_finding(self, row: int) -> None:
        """The clause in the viewer, highlighted, through the extraction cell it was read from (the path
        an extraction table's cell takes)."""
        review = self.review
        if review is None or not 0 <= row < len(review.findings):
            return
        finding = review.findings[row]
        if finding.page is None:
            rule = review.playbook.rule(finding.rule_key)
            self.message.setText(f"{rule.name}: the contract has no clause for this rule to open.")
            return
        self.message.setText("")
        field = review.playbook.rule(finding.rule_key).field.key
        self.evidence_requested.emit(review.run_id, review.document_id, field)

    def decide(self, decision: str) -> None:
        """Accept, reject or clear the chosen finding: stored beside it with its audit entry."""
        finding = self.current_finding()
        if self.review is None or finding is None:
            return
        try:
            decide_finding(self.ctx, self.review.id, finding.rule_key, decision)
        except USER_ERRORS as exc:
            self.message.setText(one_line(exc))
            return
        from app.playbook.review import load_review

        self.review = load_review(self.ctx, self.review.id)
        self._fill_findings(self.review)
        self._summary()
        name = self.review.playbook.rule(finding.rule_key).name
        self.message.setText(f"{name}: {'decision cleared' if decision == CLEARED else decision} (stored and audited).")

    # -- export -------------------------------------------------------------------------------------
    def export(self) -> None:
        if self.review is None:
            return
        name = safe_filename(f"Playbook review {self.review.title}", "docx")
        path, _ = QFileDialog.getSaveFileName(self, "Export the review", str(Path.home() / name), EXPORT_FILTER)
        if path:
            self.export_to(Path(path))

    def export_to(self, path: Path) -> Path | None:
        """Write the review (the format from the name: .docx, .pdf or .md); the status line names the file."""
        assert self.review is not None
        try:
            # The save dialog has already asked before replacing a file.
            result = Exporter(self.ctx).review(self.review.id, path, overwrite=True)
        except USER_ERRORS as exc:
            self.message.setText(f"Not exported: {one_line(exc)}")
            return None
        except OSError as exc:
            self.message.setText(f"Not exported: could not write the file ({exc.strerror})")
            return None
        edits = len(self.review.proposed())
        what = f", {edits} proposed edit(s) as tracked changes" if result.fmt == "docx" else ""
        self.message.setText(f"Wrote {result.path}{what}.")
        return result.path

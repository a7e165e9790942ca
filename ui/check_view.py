"""Work > Check contract: the defined terms, the cross-references and the key dates of the selected
documents, checked without a model.

The checks run on a worker thread of their own (`folio-checks`, its own SQLite connection): a stored
result comes back at once, a new one in well under a second per contract, and the window never waits.
Each cross-reference is a link: clicking it opens the clause it points to in the viewer (its own
place when it points nowhere). A broken one is marked as a bad citation is in the transcript (✗, red,
a wavy underline); a resolved one ✓; one Folio cannot check (a law's section, another agreement's) ○.
Document text is shown as text, never as markup.
"""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.checks.report import DATES, INPUT, NOTE, REFERENCES, TERM, TERMS, CheckReport, Finding
from app.citations.grounding import EXEMPT, SUPPORTED, UNSUPPORTED
from app.context import AppContext
from app.errors import USER_ERRORS, one_line
from app.export import CHECK_FORMATS, KEY_DATE_FORMATS, Exporter, format_of, safe_filename
from ui.background import start_worker_thread
from ui.safe_text import plain_tooltip
from ui.transcript import UNTRUSTED, VERDICT_COLOURS

LINK = "folio-check:"


@dataclass(frozen=True)
class CheckJob:
    document_ids: list[int]
    refresh: bool = False


class CheckWorker(QObject):
    """Runs the checks of a job's documents in turn, on its own thread; stops between documents."""

    progress = Signal(int, int, str)  # done, total, title
    report = Signal(object)  # app.checks.report.CheckReport
    failed = Signal(str)
    done = Signal()

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._base = ctx
        self._ctx: AppContext | None = None
        self._stop = threading.Event()

    def cancel(self) -> None:
        self._stop.set()

    @Slot(object)
    def run(self, job: CheckJob) -> None:
        from app.checks.service import Checker

        self._stop.clear()
        if self._ctx is None:  # opened on this thread: the connection lives here
            self._ctx = self._base.reopen()
        checker = Checker(self._ctx)
        try:
            for k, doc_id in enumerate(job.document_ids):
                if self._stop.is_set():
                    break
                title = self._ctx.library.get(doc_id).title
                self.progress.emit(k, len(job.document_ids), title)
                try:
                    self.report.emit(checker.check(doc_id, refresh=job.refresh))
                except USER_ERRORS as exc:
                    self.failed.emit(one_line(exc))
        except Exception as exc:
            self.failed.emit(f"unexpected error: {type(exc).__name__}: {one_line(exc)}")
        finally:
            self.done.emit()

    @Slot()
    def shutdown(self) -> None:
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None


class CheckView(QDialog):
    page_requested = Signal(int, int, object)  # document id, page, words to mark (tuple[str, ...])
    run_requested = Signal(object)  # CheckJob, to the worker's thread

    def __init__(self, ctx: AppContext, document_ids: list[int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.document_ids = list(dict.fromkeys(document_ids))
        self.reports: dict[int, CheckReport] = {}
        self.setWindowTitle("Check contract")
        self.resize(1100, 700)

        self.documents = QComboBox()
        for doc_id in self.document_ids:
            self.documents.addItem(ctx.library.get(doc_id).title, doc_id)
        self.documents.currentIndexChanged.connect(self._show_current)
        self.documents.setVisible(len(self.document_ids) > 1)
        self.problems_only = QCheckBox("Problems only")
        self.problems_only.toggled.connect(self._show_current)
        self.status = QLabel("Checking…")
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, len(self.document_ids))
        self.progress.setTextVisible(True)

        self.terms = _table(["Term", "Where", "Uses", "Check"])
        self.terms.cellDoubleClicked.connect(lambda row, _c: self._open_row(self.terms, row))
        self.references = QTextBrowser()
        self.references.setOpenLinks(False)
        self.references.anchorClicked.connect(self._on_link)
        self.dates = _table(["Date", "What", "How it was computed", "Where"])
        self.dates.cellDoubleClicked.connect(lambda row, _c: self._open_row(self.dates, row))
        self.inputs = QTextBrowser()
        self.inputs.setOpenLinks(False)
        self.inputs.anchorClicked.connect(self._on_link)
        dates_box = QWidget()
        dates_layout = QVBoxLayout(dates_box)
        dates_layout.setContentsMargins(0, 0, 0, 0)
        dates_layout.addWidget(self.dates, 3)
        dates_layout.addWidget(QLabel("What the dates rest on"))
        dates_layout.addWidget(self.inputs, 2)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.terms, "Defined terms")
        self.tabs.addTab(self.references, "Cross-references")
        self.tabs.addTab(dates_box, "Key dates")

        self.again = QPushButton("Check again")
        self.again.clicked.connect(lambda: self.start(refresh=True))
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.calendar_button = QPushButton("Export key dates…")
        self.calendar_button.clicked.connect(self.export_key_dates)
        self.findings_button = QPushButton("Export findings…")
        self.findings_button.clicked.connect(self.export_findings)
        top = QHBoxLayout()
        top.addWidget(self.documents, 1)
        top.addWidget(self.problems_only)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.progress)
        for button in (self.again, self.stop_button, self.calendar_button, self.findings_button):
            bottom.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(bottom)

        self.worker = CheckWorker(ctx)
        self.worker.progress.connect(self._on_progress)
        self.worker.report.connect(self._on_report)
        self.worker.failed.connect(self._on_failed)
        self.worker.done.connect(self._on_done)
        self.run_requested.connect(self.worker.run)
        self.worker_thread = start_worker_thread(self.worker, "folio-checks")
        self.finished.connect(self._closed)
        self.destroyed.connect(self.worker_thread.quit)  # destroyed without closing (its window went): still ends
        self._busy = False

    # -- running ---------------------------------------------------------------------------------
    def start(self, *, refresh: bool = False) -> None:
        if self._busy:
            return
        self._busy = True
        self._set_buttons()
        self.progress.setValue(0)
        self.status.setText("Checking…")
        self.run_requested.emit(CheckJob(self.document_ids, refresh))

    def stop(self) -> None:
        self.worker.cancel()

    def _closed(self) -> None:
        self.worker.cancel()
        self.worker_thread.quit()  # the worker ends after its current document and closes its connection

    def _set_buttons(self) -> None:
        self.again.setEnabled(not self._busy)
        self.stop_button.setEnabled(self._busy)
        have = bool(self.reports)
        self.calendar_button.setEnabled(have and not self._busy)
        self.findings_button.setEnabled(have and not self._busy)

    def _on_progress(self, done: int, total: int, title: str) -> None:
        self.progress.setValue(done)
        self.status.setText(f"Checking {title} ({done + 1} of {total})…")

    def _on_report(self, report: CheckReport) -> None:
        if report.document_id is None:
            return
        self.reports[report.document_id] = report
        if report.document_id == self.documents.currentData():
            self._show_current()

    def _on_failed(self, text: str) -> None:
        self.status.setText(text)

    def _on_done(self) -> None:
        self._busy = False
        self.progress.setValue(len(self.reports))
        self._set_buttons()
        problems = sum(len(r.problems) for r in self.reports.values())
        done = f"{len(self.reports)} of {len(self.document_ids)} document{'s' if len(self.document_ids) != 1 else ''}"
        if self.status.text().startswith("Checking"):
            self.status.setText(f"Checked {done}: {problems} problem{'s' if problems != 1 else ''} to look at.")

    # -- showing ---------------------------------------------------------------------------------
    @property
    def current(self) -> CheckReport | None:
        return self.reports.get(self.documents.currentData())

    def _show_current(self) -> None:
        report = self.current
        if report is None:
            return
        only = self.problems_only.isChecked()
        self._fill_terms([f for f in report.section(TERMS) if f.problem or (not only and f.kind == TERM)])
        self._fill_references(report, only)
        self._fill_dates(report)
        counts = report.to_dict()["counts"]
        self.tabs.setTabText(0, f"Defined terms ({counts.get('terms', 0)})")
        self.tabs.setTabText(1, f"Cross-references ({counts.get('references', 0)})")
        self.tabs.setTabText(2, f"Key dates ({len(report.key_dates())})")

    def _fill_terms(self, findings: list[Finding]) -> None:
        self.terms.setRowCount(len(findings))
        for row, f in enumerate(findings):
            check = f"✗ {f.shown_status}: {f.note}" if f.problem else "✓ " + f.note
            uses = f.value if f.kind == TERM else ""
            for col, text in enumerate((f.text, f.cited, uses, check)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tooltip(f.quote or f.note))
                item.setData(Qt.ItemDataRole.UserRole, f)
                if f.problem:
                    item.setForeground(self._colour(UNSUPPORTED))
                self.terms.setItem(row, col, item)
        self.terms.resizeColumnsToContents()

    def _fill_references(self, report: CheckReport, only: bool) -> None:
        """One line per reference, written with character formats (document text is never markup): the
        reference as a link, where it stands, its mark and what it points to. A broken one's link looks
        like a bad citation in the transcript: red, with a wavy underline."""
        self.references.clear()
        cursor = QTextCursor(self.references.document())
        plain = QTextCharFormat()
        shown = 0
        for k, f in enumerate(report.section(REFERENCES)):
            if only and not f.problem:
                continue
            if f.problem:
                mark, verdict, href = f"✗ {f.shown_status}", UNSUPPORTED, f"{LINK}broken/{k}"
            elif f.status == "resolved":
                mark, verdict, href = "✓", SUPPORTED, f"{LINK}ref/{k}"
            else:
                mark, verdict, href = "○ not checked", EXEMPT, f"{LINK}ref/{k}"
            link = QTextCharFormat()
            link.setAnchor(True)
            link.setAnchorHref(href)
            link.setToolTip(plain_tooltip(f.quote))
            if f.problem:
                link.setForeground(UNTRUSTED)
                link.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                link.setUnderlineColor(UNTRUSTED)
            else:
                link.setFontUnderline(True)
            coloured = QTextCharFormat()
            coloured.setForeground(self._colour(verdict))
            if shown:
                cursor.insertBlock()
            cursor.insertText(f.text, link)
            cursor.insertText(f" ({f.cited}) ", plain)
            cursor.insertText(mark, coloured)
            cursor.insertText(f" {f.note}", plain)
            shown += 1
        if not shown:
            cursor.insertText("No problems with cross-references." if only else "No cross-references.", plain)

    def _fill_dates(self, report: CheckReport) -> None:
        dates = report.key_dates()
        self.dates.setRowCount(len(dates))
        for row, f in enumerate(dates):
            for col, text in enumerate((f.value, f.text, f.how, f.cited)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tooltip(f.how))
                item.setData(Qt.ItemDataRole.UserRole, f)
                self.dates.setItem(row, col, item)
        self.dates.resizeColumnsToContents()
        lines = []
        for k, f in enumerate(report.section(DATES)):
            if f.kind == INPUT:
                where = f' <a href="{LINK}input/{k}">{html.escape(f.cited)}</a>' if f.cited else ""
                said = html.escape(f.note)
                lines.append(f"<p><b>{html.escape(f.text)}</b>: {said}{where} <i>({html.escape(f.how)})</i></p>")
            elif f.kind == NOTE:
                lines.append(f"<p><i>{html.escape(f.note)}</i></p>")
        self.inputs.setHtml("\n".join(lines))

    def _colour(self, verdict: str) -> QColor:
        dark = self.palette().base().color().lightness() < 128
        return QColor(VERDICT_COLOURS[verdict][int(dark)])

    # -- opening places ----------------------------------------------------------------------------
    def _on_link(self, url: QUrl) -> None:
        href = url.toString()
        report = self.current
        if not href.startswith(LINK) or report is None:
            return
        kind, _, index = href[len(LINK) :].partition("/")
        if not index.isdigit():
            return
        section = report.section(DATES if kind == "input" else REFERENCES)
        k = int(index)
        if 0 <= k < len(section):
            self.open_finding(section[k], target=kind != "input")

    def _open_row(self, table: QTableWidget, row: int) -> None:
        item = table.item(row, 0)
        finding = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if isinstance(finding, Finding):
            self.open_finding(finding, target=False)

    def open_finding(self, finding: Finding, *, target: bool = True) -> None:
        """The place a reference points to (its own place when it points nowhere), or where a finding is."""
        report = self.current
        if report is None or report.document_id is None:
            return
        page = finding.target_page if target and finding.target_page is not None else finding.page
        if page is None:
            self.status.setText(f"{finding.text}: no place to open")
            return
        words = tuple(finding.text.split()) if not target or finding.target_page is None else ()
        self.page_requested.emit(report.document_id, page, words)
        where = finding.target_cited if target and finding.target_page is not None else finding.cited
        self.status.setText(f"{finding.text}: {where}")

    # -- exports -----------------------------------------------------------------------------------
    def export_key_dates(self) -> None:
        name = safe_filename(f"Key dates - {self._title()}", "ics")
        path, _ = QFileDialog.getSaveFileName(self, "Export key dates", str(Path.home() / name),
                                              "Calendar (*.ics);;CSV (*.csv)")  # fmt: skip
        if path:
            self.export_to(Path(path), "key dates")

    def export_findings(self) -> None:
        name = safe_filename(f"Checks - {self._title()}", "json")
        path, _ = QFileDialog.getSaveFileName(self, "Export findings", str(Path.home() / name),
                                              "JSON (*.json);;CSV (*.csv)")  # fmt: skip
        if path:
            self.export_to(Path(path), "checks")

    def export_to(self, path: Path, what: str) -> None:
        """Written and audited by the Exporter, from the stored results (the save dialog already asked
        before replacing a file)."""
        try:
            format_of(path, KEY_DATE_FORMATS if what == "key dates" else CHECK_FORMATS)
            result = Exporter(self.ctx).checks(list(self.reports), path, overwrite=True, what=what)
        except USER_ERRORS as exc:
            self.status.setText(one_line(exc))
            return
        except OSError as exc:
            self.status.setText(f"could not write the file ({exc.strerror})")
            return
        self.status.setText(f"Exported to {result.path}")

    def _title(self) -> str:
        return self.documents.currentText() if len(self.document_ids) == 1 else f"{len(self.document_ids)} documents"


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setWordWrap(True)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    return table

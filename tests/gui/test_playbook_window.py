"""Work > Review against playbook… in the real window (offscreen): a review run on the window's engine with
the REAL starter model (progress, the engine busy for everything else, a Stop that keeps the fields read),
every rule listed with its verdict, Accept / Reject stored and audited, a finding clicked opening its clause
highlighted in the viewer, and the export writing a .docx whose tracked changes are the accepted findings."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from app.playbook.book import PlaybookStore
from app.playbook.review import load_review, review_ids
from app.playbook.values import VERDICT_TEXT
from tests.fixtures.answers import store_sample_cells, store_sample_review
from tests.fixtures.office import libreoffice_read_back, soffice
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE
from ui.playbook_view import CLAUSE, DECISION, RULE, VERDICT, PlaybookReviewView

pytestmark = pytest.mark.gui

AUTHOR = "Folio playbook"
# Rules of the built-in template's fields, few enough for the starter model to read in a test's time.
RULES = [
    {"key": "governing_law", "name": "Governing law", "position": "Delaware or New York law.", "kind": "one_of",
     "field": "governing_law", "value": "place", "acceptable": ["Delaware", "New York"],
     "proposed_wording": "This Agreement is governed by the laws of the State of Delaware."},
    {"key": "cap_on_liability", "name": "Cap on liability", "position": "Liability is capped.", "kind": "present",
     "field": "cap_on_liability", "proposed_wording": "Each party's total liability is capped at the fees paid."},
    {"key": "audit_rights", "name": "Audit rights", "position": "The customer may audit.", "kind": "present",
     "field": "audit_rights", "proposed_wording": "The Client may audit the Provider's records once a year."},
]  # fmt: skip


@pytest.fixture
def one_thread(starter_home: Path) -> Path:
    """One llama.cpp thread: the test machines are small and shared."""
    settings = starter_home / "config" / "settings.toml"
    settings.write_text(settings.read_text() + "threads = 1\nthinking = false\n")
    return starter_home


def _playbook(window, tmp_path: Path, rules: int) -> str:  # type: ignore[no-untyped-def]
    """A user playbook of the first `rules` RULES, imported as a user would import one."""
    path = tmp_path / "short.json"
    path.write_text(json.dumps({"key": "short", "name": "Short book", "rules": RULES[:rules]}))
    PlaybookStore.for_config(window.ctx.paths.config_dir).import_file(path)
    extraction = window.ctx.settings.extraction  # shared with the workers: short answers keep it quick
    extraction.value_chars, extraction.quote_chars = 24, 120
    return "short"


def _start(qtbot, window, contract_pdf: Path, tmp_path: Path, rules: int) -> tuple[PlaybookReviewView, int]:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.library.selected_ids() == [doc.id], timeout=10000)
    view = window.review_against_playbook(_playbook(window, tmp_path, rules))
    assert isinstance(view, PlaybookReviewView) and view.isVisible()
    return view, doc.id


def _sample(window, contract_pdf: Path) -> tuple[PlaybookReviewView, int, int]:  # type: ignore[no-untyped-def]
    """The built-in playbook's review of the sample answers (stored by the real code, no model), reopened
    from Work > Playbook reviews…."""
    ctx = window.ctx
    doc = ctx.library.add(contract_pdf).document
    review_id = store_sample_review(ctx, doc.id, store_sample_cells(ctx, doc.id))
    view = window.work_menu.show_reviews(review_id)
    assert isinstance(view, PlaybookReviewView) and view.review is not None
    return view, review_id, doc.id


def _row(view: PlaybookReviewView, rule_key: str) -> int:
    assert view.review is not None
    return next(n for n, f in enumerate(view.review.findings) if f.rule_key == rule_key)


def _click(view: PlaybookReviewView, row: int, col: int = VERDICT) -> None:
    item = view.table.item(row, col)
    assert item is not None
    view.table.scrollToItem(item)
    QTest.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=view.table.visualItemRect(item).center())


def test_a_review_runs_on_the_window_engine_and_lists_every_rule(  # type: ignore[no-untyped-def]
    qtbot, one_thread, window, contract_pdf, tmp_path
) -> None:
    view, doc = _start(qtbot, window, contract_pdf, tmp_path, 2)
    assert view.table.rowCount() == 2 and view.table.item(0, VERDICT).text() == "…"  # the rules, verdicts to come
    assert not window.chat.send_button.isEnabled()  # one engine: a question waits for the review
    window._ask("Which law?")
    assert "busy with a playbook review" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: view.finished_status is not None, timeout=300000)
    assert view.finished_status == "complete", view.status.text()
    review = view.review
    assert review is not None and review_ids(window.ctx) == [review.id] and review.document_id == doc
    assert [f.rule_key for f in review.findings] == ["governing_law", "cap_on_liability"]
    for row, finding in enumerate(review.findings):
        assert view.table.item(row, VERDICT).text().split("\n")[0] == VERDICT_TEXT[finding.verdict]
        assert view.table.item(row, DECISION).text() == "not reviewed"
    assert f"Review {review.id} of " in view.status.text() and "Short book" in view.status.text()
    assert not view.progress.isVisible() and view.export_button.isEnabled()
    # The same llama.cpp owner as chat and extraction, and free again for the next question.
    reviewer = window.engine_worker._reviewer
    assert reviewer is not None and reviewer.extraction.session is window.session
    qtbot.waitUntil(lambda: window._job is None and window.chat.send_button.isEnabled(), timeout=10000)
    assert window.engine_label.text() == "engine: idle"


def test_stop_keeps_the_fields_read_and_the_next_review_goes_on_from_there(  # type: ignore[no-untyped-def]
    qtbot, one_thread, window, contract_pdf, tmp_path
) -> None:
    view, _doc = _start(qtbot, window, contract_pdf, tmp_path, 3)
    qtbot.waitUntil(lambda: view.progress.value() >= 1, timeout=300000)
    view.stop_button.click()
    qtbot.waitUntil(lambda: view.finished_status is not None, timeout=120000)
    assert view.finished_status == "cancelled", view.status.text()
    assert view.status.text().startswith("Stopped: ") and "kept" in view.status.text()
    stored = window.ctx.db.execute("SELECT count(*) FROM extraction_cells").fetchone()[0]
    assert 1 <= stored < 3
    assert review_ids(window.ctx) == []  # nothing judged on half the fields
    qtbot.waitUntil(lambda: window._job is None, timeout=10000)
    again = window.review_against_playbook("short")
    assert again is not None
    qtbot.waitUntil(lambda: "read before and kept" in again.status.text() or again.finished_status is not None,
                    timeout=300000)  # fmt: skip
    assert f"{stored} read before and kept" in again.status.text() or again.review is not None
    qtbot.waitUntil(lambda: again.finished_status is not None, timeout=300000)
    assert again.finished_status == "complete" and again.review is not None and len(again.review.findings) == 3
    assert window.ctx.db.execute("SELECT count(*) FROM extraction_runs").fetchone()[0] == 1  # resumed, not redone


def _press_esc(qtbot, view: PlaybookReviewView) -> None:  # type: ignore[no-untyped-def]
    """Esc in the review window, the one the user is working in (the main window's own Esc stops its jobs)."""
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow, timeout=5000)
    view.table.setFocus()
    QTest.keyClick(view.table, Qt.Key.Key_Escape)


def test_esc_closes_a_running_review_and_stops_it_keeping_the_fields_read(  # type: ignore[no-untyped-def]
    qtbot, one_thread, window, contract_pdf, tmp_path
) -> None:
    """Esc (like Close or the title bar's X) on a review still running: the window goes, the review stops
    after the current field as Stop does, the engine is free again and the status bar says what was kept."""
    view, _doc = _start(qtbot, window, contract_pdf, tmp_path, 3)
    assert "stop the review" in view.close_button.toolTip()
    qtbot.waitUntil(lambda: view.progress.value() >= 1, timeout=300000)
    _press_esc(qtbot, view)
    assert not view.isVisible()
    qtbot.waitUntil(lambda: window._job is None, timeout=120000)
    assert view.finished_status == "cancelled" and review_ids(window.ctx) == []  # stopped, nothing judged
    stored = window.ctx.db.execute("SELECT count(*) FROM extraction_cells").fetchone()[0]
    assert 1 <= stored < 3
    assert window.statusBar().currentMessage() == (
        f"Playbook review stopped: {stored} of 3 fields read and kept; Work > Review against playbook… goes on "
        "from there."
    )
    assert window.chat.send_button.isEnabled() and window.engine_label.text() == "engine: idle"


def test_closing_a_stored_review_stops_nothing(qtbot, window, contract_pdf) -> None:  # type: ignore[no-untyped-def]
    """A review reopened from Work > Playbook reviews… closes on Esc without asking for a stop (which would
    stop whatever else the engine is doing)."""
    view, _review, _doc = _sample(window, contract_pdf)
    assert view.close_button.toolTip().endswith("stays in Work > Playbook reviews…")
    stops: list[bool] = []
    view.cancel_requested.connect(lambda: stops.append(True))
    _press_esc(qtbot, view)
    assert not view.isVisible() and stops == []


def test_accept_and_reject_are_stored_audited_and_shown_when_reopened(qtbot, window, contract_pdf) -> None:  # type: ignore[no-untyped-def]
    view, review_id, _doc = _sample(window, contract_pdf)
    assert view.table.rowCount() == 10  # every rule of the built-in playbook
    assert view.table.item(_row(view, "anti_assignment"), VERDICT).text() == "missing\n95% (high)"
    assert view.table.item(_row(view, "insurance"), VERDICT).text().startswith("needs a person\n")
    view.table.setCurrentCell(_row(view, "anti_assignment"), 0)
    view.accept_button.click()
    view.table.setCurrentCell(_row(view, "audit_rights"), 0)
    view.reject_button.click()
    assert view.table.item(_row(view, "anti_assignment"), DECISION).text() == "accepted"
    assert view.table.item(_row(view, "audit_rights"), DECISION).text() == "rejected"
    assert not view.reject_button.isEnabled() and view.clear_button.isEnabled()  # audit_rights is current
    assert "stored and audited" in view.message.text()
    stored = {f.rule_key: f.decision for f in load_review(window.ctx, review_id).findings}
    assert stored["anti_assignment"] == "accepted" and stored["audit_rights"] == "rejected"
    said = [e.details for e in window.ctx.audit.entries() if e.action == "playbook"]
    assert [(d["rule"], d["decision"]) for d in said if d["event"] == "decision"] == [
        ("anti_assignment", "accepted"),
        ("audit_rights", "rejected"),
    ]
    view.close()
    reopened = window.work_menu.show_reviews(review_id)  # Work > Playbook reviews…, later
    assert reopened is not None
    assert reopened.table.item(_row(reopened, "anti_assignment"), DECISION).text() == "accepted"
    assert reopened.table.item(_row(reopened, "audit_rights"), DECISION).text() == "rejected"
    assert "1 edit(s), for the findings accepted" in reopened.status.text()
    reopened.table.setCurrentCell(_row(reopened, "audit_rights"), 0)
    reopened.clear_button.click()
    assert reopened.table.item(_row(reopened, "audit_rights"), DECISION).text() == "not reviewed"
    assert load_review(window.ctx, review_id).findings[_row(reopened, "audit_rights")].decision == ""


def test_a_finding_clicked_opens_its_clause_highlighted(qtbot, window, contract_pdf) -> None:  # type: ignore[no-untyped-def]
    view, _review, doc = _sample(window, contract_pdf)
    law = _row(view, "governing_law")
    assert view.table.item(law, RULE).text() == "Governing law\np. 4 · quoted"
    reason, clause = view.table.item(law, CLAUSE).text().split("\n")
    assert reason.startswith("Delaware is ") and clause.startswith("“Governing Law This Agreement shall be governed")
    with qtbot.waitSignal(window.viewer.page_shown, timeout=10000) as shown:
        _click(view, law)
    assert shown.args == [doc, GOVERNING_LAW_PAGE]
    assert window.viewer.canvas.highlights  # the clause is marked on the page
    assert "Position: Delaware" not in view.finding_view.toPlainText()
    assert view.finding_view.toPlainText().startswith("Governing law: met")
    assert "Clause (p. 4, quoted)" in view.finding_view.toPlainText()
    missing = _row(view, "anti_assignment")
    _click(view, missing)
    assert "no clause for this rule" in view.message.text()
    assert window.viewer.last is not None and window.viewer.last.content.page.number == GOVERNING_LAW_PAGE  # unmoved


def _docx_changes(path: Path) -> tuple[list[str], list[str], str]:
    with zipfile.ZipFile(path) as z:
        body = z.read("word/document.xml").decode()
        comments = z.read("word/comments.xml").decode() if "word/comments.xml" in z.namelist() else ""
    # Revisions around text: a paragraph mark tracked with an added paragraph (<w:ins .../>) is no change
    inserted = re.findall(r'<w:ins [^>]*w:author="([^"]+)"[^>]*(?<!/)>', body)
    deleted = re.findall(r'<w:del [^>]*w:author="([^"]+)"[^>]*(?<!/)>', body)
    return inserted + deleted, re.findall(r"<w:comment ", comments), comments


def test_export_writes_a_docx_whose_tracked_changes_are_the_accepted_findings(  # type: ignore[no-untyped-def]
    qtbot, window, contract_pdf, tmp_path, monkeypatch
) -> None:
    view, review_id, _doc = _sample(window, contract_pdf)
    view.table.setCurrentCell(_row(view, "anti_assignment"), 0)
    view.accept_button.click()
    view.table.setCurrentCell(_row(view, "audit_rights"), 0)
    view.reject_button.click()
    target = tmp_path / "out" / "review.docx"
    target.parent.mkdir()
    asked: list[str] = []

    def save(_parent, _title, name, filters):  # type: ignore[no-untyped-def]
        asked.append(filters)
        return str(target), "Word with tracked changes (*.docx)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save)
    view.export_button.click()  # Export… with its save dialog
    assert asked and "*.docx" in asked[0] and "*.pdf" in asked[0] and "*.md" in asked[0]
    assert view.message.text() == f"Wrote {target}, 1 proposed edit(s) as tracked changes."
    changes, comments, text = _docx_changes(target)
    assert changes == [AUTHOR]  # one tracked change: the accepted missing clause, inserted
    assert len(comments) == 1 and "Assignment only with consent: missing" in text
    assert "Audit rights" not in text  # rejected: not proposed
    exports = [e.details for e in window.ctx.audit.entries() if e.action == "export"]
    assert exports[-1]["review_id"] == review_id and exports[-1]["proposed_edits"] == 1
    markdown = view.export_to(tmp_path / "review.md")
    assert markdown is not None and "| Assignment only with consent | missing |" in markdown.read_text()
    assert view.message.text() == f"Wrote {tmp_path / 'review.md'}."


@pytest.mark.skipif(soffice() is None, reason="LibreOffice (soffice) is not installed, so the .docx cannot be opened")
def test_libreoffice_reads_back_one_tracked_change_and_one_comment_per_accepted_finding(  # type: ignore[no-untyped-def]
    qtbot, window, contract_pdf, tmp_path
) -> None:
    """The review decided in the window and exported there, opened by LibreOffice headless (converted to
    its own XML and read back): one comment per accepted finding, holding that finding's one change."""
    view, _review, _doc = _sample(window, contract_pdf)
    accepted = ("anti_assignment", "audit_rights")  # both missing: the standard wording inserted
    for key in accepted:
        view.table.setCurrentCell(_row(view, key), 0)
        view.accept_button.click()
    view.table.setCurrentCell(_row(view, "insurance"), 0)
    view.reject_button.click()
    target = view.export_to(tmp_path / "review.docx")
    assert target is not None and view.message.text().endswith(", 2 proposed edit(s) as tracked changes.")
    read = libreoffice_read_back(target)
    book = view.playbook
    expected = {book.rule(k).name: [("insertion", book.rule(k).proposed_wording)] for k in accepted}
    shown = {c.text.split(":")[0]: [(read.changes[i].kind, read.changes[i].text) for i in c.changes]
             for c in read.comments}  # fmt: skip
    assert shown == expected and len(read.comments) == len(read.changes) == 2 and not read.outside
    assert {c.author for c in read.comments} | {ch.author for ch in read.changes.values()} == {AUTHOR}
    assert all(": missing. No " in c.text for c in read.comments)  # the verdict and the reason, in words
    # The added clauses are new paragraphs: rejected, they leave no empty paragraph after the contract.
    added = [book.rule(k).proposed_wording for k in accepted]
    assert read.accepted[-2:] == added and read.rejected[-1] not in added and "" not in read.rejected


def test_a_failed_review_says_why_in_one_line_and_frees_the_engine(  # type: ignore[no-untyped-def]
    qtbot, window, contract_pdf, tiny_qwen35, tmp_path, monkeypatch
) -> None:
    """Work > Review against playbook… with the model's file gone (a removable drive unplugged): the review
    window says so in one line."""
    import shutil

    from PySide6.QtWidgets import QInputDialog

    model = tmp_path / "drive" / "model.gguf"
    model.parent.mkdir()
    shutil.copy(tiny_qwen35, model)
    record, _ = window.ctx.models.add(model)
    window.ctx.settings.active_model = record.sha256
    window.ctx.save_settings()
    model.unlink()
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.library.selected_ids() == [doc.id], timeout=10000)
    key = _playbook(window, tmp_path, 2)
    offered: list[list[str]] = []

    def pick(_parent, _title, _label, items, *_a):  # type: ignore[no-untyped-def]
        offered.append(items)
        return next(i for i in items if i.startswith(f"{key}: ")), True

    monkeypatch.setattr(QInputDialog, "getItem", pick)
    window.work_menu.actions["review"].trigger()  # Work > Review against playbook…
    assert offered == [["commercial_contract: Commercial contract", "short: Short book"]]
    view = window.playbook_review
    assert isinstance(view, PlaybookReviewView) and view.isVisible()
    qtbot.waitUntil(lambda: view.finished_status is not None, timeout=60000)
    assert view.finished_status == "failed"
    assert view.status.text() == f"The review failed: the model file {model} is missing (removable drive not attached?)"
    assert not view.stop_button.isEnabled() and review_ids(window.ctx) == []
    qtbot.waitUntil(lambda: window._job is None and window.chat.send_button.isEnabled(), timeout=10000)


def test_enter_on_a_finding_opens_its_clause_and_decides_nothing(qtbot, window, contract_pdf) -> None:  # type: ignore[no-untyped-def]
    view, review_id, doc = _sample(window, contract_pdf)
    view.table.setCurrentCell(_row(view, "anti_assignment"), 0)
    view.accept_button.click()  # the last button pressed: Enter must not press it again
    view.table.setFocus()
    view.table.setCurrentCell(_row(view, "governing_law"), 0)
    with qtbot.waitSignal(window.viewer.page_shown, timeout=10000) as shown:
        QTest.keyClick(view.table, Qt.Key.Key_Return)
    assert shown.args == [doc, GOVERNING_LAW_PAGE]
    decided = {f.rule_key: f.decision for f in load_review(window.ctx, review_id).findings if f.decision}
    assert decided == {"anti_assignment": "accepted"}


def test_earlier_reviews_of_the_matter_are_listed_to_reopen(qtbot, window, contract_pdf, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QInputDialog

    assert window.work_menu.show_reviews() is None
    assert "No playbook reviews in this matter yet" in window.statusBar().currentMessage()
    first, review_id, _doc = _sample(window, contract_pdf)
    first.close()
    offered: list[list[str]] = []

    def pick(_parent, _title, _label, items, *_a):  # type: ignore[no-untyped-def]
        offered.append(items)
        return items[0], True

    monkeypatch.setattr(QInputDialog, "getItem", pick)
    window.work_menu.actions["reviews"].trigger()  # Work > Playbook reviews…
    assert offered and offered[0][0].startswith(f"{review_id}: Master Services Agreement against Commercial contract (")
    assert offered[0][0].endswith("), 2 of 10 rules not met or missing")  # anti-assignment and audit rights
    reopened = [d for d in window.work_menu.dialogs if isinstance(d, PlaybookReviewView)]
    assert len(reopened) == 1 and reopened[0].review is not None and reopened[0].review.id == review_id

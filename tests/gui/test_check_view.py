"""Work > Check contract in the real window (offscreen): the three lists, a cross-reference as a link that
opens its clause, a broken one marked like a bad citation, and the key dates exported as a calendar."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCharFormat

from tests.fixtures.check_docs import broken_refs_pdf
from tests.gui.conftest import char_format_at
from ui.check_view import LINK, CheckView
from ui.transcript import UNTRUSTED

pytestmark = pytest.mark.gui


def _close(qtbot, view: CheckView) -> None:  # type: ignore[no-untyped-def]
    """Closing the view ends its worker thread (before the window goes, with the test)."""
    view.close()
    qtbot.waitUntil(lambda: not view.worker_thread.isRunning(), timeout=10000)


def _open(qtbot, window, tmp_path: Path) -> tuple[CheckView, int]:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(broken_refs_pdf(tmp_path / "services.pdf")).document
    view = window.work_menu.check([doc.id])
    assert isinstance(view, CheckView)
    qtbot.waitUntil(lambda: view.current is not None and view.again.isEnabled(), timeout=30000)
    return view, doc.id


def test_the_view_lists_terms_references_and_key_dates(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view, _doc = _open(qtbot, window, tmp_path)
    assert window.work_menu.actions["check"].shortcut().toString() == "Ctrl+Shift+K"
    assert view.tabs.tabText(1) == "Cross-references (10)" and view.tabs.tabText(2) == "Key dates (8)"
    terms = {view.terms.item(r, 0).text() for r in range(view.terms.rowCount())}
    assert {"Effective Date", "Provider", "Client", "Services", "Deliverables", "Service Levels"} <= terms
    assert view.dates.item(0, 0).text() == "2025-11-16"
    assert view.dates.item(1, 2).text() == "effective 15 January 2023 + 3 years"
    assert view.status.text() == "Checked 1 of 1 document: 4 problems to look at."
    view.problems_only.setChecked(True)
    assert view.references.toPlainText().count("✗") == 4
    assert view.terms.rowCount() == 0  # no term problems in this contract
    _close(qtbot, view)


def test_a_reference_opens_its_clause_and_a_broken_one_is_marked(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view, doc = _open(qtbot, window, tmp_path)
    refs = view.current.section("references")  # type: ignore[union-attr]
    broken = next(k for k, f in enumerate(refs) if f.text == "Section 7.4")
    fmt = char_format_at(view.references, f"{LINK}broken/{broken}")
    assert fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert fmt.foreground().color() == UNTRUSTED
    exhibit = next(k for k, f in enumerate(refs) if f.text == "Exhibit A")
    resolved = char_format_at(view.references, f"{LINK}ref/{exhibit}")
    assert resolved.underlineStyle() != QTextCharFormat.UnderlineStyle.WaveUnderline
    with qtbot.waitSignal(view.page_requested) as opened:
        view.references.anchorClicked.emit(QUrl(f"{LINK}ref/{exhibit}"))
    assert opened.args[:2] == [doc, 3]  # Exhibit A is on page 3
    qtbot.waitUntil(lambda: window.viewer.page_number == 3, timeout=10000)
    with qtbot.waitSignal(view.page_requested) as opened:  # a broken one opens where it is written
        view.references.anchorClicked.emit(QUrl(f"{LINK}broken/{broken}"))
    assert opened.args[:2] == [doc, 1]
    _close(qtbot, view)


def test_key_dates_export_and_check_again(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from icalendar import Calendar

    view, _doc = _open(qtbot, window, tmp_path)
    first = view.current.run_id  # type: ignore[union-attr]
    view.export_to(tmp_path / "dates.ics", "key dates")
    assert view.status.text() == f"Exported to {tmp_path / 'dates.ics'}"
    events = Calendar.from_ical((tmp_path / "dates.ics").read_bytes()).walk("VEVENT")
    assert date(2026, 1, 15) in {e.decoded("dtstart") for e in events}
    view.export_to(tmp_path / "dates.txt", "key dates")
    assert "use one of .ics, .csv" in view.status.text()
    view.start(refresh=True)
    qtbot.waitUntil(lambda: view.current.run_id != first and view.again.isEnabled(), timeout=30000)  # type: ignore[union-attr]
    assert [e.action for e in window.ctx.audit.entries()].count("check") == 2
    _close(qtbot, view)


def test_nothing_selected_says_so(window) -> None:  # type: ignore[no-untyped-def]
    assert window.work_menu.check([]) is None
    assert window.statusBar().currentMessage() == "Select the documents to check"

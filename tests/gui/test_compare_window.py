"""Work > Compare on two library documents in the real window: the redline side by side, made off the
UI thread, a click on a change scrolling both sides to it, and the real starter model's summary beside
it with "Other changes"; then an export of what is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.contract_versions import edited_contract
from ui.conversation_state import Job

pytestmark = [pytest.mark.gui, pytest.mark.e2e]


def test_compare_shows_both_sides_jumps_to_a_change_and_summarises(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old, new = edited_contract(tmp_path)
    ids = [window.ctx.library.add(p).document.id for p in (old, new)]
    window.refresh_library()
    window.compare_selected([ids[0]])  # one document is not a comparison
    assert "two documents" in window.statusBar().currentMessage()
    window.compare_selected(ids)
    view = window.comparison
    assert view is not None and view.isVisible()
    assert window._job is Job.COMPARE and not window.chat.send_button.isEnabled()  # one engine
    qtbot.waitUntil(lambda: view.redline is not None, timeout=60000)
    assert view.changes.count() == 2
    assert "changed" in view.changes.item(0).text() and "15,000" in view.changes.item(0).text()
    old_html, new_html = view.old_view.toHtml(), view.new_view.toHtml()
    assert "12,500" in old_html and "15,000" not in old_html and "line-through" in old_html
    assert "15,000" in new_html and "12,500" not in new_html
    # A heading printed on its own line stays there, above its clause's text, in bold.
    assert "5. Term and Termination\nThis Agreement starts" in view.new_view.toPlainText()
    assert 'font-weight:700;">5. Term and Termination</span>' in new_html
    # Clause beside clause: both sides hold as many paragraphs, so a change sits level on both.
    assert view.old_view.document().blockCount() == view.new_view.document().blockCount()

    view.resize(900, 300)  # small enough for the later clauses to start out of sight
    qtbot.wait(50)
    view.changes.setCurrentRow(1)  # the governing law, near the end of both versions
    qtbot.waitUntil(lambda: view.new_view.verticalScrollBar().value() > 0, timeout=5000)
    assert view.old_view.verticalScrollBar().value() > 0

    qtbot.waitUntil(lambda: window._job is None, timeout=300000)  # the real model's summary, on the worker
    assert view.written is not None, view.summary_view.toPlainText()
    shown = view.summary_view.toPlainText()
    assert view.written.model_label in shown and "Other changes:" in shown
    other = view.written.other(view.redline)
    assert f"Other changes: {len(other)} of the 2 are not mentioned above." in shown
    assert view.written.mentioned | set(other) == {0, 1}
    assert window.chat.send_button.isEnabled() and window.engine_label.text() == "engine: idle"

    target = tmp_path / "redline.docx"
    view.export_to(target)
    assert target.stat().st_size > 0 and str(target) in view.status.text()


def test_closing_the_compare_view_stops_the_summary(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ids = [window.ctx.library.add(p).document.id for p in edited_contract(tmp_path)]
    window.compare_selected(ids)
    view = window.comparison
    qtbot.waitUntil(lambda: view.redline is not None, timeout=60000)
    view.close()  # while the model reads or writes
    qtbot.waitUntil(lambda: window._job is None, timeout=120000)
    assert view.written is None  # stopped, not finished
    assert window.chat.send_button.isEnabled()

"""File > Export redacted copy… in the real window: an area marked in the viewer and a kind accepted
at once become a redacted copy, checked and logged, made off the UI thread; Cancel stops the work
and writes nothing; the real starter model suggests names, and only names the document prints are
offered."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from tests.fixtures.redaction import recoverable, squash, tricky_pdf
from ui.conversation_state import Job

pytestmark = pytest.mark.gui


def _open_dialog(qtbot, window, doc_id: int):  # type: ignore[no-untyped-def]
    window.viewer.open_document(doc_id)
    window.redact_action.trigger()
    dialog = window.redaction
    assert dialog is not None and dialog.isVisible() and dialog.doc.id == doc_id
    qtbot.waitUntil(lambda: dialog.findings is not None and not dialog.busy, timeout=120000)
    return dialog


def test_a_marked_area_and_a_kind_accepted_make_a_checked_copy(qtbot, window, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _parent, _title, text, *a, **k: told.append(text))
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    doc = window.ctx.library.add(planted.path).document
    window.refresh_library()
    window.viewer.open_document(doc.id)
    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.last is not None and viewer._markable, timeout=60000)
    viewer.mark_action.setChecked(True)
    canvas = viewer.canvas
    z = canvas.zoom
    # Drag over the line "Write to ... for notices." on page 1 (page units 60..560 x 105..125).
    start, end = QPoint(int(60 * z), int(105 * z)), QPoint(int(560 * z), int(125 * z))
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(canvas, end)
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    assert len(viewer.marks_for(doc.id)) == 1 and canvas.redactions

    dialog = _open_dialog(qtbot, window, doc.id)
    kinds = {c.kind for c in dialog.accepted_candidates()}
    assert kinds == {"marked"}, "what the user marked is accepted; what was only found waits"
    dialog.set_kind("email", True)
    accepted = dialog.accepted_candidates()
    assert {c.kind for c in accepted} == {"marked", "email"}
    # The control address is rejected by hand, as a reviewer would.
    control = next(i for i in planted.items if not i.accept)
    for item in dialog._items():
        candidate = dialog.candidate(item)
        if candidate is not None and squash(control.text) in squash(candidate.text):
            item.setCheckState(0, Qt.CheckState.Unchecked)
    out = tmp_path / "redacted.pdf"
    dialog.export(out)
    assert dialog.busy == "exporting" and dialog.cancel_button.isVisible()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=180000)
    assert dialog.saved is not None, dialog.status.text()
    assert out.is_file() and "nothing redacted can be found" in dialog.status.text()
    assert told and "Redaction log" in told[0]
    found = recoverable(out, [i for i in planted.items if i.page in (1, 2, 3) and i.accept], ocr=False)
    assert found == {}
    assert recoverable(out, [control], ocr=False), "the address the reviewer rejected stays"


def test_cancel_stops_the_work_and_writes_nothing(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    doc = window.ctx.library.add(planted.path).document
    dialog = _open_dialog(qtbot, window, doc.id)
    out = tmp_path / "redacted.pdf"
    dialog.set_kind("email", True)
    dialog.export(out)
    dialog.cancel()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=60000)
    assert not out.exists() or dialog.saved is not None  # a copy finished before Cancel is a whole one
    if dialog.saved is None:
        assert "nothing was written" in dialog.status.text()
    dialog.find_candidates()  # a new child for the next piece of work
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert dialog.table.topLevelItemCount() > 0


@pytest.mark.e2e
def test_the_model_suggests_names_and_only_printed_ones_are_offered(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.pdfs import make_contract_pdf

    path = make_contract_pdf(tmp_path / "contract.pdf", extra_text="Signed by Margaret Okonkwo for Northwind.")
    doc = window.ctx.library.add(path).document
    dialog = _open_dialog(qtbot, window, doc.id)
    dialog.names_button.click()
    assert window._job is Job.NAMES and not window.chat.send_button.isEnabled()  # one engine
    qtbot.waitUntil(lambda: window._job is None, timeout=600000)
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert dialog.names_note.startswith("The model ("), dialog.names_note
    text = " ".join(window.ctx.library.page_text(doc.id, n) for n in range(1, doc.page_count + 1))
    for name in dialog.names:
        assert " ".join(name.text.split()) in " ".join(text.split()) or name.source == "extraction"
    listed = [dialog.candidate(i) for i in dialog._items()]
    assert all(c.kind in {"person", "organisation"} for c in listed if c is not None and c.source == "model")

"""The real window, offscreen, with the real starter model: drop a contract, ask, watch the answer
stream, stop it, regenerate, copy; conversations; errors; a double close."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.gui import library_rows as rows

pytestmark = [pytest.mark.gui, pytest.mark.e2e]


def _drop(window, paths: list[Path]) -> None:  # type: ignore[no-untyped-def]
    """What the window receives when files are dragged from a file manager and dropped on it."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    actions = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(QPointF(400, 300), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(400, 300), actions, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    assert drop.isAccepted()


def _add_by_drop(qtbot, window, pdf: Path) -> None:  # type: ignore[no-untyped-def]
    _drop(window, [pdf])
    qtbot.waitUntil(lambda: rows.count(window) == 1 and bool(window.library.selected_ids()), timeout=30000)


def test_window_opens_with_library_viewer_chat_and_demo_notice(window) -> None:  # type: ignore[no-untyped-def]
    assert window.windowTitle() == "Folio"
    assert rows.count(window) == 0
    assert window.library.empty_hint.isVisible()
    assert window.demo_badge.isVisible()
    assert "offline" in window.offline_badge.text()
    assert window.viewer.stack.currentIndex() == 0 and window.viewer.hint.isVisible()
    assert not window.chat.regenerate_button.isEnabled() and not window.chat.copy_button.isEnabled()


def test_drop_a_contract_ask_and_stream_while_responsive(window, qtbot, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    _add_by_drop(qtbot, window, contract_pdf)
    # Adding in the window is audited like `folio add` (the same Library.add), with the file's sha256.
    added = window.ctx.db.execute("SELECT documents FROM audit_log WHERE action = 'add'").fetchall()
    assert [json.loads(row[0]) for row in added] == [[hashlib.sha256(contract_pdf.read_bytes()).hexdigest()]]
    assert "Master Services Agreement" in window.chat.header.text()
    assert "4 p." in rows.texts(window)[0] and "tokens" in rows.texts(window)[0]
    qtbot.waitUntil(lambda: window.viewer.page_number == 1 and window.viewer.canvas.image is not None, timeout=10000)

    # A main-thread probe: the answer must arrive in pieces, and the UI thread must keep ticking.
    seen: list[str] = []
    ticks: list[float] = []
    probe = QTimer()
    probe.timeout.connect(lambda: (ticks.append(time.perf_counter()), seen.append(window.chat.transcript.live_answer)))
    probe.start(20)
    window.chat.input.setPlainText("Which law governs this agreement?")
    QTest.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Ctrl+Enter
    assert not window.chat.send_button.isEnabled() and window.chat.stop_button.isEnabled()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=120000)
    probe.stop()

    partial = {s for s in seen if s}
    assert len(partial) >= 2, "the answer should arrive in pieces while it is generated"
    text = window.chat.transcript_text()
    assert "Which law governs this agreement?" in text and "tokens in" in text
    assert len(ticks) > 10
    messages = window.conversations.messages(window.conversation_id)
    assert [m.role for m in messages] == ["user", "assistant"] and messages[1].status == "complete"
    assert window.status.gauge.isVisible() and "context" in window.status.gauge.text()
    assert window.engine_label.text() == "engine: idle"
    assert (
        window.conversation_list.list.count() == 1 and window.conversation_list.current_id() == window.conversation_id
    )
    assert window.chat.regenerate_button.isEnabled()

    # Copy puts the stored answer (Markdown, citations as written) on the clipboard.
    window.chat.copy_button.click()
    assert QGuiApplication.clipboard().text() == messages[1].text

    # Regenerate replaces the last answer with a new one in the same conversation.
    asked = "SELECT count(*) FROM audit_log WHERE action = 'question'"
    assert window.ctx.db.execute(asked).fetchone()[0] == 1
    window.chat.regenerate_button.click()
    assert not window.chat.send_button.isEnabled()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=120000)
    again = window.conversations.messages(window.conversation_id)
    assert [m.role for m in again] == ["user", "assistant"] and again[1].status == "complete"
    assert window.ctx.db.execute(asked).fetchone()[0] == 2  # the model really answered a second time
    assert again[0].text == "Which law governs this agreement?"
    assert window.chat.transcript_text().count("Which law governs this agreement?") == 1


def test_esc_stops_a_long_answer_quickly(window, qtbot, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    window.ctx.settings.max_answer_tokens = 4000  # the workers share these settings
    _add_by_drop(qtbot, window, contract_pdf)
    window.chat.input.setPlainText("Repeat the whole agreement word for word, then summarise every clause.")
    window.chat.send_button.click()
    qtbot.waitUntil(lambda: len(window.chat.transcript.live_answer) > 20, timeout=120000)
    pressed = time.monotonic()
    QTest.keyClick(window.chat.input, Qt.Key.Key_Escape)
    assert window.engine_label.text() == "engine: stopping"
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=20000)
    assert time.monotonic() - pressed < 5.0
    messages = window.conversations.messages(window.conversation_id)
    assert messages[-1].status == "cancelled" and (messages[-1].completion_tokens or 0) < 4000
    assert "cancelled" in window.chat.transcript_text()


def test_conversations_rename_and_delete_with_confirmation(window, qtbot, contract_pdf: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QInputDialog, QMessageBox

    from tests.fixtures.answers import store_cited_answer

    doc = window.ctx.library.add(contract_pdf).document
    older, _ = store_cited_answer(window.ctx, [doc.id], "Delaware [p. 4].", "First question")
    newer, _ = store_cited_answer(window.ctx, [doc.id], "Ninety days [p. 3].", "Second question")
    window.refresh_library(select=doc.id)
    panel = window.conversation_list
    assert [panel.list.item(i).text() for i in range(panel.list.count())] == ["Second question", "First question"]
    assert window.conversation_id == newer and "Ninety days" in window.chat.transcript_text()
    panel.list.setCurrentRow(1)
    assert window.conversation_id == older and "Delaware" in window.chat.transcript_text()

    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Governing law", True))
    panel.rename_button.click()
    assert window.conversations.get(older).title == "Governing law"
    assert panel.list.currentItem().text() == "Governing law"

    answers = iter([QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda _p, _t, text, *a, **k: (asked.append(text), next(answers))[1])
    panel.delete_button.click()
    assert "Governing law" in asked[0] and len(window.conversations.all()) == 2  # "No" keeps it
    panel.delete_button.click()
    assert [c.id for c in window.conversations.all()] == [newer]
    assert panel.list.count() == 1 and window.conversation_id is None
    assert window.chat.transcript_text().strip() == ""

    panel.list.setCurrentRow(0)
    panel.new_button.click()
    assert window.conversation_id is None and window.chat.transcript_text().strip() == ""


def test_failed_files_show_on_their_item_and_in_the_status_bar(
    window, qtbot, tmp_path: Path, contract_pdf: Path
) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "notes.pdf"
    fake.write_bytes(b"GIF89a" + bytes(200))  # not a PDF, nor any type Folio reads
    _drop(window, [fake, contract_pdf])
    qtbot.waitUntil(lambda: bool(window.warnings), timeout=30000)
    assert "unsupported file type" in window.warnings[0] and "\n" not in window.warnings[0]
    ((name, reason),) = window.library.failed_items()
    assert name == "notes.pdf" and reason.startswith("unsupported file type")  # without the name twice
    failed = next(i for i, text in enumerate(rows.texts(window)) if "notes.pdf" in text)
    assert rows.texts(window)[failed].startswith("⚠")
    assert "unsupported file type" in rows.index(window, failed).data(Qt.ItemDataRole.ToolTipRole)
    assert window.library.selected_ids() == [window.ctx.library.all()[0].id]  # the good file was added

    # Files that arrive without the user acting in the window (Open with Folio) never open a dialog.
    window.warnings.clear()
    other = tmp_path / "other.pdf"
    other.write_bytes(b"%PDF-1.7 broken")
    window.add_paths([str(other)], interactive=False)
    qtbot.waitUntil(lambda: len(window.library.failed_items()) == 2, timeout=30000)
    assert not window.warnings and "other.pdf" in window.statusBar().currentMessage()

    # Dismissing a failed item.
    window.library.list.clearSelection()
    rows.select_row(window, failed)
    window.library.dismiss_failed()
    assert [name for name, _ in window.library.failed_items()] == ["other.pdf"]


def test_an_answer_that_cannot_be_given_shows_in_the_chat_not_a_dialog(window, qtbot, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    window.ctx.settings.context_cap = 64  # far too small for the contract: the planner refuses
    _add_by_drop(qtbot, window, contract_pdf)
    window.chat.input.setPlainText("Which law governs?")
    window.chat.send_button.click()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=60000)
    text = window.chat.transcript_text()
    assert "Could not answer: the selection needs about" in text
    # The chat keeps the reason; the status bar says what comes next in a line short enough to be read
    # whole. Neither gives the command line's "select fewer pages" advice: the window offers readings.
    assert "select fewer" not in text
    assert (
        window.statusBar().currentMessage() == "The selection does not fit the model's context: choose how to read it"
    )
    assert not window.warnings


def test_bad_files_each_in_one_line_and_library_unchanged(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.pdfs import make_encrypted_pdf, make_zero_page_pdf

    fake = tmp_path / "notes.pdf"
    fake.write_bytes(b"GIF89a" + bytes(200))  # not a PDF, nor any type Folio reads
    empty = tmp_path / "empty.pdf"
    empty.touch()
    cases = [
        (tmp_path / "missing.pdf", "no such file"),
        (fake, "unsupported file type"),
        (make_encrypted_pdf(tmp_path / "locked.pdf"), "password required"),
        (empty, "empty"),
        (make_zero_page_pdf(tmp_path / "zero.pdf"), "no pages"),
    ]
    for path, fragment in cases:
        window.warnings.clear()
        window.add_paths([str(path)])
        qtbot.waitUntil(lambda: bool(window.warnings), timeout=10000)
        assert fragment in window.warnings[0] and "\n" not in window.warnings[0]
        assert fragment in window.statusBar().currentMessage()
    assert len(window.library.failed_items()) == len(cases)
    assert window.library.selected_ids() == [] and window.ctx.library.count() == 0


def test_add_folder_adds_its_documents_and_leaves_hidden_files_out(window, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.pdfs import make_text_pdf

    folder = tmp_path / "Acme v Brown"
    (folder / "exhibits").mkdir(parents=True)
    make_text_pdf(folder / "claim.pdf", ["The claimant Acme Ltd claims damages for breach of contract."])
    make_text_pdf(folder / "exhibits" / "ex1.pdf", ["Exhibit 1: the supply contract dated 1 March 2024."])
    (folder / ".DS_Store").write_bytes(b"\0" * 64)  # not a document: no failed row for it
    window.add_paths([str(folder)])
    qtbot.waitUntil(lambda: window.ctx.library.count() == 2, timeout=20000)
    qtbot.wait(200)
    assert window.library.failed_items() == [] and window.warnings == []


def test_recent_documents_menu_reopens_a_document(window, qtbot, contract_pdf: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.pdfs import make_text_pdf

    first = window.ctx.library.add(contract_pdf).document
    second = window.ctx.library.add(make_text_pdf(tmp_path / "b.pdf", ["A short lease about a warehouse."])).document
    window.refresh_library(select=first.id)
    window.refresh_library(select=second.id)
    window.recent_menu.aboutToShow.emit()
    titles = [a.text() for a in window.recent_menu.actions()]
    assert titles == [second.title, first.title]
    window.recent_menu.actions()[1].trigger()
    assert window.library.selected_ids() == [first.id] and window.viewer.doc.id == first.id


def test_closing_twice_does_not_hang(qtbot, starter_home: Path) -> None:  # type: ignore[no-untyped-def]
    from app.context import open_app
    from ui.main_window import MainWindow

    ctx = open_app()
    window = MainWindow(ctx)
    window.show()
    started = time.monotonic()
    window.close()
    window.close()  # used to block forever on a worker whose thread had stopped
    assert time.monotonic() - started < 15
    assert not window.engine_thread.isRunning() and not window.viewer.render_thread.isRunning()
    ctx.close()

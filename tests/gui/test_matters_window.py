"""Matters in the real window, offscreen, on a real library: the switcher and the Matter menu (new,
rename with a retention date, close, destroy with both confirmations), files added to the current
matter, the library, conversations and search (Ctrl+F) showing one matter, a question across matters
refused in one line, the current matter shared with `folio matter`, and the audit log intact after a
destruction run on the worker thread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QDate, Qt, QThread
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox, QInputDialog, QMessageBox

from tests.conftest import run_folio
from tests.gui import library_rows as rows

pytestmark = pytest.mark.gui

ESCROW = "The purchase price is held in escrow by Fairbank Trust until the closing of the Beta merger."


@pytest.fixture
def beta_pdf(tmp_path: Path) -> Path:
    from tests.fixtures.pdfs import make_text_pdf

    return make_text_pdf(tmp_path / "beta-spa.pdf", ["Share Purchase Agreement", ESCROW])


def _new_matter(qtbot, window, name: str, *, number: str = "", retain_until: str | None = None):  # type: ignore[no-untyped-def]
    """Matter > New matter…, filled in and accepted as the user would; returns the dialog."""
    from ui.matter_dialog import MatterDialog

    window.matter_menu.actions["new"].trigger()
    dialog = _open_dialog(qtbot, window, MatterDialog)
    dialog.name.setText(name)
    dialog.number.setText(number)
    if retain_until is not None:
        dialog.retain.setChecked(True)
        dialog.until.setDate(QDate.fromString(retain_until, "yyyy-MM-dd"))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    return dialog


def _open_dialog(qtbot, window, kind):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(kind)))
    return next(d for d in window.findChildren(kind) if d.isVisible())


def _add(qtbot, window, path: Path, count: int) -> None:  # type: ignore[no-untyped-def]
    window.add_paths([str(path)])
    qtbot.waitUntil(lambda: rows.count(window) == count and not window._batches, timeout=30000)


def _listed(window) -> list[str]:  # type: ignore[no-untyped-def]
    return [window.ctx.library.get(i).title for i in _ids(window)]


def _ids(window) -> list[int]:  # type: ignore[no-untyped-def]
    return rows.ids(window)


def _search(qtbot, window, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Edit > Find in documents (Ctrl+F), type, Enter: the titles of the passages found."""
    window.find_action.trigger()
    window.library.search_box.clear()
    QTest.keyClicks(window.library.search_box, text)
    QTest.keyClick(window.library.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.library.searching, timeout=10000)  # answered on the search thread
    return [hit.title for hit in window.library.found]


def _switch(window, name: str) -> None:  # type: ignore[no-untyped-def]
    """Choose a matter in the switcher with the arrow keys, as a user would."""
    combo = window.library.matters.combo
    combo.setFocus()
    target = next(i for i, text in enumerate(window.library.matters.labels()) if text.startswith(name))
    key = Qt.Key.Key_Down if target > combo.currentIndex() else Qt.Key.Key_Up
    for _ in range(abs(target - combo.currentIndex())):
        QTest.keyClick(combo, key)


def _matter(window, name: str):  # type: ignore[no-untyped-def]
    from app.store.matters import Matters

    return Matters(window.ctx.db).get(name)


def test_switching_matters_scopes_library_conversations_search_and_tables(
    window, qtbot, contract_pdf: Path, beta_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from app.settings import load_settings
    from tests.fixtures.answers import store_cited_answer, store_sample_cells

    offered: list[list[str]] = []  # Work > Extraction table…'s list of runs, as the user would see it
    monkeypatch.setattr(
        QInputDialog, "getItem", lambda _p, _t, _l, items, *a, **k: (offered.append(items), ("", False))[1]
    )

    assert window.library.matters.labels() == ["Unfiled"]
    _new_matter(qtbot, window, "Acme v. Beta", number="2024-017", retain_until="2001-01-01")
    # A new matter becomes the current one, flagged when its retention date has passed.
    assert window.library.matters.labels() == ["Acme v. Beta (retention due)", "Unfiled"]
    assert window.library.matters.combo.currentText() == "Acme v. Beta (retention due)"
    assert load_settings(window.ctx.paths.settings_file).matter == "Acme v. Beta"
    _add(qtbot, window, contract_pdf, 1)
    contract = _ids(window)[0]
    store_cited_answer(window.ctx, [contract], "The agreement is governed by Delaware law [p. 4].")
    run = store_sample_cells(window.ctx, contract)

    _new_matter(qtbot, window, "Beta merger")
    assert rows.count(window) == 0  # the new matter holds nothing yet
    _add(qtbot, window, beta_pdf, 1)
    beta = _ids(window)[0]
    assert window.ctx.matter_id == _matter(window, "Beta merger").id
    assert _search(qtbot, window, "escrow") == ["beta-spa"]
    assert _search(qtbot, window, "Delaware") == []  # the contract is in the other matter
    assert window.library.search_status.text() == "0 passages found"

    # The same file added in a second matter: one stored document, linked; its conversation stays in Acme.
    _add(qtbot, window, contract_pdf, 2)
    assert sorted(_ids(window)) == sorted([contract, beta])
    window.library.select(contract)
    assert window.conversation_list.list.count() == 0
    assert window.work_menu.show_table() is None and offered == []  # Acme's table is not Beta's
    assert window.statusBar().currentMessage().startswith("No extraction runs in this matter yet")

    # Back to Acme: its document, its conversation, and search over its text alone.
    _switch(window, "Acme v. Beta")
    assert window.ctx.matter_id == _matter(window, "Acme v. Beta").id
    assert _listed(window) == ["Master Services Agreement"]
    assert _search(qtbot, window, "escrow") == []
    assert _search(qtbot, window, "Delaware") == ["Master Services Agreement"]
    window.library.select(contract)
    assert window.conversation_list.list.count() == 1
    window.work_menu.show_table()
    assert [label.split(":")[0] for label in offered[0]] == [str(run)]

    # `folio matter` sees the window's choice: one stored setting.
    code, out, err = run_folio("matter", "list", "--json")
    assert code == 0, err
    listed = {m["name"]: m for m in json.loads(out)}
    assert listed["Acme v. Beta"]["documents"] == 1 and listed["Acme v. Beta"]["due"] is True
    assert listed["Beta merger"]["documents"] == 2 and listed["Unfiled"]["documents"] == 0
    code, out, _ = run_folio("list")
    assert "Master Services Agreement" in out and "beta-spa" not in out
    code, _, _ = run_folio("matter", "use", "Beta merger")
    assert code == 0
    assert load_settings(window.ctx.paths.settings_file).matter == "Beta merger"


def test_a_question_across_matters_is_refused_in_one_line(window, qtbot, contract_pdf: Path, beta_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    _new_matter(qtbot, window, "Acme v. Beta")
    _add(qtbot, window, contract_pdf, 1)
    acme_doc = window.ctx.library.get(_ids(window)[0])
    _new_matter(qtbot, window, "Beta merger")
    _add(qtbot, window, beta_pdf, 1)
    beta_doc = window.ctx.library.get(_ids(window)[0])
    # The switcher never lists two matters' documents together; a list drawn from an older state of
    # the library could, and the store refuses it before the model is asked anything.
    window.library.set_documents([acme_doc, beta_doc])
    window.library.select(acme_doc.id)
    window.library.select_more(beta_doc.id)
    window.chat.input.setPlainText("Which law governs?")
    window.chat.send_button.click()
    qtbot.waitUntil(lambda: window.chat.send_button.isEnabled(), timeout=30000)
    line = (
        "these documents are in different matters ('Acme v. Beta', 'Beta merger'): "
        "a question takes documents of one matter"
    )
    assert window.statusBar().currentMessage() == line
    assert line in window.chat.transcript_text() and "Traceback" not in window.chat.transcript_text()
    assert window.conversations.all() == []


def test_rename_with_a_retention_date_and_a_refused_name(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from app.settings import load_settings
    from ui.matter_dialog import MatterDialog

    _new_matter(qtbot, window, "Acme v. Beta", number="2024-017")
    assert window.library.matters.labels() == ["Acme v. Beta", "Unfiled"]

    window.matter_menu.actions["rename"].trigger()
    dialog = _open_dialog(qtbot, window, MatterDialog)
    assert dialog.name.text() == "Acme v. Beta" and dialog.number.text() == "2024-017"
    dialog.name.setText("Unfiled")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    # Refused in one line, in the dialog, which stays open with what was typed.
    assert dialog.isVisible() and dialog.error.text() == "a matter named 'Unfiled' already exists"
    dialog.name.setText("Acme v. Beta (appeal)")
    dialog.retain.setChecked(True)
    dialog.until.setDate(QDate(2002, 6, 30))
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert not dialog.isVisible()

    assert window.library.matters.labels() == ["Acme v. Beta (appeal) (retention due)", "Unfiled"]
    matter = _matter(window, "Acme v. Beta (appeal)")
    assert matter.retain_until == "2002-06-30" and matter.id == window.ctx.matter_id
    assert load_settings(window.ctx.paths.settings_file).matter == "Acme v. Beta (appeal)"
    events = [e.details for e in window.ctx.audit.entries() if e.action == "matter"]
    assert [d["event"] for d in events] == ["opened", "renamed", "changed"]
    assert events[1]["old_name"] == "Acme v. Beta" and events[2]["retain_until"] == "2002-06-30"

    window.matter_menu.actions["close"].trigger()
    assert window.library.matters.labels()[0] == "Acme v. Beta (appeal) (retention due, closed)"
    assert window.ctx.audit.verify().ok


def test_destroy_asks_twice_runs_on_the_worker_and_the_audit_log_verifies(
    window, qtbot, contract_pdf: Path, beta_pdf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from app.settings import load_settings
    from app.store.matters import Matters
    from tests.fixtures.answers import store_cited_answer

    _add(qtbot, window, beta_pdf, 1)  # in Unfiled
    shared = _ids(window)[0]
    _new_matter(qtbot, window, "Secret deal")
    _add(qtbot, window, contract_pdf, 1)
    _add(qtbot, window, beta_pdf, 2)  # Unfiled keeps it when Secret deal goes
    secret_doc = next(i for i in _ids(window) if i != shared)
    store_cited_answer(window.ctx, [secret_doc], "The agreement is governed by Delaware law [p. 4].")

    questions: list[str] = []
    answers = iter([QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.Yes])
    monkeypatch.setattr(
        QMessageBox, "question", lambda _p, _t, text, *a, **k: (questions.append(text), next(answers))[1]
    )
    typed = iter([("Secret", True), ("secret deal", True)])
    prompts: list[str] = []
    monkeypatch.setattr(QInputDialog, "getText", lambda _p, _t, label, *a, **k: (prompts.append(label), next(typed))[1])
    threads: list[str] = []
    window.matter_menu.worker.progress.connect(
        lambda _p: threads.append(QThread.currentThread().objectName()), Qt.ConnectionType.DirectConnection
    )

    what = (
        "matter 'Secret deal': 1 document(s), 1 conversation(s) and 0 extraction table(s) "
        "(1 document(s) another matter holds stay)"
    )
    window.matter_menu.actions["destroy"].trigger()  # No at the first question
    assert len(questions) == 1 and questions[0].startswith(f"Destroy {what} for good?\n\n") and prompts == []
    window.matter_menu.actions["destroy"].trigger()  # Yes, then a name that is not the matter's
    assert prompts == [f"To destroy {what}, type the matter's name:"]
    assert "Nothing removed" in window.statusBar().currentMessage()
    assert Matters(window.ctx.db).find("Secret deal") is not None and window.matter_menu.progress is None

    window.matter_menu.actions["destroy"].trigger()  # Yes, and the name (case does not matter)
    assert window.matter_menu.progress is not None and window.matter_menu.progress.isVisible()
    qtbot.waitUntil(lambda: window.matter_menu.progress is None, timeout=30000)

    assert threads and set(threads) == {"folio-ingest"}  # off the UI thread, beside the adds
    assert Matters(window.ctx.db).find("Secret deal") is None
    assert window.library.matters.labels() == ["Unfiled"] and window.ctx.matter_id == _matter(window, "Unfiled").id
    assert load_settings(window.ctx.paths.settings_file).matter == ""
    assert _ids(window) == [shared]  # the document Unfiled also holds stays
    assert window.conversations.all() == [] and window.warnings == []
    assert "Destroyed matter 'Secret deal'" in window.statusBar().currentMessage()
    record = next(e for e in window.ctx.audit.entries() if e.action == "destroy")
    assert record.details["matter"] == "Secret deal" and record.details["counts"]["documents"] == 1
    assert [d["title"] for d in record.details["removed"]] == ["Master Services Agreement"]
    assert window.ctx.audit.verify().ok
    code, out, err = run_folio("audit", "verify")
    assert code == 0 and out.startswith("audit log OK"), err


def test_a_matter_destroyed_from_the_command_line_leaves_the_window_in_unfiled(
    window, qtbot, contract_pdf: Path
) -> None:  # type: ignore[no-untyped-def]
    _new_matter(qtbot, window, "Gone deal")
    _add(qtbot, window, contract_pdf, 1)
    code, _out, err = run_folio("matter", "purge", "Gone deal", "--yes")
    assert code == 0, err
    # Opening the Matter menu asks for the current matter (Close or Reopen): no traceback, the window
    # moves to Unfiled and says why.
    window.matter_menu._update_close()
    qtbot.waitUntil(lambda: window.library.matters.labels() == ["Unfiled"])
    assert window.ctx.matter_id == window.matter_menu.current().id
    assert "destroyed elsewhere" in window.statusBar().currentMessage()
    assert rows.count(window) == 0


def test_changes_from_the_command_line_show_in_the_open_window(window, qtbot, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    """`folio matter rename|new|use` and `folio add` in a terminal while the window is open: the window
    shows them within seconds, and at once when Folio comes back to the front; no restart."""
    from PySide6.QtGui import QGuiApplication

    from app.settings import load_settings

    _new_matter(qtbot, window, "Acme v. Beta")
    acme = window.ctx.matter_id
    combo = window.library.matters.combo
    for args in (
        ["matter", "rename", "Acme v. Beta", "Acme v. Beta (appeal)"],
        ["matter", "new", "Gamma deal", "--retain-until", "2001-01-01"],
        ["add", "--matter", "Acme v. Beta (appeal)", str(contract_pdf)],
    ):
        code, _out, err = run_folio(*args)
        assert code == 0, err
    expected = ["Acme v. Beta (appeal)", "Gamma deal (retention due)", "Unfiled"]
    qtbot.waitUntil(lambda: window.library.matters.labels() == expected, timeout=10000)
    qtbot.waitUntil(lambda: _listed(window) == ["Master Services Agreement"], timeout=10000)
    # The renamed matter is still the window's, under its new name, in the window and in settings.toml.
    assert window.ctx.matter_id == acme and combo.currentText() == "Acme v. Beta (appeal)"
    assert window.ctx.settings.matter == "Acme v. Beta (appeal)"

    # Back from the terminal: the window looks at once, without waiting for its timer.
    window.outside.timer.stop()
    code, _out, err = run_folio("matter", "use", "Gamma deal")
    assert code == 0, err
    assert window.ctx.matter_id == acme  # nothing looked yet
    QGuiApplication.instance().applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)
    gamma = _matter(window, "Gamma deal")
    assert window.ctx.matter_id == gamma.id and combo.currentText() == "Gamma deal (retention due)"
    assert rows.count(window) == 0 and "made current outside this window" in window.statusBar().currentMessage()

    # Busy with the model, the window stays where the work is, and says what was chosen elsewhere.
    from ui.conversation_state import Job

    window._job = Job.ASK
    code, _out, err = run_folio("matter", "use", "Acme v. Beta (appeal)")
    assert code == 0, err
    window.outside.check()
    assert window.ctx.matter_id == gamma.id
    assert window.statusBar().currentMessage().startswith("'Acme v. Beta (appeal)' was made current outside")
    window._job = None

    # The window's own choice after that is the one setting the CLI reads, and the window keeps it.
    _switch(window, "Acme v. Beta (appeal)")
    assert window.ctx.matter_id == acme
    assert load_settings(window.ctx.paths.settings_file).matter == "Acme v. Beta (appeal)"
    window.outside.check()
    assert window.ctx.matter_id == acme and _listed(window) == ["Master Services Agreement"]
    code, out, _ = run_folio("list")
    assert "Master Services Agreement" in out


def test_a_matter_chosen_outside_while_the_model_answers_is_followed_when_the_answer_ends(
    window, qtbot, contract_pdf: Path, beta_pdf: Path
) -> None:  # type: ignore[no-untyped-def]
    """`folio matter use` while the REAL starter model answers in the window: the window stays in its
    matter for the answer, then goes to the matter chosen outside; a matter chosen in the window in
    between (refused, the model being busy) is the user's last word, and the window stays."""
    _new_matter(qtbot, window, "Acme v. Beta")
    _add(qtbot, window, contract_pdf, 1)
    acme, contract = window.ctx.matter_id, _ids(window)[0]
    _new_matter(qtbot, window, "Beta merger")
    _add(qtbot, window, beta_pdf, 1)
    beta, spa = window.ctx.matter_id, _ids(window)[0]
    _switch(window, "Acme v. Beta")
    window.outside.timer.stop()  # the test looks when it means to (the timer would look at any time)
    combo = window.library.matters.combo

    def ask_and_look(document: int) -> None:
        window.library.select(document)
        window.chat.input.setPlainText("Which law governs?")
        window.chat.send_button.click()
        assert window._job is not None  # the model works on it until the answer's end reaches the window
        window.outside.check()

    code, _out, err = run_folio("matter", "use", "Beta merger")
    assert code == 0, err
    ask_and_look(contract)
    assert window.ctx.matter_id == acme and combo.currentText() == "Acme v. Beta"
    assert window.statusBar().currentMessage() == (
        "'Beta merger' was made current outside this window; the window switches to it when this work is done"
    )
    qtbot.waitUntil(lambda: window._job is None, timeout=300000)
    assert window.ctx.matter_id == beta and combo.currentText() == "Beta merger"
    assert _listed(window) == ["beta-spa"]
    assert window.statusBar().currentMessage() == "Now in matter 'Beta merger', made current outside this window"
    [asked] = window.conversations.all()
    assert asked.matter_id == acme and window.conversations.messages(asked.id)[-1].status == "complete"

    # Chosen outside, then in the window (refused while the model answers): the window's choice wins.
    code, _out, err = run_folio("matter", "use", "Acme v. Beta")
    assert code == 0, err
    ask_and_look(spa)
    assert window.ctx.matter_id == beta
    _switch(window, "Unfiled")
    assert window.ctx.matter_id == beta and window.statusBar().currentMessage().startswith("The model is busy")
    qtbot.waitUntil(lambda: window._job is None, timeout=300000)
    assert window.ctx.matter_id == beta and combo.currentText() == "Beta merger"

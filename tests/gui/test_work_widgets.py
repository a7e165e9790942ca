"""The extraction table, search box, template editor and Work menu, on real data (offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.extraction import Cell, ExtractionService, load_evidence
from app.search import Search
from app.templates import TemplateStore
from inference.events import GenerationStats
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE

pytestmark = pytest.mark.gui
QUOTE = "governed by and construed in accordance with the laws of the State of Delaware"


def test_table_shows_cells_and_opens_evidence(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    ctx = window.ctx
    doc = ctx.library.add(contract_pdf).document
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc.id])
    law = Cell(doc.id, "governing_law", True, "Delaware", QUOTE, "4", GOVERNING_LAW_PAGE, "4", None, "exact", 1.0)
    bad = Cell(doc.id, "parties", True, "Acme", "not in the text", "9", None, None, None, "not_found", 0.3,
               ("page_not_in_document", "quote_not_found"))  # fmt: skip
    service._store(run, [law, bad, Cell(doc.id, "insurance", False)], {}, GenerationStats(1, 0, 1, 1, 1, 1, "eos"))

    view = window.work_menu.show_table(run)
    model = view.model
    assert (model.rowCount(), model.columnCount()) == (1, 41)
    col = {f.key: i for i, f in enumerate(template.fields)}
    assert model.headerData(col["governing_law"], Qt.Orientation.Horizontal) == "Governing Law"
    assert model.headerData(0, Qt.Orientation.Vertical) == doc.title
    law_index = model.index(0, col["governing_law"])
    assert model.data(law_index) == "Delaware" and QUOTE in model.data(law_index, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(0, col["insurance"])) == "not found"
    assert model.data(model.index(0, col["parties"]), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(law_index, Qt.ItemDataRole.BackgroundRole) is None  # verified: no warning colour
    assert model.data(model.index(0, col["audit_rights"])) == "…"  # not asked yet
    with qtbot.waitSignal(view.evidence_requested) as signal:
        view.view.doubleClicked.emit(law_index)
    assert signal.args == [run, doc.id, "governing_law"]
    evidence = load_evidence(ctx, run, doc.id, "governing_law")
    assert (evidence.page, evidence.verified) == (GOVERNING_LAW_PAGE, True) and evidence.bbox is not None
    assert "Delaware" in window.statusBar().currentMessage()


def test_search_box_lists_hits_and_opens_the_page(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    panel = window.work_menu.search()
    assert isinstance(panel.search, Search)
    panel.box.setText("Delaware law")
    panel.run()
    assert panel.results.count() >= 1 and panel.status.text().endswith(("match", "matches"))
    with qtbot.waitSignal(panel.open_page) as signal:
        panel.results.itemActivated.emit(panel.results.item(0))
    assert signal.args == [doc.id, GOVERNING_LAW_PAGE]
    panel.box.setText('"')
    panel.run()
    assert panel.results.count() == 0 and panel.status.text() == "type a word to search for"


def test_template_editor_copies_a_builtin_and_edits_fields(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    editor = window.work_menu.edit_template("nda")
    store = editor.store
    assert editor.key.text() == "my_nda"
    editor.fields.item(0, 0).setText("Parties To The NDA")
    editor.fields.item(0, 1).setText("Who signs")
    editor.fields.setCurrentCell(1, 0)
    editor.remove_selected()
    editor._append("Signature Date", "When it was signed", None)
    editor.save()
    saved = store.get("my_nda")
    assert saved.fields[0].key == "parties" and saved.fields[0].name == "Parties To The NDA"
    assert "effective_date" not in [f.key for f in saved.fields]
    assert saved.fields[-1].key == "signature_date" and saved.version == 1
    again = window.work_menu.edit_template("my_nda")
    again.fields.item(0, 0).setText("Signatories")
    again.save()
    assert store.get("my_nda").version == 2 and store.get("my_nda").fields[0].key == "parties"
    broken = window.work_menu.edit_template("my_nda")
    broken.fields.item(1, 0).setText("Signatories")
    broken.save()
    assert "appears twice" in broken.error.text() and store.get("my_nda").version == 2


def test_verify_audit_from_the_menu(qtbot, window, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, text, *a, **k: shown.append(text))
    window.work_menu.actions["verify_audit"].trigger()
    assert shown and shown[0].startswith("The audit log is intact: 0 entries.")

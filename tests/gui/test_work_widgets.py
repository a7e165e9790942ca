"""The extraction table, search box, template editor and Work menu, on real data (offscreen)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.extraction.cells import NOT_HELD, NOT_NAMED, QUOTED, UNSUPPORTED
from app.extraction.runner import Cell, ExtractionService, load_evidence
from app.extraction.templates import TemplateStore
from app.store.search import Search
from inference.events import GenerationStats
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE

pytestmark = pytest.mark.gui
QUOTE = "governed by and construed in accordance with the laws of the State of Delaware"


def _stored_run(window, contract_pdf: Path, extra: list[Cell]):  # type: ignore[no-untyped-def]
    """A contract_review run on the contract whose governing law is quoted on its page, plus these cells
    (made for the document id given as -1), stored as a run stores them."""
    ctx = window.ctx
    doc = ctx.library.add(contract_pdf).document
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc.id])
    law = Cell(doc.id, "governing_law", True, "Delaware", QUOTE, "4", GOVERNING_LAW_PAGE, "4", None, "exact", 1.0,
               verdict=QUOTED, passage=QUOTE)  # fmt: skip
    cells = [law, *(dataclasses.replace(c, document_id=doc.id) for c in extra)]
    service._store(run, cells, {}, GenerationStats(1, 0, 1, 1, 1, 1, "eos"))
    return ctx, doc, template, service, run


def test_table_shows_values_verdicts_and_opens_the_passage(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    bad = Cell(-1, "parties", True, "Acme", "not in the text", "9", None, None, None, "not_found", 0.3,
               ("page_not_in_document", "quote_not_found"), verdict=UNSUPPORTED)  # fmt: skip
    none = Cell(-1, "insurance", False, "no", yes_no=True)
    unnamed = Cell(-1, "effective_date", False, "March 3, 2025", "made on March 3, 2025", "1", 1, flags=(NOT_NAMED,))
    unheld = Cell(-1, "agreement_date", False, "4/2/2018", "made on March 3, 2025", "1", 1, flags=(NOT_HELD,))
    ctx, doc, template, _service, run = _stored_run(window, contract_pdf, [bad, none, unnamed, unheld])

    view = window.work_menu.show_table(run)
    model = view.model
    assert (model.rowCount(), model.columnCount()) == (1, 41)
    col = {f.key: i for i, f in enumerate(template.fields)}
    assert model.headerData(col["governing_law"], Qt.Orientation.Horizontal) == "Governing Law"
    assert model.headerData(col["insurance"], Qt.Orientation.Horizontal) == "Insurance (yes/no)"
    assert model.headerData(0, Qt.Orientation.Vertical) == doc.title
    law_index = model.index(0, col["governing_law"])
    assert model.data(law_index) == f"Delaware\n✓ quoted p. {GOVERNING_LAW_PAGE}"
    assert QUOTE in model.data(law_index, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(0, col["insurance"])) == "No"
    assert "absent" in model.data(model.index(0, col["insurance"]), Qt.ItemDataRole.ToolTipRole)
    parties = model.index(0, col["parties"])
    assert model.data(parties) == "Acme\n✗ unsupported"  # shown as what it is, never as 'not stated'
    assert "not in the document" in model.data(parties, Qt.ItemDataRole.ToolTipRole)
    assert model.data(parties, Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(law_index, Qt.ItemDataRole.BackgroundRole) is None  # quoted: no warning colour
    effective = model.index(0, col["effective_date"])
    assert model.data(effective) == "not stated"
    assert 'the model answered "March 3, 2025", but no sentence' in model.data(effective, Qt.ItemDataRole.ToolTipRole)
    made = model.index(0, col["agreement_date"])
    assert model.data(made) == "not stated"
    assert 'answered "4/2/2018", but no page of the document holds it' in model.data(made, Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(0, col["audit_rights"])) == "…"  # not asked yet
    assert "1 quoted or supported, 0 on another page, 1 unsupported" in view.caption.text()
    with qtbot.waitSignal(view.evidence_requested) as signal:
        view.view.doubleClicked.emit(law_index)
    assert signal.args == [run, doc.id, "governing_law"]
    evidence = load_evidence(ctx, run, doc.id, "governing_law")
    assert (evidence.page, evidence.verified, evidence.verdict) == (GOVERNING_LAW_PAGE, True, QUOTED)
    assert evidence.bbox is not None and "Delaware" in window.statusBar().currentMessage()


def test_reviewer_accepts_corrects_and_rejects_beside_the_model(qtbot, window, contract_pdf: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QInputDialog

    parties = Cell(-1, "parties", True, "Acme", "not in the text", "9", verdict=UNSUPPORTED)
    ctx, doc, template, service, run = _stored_run(window, contract_pdf, [parties])
    view = window.work_menu.show_table(run)
    col = {f.key: i for i, f in enumerate(template.fields)}
    view.view.setCurrentIndex(view.model.index(0, col["audit_rights"]))  # nothing stored yet: nothing to review
    assert not view.buttons["accepted"].isEnabled() and not view.buttons["cleared"].isEnabled()

    view.view.setCurrentIndex(view.model.index(0, col["governing_law"]))
    view.buttons["accepted"].click()
    view.view.setCurrentIndex(view.model.index(0, col["parties"]))
    monkeypatch.setattr(QInputDialog, "getText", lambda *_a, **_k: ("Acme Corp. and Beta LLC", True))
    view.buttons["corrected"].click()
    assert view.model.data(view.model.index(0, col["parties"])).startswith("Acme Corp. and Beta LLC\n✗ unsupported")
    assert "the model said: Acme" in view.model.data(view.model.index(0, col["parties"]), Qt.ItemDataRole.ToolTipRole)
    view.buttons["rejected"].click()
    view.buttons["cleared"].click()
    view.view.setCurrentIndex(view.model.index(0, col["governing_law"]))
    assert view.model.data(view.model.index(0, col["governing_law"])).endswith("✔ accepted")

    table = service.table(run)
    assert table.cell(doc.id, "parties").value == "Acme"  # the model's answer is never overwritten
    assert table.review(doc.id, "parties") is None and table.review(doc.id, "governing_law").decision == "accepted"
    decisions = ctx.db.execute("SELECT field_key, decision, value FROM extraction_reviews ORDER BY id").fetchall()
    assert [tuple(r) for r in decisions] == [
        ("governing_law", "accepted", ""),
        ("parties", "corrected", "Acme Corp. and Beta LLC"),
        ("parties", "rejected", ""),
        ("parties", "cleared", ""),
    ]
    log = ctx.audit
    reviews = [e.details for e in log.entries() if e.action == "review"]
    assert [r["decision"] for r in reviews] == ["accepted", "corrected", "rejected", "cleared"]
    assert reviews[1]["value"] == "Acme Corp. and Beta LLC" and reviews[1]["model_value"] == "Acme"
    assert log.verify().ok


def test_the_least_sure_cells_come_first_and_can_be_reviewed(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    """Each scored cell says how sure its decision is; the list puts the least sure first, keeps only
    the cells to check when asked, and a review from the list lands on that cell."""
    from app.extraction.decide import FieldCalibration, decide

    def scored(key: str, found: bool, logprobs: tuple[float, float], yes_no: bool = True) -> Cell:
        d = decide(logprobs, FieldCalibration(), "logits")
        return Cell(-1, key, found, "yes" if found else "no", yes_no=yes_no, score=d.score, threshold=d.threshold,
                    decided_by=d.decided_by, confidence=d.confidence)  # fmt: skip

    cells = [scored("audit_rights", False, (-0.75, -0.66)), scored("insurance", True, (-0.05, -3.2)),
             scored("non_compete", False, (-2.2, -0.12)), scored("exclusivity", True, (-0.6, -0.8))]  # fmt: skip
    _ctx, doc, template, _service, run = _stored_run(window, contract_pdf, cells)
    view = window.work_menu.show_table(run)
    col = {f.key: i for i, f in enumerate(template.fields)}
    assert view.model.data(view.model.index(0, col["insurance"])).endswith("confidence: high")
    assert view.model.data(view.model.index(0, col["audit_rights"])) == "No\nconfidence: check"
    tip = view.model.data(view.model.index(0, col["audit_rights"]), Qt.ItemDataRole.ToolTipRole)
    assert "probability of 'yes' 0.48 against the line 0.50" in tip and "'absent' is right" in tip
    assert "to check by confidence" in view.caption.text()

    view.show_least_sure_first()
    listed = view.list.model()
    assert listed.rowCount() == 5  # the four scored cells and the governing law, which was not scored
    first = [listed.data(listed.index(r, 1)) for r in range(listed.rowCount())]
    assert first[:4] == ["Audit Rights", "Exclusivity", "Non-Compete", "Insurance"] and first[4] == "Governing Law"
    view.show_least_sure_first(("check", "low"))
    assert [listed.data(listed.index(r, 1)) for r in range(listed.rowCount())] == ["Audit Rights", "Exclusivity"]
    requested: list[tuple[object, ...]] = []
    view.review_requested.connect(lambda *a: requested.append(a))
    view.list.setCurrentIndex(listed.index(1, 0))
    assert view.buttons["accepted"].isEnabled()
    view.buttons["accepted"].click()
    assert requested == [(run, doc.id, "exclusivity", "accepted", "")]


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
    editor.fields.item(0, 2).setText("Who signs")
    editor.fields.setCurrentCell(1, 0)
    editor.remove_selected()
    editor._append("Signature Date", "When it was signed", None)
    editor._append("Non-Compete", "Any ban on competing", None)
    chooser = editor.fields.cellWidget(editor.fields.rowCount() - 1, 1)
    chooser.setCurrentIndex(chooser.findData("yes_no"))
    editor.save()
    saved = store.get("my_nda")
    assert saved.fields[0].key == "parties" and saved.fields[0].name == "Parties To The NDA"
    assert saved.fields[0].description == "Who signs" and saved.fields[-1].yes_no and not saved.fields[0].yes_no
    assert "effective_date" not in [f.key for f in saved.fields]
    assert saved.fields[-2].key == "signature_date" and saved.version == 1
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

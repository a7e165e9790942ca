"""Names to redact: the real starter model's suggestions, kept only where the document prints them as
written and then found at every place they are printed; the parties of an extraction table, with a
reviewer's correction over the model's value."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.extraction.cells import QUOTED
from app.extraction.review import review_cell
from app.extraction.runner import Cell, ExtractionService
from app.extraction.templates import TemplateStore
from app.redaction.candidates import EXTRACTION, MODEL, PARTY, Search, find_candidates
from app.redaction.names import party_names, suggest_names
from app.redaction.pagetext import term_pattern
from inference.events import GenerationStats
from tests.fixtures.pdfs import make_contract_pdf

pytestmark = pytest.mark.e2e


def test_the_model_names_are_grounded_and_found_wherever_printed(starter_home: Path, tmp_path: Path) -> None:
    from app.context import open_app
    from app.engine.session import Session
    from app.redaction.apply import open_pdf, prepare
    from app.redaction.proof import read_pages

    path = make_contract_pdf(tmp_path / "c.pdf", extra_text="Signed by Margaret Okonkwo for Northwind Analytics LLC.")
    ctx = open_app()
    session = Session.for_context(ctx)
    try:
        doc = ctx.library.add(path).document
        entries = len(ctx.audit.entries())
        found = suggest_names(ctx, session, doc.id)
    finally:
        session.close()
    text = "\n".join(ctx.library.page_text(doc.id, n) for n in range(1, doc.page_count + 1))
    for name in found.names:
        pattern = term_pattern(name.text, case=True)
        assert name.source == MODEL and pattern is not None and pattern.search(text), name
    assert found.names or found.dropped, "the model listed names (the schema holds it to a list of them)"
    assert found.model
    entry = ctx.audit.entries()[-1]
    assert len(ctx.audit.entries()) == entries + 1 and entry.action == "question"
    assert entry.details["purpose"] == "names to redact" and entry.documents == [doc.sha256]
    work = open_pdf(path.read_bytes())
    prepare(work)
    candidates = find_candidates(read_pages(work, None), Search(patterns=(), names=tuple(found.names)))
    assert {c.text for c in candidates} >= {n.text for n in found.names}, "every name is found where it is printed"
    ctx.close()


def test_the_parties_of_an_extraction_table_as_a_reviewer_left_them(starter_home: Path, tmp_path: Path) -> None:
    from app.context import open_app

    ctx = open_app()
    doc = ctx.library.add(make_contract_pdf(tmp_path / "c.pdf")).document
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc.id])
    value = 'Northwind Analytics LLC (the "Provider"); Contoso Legal Partners LLP (the "Client")'
    cell = Cell(doc.id, "parties", True, value, value, "1", 1, "1", None, "exact", 1.0, verdict=QUOTED)
    service._store(run, [cell], {}, GenerationStats(10, 0, 5, 1.0, 1.0, 10, "eos"))
    names = party_names(ctx, doc.id)
    assert [(n.text, n.kind, n.source) for n in names] == [
        ("Northwind Analytics LLC", PARTY, EXTRACTION),
        ("Contoso Legal Partners LLP", PARTY, EXTRACTION),
    ]
    review_cell(ctx, run, doc.id, "parties", "corrected", "Northwind Analytics LLC and Contoso Legal Partners LLP")
    assert [n.text for n in party_names(ctx, doc.id)] == ["Northwind Analytics LLC", "Contoso Legal Partners LLP"]
    review_cell(ctx, run, doc.id, "parties", "rejected")
    assert party_names(ctx, doc.id) == []
    ctx.close()

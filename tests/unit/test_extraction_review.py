"""Reviews: stored beside the model's answer, latest decision in force, audited, bad input refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.context import AppContext
from app.errors import FolioError, NotFound
from app.extraction.review import load_reviews, review_cell
from app.extraction.runner import Cell, ExtractionService
from app.extraction.templates import Template
from inference.events import GenerationStats
from tests.fixtures.pdfs import make_text_pdf


def _run(ctx: AppContext, tmp_path: Path) -> tuple[int, int]:
    doc = ctx.library.add(make_text_pdf(tmp_path / "a.pdf", ["Governed by French law."])).document.id
    template = Template.from_dict({"key": "t", "name": "T", "fields": [{"name": "Governing Law"}, {"name": "Fee"}]})
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc])
    cell = Cell(doc, "governing_law", True, "France", "Governed by French law.", "1", 1, "1", verdict="quoted")
    service._store(run, [cell], {}, GenerationStats(1, 0, 1, 1, 1, 1, "eos"))
    return run, doc


def test_decisions_stand_beside_the_answer(ctx: AppContext, tmp_path: Path) -> None:
    run, doc = _run(ctx, tmp_path)
    review = review_cell(ctx, run, doc, "governing_law", "corrected", " French law (Paris courts) ", "see p. 1")
    assert review is not None and (review.decision, review.value, review.note) == (
        "corrected",
        "French law (Paris courts)",
        "see p. 1",
    )
    assert review.final_value("France") == "French law (Paris courts)"
    assert load_reviews(ctx, run)[(doc, "governing_law")] == review
    accepted = review_cell(ctx, run, doc, "governing_law", "accepted")
    assert accepted is not None and accepted.final_value("France") == "France" and accepted.value == ""
    assert review_cell(ctx, run, doc, "governing_law", "cleared") is None
    assert load_reviews(ctx, run) == {}
    rejected = review_cell(ctx, run, doc, "governing_law", "rejected")
    assert rejected is not None and rejected.final_value("France") == ""
    table = ExtractionService(ctx).table(run)
    assert table.cell(doc, "governing_law").value == "France" and table.review(doc, "governing_law") == rejected
    rows = ctx.db.execute("SELECT decision FROM extraction_reviews ORDER BY id").fetchall()
    assert [r[0] for r in rows] == ["corrected", "accepted", "cleared", "rejected"]
    entries = [e for e in ctx.audit.entries() if e.action == "review"]
    assert len(entries) == 4 and entries[0].details["value"] == "French law (Paris courts)"
    assert entries[0].documents == [ctx.library.get(doc).sha256] and ctx.audit.verify().ok


def test_bad_reviews_are_refused_and_nothing_is_written(ctx: AppContext, tmp_path: Path) -> None:
    run, doc = _run(ctx, tmp_path)
    with pytest.raises(FolioError, match="needs the correct value"):
        review_cell(ctx, run, doc, "governing_law", "corrected", "  ")
    with pytest.raises(FolioError, match="decision is one of"):
        review_cell(ctx, run, doc, "governing_law", "approved")
    with pytest.raises(NotFound, match="no answer for 'fee'"):
        review_cell(ctx, run, doc, "fee", "accepted")  # not asked yet: nothing to review
    with pytest.raises(FolioError, match="at most"):
        review_cell(ctx, run, doc, "governing_law", "corrected", "x" * 2001)
    assert ctx.db.execute("SELECT count(*) FROM extraction_reviews").fetchone()[0] == 0
    assert not [e for e in ctx.audit.entries() if e.action == "review"]

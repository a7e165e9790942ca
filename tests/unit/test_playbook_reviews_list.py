"""Work > Playbook reviews… and `folio reviews` list a matter's reviews from one SQL query
(ReviewStore.summaries) that reads no review whole; its figures are those of the reviews loaded in full."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.commands import main
from app.context import open_app
from app.playbook.review import load_review, review_summaries
from app.store.matters import Matters
from tests.fixtures.answers import store_sample_cells, store_sample_review
from tests.fixtures.pdfs import make_contract_pdf


def test_the_list_is_one_query_with_the_figures_of_the_reviews_loaded_whole(
    starter_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = open_app()
    matters = Matters(ctx.db)
    acme, beta = matters.create("Acme"), matters.create("Beta")
    ctx.chosen_matter = acme.id
    doc = ctx.library.add(make_contract_pdf(tmp_path / "msa.pdf")).document.id
    run = store_sample_cells(ctx, doc)
    first, second = store_sample_review(ctx, doc, run), store_sample_review(ctx, doc, run)
    ctx.chosen_matter = beta.id
    supply = make_contract_pdf(tmp_path / "supply.pdf", title="Supply Agreement")
    other_doc = ctx.library.add(supply).document.id
    other = store_sample_review(ctx, other_doc, store_sample_cells(ctx, other_doc))

    ctx.chosen_matter = acme.id
    statements: list[str] = []
    ctx.db.conn.set_trace_callback(statements.append)
    try:
        listed = review_summaries(ctx)
    finally:
        ctx.db.conn.set_trace_callback(None)
    assert len(statements) == 1, statements  # one query, however many reviews
    assert [r.id for r in listed] == [second, first]  # the newest first, this matter's only
    for r in listed:
        full = load_review(ctx, r.id)
        counts = full.counts()
        assert (r.document_id, r.title, r.playbook_key, r.playbook_version, r.playbook_name, r.created_at) == (
            full.document_id, full.title, full.playbook.key, full.playbook.version, full.playbook.name,
            full.created_at,
        )  # fmt: skip
        assert (r.findings, r.short) == (len(full.findings), counts["not_met"] + counts["missing"])
    assert listed[0].title == "Master Services Agreement" and listed[0].playbook_name == "Commercial contract"
    assert listed[0].findings == 10 and listed[0].short > 0
    ctx.chosen_matter = beta.id
    assert [(r.id, r.title) for r in review_summaries(ctx)] == [(other, "Supply Agreement")]
    ctx.close()

    assert main(["matter", "use", "Acme"]) == 0
    capsys.readouterr()
    assert main(["reviews"]) == 0
    lines = capsys.readouterr().out.splitlines()
    short = listed[0].short
    assert [line.split()[0] for line in lines] == [str(second), str(first)]
    assert lines[0].endswith(f"commercial_contract v{listed[0].playbook_version}  {short} short of 10 rules  "
                             "Master Services Agreement")  # fmt: skip

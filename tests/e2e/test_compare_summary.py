"""`folio compare --summary` with the REAL starter model on a real contract (CUAD's GAINSCO sponsorship
agreement, ../shared/corpus) and a second version edited here: the summary comes first, every sentence
carries its grounding verdict, and the changes it mentions plus "Other changes" are all the changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.citations.grounding import FOUND, VERDICTS, ground_answer
from tests.conftest import run_folio
from tests.fixtures.contract_versions import pdf_blocks, rewrite_blocks
from tests.unit.test_compare_contracts import GAINSCO, Edits

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not GAINSCO.exists(), reason="the CUAD corpus is not at ../shared/corpus"),
]


@pytest.fixture
def versions(tmp_path: Path) -> tuple[Path, Path]:
    old = tmp_path / "sponsorship-v1.pdf"
    old.write_bytes(GAINSCO.read_bytes())
    new = tmp_path / "sponsorship-v2.pdf"
    rewrite_blocks(GAINSCO, new, Edits(pdf_blocks(GAINSCO)).new_text)
    return old, new


def test_cli_writes_the_checked_summary_then_the_complete_redline(
    starter_home: Path, versions: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = versions
    assert run_folio("compare", str(old), str(new), "--summary")[0] != 0  # not in the library: said, not guessed
    for path in versions:
        code, _out, err = run_folio("add", str(path))
        assert code == 0, err
    plain = tmp_path / "redline.md"
    assert run_folio("compare", "1", "2", "--out", str(plain))[0] == 0
    out = tmp_path / "summary.md"
    code, printed, err = run_folio("compare", "1", "2", "--summary", "--out", str(out))
    assert code == 0, err
    assert "... measuring both versions" in err and "... checking every sentence" in err  # progress on stderr
    assert "demo model" in err.lower()
    text = out.read_text(encoding="utf-8")
    summary_at = text.index("## Summary of the material changes")
    other_at = text.index("## Other changes")
    redline_at = text.index("## The complete redline")
    assert summary_at < other_at < redline_at
    # The complete redline follows, change for change the same as without a summary.
    redline_lines = [line for line in plain.read_text(encoding="utf-8").splitlines() if line.startswith("- **")]
    assert len(redline_lines) == 6
    assert redline_lines == [line for line in text[redline_at:].splitlines() if line.startswith("- **")]
    # Every change the summary does not mention is listed under Other changes, as the redline lists it.
    listed = [line for line in text[other_at:redline_at].splitlines() if line.startswith("- **")]
    assert all(any(line.startswith(r) for r in redline_lines) for line in listed)
    assert f"{len(listed)} of the 6 changes are not mentioned above" in text
    assert f"wrote {out}" in printed


def test_summary_clause_by_clause_when_both_versions_do_not_fit(
    starter_home: Path, versions: tuple[Path, Path]
) -> None:
    """A context cap below the two versions' size: the summary says so and goes change group by change
    group, each from its own pages; each group's sentences are grounded in both versions."""
    from app.compare.redline import compare
    from app.compare.summary import change_groups, summarise
    from app.compare.versions import version_from_library
    from app.context import open_app
    from app.engine.progress import Progress
    from app.engine.session import Session

    ctx = open_app()
    session = Session.for_context(ctx)
    try:
        ctx.settings.context_cap = 4096  # GAINSCO alone is about 5,000 tokens
        old_id, new_id = (ctx.library.add(p).document.id for p in versions)
        redline = compare(version_from_library(ctx, old_id), version_from_library(ctx, new_id))
        seen: list[Progress] = []
        written = summarise(ctx, session, redline, old_id, new_id, on_progress=seen.append)
        # Every citation of the summary as written, with the (document, page) the citation reader gives
        # it: '[D1 p. 5]', or in words, 'clause 11' (read as the page that clause is on).
        sources = session.sources(ctx, [ctx.library.get(old_id), ctx.library.get(new_id)])
        citations = [
            (part.text[c.start : c.end], {(c.doc_index, n) for n in c.pages})
            for part in written.parts
            for c in ground_answer(part.text, sources).citations
        ]
        audited = ctx.db.execute("SELECT documents, details FROM audit_log WHERE action = 'comparison'").fetchall()
        assert len(audited) == 1 and '"changes":6' in audited[0][1].replace(" ", "")
        pages = {
            (index, n): " ".join(ctx.library.page_text(doc_id, n).split()).lower()
            for index, doc_id in ((1, old_id), (2, new_id))
            for n in range(1, ctx.library.get(doc_id).page_count + 1)
        }
    finally:
        session.close()
        ctx.close()
    groups = change_groups(redline)
    assert "clause by clause" in written.note and f"({len(groups)} change groups)" in written.note
    assert any("change group 1 of" in p.text for p in seen) and any(p.reading for p in seen)
    assert [(p.title, p.changes) for p in written.parts] == [g for g in groups if g[1][0] not in written.unread]
    assert written.demo and written.model_label
    every = set(range(len(redline.changes)))
    for part in written.parts:
        assert part.text, "the model wrote something for every group it read"
        assert part.claims, "every answer is split into claims, each with a verdict"
        for claim in part.claims:
            assert part.text[claim["start"] : claim["end"]] == claim["text"]
            assert claim["verdict"] in VERDICTS
            if claim["verdict"] in FOUND:  # what a verdict says about a page is true of that page
                assert " ".join(claim["passage"].split()).lower() in pages[(claim["doc_index"], claim["page"])], claim
    assert written.mentioned | set(written.other(redline)) == every
    assert not written.mentioned & set(written.other(redline))
    for k in written.mentioned:  # a mentioned change is cited, at one of its pages, in the summary's own words
        change = redline.changes[k]
        on = {(1, n) for n in range(change.old_at.first, change.old_at.last + 1)}
        on |= {(2, n) for n in range(change.new_at.first, change.new_at.last + 1)}
        assert any(pages & on for _written, pages in citations), (change, citations)

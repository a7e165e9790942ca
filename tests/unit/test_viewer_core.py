"""The Qt-free parts of the viewer: where a quote is on a real page, citation links and their states,
recent documents, dropping the last exchange, and drawing pages from the original file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.citations.passages import Word, find_in_blocks, find_passage, find_terms, query_terms, words_from_pymupdf
from app.citations.targets import (
    BAD_ANCHOR,
    ELSEWHERE,
    NOT_FOUND,
    QUOTE_MISSING,
    UNCHECKED,
    VERIFIED,
    claim_targets,
    link_citations,
    targets,
)
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE, make_contract_pdf, make_text_pdf

LAW_QUOTE = "governed by and construed in accordance with the laws of the State of Delaware"


def _page_words(pdf: Path, page: int) -> list[Word]:
    import pymupdf

    with pymupdf.open(pdf) as doc:
        return words_from_pymupdf(doc[page - 1].get_text("words", sort=True))


def test_quote_found_on_the_real_page_spans_its_lines(tmp_path: Path) -> None:
    pdf = make_contract_pdf(tmp_path / "c.pdf")
    words = _page_words(pdf, GOVERNING_LAW_PAGE)
    match = find_passage(words, LAW_QUOTE)
    assert match is not None and match.exact
    assert len(match.rects) == 2  # the sentence wraps onto a second line
    top = min(r[1] for r in match.rects)
    law = next(w for w in words if w.text == "Delaware,")
    assert top <= law.rect[1] <= max(r[3] for r in match.rects)
    # Case, curly quotes and spacing do not matter; a changed word is still placed (fuzzy), a wrong page is not.
    assert find_passage(words, "GOVERNED  by and construed in accordance with the laws of the State of “Delaware”")
    fuzzy = find_passage(words, "governed by and construed in accordance with the law of the State of Delaware")
    assert fuzzy is not None and not fuzzy.exact
    assert find_passage(_page_words(pdf, 1), LAW_QUOTE) is None
    assert find_passage(words, "Ontario courts decide every dispute") is None


def test_a_word_hyphenated_at_a_line_end_is_found(tmp_path: Path) -> None:
    text = "The licensee may not assign this agreement without prior written consent of the licen-\nsor in any case."
    pdf = make_text_pdf(tmp_path / "h.pdf", [text])
    words = _page_words(pdf, 1)
    assert any(w.text.endswith("-") for w in words)
    match = find_passage(words, "written consent of the licensor in any case")
    assert match is not None and match.exact and len(match.rects) == 2


def test_blocks_fallback_and_search_terms() -> None:
    blocks = [((0.0, 0.0, 10.0, 10.0), "First block about fees."), ((0.0, 20.0, 10.0, 30.0), "Delaware law applies.")]
    assert find_in_blocks(blocks, "delaware LAW applies").rects == ((0.0, 20.0, 10.0, 30.0),)  # type: ignore[union-attr]
    assert find_in_blocks(blocks, "nothing like this") is None
    words = [Word((0, 0, 5, 5), "Termination,", (0, 0)), Word((6, 0, 9, 5), "terminates", (0, 0))]
    assert query_terms('"termination" for conv*') == ("termination", "for", "conv*")
    assert find_terms(words, ("termination",)) == ((0, 0, 5, 5),)
    assert len(find_terms(words, ("termin*",))) == 2


def test_citation_states_and_links() -> None:
    answer = 'Delaware: "the laws of the State of Delaware" [p. 4]; fees [p. 2]; "made up" [p. 3]; [p. 9]; [t 00:01:05]'
    from app.citations.markers import DocumentIndex, check, find_citations

    pages = {2: "fees are due", 3: "confidential", 4: "governed by the laws of the State of Delaware"}
    index = DocumentIndex({}, 4, 120.0, lambda p: pages.get(p, ""))
    stored = [c.to_dict() for c in check(find_citations(answer), [index])]
    found = targets(stored, [7])  # an answer stored before claims were grounded: only quotes were checked
    assert [t.state for t in found] == [VERIFIED, UNCHECKED, QUOTE_MISSING, BAD_ANCHOR, UNCHECKED]
    assert [t.trusted for t in found] == [True, False, False, False, False]
    assert [t.faulty for t in found] == [False, False, True, True, False]
    assert found[0].document_id == 7 and found[0].page == 4 and found[0].quote == "the laws of the State of Delaware"
    assert found[4].kind == "time" and found[4].t_seconds == 65.0
    assert "not found on p. 3" in found[2].tooltip and "Not verified" in found[3].tooltip
    linked = link_citations(answer, stored, lambda i: f"folio://x/{i}")
    assert r"[\[p\. 4\]](folio://x/0)" in linked and r"[\[t 00:01:05\]](folio://x/4)" in linked
    assert linked.count("](folio://x/") == 5 and linked.startswith('Delaware: "the laws')
    # Offsets that no longer match the text are left alone rather than linking the wrong words.
    assert link_citations("changed text", stored, lambda i: "x") == "changed text"


def test_a_citation_is_verified_only_by_its_claims_verdict_and_marks_go_after_their_claims() -> None:
    from app.citations.grounding import Sources, ground_answer

    sources = Sources.from_pages(["Cover.", "The fee is 100 euros a month.", "Delaware law governs this agreement."])
    answer = (
        "Delaware law governs this agreement [p. 3]. The fee is 100 euros a month [p. 1]. The fee is 900 euros [p. 2]."
    )
    grounded = ground_answer(answer, sources)
    citations = [c.to_dict() for c in grounded.citations]
    claims = [v.to_dict() for v in grounded.claims]
    found = targets(citations, [7], claims)
    assert [t.state for t in found] == [VERIFIED, ELSEWHERE, NOT_FOUND]
    assert "Folio found it on p. 2" in found[1].tooltip and "This sentence's facts were found" in found[0].tooltip
    marks = claim_targets(claims, [7])
    assert [m.mark for m in marks if m] == ["✓ supported p. 3", "⚠ found on p. 2", "✗ unsupported"]
    assert [(m.document_id, m.page) for m in marks if m] == [(7, 3), (7, 2), (None, None)]
    assert marks[1] is not None and "100 euros a month" in marks[1].passage
    placed = [(c["end"], m.mark, f"m{i}") for i, (c, m) in enumerate(zip(claims, marks, strict=True)) if m]
    linked = link_citations(answer, citations, lambda i: f"c{i}", placed)
    assert linked.startswith(r"Delaware law governs this agreement [\[p\. 3\]](c0). [✓ supported p\. 3](m0) The fee")


def test_recent_documents_newest_first(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from app.store.recent import RecentDocuments

    a = ctx.library.add(make_contract_pdf(tmp_path / "a.pdf")).document
    b = ctx.library.add(make_text_pdf(tmp_path / "b.pdf", ["Another agreement about software licences."])).document
    recent = RecentDocuments(ctx.db)
    assert recent.list() == []
    recent.touch(a.id)
    recent.touch(b.id)
    recent.touch(a.id)
    assert [d.id for d in recent.list()] == [a.id, b.id]
    ctx.db.execute("DELETE FROM documents WHERE id = ?", [b.id])
    assert [d.id for d in recent.list()] == [a.id]


def test_an_exchange_asked_again_is_dropped_up_to_its_new_question(ctx) -> None:  # type: ignore[no-untyped-def]
    from app.errors import NotFound
    from app.store.conversations import Conversations

    conversations = Conversations(ctx.db)
    conv = conversations.create([], "t")
    with pytest.raises(NotFound):
        conversations.last_exchange(conv)
    conversations.add_message(conv, "user", "first?")
    conversations.add_message(conv, "assistant", "one")
    old = conversations.add_message(conv, "user", "second?")
    conversations.add_message(conv, "assistant", "two", status="error")
    assert conversations.last_exchange(conv) == (old, "second?")
    new = conversations.add_message(conv, "user", "second?")  # asked again
    conversations.add_message(conv, "assistant", "two, better")
    conversations.drop_exchange(conv, old, new)
    assert [m.text for m in conversations.messages(conv)] == ["first?", "one", "second?", "two, better"]
    with pytest.raises(NotFound):
        conversations.drop_exchange(conv, old, new)  # already gone: nothing is dropped twice


def test_pages_come_from_the_original_until_it_moves(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from app.processes.page_render import PageRenderer, locate_original

    pdf = make_contract_pdf(tmp_path / "c.pdf")
    doc = ctx.library.add(pdf).document
    renderer = PageRenderer(ctx.library)
    content = renderer.content(doc, GOVERNING_LAW_PAGE, 2.0, quote=LAW_QUOTE)
    assert content.pixels is not None and content.pixels.width == round(595 * 2.0) and content.note == ""
    assert content.highlight is not None and content.highlight.exact
    assert content.text and "Delaware" in content.text
    renderer.close()

    moved = tmp_path / "elsewhere.pdf"
    shutil.move(pdf, moved)
    assert locate_original(ctx.library, doc) is None
    renderer = PageRenderer(ctx.library)
    content = renderer.content(doc, GOVERNING_LAW_PAGE, 2.0, quote=LAW_QUOTE)
    assert content.pixels is None and "no longer at" in content.note
    assert content.highlight is not None  # found in the stored text blocks instead
    renderer.close()

    moved.write_bytes(moved.read_bytes() + b"\n%changed")  # the same path with other bytes is not the original
    ctx.library.add(moved)
    assert locate_original(ctx.library, doc) is None


def test_drawing_child_gives_the_same_pixels_and_words_as_drawing_in_process(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import pymupdf

    from app.processes.page_drawing import PdfPages
    from app.processes.page_render import PageRenderer
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    pdf = make_scanned_pdf(tmp_path / "s.pdf", [make_scan(render_text_page(), degrees=1.0)], text_page="Plain text.")
    doc = ctx.library.add(pdf).document
    child, local = PageRenderer(ctx.library), PageRenderer(ctx.library, PdfPages())
    try:
        with pymupdf.open(pdf) as original:
            for number in (1, 2):  # a text page, and one that is a picture
                for scale in (2.3, 0.4):
                    drawn = child.render(doc, number, scale)
                    assert drawn is not None and drawn == local.render(doc, number, scale)
                    one = original[number - 1].get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
                    assert (drawn.width, drawn.height, drawn.samples) == (one.width, one.height, one.samples)
                assert child.words(doc, number) == local.words(doc, number)
        assert any(w.text == "Plain" for w in child.words(doc, 1))
        assert child.drawer.pids() and child.drawer.pids()[0] != os.getpid()  # type: ignore[attr-defined]
    finally:
        child.close()
        local.close()
    assert not child.drawer.pids()  # type: ignore[attr-defined]  # closed: the child is gone


def test_a_killed_drawing_child_is_replaced_and_a_crash_costs_one_page(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import signal
    import threading
    import time

    from app.errors import USER_ERRORS
    from app.processes.page_drawing import PageDrawProcess
    from app.processes.page_render import PageRenderer

    pdf = make_contract_pdf(tmp_path / "c.pdf")
    doc = ctx.library.add(pdf).document
    renderer = PageRenderer(ctx.library)
    drawer = renderer.drawer
    assert isinstance(drawer, PageDrawProcess)
    try:
        first = renderer.render(doc, 1, 1.0)
        (pid,) = drawer.pids()
        os.kill(pid, signal.SIGKILL)  # killed while idle: the next page gets a new child, no error
        deadline = time.monotonic() + 10
        while drawer.pids() == [pid] and time.monotonic() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            time.sleep(0.01)
        assert renderer.render(doc, 1, 1.0) == first
        assert drawer.pids() and drawer.pids() != [pid]

        # Every child killed as soon as it starts (before it has imported MuPDF): this page is lost, in one line.
        killed: list[int] = []

        def kill_new_children() -> None:
            end = time.monotonic() + 30
            while len(killed) < 2 and time.monotonic() < end:
                for new in drawer.pids():
                    if new not in killed:
                        os.kill(new, signal.SIGKILL)
                        killed.append(new)
                time.sleep(0.002)

        drawer.close()
        killer = threading.Thread(target=kill_new_children)
        killer.start()
        with pytest.raises(USER_ERRORS) as error:
            renderer.content(doc, GOVERNING_LAW_PAGE, 1.0, quote=LAW_QUOTE)
        killer.join()
        assert str(error.value) == f"page {GOVERNING_LAW_PAGE} could not be drawn: the page drawing process stopped"
        content = renderer.content(doc, GOVERNING_LAW_PAGE, 1.0, quote=LAW_QUOTE)  # the next draw has a new child
        assert content.pixels is not None and content.highlight is not None and content.highlight.exact
    finally:
        renderer.close()


def test_a_quote_on_a_scanned_page_is_verified_and_marked_from_its_ocr_words(ctx, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A scan read by the default OCR: its words are searched (FTS5), a quote from it verified, and
    marked line by line on the page as on a text PDF."""
    from app.citations.grounding import document_indexes
    from app.citations.markers import check, find_citations
    from app.processes.page_render import PageRenderer
    from app.store.search import Search
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(render_text_page(), degrees=2)])
    doc = ctx.library.add(pdf).document
    (hit,) = Search(ctx.db).query("forty thousand", conversations=False)
    assert (hit.document_id, hit.page) == (doc.id, 1)
    quote = "shall pay the sum of forty thousand dollars within thirty days"
    (cited,) = check(find_citations(f'"{quote}" [p. 1]'), document_indexes(ctx, [doc.id]))
    assert cited.valid and cited.quote_found
    renderer = PageRenderer(ctx.library)
    try:
        content = renderer.content(doc, 1, 1.0, quote=quote, terms=("forty",))
    finally:
        renderer.close()
    assert content.png is not None and content.highlight is not None and content.highlight.exact
    lines = content.highlight.rects
    assert len(lines) == 2  # the quote runs over two printed lines: one mark each
    for x0, y0, x1, y1 in lines:
        assert 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842 and y1 - y0 < 40
    assert lines[0][1] < lines[1][1]
    (term,) = content.terms
    assert lines[0][0] <= term[0] < term[2] <= lines[0][2] and lines[0][1] <= term[1] < lines[0][3]  # 'forty'

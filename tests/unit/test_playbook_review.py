"""A rule's verdict from the field's cell (decided by code), the report, and the .docx export: the standard
wording proposed as real tracked changes by "Folio playbook", with one Word comment per change."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from app.extraction.cells import CUT_OFF, Cell
from app.playbook.book import PlaybookStore
from app.playbook.report import TextBlock, accepted_text, markdown, rejected_text, sentence_span, tracked_edits
from app.playbook.review import ACCEPTED, REJECTED, Finding, PlaybookReview, judge
from tests.fixtures.office import libreoffice_read_back, soffice, word_views

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@pytest.fixture
def book(tmp_path: Path):  # type: ignore[no-untyped-def]
    return PlaybookStore.for_config(tmp_path / "config").get("commercial_contract")


def _cell(key: str, found: bool, value: str = "", **extra: object) -> Cell:
    return Cell(1, key, found, value, page=4 if found else None, verdict="quoted" if found else "", **extra)  # type: ignore[arg-type]


def test_rules_are_decided_by_code_on_the_cells(book) -> None:  # type: ignore[no-untyped-def]
    rule = book.rule
    law = judge(
        rule("governing_law"), _cell("governing_law", True, "the State of Delaware", passage="laws of Delaware")
    )
    assert (law.verdict, law.read_value, law.where, law.quote) == ("met", "Delaware", "p. 4", "laws of Delaware")
    assert judge(rule("governing_law"), _cell("governing_law", True, "Texas")).verdict == "not_met"
    assert judge(rule("governing_law"), _cell("governing_law", False, "not stated")).verdict == "missing"
    assert judge(rule("renewal_term"), _cell("renewal_term", False, "not stated")).verdict == "met"  # if_absent
    assert judge(rule("renewal_term"), _cell("renewal_term", True, "twelve (12) months")).verdict == "met"
    assert judge(rule("renewal_term"), _cell("renewal_term", True, "two (2) years")).verdict == "not_met"
    assert judge(rule("renewal_term"), _cell("renewal_term", True, "as agreed")).verdict == "needs_person"
    cap = judge(rule("cap_on_liability"), _cell("cap_on_liability", True, "yes", yes_no=True, confidence=0.9))
    assert cap.verdict == "met" and cap.confidence == 0.9 and cap.grounding == "quoted"
    assert judge(rule("cap_on_liability"), _cell("cap_on_liability", False, "no", yes_no=True)).verdict == "missing"
    assert judge(rule("non_compete"), _cell("non_compete", True, "yes", yes_no=True)).verdict == "not_met"
    assert judge(rule("non_compete"), _cell("non_compete", False, "no", yes_no=True)).verdict == "met"
    # What the model gave stands on no page, or its answer did not finish: a person looks.
    nowhere = _cell("insurance", True, "yes", yes_no=True)
    assert judge(rule("insurance"), Cell(**{**nowhere.__dict__, "verdict": "unsupported"})).verdict == "needs_person"
    assert judge(rule("insurance"), _cell("insurance", False, flags=(CUT_OFF,))).verdict == "needs_person"
    assert judge(rule("insurance"), None).verdict == "needs_person"


def _review(book, decisions: dict[str, str] | None = None) -> PlaybookReview:  # type: ignore[no-untyped-def]
    decisions = decisions or {}
    found: tuple[Finding, ...] = (
        Finding("governing_law", "not_met", "Texas is not among New York, Delaware, England.", "Texas", "Texas",
                "governed by the laws of the State of Texas", 2, None, "quoted", 0.8, 0.8, "logits"),
        Finding("cap_on_liability", "met", "The contract has a cap on liability clause (p. 1).", "yes", "",
                "total liability shall not exceed the fees", 1, None, "supported", 0.9, 0.9, "logits"),
        Finding("insurance", "missing", "No insurance clause was found in the contract.", "no"),
        Finding("non_compete", "not_met", "The contract has a non-compete clause (p. 1).", "yes", "",
                "shall not compete with the Customer", 1, None, "quoted"),
    )  # fmt: skip
    findings = tuple(Finding(**{**f.__dict__, "decision": decisions.get(f.rule_key, "")}) for f in found)
    return PlaybookReview(7, book, 1, "Supply Agreement", "ab" * 32, 3, "starter", "cd" * 32, "2025-01-01", "Unfiled",
                          findings)  # fmt: skip


BLOCKS = [
    TextBlock(1, "5. Liability. The total liability shall not exceed the fees. The Supplier shall not compete with\n"
                 "the Customer in any territory."),
    TextBlock(2, "9. Law. This Agreement is governed by the laws of the State of Texas."),
]  # fmt: skip


def test_edits_replace_the_quoted_clause_in_place_and_add_what_is_missing(book) -> None:  # type: ignore[no-untyped-def]
    edits = tracked_edits(_review(book), BLOCKS)
    assert (edits.placed, edits.unplaced, len(edits.comments)) == (2, 0, 3)  # insurance is missing, not unplaced
    first, second, added = edits.paragraphs
    assert [(p.kind, p.text) for p in first] == [
        ("same", "5. Liability. The total liability shall not exceed the fees."),
        # An absent rule without wording: the whole sentence holding the clause goes, with the space before it.
        ("deleted", " The Supplier shall not compete with\nthe Customer in any territory."),
    ]
    assert [(p.kind, p.text) for p in second[:2]] == [
        ("same", "9. Law. "),
        ("deleted", "This Agreement is governed by the laws of the State of Texas."),
    ]  # the sentence holding the quoted fragment, not the fragment: the wording is a whole sentence
    assert [p.kind for p in second] == ["same", "deleted", "inserted"] and "New York" in second[2].text
    assert [rejected_text(p) for p in (first, second)] == [b.text for b in BLOCKS]
    assert accepted_text(second) == "9. Law. " + book.rule("governing_law").proposed_wording
    assert [p.kind for p in added] == ["inserted"] and "insurance" in added[0].text
    assert "Governing law: not met. Texas is not among" in edits.comments[second[1].change]  # type: ignore[index]


def test_once_findings_are_reviewed_only_the_accepted_ones_are_proposed(book) -> None:  # type: ignore[no-untyped-def]
    assert [f.rule_key for _r, f in _review(book).proposed()] == ["governing_law", "insurance", "non_compete"]
    reviewed = _review(book, {"governing_law": ACCEPTED, "non_compete": REJECTED})
    assert [f.rule_key for _r, f in reviewed.proposed()] == ["governing_law"]
    text = markdown(reviewed)
    assert "Proposed edits: 1, for the accepted findings" in text and "Reviewer: rejected." in text
    assert "| 1 | Governing law | not met | p. 2 | quoted | 80% (check) |" in text


def test_the_docx_has_tracked_changes_by_folio_playbook_and_one_comment_per_change(book) -> None:  # type: ignore[no-untyped-def]
    import docx

    from app.export import review_docx

    data = review_docx(_review(book), BLOCKS)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        body = z.read("word/document.xml").decode()
        comments = z.read("word/comments.xml").decode()
    inserted = re.findall(r'<w:ins [^>]*w:author="([^"]+)"[^>]*(?<!/)>', body)  # around text
    deleted = re.findall(r'<w:del [^>]*w:author="([^"]+)"[^>]*(?<!/)>', body)
    assert inserted == ["Folio playbook"] * 2 and deleted == ["Folio playbook"] * 2
    # The missing clause's paragraph is new: a paragraph mark is tracked as inserted with it, so that
    # rejecting it leaves no empty paragraph (the mark before it: the document's last mark cannot go).
    assert re.findall(r'<w:rPr><w:ins [^>]*w:author="Folio playbook"[^>]*/></w:rPr>', body) != []
    starts = re.findall(r'<w:commentRangeStart w:id="(\d+)"', body)
    ends = re.findall(r'<w:commentRangeEnd w:id="(\d+)"', body)
    refs = re.findall(r'<w:commentReference w:id="(\d+)"', body)
    assert len(starts) == 3 and starts == ends == refs
    assert comments.count("<w:comment ") == 3 and comments.count('w:author="Folio playbook"') == 3
    revision_ids = re.findall(r'<w:(?:ins|del) w:id="(\d+)"', body)
    assert not set(revision_ids) & set(starts)  # no two annotations share an id
    opened = docx.Document(io.BytesIO(data))  # python-docx reads it back, comments and all
    assert len(list(opened.comments)) == 3
    assert any("Governing law: not met" in c.text for c in opened.comments)
    said = [p.text for p in opened.paragraphs if p.text.startswith("The proposed wording for ")]
    assert said == ["The proposed wording for 1 missing clause(s) follows the text."]


def _paragraph_text(paragraph, dropped: str) -> str:  # type: ignore[no-untyped-def]
    """A Word paragraph's text read from its XML with every `dropped` revision (w:ins or w:del) left out:
    dropping deletions is accepting every change, dropping insertions is rejecting every change."""
    out: list[str] = []

    def walk(element, inside: bool) -> None:  # type: ignore[no-untyped-def]
        inside = inside or element.tag == W + dropped
        if not inside and element.tag in (W + "t", W + "delText"):
            out.append(element.text or "")
        elif not inside and element.tag == W + "br":
            out.append("\n")
        for child in element:
            walk(child, inside)

    walk(paragraph._p, False)
    return "".join(out)


def test_a_clause_quoted_mid_sentence_is_replaced_by_whole_sentences_in_the_docx(book) -> None:  # type: ignore[no-untyped-def]
    """The quotes are fragments of sentences (one wrapped over a line): in the .docx python-docx reads
    back, accepting every change gives clean sentences, rejecting every change gives the text as it was."""
    import docx

    from app.export import review_docx

    law = (
        "12. Governing Law. The parties agree that this Agreement and all claims under it (e.g. in tort) shall\n"
        "be governed by the laws of the State of Texas, without regard to conflicts principles. The courts of "
        "Travis County, Texas have sole jurisdiction."
    )
    compete = (
        "Costs. During the Term, the Supplier shall not compete with the Customer in any U.S. territory "
        "listed in Sec. 4. Each party bears its own costs."
    )
    review = _review(book, {"governing_law": ACCEPTED, "non_compete": ACCEPTED, "insurance": REJECTED})
    review = PlaybookReview(**{**review.__dict__, "findings": tuple(
        Finding(**{**f.__dict__, "quote": {"governing_law": "shall be governed by the laws of the State",
                                           "non_compete": "compete with the Customer"}.get(f.rule_key, f.quote)})
        for f in review.findings)})  # fmt: skip
    blocks = [TextBlock(1, "Preamble. Nothing here changes."), TextBlock(2, law), TextBlock(3, compete)]
    opened = docx.Document(io.BytesIO(review_docx(review, blocks)))
    paragraphs = opened.paragraphs
    at = next(n for n, p in enumerate(paragraphs) if p.text.startswith("Preamble"))
    body = paragraphs[at : at + 3]
    wording = book.rule("governing_law").proposed_wording
    assert [_paragraph_text(p, "del") for p in body] == [
        "Preamble. Nothing here changes.",
        f"12. Governing Law. {wording} The courts of Travis County, Texas have sole jurisdiction.",
        "Costs. Each party bears its own costs.",  # the removed sentence takes its space with it
    ]
    assert [_paragraph_text(p, "ins") for p in body] == [b.text for b in blocks]  # exactly as it was
    assert len(paragraphs) == at + 3  # nothing proposed after the text: both clauses were placed


def test_a_sentence_is_widened_within_its_paragraph_not_past_abbreviations_or_a_heading() -> None:
    text = "9. Law\nThis Agreement (see Sec. 4 and No. 7) is governed by U.S. law. Clause 9.1. The rest."
    start = text.index("governed")
    assert text[slice(*sentence_span(text, start, start + 8))] == (
        "This Agreement (see Sec. 4 and No. 7) is governed by U.S. law."
    )
    first = text.index("Agreement")
    last = text.index("Clause") + 3  # a quote across two sentences takes both, whole
    assert text[slice(*sentence_span(text, first, last))] == (
        "This Agreement (see Sec. 4 and No. 7) is governed by U.S. law. Clause 9.1."
    )
    assert sentence_span("no sentence end here", 3, 8) == (0, 20)
    wrapped = "Either party may terminate\nThis Agreement on notice. Fees stay due."  # a short first line, no heading
    assert wrapped[slice(*sentence_span(wrapped, 30, 40))] == "Either party may terminate\nThis Agreement on notice."
    two = "First part.\n\nsecond part goes on"  # a blank line ends a sentence even without a capital after it
    assert two[slice(*sentence_span(two, two.index("goes"), two.index("goes") + 4))] == "second part goes on"


def test_a_clause_not_found_in_the_text_is_said_apart_from_a_missing_one(book) -> None:  # type: ignore[no-untyped-def]
    import docx

    from app.export import review_docx

    blocks = BLOCKS[:1]  # the governing law clause's paragraph is not in the text Folio has
    edits = tracked_edits(_review(book), blocks)
    assert (edits.placed, edits.unplaced, len(edits.comments)) == (1, 1, 3)
    opened = docx.Document(io.BytesIO(review_docx(_review(book), blocks)))
    said = [p.text for p in opened.paragraphs if p.text.startswith("The proposed wording for ")]
    both = "1 missing clause(s) and 1 clause(s) Folio could not place in the text"
    assert said == [f"The proposed wording for {both} follows the text."]


@pytest.mark.skipif(soffice() is None, reason="LibreOffice (soffice) is not installed, so the .docx cannot be opened")
def test_libreoffice_reads_back_one_change_and_one_comment_per_accepted_finding(book, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """LibreOffice opens the export headless and converts it to its own XML: each accepted finding arrives
    as one comment by "Folio playbook" whose range holds that finding's change (a replacement as the
    clause deleted and the wording inserted, a removal as the clause deleted), and nothing else is tracked."""
    from app.export import review_docx

    review = _review(book, {"governing_law": ACCEPTED, "non_compete": ACCEPTED, "insurance": REJECTED})
    path = tmp_path / "review.docx"
    path.write_bytes(review_docx(review, BLOCKS))
    read = libreoffice_read_back(path)
    law, compete = book.rule("governing_law"), book.rule("non_compete")
    shown = {c.text.split(":")[0]: [(read.changes[i].kind, read.changes[i].text) for i in c.changes]
             for c in read.comments}  # fmt: skip
    assert shown == {
        law.name: [
            ("deletion", "This Agreement is governed by the laws of the State of Texas."),
            ("insertion", law.proposed_wording),
        ],
        compete.name: [("deletion", "The Supplier shall not compete with the Customer in any territory.")],
    }
    assert len(read.comments) == 2 and not read.outside and len(read.changes) == 3
    assert {c.author for c in read.comments} == {ch.author for ch in read.changes.values()} == {"Folio playbook"}
    assert "Texas is not among New York" in read.comments[1].text  # the reason, as the comment says it


def _accepted(book, found: tuple[Finding, ...]) -> PlaybookReview:  # type: ignore[no-untyped-def]
    findings = tuple(Finding(**{**f.__dict__, "decision": ACCEPTED}) for f in found)
    return PlaybookReview(8, book, 1, "Supply Agreement", "ab" * 32, 3, "starter", "cd" * 32, "2025-01-01", "Unfiled",
                          findings)  # fmt: skip


TERM = (
    "7. Term. This Agreement renews automatically for successive two (2) year terms, the Supplier shall sell "
    "exclusively to the Customer and shall not compete with the Customer. Notices go by mail."
)
ONE_SENTENCE = (  # three findings quote parts of the one sentence of TERM
    Finding("renewal_term", "not_met", "Two years is more than one year.", "two (2) years", "2 years",
            "renews automatically for successive two (2) year terms", 3, None, "quoted"),
    Finding("non_compete", "not_met", "The contract has a non-compete clause (p. 3).", "yes", "",
            "shall not compete with the Customer", 3, None, "quoted"),
    Finding("exclusivity", "not_met", "The contract has an exclusivity clause (p. 3).", "yes", "",
            "sell exclusively to the Customer", 3, None, "quoted"),
)  # fmt: skip


def test_findings_quoting_one_sentence_change_it_once_each_wording_its_own_change(book) -> None:  # type: ignore[no-untyped-def]
    """Two wordings and a removal on one sentence: the sentence deleted once (under the first finding),
    the wordings inserted after it in the findings' order, each its own change; the removal shares the
    deletion. Accepting all reads clean, rejecting all gives the text back character for character."""
    review = _accepted(book, ONE_SENTENCE)
    edits = tracked_edits(review, [TextBlock(3, TERM)])
    (paragraph,) = edits.paragraphs  # nothing proposed after the text: all three were placed
    renewal, exclusive = book.rule("renewal_term"), book.rule("exclusivity")
    sentence = TERM.removeprefix("7. Term. ").removesuffix(" Notices go by mail.")
    assert [(p.kind, p.text, p.change) for p in paragraph] == [
        ("same", "7. Term. ", None),
        ("deleted", sentence, 0),
        ("inserted", renewal.proposed_wording, 0),
        ("inserted", " " + exclusive.proposed_wording, 2),
        ("same", " Notices go by mail.", None),
    ]
    assert (edits.placed, edits.unplaced, edits.shared) == (3, 0, {1: 0})
    assert accepted_text(paragraph) == (
        f"7. Term. {renewal.proposed_wording} {exclusive.proposed_wording} Notices go by mail."
    )
    assert rejected_text(paragraph) == TERM
    assert "also changed for No non-compete, No exclusivity: it is deleted once" in edits.comments[0]
    assert "also changed for Renewal of at most one year, No exclusivity" in edits.comments[1]
    # Sentences that only overlap are one span too: a quote across two sentences and one in the second.
    text = "First one here. The second one. A third."
    across = Finding("renewal_term", "not_met", "r", quote="one here. The second", page=1)
    inside = Finding("exclusivity", "not_met", "e", quote="second one", page=1)
    (both,) = tracked_edits(_accepted(book, (across, inside)), [TextBlock(1, text)]).paragraphs
    assert [(p.kind, p.change) for p in both] == [("deleted", 0), ("inserted", 0), ("inserted", 1), ("same", None)]
    assert both[0].text == "First one here. The second one." and rejected_text(both) == text


def test_two_findings_on_one_sentence_read_back_from_the_docx(book, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The .docx python-docx reads back: one deletion, two insertions, three comments (the removal's
    around the shared deletion); accepting all gives the clean paragraph, rejecting all the original."""
    from app.export import review_docx

    path = tmp_path / "review.docx"
    path.write_bytes(review_docx(_accepted(book, ONE_SENTENCE), [TextBlock(2, "Preamble."), TextBlock(3, TERM)]))
    with zipfile.ZipFile(path) as z:
        body = z.read("word/document.xml").decode()
    assert len(re.findall(r"<w:delText", body)) == 1 and len(re.findall(r"<w:ins ", body)) == 2
    assert len(re.findall(r"<w:commentRangeStart ", body)) == 3
    accepted, rejected = word_views(path)
    renewal, exclusive = book.rule("renewal_term").proposed_wording, book.rule("exclusivity").proposed_wording
    assert accepted[-2:] == ["Preamble.", f"7. Term. {renewal} {exclusive} Notices go by mail."]
    assert rejected[-2:] == ["Preamble.", TERM]


REMOVED = "12.3 The Supplier shall not compete with the Customer in any territory."  # one sentence: all of it goes
PARAGRAPHS = [
    TextBlock(1, "Preamble. Nothing here changes."),
    TextBlock(2, REMOVED),
    TextBlock(3, "13. Law. This Agreement is governed by the laws of the State of Texas."),
]


REMOVALS = ("between", "last", "last, clause added")


def _removals(book, case: str) -> tuple[PlaybookReview, list[TextBlock]]:  # type: ignore[no-untyped-def]
    """The non-compete paragraph removed whole: between two paragraphs, or as the contract's last one;
    with the missing insurance clause added after the text, or ('last') with nothing after it."""
    law, _cap, insurance, compete = _review(book).findings
    compete = Finding(**{**compete.__dict__, "quote": "shall not compete with the Customer", "page": 2})
    if case == "between":
        return _accepted(book, (law, insurance, compete)), PARAGRAPHS
    found = (law, compete) if case == "last" else (law, insurance, compete)
    return _accepted(book, found), [PARAGRAPHS[0], PARAGRAPHS[2], PARAGRAPHS[1]]


def _clean(book, review: PlaybookReview) -> list[str]:  # type: ignore[no-untyped-def]
    """The text of _removals' review with every change accepted."""
    added = [book.rule(f.rule_key).proposed_wording for f in review.findings if f.rule_key == "insurance"]
    return ["Preamble. Nothing here changes.", "13. Law. " + book.rule("governing_law").proposed_wording, *added]


@pytest.mark.parametrize("case", REMOVALS)
def test_a_paragraph_removed_whole_leaves_no_empty_paragraph_when_accepted(book, tmp_path: Path, case: str) -> None:  # type: ignore[no-untyped-def]
    """Its paragraph mark is a tracked deletion (w:pPr/w:rPr/w:del; at the end the mark before it, as the
    last mark cannot go): accepting all, no empty paragraph is left where it was; rejecting all gives
    the contract's paragraphs back exactly, with no empty one where the added clause was."""
    from app.export import review_docx

    review, blocks = _removals(book, case)
    edits = tracked_edits(review, blocks)
    removed = next(p for p in edits.paragraphs if rejected_text(p) == REMOVED)
    assert [(p.kind, p.text) for p in removed] == [("deleted", REMOVED)]
    path = tmp_path / "review.docx"
    path.write_bytes(review_docx(review, blocks))
    with zipfile.ZipFile(path) as z:
        body = z.read("word/document.xml").decode()
    assert len(re.findall(r'<w:pPr><w:rPr><w:del [^>]*w:author="Folio playbook"', body)) == 1
    accepted, rejected = word_views(path)
    at = accepted.index("Preamble. Nothing here changes.")
    assert accepted[at:] == _clean(book, review)  # no empty paragraph
    assert rejected[at:] == [b.text for b in blocks]


@pytest.mark.skipif(soffice() is None, reason="LibreOffice (soffice) is not installed, so the .docx cannot be opened")
def test_libreoffice_reads_shared_sentences_and_removed_paragraphs_back(book, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """LibreOffice converts the exports headless: each finding's comment holds its own change (the removal
    on a shared sentence, the shared deletion), nothing is tracked outside a comment, and its own view of
    the text with every change accepted or rejected is the clean text or the original paragraphs."""
    from app.export import review_docx

    path = tmp_path / "shared" / "review.docx"
    path.parent.mkdir()
    path.write_bytes(review_docx(_accepted(book, ONE_SENTENCE), [TextBlock(3, TERM)]))
    read = libreoffice_read_back(path)
    renewal, compete, exclusive = (book.rule(k) for k in ("renewal_term", "non_compete", "exclusivity"))
    sentence = TERM.removeprefix("7. Term. ").removesuffix(" Notices go by mail.")
    shown = {c.text.split(":")[0]: [(read.changes[i].kind, read.changes[i].text) for i in c.changes]
             for c in read.comments}  # fmt: skip
    assert shown == {
        renewal.name: [("deletion", sentence), ("insertion", renewal.proposed_wording)],
        compete.name: [("deletion", sentence)],
        exclusive.name: [("insertion", exclusive.proposed_wording)],
    }
    assert len(read.changes) == 3 and not read.outside
    assert read.accepted[-1] == f"7. Term. {renewal.proposed_wording} {exclusive.proposed_wording} Notices go by mail."
    assert read.rejected[-1] == TERM
    law = book.rule("governing_law")
    for n, case in enumerate(REMOVALS):
        review, blocks = _removals(book, case)
        path = tmp_path / f"removed-{n}" / "review.docx"
        path.parent.mkdir()
        path.write_bytes(review_docx(review, blocks))
        read = libreoffice_read_back(path)
        at = read.accepted.index("Preamble. Nothing here changes.")
        assert read.accepted[at:] == _clean(book, review)
        assert read.rejected[at:] == [b.text for b in blocks]
        assert not read.outside and len(read.comments) == len(review.proposed())
        shown = {c.text.split(":")[0]: [(read.changes[i].kind, read.changes[i].text) for i in c.changes]
                 for c in read.comments}  # fmt: skip
        assert shown[compete.name] == [("deletion", REMOVED)]  # the paragraph's mark goes with it
        sentence = "This Agreement is governed by the laws of the State of Texas."
        assert shown[law.name] == [("deletion", sentence), ("insertion", law.proposed_wording)]
    # Two removals of one whole paragraph: one deletion (its mark with it), both comments hold it.
    poaching = replace(compete, key="no_poaching", name="No poaching")
    two = replace(book, rules=(*book.rules, poaching))
    finding = _removals(book, "between")[0].findings[-1]  # the non-compete, quoting the paragraph
    found = (replace(finding, quote="The Supplier shall not compete"), replace(finding, rule_key="no_poaching"))
    path = tmp_path / "two-removals" / "review.docx"
    path.parent.mkdir()
    path.write_bytes(review_docx(_accepted(two, found), PARAGRAPHS))
    read = libreoffice_read_back(path)
    assert [[(read.changes[i].kind, read.changes[i].text) for i in c.changes] for c in read.comments] == [
        [("deletion", REMOVED)]
    ] * 2
    assert len(read.changes) == 1 and not read.outside
    at = read.accepted.index("Preamble. Nothing here changes.")
    assert read.accepted[at:] == [PARAGRAPHS[0].text, PARAGRAPHS[2].text]
    assert read.rejected[at:] == [b.text for b in PARAGRAPHS]

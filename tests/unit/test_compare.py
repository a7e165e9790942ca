"""The redline's rules on small made-up versions: what is not a change, moves, renumbering, anchors,
and the proof that the changes alone turn the old text into the new one (also for random edits)."""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.compare.apply import apply_changes
from app.compare.markdown import to_markdown
from app.compare.redline import Redline, compare
from app.compare.tracked import accepted, tracked_paragraphs
from app.compare.versions import Block, Version
from app.compare.words import body_blocks, fold

CLAUSES = [
    "1. Term. This Agreement starts on January 1, 2025 and runs for two (2) years.",
    "2. Fees. The Client shall pay a monthly fee of 12,500 US dollars within thirty (30) days.",
    "3. Confidentiality. Each party shall keep the other party's information secret for five years.",
    "4. Assignment. Neither party may assign this Agreement without the other party's written consent.",
    "5. Governing Law. This Agreement is governed by the laws of the State of New York.",
]


def version(blocks: list[tuple[int, str]], title: str = "v") -> Version:
    pages = max(p for p, _ in blocks)
    return Version(title, title, "page", pages, tuple(Block(p, None, text) for p, text in blocks))


def paged(clauses: list[str], per_page: int = 2, furniture: str = "") -> Version:
    """One clause a block, `per_page` clauses a page; `furniture` (a header with '{n}') on every page."""
    blocks: list[tuple[int, str]] = []
    for k, text in enumerate(clauses):
        page = k // per_page + 1
        if furniture and (not blocks or blocks[-1][0] != page):
            blocks.append((page, furniture.format(n=page)))
        blocks.append((page, text))
    return version(blocks)


def rebuilt(redline: Redline) -> list[str]:
    return [w for clause in apply_changes(redline.old_clauses, redline.changes) for w in clause]


def words_of(v: Version) -> list[str]:
    return fold(" ".join(b.text for b in v.blocks)).split()


def test_the_same_text_laid_out_differently_is_no_change() -> None:
    old = paged(CLAUSES, per_page=2, furniture="ACME CONFIDENTIAL - Draft 3 - Page {n} of 3")
    hyphenated = [
        CLAUSES[0].replace("Agreement starts", "Agree-\nment starts"),
        CLAUSES[1].replace("monthly", "month-\nly"),  # a line-end hyphen inside a word
        CLAUSES[2].replace("other party's", "other\nparty’s"),  # a line break and a curly quote
        *CLAUSES[3:],
    ]
    new = version(
        [(1, "Draft 4 of 12 May"), (1, "1")]
        + [(1, t) for t in hyphenated[:3]]
        + [(2, "Draft 4 of 12 May"), (2, "- 2 -")]
        + [(2, t) for t in hyphenated[3:]]
        + [(3, "Draft 4 of 12 May"), (3, "Page 3 of 3"), (3, "Signed by the parties.")]
    )
    old = dataclasses.replace(old, blocks=(*old.blocks, Block(3, None, "Signed by the parties.")))
    redline = compare(old, new)
    assert redline.changes == ()
    assert "No changes" in to_markdown(redline)


def test_a_hyphen_that_belongs_to_the_word_is_kept_when_the_other_version_writes_it() -> None:
    old = version([(1, "1. Scope. The non-competition covenant binds the Seller.")])
    new = version([(1, "1. Scope. The non-\ncompetition covenant binds the Seller.")])
    assert compare(old, new).changes == ()
    newer = version([(1, "1. Scope. The non-\ncompetition covenant binds the Buyer.")])
    (change,) = compare(old, newer).changes
    assert (change.old_words, change.new_words) == (("Seller.",), ("Buyer.",))


def test_word_changes_carry_their_pages_in_both_versions() -> None:
    old = paged(CLAUSES, per_page=2)  # clause 5 on p. 3
    edited = [*CLAUSES]
    edited[4] = edited[4].replace("New York", "Delaware")
    new = paged(["0. Definitions. Terms have the meaning given.", *edited], per_page=1)  # clause 5 on p. 6
    redline = compare(old, new)
    definitions = "0. Definitions. Terms have the meaning given."
    kinds = [(c.kind, c.old_words, c.new_words, c.old_at.cited(), c.new_at.cited()) for c in redline.changes]
    assert kinds == [
        ("clause inserted", (), tuple(definitions.split()), "p. 1", "p. 1"),
        ("changed", ("New", "York."), ("Delaware.",), "p. 3", "p. 6"),
    ]


def test_a_moved_clause_is_one_move_not_a_deletion_and_an_insertion() -> None:
    order = [0, 1, 3, 4, 2]  # clause 3 goes to the end, edited on the way
    moved = [CLAUSES[k] for k in order]
    moved[4] = moved[4].replace("five years", "seven years")
    redline = compare(paged(CLAUSES, per_page=1), paged(moved, per_page=1))
    summary = [(c.kind, c.clause, c.old_at.cited(), c.new_at.cited()) for c in redline.changes]
    assert summary == [
        ("moved", "3 Confidentiality", "p. 3", "p. 5"),
        ("changed", "3 Confidentiality", "p. 3", "p. 5"),
    ]
    assert redline.changes[1].old_words == ("five",) and redline.changes[1].new_words == ("seven",)
    assert rebuilt(redline) == words_of(paged(moved))


def test_deleting_a_clause_and_renumbering_the_next() -> None:
    new = [CLAUSES[0], CLAUSES[1], CLAUSES[3].replace("4.", "3.", 1), CLAUSES[4].replace("5.", "4.", 1)]
    redline = compare(paged(CLAUSES, per_page=1), paged(new, per_page=1))
    assert [(c.kind, c.old_words[:2], c.new_words, c.old_at.cited(), c.new_at.cited()) for c in redline.changes] == [
        ("clause deleted", ("3.", "Confidentiality."), (), "p. 3", "p. 2"),
        ("renumbered", ("4.",), ("3.",), "p. 4", "p. 3"),
        ("renumbered", ("5.",), ("4.",), "p. 5", "p. 4"),
    ]


def test_dropping_any_one_change_breaks_the_rebuild() -> None:
    edited = [c.replace("thirty (30)", "sixty (60)").replace("two (2)", "three (3)") for c in CLAUSES[1:]]
    new = paged([*edited[:2], CLAUSES[0], *edited[2:], "6. Notices. Notices are given in writing."])
    redline = compare(paged(CLAUSES), new)
    assert rebuilt(redline) == words_of(new)
    assert len(redline.changes) >= 3
    for k in range(len(redline.changes)):
        fewer = dataclasses.replace(redline, changes=redline.changes[:k] + redline.changes[k + 1 :])
        with contextlib.suppress(ValueError):  # a change others depend on: the rebuild refuses, also a failure
            assert rebuilt(fewer) != words_of(new)


def test_document_text_cannot_inject_markdown() -> None:
    old = version([(1, "1. Links. Visit the site.")])
    new = version([(1, "1. Links. Visit [the site](http://evil.example) <img src=x> **now**.")])
    text = to_markdown(compare(old, new))
    assert not re.search(r"(?<!\\)\]\(", text) and not re.search(r"(?<!\\)<img", text)
    assert r"\[the" in text and r"\<img" in text and r"\*\*now\*\*." in text


_WORDS = st.sampled_from(["the", "Seller", "shall", "pay", "$100", "within", "30", "days.", "(a)", "Buyer"])
_CLAUSE = st.lists(_WORDS, min_size=2, max_size=12).map(" ".join)


@given(
    old=st.lists(_CLAUSE, min_size=1, max_size=8),
    new=st.lists(_CLAUSE, max_size=4),
    order=st.permutations(range(8)),
    dropped=st.sets(st.integers(min_value=0, max_value=7), max_size=3),
    numbered=st.booleans(),
    per_page=st.integers(min_value=1, max_value=3),
)
def test_any_two_versions_rebuild_exactly(
    old: list[str], new: list[str], order: list[int], dropped: set[int], numbered: bool, per_page: int
) -> None:
    """Old clauses reordered, some dropped, new ones inserted, everything renumbered (or not numbered)."""

    def number(texts: list[str]) -> list[str]:
        return [f"{k}. {t}" if numbered else t for k, t in enumerate(texts, start=1)]

    kept = [old[k] for k in order if k < len(old) and k not in dropped]
    before, after = paged(number(old), per_page), paged(number(kept[:2] + new + kept[2:]) or ["1. Nothing left."])
    redline = compare(before, after)
    # A short clause alone on each of 3+ pages is a running header by the rules tested above.
    assert rebuilt(redline) == fold(" ".join(b.text for b in body_blocks(after))).split()
    assert accepted(tracked_paragraphs(redline)) == rebuilt(redline)  # the .docx export's tracked text
    for change in redline.changes:
        assert 1 <= change.old_at.first <= change.old_at.last <= before.page_count
        assert 1 <= change.new_at.first <= change.new_at.last <= after.page_count


@pytest.mark.parametrize("same", [True, False])
def test_a_version_without_text_is_refused_in_one_line(same: bool) -> None:
    from app.compare.versions import version_from_document
    from app.errors import FolioError
    from ingest.document import Document, Page

    empty = Document("pdf", "scan", "0" * 64, "/tmp/scan.pdf", 1, "application/pdf", pages=[Page(1, "1", 10, 10)])
    with pytest.raises(FolioError, match="has no text to compare"):
        version_from_document(empty)


def test_two_word_files_are_compared_by_clause_with_clause_anchors(tmp_path: Path) -> None:
    """Any format Folio reads: two .docx versions, a reviewer's comment in the new one (not a change)."""
    import docx

    from app.compare.versions import version_from_document
    from ingest.load import load

    def write(name: str, clauses: list[str], comment: bool = False) -> Path:
        document = docx.Document()
        document.add_heading("Supply agreement", level=1)
        for text in clauses:
            paragraph = document.add_paragraph(text)
            if comment and text.startswith("2."):
                document.add_comment(paragraph.runs[0], text="Too short?", author="Dana Lawyer", initials="DL")
        document.save(str(tmp_path / name))
        return tmp_path / name

    new_clauses = [CLAUSES[0], CLAUSES[2], CLAUSES[1].replace("thirty (30)", "sixty (60)"), *CLAUSES[3:]]
    old = version_from_document(load(write("old.docx", CLAUSES)))
    new = version_from_document(load(write("new.docx", new_clauses, comment=True)))
    redline = compare(old, new)
    assert [(c.kind, c.old_words, c.new_words, c.old_at.cited(), c.new_at.cited()) for c in redline.changes] == [
        ("moved", (), (), "¶ 3", "¶ 4"),  # typed numbers: Word's paragraph numbers (the heading is ¶ 1)
        ("changed", ("thirty", "(30)"), ("sixty", "(60)"), "¶ 3", "¶ 4"),
    ]


def test_places_are_cited_as_folio_cites_elsewhere() -> None:
    from app.compare.changes import Place

    assert Place("page", 3, 3).cited() == "p. 3"
    assert Place("page", 3, 4, "iii", "iv").cited() == "pp. iii-iv"
    assert Place("paragraph", 7, 7, "4.2").cited() == "§ 4.2"  # a Word list number printed on the paragraph
    assert Place("paragraph", 7, 7).cited() == "¶ 7"
    assert Place("paragraph", 7, 9).cited() == "¶ 7-9"


@given(
    a=st.lists(st.sampled_from(["the", "Buyer", "pays.", "within", "30", "days;", "(a)", "Seller:"]), max_size=60),
    b=st.lists(st.sampled_from(["the", "Buyer", "pays.", "within", "60", "days;", "(b)", "Seller:"]), max_size=60),
)
def test_long_clauses_compared_sentence_first_still_give_every_word(a: list[str], b: list[str]) -> None:
    from unittest import mock

    from app.compare import word_diff

    with mock.patch.object(word_diff, "LONG", 8):  # sentence-first for all but the shortest
        ops = word_diff.word_opcodes(a, b)
    rebuilt: list[str] = []
    at_a = at_b = 0
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (at_a, at_b)  # contiguous on both sides, nothing skipped
        rebuilt += a[i1:i2] if tag == "equal" else b[j1:j2]
        assert tag != "equal" or a[i1:i2] == b[j1:j2]
        at_a, at_b = i2, j2
    assert (at_a, at_b) == (len(a), len(b)) and rebuilt == b


def test_a_heading_on_its_own_line_stays_above_its_clause_in_the_redline() -> None:
    """'7. Governing Law' printed above the clause's text is the clause's heading (it has no full stop),
    and the redline and its export show it on its own line, as the document does, not run into the text."""
    own_line = [
        "1. Parties\nThis Agreement is made between Acme Inc. and Beta LLC.",
        "2. Governing Law\nThis Agreement is governed by the laws of the State of Delaware.",
    ]
    changed = [own_line[0], own_line[1].replace("Delaware", "New York")]
    redline = compare(paged(own_line), paged([*changed, "3. Notices\nNotices must be in writing."]))
    assert redline.old_heads == (2, 3) and redline.new_heads == (2, 3, 2)
    assert [c.clause for c in redline.changes] == ["2 Governing Law", "3 Notices"]
    paragraphs = tracked_paragraphs(redline)
    assert [p.kind for p in paragraphs[1]][:3] == ["same", "break", "same"]
    assert paragraphs[1][0].text == "2. Governing Law"
    assert [(p.kind, p.text) for p in paragraphs[2]] == [
        ("inserted", "3. Notices"), ("break", ""), ("inserted", "Notices must be in writing."),
    ]  # fmt: skip
    assert accepted(paragraphs) == rebuilt(redline)  # the break is layout, never a word
    # A run-in heading ('1. Term. This Agreement ...') stays run in.
    assert compare(paged(CLAUSES), paged(CLAUSES)).old_heads == (0, 0, 0, 0, 0)

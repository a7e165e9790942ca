"""Which redline changes a summary mentions (app/compare/mentions.py), on sentences grounded for real
against two small versions, and where the rest land: under "Other changes" in the Markdown."""

from __future__ import annotations

import dataclasses

from app.citations.grounding import Sources, ground_answer
from app.compare.markdown import to_markdown
from app.compare.mentions import mentioned
from app.compare.redline import Redline, compare
from app.compare.summary import Part, Summary, change_groups, change_line, pages_of, sentences
from tests.unit.test_compare import CLAUSES, paged

NEW = [
    CLAUSES[0].replace("two (2) years", "three (3) years"),
    CLAUSES[1].replace("12,500", "15,000"),
    CLAUSES[2],
    CLAUSES[3],
    CLAUSES[4].replace("New York", "Delaware"),
]


def redline() -> Redline:
    return compare(paged(CLAUSES), paged(NEW))  # pages: clauses 1-2 on p. 1, 3-4 on p. 2, 5 on p. 3


def said(answer: str) -> frozenset[int]:
    """The changes this answer mentions, its citations read and checked as a chat answer's are."""
    old = Sources.from_pages([" ".join(CLAUSES[0:2]), " ".join(CLAUSES[2:4]), CLAUSES[4]])
    new = Sources.from_pages([" ".join(NEW[0:2]), " ".join(NEW[2:4]), NEW[4]])
    both = Sources(
        [*old.units, *(dataclasses.replace(u, doc_index=2) for u in new.units)],
        [*old.indexes, *new.indexes],
        [None, None],
    )
    return mentioned(redline().changes, sentences(answer, ground_answer(answer, both)))


def test_a_change_is_mentioned_when_one_sentence_cites_its_page_and_names_its_words() -> None:
    changes = redline().changes
    assert [c.kind for c in changes] == ["changed", "changed", "changed"]
    assert said('- The fee rose from "12,500" to "15,000" US dollars [D1 p. 1] [D2 p. 1].') == {1}
    # Digits count whatever their formatting; a cite of either version is enough.
    assert said("- The monthly fee is now 15000 dollars [D2 p. 1].") == {1}
    assert said("- Governing law moved from New York to Delaware [D1 p. 3].") == {2}


def test_a_page_alone_or_a_word_alone_is_not_a_mention() -> None:
    # The term and the fee share page 1: citing it names neither change.
    assert said("- Several terms on this page were updated [D1 p. 1] [D2 p. 1].") == frozenset()
    assert said("- The law is now Delaware.") == frozenset()  # no page cited
    assert said("- The law is now Delaware [D2 p. 1].") == frozenset()  # the wrong page
    # The page number of a citation is not the changed number '3' of 'three (3) years'.
    assert said("- The term changed [D2 p. 3].") == frozenset()


def test_changes_not_mentioned_are_listed_under_other_changes() -> None:
    lines = redline()
    written = Summary(
        "test model",
        False,
        "",
        (Part("", "## Other changes\n- The fee rose to 15,000 [D2 p. 1].", [], (0, 1, 2)),),
        frozenset({1}),
    )
    text = to_markdown(lines, written)
    assert text.count("\n## Other changes") == 1  # the model's own headings stay text
    other = text[text.index("## Other changes") : text.index("## The complete redline")]
    assert "2 of the 3 changes are not mentioned above" in other
    listed = [line for line in other.splitlines() if line.startswith("- **")]
    assert len(listed) == 2 and "three" in listed[0] and "Delaware" in listed[1]
    assert text.index("## Summary of the material changes") < text.index("## Other changes")


def test_the_model_reads_each_change_with_anchors_it_can_cite_and_groups_keep_their_pages() -> None:
    lines = redline()
    assert change_line(lines.changes[1]) == (
        '- clause 2 Fees, changed: was "shall pay a monthly fee of 12,500 US dollars within thirty (30) '
        'days." [D1 p. 1]; now "shall pay a monthly fee of 15,000 US dollars within thirty (30) '
        'days." [D2 p. 1]'
    )
    groups = change_groups(lines)
    assert [ks for _, ks in groups] == [(0,), (1,), (2,)]
    assert pages_of(lines, (2,), 7, 8) == {7: {3}, 8: {3}}

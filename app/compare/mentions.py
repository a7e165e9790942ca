"""Which redline changes a written summary mentions, so that every other one is listed by itself.

A change counts as mentioned when one sentence of the summary does both:
- cites a page the change is on: the old version's page ([D1 p. 3]) or the new version's ([D2 p. 4]);
- names the change itself: one of the words it deletes or inserts (numbers compared digit for digit,
  '$800,000.00' ~ '800,000'; other words as stems, 'terminates' ~ 'termination'), or, for a change to a
  whole clause (moved, inserted, deleted, renumbered), its clause number or a word of its heading.

Either alone is not enough: a page citation covers every change on that page, and a word such as
'Texas' may belong to another change. When in doubt a change is not mentioned, so it is listed under
"Other changes": listing a change twice costs a line, hiding one costs the reader the change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.citations.grounding import content_stems
from app.compare.changes import Change, Place

OLD_DOC, NEW_DOC = 1, 2  # the summary's documents: D1 is the old version, D2 the new one
WHOLE_CLAUSE = frozenset({"moved", "clause inserted", "clause deleted", "renumbered"})
_NUMBER_RE = re.compile(r"\d[\d,.]*")


@dataclass(frozen=True)
class Sentence:
    """One sentence of the summary: its words, and the pages it cites as (document, page)."""

    text: str
    cited: frozenset[tuple[int, int]]


def change_terms(change: Change) -> frozenset[str]:
    """What naming this change means: its changed words (a whole clause: its number and heading)."""
    if change.kind in WHOLE_CLAUSE:
        terms = terms_of(change.clause)
        if change.kind == "renumbered":
            terms |= terms_of(" ".join(change.old_words + change.new_words))
        return terms
    return terms_of(" ".join(change.old_words + change.new_words))


def terms_of(text: str) -> frozenset[str]:
    """A text's numbers (digits only, without trailing zero cents) and its meaningful words, stemmed."""
    numbers = {_digits(n) for n in _NUMBER_RE.findall(text)}
    return frozenset({n for n in numbers if n} | set(content_stems(text)))


def _digits(number: str) -> str:
    number = number.rstrip(".,")
    if re.search(r"\.0{1,2}$", number):
        number = number[: number.rindex(".")]
    return re.sub(r"\D", "", number)


def _on(place: Place, doc: int, cited: frozenset[tuple[int, int]]) -> bool:
    return any((doc, page) in cited for page in range(place.first, place.last + 1))


def mentions(change: Change, sentence: Sentence) -> bool:
    cites_it = _on(change.old_at, OLD_DOC, sentence.cited) or _on(change.new_at, NEW_DOC, sentence.cited)
    return cites_it and bool(change_terms(change) & terms_of(sentence.text))


def mentioned(changes: Sequence[Change], sentences: Iterable[Sentence]) -> frozenset[int]:
    """Indexes of the changes some sentence mentions."""
    listed = list(sentences)
    return frozenset(k for k, change in enumerate(changes) if any(mentions(change, s) for s in listed))

"""A value the document must call by its name: an effective date is a date the contract calls effective.

Measured with the 1.5B on CUAD (issue 19): asked for the effective date of a contract that names
none, the model gives the date the contract was made; asked for a renewal term or a notice period
where nothing renews, it gives the initial term or another notice; asked for the governing law of a
contract without that clause, the law a party is organised under. CUAD's experts mark a value only
where the contract states it as such. So a template field may name the words (`named_by`) a sentence
of the document must use for the value to count as stated: the value's date or duration with one of
those words at most NEAR words away ('entered into effective January 1, 2010'; not 'effective on the
Effective Date, ... as defined in the Sales Dealer Agreement dated as of August 16, 2017', another
agreement's date), or, for a value without one, its names (else its words) and one of those words in
the same sentence. A value no such sentence holds becomes "not stated", flagged, and the model's answer
stays in the cell (and its raw record) for a reviewer.

A yes/no clause is judged present on the clause the model quotes; measured on 7 CUAD categories, it
called 68 of 70 present, quoting a passage about something else (an insurance clause as the audit
right, the preamble as a cap on liability). Its `named_by` words are those the clause itself must use
('insur' for insurance): a quote without one leaves the clause absent, flagged.

A short answer the document does call so, but whose quote is another passage (CHIPMOS: 'Taiwan',
quoted from the preamble's addresses on p. 1, where the governing-law clause is on p. 4), opens on
the sentence that calls it so: that sentence becomes the cell's evidence, grounded as any quote,
flagged, and the model's own quote stays in the cell's raw record.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from app.citations import normalise
from app.citations.grounding import QUOTED, SUPPORTED, Sources, content_stems, sentence_bounds
from app.citations.quotes import DEFAULT_THRESHOLD
from app.extraction.cells import EVIDENCE_FLAGS, MOVED, NOT_NAMED, Cell, grounded_cell
from app.extraction.templates import TemplateField

_WORD_RE = re.compile(r"[^\W\d_]+")
_NAME_RE = re.compile(r"[^\W\d_][\w'’-]*")
_FACT_KINDS = ("date", "duration")
MAX_EVIDENCE_CHARS = 600  # a longer "sentence" is a page without full stops: no evidence to point at
NEAR = 8  # words between the name and the value: "made this first day of July, 2017 (the “Effective Date”)" is 2


def named_words(named_by: str) -> list[str]:
    """The field's words, lower case; each also stands for the words that start with it."""
    return [w.lower() for w in _WORD_RE.findall(named_by)]


def uses_word(text: str, words: Sequence[str]) -> bool:
    return any(t.startswith(w) for t in (m.lower() for m in _WORD_RE.findall(text)) for w in words)


def named_in(texts: Iterable[str], value: str, words: Sequence[str]) -> bool:
    """Does one sentence of these texts hold the value and one of the words?"""
    return naming_sentence(texts, value, words) is not None


def naming_sentence(texts: Iterable[str], value: str, words: Sequence[str]) -> tuple[int, int, int] | None:
    """(text index, start, end) of the first sentence that holds the value and one of the words. A
    value with a date or a duration is matched by its first one ('1 July 2017' in 'made this first
    day of July, 2017 (the "Effective Date")'); any other value by its words."""
    fact = next((f for f in normalise.find_facts(value) if f.kind in _FACT_KINDS), None)
    for index, text in enumerate(texts):
        for start, end in sentence_bounds(text):
            sentence = text[start:end]
            if not uses_word(sentence, words):
                continue
            if fact is not None:
                stated = [f for f in normalise.find_facts(sentence) if normalise.fact_found(fact, [f])]
                if any(_near(sentence, f.start, f.end, words) for f in stated):
                    return index, start, end
            elif _names_held(sentence, value):
                return index, start, end
    return None


def _names_held(sentence: str, value: str) -> bool:
    """The value's names (its capitalised words, else all its content words) stand in the sentence, by
    stem: 'Ohio law' in '... construed in accordance with Ohio' (the page ends there), 'indefinite' in
    '... and indefinitely after that'."""
    names = [w for w in _NAME_RE.findall(value) if w[0].isupper()]
    wanted = content_stems(" ".join(names) if names else value)
    have = set(content_stems(sentence))
    return bool(wanted) and all(w in have for w in wanted)


def _near(sentence: str, start: int, end: int, words: Sequence[str]) -> bool:
    """One of the words stands at most NEAR words before or after sentence[start:end]."""
    for match in _WORD_RE.finditer(sentence):
        if not uses_word(match.group(), words):
            continue
        between = sentence[match.end() : start] if match.end() <= start else sentence[end : match.start()]
        if (match.start() < end and match.end() > start) or len(between.split()) <= NEAR:
            return True
    return False


def named_or_not_stated(cell: Cell, field: TemplateField, texts: Sequence[str]) -> Cell:
    """The cell as it is when the document calls its value by the field's words (a yes/no clause: when
    the clause the model quoted uses one of them), else "not stated" (a clause: absent), flagged: the
    model's value, evidence and page stay in the cell for a reviewer to see."""
    words = named_words(field.named_by)
    if not cell.found or not words:
        return cell
    if uses_word(cell.quote, words) if field.yes_no else named_in(texts, cell.value, words):
        return cell
    value = "no" if field.yes_no else cell.value
    return dataclasses.replace(cell, found=False, value=value, verdict="", passage="", flags=(*cell.flags, NOT_NAMED))


def with_naming_evidence(
    cell: Cell, field: TemplateField, sources: Sources, threshold: float = DEFAULT_THRESHOLD
) -> Cell:
    """A short answer whose quote does not call it by the field's words, with the sentence that does
    as its evidence (when that sentence grounds it as quoted or supported); else the cell as it is."""
    words = named_words(field.named_by)
    if field.yes_no or not cell.found or not words or named_in([cell.quote], cell.value, words):
        return cell
    found = naming_sentence([u.text for u in sources.units], cell.value, words)
    if found is None:
        return cell
    index, start, end = found
    unit = sources.units[index]
    sentence = " ".join(unit.text[start:end].split())
    if len(sentence) > MAX_EVIDENCE_CHARS:
        return cell
    flags = (*(f for f in cell.flags if f not in EVIDENCE_FLAGS), MOVED)
    cited = unit.label or str(unit.page)
    moved = grounded_cell(cell.document_id, field, cell.value, cell.value, sentence, cited, sources, flags, threshold)
    return moved if moved.verdict in (QUOTED, SUPPORTED) else cell

"""A playbook review as a report (Markdown, which the PDF is typeset from) and as the edits a .docx export
tracks: the contract's own text, paragraph by paragraph, with each proposed edit in place.

An edit replaces the clause a finding quotes (found in the paragraph that holds it, on its page first)
with the playbook's standard wording: the clause tracked as deleted, the wording as inserted. The quote is
often a fragment of a sentence and the wording whole sentences, so the edit takes the whole sentence(s)
holding the quote, never more than its paragraph: accepting every change reads as clean text, rejecting
every change gives the paragraph back as it was, character for character (the pieces carry their own
spacing; a clause removed without wording takes the space that separated it with it). Findings whose
sentences overlap (two rules quoting one sentence) change it once: one deletion, then each finding's
wording inserted in the findings' order, each its own change with its own comment, so accepting all never
writes the sentence's replacement twice and rejecting all never deletes it twice. A paragraph removed
whole has its paragraph mark tracked as deleted too (the .docx writer's part), so accepting all leaves no
empty paragraph where it was. A clause
that is missing, or whose words Folio cannot place in one paragraph, is proposed as an inserted paragraph
after the contract's text, and its comment says so. The layout is app.compare.tracked's (pieces that are
the same, inserted or deleted, each numbered by its change), so the .docx writer is the redline's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.compare.tracked import Paragraph, Piece
from app.playbook.book import Rule
from app.playbook.review import Finding, PlaybookReview
from app.playbook.values import VERDICT_TEXT, VERDICTS


@dataclass(frozen=True)
class TextBlock:
    """One paragraph of the contract as stored (a segment's text) and its page."""

    page: int | None
    text: str


@dataclass(frozen=True)
class Edits:
    paragraphs: list[Paragraph]  # the contract's text with the edits placed in it, then the added clauses
    comments: dict[int, str]  # change number -> its comment: the rule and the reason
    placed: int  # edits placed on the clause they change
    unplaced: int  # edits whose quoted clause Folio could not find in the text: proposed after it
    shared: dict[int, int] = field(default_factory=dict)  # a removal with no revision of its own -> the
    # change whose deletion it shares (two findings removing one sentence): its comment marks that deletion


@dataclass
class _Span:
    """Sentences of one paragraph that one or more findings change: deleted once, then each finding's
    wording inserted in the findings' order."""

    start: int
    end: int
    changes: list[int]


def comment_text(rule: Rule, finding: Finding, *, placed: bool = True, also: Sequence[str] = ()) -> str:
    where = f" ({finding.where})" if finding.where else ""
    unplaced = "" if placed else f" Folio could not place the clause{where} in the text: the wording is proposed here."
    shared = ""
    if also:
        shared = (f" The same sentence is also changed for {', '.join(also)}: it is deleted once, and each "
                  "finding's wording is inserted after it in turn.")  # fmt: skip
    return f"{rule.name}: {finding.verdict_text}. {finding.reason} Position: {rule.position}{unplaced}{shared}"


def tracked_edits(review: PlaybookReview, blocks: Sequence[TextBlock]) -> Edits:
    blocks = [TextBlock(b.page, b.text.strip()) for b in blocks]
    found: dict[int, list[tuple[int, int, int]]] = {}  # block -> (start, end, change) of the sentence(s)
    comments: dict[int, str] = {}
    added: list[Paragraph] = []
    proposals = review.proposed()
    for change, (rule, finding) in enumerate(proposals):
        spot = _locate(finding, blocks) if finding.quote else None
        if spot is not None:
            found.setdefault(spot[0], []).append((spot[1], spot[2], change))
            continue
        comments[change] = comment_text(rule, finding, placed=finding.quote == "")
        if rule.proposed_wording:
            added.append([Piece("inserted", rule.proposed_wording.strip(), change)])
    paragraphs: list[Paragraph] = []
    shared: dict[int, int] = {}
    for index, block in enumerate(blocks):
        wordings = {c: proposals[c][0].proposed_wording.strip() for _s, _e, c in found.get(index, [])}
        spans = _spans(block.text, found.get(index, []), wordings)
        for span in spans:
            for change in span.changes:
                rule, finding = proposals[change]
                also = [proposals[c][0].name for c in span.changes if c != change]
                comments[change] = comment_text(rule, finding, also=also)
                if change != span.changes[0] and not wordings[change]:
                    shared[change] = span.changes[0]
        paragraphs.append(_edited(block.text, spans, wordings))
    placed = sum(len(v) for v in found.values())
    unplaced = sum(1 for _rule, f in proposals if f.quote) - placed  # a missing clause has no place to find
    return Edits(paragraphs + added, comments, placed, unplaced, shared)


def _spans(text: str, found: list[tuple[int, int, int]], wordings: dict[int, str]) -> list[_Span]:
    """The findings' sentence spans in one paragraph, overlapping ones made one (two findings quoting
    one sentence change it once, not twice). A span only removed, without wording, takes the space that
    separated it (after it, or before it at the paragraph's end) so the sentences around still read apart;
    removals with only spaces between them are one span first, so they do not both take that space."""
    spans: list[_Span] = []
    for start, end, change in sorted(found):
        if spans and start < spans[-1].end:
            spans[-1].end = max(spans[-1].end, end)
            spans[-1].changes.append(change)
        else:
            spans.append(_Span(start, end, [change]))
    for span in spans:
        span.changes.sort()  # the findings' order, which is the playbook's

    def removal(span: _Span) -> bool:
        return not any(wordings[c] for c in span.changes)

    joined: list[_Span] = []
    for span in spans:
        last = joined[-1] if joined else None
        if last and removal(last) and removal(span) and not text[last.end : span.start].strip():
            joined[-1] = _Span(last.start, span.end, sorted(last.changes + span.changes))
        else:
            joined.append(span)
    for span in joined:
        if removal(span):
            after = len(text) - len(text[span.end :].lstrip())
            if after < len(text):
                span.end = after
            else:
                span.start = len(text[: span.start].rstrip())
    return joined


def _edited(text: str, spans: list[_Span], wordings: dict[int, str]) -> Paragraph:
    """The paragraph's text with each span deleted (under its first finding's change) and the wordings
    inserted after it, one change each, a space before every wording but the first."""
    pieces: Paragraph = []
    at = 0
    for span in spans:
        pieces.append(Piece("same", text[at : span.start]))
        pieces.append(Piece("deleted", text[span.start : span.end], span.changes[0]))
        inserted = [c for c in span.changes if wordings[c]]
        for n, change in enumerate(inserted):
            pieces.append(Piece("inserted", (" " if n else "") + wordings[change], change))
        at = span.end
    pieces.append(Piece("same", text[at:]))
    return [p for p in pieces if p.text]


def accepted_text(paragraph: Paragraph) -> str:
    """The paragraph with every change accepted (pieces written with their own spacing)."""
    return "".join(p.text for p in paragraph if p.kind in ("same", "inserted"))


def rejected_text(paragraph: Paragraph) -> str:
    """The paragraph with every change rejected: the contract's text as it was."""
    return "".join(p.text for p in paragraph if p.kind in ("same", "deleted"))


def _locate(finding: Finding, blocks: Sequence[TextBlock]) -> tuple[int, int, int] | None:
    """(block, start, end) of the whole sentence(s) holding the quoted clause (its words in order, any
    spacing or case; its page first)."""
    words = finding.quote.split()
    if not words:
        return None
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    order = sorted(range(len(blocks)), key=lambda i: blocks[i].page != finding.page)
    for i in order:
        match = pattern.search(blocks[i].text)
        if match:
            return (i, *sentence_span(blocks[i].text, match.start(), match.end()))
    return None


# A sentence ends at . ! or ? (and any closing quote or bracket) before a space and a capital, a digit or
# an opening quote or bracket; or at a blank line. Not after an abbreviation that is followed by a capital
# or a number in contracts ('No. 5', 'Sec. 3', 'e.g. Delaware', 'U.S. law'): company suffixes ('Inc.',
# 'Ltd.') are left out, as before a capital they usually end the sentence.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9])|\n[ \t]*\n")
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "st", "no", "nos", "sec", "secs", "art", "arts", "para", "paras", "cl", "sch", "ex",
    "exh", "fig", "p", "pp", "vs", "v", "cf", "viz", "approx", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec",
})  # fmt: skip
_HEADING_WORDS = 8  # a first line this short, with no punctuation at its end, is the paragraph's heading


def _sentence_ends(text: str) -> list[int]:
    """Offsets where a sentence of the paragraph ends (before the space that follows it)."""
    ends: list[int] = []
    first, _, rest = text.partition("\n")
    if rest[:1].isupper() and _heading(first):
        ends.append(len(first))  # '9. Law' on its own line: a heading, not the start of the sentence below
    for match in _SENTENCE_END.finditer(text):
        if match.group()[0] in ".!?":
            before = text[: match.start()].rsplit(None, 1)
            word = before[-1] if before else ""
            if word.lower() in _ABBREVIATIONS or ("." in word and any(c.isalpha() for c in word)):  # not '9.1.'
                continue
            ends.append(match.end())
        else:
            ends.append(match.start())
    return sorted(ends)


def _heading(line: str) -> bool:
    """A short line in title case with nothing to end it ('9. Law', 'Limitation of Liability'), not the
    first line of a wrapped sentence ('This Agreement is governed by')."""
    words = line.split()
    return (0 < len(words) <= _HEADING_WORDS and line.rstrip()[-1] not in ".,;:!?"
            and all(w[0].isupper() or not w[0].isalpha() for w in words if len(w) > 3))  # fmt: skip


def sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole sentence(s) of `text` (one paragraph) holding text[start:end]: from the start of the
    sentence where it begins to the end of the one where it ends, without the spaces around."""
    ends = _sentence_ends(text)
    begin = max((e for e in ends if e <= start), default=0)
    finish = min((e for e in ends if e >= end), default=len(text))
    begin = len(text) - len(text[begin:].lstrip())
    return begin, len(text[:finish].rstrip())


# -- the report ------------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _confidence(f: Finding) -> str:
    if f.confidence is None:
        return "not scored"
    from app.extraction.decide import confidence_word

    return f"{f.confidence:.0%} ({confidence_word(f.confidence)})"


def markdown(review: PlaybookReview) -> str:
    book = review.playbook
    counts = review.counts()
    lines = [
        f"# Playbook review: {review.title}",
        "",
        f"- Playbook: {book.name} ({book.key}, version {book.version}, sha256 {book.sha256[:16]})",
        f"- Document: {review.title} (sha256 {review.sha256})",
        f"- Model: {review.model} (sha256 {review.model_sha256[:16]}), extraction run {review.run_id}",
        f"- Reviewed: {review.created_at}" + (f", matter {review.matter}" if review.matter else ""),
        "- Verdicts: " + ", ".join(f"{counts[v]} {VERDICT_TEXT[v]}" for v in VERDICTS if counts[v]),
    ]
    proposed = review.proposed()
    carried = "the accepted findings" if review.reviewed else "every finding that falls short (none reviewed yet)"
    lines += [f"- Proposed edits: {len(proposed)}, for {carried}", ""]
    lines += [
        "| # | Rule | Verdict | Where | Check | Confidence | Reason |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    rules = {r.key: r for r in book.rules}
    for n, f in enumerate(review.findings, start=1):
        row = [str(n), rules[f.rule_key].name, f.verdict_text, f.where or "-", f.grounding or "-", _confidence(f),
               f.reason]  # fmt: skip
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    lines.append("")
    for n, f in enumerate(review.findings, start=1):
        rule = rules[f.rule_key]
        lines += [f"## {n}. {rule.name}: {f.verdict_text}", "", f"Position: {rule.position}", "", f"Reason: {f.reason}"]
        if f.quote:
            check = f", {f.grounding}" if f.grounding else ""
            lines += ["", f"Clause ({f.where or 'page unknown'}{check}):", "", "> " + " ".join(f.quote.split())]
        if rule.value_rule and f.value and f.value not in ("yes", "no"):
            read = f"; Folio read {f.read_value}" if f.read_value else ""
            lines += ["", f"The model read: {' '.join(f.value.split())}{read}."]
        decided = f", decided by {f.decided_by}" if f.decided_by else ""
        lines += ["", f"Confidence: {_confidence(f)}{decided}."]
        if f.decision:
            note = f" ({f.note})" if f.note else ""
            lines += ["", f"Reviewer: {f.decision}{note}."]
        if f.short and (rule.proposed_wording or rule.kind == "absent"):
            wording = rule.proposed_wording or "(remove the clause)"
            lines += ["", "Proposed wording:", "", "> " + wording]
        lines.append("")
    return "\n".join(lines)

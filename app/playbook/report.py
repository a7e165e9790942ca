"""A playbook review as a report (Markdown, which the PDF is typeset from) and as the edits a .docx export
tracks: the contract's own text, paragraph by paragraph, with each proposed edit in place.

An edit replaces the clause a finding quotes (found in the paragraph that holds it, on its page first)
with the playbook's standard wording: the clause tracked as deleted, the wording as inserted. A clause
that is missing, or whose words Folio cannot place in one paragraph, is proposed as an inserted paragraph
after the contract's text, and its comment says so. The layout is app.compare.tracked's (pieces that are
the same, inserted or deleted, each numbered by its change), so the .docx writer is the redline's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


def comment_text(rule: Rule, finding: Finding, *, placed: bool = True) -> str:
    where = f" ({finding.where})" if finding.where else ""
    unplaced = "" if placed else f" Folio could not place the clause{where} in the text: the wording is proposed here."
    return f"{rule.name}: {finding.verdict_text}. {finding.reason} Position: {rule.position}{unplaced}"


def tracked_edits(review: PlaybookReview, blocks: Sequence[TextBlock]) -> Edits:
    texts = [b.text for b in blocks]
    cuts: dict[int, list[tuple[int, int, int]]] = {}  # block -> (start, end, change)
    comments: dict[int, str] = {}
    added: list[Paragraph] = []
    proposals = review.proposed()
    for change, (rule, finding) in enumerate(proposals):
        spot = _locate(finding, blocks) if finding.quote else None
        if spot is not None and not any(s < spot[2] and spot[1] < e for s, e, _ in cuts.get(spot[0], [])):
            cuts.setdefault(spot[0], []).append((spot[1], spot[2], change))
            comments[change] = comment_text(rule, finding)
            continue
        comments[change] = comment_text(rule, finding, placed=finding.quote == "")
        if rule.proposed_wording:
            added.append([Piece("inserted", rule.proposed_wording, change)])
    paragraphs: list[Paragraph] = []
    for index, text in enumerate(texts):
        pieces: Paragraph = []
        at = 0
        for start, end, change in sorted(cuts.get(index, [])):
            pieces.append(Piece("same", text[at:start].strip()))
            pieces.append(Piece("deleted", text[start:end].strip(), change))
            wording = proposals[change][0].proposed_wording
            if wording:
                pieces.append(Piece("inserted", wording, change))
            at = end
        pieces.append(Piece("same", text[at:].strip()))
        paragraphs.append([p for p in pieces if p.text])
    placed = sum(len(v) for v in cuts.values())
    unplaced = sum(1 for _rule, f in proposals if f.quote) - placed  # a missing clause has no place to find
    return Edits(paragraphs + added, comments, placed, unplaced)


def _locate(finding: Finding, blocks: Sequence[TextBlock]) -> tuple[int, int, int] | None:
    """(block, start, end) of the quoted clause: words in order, any spacing or case; its page first."""
    words = finding.quote.split()
    if not words:
        return None
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
    order = sorted(range(len(blocks)), key=lambda i: blocks[i].page != finding.page)
    for i in order:
        match = pattern.search(blocks[i].text)
        if match:
            return i, match.start(), match.end()
    return None


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

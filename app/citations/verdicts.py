"""The words for a claim's verdict, the same in the window, the CLI and the exports.

Each verdict says what was checked and nothing more (app/citations/grounding.py decides them): a mark to
put after the sentence, a one-paragraph explanation for the tooltip, and a count line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from app.citations.grounding import ADDED, ELSEWHERE_NOTE, EXEMPT, PARTLY, QUOTED, SUPPORTED, UNSUPPORTED, WRONG_PAGE
from ingest.document import format_timestamp

LABELS = {
    QUOTED: "quoted",
    SUPPORTED: "supported",
    WRONG_PAGE: "wrong page",
    ADDED: "source added by Folio",
    PARTLY: "partly supported",
    UNSUPPORTED: "unsupported",
    EXEMPT: "no source needed",
}
GLYPHS = {QUOTED: "✓", SUPPORTED: "✓", WRONG_PAGE: "⚠", ADDED: "+", PARTLY: "◐", UNSUPPORTED: "✗", EXEMPT: "○"}
# Exempt claims that get no mark at all: nothing in them is a statement about the documents.
SILENT = frozenset({"heading", "courtesy", "citation only"})
ORDER = (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, PARTLY, UNSUPPORTED, EXEMPT)


def where(claim: dict[str, Any], documents: int = 1) -> str:
    """Where the support is, as the documents print it: 'p. 4', 'D2 p. 4', 't 00:01:23', '§ 12.3',
    'attachment 1, p. 2' ('' for nowhere)."""
    doc = f"D{claim.get('doc_index')} " if documents > 1 and claim.get("doc_index") else ""
    if claim.get("place"):
        return f"{doc}{claim['place']}"
    if claim.get("t_seconds") is not None:
        return f"{doc}t {format_timestamp(float(claim['t_seconds']))}"
    if claim.get("page") is None:
        return ""
    return f"{doc}p. {claim.get('label') or claim['page']}"


def mark(claim: dict[str, Any], documents: int = 1) -> str | None:
    """The short mark after a sentence ('✓ quoted p. 4', '⚠ found on p. 7', '+ added by Folio: p. 7'), or
    None. Each says its verdict in words: the symbol and the colour only repeat it (a screen reader
    reads the words)."""
    verdict = claim.get("verdict")
    at = where(claim, documents)
    if verdict == EXEMPT:
        return None if claim.get("reason") in SILENT else "○ not checked"
    if verdict == QUOTED:
        return f"✓ quoted {at}"
    if verdict == SUPPORTED:
        return f"✓ supported {at}"
    if verdict == WRONG_PAGE:
        return f"⚠ found on {at}"
    if verdict == ADDED:
        return f"+ added by Folio: {at}"
    if verdict == PARTLY:
        lacking = [m.removesuffix(ELSEWHERE_NOTE) for m in claim.get("missing") or []]
        return f"◐ partly {at}" + (f"; not found: {_listed(lacking[:2])}" if lacking else "")
    return "✗ unsupported"


def _listed(items: Sequence[str]) -> str:
    shown = [f"“{i}”" for i in items[:6]]
    return ", ".join(shown) + (f" and {len(items) - 6} more" if len(items) > 6 else "")


def explain(claim: dict[str, Any], documents: int = 1) -> str:
    """What was checked for this claim, in plain words (the tooltip, the export's note)."""
    verdict = claim.get("verdict")
    at = where(claim, documents)
    cited = ", ".join(claim.get("cited") or []) or "nothing"
    facts = list(claim.get("checked") or [])
    holds = f"its facts ({_listed(facts)}) and most of its words" if facts else "most of its words"
    quote = claim.get("quote")
    misquote = (
        " The words it quotes were not found verbatim in the document."
        if quote and claim.get("quote_found") is False
        else ""
    )
    if verdict == QUOTED:
        return f"Quoted: the quoted words were found on {at}, the page the answer cites, next to {holds}."
    if verdict == SUPPORTED:
        how = "" if quote else " The answer quotes nothing, so its wording was not compared."
        return f"Supported: {at}, which the answer cites, holds {holds}.{how}{misquote}"
    if verdict == WRONG_PAGE:
        found = "the quoted words and " if claim.get("quote_found") else ""
        return f"Wrong page: the answer cites {cited}, which does not hold this; {found}{holds} are on {at}.{misquote}"
    if verdict == ADDED:
        return (
            f"Source added by Folio: the answer cites nothing for this sentence; Folio found {holds} on {at}. "
            f"The page is Folio's finding, not the model's.{misquote}"
        )
    if verdict == PARTLY:
        missing = list(claim.get("missing") or [])
        nowhere = [m for m in missing if not m.endswith(ELSEWHERE_NOTE)]
        apart = [m.removesuffix(ELSEWHERE_NOTE) for m in missing if m.endswith(ELSEWHERE_NOTE)]
        held = [c for c in facts if c not in {m.removesuffix(ELSEWHERE_NOTE) for m in missing}]
        found = f"“{'”, “'.join(held[:4])}”" if held else "part of it"
        said = [f"Partly supported: {at} holds {found} and enough of the sentence's words."]
        if nowhere:
            said.append(f"Not in the document at all: {_listed(nowhere)}.")
        if apart:
            said.append(f"Elsewhere in the document, not with the rest: {_listed(apart)}.")
        return " ".join(said) + misquote
    if verdict == UNSUPPORTED:
        missing = list(claim.get("missing") or [])
        why = f" Not in the document at all: {_listed(missing)}." if missing else ""
        bad = " The cited page is not in the document." if claim.get("reason") == "no_such_page" else ""
        return (
            f"Unsupported: no page of the document holds this sentence's facts and words together "
            f"(cited: {cited}).{why}{bad}{misquote}"
        )
    reason = claim.get("reason")
    if reason == "not_checkable":
        return (
            f"Not checked: the answer cites {at}, a video frame; Folio cannot read what a frame shows. Click to see it."
        )
    if reason == "nothing to check":
        return "Not checked: the sentence holds no fact, name or enough words to look for in the document."
    if reason == "absence":
        return "Not checked: this says the documents do not contain something; Folio does not check absences."
    return "No source needed: a heading or a courtesy, not a statement about the documents."


def counts(claims: Sequence[dict[str, Any]]) -> Counter[str]:
    return Counter(str(c.get("verdict")) for c in claims if c.get("verdict") != EXEMPT or mark(c) is not None)


def summary(claims: Sequence[dict[str, Any]]) -> str:
    """'2 quoted · 1 supported · 1 unsupported': the counts of an answer's verdicts, in a fixed order."""
    found = counts(claims)
    parts = []
    for verdict in ORDER:
        if found.get(verdict):
            label = "not checked" if verdict == EXEMPT else LABELS[verdict]
            parts.append(f"{found[verdict]} {label}")
    return " · ".join(parts)

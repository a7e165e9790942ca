"""Is a quoted passage really in the source? Exact after normalization, or close enough (fuzzy).

Normalization (normalize_for_match) folds what differs between a PDF's text layer
and a model's copy: ligatures, curly quotes, dashes, line-end hyphenation, case and whitespace.
What survives that is compared fuzzily, so an OCR slip or a dropped space still verifies, but a
changed number or an added or dropped negation never does: those flip the meaning of a clause.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_THRESHOLD = 0.9  # similarity (0..1) of the quote to its best window in the source
MIN_QUOTE_CHARS = 3  # shorter quotes prove nothing
MIN_FUZZY_CHARS = 20  # shorter quotes must match exactly: a few characters are too easy to hit by chance

_FOLD = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "\u00ad": None})
_WORD_RE = re.compile(r"[^\W_]+")
_NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "without", "except", "unless", "none", "nothing"})


def normalize_for_match(text: str) -> str:
    """Fold what differs between a PDF's text layer and a model's quote: ligatures, quotes, dashes,
    hyphenation at line ends, case and whitespace."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = text.translate(_FOLD)
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class QuoteMatch:
    status: str  # 'exact' | 'fuzzy' | 'not_found' | 'empty'
    score: float  # 1.0 for exact, the similarity for fuzzy, the best similarity seen otherwise
    unit: int | None = None  # index of the unit (page, time slot) that holds it

    @property
    def verified(self) -> bool:
        return self.status in ("exact", "fuzzy")


def critical_tokens(normalized: str) -> Counter[str]:
    """Words whose change flips the meaning: numbers (in digits or words) and negations. These must match exactly."""
    from app.citations.normalise import NUMBER_WORDS

    return Counter(
        w for w in _WORD_RE.findall(normalized) if w in _NEGATIONS or w in NUMBER_WORDS or any(c.isdigit() for c in w)
    )


def _expand_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    # Only a window cut mid-word grows: one that starts or ends on a space must not take in the
    # neighbouring word, or a number beside the quote would fail the critical-token check.
    if start < len(text) and text[start].isalnum():
        while start > 0 and text[start - 1].isalnum():
            start -= 1
    if end > 0 and text[end - 1].isalnum():
        while end < len(text) and text[end].isalnum():
            end += 1
    return start, end


def similarity(quote_norm: str, text_norm: str) -> tuple[float, str]:
    """Best similarity (0..1) of the normalized quote to a window of the normalized text, and that window."""
    from rapidfuzz import fuzz

    if not quote_norm or not text_norm:
        return 0.0, ""
    if quote_norm in text_norm:
        return 1.0, quote_norm
    if len(quote_norm) > len(text_norm):
        return fuzz.ratio(quote_norm, text_norm) / 100.0, text_norm
    found = fuzz.partial_ratio_alignment(quote_norm, text_norm)
    if found is None:
        return 0.0, ""
    start, end = _expand_to_words(text_norm, found.dest_start, found.dest_end)
    return found.score / 100.0, text_norm[start:end]


def _match_normalized(quote_norm: str, text_norm: str, threshold: float) -> tuple[str, float]:
    if quote_norm in text_norm:
        return "exact", 1.0
    if len(quote_norm) < MIN_FUZZY_CHARS:
        return "not_found", 0.0
    score, window = similarity(quote_norm, text_norm)
    if score >= threshold and critical_tokens(quote_norm) == critical_tokens(window):
        return "fuzzy", score
    return "not_found", score


def quote_in(quote: str, text: str, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """True when the quote is in the text, exactly or fuzzily (see the module docstring)."""
    needle = normalize_for_match(quote)
    if len(needle) < MIN_QUOTE_CHARS:
        return False
    return _match_normalized(needle, normalize_for_match(text), threshold)[0] != "not_found"


def find_quote(
    quote: str, units: Sequence[str], preferred: Sequence[int] = (), threshold: float = DEFAULT_THRESHOLD
) -> QuoteMatch:
    """Find a quote in a document given as units (page texts, in order). Preferred units (the
    ones the model cited) are tried first, so a quote repeated on several pages is placed where
    the model said it was. A quote running over a page break is attributed to its first page."""
    needle = normalize_for_match(quote)
    if len(needle) < MIN_QUOTE_CHARS:
        return QuoteMatch("empty", 0.0)
    texts = [normalize_for_match(u) for u in units]
    order = [i for i in preferred if 0 <= i < len(texts)]
    order += [i for i in range(len(texts)) if i not in order]
    for i in order:
        if needle in texts[i]:
            return QuoteMatch("exact", 1.0, i)
    for i in range(len(texts) - 1):
        if needle in f"{texts[i]} {texts[i + 1]}":
            return QuoteMatch("exact", 1.0, i)
    best = QuoteMatch("not_found", 0.0)
    if len(needle) < MIN_FUZZY_CHARS:
        return best
    for i in order:
        status, score = _match_normalized(needle, texts[i], threshold)
        if status == "fuzzy" and (not best.verified or score > best.score):
            best = QuoteMatch("fuzzy", score, i)
        elif not best.verified and score > best.score:
            best = QuoteMatch("not_found", score)
    return best

"""Which page supports a claim? Grounding, independent of what the model says about itself.

The public API (used for answer sentences here, and meant for extraction cells too):

    sources = Sources.load(ctx, document_ids)            # or Sources.from_pages(["page 1 text", ...])
    result = sources.ground("The agreement is governed by Texas law.",
                            cited=(Cited(page=5),), quote=None, context="")
    result.verdict   # QUOTED | SUPPORTED | WRONG_PAGE | ADDED | UNSUPPORTED | EXEMPT
    result.page, result.label, result.t_seconds, result.passage   # where the support is
    ground_answer(answer_text, sources)  -> AnswerGrounding    # its citations, and every claim's verdict

What each verdict claims (and nothing more):
- QUOTED: the claim's quoted words were found (exactly, or fuzzily with every number and negation
  intact: app/citations/quotes.py) on a page the answer cites, and the claim's facts are in the passage there.
- SUPPORTED: a cited page holds a passage with all of the claim's facts (dates, amounts, durations,
  percents, numbers, names) and enough of its other words, weighted by how rare they are in the
  document (how much is enough depends on how specific the facts are), and no other page holds
  it clearly better.
- WRONG_PAGE: the answer cites a page that does not hold this, but another page does (page = that one).
- ADDED: the answer cites nothing; Folio found a page that supports it (page = Folio's, not the model's).
- PARTLY: no page holds the whole claim, but one passage holds some of its facts or names (a date, a
  party) with enough of its words, and the rest was not found there (`missing` says what, and whether
  it is anywhere in the document): "The agreement was made on March 14, 2012, as stated in
  Exhibit A" where p. 1 has the date and no page has an Exhibit A. The page is where the found part
  stands (the cited one when it holds it).
- UNSUPPORTED: no page holds the claim's facts: some were not found anywhere near each other.
- EXEMPT: needs no source (a heading, a courtesy, a statement that the documents do not say something).

Candidates come from SQLite FTS5 (BM25) over the documents' stored segments, from the pages holding
the claim's facts, and from the cited pages; each candidate page is then aligned passage by passage
(one to three of its sentences; a passage may run over a page break). Words are compared as
Snowball stems, with a short list of words contracts use for the same thing ('expires' ~ 'through').
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from app.citations.claims import Claim, exemption, split_claims
from app.citations.markers import Citation, DocumentIndex, check, find_citations
from app.citations.normalise import Fact, fact_found, find_facts
from app.citations.quotes import normalize_for_match
from ingest.document import Anchor, AnchorUnit, unit_of

if TYPE_CHECKING:
    from app.context import AppContext

QUOTED = "quoted"
SUPPORTED = "supported"
WRONG_PAGE = "wrong_page"
ADDED = "added"
PARTLY = "partly"
UNSUPPORTED = "unsupported"
EXEMPT = "exempt"
VERDICTS = (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, PARTLY, UNSUPPORTED, EXEMPT)
# A verdict that names a page holding the claim (PARTLY: the part of it that was found).
FOUND = (QUOTED, SUPPORTED, WRONG_PAGE, ADDED, PARTLY)
ELSEWHERE_NOTE = " (elsewhere in the document, not with the rest)"  # a missing part another page holds

# Share of the claim's content words (weighted by rarity) a passage must hold, with and without
# facts or names that the passage holds too. Calibrated on CUAD contracts (benchmarks/bench_grounding.py).
COVERAGE_WITH_FACTS = 0.5
COVERAGE_WORDS_ONLY = 0.75
COVERAGE_ONE_SPECIFIC = 0.34  # a full date or an amount found says much by itself
COVERAGE_TWO_SPECIFIC = 0.25  # two of them in one passage rarely meet by chance
MIN_WORDS_ONLY = 3  # a claim with no fact or name needs this many content words to be checked at all
CANDIDATE_SEGMENTS = 40
MAX_WINDOW_WORDS = 90
GENERIC_SHARE = 0.25
PAGE_BREAK_CHARS = 400  # how much of the next page a passage may run into
CROSSING_WEIGHT = 0.8
# The cited page keeps the claim unless another page supports it clearly better than this.
CITED_MARGIN = 0.15

# Words that carry no fact. Not "state": "the State of Texas" names a law.
_STOPWORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "doing", "down", "during", "each", "either", "few", "for", "from", "further", "had", "has",
    "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "itself", "just", "may", "me", "might", "more", "most", "must", "my", "myself",
    "neither", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
    "ourselves", "out", "over", "own", "same", "shall", "she", "should", "so", "some", "such", "than", "that",
    "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
    "to", "too", "under", "up", "upon", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "within", "would", "you", "your", "yours", "yourself",
    "yourselves", "hereby", "herein", "hereof", "hereunder", "thereof", "therein", "whereas", "per", "via",
    "according", "accordance", "answer", "document", "documents", "text", "page", "pages", "p", "pp", "stated",
    "says", "say", "said", "mentioned", "mentions", "mention", "provides", "provided", "provide", "specified",
    "specifies", "indicate", "indicates", "indicated", "question", "based", "following", "follows", "given",
    "require", "requires", "required", "need", "needs", "needed"
})  # fmt: skip
_MONTH_NAMES = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"
})  # fmt: skip  # dates are facts: their month is not a name
# Capitalized, but not names: a document's structure ('Section 7') and dates' months (dates are facts).
_NOT_NAMES = _MONTH_NAMES | {"section", "sections", "clause", "clauses", "article", "articles", "page", "paragraph"}
_HAS_DIGIT = re.compile(r"\d").search
_WORD_RE = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*")
_NEGATIONS = frozenset({"not", "no", "never", "neither", "nor", "without", "none", "cannot"})
_SENTENCE_RE = re.compile(r"(?<=[.;:!?])\s+(?=[\"“(]?[A-Z0-9])|\n\s*\n|\n(?=\s*(?:\(?[a-z0-9]{1,3}[.)]|[A-Z][A-Z]))")
_QUOTED_RE = re.compile(r"[\"“]([^\"“”]{12,600})[\"”]")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


# Words contracts and answers use for the same thing, by stem: each maps to the first of its group.
# A small hand-kept list for the clauses people ask about most (term, renewal, notice, law, parties).
_SAME = (
    ("agreement", "contract"),
    ("renew", "extend", "extens"),
    ("expir", "expiri", "termin", "end", "cancel", "through", "until"),  # when something stops
    ("commenc", "start", "begin", "effect"),  # when it starts
    ("date", "made", "enter", "execut", "sign"),  # when it was made
    ("notic", "notifi", "notif"),
    ("govern", "construe", "constru", "interpret"),
    ("law", "juris"),
    ("pay", "paid", "payabl"),
)
_SYNONYM = {word: group[0] for group in _SAME for word in group}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    stemmed = str(_stemmer().stemWord(word.lower().replace("’", "'").removesuffix("'s")))
    return _SYNONYM.get(stemmed, stemmed)


def content_stems(text: str) -> list[str]:
    """The claim's meaningful words, stemmed: no stopwords, no numbers (those are facts)."""
    out = []
    for word in _WORD_RE.findall(normalize_for_match(text)):
        if word in _STOPWORDS or len(word) < 2 or _HAS_DIGIT(word):
            continue
        out.append(stem(word))
    return out


def names_in(text: str) -> list[str]:
    """Names and defined terms, stemmed: capitalized words not opening a sentence (or written in
    capitals, or followed by another capitalized word), and words in quotation marks."""
    found: list[str] = []
    words = list(re.finditer(r"[A-Za-z][\w&'’.-]*", text))
    for i, match in enumerate(words):
        word = match.group().rstrip(".'’-")
        lowered = word.lower()
        if len(word) < 2 or not word[0].isupper() or lowered in _STOPWORDS or lowered in _NOT_NAMES:
            continue
        before = text[: match.start()].rstrip(' \t*_"“(')
        opens = not before or before[-1] in ".!?:\n|-•" or before.endswith(("**", "#"))
        follows = i + 1 < len(words) and words[i + 1].group()[0].isupper() and words[i + 1].start() - match.end() <= 2
        if opens and not (word.isupper() and len(word) > 1) and not follows:
            continue
        # A hyphenated name ('Non-Competition') is two words in a passage's stems: look for both.
        found.extend(content_stems(word) if "-" in word else [stem(word)])
    return found


# -- the documents -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Unit:
    """One citable stretch of one document: a page, the text stored for a video time, or a paragraph
    of a Word, text or e-mail document (page = its paragraph number, label = its clause number)."""

    doc_index: int  # 1-based, in the order the documents were given
    document_id: int | None
    page: int | None
    label: str | None
    t_seconds: float | None
    text: str
    unit: AnchorUnit = "page"
    attachment: int | None = None  # a part of this e-mail's attachment (document_id is the attachment's)

    @property
    def where(self) -> str:
        return place(self.page, self.label, self.t_seconds, self.unit, self.attachment)


def place(
    page: int | None,
    label: str | None,
    t_seconds: float | None,
    unit: AnchorUnit = "page",
    attachment: int | None = None,
) -> str:
    """Where a unit is, as the model cites it: 'p. 4', 't 00:01:23', '§ 12.3', '¶ 41', 'attachment 1, p. 2'."""
    return Anchor(page=page, label=label, t_seconds=t_seconds, unit=unit, attachment=attachment).cited()


@dataclass(frozen=True)
class _Window:
    unit: int
    start: int
    end: int
    stems: frozenset[str]
    facts: tuple[Fact, ...]
    negated: bool
    crosses: bool  # runs into the next page


@dataclass(frozen=True)
class Cited:
    """Where the model said a claim comes from: a resolved page or paragraph (None when the cited one
    does not exist) or a time, in document doc_index (1-based), or in that e-mail's attachment."""

    doc_index: int = 1
    page: int | None = None
    t_seconds: float | None = None
    text: str = ""
    attachment: int | None = None

    @classmethod
    def from_citation(cls, c: Citation) -> list[Cited]:
        if c.kind == "time":
            return [cls(c.doc_index, None, c.t_seconds if c.valid else None, c.text, c.attachment)]
        if not c.pages:
            return [cls(c.doc_index, None, None, c.text, c.attachment)]
        return [cls(c.doc_index, p, None, c.text, c.attachment) for p in c.pages]


@dataclass(frozen=True)
class Grounding:
    verdict: str
    doc_index: int | None = None  # where the support is (None: nowhere)
    document_id: int | None = None
    page: int | None = None
    label: str | None = None
    t_seconds: float | None = None
    passage: str = ""  # the supporting words as the page has them (what the viewer highlights)
    score: float = 0.0
    quote: str | None = None
    quote_found: bool | None = None  # None: nothing quoted
    checked: tuple[str, ...] = ()  # the facts and names looked for, as written in the claim
    missing: tuple[str, ...] = ()  # those no single passage held (for UNSUPPORTED)
    reason: str = ""  # why EXEMPT, or 'no_such_page' / 'not_checkable'
    cited: tuple[str, ...] = ()  # the model's citations as written
    place: str = ""  # where the support is, as cited: 'p. 4', '§ 12.3', 'attachment 1, p. 2' ('' for nowhere)

    @property
    def where(self) -> str:
        return self.place

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    grounding: Grounding
    citations: tuple[int, ...] = ()  # indexes into the answer's citations that belong to this claim

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.claim.start,
            "end": self.claim.end,
            "kind": self.claim.kind,
            "text": self.claim.text,
            "citations": list(self.citations),
            **self.grounding.to_dict(),
        }


def document_indexes(ctx: AppContext, document_ids: Sequence[int]) -> list[DocumentIndex]:
    """What the citation checks need of each document (an e-mail's attachments included): its page
    labels, length, page text and clauses."""
    library = ctx.library
    indexes = []
    for doc_id in document_ids:
        index = document_index(ctx, doc_id)
        for attachment in library.attachments(doc_id):
            if attachment.document_id is not None:
                index.attachments[attachment.position] = document_index(ctx, attachment.document_id)
        indexes.append(index)
    return indexes


def document_index(ctx: AppContext, doc_id: int) -> DocumentIndex:
    library = ctx.library
    doc = library.get(doc_id)
    return DocumentIndex(
        label_to_page=library.page_labels(doc_id),
        page_count=doc.page_count,
        duration_s=doc.duration_s,
        page_text=functools.partial(library.page_text, doc_id),
        document_id=doc_id,
        unit=unit_of(doc.kind),
        clause_paragraphs=functools.partial(library.clause_paragraphs, doc_id),
    )


@dataclass
class Sources:
    """The selected documents as grounding reads them."""

    units: list[Unit]
    indexes: list[DocumentIndex]
    document_ids: list[int | None]  # library ids, in doc_index order (None for documents given as text)
    # (query terms) -> indexes into `units`, best first: FTS5 over the stored segments, when loaded from a library
    search: Callable[[list[str]], list[int]] | None = None
    _windows: list[_Window] = field(default_factory=list)
    _by_unit: dict[int, list[int]] = field(default_factory=dict)
    _idf: dict[str, float] = field(default_factory=dict)
    _doc_stems: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        df: Counter[str] = Counter()
        for u, unit in enumerate(self.units):
            text = self._reach(u)
            facts = find_facts(text)
            bounds = sentence_bounds(text)
            # Each sentence is read once; a passage's words are its sentences' words.
            words = [frozenset(content_stems(text[s:e])) for s, e in bounds]
            negations = [bool(_NEGATIONS & set(normalize_for_match(text[s:e]).split())) for s, e in bounds]
            for i, j in _windows_of(text, bounds):
                start, end = bounds[i][0], bounds[j][1]
                if start >= len(unit.text):
                    break  # a passage that starts on the next page belongs to that page
                stems = frozenset().union(*words[i : j + 1])
                inside = tuple(f for f in facts if start <= f.start < end)
                negated = any(negations[i : j + 1])
                self._by_unit.setdefault(u, []).append(len(self._windows))
                self._windows.append(_Window(u, start, end, stems, inside, negated, end > len(unit.text)))
                df.update(stems)
        n = max(len(self._windows), 1)
        # A word in more than a quarter of the passages ('agreement' in a contract) tells nothing
        # about where a claim stands: it weighs nothing. Rarer words weigh more the rarer they are.
        floor = math.log(1 + 1 / GENERIC_SHARE)
        self._idf = {s: max(0.0, math.log(1 + n / c) - floor) for s, c in df.items()}
        # A word no page has is often the model's paraphrase ('starts' for 'commence'): it weighs as
        # much as a typical word of the document, not as much as the rarest.
        weights = [w for w in self._idf.values() if w > 0]
        self._unseen_idf = sum(weights) / len(weights) if weights else 1.0
        self._doc_stems = set(df)

    def _reach(self, u: int) -> str:
        """A page's text and the opening of the next page of the same document: a clause that runs
        over a page break is one passage, attributed to the page where it starts."""
        unit = self.units[u]
        after = self.units[u + 1] if u + 1 < len(self.units) else None
        if (
            after is None
            or (after.doc_index, after.attachment) != (unit.doc_index, unit.attachment)
            or unit.page is None
            or after.page != unit.page + 1
        ):
            return unit.text
        return f"{unit.text}\n{after.text[:PAGE_BREAK_CHARS]}"

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def from_pages(cls, pages: Sequence[str], labels: Sequence[str] | None = None) -> Sources:
        """One document given as its pages' texts (page 1 first): for tests and callers without a library."""
        units = [
            Unit(1, None, i, labels[i - 1] if labels else str(i), None, text) for i, text in enumerate(pages, start=1)
        ]
        by_label = {u.label or str(u.page): u.page or 0 for u in units}
        index = DocumentIndex(by_label, len(pages), None, lambda p: pages[p - 1] if 1 <= p <= len(pages) else "")
        return cls(units, [index], [None])

    @classmethod
    def load(cls, ctx: AppContext, document_ids: Sequence[int]) -> Sources:
        library = ctx.library
        units: list[Unit] = []
        where: dict[tuple[int, int | None, float | None], int] = {}
        # Each document, then each of an e-mail's attachments that was read: its parts are cited as
        # '[attachment 1, p. 2]' of the e-mail, so they carry the e-mail's doc_index.
        parts = [
            (doc_index, part_id, attachment)
            for doc_index, doc_id in enumerate(document_ids, start=1)
            for part_id, attachment in [
                (doc_id, None),
                *((a.document_id, a.position) for a in library.attachments(doc_id) if a.document_id is not None),
            ]
        ]
        read: set[int] = set()
        for doc_index, doc_id, attachment in parts:
            if doc_id in read:  # an attachment also selected on its own: its units once, where first met
                continue
            read.add(doc_id)
            unit = unit_of(library.get(doc_id).kind)
            for seg in library.segments(doc_id):
                if not seg.text:
                    continue
                text = _readings(seg.text)
                key = (doc_id, seg.page, seg.t_seconds)
                if key in where:
                    u = where[key]
                    units[u] = replace(units[u], text=f"{units[u].text}\n{text}")
                else:
                    where[key] = len(units)
                    units.append(Unit(doc_index, doc_id, seg.page, seg.label, seg.t_seconds, text, unit, attachment))
        ids = list(read)

        def search(terms: list[str]) -> list[int]:
            from app.store.search import Search, fts_query

            query = " OR ".join(fts_query(t) for t in dict.fromkeys(terms) if fts_query(t))
            places = Search(ctx.db).segment_places(query, ids, limit=CANDIDATE_SEGMENTS)
            return list(dict.fromkeys(where[k] for k in places if k in where))

        return cls(units, document_indexes(ctx, list(document_ids)), list(document_ids), search)

    # -- grounding -----------------------------------------------------------------------------
    def anywhere(self, text: str) -> bool:
        """Do the documents hold this text somewhere: each of its dates and durations, in any wording,
        or, with none, each of its content words (by stem)? Nothing to look for counts as held."""
        facts = [f for f in find_facts(text) if f.kind in ("date", "duration")]
        if facts:
            return all(any(fact_found(f, list(w.facts)) for w in self._windows) for f in facts)
        return set(content_stems(text)) <= self._doc_stems

    def unit_of(
        self, doc_index: int, page: int | None, t_seconds: float | None, attachment: int | None = None
    ) -> int | None:
        """The unit a citation points at: the page (or paragraph), or the stretch shown at that time
        (the last one starting at or before it)."""
        found = None
        for i, unit in enumerate(self.units):
            if unit.doc_index != doc_index or unit.attachment != attachment:
                continue
            if page is not None and unit.page == page and unit.t_seconds is None:
                return i
            if t_seconds is not None and unit.t_seconds is not None and unit.t_seconds <= t_seconds + 0.5:
                found = i
        return found

    def ground(
        self, text: str, *, cited: Sequence[Cited] = (), quote: str | None = None, context: str = ""
    ) -> Grounding:
        """Ground one claim (an answer sentence, an extraction cell's value) against these documents."""
        written = tuple(dict.fromkeys(c.text for c in cited if c.text))
        cited_units = [
            u for c in cited if (u := self.unit_of(c.doc_index, c.page, c.t_seconds, c.attachment)) is not None
        ]
        timed = [c for c in cited if c.t_seconds is not None]
        if timed and not cited_units:
            # A video moment with no text stored for it: what the frame shows is not Folio's to check.
            first = timed[0]
            doc_id = self.document_ids[first.doc_index - 1] if 1 <= first.doc_index <= len(self.document_ids) else None
            at = place(None, None, first.t_seconds)
            return Grounding(EXEMPT, doc_index=first.doc_index, document_id=doc_id, t_seconds=first.t_seconds,
                             reason="not_checkable", cited=written, place=at)  # fmt: skip
        bad_anchor = bool(cited) and not cited_units
        facts = find_facts(text)
        words = _blank(text, [(f.start, f.end) for f in facts])  # a fact's words are checked as the fact
        names = list(dict.fromkeys(names_in(words)))
        stems = list(dict.fromkeys(content_stems(f"{words} {context}")))
        checked = tuple(text[f.start : f.end] for f in facts) + tuple(_name_words(text, names))
        if not facts and not names and len(stems) < MIN_WORDS_ONLY:
            return Grounding(EXEMPT, reason="nothing to check", cited=written)
        claim = _Need(facts, names, stems, _NEGATIONS & set(normalize_for_match(text).split()) != set())
        quote_found: bool | None = None
        if quote:
            from app.citations.quotes import find_quote

            order = list(dict.fromkeys(cited_units))
            match = find_quote(quote, [u.text for u in self.units], order)
            quote_found = match.verified
            if match.verified and match.unit is not None:
                best = self._best_in(claim, [match.unit], quote=quote)
                if best is not None:
                    verdict = QUOTED if match.unit in cited_units else WRONG_PAGE if cited else ADDED
                    return self._result(verdict, best, quote, quote_found, checked, written)
        candidates = self._candidates(claim, cited_units, text)
        on_cited = self._best_in(claim, list(dict.fromkeys(cited_units)))
        elsewhere = self._best_in(claim, [u for u in candidates if u not in cited_units])
        if on_cited is not None and (elsewhere is None or elsewhere[1] <= on_cited[1] + CITED_MARGIN):
            return self._result(SUPPORTED, on_cited, quote, quote_found, checked, written)
        if elsewhere is not None:
            verdict = WRONG_PAGE if cited else ADDED
            return self._result(verdict, elsewhere, quote, quote_found, checked, written)
        partly = self._partly(claim, text, facts, names, cited_units, candidates, written, quote, quote_found, checked)
        if partly is not None:
            return partly
        missing = self._missing(claim, text, facts, names)
        reason = "no_such_page" if bad_anchor else ""
        return Grounding(
            UNSUPPORTED, quote=quote, quote_found=quote_found, checked=checked, missing=missing, reason=reason,
            cited=written,
        )  # fmt: skip

    def _candidates(self, claim: _Need, cited_units: list[int], text: str) -> list[int]:
        found: list[int] = list(dict.fromkeys(cited_units))
        if self.search is not None:
            terms = [w for w in _WORD_RE.findall(text) if w.lower() not in _STOPWORDS and len(w) > 2]
            terms += [text[f.start : f.end] for f in claim.facts]
            found += self.search(terms)
        else:
            found += range(len(self.units))
        # Facts are matched by value, not spelling, so FTS5 may miss '29/3/18' for 'March 29, 2018'.
        for w in self._windows:
            if claim.facts and all(fact_found(f, list(w.facts)) for f in claim.facts):
                found.append(w.unit)
        return list(dict.fromkeys(found))

    def _best_in(self, claim: _Need, units: Sequence[int], quote: str | None = None) -> tuple[_Window, float] | None:
        """The best supporting passage among these units: the highest score; on a tie the earlier page
        (a document states a fact where it first defines it), then the shorter passage."""
        best: tuple[_Window, float] | None = None
        quote_stems = set(content_stems(quote)) if quote else set()
        for u in sorted(set(units)):
            for w in self._by_unit.get(u, []):
                window = self._windows[w]
                score = self._score(claim, window, quote_stems)
                if score is None or best is None:
                    best = best if score is None else (window, score)
                    continue
                shorter = window.end - window.start < best[0].end - best[0].start
                if score > best[1] + 1e-9 or (abs(score - best[1]) <= 1e-9 and shorter):
                    best = (window, score)
        return best

    def _score(self, claim: _Need, window: _Window, bonus: set[str]) -> float | None:
        """The window's support for the claim (0..1+), or None when it does not support it."""
        for f in claim.facts:
            if not fact_found(f, list(window.facts)):
                return None
        if any(n not in window.stems for n in claim.names):
            return None
        if claim.negated and not window.negated:
            return None
        weights = {s: self._idf.get(s, self._unseen_idf) for s in claim.stems}
        total = sum(weights.values())
        held = set(window.stems) | bonus
        coverage = sum(w for s, w in weights.items() if s in held) / total if total else 1.0
        specific = sum(1 for f in claim.facts if _specific(f))
        if specific >= 2:
            need = COVERAGE_TWO_SPECIFIC
        elif specific == 1:
            need = COVERAGE_ONE_SPECIFIC
        else:
            need = COVERAGE_WITH_FACTS if claim.facts or claim.names else COVERAGE_WORDS_ONLY
        if coverage < need:
            return None
        # A passage that runs into the next page counts less than one wholly on a page: the fact
        # may stand on the next page alone, and that page is the one to show.
        return round(coverage * (CROSSING_WEIGHT if window.crosses else 1.0), 6)

    def _partly(
        self,
        claim: _Need,
        text: str,
        facts: list[Fact],
        names: list[str],
        cited_units: list[int],
        candidates: list[int],
        written: tuple[str, ...],
        quote: str | None,
        quote_found: bool | None,
        checked: tuple[str, ...],
    ) -> Grounding | None:
        """The passage that holds the most of the claim's facts and names (a telling part of them, not
        all), with enough of its other words; None when no passage holds a telling part (`_telling`:
        a wrong governing law or amount stays unsupported). What it lacks is listed: 'Exhibit A' (in
        no page) or a part that stands elsewhere, apart from the rest."""
        written_names = _name_words(text, names)
        items = len(facts) + len(names)
        if items < 2:
            return None  # one fact or name: found with the claim's words, or not; no part to tell apart
        units = list(dict.fromkeys([*cited_units, *candidates]))
        for passage in self._windows:  # a passage holding any one of the facts, worded any way
            if any(fact_found(f, list(passage.facts)) for f in facts):
                units.append(passage.unit)
        best: tuple[tuple[int, bool, float], _Window, list[Fact], list[str]] | None = None
        for u in dict.fromkeys(units):
            for w in self._by_unit.get(u, []):
                window = self._windows[w]
                held_facts = [f for f in facts if fact_found(f, list(window.facts))]
                held_names = [n for n in names if n in window.stems]
                held = len(held_facts) + len(held_names)
                telling = [n for n in held_names if self._idf.get(n, 0.0) > 0]  # not 'Agreement', 'State'
                if not held or held == items or not _telling(held_facts, telling, facts, names):
                    continue
                lacking = {n for n in names if n not in held_names}
                lacking |= {s for f in facts if f not in held_facts for s in _lead_in(text, f)}
                reduced = _Need(held_facts, held_names, [s for s in claim.stems if s not in lacking], claim.negated)
                score = self._score(reduced, window, set())
                if score is None:
                    continue
                rank = (held, u in cited_units, score)
                if best is None or rank > best[0]:
                    best = (rank, window, held_facts, held_names)
        if best is None:
            return None
        _rank, window, held_facts, held_names = best
        lacking_facts = [f for f in facts if f not in held_facts]
        lacking_names = [(wn, n) for wn, n in zip(written_names, names, strict=False) if n not in held_names]
        missing = [
            text[f.start : f.end]
            + ("" if not any(fact_found(f, list(w.facts)) for w in self._windows) else ELSEWHERE_NOTE)
            for f in lacking_facts
        ]
        missing += [wn + (ELSEWHERE_NOTE if n in self._doc_stems else "") for wn, n in lacking_names]
        found = self._result(PARTLY, (window, best[0][2]), quote, quote_found, checked, written)
        return replace(found, missing=tuple(missing))

    def _missing(self, claim: _Need, text: str, facts: list[Fact], names: list[str]) -> tuple[str, ...]:
        """What no page holds at all (facts, names): the user sees why nothing supports the claim."""
        missing = [text[f.start : f.end] for f in facts if not any(fact_found(f, list(w.facts)) for w in self._windows)]
        missing += [w for w, n in zip(_name_words(text, names), names, strict=False) if n not in self._doc_stems]
        return tuple(missing)

    def _result(
        self,
        verdict: str,
        best: tuple[_Window, float],
        quote: str | None,
        quote_found: bool | None,
        checked: tuple[str, ...],
        written: tuple[str, ...],
    ) -> Grounding:
        window, score = best
        unit = self.units[window.unit]
        text = self._reach(window.unit)
        return Grounding(
            verdict,
            doc_index=unit.doc_index,
            document_id=unit.document_id,
            page=unit.page,
            label=unit.label,
            t_seconds=unit.t_seconds,
            place=unit.where,
            passage=" ".join(text[window.start : window.end].split()),
            score=round(score, 3),
            quote=quote,
            quote_found=quote_found,
            checked=checked,
            cited=written,
        )


def _readings(text: str) -> str:
    """A Word paragraph with tracked changes as it reads with the changes accepted, then as marked
    (what was inserted or deleted, by whom): a claim about either is found; the viewer marks a passage
    of the accepted reading across the change marks."""
    from ingest.word import accepted_text

    accepted = accepted_text(text)
    return text if accepted == text else f"{accepted}\n{text}"


@dataclass(frozen=True)
class _Need:
    """What a supporting passage must hold."""

    facts: list[Fact]
    names: list[str]
    stems: list[str]
    negated: bool


def _specific(fact: Fact) -> bool:
    """A fact that rarely turns up by chance: a full date, an amount, a percent, a section number."""
    if fact.kind == "date":
        return any(None not in r for r in fact.readings)  # type: ignore[operator]
    return fact.kind in ("amount", "percent", "ref")


def _rank(fact: Fact | None) -> int:
    """How much a part of a claim tells: a full date, an amount, a percent or a reference (2), another
    fact (1), a name (0)."""
    if fact is None:
        return 0
    return 2 if _specific(fact) else 1


def _telling(held_facts: list[Fact], held_names: list[str], facts: list[Fact], names: list[str]) -> bool:
    """Is the part of a claim that a passage holds worth marking as found? Only when it holds a specific
    fact or two telling names or more (`held_names`: names rarer than the document's common words), and
    nothing the passage lacks tells more than the best of what it holds:
    'March 14, 2012' found and 'Exhibit A' not (a pointer the model invented) is a telling part; 'State'
    found and 'Nevada' not, or 'Client' and '$15,000' not, is not (the claim's point is what is missing)."""
    if not any(_specific(f) for f in held_facts) and len(held_names) < 2:
        return False
    best = max([_rank(f) for f in held_facts] + [_rank(None) for _ in held_names])
    lacking = [_rank(f) for f in facts if f not in held_facts] + [_rank(None) for n in names if n not in held_names]
    return max(lacking, default=0) <= best


def _lead_in(text: str, fact: Fact) -> list[str]:
    """The stem of the word that introduces a fact ('paragraph' of 'paragraph 1', 'dated' of 'dated May
    1'): a part of the claim that was not found takes its pointer word with it."""
    before = _WORD_RE.findall(text[max(0, fact.start - 40) : fact.start])
    return content_stems(before[-1]) if before else []


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _name_words(text: str, names: list[str]) -> list[str]:
    """The names as written in the claim (for the user), in the order of `names`."""
    written: dict[str, str] = {}
    for match in re.finditer(r"[A-Za-z][\w&'’.-]*", text):
        word = match.group().rstrip(".'’-")
        written.setdefault(stem(word), word)
    return [written.get(n, n) for n in names]


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a page: the unit a claim is matched against."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_RE.finditer(text):
        if text[start : match.start()].strip():
            bounds.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        bounds.append((start, len(text)))
    return bounds or [(0, len(text))]


def _windows_of(text: str, bounds: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Passages of a page as (first, last) sentence: each sentence alone, and with one and two
    sentences after it (a claim may sum up a clause), up to MAX_WINDOW_WORDS words."""
    windows: list[tuple[int, int]] = []
    for i, (s, e) in enumerate(bounds):
        windows.append((i, i))
        words = len(text[s:e].split())
        for j in range(i + 1, min(i + 3, len(bounds))):
            words += len(text[bounds[j][0] : bounds[j][1]].split())
            if words > MAX_WINDOW_WORDS:
                break
            windows.append((i, j))
    return windows


# -- an answer ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnswerGrounding:
    citations: list[Citation]  # as app.citations reads and checks them (stored with the message)
    claims: list[ClaimVerdict]


def ground_answer(answer: str, sources: Sources) -> AnswerGrounding:
    """Every claim of an answer with its verdict. The answer's citations are read and checked
    (app/citations/markers.py) and each goes with the claim it stands in."""
    citations = check(find_citations(answer), sources.indexes)
    claims = split_claims(answer)
    owners: dict[int, list[int]] = {}
    for i, c in enumerate(citations):
        for k, claim in enumerate(claims):
            if claim.start <= c.start < claim.end:
                owners.setdefault(k, []).append(i)
                break
    out: list[ClaimVerdict] = []
    for k, claim in enumerate(claims):
        mine = owners.get(k, [])
        exempt = exemption(claim)
        if exempt is not None:
            out.append(ClaimVerdict(claim, Grounding(EXEMPT, reason=exempt), tuple(mine)))
            continue
        text = _without_citations(claim, [citations[i] for i in mine])
        previous_open = bool(out) and not out[-1].citations and out[-1].grounding.reason not in ("heading", "courtesy")
        if not text.strip(" .,;:-*_()") and previous_open and mine:
            # '[p. 5]' alone after a sentence: the previous claim's citation
            previous = out.pop()
            out.append(_ground(sources, previous.claim, [citations[i] for i in mine], tuple(mine)))
            out.append(ClaimVerdict(claim, Grounding(EXEMPT, reason="citation only"), ()))
            continue
        out.append(_ground(sources, claim, [citations[i] for i in mine], tuple(mine)))
    return AnswerGrounding(citations, out)


def _ground(sources: Sources, claim: Claim, cites: list[Citation], indexes: tuple[int, ...]) -> ClaimVerdict:
    cited = [x for c in cites for x in Cited.from_citation(c)]
    quote = next((c.quote for c in cites if c.quote), None)
    if quote is None:
        inner = _QUOTED_RE.search(claim.text)
        quote = inner.group(1).strip() if inner else None
    text = _without_citations(claim, cites)
    return ClaimVerdict(claim, sources.ground(text, cited=cited, quote=quote, context=claim.context), indexes)


def _without_citations(claim: Claim, cites: list[Citation]) -> str:
    """The claim's words with its citations cut out (their numbers are not facts); a section named in
    prose ('under Section 15.7') stays: its number is one of the claim's facts."""
    text = claim.text
    for c in sorted(cites, key=lambda c: -c.start):
        if c.kind == "section" and c.written == "prose":
            continue
        a, b = c.start - claim.start, c.end - claim.start
        text = text[:a] + " " + text[b:]
    return text

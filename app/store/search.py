"""One search over document text and past conversations: SQLite FTS5, BM25-ranked, with snippets.

A hit carries its anchor (document + page or time; conversation + message) so the window can open
the page and the CLI can print where to look. User input is never passed to FTS5 as syntax: words
are quoted, so 'AND', '"', '*' or '-' in a query are just text. A trailing '*' on a word keeps its
meaning as a prefix search, and "quoted phrases" stay phrases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.errors import FolioError

if TYPE_CHECKING:
    from sqlite_utils import Database

_OPEN, _CLOSE = "\ue010", "\ue011"  # private-use marks around matched words inside snippets
_TOKEN_RE = re.compile(r'"([^"]*)"|(\S+)')
SNIPPET_TOKENS = 16
# Words that say nothing about where a passage is: asked of every question and extraction field.
_STOP = frozenset(
    """a about after all also an and any are as at be before being between both but by can contract could does
    during e each eg either etc for from has have how if in into is it its may must no not of on or other
    party partys party's same such than that the their them then there these they this those to under until
    upon what when whether which who will with within without would usually written top name names own often
    some one make long much take use ends stated kind given""".split()  # noqa: SIM905 (a word list)
)
_CONTENT_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]+")


def content_words(text: str) -> list[str]:
    """The words of a question (or an extraction field) a passage answering it is likely to use:
    lower case, each once, in order, without the words every contract uses."""
    words = _CONTENT_WORD_RE.findall(text)
    return list(dict.fromkeys(w.lower().strip("'-") for w in words if w.lower() not in _STOP and len(w) > 2))


@dataclass(frozen=True)
class Passage:
    """Words of one page that a search found (a stretch of one stored segment)."""

    page: int
    label: str | None
    text: str


@dataclass(frozen=True)
class SearchHit:
    kind: str  # 'document' | 'message'
    score: float  # BM25 (lower is better, as SQLite reports it)
    snippet: str  # plain text
    highlights: tuple[tuple[int, int], ...]  # (start, end) spans of matched words in snippet
    document_id: int | None = None
    title: str = ""
    page: int | None = None
    label: str | None = None
    t_seconds: float | None = None
    conversation_id: int | None = None
    message_id: int | None = None
    role: str | None = None
    document_kind: str = "pdf"  # how its places are cited (pages, or paragraphs in Word/text/e-mail)

    def marked(self, before: str = "[", after: str = "]") -> str:
        """The snippet with each highlight wrapped, e.g. for a terminal."""
        out, last = [], 0
        for start, end in self.highlights:
            out += [self.snippet[last:start], before, self.snippet[start:end], after]
            last = end
        out.append(self.snippet[last:])
        return "".join(out)

    @property
    def anchor(self) -> str:
        if self.kind == "message":
            return f"conversation {self.conversation_id}, message {self.message_id}"
        from ingest.document import Anchor, unit_of

        unit = unit_of(self.document_kind)
        label = self.label if unit == "paragraph" or (self.label and self.label != str(self.page)) else None
        cited = Anchor(page=self.page, label=label, t_seconds=self.t_seconds, unit=unit).cited()
        return f"#{self.document_id} {cited}"


def fts_query(text: str) -> str:
    """Turn what a user typed into a safe FTS5 query: every term quoted, all terms required."""
    terms: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        phrase, word = match.group(1), match.group(2)
        if phrase is not None:
            if phrase.strip():
                terms.append('"' + phrase.replace('"', "").strip() + '"')
            continue
        prefix = word.endswith("*") and len(word.strip("*")) >= 2
        word = word.replace('"', "").strip("*")
        if re.search(r"\w", word):
            terms.append(f'"{word}"' + ("*" if prefix else ""))
    return " ".join(terms)


def fts_query_of(text: str) -> str:
    """fts_query, refusing in one line a query that holds no word."""
    query = fts_query(text)
    if not query:
        raise FolioError("type a word to search for")
    return query


def _split_marks(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    length = 0
    start = -1
    for ch in marked:
        if ch == _OPEN:
            start = length
        elif ch == _CLOSE:
            if start >= 0:
                spans.append((start, length))
            start = -1
        else:
            text.append(ch)
            length += 1
    # Newlines become spaces one for one, so the spans stay valid.
    return "".join(text).replace("\n", " ").replace("\t", " "), tuple(spans)


class Search:
    def __init__(self, db: Database) -> None:
        self.db = db

    def query(
        self,
        text: str,
        *,
        limit: int = 20,
        documents: bool = True,
        conversations: bool = True,
        matter_id: int | None = None,
    ) -> list[SearchHit]:
        """The best hits in documents and conversations: every one, or those of one matter."""
        query = fts_query_of(text)
        hits: list[SearchHit] = []
        if documents:
            hits += self._documents(query, limit, matter_id)
        if conversations:
            hits += self._messages(query, limit, matter_id)
        hits.sort(key=lambda h: h.score)
        return hits[:limit]

    def document_passages(
        self, document_id: int, words: list[str], *, limit: int = 3, tokens: int = 48
    ) -> list[Passage]:
        """Stretches of one document around any of the words, best BM25 match first: each is FTS5's
        snippet of a stored segment (up to `tokens` words, at most 64), so its text is the page's own."""
        query = " OR ".join(q for q in dict.fromkeys(fts_query(w) for w in words) if q)
        if not query:
            return []
        rows = self.db.execute(
            """
            SELECT s.page, s.label, snippet(segments_fts, 0, '', '', '', ?)
            FROM segments_fts JOIN segments s ON s.id = segments_fts.rowid
            WHERE segments_fts MATCH ? AND s.document_id = ? AND s.page IS NOT NULL
            ORDER BY bm25(segments_fts) LIMIT ?
            """,
            [min(max(tokens, 1), 64), query, document_id, limit],
        ).fetchall()
        return [Passage(int(page), label, " ".join(text.split())) for page, label, text in rows if text.strip()]

    def opening(self, document_id: int, *, words: int = 64) -> Passage | None:
        """The document's first words as its first page has them: the title and the opening paragraph,
        where a contract names itself, its parties and its date. Up to `words` words."""
        rows = self.db.execute(
            "SELECT page, label, text FROM segments WHERE document_id = ? AND page IS NOT NULL AND text != '' "
            "ORDER BY seq LIMIT 12",
            [document_id],
        ).fetchall()
        if not rows:
            return None
        page, label = int(rows[0][0]), rows[0][1]
        taken: list[str] = []
        for row_page, _, text in rows:
            if row_page != page or len(taken) >= words:
                break
            taken += text.split()
        return Passage(page, label, " ".join(taken[:words]))

    def segment_places(
        self, query: str, document_ids: list[int], *, limit: int
    ) -> list[tuple[int, int | None, float | None]]:
        """(document id, page, time) of the segments of these documents FTS5 finds for an FTS5 query,
        best first (BM25)."""
        if not query or not document_ids:
            return []
        marks = ",".join("?" * len(document_ids))
        rows = self.db.execute(
            f"SELECT s.document_id, s.page, s.t_seconds FROM segments_fts JOIN segments s "
            f"ON s.id = segments_fts.rowid WHERE segments_fts MATCH ? AND s.document_id IN ({marks}) "
            f"ORDER BY bm25(segments_fts) LIMIT {int(limit)}",
            [query, *document_ids],
        ).fetchall()
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def ranked_pages(self, document_ids: list[int], words: list[str], *, limit: int) -> list[tuple[int, int]]:
        """(document id, page) of these documents where FTS5 finds any of the words, best BM25 match
        first, each page once."""
        query = " OR ".join(q for q in dict.fromkeys(fts_query(w) for w in words) if q)
        found = self.segment_places(query, document_ids, limit=limit * 20)
        places = [(doc_id, int(page)) for doc_id, page, _t in found if page is not None]
        return list(dict.fromkeys(places))[:limit]

    def document_pages(self, document_id: int, words: list[str], *, limit: int = 3) -> list[int]:
        """Pages of one document holding any of the words, best BM25 match first."""
        # bm25() cannot sit under an aggregate, so pages are taken in order of their best segment.
        found = self.document_passages(document_id, words, limit=limit * 20, tokens=1)
        return list(dict.fromkeys(p.page for p in found))[:limit]

    def _documents(self, query: str, limit: int, matter_id: int | None = None) -> list[SearchHit]:
        rows = self.db.execute(
            f"""
            SELECT s.document_id, d.title, s.page, s.label, s.t_seconds, d.kind, bm25(segments_fts) AS score,
                   snippet(segments_fts, 0, ?, ?, '…', {SNIPPET_TOKENS})
            FROM segments_fts JOIN segments s ON s.id = segments_fts.rowid
            JOIN documents d ON d.id = s.document_id
            WHERE segments_fts MATCH ? AND (? IS NULL OR s.document_id IN
                (SELECT document_id FROM matter_documents WHERE matter_id = ?))
            ORDER BY score LIMIT ?
            """,
            [_OPEN, _CLOSE, query, matter_id, matter_id, limit],
        ).fetchall()
        hits = []
        for doc_id, title, page, label, t_seconds, kind, score, marked in rows:
            snippet, spans = _split_marks(marked)
            hits.append(
                SearchHit(
                    "document",
                    float(score),
                    snippet,
                    spans,
                    document_id=doc_id,
                    title=title,
                    page=page,
                    label=label,
                    t_seconds=t_seconds,
                    document_kind=str(kind),
                )
            )
        return hits

    def _messages(self, query: str, limit: int, matter_id: int | None = None) -> list[SearchHit]:
        rows = self.db.execute(
            f"""
            SELECT m.conversation_id, c.title, m.id, m.role, bm25(messages_fts) AS score,
                   snippet(messages_fts, 0, ?, ?, '…', {SNIPPET_TOKENS})
            FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
            JOIN conversations c ON c.id = m.conversation_id
            WHERE messages_fts MATCH ? AND (? IS NULL OR c.matter_id = ?) ORDER BY score LIMIT ?
            """,
            [_OPEN, _CLOSE, query, matter_id, matter_id, limit],
        ).fetchall()
        hits = []
        for conv_id, title, message_id, role, score, marked in rows:
            snippet, spans = _split_marks(marked)
            hits.append(
                SearchHit(
                    "message",
                    float(score),
                    snippet,
                    spans,
                    title=title,
                    conversation_id=conv_id,
                    message_id=message_id,
                    role=role,
                )
            )
        return hits

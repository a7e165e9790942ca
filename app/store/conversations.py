"""Conversations and their messages, with citations, token counts and timings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import NotFound
from app.store.db import insert_row

if TYPE_CHECKING:
    from sqlite_utils import Database


@dataclass(frozen=True)
class MessageRow:
    id: int
    conversation_id: int
    seq: int
    role: str
    text: str
    thinking: str
    citations: list[dict[str, Any]]
    model: str | None
    model_sha256: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    prefill_ms: float | None
    generate_ms: float | None
    status: str  # complete | incomplete | cancelled | error
    error: str | None
    created_at: str
    drafted_tokens: int | None = None  # speculative decoding: drafted tokens the model checked...
    accepted_tokens: int | None = None  # ...and kept (None: stored before Folio drafted)
    draft_note: str = ""  # drafting was on and nothing was drafted: why

    # Each claim of an answer with its grounding verdict (app.citations.grounding.ClaimVerdict.to_dict), in order.
    claims: list[dict[str, Any]] = field(default_factory=list)

    @property
    def acceptance(self) -> float | None:
        """Share of drafted tokens the model kept, or None when nothing was drafted."""
        if not self.drafted_tokens or self.accepted_tokens is None:
            return None
        return self.accepted_tokens / self.drafted_tokens

    @classmethod
    def from_row(cls, row: dict[str, Any], claims: list[dict[str, Any]] | None = None) -> MessageRow:
        values = {k: row[k] for k in cls.__dataclass_fields__ if k != "claims"}
        values["citations"] = json.loads(row["citations"] or "[]")
        return cls(**values, claims=claims or [])


@dataclass(frozen=True)
class KeptPart:
    """One part's answer of a question read in parts, kept under the key of its exact request."""

    seq: int
    request_key: str
    text: str
    thinking: str = ""
    claims: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ConversationRow:
    id: int
    title: str
    created_at: str
    updated_at: str
    document_ids: list[int] = field(default_factory=list)
    matter_id: int | None = None


@dataclass(frozen=True)
class AnswerFigures:
    """What a model's last answers took on this computer (all 0: it has answered nothing yet): the
    tokens it read and the milliseconds reading them, the tokens it wrote and the milliseconds writing.
    Both the read-ahead plan (its time to read) and the estimate of a reading in parts (its times to
    read and to write, and the usual answer's length) are made from it."""

    read_tokens: int = 0
    read_ms: float = 0.0
    answers: int = 0  # answers written: a reply read in parts counts each part's (see answer_figures)
    written_tokens: int = 0
    write_ms: float = 0.0

    @property
    def read_per_s(self) -> float:
        """Prompt tokens read a second (0: nothing read yet)."""
        return self.read_tokens / (self.read_ms / 1000) if self.read_tokens > 0 and self.read_ms > 0 else 0.0


class Conversations:
    def __init__(self, db: Database) -> None:
        self.db = db

    def answer_figures(self, model_sha256: str, answers: int = 20) -> AnswerFigures:
        """The reading and writing of this model's last `answers` replies that read or wrote something.

        A reply read in parts (app/passes) holds the figures of all its requests added up: it counts as
        as many answers as it kept parts (at least one), so that the usual answer, written tokens over
        answers, stays the length of one request's answer, which is what an estimate multiplies by the
        answers it will write. Counted as one, a 12-pass reply would be one answer twelve times as long."""
        row = self.db.execute(
            "SELECT sum(CASE WHEN ms > 0 AND read > 0 THEN read END), sum(CASE WHEN ms > 0 AND read > 0 THEN ms END), "
            "sum(CASE WHEN gen_ms > 0 AND written > 0 THEN requests END), "
            "sum(CASE WHEN gen_ms > 0 AND written > 0 THEN written END), "
            "sum(CASE WHEN gen_ms > 0 AND written > 0 THEN gen_ms END) "
            "FROM (SELECT prompt_tokens - coalesce(cached_tokens, 0) AS read, prefill_ms AS ms, "
            "completion_tokens AS written, generate_ms AS gen_ms, "
            "max((SELECT count(*) FROM answer_parts p WHERE p.message_id = m.id), 1) AS requests FROM messages m "
            "WHERE model_sha256 = ? AND role = 'assistant' AND (prefill_ms > 0 OR generate_ms > 0) "
            "ORDER BY id DESC LIMIT ?)",
            [model_sha256, answers],
        ).fetchone()
        if row is None:
            return AnswerFigures()
        return AnswerFigures(
            int(row[0] or 0), float(row[1] or 0.0), int(row[2] or 0), int(row[3] or 0), float(row[4] or 0.0)
        )

    def create(self, document_ids: list[int], title: str, matter_id: int | None = None) -> int:
        """A new conversation about these documents, in `matter_id` (None: the one matter holding them all)."""
        from app.store.matters import Matters

        now = now_iso()
        with self.db.atomic():
            matter = matter_id if matter_id is not None else Matters(self.db).one_for(document_ids)
            conv_id = insert_row(
                self.db,
                "conversations",
                {"title": title, "created_at": now, "updated_at": now, "matter_id": matter},
            )
            self.db.table("conversation_documents").insert_all(
                {"conversation_id": conv_id, "document_id": d, "position": i} for i, d in enumerate(document_ids)
            )
        return conv_id

    def get(self, conversation_id: int) -> ConversationRow:
        rows = list(self.db.table("conversations").rows_where("id = ?", [conversation_id]))
        if not rows:
            raise NotFound(f"no conversation with id {conversation_id}")
        docs = self.db.execute(
            "SELECT document_id FROM conversation_documents WHERE conversation_id = ? ORDER BY position",
            [conversation_id],
        ).fetchall()
        r = rows[0]
        return ConversationRow(
            r["id"], r["title"], r["created_at"], r["updated_at"], [d[0] for d in docs], r.get("matter_id")
        )

    def all(self, document_id: int | None = None, matter_id: int | None = None) -> list[ConversationRow]:
        """Newest first: every conversation, or those about a document, or of a matter, or both (a
        document two matters hold has conversations in each)."""
        # Each condition only when asked for: a join through conversation_documents uses its index.
        sql, where = "SELECT c.id FROM conversations c", []
        if document_id is not None:
            sql += " JOIN conversation_documents d ON d.conversation_id = c.id"
            where.append("d.document_id = :d")
        if matter_id is not None:
            where.append("c.matter_id = :m")
        sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY c.updated_at DESC, c.id DESC"
        ids = [r[0] for r in self.db.execute(sql, {"d": document_id, "m": matter_id})]
        return [self.get(i) for i in ids]

    def messages(self, conversation_id: int) -> list[MessageRow]:
        rows = list(self.db.table("messages").rows_where("conversation_id = ?", [conversation_id], order_by="seq"))
        claims = self._claims([r["id"] for r in rows])
        return [MessageRow.from_row(r, claims.get(r["id"])) for r in rows]

    def message(self, message_id: int) -> MessageRow:
        rows = list(self.db.table("messages").rows_where("id = ?", [message_id]))
        if not rows:
            raise NotFound(f"no message with id {message_id}")
        return MessageRow.from_row(rows[0], self._claims([message_id]).get(message_id))

    def _claims(self, message_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
        out: dict[int, list[dict[str, Any]]] = {}
        for chunk in (message_ids[i : i + 500] for i in range(0, len(message_ids), 500)):
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(
                f"SELECT {', '.join(_CLAIM_COLUMNS)}, message_id FROM claims WHERE message_id IN ({marks}) "
                "ORDER BY message_id, seq",
                chunk,
            ).fetchall():
                out.setdefault(row[-1], []).append(_claim_from_row(row[:-1]))
        return out

    def add_message(self, conversation_id: int, role: str, text: str, **fields: Any) -> int:
        with self.db.atomic():
            seq = self.db.execute(
                "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE conversation_id = ?", [conversation_id]
            ).fetchone()[0]
            row = {
                "conversation_id": conversation_id,
                "seq": seq,
                "role": role,
                "text": text,
                "created_at": now_iso(),
                **fields,
            }
            if "citations" in row and not isinstance(row["citations"], str):
                row["citations"] = json.dumps(row["citations"])
            message_id = insert_row(self.db, "messages", row)
            self._touch(conversation_id)
        return message_id

    def update_message(
        self,
        message_id: int,
        *,
        claims: list[dict[str, Any]] | None = None,
        part: KeptPart | None = None,
        **fields: Any,
    ) -> None:
        """Update a message; with `claims`, replace its claims and their verdicts, and with `part`, keep
        the answer of one part of it, in the same transaction."""
        if "citations" in fields and not isinstance(fields["citations"], str):
            fields["citations"] = json.dumps(fields["citations"])
        with self.db.atomic():
            self.db.table("messages").update(message_id, fields)
            if part is not None:
                self.db.table("answer_parts").upsert(
                    {
                        "message_id": message_id,
                        "seq": part.seq,
                        "request_key": part.request_key,
                        "text": part.text,
                        "thinking": part.thinking,
                        "claims": json.dumps(part.claims),
                        "citations": json.dumps(part.citations),
                    },
                    pk=("message_id", "seq"),
                )
            if claims is not None:
                self.db.execute("DELETE FROM claims WHERE message_id = ?", [message_id])
                self.db.table("claims").insert_all(
                    {"message_id": message_id, "seq": i, **_claim_to_row(c)} for i, c in enumerate(claims)
                )
            conv = self.db.table("messages").get(message_id)["conversation_id"]
            self._touch(conv)

    def kept_part(self, request_key: str) -> KeptPart | None:
        """The answer kept for exactly this request by the latest reading that asked it, if that reading
        did not finish (a crash, a stop or an error ended it); else None. Once a reply is finished its
        parts are not reused: asking the same question again after an answer asks the model again."""
        row = self.db.execute(
            "SELECT p.seq, p.request_key, p.text, p.thinking, p.claims, p.citations, m.status FROM answer_parts p "
            "JOIN messages m ON m.id = p.message_id WHERE p.request_key = ? ORDER BY p.message_id DESC LIMIT 1",
            [request_key],
        ).fetchone()
        if row is None or row[6] == "complete":
            return None
        return KeptPart(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]))

    def rename(self, conversation_id: int, title: str) -> None:
        self.get(conversation_id)
        with self.db.atomic():
            self.db.table("conversations").update(conversation_id, {"title": title.strip() or "Untitled"})

    def last_exchange(self, conversation_id: int) -> tuple[int, str]:
        """The last question (the id of its first message and its text), to ask again (Regenerate).
        A regenerate that failed left the same question with an error after the answer it was to
        replace: asking again replaces both, from the first. Raises NotFound when there is none."""
        rows = self.db.execute(
            "SELECT id, role, text, status FROM messages WHERE conversation_id = ? ORDER BY seq",
            [conversation_id],
        ).fetchall()
        questions = [k for k, r in enumerate(rows) if r[1] == "user"]
        if not questions:
            raise NotFound(f"conversation {conversation_id} has no question to ask again")
        at = questions[-1]
        text = str(rows[at][2])
        for earlier in reversed(questions[:-1]):
            answers = [r for r in rows[at + 1 :] if r[1] == "assistant"][:1]
            failed = not answers or answers[0][3] in ("error", "cancelled")
            if not failed or rows[earlier][2] != text:
                break
            at = earlier
        return int(rows[at][0]), text

    def drop_exchange(self, conversation_id: int, user_id: int, until_id: int) -> None:
        """Remove a question and the answer(s) after it, up to (not including) message `until_id`, in
        one transaction (Regenerate: the old exchange goes with the storing of the new answer)."""
        with self.db.atomic():
            bounds = self.db.execute(
                "SELECT (SELECT seq FROM messages WHERE id = ?), (SELECT seq FROM messages WHERE id = ?)",
                [user_id, until_id],
            ).fetchone()
            if bounds[0] is None or bounds[1] is None:
                raise NotFound(f"conversation {conversation_id} no longer holds that exchange")
            self.db.execute(
                "DELETE FROM messages WHERE conversation_id = ? AND seq >= ? AND seq < ?",
                [conversation_id, bounds[0], bounds[1]],
            )
            self._touch(conversation_id)

    def delete(self, conversation_id: int) -> None:
        self.get(conversation_id)
        with self.db.atomic():
            self.db.execute("DELETE FROM conversations WHERE id = ?", [conversation_id])

    def _touch(self, conversation_id: int) -> None:
        self.db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", [now_iso(), conversation_id])


# The stored claim's columns, in the order _claim_from_row reads them; JSON columns hold lists.
_CLAIM_COLUMNS = (
    "char_start", "char_end", "kind", "text", "verdict", "reason", "doc_index", "document_id", "page", "label",
    "t_seconds", "passage", "score", "quote", "quote_found", "checked", "missing", "cited", "citations", "place",
)  # fmt: skip
_CLAIM_JSON = ("checked", "missing", "cited", "citations")
_RENAMED = {"char_start": "start", "char_end": "end"}


def _claim_to_row(claim: dict[str, Any]) -> dict[str, Any]:
    row = {column: claim.get(_RENAMED.get(column, column)) for column in _CLAIM_COLUMNS}
    for column in _CLAIM_JSON:
        row[column] = json.dumps(list(row[column] or []))
    row["reason"] = row["reason"] or ""
    row["passage"] = row["passage"] or ""
    row["place"] = row["place"] or ""
    row["score"] = row["score"] or 0.0
    if row["quote_found"] is not None:
        row["quote_found"] = int(bool(row["quote_found"]))
    return row


def _claim_from_row(row: tuple[Any, ...]) -> dict[str, Any]:
    claim = {_RENAMED.get(column, column): value for column, value in zip(_CLAIM_COLUMNS, row, strict=True)}
    for column in _CLAIM_JSON:
        claim[column] = json.loads(claim[column] or "[]")
    if claim["quote_found"] is not None:
        claim["quote_found"] = bool(claim["quote_found"])
    return claim

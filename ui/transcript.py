"""The conversation as rendered Markdown, with citation links, collapsible thinking and a live answer.

Model output is untrusted. It is rendered as Markdown with HTML off; nothing is ever loaded for it
(images, style sheets: loadResource returns nothing); and the only live links are the ones Folio
makes itself, whose address carries a random per-window token the model cannot guess. Every other
link is turned back into plain text.

A growing answer is not re-rendered from the top on every token: finished paragraphs are appended
once, and only the unfinished last paragraph is replaced on each (throttled) update. Re-laying out
the whole conversation per token is what freezes a chat window on long answers
(benchmarks/bench_ui.py measures both ways).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

from app.citations.grounding import ADDED, EXEMPT, PARTLY, QUOTED, SUPPORTED, UNSUPPORTED, WRONG_PAGE
from app.citations.targets import CitationTarget, ClaimTarget, claim_targets, escape_markdown, link_citations, targets
from app.citations.verdicts import summary
from app.store.conversations import MessageRow
from ui.safe_text import SafeTextBrowser, defuse, plain_tooltip
from ui.theme import high_contrast

# Model output is untrusted: Markdown only, never raw HTML.
MARKDOWN = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)
RENDER_INTERVAL_MS = 60  # at most ~16 updates a second while an answer streams
MAX_RENDER_SHARE = 0.25  # and never more than a quarter of the UI thread's time
LONG_TAIL = 1500  # an unfinished paragraph longer than this is committed at its last line break
LIVE_THINKING_CHARS = 4000
UNTRUSTED = QColor("#b91c1c")
# Verdict marks: the glyph and the word carry the meaning; the colour only repeats it (light, dark).
VERDICT_COLOURS = {
    QUOTED: ("#166534", "#86efac"),
    SUPPORTED: ("#166534", "#86efac"),
    WRONG_PAGE: ("#92400e", "#fcd34d"),
    ADDED: ("#1e40af", "#93c5fd"),
    PARTLY: ("#92400e", "#fcd34d"),
    UNSUPPORTED: ("#b91c1c", "#fca5a5"),
    EXEMPT: ("#52525b", "#a1a1aa"),
}
LIVE = -1  # the message id used for the answer being written


@dataclass
class _Live:
    header: int  # where the live answer's header starts (it is replaced by the stored message)
    tail: int  # where the part still being re-rendered starts
    thinking: str = ""
    answer: str = ""
    committed: int = 0  # characters of the answer already appended for good
    thinking_done: bool = False


class Transcript(SafeTextBrowser):
    citation_clicked = Signal(object)  # CitationTarget
    claim_clicked = Signal(object)  # ClaimTarget
    copied = Signal(int)  # message id

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("transcript")
        self._prefix = f"folio://{secrets.token_hex(8)}/"
        self.messages: list[MessageRow] = []
        self.document_ids: list[int] = []
        self.expanded: set[int] = set()  # messages whose thinking is shown
        self._targets: dict[str, CitationTarget] = {}
        self._claims: dict[str, ClaimTarget] = {}
        self._live: _Live | None = None
        self.render_ms: list[float] = []  # time spent in each live update, for the benchmark
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._render_live)
        self.anchorClicked.connect(self._on_anchor)

    # -- whole conversation ------------------------------------------------------------------------
    def show_messages(self, messages: list[MessageRow], document_ids: list[int]) -> None:
        self.messages = list(messages)
        self.document_ids = list(document_ids)
        self._live = None
        self._timer.stop()
        self._render_all()

    def _render_all(self) -> None:
        self._targets.clear()
        self._claims.clear()
        bar = self.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        chunks = [self._message_md(m) for m in self.messages]
        self.document().setMarkdown("\n\n---\n\n".join(chunks), MARKDOWN)
        self._activate_links(0)
        if self._live is not None:
            live = self._live
            self._live = None
            self._open_live()
            assert self._live is not None
            self._live.thinking, self._live.answer = live.thinking, live.answer
            self._render_live()
        if at_bottom:
            bar.setValue(bar.maximum())

    def message_markdown(self, message: MessageRow) -> str:
        return self._message_md(message)

    def _message_md(self, m: MessageRow) -> str:
        if m.role == "user":
            return "**You**\n\n" + escape_markdown(m.text)
        parts = [f"**Folio** · {escape_markdown(m.model or '')}"]
        if m.thinking:
            parts.append(self._thinking_md(m.id, m.thinking, live=False))
        marks = []
        for target in claim_targets(m.claims, self.document_ids):
            if target is not None:
                href = f"{self._prefix}claim/{m.id}/{target.index}"
                self._claims[href] = target
                # No-break spaces: a mark is never split over two lines.
                marks.append((int(m.claims[target.index]["end"]), target.mark.replace(" ", "\u00a0"), href))
        body = (
            link_citations(m.text, m.citations, lambda i: self._cite_href(m, i), marks) if m.text else "*(no answer)*"
        )
        parts.append(body)
        notes = []
        if m.status != "complete":
            notes.append(m.status + (f": {m.error}" if m.error else ""))
        if m.claims:
            notes.append(summary(m.claims) or "nothing to check")
        elif m.citations:
            notes.append(f"{len(m.citations)} citations, stored before Folio checked answers sentence by sentence")
        if m.completion_tokens:
            notes.append(f"{m.completion_tokens} tokens in {(m.generate_ms or 0) / 1000:.1f} s")
        if m.acceptance is not None:
            notes.append(f"drafts {m.acceptance:.0%} accepted ({m.accepted_tokens} of {m.drafted_tokens})")
        elif m.draft_note:
            notes.append(m.draft_note)
        footer = f"[Copy]({self._prefix}copy/{m.id})"
        if notes:
            footer = "*" + escape_markdown(" · ".join(notes)) + "* · " + footer
        parts.append(footer)
        return "\n\n".join(parts)

    def _thinking_md(self, message_id: int, thinking: str, *, live: bool) -> str:
        words = len(thinking.split())
        shown = message_id in self.expanded
        arrow = "▾" if shown else "▸"
        label = f"{arrow} Thinking{'…' if live else ''} ({words} words)"
        line = f"[{label}]({self._prefix}think/{message_id})"
        if not shown:
            return line
        text = thinking[-LIVE_THINKING_CHARS:] if live else thinking
        quoted = "\n>\n".join("> " + escape_markdown(p) for p in text.strip().split("\n") if p.strip())
        return f"{line}\n\n{quoted}"

    def _cite_href(self, m: MessageRow, index: int) -> str:
        href = f"{self._prefix}cite/{m.id}/{index}"
        found = targets(m.citations, self.document_ids, m.claims)
        if index < len(found):
            self._targets[href] = found[index]
        return href

    # -- links -------------------------------------------------------------------------------------
    def _activate_links(self, start: int) -> None:
        """Neutralize every link that is not Folio's own and every image, then style Folio's citation
        links and verdict marks by their check result."""
        doc = self.document()
        defuse(doc, lambda href: href.startswith(self._prefix), start)
        dark = self.palette().base().color().lightness() < 128
        plain = high_contrast()
        changes: list[tuple[int, int, QTextCharFormat]] = []
        block = doc.findBlock(start)
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                claim = self._claims.get(fmt.anchorHref()) if fmt.isAnchor() else None
                if claim is not None and fragment.position() + fragment.length() > start:
                    new = QTextCharFormat(fmt)
                    new.setToolTip(plain_tooltip(claim.tooltip))
                    if not plain:  # in high contrast the palette's link colour stays: the words carry it
                        new.setForeground(QColor(VERDICT_COLOURS[claim.verdict][int(dark)]))
                    new.setFontUnderline(False)
                    if claim.by_folio:  # visibly Folio's finding, not the model's citation
                        new.setFontItalic(True)
                    changes.append((fragment.position(), fragment.length(), new))
                target = self._targets.get(fmt.anchorHref()) if fmt.isAnchor() else None
                if target is not None and fragment.position() + fragment.length() > start:
                    new = QTextCharFormat(fmt)
                    new.setToolTip(plain_tooltip(target.tooltip))
                    if target.faulty:  # the wave marks it in any theme; the red only where colours are Folio's
                        new.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                        if not plain:
                            new.setForeground(UNTRUSTED)
                            new.setUnderlineColor(UNTRUSTED)
                    changes.append((fragment.position(), fragment.length(), new))
                it += 1
            block = block.next()
        cursor = QTextCursor(doc)
        for position, length, fmt in changes:
            cursor.setPosition(position)
            cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
            cursor.setCharFormat(fmt)

    def _on_anchor(self, url: QUrl) -> None:
        href = url.toString()
        if not href.startswith(self._prefix):
            return
        kind, _, rest = href[len(self._prefix) :].partition("/")
        if kind == "cite" and href in self._targets:
            self.citation_clicked.emit(self._targets[href])
        elif kind == "claim" and href in self._claims:
            self.claim_clicked.emit(self._claims[href])
        elif kind == "think" and rest.lstrip("-").isdigit():
            self.expanded ^= {int(rest)}
            self._render_all()
        elif kind == "copy" and rest.isdigit():
            self.copy_message(int(rest))

    def copy_message(self, message_id: int) -> None:
        for m in self.messages:
            if m.id == message_id:
                QGuiApplication.clipboard().setText(m.text)
                self.copied.emit(message_id)
                return

    def targets_of(self, message_id: int) -> dict[str, CitationTarget]:
        """The citation links of one message, by address (tests and the screenshot script use it)."""
        return {h: t for h, t in self._targets.items() if h.startswith(f"{self._prefix}cite/{message_id}/")}

    def claims_of(self, message_id: int) -> dict[str, ClaimTarget]:
        """The verdict marks of one message, by address."""
        return {h: t for h, t in self._claims.items() if h.startswith(f"{self._prefix}claim/{message_id}/")}

    # -- the live answer ---------------------------------------------------------------------------
    def begin_answer(self, question: str, document_ids: list[int]) -> None:
        self.document_ids = list(document_ids)
        pending = _pending_question(question)
        markdown = self._message_md(pending)
        self._append(markdown, rule=bool(self.messages))
        self.messages.append(pending)
        self._open_live()
        self._render_live()
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def drop_last_exchange(self) -> str | None:
        """Forget the last question and its answer (Regenerate); returns the question."""
        users = [i for i, m in enumerate(self.messages) if m.role == "user"]
        if not users or self._live is not None:
            return None
        question = self.messages[users[-1]].text
        self.messages = self.messages[: users[-1]]
        self._render_all()
        return question

    def _open_live(self) -> None:
        header = self._end()
        self._append("**Folio**", rule=True)
        self._live = _Live(header=header, tail=self._end())

    def append_text(self, channel: str, text: str) -> None:
        if self._live is None:
            return
        if channel == "thinking":
            self._live.thinking += text
        else:
            self._live.answer += text
        if not self._timer.isActive():
            self._timer.start(self._interval())

    def _interval(self) -> int:
        recent = self.render_ms[-5:]
        spent = max(recent) if recent else 0.0
        return max(RENDER_INTERVAL_MS, int(spent / MAX_RENDER_SHARE))

    def _render_live(self) -> None:
        live = self._live
        if live is None:
            return
        started = time.perf_counter()
        bar = self.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        self._cut(live.tail)
        if not live.thinking_done:
            if not live.answer:
                self._append(self._thinking_md(LIVE, live.thinking, live=True) if live.thinking else "*…*")
                self._finish_render(started, at_bottom)
                return
            if live.thinking:
                self._append(self._thinking_md(LIVE, live.thinking, live=False))
                self._activate_links(live.tail)
            live.thinking_done = True
            live.tail = self._end()
        cut = _commit_point(live.answer, live.committed)
        if cut > live.committed:
            self._append(live.answer[live.committed : cut])
            self._activate_links(live.tail)
            live.committed = cut
            live.tail = self._end()
        tail = live.answer[live.committed :]
        if tail.strip():
            self._append(tail)
            self._activate_links(live.tail)
        self._finish_render(started, at_bottom)

    def _finish_render(self, started: float, at_bottom: bool) -> None:
        if at_bottom:
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())
        self.render_ms.append((time.perf_counter() - started) * 1000)

    @property
    def live_answer(self) -> str:
        return self._live.answer if self._live else ""

    @property
    def is_live(self) -> bool:
        return self._live is not None

    def finish_answer(self, message: MessageRow, user: MessageRow | None = None) -> None:
        """Replace the live answer by the stored message (now with checked citation links)."""
        self._timer.stop()
        if self.messages and self.messages[-1].id == 0 and user is not None:
            self.messages[-1] = user
        self.messages.append(message)
        if self._live is None:
            self._render_all()
            return
        header = self._live.header
        self._live = None
        self._cut(header)
        self._append(self._message_md(message), rule=True)
        self._activate_links(header)
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def fail_answer(self, reason: str) -> None:
        self._timer.stop()
        header = self._live.header if self._live else self._end()
        self._live = None
        self._cut(header)
        self._append("**Folio**\n\n*Could not answer:* " + escape_markdown(reason), rule=True)
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    # -- document edits ----------------------------------------------------------------------------
    def _end(self) -> int:
        return self.document().characterCount() - 1

    def _cut(self, position: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(min(position, self._end()))
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _append(self, markdown: str, *, rule: bool = False) -> None:
        """Append Markdown at the end, after a horizontal rule when asked (as '---' between messages
        renders in a whole-document setMarkdown: an empty block that carries the rule)."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not markdown:
            return
        if rule:
            cursor.insertBlock()
            ruled = QTextBlockFormat()
            ruled.setProperty(QTextFormat.Property.BlockTrailingHorizontalRulerWidth, 1)  # what setMarkdown sets
            cursor.setBlockFormat(ruled)
            cursor.insertBlock(QTextBlockFormat())
        elif cursor.block().length() > 1:
            cursor.insertBlock()
        cursor.insertMarkdown(markdown, MARKDOWN)


def _commit_point(text: str, done: int) -> int:
    """Where the finished part of a growing answer ends: after the last blank line past `done`
    outside a code fence (or after any line break, once the open paragraph grows very long)."""
    fence_open = text.count("```", 0, done) % 2 == 1
    best = position = done
    while (nl := text.find("\n", position)) >= 0:
        line = text[position:nl]
        if line.lstrip().startswith("```"):
            fence_open = not fence_open
        position = nl + 1
        if not fence_open and (not line.strip() or len(text) - best > LONG_TAIL):
            best = position
    return best


def _pending_question(question: str) -> MessageRow:
    """The question as shown before it is stored (id 0); replaced by the stored row when answered."""
    return MessageRow(
        id=0,
        conversation_id=0,
        seq=0,
        role="user",
        text=question,
        thinking="",
        citations=[],
        model=None,
        model_sha256=None,
        prompt_tokens=None,
        completion_tokens=None,
        cached_tokens=None,
        prefill_ms=None,
        generate_ms=None,
        status="complete",
        error=None,
        created_at="",
    )

"""A question over more than the model's context holds, answered part by part and stored as one turn.

`LongQuestion.ask` reads the selection the way the user chose:

- *chosen pages* (`pages`, one document): only those pages, said in the footer;
- *passes*: a document longer than the context in consecutive windows that fit (page boundaries, one
  page of overlap); several documents that do not fit together one by one, each whole on top of its
  own kept state (the same prefix as a question about it alone), or in passes when it alone does not fit;
- *search*: the pages SQLite FTS5 ranks highest for the question's words, as many as fit, asked once.

Every request goes through the session's one path (`Session.prepare`, `Session.run`) under the job's
cancel token, and every answer is grounded like a chat answer (app/citations). The answers are merged
(app/passes/merge.py): a table of part x answer, a synthesis written from the answers alone (or, when
it would not fit, a plain list of where something was found), and the footer (app/passes/coverage.py)
naming every page read and every page not read. The turn is stored as the chat stores one
(`ChatService.begin`, then the answer row), and the row is updated as each part finishes, so a stop
or a crash keeps the parts done.

Each part's answer is also kept on its own (answer_parts, under a key of its exact request) in the
transaction that stores the reply so far: asking the same question again after a stop, an error or a
crash (a kill -9 during a question over 30 documents) takes the parts done and reads only the rest.
The reply's text carries each part's claims and citations at their places, so the window marks and
links them as in any answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace

from app.caches import Readings
from app.chat import AnswerDelta, AnswerDone, ChatEvent, ChatService, ChatStarted
from app.citations.grounding import ground_answer
from app.context import AppContext
from app.engine.documents import BuildMessages, Documents, ReadDocument, prompt_documents
from app.engine.progress import Progress
from app.engine.session import CancelToken, ModelIdentity
from app.errors import Cancelled, DoesNotFit, FolioError, one_line
from app.models.registry import ModelRecord
from app.pages import page_ranges
from app.passes.coverage import CHOSEN, PASSES, SEARCHED, WHOLE, DocumentReading, footer
from app.passes.estimate import ReadingEstimate, ReadingEstimates, Speed, estimate
from app.passes.merge import Answer, Reply, naming_document
from app.passes.plans import Planned, Request, digest
from app.passes.windows import Windows, choose_ranked, plan_windows
from app.store.conversations import KeptPart, MessageRow
from app.store.library import DocumentRow
from app.store.search import Search, content_words
from assets import read_text
from inference.chat_format import Message, template_for
from inference.engine_api import Sampling
from inference.events import GenerationStats
from inference.planner import Plan
from inference.prompt import PromptDocument, build_messages, render_prompt
from inference.thinking import ThinkingSplitter
from ingest.document import unit_of

STRATEGIES = ("passes", "search")
# Plan windows by estimate a little under the limit, so the exact count seldom has to cut one.
ESTIMATE_SHARE = 0.95
RANKED_PAGES = 400  # the most pages a word search ranks for one question
EventSink = Callable[[ChatEvent], None]


class LongQuestion:
    """Questions that do not fit one request, on a chat service's session (one engine owner)."""

    def __init__(self, chat: ChatService) -> None:
        self.chat = chat
        self.ctx = chat.ctx
        self.session = chat.session
        self._token = CancelToken()
        self.kept: MessageRow | None = None  # the turn stored when a stop or an error ended the question

    def estimate(
        self,
        document_ids: list[int],
        question: str,
        *,
        pages: tuple[int, ...] | None = None,
        conversation_id: int | None = None,
        thinking: bool | None = None,
        max_tokens: int | None = None,
        regenerate: bool = False,
        on_event: EventSink | None = None,
        cancel: CancelToken | None = None,
    ) -> ReadingEstimates:
        """How long reading the selection in passes, or by the pages a search finds, would take: each
        reading planned as `ask` would plan it (its parts and their exact prompts), less what the
        engine's kept states hold and the parts a stopped run answered, at this computer's measured
        speed. For a selection (or `pages` of one document) that does not fit the context whole; a local
        model only (a server's speed is its own). Each estimate carries its plan, for `ask` to read by.
        `cancel` stops the planning between two measures: Cancelled, and nothing was stored."""
        emit = on_event or (lambda _e: None)
        token = cancel or CancelToken()
        replaced: int | None = None
        if regenerate:  # the last question again: the conversation before it, as `ask` reads it
            replaced, question = self.chat.asked_again(conversation_id)
        asked = self._asked(
            document_ids, question, pages, "passes", conversation_id, thinking, max_tokens, replaced, emit, token
        )
        assert asked.measure is not None and asked.who.sha256 is not None  # a server was refused above
        emit(Progress("estimating how long each reading takes"))
        model_sha = asked.who.sha256
        speed = self._speed(model_sha, asked.answer_tokens)
        run = _Run(self, asked.rows, [], [], asked.question, asked.history, asked.think, asked.answer_tokens,
                   emit, CancelToken(), model_sha)  # fmt: skip
        readings = Readings(self.ctx.paths)
        shas = {row.id: row.sha256 for row in asked.rows}
        found: dict[str, ReadingEstimate] = {}
        for strategy in STRATEGIES:
            try:
                planned = self._planned(asked, pages, strategy, None)
            except FolioError as exc:  # this reading cannot be done (a search finding none of the words)
                found[strategy] = ReadingEstimate(strategy, speed=speed, note=one_line(exc))
                continue
            prompts, kept = [], []
            for request in planned.requests:
                if self.chat.conversations.kept_part(run._key(request)) is not None:
                    prompts.append(0)  # answered by a run that was stopped: not asked again
                    kept.append(0)
                    continue
                prompts.append(request.tokens)
                whole = request.pages is None and len(request.document_ids) == 1
                # A document read whole starts from its kept state (a read ahead, an earlier question).
                state = readings.state(model_sha, shas[request.document_ids[0]]) if whole else None
                kept.append(state.done if state is not None and state.kind in ("ready", "partial") else 0)
            found[strategy] = estimate(strategy, prompts, kept, speed, plan=planned)
        return ReadingEstimates(found["passes"], found["search"])

    def _planned(
        self, asked: _Asked, pages: tuple[int, ...] | None, strategy: str | None, plan: Planned | None
    ) -> Planned:
        """The reading of the question by `strategy`: `plan` when it was made from all the same (its key),
        else planned now."""
        key = self._plan_key(asked, pages, strategy)
        if plan is not None and plan.key == key:
            return plan
        readings, requests = self._plan(asked.rows, asked.selections, pages, strategy, asked.question, asked.measure)
        return Planned(key, tuple(readings), tuple(requests))

    def _plan_key(self, asked: _Asked, pages: tuple[int, ...] | None, strategy: str | None) -> str:
        """Everything a plan is made from: the model and the most it can read here (the context, this
        machine's memory), the question and the conversation before it, each document as stored, the
        pages chosen, the strategy, the settings and the instructions every request is measured with."""
        measure = asked.measure
        return digest(
            {
                "model": asked.who.sha256,
                "limit": measure.limit if measure is not None else None,
                "images": measure is not None and measure.record.mmproj_path is not None,
                "question": asked.question,
                "history": [[m.role, m.content] for m in asked.history],
                "documents": [[row.id, row.sha256, row.page_count, row.token_estimate] for row in asked.rows],
                "pages": pages,
                "strategy": strategy,
                "think": asked.think,
                "answer_tokens": asked.answer_tokens,
                "instructions": [read_text("prompts", "answer.md"), read_text("prompts", "pass.md")],
            }
        )

    def _speed(self, model_sha: str, answer_tokens: int) -> Speed:
        """The model's speeds measured on this computer: its last answers, and its reads ahead."""
        answers = self.chat.conversations.answer_figures(model_sha)
        reads = Readings(self.ctx.paths).reading_figures(model_sha)
        return Speed.measured(
            [(answers.read_tokens, answers.read_ms), reads],
            (answers.written_tokens, answers.write_ms),
            answers.answers,
            answer_tokens,
        )

    def _asked(
        self,
        document_ids: list[int],
        question: str,
        pages: tuple[int, ...] | None,
        strategy: str | None,
        conversation_id: int | None,
        thinking: bool | None,
        max_tokens: int | None,
        replaced: int | None,
        emit: EventSink,
        cancel: CancelToken,
    ) -> _Asked:
        """The question checked, with its documents, history and settings, and the measure of its
        requests (None with a model server), which `cancel` stops."""
        question = question.strip()
        if strategy is not None and strategy not in STRATEGIES:
            raise FolioError(f"unknown strategy '{strategy}': use {' or '.join(STRATEGIES)}")
        if not question:
            raise FolioError("the question is empty")
        history: list[Message] = []
        if conversation_id is not None:
            document_ids = self.chat.conversations.get(conversation_id).document_ids
            history = self.chat.history(conversation_id, before=replaced)
        if not document_ids:
            raise FolioError("no document selected")
        if pages is not None and len(document_ids) != 1:
            raise FolioError("a page selection is for one document: select one document with the pages")
        rows = [self.ctx.library.get(d) for d in document_ids]
        selections = {doc.id: _selection(doc, pages) for doc in rows}
        think = self.ctx.settings.thinking if thinking is None else thinking
        answer_tokens = max_tokens or self.ctx.settings.max_answer_tokens
        who = self.session.model_identity(self.ctx)
        measure = None
        if who.record is None:
            if strategy is not None:
                raise FolioError("reading in passes or by search needs a local model (a server's context is its own)")
        else:
            emit(Progress("measuring the documents against the model's context"))
            measure = _Measure(self, who.record, question, history, think, answer_tokens, cancel)
        return _Asked(list(document_ids), question, history, rows, selections, think, answer_tokens, who, measure)

    def cancel(self) -> None:
        """Stop the question (from any thread): the parts answered are kept, the rest named as not read."""
        self._token.cancel()

    def ask(
        self,
        document_ids: list[int],
        question: str,
        *,
        pages: tuple[int, ...] | None = None,
        strategy: str | None = None,
        conversation_id: int | None = None,
        thinking: bool | None = None,
        max_tokens: int | None = None,
        on_event: EventSink | None = None,
        cancel: CancelToken | None = None,
        regenerate: bool = False,
        plan: Planned | None = None,
    ) -> MessageRow:
        """Ask about `pages` of one document, or about documents that may not fit the context together
        (`strategy` 'passes' or 'search'). What fits whole is asked as any question is (ChatService.ask);
        what does not fit, without a strategy, is refused with the planner's line (DoesNotFit).
        `regenerate`: ask the conversation's last question again, read this way; the old exchange goes
        only with the storing of the new, finished reply (as ChatService.ask does it).
        `plan`: the plan `estimate` made of this reading, read as it is when made from the same question,
        selection and settings (else the reading is planned again). A stop (`cancel`) while planning
        raises Cancelled before anything is stored."""
        emit = on_event or (lambda _e: None)
        token = self._token = cancel or CancelToken()
        replaced: int | None = None
        if regenerate:
            replaced, question = self.chat.asked_again(conversation_id)
        asked = self._asked(
            document_ids, question, pages, strategy, conversation_id, thinking, max_tokens, replaced, emit, token
        )
        document_ids, question, history = asked.document_ids, asked.question, asked.history
        rows, think, answer_tokens = asked.rows, asked.think, asked.answer_tokens
        who, measure = asked.who, asked.measure
        # An estimate's plan was made because the selection did not fit whole, and its key holds all
        # that decided it: it is not measured again.
        planned = plan if plan is not None and plan.key == self._plan_key(asked, pages, strategy) else None
        if planned is None and pages is None and (measure is None or measure.fits(measure.tokens(rows, None, ""))):
            # Everything fits: the question as any other, read whole on top of what was kept.
            return self.chat.ask(
                document_ids,
                question,
                conversation_id=conversation_id,
                thinking=think,
                max_tokens=answer_tokens,
                on_event=emit,
                cancel=token,
                regenerate=regenerate,
            )
        matter_id = self.chat.matter_for(document_ids) if conversation_id is None else None
        planned = self._planned(asked, pages, strategy, planned)
        documents = Documents([ReadDocument(row) for row in rows], [], 0)
        exchange = self.chat.begin(
            documents,
            question,
            conversation_id=conversation_id,
            label=who.label,
            sha256=who.sha256,
            think=think,
            matter_id=matter_id,
        )
        emit(ChatStarted(exchange.conversation_id, exchange.user_id, exchange.answer_id, who.label, who.demo,
                         tuple(document_ids)))  # fmt: skip
        run = _Run(self, rows, list(planned.readings), list(planned.requests), question, history, think, answer_tokens,
                   emit, token, who.sha256 or "")  # fmt: skip
        try:
            run.answer_parts(exchange.answer_id)
            run.synthesise()
        except KeyboardInterrupt:  # Ctrl+C in the CLI: a real stop; what was answered is kept
            self.kept = run.store(exchange.answer_id, stopped=True)
            raise
        except Exception as exc:
            reason = str(exc) if isinstance(exc, FolioError) else f"internal error: {type(exc).__name__}: {exc}"
            self.kept = run.store(exchange.answer_id, error=reason)
            raise
        replaces = (replaced, exchange.user_id) if replaced is not None and not run.stopped else None
        done = run.store(exchange.answer_id, stopped=run.stopped, replaces=replaces)
        emit(AnswerDelta("answer", done.text))
        emit(AnswerDone(done, run.stats()))
        return done

    # -- planning ---------------------------------------------------------------------------------
    def _plan(
        self,
        rows: list[DocumentRow],
        selections: dict[int, tuple[int, ...]],
        pages: tuple[int, ...] | None,
        strategy: str | None,
        question: str,
        measure: _Measure | None,
    ) -> tuple[list[DocumentReading], list[Request]]:
        """How each document is read and the requests that read it, in order."""
        if pages is not None:
            doc = rows[0]
            _refuse_part(self.ctx, doc)
            part = _part(doc, pages)
            tokens = measure.tokens(rows, selections, part) if measure is not None else 0
            if measure is None or measure.fits(tokens):
                # The chosen pages fit (or a model server, whose context is its own business).
                reading = _reading(1, doc, pages, (pages,), CHOSEN)
                return [reading], [Request((doc.id,), selections, 0, page_ranges(pages), part, tokens=tokens)]
        assert measure is not None  # a model server took one of the paths above, or was refused
        if strategy is None:
            needed = measure.tokens(rows, selections if pages is not None else None, "")
            raise DoesNotFit(measure.reason(needed))
        if strategy == "search":
            return self._searched(rows, selections, question, measure)
        readings: list[DocumentReading] = []
        requests: list[Request] = []
        several = len(rows) > 1
        for k, doc in enumerate(rows, start=1):
            chosen = selections[doc.id]
            if several:
                part = f"one of {len(rows)} documents, whole (answer about this document only)"
                tokens = measure.tokens([doc], None, part)
                if measure.fits(tokens):
                    readings.append(_reading(k, doc, chosen, (chosen,), WHOLE))
                    requests.append(Request((doc.id,), None, k - 1, f"D{k}", part, k, tokens))
                    continue
            _refuse_part(self.ctx, doc)
            planned = measure.windows(doc, chosen, len(rows))
            readings.append(_reading(k, doc, chosen, planned.windows, PASSES, planned.too_long))
            for n, (window, tokens) in enumerate(zip(planned.windows, planned.tokens, strict=True), start=1):
                part = _window_part(doc, window, n, len(planned.windows), len(rows))
                label = f"D{k} " if several else ""
                label += f"{unit_of(doc.kind)}s {page_ranges(window)}"
                index = k if several else None
                requests.append(Request((doc.id,), {doc.id: window}, k - 1, label, part, index, tokens))
        return readings, requests

    def _searched(
        self, rows: list[DocumentRow], selections: dict[int, tuple[int, ...]], question: str, measure: _Measure
    ) -> tuple[list[DocumentReading], list[Request]]:
        """The pages a word search ranks highest for the question, as many as fit one request."""
        for doc in rows:
            _refuse_part(self.ctx, doc)
        words = content_words(question)
        ranked = [
            (doc_id, page)
            for doc_id, page in Search(self.ctx.db).ranked_pages([d.id for d in rows], words, limit=RANKED_PAGES)
            if page in selections[doc_id]
        ]
        if not ranked:
            said = ", ".join(words[:6]) or "none"
            raise FolioError(
                f"a word search finds none of the question's words ({said}) in the selection: "
                "read it in passes instead, or choose the pages"
            )
        part = "the pages a word search ranks highest for the question"
        cost, bare = measure.costs(rows, selections, part)

        def fits(chosen: list[tuple[int, int]]) -> bool:
            return measure.fits(measure.tokens(rows, _by_document(rows, chosen), part))

        chosen = choose_ranked(ranked, cost, (measure.limit - bare) * ESTIMATE_SHARE, fits)
        if not chosen:
            raise FolioError("not even the page a word search ranks first fits the model's context")
        by_doc = _by_document(rows, chosen)
        readings = [
            _reading(k, d, selections[d.id], (tuple(sorted(by_doc[d.id])),), SEARCHED) for k, d in enumerate(rows, 1)
        ]
        if len(rows) > 1:
            label = "; ".join(f"D{k} {page_ranges(by_doc[d.id])}" for k, d in enumerate(rows, 1) if by_doc[d.id])
        else:
            label = f"{unit_of(rows[0].kind)}s {page_ranges(by_doc[rows[0].id])}"
        tokens = measure.tokens(rows, by_doc, part)
        return readings, [Request(tuple(d.id for d in rows), by_doc, None, label, part, tokens=tokens)]


@dataclass(frozen=True)
class _Asked:
    """A question checked and ready to plan: its documents, history and settings, and the measure of
    its requests against the model's context (None: a model server's context is its own)."""

    document_ids: list[int]
    question: str
    history: list[Message]
    rows: list[DocumentRow]
    selections: dict[int, tuple[int, ...]]
    think: bool
    answer_tokens: int
    who: ModelIdentity
    measure: _Measure | None


class _Measure:
    """Exact token counts of the requests a question would make, and the largest that fits."""

    def __init__(
        self,
        owner: LongQuestion,
        record: ModelRecord,
        question: str,
        history: list[Message],
        think: bool,
        answer_tokens: int,
        cancel: CancelToken,
    ) -> None:
        self.ctx, self.session = owner.ctx, owner.session
        self.cancel = cancel
        self.record = record
        self.question, self.history, self.think = question, history, think
        self.answer_tokens = answer_tokens
        self.template = template_for(record.architecture, record.facts.chat_template)
        self.limit = self._largest()

    def _largest(self) -> int:
        """The most prompt tokens the planner fits beside the answer (the context, this machine's memory)."""
        low, high = 0, max(self.session.context_ceiling(self.record) - self.answer_tokens, 0)
        if self._plan(high).fits:
            return high
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if self._plan(middle).fits else (low, middle - 1)
        return low

    def fits(self, tokens: int) -> bool:
        return tokens <= self.limit

    def reason(self, tokens: int) -> str:
        return self._plan(tokens).reason

    def _plan(self, tokens: int) -> Plan:
        return self.session.plan(self.record, tokens, self.answer_tokens)

    def tokens(self, rows: list[DocumentRow], pages: Mapping[int, Collection[int]] | None, part: str) -> int:
        """The exact prompt tokens of a request reading these pages of these documents. A stop between
        two counts ends the planning (Cancelled): each count takes the engine a while on a long document."""
        if self.cancel.cancelled:
            raise Cancelled()
        documents = prompt_documents(
            self.ctx, [d.id for d in rows], images=self.record.mmproj_path is not None, pages=pages
        )
        messages = _builder(self.question, self.history, part, rows, pages)(documents)
        rendered = render_prompt(self.template, messages, enable_thinking=self.think)
        return self.session.count_tokens(self.record, rendered).total

    def costs(
        self, rows: list[DocumentRow], selections: Mapping[int, Collection[int]], part: str
    ) -> tuple[dict[tuple[int, int], float], int]:
        """Each selected (document, page)'s estimated tokens (its characters, at the rate the exact count
        of them all gives), and the tokens of the request without any page."""
        bare = self.tokens(rows, {d.id: () for d in rows}, part)
        whole = self.tokens(rows, selections, part)
        chars = {(d.id, p): 0 for d in rows for p in selections[d.id]}
        for doc in rows:
            for seg in self.ctx.library.segments(doc.id):
                key = (doc.id, seg.page or 0)
                if key in chars:
                    chars[key] += len(seg.text) + 12  # with its marker and line breaks
        rate = max(whole - bare, 0) / max(sum(chars.values()), 1)
        return {key: n * rate for key, n in chars.items()}, bare

    def windows(self, doc: DocumentRow, chosen: tuple[int, ...], documents: int) -> Windows:
        """Consecutive windows over the chosen pages of one document, each request within the limit."""

        def part_of(window: tuple[int, ...]) -> str:
            return _window_part(doc, window, 1, 2, documents)  # pass numbers cost the same few tokens

        def measure(window: tuple[int, ...]) -> int:
            return self.tokens([doc], {doc.id: window}, part_of(window))

        costs, bare = self.costs([doc], {doc.id: chosen}, part_of(chosen))
        cost = {page: c for (_doc, page), c in costs.items()}
        return plan_windows(chosen, cost, (self.limit - bare) * ESTIMATE_SHARE, measure, self.limit)


class _Run:
    """The requests of one question, their answers, and the reply they make."""

    def __init__(
        self,
        owner: LongQuestion,
        rows: list[DocumentRow],
        readings: list[DocumentReading],
        requests: list[Request],
        question: str,
        history: list[Message],
        think: bool,
        answer_tokens: int,
        emit: EventSink,
        token: CancelToken,
        model_sha: str,
    ) -> None:
        self.owner, self.ctx, self.session = owner, owner.ctx, owner.session
        self.rows, self.readings, self.requests = rows, readings, requests
        self.question, self.history, self.think = question, history, think
        self.answer_tokens, self.emit, self.token = answer_tokens, emit, token
        self.answers: list[Answer] = []
        self.thinking: list[str] = []
        self.figures: list[GenerationStats] = []
        self.synthesis: Answer | None = None
        self.stopped = False  # a request ended cancelled, or the job was stopped between two
        self.model_sha = model_sha  # the model answering: part of each request's key (see _key)
        # The instructions every part is asked with, read once: part of each request's key too.
        self.instructions = [read_text("prompts", "answer.md"), read_text("prompts", "pass.md")]

    def answer_parts(self, answer_id: int) -> None:
        total = len(self.requests)
        asked, asking_s = 0, 0.0  # parts the model answered in this run, and the time they took
        for n, request in enumerate(self.requests, start=1):
            if self.token.cancelled:
                self.stopped = True
                return
            left = f", about {_duration(asking_s / asked * (total - n + 1))} left" if asked else ""
            started = time.monotonic()
            key = self._key(request)
            kept = self.owner.chat.conversations.kept_part(key)
            if kept is not None:  # answered before, by a run that a crash or a stop ended: not asked again
                answer, thinking = Answer(kept.text, kept.claims, kept.citations), kept.thinking
                said = "kept from an earlier reading"
            else:
                self.emit(Progress(f"part {n} of {total}: {request.label}{left}"))
                answer, thinking, stats = self._ask(request)
                if stats.stop_reason == "cancelled":  # a part cut short is not kept: its pages count as not read
                    self.stopped = True
                    return
                self.figures.append(stats)
                said = "answered" if answer.found else "found nothing"
                asked, asking_s = asked + 1, asking_s + time.monotonic() - started
            self.answers.append(answer)
            self.thinking.append(thinking)
            self._advance(request)
            # What is done survives a stop or a crash, in the reply and as the part's own answer; said
            # once it is stored.
            part = KeptPart(n, key, answer.text, thinking, answer.claims, answer.citations)
            self.store(answer_id, partial=True, part=part)
            self.emit(Progress(f"part {n} of {total}: {request.label}: {said}"))

    def _key(self, request: Request) -> str:
        """What makes a part's answer the same answer: the model, the question and the conversation
        before it, the part as the model is told it, each document (by sha256) with its pages, and the
        instructions; any change asks the model again."""
        shas = {row.id: row.sha256 for row in self.rows}
        pages = request.pages
        documents = [
            [shas[d], sorted(pages[d]) if pages is not None and d in pages else None] for d in request.document_ids
        ]
        what = {
            "model": self.model_sha,
            "question": self.question,
            "history": [[m.role, m.content] for m in self.history],
            "part": request.part,
            "documents": documents,
            "think": self.think,
            "answer_tokens": self.answer_tokens,
            "instructions": self.instructions,
        }
        return digest(what)

    def _ask(self, request: Request) -> tuple[Answer, str, GenerationStats]:
        rows = [r for r in self.rows if r.id in request.document_ids]
        build = _builder(self.question, self.history, request.part, rows, request.pages)
        return self._run(list(request.document_ids), build, request.pages, rows)

    def _run(
        self,
        document_ids: list[int],
        build: BuildMessages,
        pages: Mapping[int, Collection[int]] | None,
        rows: list[DocumentRow],
    ) -> tuple[Answer, str, GenerationStats]:
        """One request through the session's one path, its answer grounded in `rows`."""
        with self.session.turn():  # measuring the prompt and answering it: one hold of the engine
            prepared = self.session.prepare(
                self.ctx, document_ids, build, think=self.think, answer_tokens=self.answer_tokens, pages=pages
            )
            left_out = self.session.images_left_out_line(prepared.documents)  # never a page left out unsaid
            if left_out:
                self.emit(Progress(left_out))
            sampling = Sampling.recommended(thinking=self.think, max_tokens=self.answer_tokens)
            request = prepared.request(sampling=sampling, thinking=self.think)
            result = self.session.run(prepared, request, cancel=self.token, on_progress=self.emit)
        splitter = ThinkingSplitter(in_thinking=prepared.starts_in_thinking)
        splitter.feed(result.text)
        splitter.finish()
        text = splitter.answer_text.strip()
        grounded = ground_answer(text, self.session.sources(self.ctx, rows))
        answer = Answer(text, [v.to_dict() for v in grounded.claims], [c.to_dict() for c in grounded.citations])
        return answer, splitter.thinking_text, result.stats

    def _advance(self, request: Request) -> None:
        at = range(len(self.readings)) if request.reading is None else [request.reading]
        for i in at:
            self.readings[i] = replace(self.readings[i], done=self.readings[i].done + 1)

    # -- the merge --------------------------------------------------------------------------------
    def synthesise(self) -> None:
        """A short answer written from the parts' answers alone, when two or more found something."""
        found = [(r, a) for r, a in zip(self.requests, self.answers, strict=False) if a.found]
        if len(found) < 2 or self.stopped:
            return
        lines = [f"Question: {self.question}", "", "Answers, part by part:"]
        for n, (request, answer) in enumerate(found, start=1):
            text = answer.text if request.doc_index is None else naming_document(answer, request.doc_index)[0]
            lines += ["", f"({n}) {request.label}:", text]
        nothing = [r.label for r, a in zip(self.requests, self.answers, strict=False) if not a.found]
        if nothing:
            lines += ["", f"Parts that found nothing: {', '.join(nothing)}."]
        user = "\n".join(lines)
        instructions = read_text("prompts", "merge.md")

        def build(_documents: list[PromptDocument]) -> list[Message]:
            return [Message("system", instructions.strip()), Message("user", user)]

        self.emit(Progress("writing a short answer from the parts' answers"))
        try:
            answer, thinking, stats = self._run([], build, None, self.rows)
        except DoesNotFit:
            return  # the parts' answers alone are longer than the context: the reply lists where they found it
        if stats.stop_reason == "cancelled":
            self.stopped = True
            return
        self.figures.append(stats)
        self.thinking.append(thinking)
        self.synthesis = answer if answer.found else None

    def reply(self) -> Reply:
        reply = Reply()
        several = len(self.rows) > 1
        in_parts = len(self.requests) > 1
        if not in_parts:  # one request (chosen or searched pages): its answer as it is
            if self.answers:
                reply.add_answer(self.answers[0])
            reply.add(f"\n\n{footer(self.readings)}")
            return reply
        if several:
            reply.add("The documents do not fit the model's context together: each was asked the question alone.")
            reply.add("\n\n| Document | Answer |\n| --- | --- |\n")
        else:
            passes = len(self.requests)
            reply.add(f"The document does not fit the model's context: it was read in {passes} passes, each asked.")
            reply.add(f"\n\n| {unit_of(self.rows[0].kind).capitalize()}s | Answer |\n| --- | --- |\n")
        self._table(reply, several)
        self._short_answer(reply)
        reply.add(f"\n\n{footer(self.readings)}")
        return reply

    def _table(self, reply: Reply, several: bool) -> None:
        done = list(zip(self.requests, self.answers, strict=False))
        if not several:
            for request, answer in done:
                assert request.pages is not None  # one document in parts: each request reads a window
                reply.add(f"| {page_ranges(request.pages[self.rows[0].id])} | ")
                _cell(reply, answer, None)
                reply.add(" |\n")
            return
        for k, doc in enumerate(self.rows, start=1):
            mine = [(r, a) for r, a in done if r.reading == k - 1]
            reply.add(f"| D{k} {_cell_text(doc.title)} | ")
            if not mine:
                reply.add("not read (stopped before it)")
            for i, (request, answer) in enumerate(mine):
                if request.pages is not None:  # one of its passes
                    reply.add(("; " if i else "") + f"{unit_of(doc.kind)}s {page_ranges(request.pages[doc.id])}: ")
                _cell(reply, answer, k)
            reply.add(" |\n")

    def _short_answer(self, reply: Reply) -> None:
        found = [r for r, a in zip(self.requests, self.answers, strict=False) if a.found]
        if self.synthesis is not None:
            reply.add("\n**In short** (written from the answers above only): ")
            reply.add_answer(self.synthesis)
        elif not found:
            reply.add(f"\n**Nothing found:** none of the {len(self.answers)} parts read answered the question.")
        else:
            reply.add(f"\n**Found in:** {', '.join(r.label for r in found)} (see above).")

    def stats(self) -> GenerationStats:
        """The engine's figures of every request, added up (a stop makes the whole 'cancelled')."""
        figures = self.figures
        stopped = self.stopped
        return GenerationStats(
            prompt_tokens=sum(s.prompt_tokens for s in figures),
            cached_tokens=sum(s.cached_tokens for s in figures),
            completion_tokens=sum(s.completion_tokens for s in figures),
            prefill_ms=sum(s.prefill_ms for s in figures),
            generate_ms=sum(s.generate_ms for s in figures),
            n_ctx=max((s.n_ctx for s in figures), default=0),
            stop_reason="cancelled" if stopped else "eos",
            ttft_ms=figures[0].ttft_ms if figures else 0.0,
            peak_tokens=max((s.in_context for s in figures), default=0),
        )

    def store(
        self,
        answer_id: int,
        *,
        partial: bool = False,
        stopped: bool = False,
        error: str = "",
        part: KeptPart | None = None,
        replaces: tuple[int, int] | None = None,
    ) -> MessageRow:
        """The reply so far in the answer row: all of it (complete, or cancelled when stopped), or as
        each part finishes (still incomplete), or with the error that ended it. `replaces` (the old
        question's id, the new question's id): the exchange asked again, dropped in the same
        transaction as the finished reply is stored."""
        reply = self.reply()
        thinking = "\n\n".join(t for t in self.thinking if t)
        conversations = self.owner.chat.conversations
        if partial or error:
            fields: dict[str, object] = {"text": reply.text, "thinking": thinking}
            if error:
                fields |= {"status": "error", "error": error}
            conversations.update_message(answer_id, claims=reply.claims, citations=reply.citations, part=part, **fields)
        else:
            stats = self.stats()
            if stopped:
                stats = replace(stats, stop_reason="cancelled")
            self.owner.chat.store_answer(
                answer_id, reply.text, thinking, reply.claims, reply.citations, stats, replaces
            )
        return conversations.message(answer_id)


def _cell(reply: Reply, answer: Answer, doc_index: int | None) -> None:
    if answer.found:
        reply.add_answer(answer, doc_index=doc_index, one_line=True)
    else:
        reply.add("found nothing")


def _cell_text(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _builder(
    question: str,
    history: list[Message],
    part: str,
    rows: list[DocumentRow],
    pages: Mapping[int, Collection[int]] | None,
) -> BuildMessages:
    """The messages of one request: the chat's instructions and the documents (each read in part
    labelled with the pages it is read by), the history, the question (with a word on the part, when
    the request reads one)."""
    instructions = read_text("prompts", "answer.md")
    asked = read_text("prompts", "pass.md").strip().format(question=question, part=part) if part else question

    def build(documents: list[PromptDocument]) -> list[Message]:
        labelled = []
        for doc, row in zip(documents, rows, strict=False):
            kept = pages.get(row.id) if pages is not None else None
            if kept is not None and len(kept) < row.page_count:
                unit = unit_of(row.kind)
                doc = replace(doc, title=f"{doc.title} ({unit}s {page_ranges(kept)} of {row.page_count} only)")
            labelled.append(doc)
        return build_messages(instructions, labelled, history, asked)

    return build


def _part(doc: DocumentRow, pages: Collection[int]) -> str:
    return f"{unit_of(doc.kind)}s {page_ranges(pages)} of {doc.page_count}, chosen by the user"


def _window_part(doc: DocumentRow, window: tuple[int, ...], n: int, of: int, documents: int) -> str:
    where = f"of this document, one of {documents} documents " if documents > 1 else ""
    return f"{unit_of(doc.kind)}s {page_ranges(window)} {where}(pass {n} of {of})"


def _reading(
    k: int,
    doc: DocumentRow,
    selection: tuple[int, ...],
    windows: tuple[tuple[int, ...], ...],
    how: str,
    too_long: tuple[int, ...] = (),
) -> DocumentReading:
    return DocumentReading(k, doc.title, unit_of(doc.kind), doc.page_count, selection, windows, how, too_long)


def _by_document(rows: list[DocumentRow], chosen: list[tuple[int, int]]) -> dict[int, Collection[int]]:
    out: dict[int, Collection[int]] = {d.id: () for d in rows}
    for doc_id, page in chosen:
        out[doc_id] = (*out[doc_id], page)
    return out


def _selection(doc: DocumentRow, pages: tuple[int, ...] | None) -> tuple[int, ...]:
    """The pages of the document to read: all of them, or those chosen (each of which must exist)."""
    if pages is None:
        return tuple(range(1, doc.page_count + 1))
    past = [p for p in pages if p > doc.page_count]
    if past:
        unit = unit_of(doc.kind)
        raise FolioError(
            f"#{doc.id} {doc.title} has {doc.page_count} {unit}s: {unit}s {page_ranges(past)} are past its end"
        )
    return pages


def _refuse_part(ctx: AppContext, doc: DocumentRow) -> None:
    """Reading part of a document means reading some of its pages (or paragraphs): a video, or an
    e-mail whose attachments come along with it, cannot be cut that way yet; say so rather than read
    part of it without saying which."""
    if doc.kind == "video":
        raise FolioError(f"#{doc.id} {doc.title}: a video cannot be read in part (passes, search, pages) yet")
    if ctx.library.attachments(doc.id):
        raise FolioError(
            f"#{doc.id} {doc.title}: an e-mail with attachments cannot be read in part (passes, search, pages) yet"
        )

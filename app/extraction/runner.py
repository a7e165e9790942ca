"""Run an extraction template over documents: evidence-first answers, grounded cells, stored as they come.

Each request is the chat prompt with the same system + document prefix (so the engine's state
cache serves chat and extraction alike) and a short user turn for one field, or a group of fields of
one kind (app.extraction.prompt). The answer is constrained by a JSON schema that asks for the
evidence before the value (app.extraction.schema); each cell is grounded on the document
(app.extraction.cells). Cells are committed per request, so an interrupted run resumes where it
stopped: fields already stored are never asked again. A run is keyed on the template's content, the
model's sha256 and the request design (app.extraction.prompt.design_key): cells asked with another
prompt never mix into it; such a change starts a new run and the old one stays readable.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.context import AppContext
from app.engine.documents import BuildMessages, prompt_documents
from app.engine.progress import Progress
from app.engine.session import CancelToken, ModelIdentity, Prepared, Result, Session
from app.errors import Cancelled, FolioError, NotFound
from app.extraction.cells import (
    BAD_OUTPUT,
    CUT_OFF,
    PARTIAL_DOCUMENT,
    PRESUPPOSED,
    Cell,
    cell_from_answer,
    failed_cell,
    not_stated_cell,
)
from app.extraction.decide import GENERATED, YES_NO, Calibration, Decision, decide, load_calibration
from app.extraction.held import held_or_not_stated
from app.extraction.named import named_or_not_stated, with_naming_evidence
from app.extraction.plain import LOOK, NOT_ASKED, says_not_stated
from app.extraction.prompt import (
    LOOK_TOKENS,
    FieldAsk,
    Look,
    PageChoice,
    ask_field,
    choose_messages,
    choose_pages,
    decide_messages,
    design_key,
    extraction_messages,
    look_messages,
    pages_of,
)
from app.extraction.review import Review, load_reviews
from app.extraction.schema import PASSAGE, PRESENT, YES, group_schema, max_output_bytes, schema_errors
from app.extraction.templates import TEXT, Template, TemplateField, TemplateStore
from app.models.registry import ModelRecord
from app.store.audit import audited_settings
from app.store.extraction import ExtractionStore
from app.store.matters import Matters
from app.store.search import Passage

if TYPE_CHECKING:
    from app.citations.grounding import Sources
from inference.chat_format import template_for
from inference.engine_api import GenerateRequest, Sampling
from inference.errors import ScoringUnsupported
from inference.events import GenerationStats, Scored
from inference.prompt import RenderedPrompt, render_prompt

# Rules applied after the model (each measured out of sample in benchmarks/RESULTS.md):
HELD = "held"  # a short answer no page of the document holds is not stated (app.extraction.held)
NAMED = "named"  # a value or clause without the field's named_by words is not there (app.extraction.named)
NAMING_EVIDENCE = "naming_evidence"  # a value quoted from elsewhere opens on the sentence naming it
ALL_RULES = (HELD, NAMED, NAMING_EVIDENCE)
RULES = frozenset({HELD, NAMING_EVIDENCE})  # what the app applies: see RESULTS.md for why


@dataclass(frozen=True)
class RunInfo:
    id: int
    template: Template
    template_sha256: str
    model: str
    model_sha256: str
    settings: dict[str, Any]
    status: str
    created_at: str
    updated_at: str
    design: str = ""  # how the cells were asked (app.extraction.prompt.design_key)
    matter: str = ""  # the name of the matter the run belongs to


@dataclass(frozen=True)
class TableDocument:
    id: int
    title: str
    sha256: str
    source_path: str


@dataclass(frozen=True)
class ExtractionTable:
    """Documents x fields, with every cell's evidence: what the window shows and exports write."""

    run: RunInfo
    documents: list[TableDocument]
    cells: dict[tuple[int, str], Cell] = field(default_factory=dict)
    reviews: dict[tuple[int, str], Review] = field(default_factory=dict)  # the decision in force per cell

    @property
    def fields(self) -> tuple[TemplateField, ...]:
        return self.run.template.fields

    def cell(self, document_id: int, field_key: str) -> Cell | None:
        return self.cells.get((document_id, field_key))

    def review(self, document_id: int, field_key: str) -> Review | None:
        return self.reviews.get((document_id, field_key))


@dataclass(frozen=True)
class Evidence:
    """What a table cell opens: the document, the page or time, and the passage to highlight."""

    document_id: int
    title: str
    page: int | None
    label: str | None
    t_seconds: float | None
    quote: str  # what to mark on the page: the model's quote when it is there, else the supporting words
    verified: bool  # the passage to mark was found in the document
    bbox: tuple[float, float, float, float] | None  # the text block holding the quote, when known
    verdict: str = ""


# -- events --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunStarted:
    run_id: int
    template_name: str
    documents: int
    cells_total: int
    cells_done: int  # already stored (a resumed run)
    model_label: str
    demo_model: bool


@dataclass(frozen=True)
class DocumentStarted:
    document_id: int
    title: str
    position: int  # 1-based among this call's documents
    count: int
    pending_fields: int


@dataclass(frozen=True)
class CellsStored:
    cells: list[Cell]
    cells_done: int
    cells_total: int


@dataclass(frozen=True)
class RunFinished:
    run_id: int
    status: str  # complete | cancelled
    cells_done: int
    cells_total: int


ExtractionEvent = RunStarted | DocumentStarted | CellsStored | RunFinished | Progress
ExtractionSink = Callable[[ExtractionEvent], None]


def _row_to_cell(row: dict[str, Any], yes_no: bool) -> Cell:
    return Cell(
        document_id=row["document_id"],
        field_key=row["field_key"],
        found=bool(row["found"]),
        value=row["value"],
        quote=row["quote"],
        cited=row["cited"],
        page=row["page"],
        label=row["label"],
        t_seconds=row["t_seconds"],
        quote_status=row["quote_status"],
        quote_score=row["quote_score"],
        flags=tuple(json.loads(row["flags"])),
        verdict=row["verdict"],
        passage=row["passage"],
        yes_no=yes_no,
        score=row.get("score"),
        threshold=row.get("threshold"),
        decided_by=row.get("decided_by") or "",
        confidence=row.get("confidence"),
    )


def load_run_info(ctx: AppContext, run_id: int) -> RunInfo:
    r = ExtractionStore(ctx.db).run(run_id)
    template = Template.from_dict(json.loads(r["template_json"]), source=f"run {run_id}")
    return RunInfo(
        id=r["id"],
        template=template,
        template_sha256=r["template_sha256"],
        model=r["model"],
        model_sha256=r["model_sha256"],
        settings=json.loads(r["settings"]),
        status=r["status"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        design=r["design"],
        matter=Matters(ctx.db).by_id(r["matter_id"]).name if r.get("matter_id") is not None else "",
    )


def load_run_documents(ctx: AppContext, run_id: int) -> list[int]:
    return ExtractionStore(ctx.db).documents(run_id)


def load_table(ctx: AppContext, run_id: int, document_ids: list[int] | None = None) -> ExtractionTable:
    info = load_run_info(ctx, run_id)
    ids = document_ids if document_ids is not None else load_run_documents(ctx, run_id)
    docs = []
    for doc_id in ids:
        d = ctx.library.get(doc_id)
        docs.append(TableDocument(d.id, d.title, d.sha256, d.source_path))
    cells: dict[tuple[int, str], Cell] = {}
    wanted = set(ids)
    yes_no = {f.key: f.yes_no for f in info.template.fields}
    for row in ExtractionStore(ctx.db).cells(run_id):
        if row["document_id"] in wanted:
            cell = _row_to_cell(row, yes_no.get(row["field_key"], False))
            cells[(cell.document_id, cell.field_key)] = cell
    reviews = {k: v for k, v in load_reviews(ctx, run_id).items() if k[0] in wanted}
    return ExtractionTable(info, docs, cells, reviews)


class ExtractionService:
    """Runs one extraction at a time on the engine it is given (shared with chat in the window)."""

    def __init__(
        self,
        ctx: AppContext,
        session: Session | None = None,
        *,
        hints: bool = True,
        rules: frozenset[str] = RULES,
        scoring: bool = True,
        calibration: Calibration | None = None,
    ) -> None:
        """`scoring` off: the generated answers decide, as where a server returns no probabilities (a
        benchmark measures both ways); `calibration`: the thresholds to judge scores by (default: the
        model's own calibration file, app.extraction.decide)."""
        self.ctx = ctx
        self.session = session or Session.for_context(ctx)  # its engine starts on the first request
        self.hints = hints  # name the pages a word search finds for each field (off only to measure it)
        unknown = sorted(rules - set(ALL_RULES))
        if unknown:
            raise FolioError(f"no extraction rule {unknown[0]!r} (rules: {', '.join(ALL_RULES)})")
        self.rules = rules
        # Cells ruled otherwise never mix into one run: the rules are part of the design.
        ruled = "".join(f"-{r}" for r in ALL_RULES if r in rules)
        self.design = design_key() + ruled + ("" if hints else "-nohints") + ("" if scoring else "-generated")
        # Whether the engine scores decisions: unknown until the first one (a model server may not).
        self._scoring: bool | None = None if scoring else False
        self._thresholds = calibration
        self.store = ExtractionStore(ctx.db)
        self._token = CancelToken()  # the run under way's stop: between two fields, and inside one
        self.templates = TemplateStore.for_config(ctx.paths.config_dir)

    def cancel(self) -> None:
        """Stop the run under way (from any thread): the cells stored so far stay; run it again to resume."""
        self._token.cancel()

    def close(self) -> None:
        self.session.close()

    # -- runs ------------------------------------------------------------------------------------
    def start_run(self, template: Template, document_ids: list[int], *, resume: bool = True) -> int:
        """The run to fill for these documents: the latest run of the same template (same fields and
        wording) with the same model when resuming, else a new one. Documents are added to it."""
        if not document_ids:
            raise FolioError("no document selected")
        for doc_id in document_ids:
            self.ctx.library.get(doc_id)
        # A table takes documents of one matter, like a question; it is resumed only in that matter.
        matter_id = Matters(self.ctx.db).one_for(document_ids, prefer=self.ctx.matter_id)
        model = self.model_id()
        run_id = self.store.latest(template.sha256, model.key, self.design, matter_id) if resume else None
        run = {
            "template_key": template.key,
            "template_name": template.name,
            "template_version": template.version,
            "template_sha256": template.sha256,
            "template_json": template.to_json(),
            "model": model.label,
            "model_sha256": model.key,
            "settings": json.dumps(dataclasses.asdict(self.ctx.settings.extraction)),
            "design": self.design,
            "status": "running",
            "matter_id": matter_id,
        }
        return self.store.start(run_id, run, document_ids)

    def run_info(self, run_id: int) -> RunInfo:
        return load_run_info(self.ctx, run_id)

    def runs(self) -> list[RunInfo]:
        return [self.run_info(i) for i in self.store.run_ids()]

    def run_documents(self, run_id: int) -> list[int]:
        return load_run_documents(self.ctx, run_id)

    def stored_keys(self, run_id: int, document_id: int) -> set[str]:
        return self.store.field_keys(run_id, document_id)

    def run(
        self,
        run_id: int,
        document_ids: list[int] | None = None,
        on_event: ExtractionSink | None = None,
        *,
        cancel: CancelToken | None = None,
    ) -> RunFinished:
        """Fill every missing cell of the run for these documents (default: all of the run's). A stop
        (`cancel`, or `self.cancel()`) ends it between two fields or inside one; what is stored stays."""
        self._token = cancel or CancelToken()
        emit = on_event or (lambda _e: None)
        info = self.run_info(run_id)
        docs = document_ids if document_ids is not None else self.run_documents(run_id)
        in_run = set(self.run_documents(run_id))
        missing = [d for d in docs if d not in in_run]
        if missing:
            raise FolioError(f"document {missing[0]} is not part of extraction run {run_id}")
        model = self.model_id()
        if model.key != info.model_sha256:
            raise FolioError(f"run {run_id} was made with {info.model}; switch back to that model or start a new run")
        total = len(docs) * len(info.template.fields)
        done = self._done(info, docs)
        emit(RunStarted(run_id, info.template.name, len(docs), total, done, model.label, model.demo))
        self._set_status(run_id, "running")
        try:
            for position, doc_id in enumerate(docs, start=1):
                done = self._run_document(info, model, doc_id, position, len(docs), done, total, emit)
        except Cancelled:
            self._set_status(run_id, "cancelled")
            finished = RunFinished(run_id, "cancelled", self._done(info, docs), total)
            emit(finished)
            return finished
        except BaseException:
            self._set_status(run_id, "incomplete")
            raise
        complete = all(not self._pending(info, d) for d in self.run_documents(run_id))
        self._set_status(run_id, "complete" if complete else "incomplete")
        finished = RunFinished(run_id, "complete", self._done(info, docs), total)
        emit(finished)
        return finished

    def _done(self, info: RunInfo, docs: list[int]) -> int:
        keys = {f.key for f in info.template.fields}
        return sum(len(self.stored_keys(info.id, d) & keys) for d in docs)

    def _pending(self, info: RunInfo, document_id: int) -> list[TemplateField]:
        stored = self.stored_keys(info.id, document_id)
        return [f for f in info.template.fields if f.key not in stored]

    def _not_stated(self, run_id: int, document_id: int, field_key: str) -> bool:
        """The field's cell is stored and says "not stated" (not a failed request: that one may yet be retried)."""
        row = self.store.cell(run_id, document_id, field_key)
        return row is not None and not row["found"] and not set(json.loads(row["flags"])) & {CUT_OFF, BAD_OUTPUT}

    def _set_status(self, run_id: int, status: str) -> None:
        self.store.set_status(run_id, status)

    def _run_document(
        self,
        info: RunInfo,
        model: ModelIdentity,
        doc_id: int,
        position: int,
        count: int,
        done: int,
        total: int,
        emit: ExtractionSink,
    ) -> int:
        pending = self._pending(info, doc_id)
        doc = self.ctx.library.get(doc_id)
        emit(DocumentStarted(doc_id, doc.title, position, count, len(pending)))
        if not pending:
            return done
        choice = self._page_choice(model, doc_id, info.template.fields)
        details: dict[str, Any] = {
            "run_id": info.id,
            "template": info.template.key,
            "template_version": info.template.version,
            "template_sha256": info.template_sha256,
            "design": info.design,
            "fields": [f.key for f in pending],
            "model": model.label,
        }
        if choice.pages is not None:
            details["pages_read"] = list(choice.pages)
        self.ctx.audit.record(
            "extraction",
            documents=[doc.sha256],
            model_sha256=model.sha256,
            settings=audited_settings(self.ctx.settings),
            details=details,
            matter_id=self.store.matter_of(info.id),
        )
        settings = self.ctx.settings.extraction
        sources = self.session.sources(self.ctx, [doc])  # read into passages once, shared with the chat
        extra = (PARTIAL_DOCUMENT,) if choice.partial else ()
        texts = [u.text for u in sources.units]
        if choice.partial:
            emit(Progress(f"{doc.title}: {choice.note()}"))
        calibration = self._calibration(model)
        # A scored decision asks one field at a time; a generated one may group yes/no clauses.
        size = 1 if self._scoring is not False else max(1, settings.fields_per_request)
        for fields in _groups(pending, size):
            if self._token.cancelled:
                raise Cancelled()
            if fields[0].needs and self._not_stated(info.id, doc_id, fields[0].needs):
                needed = info.template.field(fields[0].needs).name
                cells = [not_stated_cell(doc_id, fields[0], (*extra, PRESUPPOSED))]
                self._store(info.id, cells, {fields[0].key: {NOT_ASKED: f"{needed}: not stated"}}, _NOTHING)
                done += 1
                emit(CellsStored(cells, done, total))
                continue
            decision, decided_stats = (
                self._decide(model, doc_id, fields[0], choice, calibration, emit) if len(fields) == 1 else (None, None)
            )
            if decision is not None and not decision.there:
                cells = [_with_decision(absent_cell(doc_id, fields[0], extra), decision)]
                self._store(
                    info.id, cells, {fields[0].key: {SCORED: _decision_record(decision)}}, decided_stats or _NOTHING
                )
                done += 1
                emit(CellsStored(cells, done, total))
                continue
            if decision is not None and fields[0].yes_no:
                cells, raw, stats = self._clause(model, doc_id, fields[0], choice, sources, extra, emit)
            else:
                cells, raw, stats = self._values(model, doc_id, fields, choice, sources, extra, emit, decision)
            if not cells:  # a generated decision: the plain answer said not stated
                cells = [not_stated_cell(doc_id, fields[0], extra)]
            asked = {f.key: f for f in fields}
            cells = [self._ruled(c, asked[c.field_key], sources, texts) for c in cells]
            if decision is None:  # the generated answer decided: the cell's record says so
                cells = [dataclasses.replace(c, decided_by=GENERATED) for c in cells]
            else:
                key = fields[0].key
                cells = [_with_decision(cells[0], decision)]
                raw = {key: {**(raw.get(key) or {}), SCORED: _decision_record(decision)}}
                stats = _both(decided_stats, stats) if decided_stats is not None else stats
            self._store(info.id, cells, raw, stats)
            done += len(cells)
            emit(CellsStored(cells, done, total))
        self.store.document_done(info.id, doc_id)
        return done

    # -- one field ---------------------------------------------------------------------------------
    def _calibration(self, model: ModelIdentity) -> Calibration:
        if self._thresholds is not None:
            return self._thresholds
        from assets import asset_path

        folders = [self.ctx.paths.config_dir / "calibration", asset_path("calibration")]
        return load_calibration(folders, model.sha256)

    def _decide(
        self,
        model: ModelIdentity,
        doc_id: int,
        field: TemplateField,
        choice: PageChoice,
        calibration: Calibration,
        emit: ExtractionSink,
    ) -> tuple[Decision | None, GenerationStats | None]:
        """Whether the field is there, scored by the model (one forward pass on top of the document);
        (None, None) when the engine cannot score, so the generated answer decides."""
        if self._scoring is False:
            return None, None
        prepared = self._prepare(doc_id, lambda documents: decide_messages(documents, field, choice), choice, 1)
        try:
            scores, stats = self._scores(model, prepared, prepared.request(sampling=_greedy(1), choices=YES_NO), emit)
        except ScoringUnsupported as exc:
            self._scoring = False
            emit(Progress(f"{exc}; the model's generated answers decide instead"))
            return None, None
        self._scoring = True
        return decide(scores.logprobs, calibration.of(field.key), scores.source), stats

    def _clause(
        self,
        model: ModelIdentity,
        doc_id: int,
        field: TemplateField,
        choice: PageChoice,
        sources: Sources,
        extra: tuple[str, ...],
        emit: ExtractionSink,
    ) -> tuple[list[Cell], dict[str, Any], GenerationStats]:
        """A clause judged present: the passage that is it. Among passages the word search offers, the
        one the model scores most likely (one more forward pass); without any, the clause it copies."""
        ask = ask_field(self.ctx, doc_id, field, choice, hints=self.hints)
        settings = self.ctx.settings.extraction
        if not ask.choosing:
            return self._values(model, doc_id, [field], choice, sources, extra, emit, decided=True)
        prepared = self._prepare(doc_id, lambda documents: choose_messages(documents, ask, choice), choice, 1)
        numbers = tuple((str(n),) for n in range(1, len(ask.candidates) + 1))
        if len(numbers) == 1:
            picked, stats = 1, _NOTHING  # one passage offered: nothing to choose
            chances: list[float] = []
        else:
            scored, stats = self._scores(model, prepared, prepared.request(sampling=_greedy(1), choices=numbers), emit)
            chances = [round(lp, 4) for lp in scored.logprobs]
            picked = 1 + max(range(len(chances)), key=chances.__getitem__)
        raw = {PASSAGE: picked, PRESENT: YES, "passage_logprobs": chances}
        cell = cell_from_answer(doc_id, ask, raw, sources, extra, settings.quote_threshold)
        return [cell], {field.key: raw}, stats

    def _values(
        self,
        model: ModelIdentity,
        doc_id: int,
        fields: list[TemplateField],
        choice: PageChoice,
        sources: Sources,
        extra: tuple[str, ...],
        emit: ExtractionSink,
        decision: Decision | None = None,
        *,
        decided: bool = False,
    ) -> tuple[list[Cell], dict[str, Any], GenerationStats]:
        """The generated answer for these fields: a short answer's plain question first, then the form
        (evidence before value). `decided` (a scored decision said the field is there): the form can
        only give it. Without a decision, a plain answer saying "not stated" ends the field: no cells."""
        decided = decided or decision is not None
        look: Look | None = None
        look_stats: GenerationStats | None = None
        if not fields[0].yes_no:  # a short answer is alone in its group, and asked plainly first
            look, look_stats = self._look(model, doc_id, fields[0], choice, emit)
            if not decided and says_not_stated(look.answer):
                return [], {fields[0].key: {LOOK: look.answer}}, look_stats
        asks = [ask_field(self.ctx, doc_id, f, choice, hints=self.hints) for f in fields]
        raw, stats, flags = self._ask(model, doc_id, asks, choice, emit, look, decided=decided)
        threshold = self.ctx.settings.extraction.quote_threshold
        cells = [
            failed_cell(doc_id, a.field, (*flags, *extra))
            if flags
            else cell_from_answer(doc_id, a, raw[a.field.key], sources, extra, threshold)
            for a in asks
        ]
        if look is not None and look_stats is not None:  # what the model first said plainly is kept beside its form
            key = fields[0].key
            raw = {key: {**(raw.get(key) or {}), LOOK: look.answer}}
            stats = _both(look_stats, stats)
        return cells, raw, stats

    def _ruled(self, cell: Cell, field: TemplateField, sources: Sources, texts: list[str]) -> Cell:
        """The rules this service applies after the model (RULES), in their order: a value no page
        holds is not stated; one the document never calls by the field's words is not stated; a value
        quoted from elsewhere opens on the sentence that calls it so."""
        if HELD in self.rules:
            cell = held_or_not_stated(cell, field, sources)
        if NAMED in self.rules:
            cell = named_or_not_stated(cell, field, texts)
        if NAMING_EVIDENCE in self.rules:
            cell = with_naming_evidence(cell, field, sources, self.ctx.settings.extraction.quote_threshold)
        return cell

    def model_id(self) -> ModelIdentity:
        return self.session.model_identity(self.ctx)  # a server is reached before anything is stored

    def _page_choice(self, model: ModelIdentity, doc_id: int, fields: tuple[TemplateField, ...]) -> PageChoice:
        """All of the document when it fits the model's context; else the pages a word search ranks
        highest for the template's fields, as many as fit (never a silent cut: the cells say so)."""
        record = model.record
        if record is None:  # a model server: its context is its own business, and its errors say so
            return PageChoice()
        settings = self.ctx.settings
        ceiling = self.session.context_ceiling(record)
        # The largest request a field can make: its question with three offered passages, and the
        # longest answer a short-answer field may write.
        widest = [FieldAsk(max(fields, key=lambda f: len(f.description)), "", _LONGEST_OFFER)]
        reserve = self._answer_tokens([FieldAsk(dataclasses.replace(widest[0].field, kind=TEXT))])
        reserve *= max(1, settings.extraction.fields_per_request)
        if not all(f.yes_no for f in fields):  # a short answer's form follows its question and plain answer
            reserve += LOOK_TOKENS + _QUESTION_TOKENS
        whole = self.session.count_tokens(record, self._render(record, doc_id, widest, None))
        if not ceiling or whole.total + reserve <= ceiling:
            return PageChoice()
        bare = self.session.count_tokens(record, self._render(record, doc_id, widest, PageChoice((), 0)))
        budget = ceiling - reserve - bare.total
        for _attempt in range(6):
            choice = choose_pages(self.ctx, doc_id, fields, budget)
            count = self.session.count_tokens(record, self._render(record, doc_id, widest, choice))
            if count.total + reserve <= ceiling:
                return choice
            budget -= count.total + reserve - ceiling + 256  # the estimate was short: aim lower
        raise FolioError(f"{self.ctx.library.get(doc_id).title}: no pages of it fit the model's context")

    def _schema(self, asks: list[FieldAsk], *, decided: bool = False) -> dict[str, Any]:
        settings = self.ctx.settings.extraction
        specs = [(a.field.key, a.field.yes_no, len(a.candidates) if a.choosing else 0) for a in asks]
        return group_schema(specs, settings.value_chars, settings.quote_chars, decided=decided)

    def _answer_tokens(self, asks: list[FieldAsk]) -> int:
        return max_output_bytes(self._schema(asks)) + 2

    def _render(
        self, record: ModelRecord, doc_id: int, asks: list[FieldAsk], choice: PageChoice | None
    ) -> RenderedPrompt:
        """The local model's prompt for these fields (to measure it before anything is asked)."""
        template = template_for(record.architecture, record.facts.chat_template)
        documents = prompt_documents(
            self.ctx, [doc_id], images=record.mmproj_path is not None, pages=pages_of(doc_id, choice)
        )
        return render_prompt(template, extraction_messages(documents, asks, choice), enable_thinking=False)

    def _prepare(self, doc_id: int, build: BuildMessages, choice: PageChoice, max_tokens: int) -> Prepared:
        # Chat's own prefix, planner and loaded context, so switching between chat and extraction never reloads.
        return self.session.prepare(
            self.ctx, [doc_id], build, think=False, answer_tokens=max_tokens, pages=pages_of(doc_id, choice)
        )

    def _request(self, prepared: Prepared, request: GenerateRequest, emit: ExtractionSink) -> Result:
        """One request of the run through the session, under the run's stop."""
        result = self.session.run(prepared, request, cancel=self._token, on_progress=emit)
        if result.cancelled:
            raise Cancelled()
        return result

    def _generate(
        self, model: ModelIdentity, prepared: Prepared, request: GenerateRequest, emit: ExtractionSink
    ) -> tuple[str, GenerationStats]:
        result = self._request(prepared, request, emit)
        return result.text, result.stats

    def _scores(
        self, model: ModelIdentity, prepared: Prepared, request: GenerateRequest, emit: ExtractionSink
    ) -> tuple[Scored, GenerationStats]:
        result = self._request(prepared, request, emit)
        if result.scored is None:
            raise FolioError(f"{model.label} returned no scores for a scored question")
        return result.scored, result.stats

    def _look(
        self, model: ModelIdentity, doc_id: int, field: TemplateField, choice: PageChoice, emit: ExtractionSink
    ) -> tuple[Look, GenerationStats]:
        """The field's plain question, answered as in the chat (greedy, so a rerun answers alike)."""
        prepared = self._prepare(doc_id, lambda documents: look_messages(documents, field, choice), choice, LOOK_TOKENS)
        text, stats = self._generate(model, prepared, prepared.request(sampling=_greedy(LOOK_TOKENS)), emit)
        return Look(field.plain_question, text.strip()), stats

    def _ask(
        self,
        model: ModelIdentity,
        doc_id: int,
        asks: list[FieldAsk],
        choice: PageChoice,
        emit: ExtractionSink,
        look: Look | None = None,
        *,
        decided: bool = False,
    ) -> tuple[dict[str, Any], GenerationStats, tuple[str, ...]]:
        schema = self._schema(asks, decided=decided)
        sampling = _greedy(max_output_bytes(schema) + 2)
        prepared = self._prepare(
            doc_id, lambda documents: extraction_messages(documents, asks, choice, look), choice, sampling.max_tokens
        )
        request = prepared.request(sampling=sampling, json_schema=json.dumps(schema))
        text, stats = self._generate(model, prepared, request, emit)
        if stats.stop_reason == "length":
            return {}, stats, (CUT_OFF,)
        try:
            raw = json.loads(text, strict=False)  # the grammar allows raw control characters in strings
        except json.JSONDecodeError:
            return {}, stats, (BAD_OUTPUT,)
        if schema_errors(schema, raw):
            return {}, stats, (BAD_OUTPUT,)
        return raw, stats, ()

    def _store(self, run_id: int, cells: list[Cell], raw: dict[str, Any], stats: GenerationStats) -> None:
        share = len(cells)
        rows = [
            {
                "document_id": cell.document_id,
                "field_key": cell.field_key,
                "found": int(cell.found),
                "value": cell.value,
                "quote": cell.quote,
                "cited": cell.cited,
                "page": cell.page,
                "label": cell.label,
                "t_seconds": cell.t_seconds,
                "quote_status": cell.quote_status,
                "quote_score": cell.quote_score,
                "flags": list(cell.flags),
                "verdict": cell.verdict,
                "passage": cell.passage,
                "score": cell.score,
                "threshold": cell.threshold,
                "decided_by": cell.decided_by,
                "confidence": cell.confidence,
                "raw": json.dumps(raw.get(cell.field_key), ensure_ascii=False),
                # One request answers the whole group; its cost is shared out over the cells.
                "prompt_tokens": stats.prompt_tokens,
                "cached_tokens": stats.cached_tokens,
                "completion_tokens": stats.completion_tokens // share,
                "prefill_ms": round(stats.prefill_ms / share, 1),
                "generate_ms": round(stats.generate_ms / share, 1),
            }
            for cell in cells
        ]
        self.store.add_cells(run_id, rows)

    # -- reading back ----------------------------------------------------------------------------
    def table(self, run_id: int, document_ids: list[int] | None = None) -> ExtractionTable:
        return load_table(self.ctx, run_id, document_ids)


def load_evidence(ctx: AppContext, run_id: int, document_id: int, field_key: str) -> Evidence:
    row = ExtractionStore(ctx.db).cell(run_id, document_id, field_key)
    if row is None:
        raise NotFound(f"run {run_id} has no value for {field_key!r} in document {document_id}")
    info = load_run_info(ctx, run_id)
    yes_no = any(f.yes_no for f in info.template.fields if f.key == field_key)
    cell = _row_to_cell(row, yes_no)
    # What to mark: the model's own words when they are on the page, else the words that support the cell.
    mark = cell.quote if cell.verified else cell.passage
    bbox = None
    if mark and cell.page is not None:
        from app.citations.quotes import quote_in

        opening = mark[:80]
        for seg in ctx.library.segments(document_id):
            if seg.page == cell.page and seg.bbox and quote_in(opening, seg.text):
                bbox = seg.bbox
                break
    title = ctx.library.get(document_id).title
    return Evidence(
        document_id, title, cell.page, cell.label, cell.t_seconds, mark or cell.quote, bool(mark), bbox, cell.verdict
    )


_QUESTION_TOKENS = 160  # a plain question (a template's limit is 400 characters) in its chat turn
# Three offered passages of the longest kind the search returns: what a yes/no question may add.
_LONGEST_OFFER = tuple(Passage(1, None, "word " * 64) for _ in range(3))


_NOTHING = GenerationStats(0, 0, 0, 0.0, 0.0, 0, "not asked")  # what a field left unasked cost
SCORED = "scored"  # where a cell's stored raw answer keeps its scored decision


def absent_cell(document_id: int, field: TemplateField, flags: tuple[str, ...]) -> Cell:
    """Not there: a yes/no clause absent, a short answer not stated."""
    if field.yes_no:
        return Cell(document_id, field.key, False, "no", flags=flags, yes_no=True)
    return not_stated_cell(document_id, field, flags)


def _with_decision(cell: Cell, decision: Decision) -> Cell:
    return dataclasses.replace(
        cell,
        score=decision.score,
        threshold=decision.threshold,
        decided_by=decision.decided_by,
        confidence=decision.confidence,
    )


def _decision_record(decision: Decision) -> dict[str, Any]:
    return {"there": decision.there, "score": decision.score, "threshold": decision.threshold,
            "by": decision.decided_by, "confidence": decision.confidence}  # fmt: skip


def _greedy(max_tokens: int) -> Sampling:
    # Greedy, so a rerun answers alike, and without a presence penalty: JSON repeats its punctuation by design.
    return Sampling(temperature=0.0, top_p=1.0, top_k=1, min_p=0.0, presence_penalty=0.0, max_tokens=max_tokens)


def _both(look: GenerationStats, form: GenerationStats) -> GenerationStats:
    """What a short answer's two requests cost together."""
    return dataclasses.replace(
        form,
        prompt_tokens=look.prompt_tokens + form.prompt_tokens,
        cached_tokens=look.cached_tokens + form.cached_tokens,
        completion_tokens=look.completion_tokens + form.completion_tokens,
        prefill_ms=look.prefill_ms + form.prefill_ms,
        generate_ms=look.generate_ms + form.generate_ms,
        ttft_ms=look.ttft_ms + form.ttft_ms,
        drafted_tokens=look.drafted_tokens + form.drafted_tokens,
        accepted_tokens=look.accepted_tokens + form.accepted_tokens,
        draft_note="" if look.drafted_tokens or form.drafted_tokens else form.draft_note,
    )


def _groups(fields: list[TemplateField], size: int) -> Iterator[list[TemplateField]]:
    """Yes/no clauses in runs of at most `size` per request; a short answer alone (its plain
    question comes first, in its own conversation)."""
    group: list[TemplateField] = []
    for f in fields:
        if group and (len(group) >= size or not (f.yes_no and group[-1].yes_no)):
            yield group
            group = []
        group.append(f)
    if group:
        yield group

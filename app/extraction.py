"""Run an extraction template over documents: JSON-constrained answers, verified quotes, stored cells.

Each request is the chat prompt with the same system + document prefix (so the engine's state
cache serves chat and extraction alike) and a user turn naming a group of fields. The answer is
constrained by a JSON schema (app.extraction_schema); each field's quote is checked against the
document text (app.quotes). Cells are committed per request, so an interrupted run resumes where
it stopped: fields already stored are never asked again.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.audit import audited_settings
from app.citations import DocumentIndex, parse_timestamp, resolve_page
from app.clock import now_iso
from app.context import AppContext
from app.db import insert_row
from app.errors import Cancelled, FolioError, NotFound
from app.extraction_schema import group_schema, max_output_bytes, schema_errors
from app.models import ModelRecord
from app.quotes import find_quote
from app.session import Prepared, Progress, Session, progress_of
from app.templates import Template, TemplateField, TemplateStore
from assets import read_text
from inference.chat_format import Message
from inference.engine_api import Sampling
from inference.events import Finished, GenerationStats, TokenText
from inference.prompt import PromptDocument, build_messages
from ingest.document import Anchor

# Flags a cell can carry. A cell without flags is a found value whose quote was verified.
CUT_OFF = "cut_off"  # the answer did not finish within the context
BAD_OUTPUT = "bad_output"  # the answer did not parse (should not happen under the grammar)
NO_QUOTE = "no_quote"  # a value without a supporting quote
QUOTE_NOT_FOUND = "quote_not_found"  # the quote is not in the document
BAD_PAGE = "page_not_in_document"  # the cited page or time does not exist
PAGE_CORRECTED = "page_corrected"  # the quote is on another page than the one cited


@dataclass(frozen=True)
class Cell:
    document_id: int
    field_key: str
    found: bool
    value: str = ""
    quote: str = ""
    cited: str = ""  # the page/time as the model wrote it
    page: int | None = None  # where the evidence is: verified quote's page, else the cited page
    label: str | None = None
    t_seconds: float | None = None
    quote_status: str = "none"  # exact | fuzzy | not_found | empty | none
    quote_score: float = 0.0
    flags: tuple[str, ...] = ()

    @property
    def verified(self) -> bool:
        return self.quote_status in ("exact", "fuzzy")

    @property
    def anchor_text(self) -> str:
        if self.t_seconds is not None:
            return Anchor(t_seconds=self.t_seconds).marker()
        if self.page is not None:
            return Anchor(page=self.page, label=self.label).marker()
        return ""

    @property
    def display(self) -> str:
        return self.value if self.found else "not found"

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["flags"] = list(self.flags)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Cell:
        values = {k: raw[k] for k in cls.__dataclass_fields__}
        values["flags"] = tuple(values["flags"])
        values["found"] = bool(values["found"])
        return cls(**values)


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

    @property
    def fields(self) -> tuple[TemplateField, ...]:
        return self.run.template.fields

    def cell(self, document_id: int, field_key: str) -> Cell | None:
        return self.cells.get((document_id, field_key))


@dataclass(frozen=True)
class Evidence:
    """What a table cell opens: the document, the page or time, and the passage to highlight."""

    document_id: int
    title: str
    page: int | None
    label: str | None
    t_seconds: float | None
    quote: str
    verified: bool
    bbox: tuple[float, float, float, float] | None  # the text block holding the quote, when known


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


@dataclass(frozen=True)
class Unit:
    """A stretch of a document the model can cite: one page, or one time stamp of a video."""

    page: int | None
    label: str | None
    t_seconds: float | None
    text: str


def document_units(ctx: AppContext, document_id: int) -> list[Unit]:
    units: list[Unit] = []
    for seg in ctx.library.segments(document_id):
        if not seg.text:
            continue
        last = units[-1] if units else None
        if last and last.page == seg.page and last.t_seconds == seg.t_seconds:
            units[-1] = dataclasses.replace(last, text=f"{last.text}\n{seg.text}")
        else:
            units.append(Unit(seg.page, seg.label, seg.t_seconds, seg.text))
    return units


_CITED_PREFIX_RE = re.compile(r"^\s*\[?\s*(?:pages?|pp?\.?)?\s*", re.IGNORECASE)


def resolve_cited(cited: str, units: list[Unit], index: DocumentIndex) -> list[int]:
    """Indexes of the units a cited marker ('4', 'p. 4', '[p. iv]', 't 00:01:23') points to."""
    text = cited.strip().strip("[]").strip()
    if not text:
        return []
    time_match = re.fullmatch(r"t?\s*(\d{1,2}(?::\d{1,2}){1,2})", text, re.IGNORECASE)
    if time_match:
        seconds = parse_timestamp(time_match.group(1))
        if seconds is None:
            return []
        timed = [(i, u.t_seconds) for i, u in enumerate(units) if u.t_seconds is not None]
        before = [i for i, t in timed if t is not None and t <= seconds + 0.5]
        return before[-1:] if before else []
    label = _CITED_PREFIX_RE.sub("", text).strip().rstrip(".")
    page = resolve_page(label, index) if label else None
    return [i for i, u in enumerate(units) if page is not None and u.page == page]


def _clean(text: str) -> str:
    # The grammar allows any \uXXXX escape, so a lone surrogate could arrive; SQLite cannot store it.
    return text.encode("utf-8", "replace").decode("utf-8").strip()


def verify_cell(
    document_id: int, key: str, raw: Any, units: list[Unit], index: DocumentIndex, threshold: float
) -> Cell:
    if raw is None:
        return Cell(document_id, key, found=False)
    value, quote, cited = (_clean(raw[k]) for k in ("value", "quote", "page"))
    flags: list[str] = []
    cited_units = resolve_cited(cited, units, index)
    if cited and not cited_units:
        flags.append(BAD_PAGE)
    match = find_quote(quote, [u.text for u in units], cited_units, threshold)
    if match.status == "empty":
        flags.append(NO_QUOTE)
    elif not match.verified:
        flags.append(QUOTE_NOT_FOUND)
    elif cited_units and match.unit not in cited_units:
        flags.append(PAGE_CORRECTED)
    where = match.unit if match.verified else (cited_units[0] if cited_units else None)
    unit = units[where] if where is not None else None
    return Cell(
        document_id,
        key,
        found=True,
        value=value,
        quote=quote,
        cited=cited,
        page=unit.page if unit else None,
        label=unit.label if unit else None,
        t_seconds=unit.t_seconds if unit else None,
        quote_status=match.status,
        quote_score=round(match.score, 4),
        flags=tuple(flags),
    )


def field_lines(fields: list[TemplateField]) -> str:
    return "\n".join(f'- "{f.key}": {f.name}' + (f" - {f.description}" if f.description else "") for f in fields)


def extraction_messages(documents: list[PromptDocument], fields: list[TemplateField]) -> list[Message]:
    """The chat messages for one request: the very system + document turn a chat would start with."""
    user = read_text("prompts", "extract.md").strip().replace("{fields}", field_lines(fields))
    return build_messages(read_text("prompts", "answer.md"), documents, [], user)


@dataclass(frozen=True)
class ModelId:
    """Who answers: a local model (by its sha256) or a model server (by its name, weights unknown)."""

    label: str
    key: str  # what a run is keyed on: the local model's sha256, or 'server:<label>'
    sha256: str | None
    demo: bool
    record: ModelRecord | None


def _row_to_cell(row: dict[str, Any]) -> Cell:
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
    )


def load_run_info(ctx: AppContext, run_id: int) -> RunInfo:
    rows = list(ctx.db.table("extraction_runs").rows_where("id = ?", [run_id]))
    if not rows:
        raise NotFound(f"no extraction run with id {run_id}")
    r = rows[0]
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
    )


def load_run_documents(ctx: AppContext, run_id: int) -> list[int]:
    rows = ctx.db.execute(
        "SELECT document_id FROM extraction_run_documents WHERE run_id = ? ORDER BY position", [run_id]
    ).fetchall()
    return [int(r[0]) for r in rows]


def load_table(ctx: AppContext, run_id: int, document_ids: list[int] | None = None) -> ExtractionTable:
    info = load_run_info(ctx, run_id)
    ids = document_ids if document_ids is not None else load_run_documents(ctx, run_id)
    docs = []
    for doc_id in ids:
        d = ctx.library.get(doc_id)
        docs.append(TableDocument(d.id, d.title, d.sha256, d.source_path))
    cells: dict[tuple[int, str], Cell] = {}
    wanted = set(ids)
    for row in ctx.db.table("extraction_cells").rows_where("run_id = ?", [run_id]):
        if row["document_id"] in wanted:
            cell = _row_to_cell(row)
            cells[(cell.document_id, cell.field_key)] = cell
    return ExtractionTable(info, docs, cells)


class ExtractionService:
    """Runs one extraction at a time on the engine it is given (shared with chat in the window)."""

    def __init__(self, ctx: AppContext, session: Session | None = None) -> None:
        self.ctx = ctx
        self.session = session or Session.for_context(ctx)  # its engine starts on the first request
        # The engine's own cancel flag is reset by each generation: a Cancel pressed between two
        # fields would be lost, so the run keeps its own.
        self._stop = threading.Event()
        self.templates = TemplateStore.for_config(ctx.paths.config_dir)

    def cancel(self) -> None:
        self._stop.set()
        self.session.cancel()

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
        model = self.model_id()
        run_id: int | None = None
        if resume:
            row = self.ctx.db.execute(
                "SELECT id FROM extraction_runs WHERE template_sha256 = ? AND model_sha256 = ? "
                "ORDER BY id DESC LIMIT 1",
                [template.sha256, model.key],
            ).fetchone()
            run_id = int(row[0]) if row else None
        now = now_iso()
        with self.ctx.db.atomic():
            if run_id is None:
                run_id = insert_row(
                    self.ctx.db,
                    "extraction_runs",
                    {
                        "template_key": template.key,
                        "template_name": template.name,
                        "template_version": template.version,
                        "template_sha256": template.sha256,
                        "template_json": template.to_json(),
                        "model": model.label,
                        "model_sha256": model.key,
                        "settings": json.dumps(dataclasses.asdict(self.ctx.settings.extraction)),
                        "status": "running",
                        "created_at": now,
                        "updated_at": now,
                    },
                )
            start = self.ctx.db.execute(
                "SELECT coalesce(max(position), 0) FROM extraction_run_documents WHERE run_id = ?", [run_id]
            ).fetchone()[0]
            for offset, doc_id in enumerate(dict.fromkeys(document_ids), start=1):
                self.ctx.db.execute(
                    "INSERT OR IGNORE INTO extraction_run_documents(run_id, document_id, position) VALUES (?, ?, ?)",
                    [run_id, doc_id, start + offset],
                )
        return run_id

    def run_info(self, run_id: int) -> RunInfo:
        return load_run_info(self.ctx, run_id)

    def runs(self) -> list[RunInfo]:
        ids = [r[0] for r in self.ctx.db.execute("SELECT id FROM extraction_runs ORDER BY id DESC")]
        return [self.run_info(i) for i in ids]

    def run_documents(self, run_id: int) -> list[int]:
        return load_run_documents(self.ctx, run_id)

    def stored_keys(self, run_id: int, document_id: int) -> set[str]:
        rows = self.ctx.db.execute(
            "SELECT field_key FROM extraction_cells WHERE run_id = ? AND document_id = ?", [run_id, document_id]
        ).fetchall()
        return {r[0] for r in rows}

    def run(
        self, run_id: int, document_ids: list[int] | None = None, on_event: ExtractionSink | None = None
    ) -> RunFinished:
        """Fill every missing cell of the run for these documents (default: all of the run's)."""
        self._stop.clear()
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

    def _set_status(self, run_id: int, status: str) -> None:
        with self.ctx.db.atomic():
            self.ctx.db.table("extraction_runs").update(run_id, {"status": status, "updated_at": now_iso()})

    def _run_document(
        self,
        info: RunInfo,
        model: ModelId,
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
        self.ctx.audit.record(
            "extraction",
            documents=[doc.sha256],
            model_sha256=model.sha256,
            settings=audited_settings(self.ctx.settings),
            details={
                "run_id": info.id,
                "template": info.template.key,
                "template_version": info.template.version,
                "template_sha256": info.template_sha256,
                "fields": [f.key for f in pending],
                "model": model.label,
            },
        )
        units = document_units(self.ctx, doc_id)
        index = DocumentIndex(
            label_to_page=self.ctx.library.page_labels(doc_id),
            page_count=doc.page_count,
            duration_s=doc.duration_s,
            page_text=lambda _p: "",
        )
        settings = self.ctx.settings.extraction
        group = max(1, settings.fields_per_request)
        for start in range(0, len(pending), group):
            fields = pending[start : start + group]
            if self._stop.is_set():
                raise Cancelled()
            raw, stats, flags = self._ask(model, doc_id, fields, emit)
            cells = []
            for f in fields:
                if flags:
                    cells.append(Cell(doc_id, f.key, found=False, flags=tuple(flags)))
                else:
                    cells.append(verify_cell(doc_id, f.key, raw[f.key], units, index, settings.quote_threshold))
            self._store(info.id, cells, raw, stats)
            done += len(cells)
            emit(CellsStored(cells, done, total))
        with self.ctx.db.atomic():
            self.ctx.db.execute(
                "UPDATE extraction_run_documents SET status = 'done' WHERE run_id = ? AND document_id = ?",
                [info.id, doc_id],
            )
        return done

    def model_id(self) -> ModelId:
        served = self.session.served_label()
        if served is not None:  # reach the server (and learn its model) before storing anything
            return ModelId(served, f"server:{served}", None, False, None)
        record = self.ctx.models.active(self.ctx.settings)
        return ModelId(record.label, record.sha256, record.sha256, record.is_starter, record)

    def _prepare(self, doc_id: int, fields: list[TemplateField], max_tokens: int) -> Prepared:
        # Chat's own prefix, planner and loaded context, so switching between chat and extraction never reloads.
        return self.session.prepare(
            self.ctx,
            [doc_id],
            lambda documents: extraction_messages(documents, fields),
            think=False,
            answer_tokens=max_tokens,
        )

    def _ask(
        self, model: ModelId, doc_id: int, fields: list[TemplateField], emit: ExtractionSink
    ) -> tuple[dict[str, Any], GenerationStats, list[str]]:
        settings = self.ctx.settings.extraction
        schema = group_schema([f.key for f in fields], settings.value_chars, settings.quote_chars)
        # Greedy and without a presence penalty: JSON repeats its punctuation by design.
        sampling = Sampling(
            temperature=0.0,
            top_p=1.0,
            top_k=1,
            min_p=0.0,
            presence_penalty=0.0,
            max_tokens=max_output_bytes(schema) + 2,
        )
        prepared = self._prepare(doc_id, fields, sampling.max_tokens)
        request = prepared.request(sampling=sampling, json_schema=json.dumps(schema))
        pieces: list[str] = []
        stats: GenerationStats | None = None
        for event in self.session.generate(prepared.config, request):
            if isinstance(event, TokenText):
                pieces.append(event.text)
            elif isinstance(event, Finished):
                stats = event.stats
            else:
                progress = progress_of(event, model.label)
                if progress is not None:
                    emit(progress)
        assert stats is not None
        if stats.stop_reason == "cancelled":
            raise Cancelled()
        text = "".join(pieces)
        if stats.stop_reason == "length":
            return {}, stats, [CUT_OFF]
        try:
            raw = json.loads(text, strict=False)  # the grammar allows raw control characters in strings
        except json.JSONDecodeError:
            return {}, stats, [BAD_OUTPUT]
        if schema_errors(schema, raw):
            return {}, stats, [BAD_OUTPUT]
        return raw, stats, []

    def _store(self, run_id: int, cells: list[Cell], raw: dict[str, Any], stats: GenerationStats) -> None:
        now = now_iso()
        share = len(cells)
        with self.ctx.db.atomic():
            for cell in cells:
                self.ctx.db.table("extraction_cells").insert(
                    {
                        "run_id": run_id,
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
                        "flags": json.dumps(list(cell.flags)),
                        "raw": json.dumps(raw.get(cell.field_key), ensure_ascii=False),
                        # One request answers the whole group; its cost is shared out over the cells.
                        "prompt_tokens": stats.prompt_tokens,
                        "cached_tokens": stats.cached_tokens,
                        "completion_tokens": stats.completion_tokens // share,
                        "prefill_ms": round(stats.prefill_ms / share, 1),
                        "generate_ms": round(stats.generate_ms / share, 1),
                        "created_at": now,
                    }
                )
            self.ctx.db.execute("UPDATE extraction_runs SET updated_at = ? WHERE id = ?", [now, run_id])

    # -- reading back ----------------------------------------------------------------------------
    def table(self, run_id: int, document_ids: list[int] | None = None) -> ExtractionTable:
        return load_table(self.ctx, run_id, document_ids)


def load_evidence(ctx: AppContext, run_id: int, document_id: int, field_key: str) -> Evidence:
    row = list(
        ctx.db.table("extraction_cells").rows_where(
            "run_id = ? AND document_id = ? AND field_key = ?", [run_id, document_id, field_key]
        )
    )
    if not row:
        raise NotFound(f"run {run_id} has no value for {field_key!r} in document {document_id}")
    cell = _row_to_cell(row[0])
    bbox = None
    if cell.verified and cell.page is not None:
        from app.quotes import quote_in

        opening = cell.quote[:80]
        for seg in ctx.library.segments(document_id):
            if seg.page == cell.page and seg.bbox and quote_in(opening, seg.text):
                bbox = seg.bbox
                break
    title = ctx.library.get(document_id).title
    return Evidence(document_id, title, cell.page, cell.label, cell.t_seconds, cell.quote, cell.verified, bbox)

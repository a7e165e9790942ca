"""`folio extract`, `search`, `export`, `audit` and `templates`: turning answers into work product."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli import catalogue
from app.cli.matters import add_matter_flag
from app.errors import USER_ERRORS, FolioError, one_line

if TYPE_CHECKING:
    from app.context import AppContext
    from app.extraction.runner import ExtractionEvent, ExtractionTable

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    ext = sub.add_parser(
        "extract",
        help="fill a template's fields for documents or folders",
        description="Run an extraction template over files or folders (added to the library as needed). "
        "Resumable: run it again and documents already done are skipped.",
    )
    ext.add_argument("paths", nargs="+", metavar="PATH", help="files, folders, or document ids")
    ext.add_argument("--template", "-t", required=True, metavar="KEY", help="template key (see: folio templates list)")
    ext.add_argument("--out", "-o", metavar="FILE", help="also write the table to FILE (.csv, .xlsx or .json)")
    ext.add_argument("--force", action="store_true", help="replace --out if it exists")
    ext.add_argument("--new", action="store_true", help="start a new run instead of resuming the last one")
    ext.add_argument(
        "--json", action="store_true", help="print the table as JSON (every cell with its evidence and confidence)"
    )

    sub.add_parser("extractions", help="list extraction runs", description="List extraction runs.")

    search = sub.add_parser(
        "search", help="search documents and conversations", description="Full-text search, best matches first."
    )
    search.add_argument("query", help='words to find; "quoted phrase", prefix*')
    search.add_argument("--limit", type=int, default=20, help="at most this many hits (default 20)")
    where = search.add_mutually_exclusive_group()
    where.add_argument("--documents", action="store_true", help="search document text only")
    where.add_argument("--conversations", action="store_true", help="search conversations only")
    add_matter_flag(search)

    export = sub.add_parser(
        "export",
        help="export a table, a conversation or a playbook review",
        description="Write an extraction table, a conversation or a playbook review.",
    )
    esub = export.add_subparsers(dest="export_command", metavar="WHAT", required=True)
    etab = esub.add_parser(
        "table", help="an extraction run as CSV, XLSX or JSON", description="Export an extraction run's table."
    )
    etab.add_argument("run", type=int, metavar="RUN", help="run id (see: folio extractions)")
    etab.add_argument("--out", "-o", metavar="FILE", help="file to write; the extension picks the format")
    etab.add_argument("--format", choices=["csv", "xlsx", "json"], help="format when --out is not given")
    etab.add_argument("--force", action="store_true", help="replace FILE if it exists")
    econv = esub.add_parser(
        "conversation", help="a conversation as Markdown or PDF", description="Export a conversation with citations."
    )
    econv.add_argument("conversation", type=int, metavar="ID")
    econv.add_argument("--out", "-o", metavar="FILE", help="file to write; the extension picks the format")
    econv.add_argument("--format", choices=["md", "pdf"], help="format when --out is not given")
    econv.add_argument("--force", action="store_true", help="replace FILE if it exists")

    erev = esub.add_parser(
        "review",
        help="a playbook review as Markdown, PDF or Word with tracked changes",
        description="Export a playbook review: the report (.md, .pdf), or a .docx proposing the standard wording as "
        "tracked changes (the accepted findings; every finding that falls short when none is reviewed yet).",
    )
    erev.add_argument("review", type=int, metavar="ID", help="review id (see: folio reviews)")
    erev.add_argument(
        "--out", "-o", required=True, metavar="FILE", help="file to write; the extension picks the format"
    )
    erev.add_argument("--force", action="store_true", help="replace FILE if it exists")

    audit = sub.add_parser("audit", help="check or export the audit log", description="The hash-chained audit log.")
    asub = audit.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    asub.add_parser("verify", help="check that no entry was changed or deleted", description="Verify the chain.")
    aexp = asub.add_parser("export", help="write the log as JSON Lines or CSV", description="Export the audit log.")
    aexp.add_argument("--out", "-o", metavar="FILE", help="file to write (default: standard output)")
    aexp.add_argument("--format", choices=["jsonl", "csv"], help="default: from --out's extension, else jsonl")
    aexp.add_argument("--force", action="store_true", help="replace FILE if it exists")

    tpl = sub.add_parser("templates", help="extraction templates", description="List, show and import templates.")
    tsub = catalogue.add_actions(tpl, "template", "fields")
    tdel = tsub.add_parser("delete", help="delete a user template", description="Delete a user template.")
    tdel.add_argument("key", metavar="KEY")

    return {
        "extract": cmd_extract,
        "extractions": cmd_extractions,
        "search": cmd_search,
        "export": cmd_export,
        "audit": cmd_audit,
        "templates": cmd_templates,
    }


# -- extract -------------------------------------------------------------------------------------
def collect_files(paths: list[str]) -> tuple[list[Path], list[str], int]:
    """Files named directly, plus documents found in folders (sniffed by content). Returns
    (files, references that are library ids, number of other files skipped in folders)."""
    from ingest.sniff import sniff

    files: list[Path] = []
    ids: list[str] = []
    skipped = 0
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for candidate in sorted(p for p in path.rglob("*") if p.is_file()):
                if any(part.startswith(".") for part in candidate.relative_to(path).parts):
                    continue
                try:
                    kind = sniff(candidate).family
                except OSError:
                    kind = "unknown"
                if kind == "unknown":
                    skipped += 1
                else:
                    files.append(candidate)
        elif path.exists() or not raw.isdigit():
            files.append(path)
        else:
            ids.append(raw)
    return files, ids, skipped


class Progress:
    """A one-line progress bar on stderr when it is a terminal, else a line per document."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.title = ""
        self.position = ""

    def show(self, done: int, total: int, resumed_from: int = 0) -> None:
        if not self.tty:
            return
        width = 24
        filled = int(width * done / total) if total else width
        elapsed = time.monotonic() - self.started
        fresh = done - resumed_from
        eta = f", ETA {elapsed / fresh * (total - done):.0f} s" if fresh > 0 and done < total else ""
        bar = "#" * filled + "-" * (width - filled)
        line = f"\r[{bar}] {done}/{total} fields{eta}  {self.position} {self.title}"[:150]
        print(line.ljust(80), end="", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        if self.tty:
            print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
        print(text, file=sys.stderr, flush=True)


def cmd_extract(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.engine.progress import Progress as EngineProgress
    from app.export import Exporter, FileExists, format_of
    from app.extraction.runner import CellsStored, DocumentStarted, ExtractionService, RunFinished, RunStarted
    from app.models.registry import STARTER_NOTICE

    out = Path(args.out).expanduser() if args.out else None
    if out is not None:
        format_of(out, ("csv", "xlsx", "json"))
        if out.exists() and not args.force:
            raise FileExists(f"{out} already exists; choose another name or replace it (--force)")
    from app.extraction.templates import TemplateStore

    template = TemplateStore.for_config(ctx.paths.config_dir).get(args.template)
    files, ids, skipped = collect_files(args.paths)
    doc_ids: list[int] = [ctx.library.resolve(r).id for r in ids]
    failures = 0
    for f in files:
        try:
            doc_ids.append(ctx.library.add(f, limits=ctx.limits).document.id)
        except USER_ERRORS as exc:
            failures += 1
            print(f"folio: error: {one_line(exc)}", file=sys.stderr)
    doc_ids = list(dict.fromkeys(doc_ids))
    if skipped:
        print(f"... skipped {skipped} file(s) in folders that are not documents Folio reads", file=sys.stderr)
    if not doc_ids:
        raise FolioError("no documents to extract from")
    service = ExtractionService(ctx)
    progress = Progress()
    state = {"resumed": 0}

    def on_event(event: ExtractionEvent) -> None:
        if isinstance(event, RunStarted):
            state["resumed"] = event.cells_done
            if event.demo_model:
                progress.note(f"note: {STARTER_NOTICE}")
            again = f", {event.cells_done} already done" if event.cells_done else ""
            progress.note(
                f"... run {event.run_id}: {event.template_name}, {event.documents} document(s), "
                f"{event.cells_total} fields{again}"
            )
            progress.show(event.cells_done, event.cells_total, event.cells_done)
        elif isinstance(event, DocumentStarted):
            progress.position = f"doc {event.position}/{event.count}"
            progress.title = event.title
            if not event.pending_fields:
                progress.note(f"... {event.title}: already done, skipped")
        elif isinstance(event, CellsStored):
            progress.show(event.cells_done, event.cells_total, state["resumed"])
            if not progress.tty and event.cells:
                progress.note(f"... {progress.position} {progress.title}: {event.cells_done}/{event.cells_total}")
        elif isinstance(event, EngineProgress) and not event.reading:
            progress.note(f"... {event.text}")
        elif isinstance(event, RunFinished) and progress.tty:
            print(file=sys.stderr)

    try:
        run_id = service.start_run(template, doc_ids, resume=not args.new)
        finished = service.run(run_id, doc_ids, on_event=on_event)
    except KeyboardInterrupt:
        service.cancel()
        print(file=sys.stderr)
        print("folio: stopped; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        service.close()
    table = service.table(run_id, doc_ids)
    summary = f"run {run_id}: {len(table.documents)} document(s) x {len(table.fields)} fields; {table_summary(table)}"
    if args.json:
        from app.export import table_json

        sys.stdout.write(table_json(table).decode("utf-8"))
        print(summary, file=sys.stderr)
    else:
        print(summary)
    if out is not None:
        result = Exporter(ctx).table(run_id, out, document_ids=doc_ids, overwrite=args.force)
        print(f"wrote {result.path} ({result.fmt}, sha256 {result.sha256})")
    return 1 if failures or finished.status != "complete" else 0


def table_summary(table: ExtractionTable) -> str:
    """'12 with a value (9 quoted, 1 supported, 1 on another page, 1 unsupported), 29 not stated'."""
    from collections import Counter

    from app.extraction.cells import VERDICT_TEXT, VERDICTS

    cells = list(table.cells.values())
    verdicts = Counter(c.verdict for c in cells if c.found)
    checks = ", ".join(f"{verdicts[v]} {VERDICT_TEXT[v]}" for v in VERDICTS if verdicts[v])
    empty = sum(1 for c in cells if not c.found)
    unsure = sum(1 for c in cells if c.sureness in ("check", "low"))
    to_check = f"; {unsure} to check by confidence" if unsure else ""
    return (
        f"{sum(verdicts.values())} with a value" + (f" ({checks})" if checks else "") + f", {empty} without{to_check}"
    )


def cmd_extractions(ctx: AppContext, _args: argparse.Namespace) -> int:
    from app.extraction.runner import ExtractionService
    from app.store.extraction import ExtractionStore

    runs = ExtractionService(ctx).runs()
    store = ExtractionStore(ctx.db)
    if not runs:
        print("No extraction runs yet. Start one with: folio extract --template contract_review PATH")
    for r in runs:
        docs, cells = store.size(r.id)
        print(
            f"{r.id:>4}  {r.updated_at}  {r.status:<10} {r.template.key} v{r.template.version}  "
            f"{docs} doc(s), {cells}/{docs * len(r.template.fields)} fields  {r.model}"
        )
    return 0


# -- search --------------------------------------------------------------------------------------
def cmd_search(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.search import Search

    hits = Search(ctx.db).query(
        args.query,
        limit=max(1, args.limit),
        documents=not args.conversations,
        conversations=not args.documents,
        matter_id=ctx.matter_id,
    )
    if not hits:
        print("No matches.")
        return 0
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("[", "]")
    for hit in hits:
        where = hit.anchor + (f" {hit.title}" if hit.kind == "document" else f" ({hit.title})")
        print(f"{where}\n    {hit.marked(bold, plain)}")
    return 0


# -- export --------------------------------------------------------------------------------------
def cmd_export(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.export import Exporter

    exporter = Exporter(ctx)
    if args.export_command == "review":
        result = exporter.review(args.review, Path(args.out).expanduser(), overwrite=args.force)
    elif args.export_command == "table":
        out = Path(args.out) if args.out else Path(exporter.default_name(run_id=args.run, fmt=args.format or "xlsx"))
        result = exporter.table(args.run, out.expanduser(), fmt=args.format if not args.out else None,
                                overwrite=args.force)  # fmt: skip
    else:
        name = exporter.default_name(conversation_id=args.conversation, fmt=args.format or "md")
        out = Path(args.out) if args.out else Path(name)
        result = exporter.conversation(
            args.conversation, out.expanduser(), fmt=args.format if not args.out else None, overwrite=args.force
        )
    print(f"wrote {result.path} ({result.fmt}, {result.size_bytes:,} bytes, sha256 {result.sha256})")
    return 0


# -- audit ---------------------------------------------------------------------------------------
def cmd_audit(ctx: AppContext, args: argparse.Namespace) -> int:

    log = ctx.audit
    if args.audit_command == "verify":
        checked = log.verify()
        if not checked.ok:
            raise FolioError(f"audit log check FAILED: {checked.problem}")
        print(f"audit log OK: {checked.entries} entries, head {checked.head_hash}")
        return 0
    from app.export import Exporter

    fmt = args.format or (Path(args.out).suffix.lstrip(".").lower() if args.out else "jsonl")
    if fmt not in ("jsonl", "csv"):
        raise FolioError("audit export writes .jsonl or .csv")
    if not args.out:
        sys.stdout.write(log.export(fmt).decode("utf-8"))
        return 0
    entries = len(log.entries())
    result = Exporter(ctx).audit_log(Path(args.out).expanduser(), fmt=fmt, overwrite=args.force)
    print(f"wrote {result.path} ({entries} entries, sha256 {result.sha256})")
    return 0


# -- templates -----------------------------------------------------------------------------------
def cmd_templates(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.extraction.templates import Template, TemplateField, TemplateStore

    fields = catalogue.Parts[Template, TemplateField](
        "fields", lambda t: t.fields, lambda f: f"{f.name}: {f.description}"
    )
    store = TemplateStore.for_config(ctx.paths.config_dir)
    if catalogue.run(store, fields, args.templates_command, args):
        return 0
    store.delete(args.key)
    print(f"deleted template {args.key}")
    return 0

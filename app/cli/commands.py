"""The `folio` command line. Errors are one line on stderr with a non-zero exit code."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app import __version__
from app.cli.checks import add_commands as add_check_commands
from app.cli.compare import add_commands as add_compare_commands
from app.cli.matters import add_commands as add_matter_commands
from app.cli.matters import add_matter_flag
from app.cli.passwords import ASK, PASSWORD_ENV
from app.cli.playbooks import add_commands as add_playbook_commands
from app.cli.reading import add_commands as add_reading_commands
from app.cli.redact import add_commands as add_redact_commands
from app.cli.work import add_commands as add_work_commands
from app.errors import FAULTS, USER_ERRORS, LibraryGone, one_line

if TYPE_CHECKING:
    from app.cli.passwords import Passwords
    from app.context import AppContext
    from app.models.registry import ModelRecord, ModelRegistry
    from app.store.conversations import MessageRow
    from app.store.library import AddResult, DocumentRow
    from inference.prompt import SourceBlock
    from ingest.limits import Limits
    from ingest.progress import ReadProgress


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="folio",
        description="Folio: ask questions about whole documents with a local model; answers cite pages.",
        epilog="folio --self-test [--model FILE] checks the installation in a temporary folder.",
    )
    p.add_argument("--version", action="version", version=f"folio {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    add = sub.add_parser(
        "add",
        help="add files (and every file in a folder) to the library",
        description="Add files to the library; a folder adds every file in it and its subfolders (hidden files "
        "and the operating system's Thumbs.db and desktop.ini are left out). An encrypted PDF's password is asked "
        "for on the terminal when "
        f"the file needs one, or read from {PASSWORD_ENV} or --password-file.",
    )
    add.add_argument("files", nargs="*", metavar="FILE", help="a file or a folder")
    add.add_argument(
        "--password",
        nargs="?",
        const=ASK,
        metavar="VALUE",
        help="ask for the password of encrypted PDFs (with no value); a VALUE here is visible to other users",
    )
    add.add_argument(
        "--password-file", metavar="FILE", help="read the password from the first line of FILE ('-': standard input)"
    )
    add.add_argument("--frames", type=int, metavar="N", help="most keyframes to keep from a video (default 24)")
    add_matter_flag(add)

    docs = sub.add_parser("list", help="list documents in the library", description="List the documents of a matter.")
    _json_flag(docs)
    add_matter_flag(docs)

    show = sub.add_parser("show", help="show one document", description="Show a document's details.")
    show.add_argument("document", metavar="DOC", help="document id or the path it was added from")
    what = show.add_mutually_exclusive_group()
    what.add_argument("--segments", action="store_true", help="print every segment with its anchor")
    what.add_argument(
        "--text", action="store_true", help="print the whole stored text with the page/time markers the model sees"
    )
    _json_flag(show)

    ask = sub.add_parser(
        "ask",
        help="ask a question about a document",
        description="Ask a question; the answer streams to stdout and is stored. Then each sentence's verdict "
        "(quoted, supported, wrong page, source added by Folio, partly supported, unsupported) follows in a footer.",
    )
    ask.add_argument("documents", nargs="+", metavar="DOC", help="document id(s) or path(s), then the question")
    ask.add_argument("--conversation", type=int, metavar="ID", help="continue this conversation")
    ask.add_argument(
        "--all",
        action="store_true",
        help="ask about every document of the matter (the current one, or --matter NAME); documents that do "
        "not fit together are answered one by one (--strategy passes unless another is given)",
    )
    add_matter_flag(ask)
    think = ask.add_mutually_exclusive_group()
    think.add_argument("--thinking", dest="thinking", action="store_true", default=None, help="let the model think")
    think.add_argument("--no-thinking", dest="thinking", action="store_false", help="answer without thinking")
    ask.add_argument("--max-tokens", type=_positive_int, metavar="N", help="longest answer, in tokens")
    ask.add_argument(
        "--pages",
        metavar="LIST",
        help="read only these pages of the one document asked about, e.g. 1-20,45 (the footer names them)",
    )
    ask.add_argument(
        "--strategy",
        choices=("passes", "search"),
        help="when the selection does not fit the model's context: read every page in passes (each document "
        "alone, a long one in windows of pages) and merge the answers, or read the pages a word search ranks "
        "highest for the question; the footer names the pages read",
    )
    ask.add_argument(
        "--timings",
        action="store_true",
        help="print one 'timings:' line to stderr (tokens read, tokens reused from a snapshot, seconds)",
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the answer, its citations and every claim with its verdict) instead of text",
    )

    plan = sub.add_parser(
        "plan",
        help="show the context and memory plan for documents",
        description="Show what Folio would choose (context size, KV cache type, threads, GPU layers) and the "
        "memory it predicts for these documents on this machine, and which Qwen3.5 tier fits.",
    )
    plan.add_argument("documents", nargs="*", metavar="DOC", help="document id(s) or path(s); none = full context")

    conv = sub.add_parser(
        "show-conversation", help="print a stored conversation", description="Print a conversation from the database."
    )
    conv.add_argument("conversation", type=int, metavar="ID")
    _json_flag(conv)

    convs = sub.add_parser(
        "conversations", help="list conversations", description="List the stored conversations of a matter."
    )
    _json_flag(convs)
    add_matter_flag(convs)

    models = sub.add_parser("models", help="manage models", description="Register and choose GGUF models.")
    msub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    madd = msub.add_parser("add", help="register a GGUF model", description="Register a GGUF (not copied).")
    madd.add_argument("path", metavar="PATH.gguf")
    madd.add_argument("--mmproj", metavar="PATH.gguf", help="the model's vision projector")
    madd.add_argument("--no-activate", action="store_true", help="register without making it the active model")
    mstarter = msub.add_parser(
        "add-starter",
        help="install the starter demo model from a file",
        description="Copy the starter model file (shipped beside the installer) into Folio, checking its sha256.",
    )
    mstarter.add_argument("path", metavar="PATH.gguf")
    _json_flag(msub.add_parser("list", help="list registered models", description="List registered models."))
    muse = msub.add_parser("use", help="choose the active model", description="Choose the active model.")
    muse.add_argument("model", metavar="MODEL", help="its number or name as folio models list shows them, or 'starter'")

    server = sub.add_parser(
        "server",
        help="use a model server on your network",
        description="Answer with an OpenAI-compatible model server (vLLM, SGLang, llama-server) instead of "
        "the local engine. Off by default; an API key, if needed, comes from FOLIO_SERVER_API_KEY.",
    )
    ssub = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    suse = ssub.add_parser("use", help="check a server and answer with it", description="Check and save a server.")
    suse.add_argument("url", metavar="URL", help="for example http://gpu-box.lan:8000")
    suse.add_argument("--model", default="", help="the served model's name (default: the first one listed)")
    suse.add_argument("--timeout", type=int, metavar="S", help="longest silence to accept from the server")
    ssub.add_parser("off", help="answer locally again", description="Stop using the model server.")
    ssub.add_parser("check", help="test the configured server", description="Connect to the configured server.")

    purge = sub.add_parser(
        "purge",
        help="remove documents for good",
        description="Remove documents with everything derived from them: pages, text and its search index, "
        "page images, model-state snapshots, conversations about them and their extraction cells. "
        "Recorded in the audit log (by sha256).",
    )
    purge.add_argument("documents", nargs="+", metavar="DOC", help="document id(s) or path(s)")
    purge.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    sub.add_parser("doctor", help="check the installation", description="Versions, paths, hardware, tools.")
    sub.add_parser("gui", help="open the desktop window", description="Open the Folio window.")
    _HANDLERS.update(add_work_commands(sub))
    _HANDLERS.update(add_compare_commands(sub))
    _HANDLERS.update(add_check_commands(sub))
    _HANDLERS.update(add_reading_commands(sub))
    _HANDLERS.update(add_redact_commands(sub))
    _HANDLERS.update(add_matter_commands(sub))
    _HANDLERS.update(add_playbook_commands(sub))
    return p


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output (JSON on stdout)")


def _print_json(value: object) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return _parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run a parsed command. The window ('gui') is started by the launcher in ui.entry, one layer up."""
    if args.command == "gui":
        print("folio: error: start the window with the installed 'folio' command or 'python -m ui'", file=sys.stderr)
        return 2
    from app.context import open_app

    try:
        ctx = open_app()
    except (*USER_ERRORS, *FAULTS) as exc:
        return _fail(exc)
    ctx.notice = lambda text: print(f"... {text}", file=sys.stderr, flush=True)
    try:
        if args.command != "matter":
            # --matter NAME, else the current matter (folio matter use), else Unfiled; a current matter that
            # is gone is an error only where the command works in one.
            ctx.use_matter(getattr(args, "matter", None), strict=hasattr(args, "matter"))
        handler = _HANDLERS[args.command]
        code = handler(ctx, args)
        ctx.check_still_there()
        sys.stdout.flush()  # a reader that went away shows up here for short output
        return code
    except BrokenPipeError:
        return _reader_gone()
    except (*USER_ERRORS, *FAULTS) as exc:
        return _fail(exc)
    except KeyboardInterrupt:
        print("folio: stopped", file=sys.stderr)
        return 130
    finally:
        _close(ctx)


def _close(ctx: AppContext) -> None:
    """Closing checkpoints the write-ahead log: on a full or vanished disk that can fail too, after
    the command's own line was printed; the data is safe in the log either way."""
    with contextlib.suppress(*FAULTS):
        ctx.close()


def _reader_gone() -> int:
    """`folio show 2 --segments | head`: the reader closed the pipe. Stop quietly, as Unix tools do.
    Whatever is still buffered goes to the null device, so Python's exit flush raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141  # 128 + SIGPIPE: what a shell reports for a tool the closed pipe stopped


def _fail(exc: BaseException) -> int:
    print(f"folio: error: {one_line(exc)}", file=sys.stderr)
    return 1


def _cmd_add(ctx: AppContext, args: argparse.Namespace) -> int:
    import dataclasses

    from app.cli.passwords import password_source

    limits = ctx.limits
    if args.frames is not None:
        if args.frames < 1:
            print("folio: error: --frames must be at least 1", file=sys.stderr)
            return 2
        limits = dataclasses.replace(limits, max_keyframes=args.frames)
    files = list(args.files)
    if args.password not in (None, ASK) and Path(args.password).is_file():
        # `folio add --password locked.pdf`: the flag took the file name as its value; the user
        # meant "ask me", not a password that happens to name a file.
        files.insert(0, args.password)
        args.password = ASK
    if not files:
        print("folio: error: give at least one FILE to add", file=sys.stderr)
        return 2
    from ingest.folders import files_in

    failures = 0
    folders = [f for f in files if Path(f).is_dir()]
    for folder in folders:
        if not files_in([folder]):
            failures += 1
            print(f"folio: error: {folder}: the folder holds no files to add", file=sys.stderr)
    files = files_in(files)
    passwords = password_source(args.password, args.password_file)
    added = already = 0
    for name in files:
        progress = PageProgress(Path(name).name)
        try:
            result = _add_one(ctx, name, passwords, limits, progress)
        except LibraryGone:
            progress.clear()
            raise  # no later file could be saved either: one line for the command
        except USER_ERRORS as exc:
            failures += 1
            progress.clear()
            print(f"folio: error: {one_line(exc)}", file=sys.stderr)
            continue
        progress.clear()
        if progress.kept:
            print(f"... resumed: {progress.kept} scanned page(s) kept from an interrupted reading", file=sys.stderr)
        doc = result.document
        added, already = added + result.created, already + (not result.created)
        verb = "added" if result.created else "already in library"
        if result.linked:
            from app.store.matters import Matters

            verb += f", now also in matter {Matters(ctx.db).by_id(ctx.matter_id).name!r}"
        print(f"{verb}: #{doc.id} {doc.title} ({_extent(doc)}, ~{doc.token_estimate:,} tokens)")
    if folders and files:  # a folder's files scroll past: the count says how they went (an empty folder: its line)
        not_added = len(files) - added - already
        print(f"{len(files)} file(s): {added} added, {already} already in the library, {not_added} not added")
    return 1 if failures else 0


def _add_one(ctx: AppContext, name: str, passwords: Passwords, limits: Limits, progress: PageProgress) -> AddResult:
    """Add one file; an encrypted PDF's password is asked for (up to TRIES times) when there is a terminal."""
    from app.cli.passwords import TRIES
    from app.errors import FolioError
    from ingest.errors import PasswordRequired

    password, asked = passwords.given, 0
    while True:
        try:
            return ctx.library.add(name, password=password, limits=limits, progress=progress)
        except PasswordRequired as exc:
            progress.clear()
            if not passwords.can_ask or asked == TRIES:
                raise FolioError(passwords.refused(one_line(exc))) from None
            if password is not None:
                print(f"folio: {one_line(exc)}", file=sys.stderr)
            password, asked = passwords.ask(Path(name).name), asked + 1
            if password is None:
                raise FolioError(f"{Path(name).name}: no password given, not added") from None
            progress.restart()  # the time spent typing is not reading time


class PageProgress:
    """`folio add`'s progress within a file on stderr (a terminal only): a bar and the page being read,
    shown once reading takes longer than a moment (scans being OCR'd)."""

    AFTER_S = 1.0

    def __init__(self, name: str) -> None:
        import time

        self.name = name
        self.started = time.monotonic()
        self.shown = False
        self.kept = 0  # pages an interrupted add had read, not read again

    def restart(self) -> None:
        import time

        self.started = time.monotonic()

    def __call__(self, pages: ReadProgress) -> None:
        import time

        self.kept = max(self.kept, pages.kept)
        if not sys.stderr.isatty() or time.monotonic() - self.started < self.AFTER_S or not pages.total:
            return
        width = 24
        filled = width * pages.done // pages.total
        line = f"\r[{'#' * filled}{'-' * (width - filled)}] {self.name}: {pages.step}"[:150]
        print(line.ljust(80), end="", file=sys.stderr, flush=True)
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            print("\r" + " " * 100 + "\r", end="", file=sys.stderr, flush=True)
            self.shown = False


def _extent(doc: DocumentRow) -> str:
    from ingest.document import FLOWING_KINDS

    if doc.kind == "video" and doc.duration_s is not None:
        return f"{doc.duration_s:.0f} s video"
    if doc.kind in FLOWING_KINDS:
        return f"{doc.page_count} paragraph{'s' if doc.page_count != 1 else ''}"
    return f"{doc.page_count} page{'s' if doc.page_count != 1 else ''}"


def _cmd_list(ctx: AppContext, args: argparse.Namespace) -> int:
    docs = ctx.library.all(matter_id=ctx.matter_id)
    if args.json:
        _print_json([dataclasses.asdict(d) for d in docs])
        return 0
    if not docs:
        if ctx.library.count():
            print("This matter holds no documents. Add a file with: folio add FILE (see also: folio matter list)")
        else:
            print("The library is empty. Add a file with: folio add FILE")
        return 0
    from app.reading import reading_states

    states = reading_states(ctx, [d.sha256 for d in docs])  # None: a model server reads for itself
    print(f"{'ID':>4}  {'KIND':<5}  {'EXTENT':<12}  {'TOKENS':>8}  TITLE")
    for i, d in enumerate(docs):
        reading = f"  ({states[i].words()})" if states is not None else ""
        print(f"{d.id:>4}  {d.kind:<5}  {_extent(d):<12}  {d.token_estimate:>8,}  {d.title}{reading}")
    return 0


def _cmd_show(ctx: AppContext, args: argparse.Namespace) -> int:
    doc = ctx.library.resolve(args.document)
    if args.json:
        _print_json(_document_json(ctx, doc, segments=args.segments, text=args.text))
        return 0
    if args.text:
        for block in _marked_text(ctx, doc.id):
            print(block.marker)
            if block.image:
                print(f"(image: {block.image})")
            if block.text:
                print(block.text)
        return 0
    print(f"#{doc.id} {doc.title}\n  kind: {doc.kind}\n  extent: {_extent(doc)}\n  sha256: {doc.sha256}")
    print(f"  source: {doc.source_path}\n  added: {doc.added_at}")
    library = ctx.library
    video = library.video_info(doc.id)
    if video is not None:
        print(
            f"  video: {video.width}x{video.height}, {video.fps:.2f} fps, {video.frame_count} frames, "
            f"codec {video.codec}, {len(library.keyframes(doc.id))} keyframes (audio is not read)"
        )
    else:
        pages = library.pages(doc.id)
        scanned = [p for p in pages if p.scanned]
        if scanned:
            with_ocr = sum(1 for p in scanned if p.ocr)
            print(f"  scanned pages: {len(scanned)} of {len(pages)} ({with_ocr} with OCR text)")
    for attachment in library.attachments(doc.id):
        read = f"#{attachment.document_id}" if attachment.document_id is not None else f"not read: {attachment.note}"
        print(f"  attachment {attachment.position}: {attachment.name} ({read})")
    for place in library.attached_to(doc.id):
        print(f"  attachment {place.position} of e-mail #{place.email_id}")
    if args.segments:
        from ingest.document import Anchor, format_timestamp, unit_of

        for s in library.segments(doc.id):
            if s.t_seconds is not None:
                where = f"t={format_timestamp(s.t_seconds)} ({s.t_seconds:.3f}s)"
            elif unit_of(doc.kind) == "paragraph":
                where = Anchor(page=s.page, label=s.label, unit="paragraph").cited()
            else:
                where = f"p.{s.page}" + (f" ({s.label})" if s.label and s.label != str(s.page) else "")
            box = f" bbox={list(s.bbox)}" if s.bbox else ""
            if s.kind == "image" and s.image_blob:
                preview = _image_summary(library.blob_path(s.image_blob))
            else:
                preview = " ".join(s.text.split())[:80]
            print(f"  [{s.seq}] {s.kind}/{s.role} {where}{box}: {preview}")
    return 0


def _marked_text(ctx: AppContext, doc_id: int) -> list[SourceBlock]:
    """The document as the model reads it: blocks that open with their marker ('[p. 4]', '[t 00:01:23]'),
    with the text and, for a scanned page or a keyframe, the image shown to a vision model."""
    from app.engine.documents import prompt_documents

    return prompt_documents(ctx, [doc_id], images=True)[0].blocks


def _document_json(ctx: AppContext, doc: DocumentRow, *, segments: bool, text: bool) -> dict[str, object]:
    library = ctx.library
    video = library.video_info(doc.id)
    out: dict[str, object] = {
        "document": dataclasses.asdict(doc),
        "video": dataclasses.asdict(video) if video is not None else None,
        "pages": [dataclasses.asdict(p) for p in library.pages(doc.id)],
        "keyframes": [dataclasses.asdict(k) for k in library.keyframes(doc.id)],
    }
    if segments:
        out["segments"] = [dataclasses.asdict(s) for s in library.segments(doc.id)]
    if text:
        out["text"] = [dataclasses.asdict(block) for block in _marked_text(ctx, doc.id)]
    return out


def _image_summary(path: Path) -> str:
    from ingest.image_size import png_size
    from ingest.limits import vision_tokens

    try:
        with path.open("rb") as handle:
            size = png_size(handle.read(24))
    except OSError:
        size = None
    if size is None:
        return f"<image missing: {path}>"
    width, height = size
    return f"<image {width}x{height} px, {vision_tokens(width, height):,} vision tokens, {path}>"


def _cmd_ask(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.chat import AnswerDelta, AnswerDone, ChatEvent, ChatService, ChatStarted
    from app.cli.lines import Lines, ProgressLines
    from app.engine.progress import Progress
    from app.errors import USER_ERRORS, DoesNotFit
    from app.models.registry import STARTER_NOTICE
    from app.passes.service import LongQuestion
    from app.reading import wait_for_reading

    *refs, question = args.documents
    strategy = args.strategy
    if args.all:
        if refs or args.conversation is not None or args.pages is not None:
            print("folio: error: --all asks about the whole matter: give only the question", file=sys.stderr)
            return 2
        refs = [str(doc.id) for doc in ctx.library.all(ctx.matter_id)]
        if not refs:
            print("folio: error: the matter holds no documents: add some with folio add FILE", file=sys.stderr)
            return 1
        strategy = strategy or "passes"  # a matter rarely fits one context: each document in turn
    if args.conversation is None and not refs:
        print('folio: error: give a document and a question: folio ask DOC "question"', file=sys.stderr)
        return 2
    pages: tuple[int, ...] | None = None
    if args.pages is not None:
        from app.pages import parse_pages

        try:
            pages = parse_pages(args.pages)
        except ValueError as exc:
            print(f"folio: error: --pages: {exc}", file=sys.stderr)
            return 2
    doc_ids = [ctx.library.resolve(r).id for r in refs]
    waited = doc_ids
    if args.conversation is not None:  # a follow-up is about the conversation's documents
        from app.store.conversations import Conversations

        waited = Conversations(ctx.db).get(args.conversation).document_ids
    which = "this document" if len(waited) == 1 else "one of these documents"
    lines = Lines()
    wait_for_reading(ctx, waited, lambda state: lines.note(f"... another Folio is reading {which}: {state.words()}"))
    service = ChatService(ctx)
    long = LongQuestion(service)
    progress = ProgressLines(lines)
    done: list[AnswerDone] = []

    def on_event(event: ChatEvent) -> None:
        if isinstance(event, ChatStarted):
            if event.demo_model:
                lines.note(f"note: {STARTER_NOTICE}")
        elif isinstance(event, Progress):
            progress(event)
        elif isinstance(event, AnswerDelta) and event.channel == "answer" and not args.json:
            lines.write(event.text)
        elif isinstance(event, AnswerDone):
            done.append(event)

    try:
        if pages is None and strategy is None:
            message = service.ask(
                doc_ids,
                question,
                conversation_id=args.conversation,
                thinking=args.thinking,
                max_tokens=args.max_tokens,
                on_event=on_event,
            )
        else:  # a page selection, or a selection read in parts: stored as one turn with its footer
            message = long.ask(
                doc_ids,
                question,
                pages=pages,
                strategy=strategy,
                conversation_id=args.conversation,
                thinking=args.thinking,
                max_tokens=args.max_tokens,
                on_event=on_event,
            )
    except DoesNotFit as exc:
        passes, search = "every page, in passes", "the pages a word search ranks highest"
        try:  # how long each would take on this computer, as the window's offer says it
            found = long.estimate(
                doc_ids,
                question,
                pages=pages,
                conversation_id=args.conversation,
                thinking=args.thinking,
                max_tokens=args.max_tokens,
                on_event=on_event,
            )
            passes, search = f"{passes}: {found.passes.line()}", f"{search}: {found.search.line()}"
        except USER_ERRORS:
            pass  # a model server (its speed is its own), or a selection that cannot be planned
        lines.close()
        raise DoesNotFit(
            f"{exc}; or ask with --strategy passes ({passes}), --strategy search ({search}) or --pages LIST"
        ) from exc
    except KeyboardInterrupt:
        service.cancel()
        long.cancel()
        lines.close()
        if long.kept is not None:  # the parts answered before the stop are kept: show them
            print(long.kept.text)
            print(f"[stopped: conversation {long.kept.conversation_id}, message {long.kept.id} keeps what was read]",
                  file=sys.stderr)  # fmt: skip
        raise
    finally:
        service.close()
    lines.close()
    documents = len(service.conversations.get(message.conversation_id).document_ids)
    if args.json:
        print(json.dumps(_answer_json(message, documents), indent=2, ensure_ascii=False))
    else:
        for line in verdict_lines(message.claims, documents):
            print(line)
    print(
        f"[conversation {message.conversation_id}, message {message.id}: {message.completion_tokens} tokens]",
        file=sys.stderr,
    )
    stats = done[-1].stats if done else None
    if args.timings and stats is not None:
        print(
            f"timings: prefill_tokens={stats.prompt_tokens - stats.cached_tokens} cached_tokens={stats.cached_tokens} "
            f"prefill_s={stats.prefill_ms / 1000:.3f} ttft_s={stats.ttft_ms / 1000:.3f} "
            f"gen_tokens={stats.completion_tokens} gen_s={stats.generate_ms / 1000:.3f} "
            f"drafted_tokens={stats.drafted_tokens} accepted_tokens={stats.accepted_tokens}",
            file=sys.stderr,
        )
    return 0


def verdict_lines(claims: list[dict[str, object]], documents: int = 1) -> list[str]:
    """The footer under an answer: each checked sentence with its verdict, then the counts."""
    from app.citations.verdicts import mark, summary

    rows = [(shown, str(c["text"])) for c in claims if (shown := mark(c, documents)) is not None]
    if not rows:
        return []
    width = max(len(m) for m, _ in rows)
    lines = ["", "Checked sentence by sentence:"]
    for m, text in rows:
        flat = " ".join(text.split())
        lines.append(f"  {m:<{width}}  {flat if len(flat) <= 90 else flat[:87] + '...'}")
    lines.append(summary(claims))
    return lines


def _answer_json(message: MessageRow, documents: int) -> dict[str, object]:
    from app.citations.verdicts import counts, explain, mark

    return {
        "conversation_id": message.conversation_id,
        "message_id": message.id,
        "status": message.status,
        "model": message.model,
        "model_sha256": message.model_sha256,
        "answer": message.text,
        "citations": message.citations,
        "claims": [c | {"mark": mark(c, documents), "explanation": explain(c, documents)} for c in message.claims],
        "counts": dict(counts(message.claims)),
    }


def _cmd_plan(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.engine.factory import local_engine
    from app.engine.plan_report import plan_report, report_lines
    from app.engine.session import Session

    doc_ids = [ctx.library.resolve(r).id for r in args.documents]
    session = Session.for_context(ctx, local_engine())  # the local plan, even when a model server is configured
    try:
        report = plan_report(ctx, session, doc_ids)
    finally:
        session.close()
    for line in report_lines(report):
        print(line)
    return 0 if report.plan.fits else 1


def _cmd_show_conversation(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.conversations import Conversations

    convs = Conversations(ctx.db)
    conv = convs.get(args.conversation)
    messages = convs.messages(conv.id)
    if args.json:
        _print_json({"conversation": dataclasses.asdict(conv), "messages": [dataclasses.asdict(m) for m in messages]})
        return 0
    titles = ", ".join(f"#{d} {ctx.library.get(d).title}" for d in conv.document_ids)
    print(f"Conversation {conv.id}: {conv.title}\nDocuments: {titles}\n")
    for m in messages:
        who = "You" if m.role == "user" else f"Folio ({m.model})"
        print(f"{who}:")
        print(m.text or "(no text)")
        if m.role == "assistant":
            cites = ", ".join(
                c["text"]
                + ("" if c["valid"] else " (page not found)")
                + ("" if c["quote_found"] in (None, True) else " (quote not found)")
                for c in m.citations
            )
            print(f"  citations: {cites or 'none'}")
            for line in verdict_lines(m.claims, len(conv.document_ids))[1:]:
                print(f"  {line}")
            if m.status != "complete":
                print(f"  status: {m.status}" + (f" - {m.error}" if m.error else ""))
            if m.prompt_tokens is not None:
                print(
                    f"  tokens: {m.prompt_tokens:,} prompt, {m.completion_tokens:,} answer; "
                    f"read {m.prefill_ms or 0:.0f} ms, answer {m.generate_ms or 0:.0f} ms"
                )
        print()
    return 0


def _cmd_conversations(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.store.conversations import Conversations

    rows = Conversations(ctx.db).all(matter_id=ctx.matter_id)
    if args.json:
        _print_json([dataclasses.asdict(c) for c in rows])
        return 0
    if not rows:
        print("No conversations yet.")
    for c in rows:
        print(f"{c.id:>4}  {c.updated_at}  docs {','.join(map(str, c.document_ids))}  {c.title}")
    return 0


def _cmd_models(ctx: AppContext, args: argparse.Namespace) -> int:
    registry = ctx.models
    if args.models_command == "add":
        record, created = registry.add(
            args.path, mmproj=args.mmproj, progress=lambda msg: print(f"... {msg}", file=sys.stderr)
        )
        print(f"{'registered' if created else 'updated'}: #{record.id} {record.label}")
        print(
            f"  architecture {record.architecture}, context {record.context_length:,}, "
            f"{record.size_bytes / 1024**3:.2f} GiB"
        )
        print(f"  sha256 {record.sha256}")
        if record.mmproj_sha256:
            print(f"  mmproj sha256 {record.mmproj_sha256}")
        if not args.no_activate:
            ctx.settings.active_model = record.sha256
            ctx.save_settings()
            print("  now the active model")
        return 0
    if args.models_command == "add-starter":
        record = registry.install_starter(args.path)
        print(f"installed the starter model: #{record.id} {record.label}")
        print(f"  sha256 {record.sha256} (checked)")
        return 0
    if args.models_command == "use":
        chosen = registry.lookup(args.model)
        ctx.settings.active_model = "" if chosen is None or chosen.is_starter else chosen.sha256
        ctx.save_settings()
        if chosen is None:  # the demo model is set up (assembled, checked) on first use, not here
            print(f"active model: #{registry.starter_number()} the starter demo model (Gemma 3 270M)")
        else:
            print(f"active model: #{chosen.id} {chosen.label}")
        return 0
    return _list_models(ctx, registry, json_out=args.json)


def _list_models(ctx: AppContext, registry: ModelRegistry, *, json_out: bool) -> int:
    """Every registered model by number, and the starter under its reserved number even before it is
    set up: listing registers nothing, so a number seen here is the one `models use` takes."""
    from app.models.registry import ModelRecord

    active_sha = ctx.settings.active_model
    records = registry.all()
    active = {r.id: r.sha256 == active_sha or (not active_sha and r.is_starter) for r in records}
    waiting = None if any(r.is_starter for r in records) else registry.starter_number()
    if json_out:
        fields = [f.name for f in dataclasses.fields(ModelRecord) if f.name != "facts"]
        rows = [
            {f: getattr(r, f) for f in fields} | {"label": r.label, "active": active[r.id], "set_up": True}
            for r in records
        ]
        if waiting is not None:
            rows.append(_starter_json(waiting, active=not active_sha))
        _print_json(sorted(rows, key=lambda row: int(str(row["id"]))))
        return 0
    lines: list[tuple[int, str]] = []
    for r in records:
        mark = "*" if active[r.id] else " "
        lines.append(
            (
                r.id,
                f"{mark} {r.id:>3}  {r.label:<40} {r.architecture:<10} ctx {r.context_length:>7,}  "
                f"{r.size_bytes / 1024**3:6.2f} GiB  {_mtp_column(registry, r):<6}  {r.sha256[:12]}  {r.path}",
            )
        )
    if waiting is not None:
        mark = "*" if not active_sha else " "
        lines.append((waiting, f"{mark} {waiting:>3}  {'starter - demo model':<40} {_starter_state()}"))
    for _number, line in sorted(lines):
        print(line)
    print("(* = active; MTP: the file's multi-token-prediction layers, which draft tokens for faster answers)")
    print("Choose one with: folio models use NUMBER (or its name, or 'starter')")
    return 0


def _starter_state() -> str:
    from app.models.registry import find_starter_file, packaged_starter_available

    if packaged_starter_available():
        return "(set up when first used)"
    if find_starter_file() is not None:
        return "(found beside Folio; set up when first used)"
    return "(not installed: folio models add-starter FILE)"


def _starter_json(number: int, *, active: bool) -> dict[str, object]:
    from app.models.registry import starter_file_name, starter_sha256

    return {
        "id": number,
        "sha256": starter_sha256(),
        "name": "starter",
        "label": "starter - demo model",
        "path": None,
        "is_starter": True,
        "active": active,
        "set_up": False,
        "file_name": starter_file_name(),
        "state": _starter_state().strip("()"),
    }


def _mtp_column(registry: ModelRegistry, record: ModelRecord) -> str:
    try:
        facts = registry.facts(record)
    except USER_ERRORS:
        return "MTP ?"  # the file is gone or unreadable: nothing checked, nothing claimed
    return f"MTP {facts.nextn_predict_layers}" if facts.has_mtp else "no MTP"


def _cmd_server(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.engine.server_check import check_server

    settings = ctx.settings
    if args.server_command == "off":
        settings.server_url = ""
        ctx.save_settings()
        print("model server off: answers come from the local engine; Folio opens no sockets")
        return 0
    if args.server_command == "use":
        settings.server_url, settings.server_model = args.url.strip(), args.model.strip()
        if args.timeout is not None:
            settings.server_timeout_s = args.timeout
        settings.validate()
    elif not settings.server_url:
        print("no model server configured (folio server use URL)")
        return 1
    print(check_server(settings).line())  # one line on stderr if it cannot be reached
    if args.server_command == "use":
        ctx.save_settings()
        print("answers now come from this server (folio server off to go back)")
    return 0


def _cmd_purge(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.purge import purge_document

    docs = list({d.id: d for d in (ctx.library.resolve(ref) for ref in args.documents)}.values())
    if not args.yes:
        names = ", ".join(f"#{d.id} {d.title}" for d in docs)
        if not sys.stdin.isatty():
            print(f"folio: error: purge removes {names} for good; add --yes to confirm", file=sys.stderr)
            return 2
        answer = input(f"Remove {names} and the conversations about them for good? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing removed")
            return 1
    for doc in docs:
        r = purge_document(ctx, doc.id)
        print(
            f"purged: #{doc.id} {doc.title} ({r.pages} pages, {r.segments} segments, {r.blobs} images, "
            f"{r.snapshots} snapshots, {r.conversations} conversations, {r.extraction_cells} extraction cells)"
        )
    return 0


def _cmd_doctor(ctx: AppContext, _args: argparse.Namespace) -> int:
    from app.cli.doctor import run_checks

    for check in run_checks(ctx):
        print(f"{'ok ' if check.ok else '!! '} {check.name:<18} {check.value}")
    return 0


_HANDLERS: dict[str, Callable[[AppContext, argparse.Namespace], int]] = {
    "add": _cmd_add,
    "list": _cmd_list,
    "show": _cmd_show,
    "ask": _cmd_ask,
    "plan": _cmd_plan,
    "show-conversation": _cmd_show_conversation,
    "conversations": _cmd_conversations,
    "models": _cmd_models,
    "server": _cmd_server,
    "purge": _cmd_purge,
    "doctor": _cmd_doctor,
}


if __name__ == "__main__":
    raise SystemExit(main())

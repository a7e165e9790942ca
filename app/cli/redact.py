"""`folio redact DOC`: a redacted copy of a document, checked before it is kept.

    folio redact 12 --terms "Jane Roe" Acme --patterns email,phone --out redacted.pdf
    folio redact 12 --patterns all --list                 # what would be found, page by page
    folio redact 12 --patterns all --save-plan plan.json  # every candidate, to accept or reject by hand
    folio redact 12 --plan plan.json --out redacted.pdf   # apply the accepted ones

On the command line what is asked for is accepted: every occurrence of each term, of each pattern
kind named, and of each name with --names. A plan file accepts or rejects occurrence by occurrence.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.context import AppContext
    from app.redaction.candidates import Candidate, Name
    from app.redaction.child import Step

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    from app.redaction.kinds import PATTERN_KINDS

    red = sub.add_parser(
        "redact",
        help="write a redacted copy of a document",
        description="Write a NEW PDF with the chosen words removed for real (text, pictures and drawings under "
        "each box), metadata, comments, attachments, form fields, JavaScript, hidden text and earlier revisions "
        "taken out; the copy is re-read and refused (no file left) if anything redacted can still be found. "
        "The original is never changed. Word, text and e-mail documents are typeset as a PDF first.",
    )
    red.add_argument("document", metavar="DOC", help="document id or path (a PDF or image not in the library too)")
    red.add_argument("--out", "-o", metavar="FILE.pdf", help="where to write the redacted copy")
    red.add_argument("--terms", nargs="+", default=[], metavar="TERM", help="words to remove wherever they are printed")
    red.add_argument(
        "--patterns",
        default="",
        metavar="KINDS",
        help=f"comma-separated kinds to remove, or 'all': {', '.join(PATTERN_KINDS)}",
    )
    red.add_argument(
        "--names",
        action="store_true",
        help="also remove the people and organisations the model reads in the document, and the parties of its "
        "extraction table (slow: the model reads the document)",
    )
    red.add_argument("--plan", metavar="FILE", help="apply a plan file's accepted candidates")
    red.add_argument("--save-plan", metavar="FILE", help="write every candidate found to a plan file, and stop")
    red.add_argument("--list", action="store_true", help="print the candidates found, and stop")
    red.add_argument("--no-label", action="store_true", help="plain black boxes, without 'Redacted: ...' on them")
    red.add_argument("--password", help="the PDF's password")
    red.add_argument("--force", action="store_true", help="replace FILE if it exists")
    return {"redact": cmd_redact}


def _kinds(text: str, *, default_all: bool) -> tuple[str, ...]:
    from app.errors import FolioError
    from app.redaction.kinds import PATTERN_KINDS

    chosen = [k.strip() for k in text.split(",") if k.strip()]
    if not chosen:
        return PATTERN_KINDS if default_all else ()
    if chosen == ["all"]:
        return PATTERN_KINDS
    unknown = [k for k in chosen if k not in PATTERN_KINDS]
    if unknown:
        raise FolioError(f"unknown pattern kind {unknown[0]!r}: use {', '.join(PATTERN_KINDS)} or all")
    return tuple(chosen)


def _progress(step: Step) -> None:
    if sys.stderr.isatty():
        end = "\n" if step.done >= step.total else ""
        print(f"\r... {step.text} {step.done} of {step.total} ", end=end, file=sys.stderr)


def cmd_redact(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.errors import FolioError
    from app.redaction.candidates import KIND_NAMES, Search
    from app.redaction.plan import plan_json, read_plan
    from app.redaction.service import Redactor

    stopping = args.list or args.save_plan
    if not stopping and not args.out:
        raise FolioError("say where to write the redacted copy (--out FILE.pdf), or use --list or --save-plan")
    asked = bool(args.terms or args.patterns or args.names)
    if not stopping and not args.plan and not asked:
        raise FolioError("nothing to redact: give --terms, --patterns, --names or --plan")
    out = Path(args.out).expanduser() if args.out else None
    redactor = Redactor(ctx)
    try:
        source = redactor.source(args.document, password=args.password)
        search = Search(
            patterns=_kinds(args.patterns, default_all=bool(stopping and not asked)), terms=tuple(args.terms)
        )
        if args.names:
            search.names = _names(ctx, source.document_id)
        found = redactor.find(source, search, on_progress=_progress)
        for term in search.skipped:
            print(f"note: the term {term!r} has no letter or digit to look for", file=sys.stderr)
        candidates = found.candidates
        accepted = {c.key for c in candidates}
        label = not args.no_label
        if args.plan:
            planned, planned_accepted, label = read_plan(Path(args.plan).expanduser(), source.sha256)
            label = label and not args.no_label
            candidates = planned + [c for c in candidates if c.key not in {p.key for p in planned}]
            accepted = planned_accepted | {c.key for c in found.candidates}
        if args.list:
            _print_candidates(candidates, KIND_NAMES)
            return 0
        if args.save_plan:
            path = Path(args.save_plan).expanduser()
            from app.export import Exporter

            Exporter(ctx).redaction_plan(
                path,
                plan_json(source.title, source.sha256, candidates, accepted, label=label).encode(),
                document_sha256=source.sha256,
                candidates=len(candidates),
                overwrite=args.force,
            )
            print(f'wrote {path}: {len(candidates)} candidate(s); set "accept" to false for those to keep')
            return 0
        chosen = [c for c in candidates if c.key in accepted]
        if not chosen:
            print(
                "note: no words to redact were found; the copy only has the file's hidden content taken out",
                file=sys.stderr,
            )
        assert out is not None
        done = redactor.export(source, found, chosen, out, label=label, overwrite=args.force, on_progress=_progress)
    finally:
        redactor.close()
    kinds = ", ".join(f"{n} {KIND_NAMES.get(k, k)}" for k, n in sorted(Counter(c.kind for c in chosen).items()))
    print(f"wrote {done.export.path} (sha256 {done.export.sha256})")
    print(f"removed: {done.areas} area(s) on {done.pages} page(s){': ' + kinds if kinds else ''}")
    for line in done.removed:
        print(f"also removed: {line}")
    print(f"checked: {done.proof.summary().removeprefix('nothing redacted can be found: checked ')}")
    print(f"redaction log {done.log_id}; the original is unchanged")
    return 0


def _names(ctx: AppContext, document_id: int | None) -> tuple[Name, ...]:
    from app.errors import FolioError
    from app.redaction.names import party_names, suggest_names

    if document_id is None:
        raise FolioError("--names reads the document with the model: add it to the library first (folio add)")
    from app.engine.session import Session

    session = Session.for_context(ctx)
    try:
        suggested = suggest_names(
            ctx,
            session,
            document_id,
            on_progress=lambda p: print(f"... {p.text}", file=sys.stderr) if not p.reading else None,
        )
    except KeyboardInterrupt:
        session.cancel()
        raise
    finally:
        session.close()
    print(
        f"the model ({suggested.model}) named {len(suggested.names)} people and organisations printed in the document"
        + (
            f"; {suggested.dropped} more it named are not printed as written and were left out"
            if suggested.dropped
            else ""
        ),
        file=sys.stderr,
    )
    return tuple(suggested.names) + tuple(party_names(ctx, document_id))


def _print_candidates(candidates: list[Candidate], names: dict[str, str]) -> None:
    for c in candidates:
        found_in = f" ({c.found_in})" if c.found_in else ""
        print(f"{c.where}\t{names.get(c.kind, c.kind)}{found_in}\t{c.context}")
    by_kind = Counter(c.kind for c in candidates)
    print(f"{len(candidates)} candidate(s): " + ", ".join(f"{n} {names.get(k, k)}" for k, n in sorted(by_kind.items())))

"""`folio review`, `reviews`, `finding` and `playbooks`: a contract checked against a playbook.

`folio review DOC --playbook NAME` reads the playbook's fields (the extraction runner: resumable, scored,
grounded), decides each rule by code and prints one line per rule: verdict, where, reason, confidence
and the grounding check; --json prints the whole review, --out writes the report (.md, .pdf) or the
Word file with the proposed edits tracked (.docx). A file not in the library is added first.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli import catalogue
from app.cli.checks import document_id_of
from app.cli.matters import add_matter_flag

if TYPE_CHECKING:
    from app.context import AppContext
    from app.playbook.review import PlaybookReview

Handler = Callable[["AppContext", argparse.Namespace], int]


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> dict[str, Handler]:
    review = sub.add_parser(
        "review",
        help="check a contract against a playbook's positions",
        description="Check a document against a playbook: each rule met, fallback, not met, missing or needing a "
        "person, with the clause quoted and cited, the reason, the model's confidence and the grounding check. "
        "Values (durations, amounts, places) are compared by code, never by the model. Resumable: run it again "
        "after a stop and the fields already read are kept.",
    )
    review.add_argument("document", metavar="DOC", help="document id or path; a file is added first")
    review.add_argument(
        "--playbook", "-p", required=True, metavar="KEY", help="playbook key (see: folio playbooks list)"
    )
    review.add_argument("--json", action="store_true", help="print the review as JSON")
    review.add_argument("--out", "-o", metavar="FILE", help="write the report (.md, .pdf) or the tracked edits (.docx)")
    review.add_argument("--force", action="store_true", help="replace --out if it exists")
    add_matter_flag(review)

    sub.add_parser("reviews", help="list playbook reviews", description="List the playbook reviews of the matter.")

    finding = sub.add_parser(
        "finding",
        help="accept or reject a playbook finding",
        description="Record a reviewer's decision on one finding of a review (audited). Once any finding of a "
        "review is decided, its .docx export proposes the accepted findings only.",
    )
    finding.add_argument("review", type=int, metavar="REVIEW", help="review id (see: folio reviews)")
    finding.add_argument("rule", metavar="RULE", help="the rule's key")
    finding.add_argument("decision", choices=["accept", "reject", "clear"])
    finding.add_argument("--note", default="", help="why, in a few words")

    books = sub.add_parser("playbooks", help="playbooks", description="List, show, import and export playbooks.")
    bsub = catalogue.add_actions(books, "playbook", "rules")
    bexp = bsub.add_parser(
        "export", help="write a playbook to a file", description="Export a playbook, self-contained."
    )
    bexp.add_argument("key", metavar="KEY")
    bexp.add_argument("--out", "-o", metavar="FILE", help="file to write (default: standard output)")
    bexp.add_argument("--force", action="store_true", help="replace FILE if it exists")
    return {"review": cmd_review, "reviews": cmd_reviews, "finding": cmd_finding, "playbooks": cmd_playbooks}


def cmd_review(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.cli.work import Progress
    from app.engine.progress import Progress as EngineProgress
    from app.export import REVIEW_FORMATS, Exporter, FileExists, format_of
    from app.extraction.runner import CellsStored, RunStarted
    from app.models.registry import STARTER_NOTICE
    from app.playbook.book import PlaybookStore
    from app.playbook.review import PlaybookReviewer

    out = Path(args.out).expanduser() if args.out else None
    if out is not None:
        format_of(out, REVIEW_FORMATS)
        if out.exists() and not args.force:
            raise FileExists(f"{out} already exists; choose another name or replace it (--force)")
    playbook = PlaybookStore.for_config(ctx.paths.config_dir).get(args.playbook)
    doc_id = document_id_of(ctx, args.document)
    reviewer = PlaybookReviewer(ctx)
    progress = Progress()

    def on_event(event: object) -> None:
        if isinstance(event, RunStarted):
            if event.demo_model:
                progress.note(f"note: {STARTER_NOTICE}")
            again = f", {event.cells_done} already read" if event.cells_done else ""
            progress.note(f"... {playbook.name}: {len(playbook.rules)} rules, {event.cells_total} fields{again}")
        elif isinstance(event, CellsStored):
            progress.show(event.cells_done, event.cells_total)
        elif isinstance(event, EngineProgress) and not event.reading:
            progress.note(f"... {event.text}")

    try:
        review = reviewer.review(doc_id, playbook, on_event=on_event)
    except KeyboardInterrupt:
        reviewer.cancel()
        print(file=sys.stderr)
        print("folio: stopped; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        reviewer.close()
    if progress.tty:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(review.to_dict(), indent=2, ensure_ascii=False))
    else:
        print_review(review)
    if out is not None:
        result = Exporter(ctx).review(review.id, out, overwrite=args.force)
        print(
            f"wrote {result.path} ({result.fmt}, sha256 {result.sha256})", file=sys.stderr if args.json else sys.stdout
        )
    return 0


def print_review(review: PlaybookReview) -> None:
    from app.playbook.values import VERDICT_TEXT, VERDICTS

    rules = {r.key: r for r in review.playbook.rules}
    print(f"review {review.id}: {review.title} against {review.playbook.name} (v{review.playbook.version})")
    for f in review.findings:
        where = f" {f.where}" if f.where else ""
        check = f", {f.grounding}" if f.grounding else ""
        sure = f", confidence {f.confidence:.0%}" if f.confidence is not None else ""
        print(f"  {f.verdict_text.upper():<15} {rules[f.rule_key].name}{where}{check}{sure}")
        print(f"      {f.reason}")
    counts = review.counts()
    print("  " + ", ".join(f"{counts[v]} {VERDICT_TEXT[v]}" for v in VERDICTS if counts[v]))


def cmd_reviews(ctx: AppContext, _args: argparse.Namespace) -> int:
    from app.playbook.review import review_summaries

    listed = review_summaries(ctx)
    if not listed:
        print("No playbook reviews yet. Start one with: folio review DOC --playbook commercial_contract")
    for r in listed:
        print(f"{r.id:>4}  {r.created_at}  {r.playbook_key} v{r.playbook_version}  {r.short} short of "
              f"{r.findings} rules  {r.title}")  # fmt: skip
    return 0


def cmd_finding(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.playbook.review import decide_finding

    decision = {"accept": "accepted", "reject": "rejected", "clear": "cleared"}[args.decision]
    finding = decide_finding(ctx, args.review, args.rule, decision, args.note)
    state = finding.decision or "not reviewed"
    print(f"review {args.review}, {args.rule}: {finding.verdict_text}; {state}")
    return 0


def cmd_playbooks(ctx: AppContext, args: argparse.Namespace) -> int:
    from app.export import FileExists
    from app.playbook.book import Playbook, PlaybookStore, Rule

    store = PlaybookStore.for_config(ctx.paths.config_dir)
    rules = catalogue.Parts[Playbook, Rule](
        "rules", lambda b: b.rules, lambda r: f"{r.name} [{r.kind}, reads {r.field.key}]: {r.position}"
    )
    if catalogue.run(store, rules, args.playbooks_command, args):
        return 0
    text = store.export_text(args.key)
    if not args.out:
        sys.stdout.write(text)
        return 0
    from common.files import atomic_write_text

    path = Path(args.out).expanduser()
    if path.exists() and not args.force:
        raise FileExists(f"{path} already exists; choose another name or replace it (--force)")
    atomic_write_text(path, text)
    print(f"wrote {path}")
    return 0

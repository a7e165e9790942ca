"""Redacting a document, from the window or `folio redact`: find the candidates, then write the
redacted copy through the Exporter (which audits it) once the proof has passed, with its log.

    redactor = Redactor(ctx)
    source = redactor.source("12")                 # a library document (or a file's path)
    found = redactor.find(source, Search(terms=("Acme",)))
    done = redactor.export(source, found, accepted, Path("out.pdf"))

The heavy work runs in a child process (app/redaction/child.py); `stop()` from another thread
cancels it (Cancelled). Word, text and e-mail documents are typeset as a PDF first, from the text
Folio stored for them (what the model and the citations read), and redacted there.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.errors import FolioError, NotFound
from app.redaction.apply import Inventory
from app.redaction.candidates import Candidate, Search
from app.redaction.child import IMAGE, PDF, TYPESET, Found, RedactionProcess, Source, Step
from app.redaction.proof import Proof, RedactionFailed

if TYPE_CHECKING:
    from app.context import AppContext
    from app.export import ExportResult
    from app.store.library import DocumentRow

ProgressSink = Callable[[Step], None]
TYPESET_KINDS = ("word", "text", "email")


@dataclass(frozen=True)
class Redacted:
    """A redacted copy written: where, its sha256, what was removed and what the proof checked."""

    export: ExportResult
    log_id: int
    areas: int  # boxes drawn
    pages: int  # pages with at least one
    by_kind: dict[str, int]  # accepted occurrences per kind
    removed: list[str]  # what else was taken out of the file
    proof: Proof

    def summary(self) -> str:
        return f"wrote {self.export.path}: {self.areas} area(s) on {self.pages} page(s) removed; {self.proof.summary()}"


def area_counts(accepted: Sequence[Candidate]) -> list[dict[str, Any]]:
    """What the log keeps of the accepted areas: kind, page and how many, never the words."""
    counts = Counter((c.kind, c.page) for c in accepted)
    return [
        {"kind": kind, "page": page, "count": n}
        for (kind, page), n in sorted(counts.items(), key=lambda x: (x[0][1], x[0][0]))
    ]


class Redactor:
    def __init__(self, ctx: AppContext, process: RedactionProcess | None = None) -> None:
        self.ctx = ctx
        self.process = process if process is not None else RedactionProcess()
        self._own_process = process is None

    def close(self) -> None:
        if self._own_process:
            self.process.close()

    def stop(self) -> None:
        """Cancel the work under way (from any thread): the call raises Cancelled."""
        self.process.stop()

    # -- what is redacted ------------------------------------------------------------------------
    def source(self, ref: str | int, *, password: str | None = None) -> Source:
        """A library document by id or path; a PDF or image file not in the library by its path."""
        try:
            doc = self.ctx.library.get(ref) if isinstance(ref, int) else self.ctx.library.resolve(str(ref))
        except NotFound:
            path = Path(str(ref)).expanduser()
            if not path.is_file():
                raise
            return self._file_source(path, password)
        return self.document_source(doc, password=password)

    def document_source(self, doc: DocumentRow, *, password: str | None = None) -> Source:
        from app.processes.page_render import locate_original

        if doc.kind in TYPESET_KINDS:
            data = self.process.typeset(document_html(self.ctx, doc))
            return Source(doc.title, doc.sha256, TYPESET, data=data, document_id=doc.id)
        if doc.kind not in (PDF, IMAGE):
            raise FolioError(f"{doc.title}: a {doc.kind} cannot be redacted (PDFs, scans, Word, text and e-mail can)")
        original = locate_original(self.ctx.library, doc)
        if original is None:
            raise FolioError(
                f"{doc.title}: the original file is no longer at {doc.source_path} (or has changed); "
                "add the file again to redact it"
            )
        return Source(doc.title, doc.sha256, doc.kind, path=str(original), password=password, document_id=doc.id)

    def _file_source(self, path: Path, password: str | None) -> Source:
        from ingest.load import file_sha256
        from ingest.sniff import sniff

        family = sniff(path).family
        if family not in (PDF, IMAGE):
            raise FolioError(f"{path.name}: add it to the library first (folio add) to redact a {family} file")
        return Source(path.name, file_sha256(path), family, path=str(path.resolve()), password=password)

    # -- the work -------------------------------------------------------------------------------------
    def find(self, source: Source, search: Search, on_progress: ProgressSink | None = None) -> Found:
        return self.process.find(source, search, self.ctx.ocr, on_progress=on_progress)

    def export(
        self,
        source: Source,
        found: Found,
        accepted: Sequence[Candidate],
        out: Path,
        *,
        label: bool = True,
        overwrite: bool = False,
        on_progress: ProgressSink | None = None,
    ) -> Redacted:
        """Write the redacted copy to `out` if, and only if, the proof finds nothing redacted in it."""
        from app.export import Exporter
        from app.store.redactions import Redactions

        if out.suffix.lower() != ".pdf":
            raise FolioError(f"cannot write a redacted copy to {out.name}: it is always a PDF (.pdf)")
        if source.path and Path(source.path).resolve() == out.resolve():
            raise FolioError("the redacted copy cannot replace the original: choose another file name")
        if out.exists() and not overwrite:
            from app.export import FileExists

            raise FileExists(f"{out} already exists; choose another name or replace it (--force)")
        chosen = list(accepted)
        data = self.process.redact(source, chosen, label, on_progress=on_progress)
        areas = area_counts(chosen)
        removed = found.inventory.lines()
        proof_holder: list[Proof] = []
        log_holder: list[int] = []

        def check(written: Path) -> dict[str, Any]:
            proof = self.process.prove(written, found.pages, chosen, self.ctx.ocr, on_progress)
            proof_holder.append(proof)
            if not proof.ok:
                raise RedactionFailed(f"the redacted copy was not saved: {proof.summary()}")
            return {"proof": proof.checks}

        def record(sha256: str) -> dict[str, Any]:
            log_id = Redactions(self.ctx.db).add(
                document_id=source.document_id,
                source_sha256=source.sha256,
                output_path=str(out),
                output_sha256=sha256,
                output_bytes=len(data),
                areas=areas,
                removed=removed,
                proof=proof_holder[-1].to_dict(),
                labelled=label,
            )
            log_holder.append(log_id)
            return {"redaction_log": log_id}

        result = Exporter(self.ctx).checked(
            out,
            "pdf",
            data,
            overwrite=overwrite,
            audit={
                "what": "redacted copy",
                "documents": [source.sha256],
                "model_sha256": None,
                "document_id": source.document_id,
                "areas": sum(a["count"] for a in areas),
                "kinds": dict(Counter(c.kind for c in chosen)),
                "removed": removed,
            },
            check=check,
            record=record,
        )
        return Redacted(
            export=result,
            log_id=log_holder[-1],
            areas=sum(len(c.boxes) for c in chosen),
            pages=len({c.page for c in chosen if c.boxes}),  # a hidden place's candidate has no box
            by_kind=dict(Counter(c.kind for c in chosen)),
            removed=removed,
            proof=proof_holder[-1],
        )


def document_html(ctx: AppContext, doc: DocumentRow) -> str:
    """A Word, text or e-mail document as Folio stored it, as HTML to typeset: its paragraphs with the
    clause or paragraph numbers they are cited by, every word escaped (the text is the document's, not
    markup)."""
    parts = [f"<h1>{html.escape(doc.title)}</h1>"]
    for seg in ctx.library.segments(doc.id):
        if seg.kind != "text" or not seg.text.strip():
            continue
        cited = f"§ {seg.label}" if seg.label else (f"¶ {seg.page}" if seg.page else "")
        number = f"<b>[{html.escape(cited)}]</b> " if cited else ""
        body = "<br/>".join(html.escape(line) for line in seg.text.splitlines())
        parts.append(f"<p>{number}{body}</p>")
    return "\n".join(parts)


__all__ = ["Found", "Inventory", "Redacted", "RedactionFailed", "Redactor", "Search", "Source", "document_html"]

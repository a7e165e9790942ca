"""Checking library documents: a stored result when nothing it rests on has changed, else the checks
run again and the new result is stored and audited.

What a result rests on is its fingerprint: the document's sha256, the rules' version
(app.checks.report.RULES_VERSION) and the extraction values the key dates used. Any of them
changing (a new version of the rules, a reviewer's correction in the table) makes the next check run
afresh; the old result stays in the database beside the new one, as extraction runs do.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.checks.report import RULES_VERSION, CheckReport, Finding, run_checks, summary_counts
from app.clock import now_iso
from app.errors import FolioError

if TYPE_CHECKING:
    from app.checks.dates import KeyInput
    from app.context import AppContext


class Checker:
    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx

    def check(self, document_id: int, *, refresh: bool = False) -> CheckReport:
        """The document's checks: stored when their fingerprint still holds (unless `refresh`), else new."""
        from app.checks.inputs import table_inputs
        from app.store.checks import latest_run
        from ingest.document import unit_of

        doc = self.ctx.library.get(document_id)
        table, source = table_inputs(self.ctx, document_id, unit_of(doc.kind))
        fingerprint = _fingerprint(doc.sha256, table)
        if not refresh:
            stored = latest_run(self.ctx.db, document_id, fingerprint)
            if stored is not None:
                return self._load(stored, doc.title, doc.sha256)
        report = self._run(document_id, doc.title, doc.sha256, table, source)
        return self._store(report, fingerprint)

    def stored(self, document_id: int) -> CheckReport | None:
        """The newest stored result, whatever it rests on (None when the document was never checked)."""
        from app.store.checks import latest_run

        doc = self.ctx.library.get(document_id)
        row = latest_run(self.ctx.db, document_id)
        return self._load(row, doc.title, doc.sha256) if row is not None else None

    def _run(self, document_id: int, title: str, sha256: str, table: dict[str, KeyInput], source: str) -> CheckReport:
        from app.checks.text import check_text
        from app.compare.versions import version_from_library

        no_text = FolioError(f"#{document_id} {title}: has no text to check (no text layer or OCR text)")
        try:
            text = check_text(version_from_library(self.ctx, document_id))
        except FolioError as exc:
            if "no text" in str(exc):
                raise no_text from None
            raise
        if not text.text.strip():  # page numbers and running headers only
            raise no_text
        return run_checks(text, document_id=document_id, sha256=sha256, table=table, inputs_from=source)

    def _store(self, report: CheckReport, fingerprint: str) -> CheckReport:
        from app.store.audit import audited_settings
        from app.store.checks import save_run

        created = now_iso()
        run = {
            "document_id": report.document_id,
            "fingerprint": fingerprint,
            "rules": report.rules,
            "inputs_from": report.inputs_from,
            "problems": len(report.problems),
            "elapsed_ms": round(report.elapsed_ms, 1),
            "created_at": created,
        }
        with self.ctx.db.atomic():
            run_id = save_run(self.ctx.db, run, [f.to_dict() for f in report.findings])
            self.ctx.audit.record(
                "check",
                documents=[report.sha256],
                model_sha256=None,
                settings=audited_settings(self.ctx.settings),
                details={
                    "run_id": run_id,
                    "rules": report.rules,
                    "fingerprint": fingerprint,
                    "inputs_from": report.inputs_from,
                    "counts": summary_counts(report.findings),
                },
            )
        self.ctx.audit.sync_head()
        return replace(report, run_id=run_id, created_at=created)

    def _load(self, row: dict[str, Any], title: str, sha256: str) -> CheckReport:
        from app.store.checks import run_findings

        findings = tuple(Finding.from_dict(f) for f in run_findings(self.ctx.db, int(row["id"])))
        return CheckReport(int(row["document_id"]), title, sha256, findings, rules=row["rules"],
                           elapsed_ms=float(row["elapsed_ms"]), created_at=row["created_at"], run_id=int(row["id"]),
                           inputs_from=row["inputs_from"])  # fmt: skip


def _fingerprint(sha256: str, table: dict[str, KeyInput]) -> str:
    values = {name: [i.shown, i.note, i.source] for name, i in sorted(table.items())}
    blob = json.dumps({"document": sha256, "rules": RULES_VERSION, "table": values}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()

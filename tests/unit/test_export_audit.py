"""Every export is written by app/export.py's Exporter and leaves an audit entry naming what was
written and the sha256 of its bytes: tables, conversations, redlines and the audit log itself, from
the CLI and from the window's code paths alike (issue 35). A test walks every export method, so a new
one without an audit entry fails here."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from app.context import AppContext, open_app
from app.export import Exporter, ExportResult
from tests.conftest import REPO, run_folio


@pytest.fixture
def library(starter_home: Path, tmp_path: Path) -> tuple[AppContext, dict[str, int]]:
    from tests.fixtures.answers import store_cited_answer, store_sample_cells, store_sample_review
    from tests.fixtures.contract_versions import edited_contract

    ctx = open_app()
    old_path, new_path = edited_contract(tmp_path)
    old = ctx.library.add(old_path).document.id
    new = ctx.library.add(new_path).document.id
    run = store_sample_cells(ctx, old)
    conversation, _answer = store_cited_answer(ctx, [old], "It is governed by Delaware law [p. 4].")
    review = store_sample_review(ctx, old, run)
    return ctx, {"old": old, "new": new, "run": run, "conversation": conversation, "review": review}


def _redline(ctx: AppContext, ids: dict[str, int]) -> object:
    from app.compare.redline import compare
    from app.compare.versions import version_from_library

    return compare(version_from_library(ctx, ids["old"]), version_from_library(ctx, ids["new"]))


def _exports(ctx: AppContext, ids: dict[str, int], folder: Path) -> dict[str, Callable[[], ExportResult]]:
    exporter = Exporter(ctx)
    return {
        "table": lambda: exporter.table(ids["run"], folder / "table.xlsx"),
        "conversation": lambda: exporter.conversation(ids["conversation"], folder / "conversation.md"),
        "redline": lambda: exporter.redline(_redline(ctx, ids), folder / "redline.docx"),  # type: ignore[arg-type]
        "audit_log": lambda: exporter.audit_log(folder / "audit.csv"),
        "review": lambda: exporter.review(ids["review"], folder / "review.docx"),
        "checks": lambda: exporter.checks([ids["old"]], folder / "dates.ics", what="key dates"),
        "redaction_plan": lambda: exporter.redaction_plan(
            folder / "plan.json", b"{}", document_sha256="0" * 64, candidates=0
        ),
        "checked": lambda: exporter.checked(
            folder / "copy.txt",
            "txt",
            b"a copy checked before it is kept",
            overwrite=False,
            audit={"what": "checked copy", "documents": [], "model_sha256": None},
            check=lambda written: {"read_back": written.read_bytes().decode()},
        ),
    }


def test_every_export_method_writes_an_audit_entry(library: tuple[AppContext, dict[str, int]], tmp_path: Path) -> None:
    ctx, ids = library
    exports = _exports(ctx, ids, tmp_path)
    methods = {n for n in vars(Exporter) if not n.startswith("_") and n != "default_name"}
    assert methods == set(exports), "an export method without a test here"
    for name, export in exports.items():
        result = export()
        entry = ctx.audit.entries()[-1]
        assert entry.action == "export", name
        assert entry.details["sha256"] == hashlib.sha256(result.path.read_bytes()).hexdigest() == result.sha256
        assert entry.details["path"] == str(result.path) and entry.details["format"] == result.fmt
    assert ctx.audit.verify().ok
    ctx.close()


def test_cli_exports_are_audited(library: tuple[AppContext, dict[str, int]], tmp_path: Path) -> None:
    ctx, ids = library
    ctx.close()
    runs = [
        ("export", "table", str(ids["run"]), "--out", str(tmp_path / "t.csv")),
        ("export", "conversation", str(ids["conversation"]), "--out", str(tmp_path / "c.md")),
        ("compare", str(ids["old"]), str(ids["new"]), "--out", str(tmp_path / "r.docx")),
        ("audit", "export", "--out", str(tmp_path / "a.jsonl")),
    ]
    for args in runs:
        code, _out, err = run_folio(*args)
        assert code == 0, err
    ctx = open_app()
    exported = [e.details for e in ctx.audit.entries() if e.action == "export"]
    assert [d["what"] for d in exported] == ["extraction table", "conversation", "redline", "audit log"]
    for details in exported:
        assert details["sha256"] == hashlib.sha256(Path(details["path"]).read_bytes()).hexdigest()
    ctx.close()


def test_nothing_writes_an_export_around_the_exporter() -> None:
    """write_new (the no-overwrite, all-or-nothing file write) is called by the Exporter alone."""
    callers = [
        str(p.relative_to(REPO))
        for folder in ("app", "ui")
        for p in (REPO / folder).rglob("*.py")
        if p != REPO / "app" / "export.py" and re.search(r"\bwrite_new\(", p.read_text(encoding="utf-8"))
    ]
    assert callers == []

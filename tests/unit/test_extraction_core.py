"""Extraction without the model: the shared prompt prefix, cited anchors, cell verification, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.citations import DocumentIndex
from app.context import AppContext
from app.extraction import (
    BAD_PAGE,
    NO_QUOTE,
    PAGE_CORRECTED,
    QUOTE_NOT_FOUND,
    document_units,
    extraction_messages,
    resolve_cited,
    verify_cell,
)
from app.session import prompt_documents
from app.templates import TemplateStore
from assets import read_text
from inference.chat_format import ChatTemplate, template_for
from inference.prompt import build_messages, render_prompt
from tests.conftest import run_folio
from tests.fixtures.pdfs import make_text_pdf


@pytest.mark.parametrize(
    "template", [template_for("gemma3", None), template_for("qwen35", None)], ids=["gemma", "chatml"]
)
def test_extraction_prompt_shares_the_chat_prefix(ctx: AppContext, contract_pdf: Path, template: ChatTemplate) -> None:
    doc = ctx.library.add(contract_pdf).document
    fields = list(TemplateStore.for_config(ctx.paths.config_dir).get("contract_review").fields[:3])
    chat = render_prompt(
        template,
        build_messages(read_text("prompts", "answer.md"), prompt_documents(ctx, [doc.id]), [], "Which law governs?"),
        enable_thinking=False,
    )
    extraction = render_prompt(
        template, extraction_messages(prompt_documents(ctx, [doc.id]), fields), enable_thinking=False
    )
    # The engine's state cache keys on this prefix: the same bytes, the same split into parts.
    assert extraction.prefix == chat.prefix
    assert extraction.prefix_parts == chat.prefix_parts
    question = "".join(p.text for p in extraction.suffix if not p.special)
    assert all(f'"{f.key}"' in question for f in fields)


def test_units_and_cited_anchors(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_text_pdf(tmp_path / "l.pdf", ["Cover page", "Fees are 10 EUR.", "Governed by French law."],
                        labels=[{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                                {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1}])  # fmt: skip
    doc = ctx.library.add(pdf).document
    units = document_units(ctx, doc.id)
    assert [(u.page, u.label) for u in units] == [(1, "i"), (2, "1"), (3, "2")]
    index = DocumentIndex(ctx.library.page_labels(doc.id), doc.page_count, None, lambda _p: "")
    assert resolve_cited("2", units, index) == [2]
    assert resolve_cited("[p. i]", units, index) == [0]
    assert resolve_cited("page 1", units, index) == [1]
    assert resolve_cited("p. 9", units, index) == []
    assert resolve_cited("t 00:00:05", units, index) == []  # no timed units in a PDF

    def cell(quote: str, page: str) -> tuple[str, int | None, tuple[str, ...]]:
        c = verify_cell(doc.id, "k", {"value": "v", "quote": quote, "page": page}, units, index, 0.9)
        return c.quote_status, c.page, c.flags

    assert cell("Governed by French law", "2") == ("exact", 3, ())
    assert cell("Governed by French law", "1") == ("exact", 3, (PAGE_CORRECTED,))
    assert cell("Governed by German law", "2") == ("not_found", 3, (QUOTE_NOT_FOUND,))
    assert cell("Fees are 10 EUR", "9") == ("exact", 2, (BAD_PAGE,))
    assert cell("", "") == ("empty", None, (NO_QUOTE,))
    missing = verify_cell(doc.id, "k", None, units, index, 0.9)
    assert not missing.found and missing.display == "not found" and missing.flags == ()


COMMANDS = [
    ["extract"],
    ["extractions"],
    ["search"],
    ["export"],
    ["export", "table"],
    ["export", "conversation"],
    ["audit"],
    ["audit", "verify"],
    ["audit", "export"],
    ["templates"],
    ["templates", "list"],
    ["templates", "show"],
    ["templates", "import"],
    ["templates", "delete"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_new_command_has_help(command: list[str]) -> None:
    code, out, _ = run_folio(*command, "--help")
    assert code == 0 and "usage: folio" in out


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    cases = [
        (["extract", "--template", "nope", str(tmp_path)], "no template 'nope'"),
        (["extract", "--template", "nda", str(tmp_path / "missing.pdf")], "no documents to extract from"),
        (["extract", "--template", "nda", str(tmp_path), "--out", str(tmp_path / "x.docx")], "use one of"),
        (["export", "table", "5"], "no extraction run with id 5"),
        (["export", "conversation", "5"], "no conversation with id 5"),
        (["templates", "show", "nope"], "no template 'nope'"),
        (["templates", "delete", "nda"], "built-in"),
    ]
    for args, message in cases:
        code, _out, err = run_folio(*args)
        lines = err.strip().splitlines()
        assert code == 1 and lines[-1].startswith("folio: error: ") and message in lines[-1], (args, err)
        assert all(line.startswith("folio: error: ") for line in lines), err


def test_cli_templates_list_and_show() -> None:
    code, out, _ = run_folio("templates", "list")
    assert code == 0 and "contract_review" in out and " 41 fields" in out and "nda" in out
    code, out, _ = run_folio("templates", "show", "contract_review")
    assert code == 0 and "41. Third Party Beneficiary:" in out

"""Extraction without the model: the shared prompt prefix, cited anchors, cell verification, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.citations.grounding import Sources
from app.context import AppContext
from app.engine.documents import prompt_documents
from app.extraction.cells import (
    ADDED,
    BAD_PAGE,
    NO_QUOTE,
    OFFERED,
    QUOTE_LACKS_VALUE,
    QUOTE_NOT_FOUND,
    QUOTED,
    SUPPORTED,
    UNSUPPORTED,
    WRONG_PAGE,
    cell_from_answer,
    cited_anchors,
    ground_cell,
)
from app.extraction.prompt import FieldAsk, extraction_messages
from app.extraction.templates import TemplateStore
from app.store.search import Passage
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
        template,
        extraction_messages(prompt_documents(ctx, [doc.id]), [FieldAsk(f) for f in fields]),
        enable_thinking=False,
    )
    # The engine's state cache keys on this prefix: the same bytes, the same split into parts.
    assert extraction.prefix == chat.prefix
    assert extraction.prefix_parts == chat.prefix_parts
    question = "".join(p.text for p in extraction.suffix if not p.special)
    assert all(f'"{f.key}"' in question for f in fields)


def test_cells_are_grounded_as_chat_claims(ctx: AppContext, tmp_path: Path) -> None:
    """The chat's grounding (app.citations.grounding) decides a cell's verdict; the page markers a model writes
    in a cell are read as the chat's citations."""
    pdf = make_text_pdf(tmp_path / "l.pdf", ["Cover page", "Fees are 10 EUR.", "Governed by French law."],
                        labels=[{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
                                {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1}])  # fmt: skip
    doc = ctx.library.add(pdf).document
    sources = Sources.load(ctx, [doc.id])
    assert [(u.page, u.label) for u in sources.units] == [(1, "i"), (2, "1"), (3, "2")]
    assert [c.page for c in cited_anchors("2", sources)] == [3]
    assert [c.page for c in cited_anchors("[p. i]", sources)] == [1]
    assert [c.page for c in cited_anchors("page 1", sources)] == [2]
    assert [c.page for c in cited_anchors("p. 9", sources)] == [None]  # an anchor to nothing
    assert cited_anchors("t 00:00:05", sources)[0].t_seconds is None  # no timed text in a PDF
    assert cited_anchors(" ", sources) == []

    def check(value: str, quote: str, page: str) -> tuple[str, int | None, tuple[str, ...]]:
        g = ground_cell(sources, value, quote, page, 0.9, "Governing Law")
        return g.verdict, g.grounding.page, g.flags

    assert check("French law", "Governed by French law", "2") == (QUOTED, 3, ())
    assert check("French law", "Governed by French law", "1") == (WRONG_PAGE, 3, ())
    assert check("French law", "Governed by French law", "") == (ADDED, 3, ())
    # Quoted words that do not hold the value: not the value's evidence (no page holds 'France').
    assert check("France", "Governed by French law", "2") == (UNSUPPORTED, None, (QUOTE_LACKS_VALUE,))
    assert check("10 EUR", "Governed by French law", "2") == (WRONG_PAGE, 2, (QUOTE_LACKS_VALUE,))
    # Too short to look for alone, the value is read under its field's name, as a sentence under a heading.
    assert check("French law", "Governed by German law", "2") == (SUPPORTED, 3, (QUOTE_NOT_FOUND,))
    assert check("German law", "Governed by German law", "2") == (UNSUPPORTED, None, (QUOTE_NOT_FOUND,))
    assert check("10 EUR", "Fees are 10 EUR", "9") == (WRONG_PAGE, 2, (BAD_PAGE,))
    assert check("", "", "") == (UNSUPPORTED, None, (NO_QUOTE,))


def test_cells_from_answers_keep_what_the_model_said(ctx: AppContext, tmp_path: Path) -> None:
    """A quote that is not in the document stays visible as unsupported, never 'not stated'."""
    doc = ctx.library.add(make_text_pdf(tmp_path / "c.pdf", ["Fees are 10 EUR.", "Governed by French law."])).document
    fields = {f.key: f for f in TemplateStore.for_config(ctx.paths.config_dir).get("contract_review").fields}
    sources = Sources.load(ctx, [doc.id])
    law, cap = fields["governing_law"], fields["cap_on_liability"]
    answer = {"evidence": "Governed by French law.", "page": "2", "answer": "French law"}
    found = cell_from_answer(doc.id, FieldAsk(law), answer, sources)
    assert (found.found, found.verdict, found.page, found.display) == (True, QUOTED, 2, "French law")
    looked = cell_from_answer(doc.id, FieldAsk(law), {**answer, "answer": "Not stated."}, sources)
    assert (looked.found, looked.display, looked.quote) == (False, "not stated", "Governed by French law.")
    invented = cell_from_answer(
        doc.id, FieldAsk(law), {"evidence": "Governed by the laws of Texas.", "page": "2", "answer": "Texas"}, sources
    )
    assert (invented.found, invented.verdict, invented.display) == (True, UNSUPPORTED, "Texas")
    assert QUOTE_NOT_FOUND in invented.flags
    none = cell_from_answer(doc.id, FieldAsk(law), {"evidence": "", "answer": "not stated"}, sources)
    assert (none.found, none.verdict, none.display) == (False, "", "not stated")
    clause = {"clause": "Fees are 10 EUR.", "page": "1", "present": "yes"}
    assert cell_from_answer(doc.id, FieldAsk(cap), clause, sources).display == "Yes"
    rejected = cell_from_answer(doc.id, FieldAsk(cap), {**clause, "present": "no"}, sources)
    assert (rejected.found, rejected.display, rejected.quote) == (False, "No", "Fees are 10 EUR.")
    absent = cell_from_answer(doc.id, FieldAsk(cap), {"clause": "", "present": "no"}, sources)
    assert (absent.found, absent.display, absent.verdict) == (False, "No", "")
    # A clause picked from the passages the word search offered carries the passage as its quote.
    offered = FieldAsk(cap, candidates=(Passage(1, None, "Fees are 10 EUR."), Passage(2, None, "Governed by French")))
    picked = cell_from_answer(doc.id, offered, {"passage": 1, "present": "yes"}, sources)
    assert (picked.found, picked.quote, picked.page, picked.verdict) == (True, "Fees are 10 EUR.", 1, QUOTED)
    assert OFFERED in picked.flags
    judged = cell_from_answer(doc.id, offered, {"passage": 2, "present": "no"}, sources)
    assert (judged.found, judged.quote, judged.display) == (False, "Governed by French", "No")
    none_of_them = cell_from_answer(doc.id, offered, {"passage": 0, "present": "no"}, sources)
    assert (none_of_them.found, none_of_them.quote, none_of_them.flags) == (False, "", ())
    # A short answer picked from offered passages: the passage is the evidence, the answer is the value.
    passages = (Passage(1, None, "Fees are 10 EUR."), Passage(2, None, "Governed by French law."))
    law_offered = FieldAsk(law, candidates=passages)
    chosen = cell_from_answer(doc.id, law_offered, {"stated": "yes", "passage": 2, "answer": "French law"}, sources)
    assert (chosen.found, chosen.quote, chosen.page, chosen.verdict) == (True, "Governed by French law.", 2, QUOTED)
    assert OFFERED in chosen.flags
    # A value the picked passage does not hold is not quoted by it.
    misread = cell_from_answer(doc.id, law_offered, {"stated": "yes", "passage": 1, "answer": "Texas law"}, sources)
    assert misread.found and misread.verdict == UNSUPPORTED and QUOTE_LACKS_VALUE in misread.flags
    looked_there = cell_from_answer(
        doc.id, law_offered, {"stated": "yes", "passage": 1, "answer": "not stated"}, sources
    )
    assert (looked_there.found, looked_there.quote, looked_there.display) == (False, "Fees are 10 EUR.", "not stated")
    # None of them: the evidence the model copied from elsewhere, grounded as any other.
    elsewhere = cell_from_answer(doc.id, law_offered, {"stated": "yes", "passage": 0, **answer}, sources)
    assert (elsewhere.found, elsewhere.verdict, elsewhere.page) == (True, QUOTED, 2) and OFFERED not in elsewhere.flags
    nowhere = cell_from_answer(doc.id, law_offered, {"stated": "no", "answer": "not stated"}, sources)
    assert (nowhere.found, nowhere.quote, nowhere.verdict) == (False, "", "")


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

"""The CLI as a Unix tool: a closed pipe ends it quietly, `show --text` gives the whole marked text,
and `--json` gives scripts what the tables show."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_folio
from tests.fixtures.pdfs import make_contract_pdf, make_text_pdf

PAGES = 300
BLOCKS = 5


def _long_pdf(path: Path) -> Path:
    """300 pages of five separate paragraphs: well over a pipe's buffer in every listing below."""
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, PAGES + 1):
        page = doc.new_page(width=595, height=842)
        for k in range(BLOCKS):
            box = pymupdf.Rect(72, 72 + k * 140, 523, 200 + k * 140)
            page.insert_textbox(box, f"Clause {n}.{k}: the supplier shall deliver the goods in schedule {n}.")
    doc.save(path)
    doc.close()
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="the Unix pipe case: `folio ... | head`")
@pytest.mark.parametrize(
    "command",
    [
        ["show", "1", "--segments"],
        ["show", "1", "--text"],
        ["show", "1", "--json", "--segments"],
        ["search", "supplier", "--limit", "2000"],
    ],
    ids=" ".join,
)
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path, command: list[str]) -> None:
    code, _out, err = run_folio("add", str(_long_pdf(tmp_path / "long.pdf")))
    assert code == 0, err
    folio = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "app.cli", *command])
    # bash reports the exit status of each side of the pipe; folio's stderr is captured apart.
    script = f'{folio} 2>"$ERR" | head -n 1; echo "${{PIPESTATUS[0]}}"'
    errors = tmp_path / "stderr.txt"
    proc = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "ERR": str(errors)},
        timeout=120,
    )
    first, status = proc.stdout.splitlines()
    assert first  # head printed the first line of folio's output
    assert errors.read_text() == ""  # no traceback, no "Exception ignored ... BrokenPipeError"
    # A listing this long cannot fit the pipe: folio met the closed pipe and stopped as a Unix tool does.
    assert status == "141"


def test_show_text_prints_every_page_after_its_marker(tmp_path: Path) -> None:
    texts = [
        "The landlord lets the premises at 12 Harbour Street to the tenant.",
        "Rent is 2,400 euros a month, due on the first working day.",
        "The tenant keeps the premises in good repair, fair wear excepted.",
        "Either party may end this lease with three months' written notice.",
        "This lease is governed by the laws of Ireland.",
    ]
    pdf = make_text_pdf(tmp_path / "lease.pdf", texts, labels=[{"startpage": 0, "prefix": "", "style": "r"}])
    code, _out, err = run_folio("add", str(pdf))
    assert code == 0, err
    code, out, err = run_folio("show", "1", "--text")
    assert code == 0, err
    # The same markers the model sees: page labels (i, ii, ...), each followed by that page's whole text.
    parts = re.split(r"^(\[p\. [^\]]+\])$", out, flags=re.MULTILINE)
    assert parts[0] == ""
    markers, bodies = parts[1::2], parts[2::2]
    assert markers == ["[p. i]", "[p. ii]", "[p. iii]", "[p. iv]", "[p. v]"]
    for text, body in zip(texts, bodies, strict=True):
        assert " ".join(body.split()) == text


def test_show_text_of_a_video_gives_times_and_frames(tmp_path: Path) -> None:
    from tests.fixtures.media import make_video

    code, _out, err = run_folio("add", str(make_video(tmp_path / "clip.mp4")))
    assert code == 0, err
    code, out, _err = run_folio("show", "1", "--text")
    lines = out.splitlines()
    assert code == 0 and lines and lines[0] == "[t 00:00:00]"
    markers = lines[0::2]
    assert all(re.fullmatch(r"\[t \d\d:\d\d:\d\d\]", m) for m in markers)
    assert all(Path(line.removeprefix("(image: ").removesuffix(")")).is_file() for line in lines[1::2])


def test_json_output_matches_the_library(tmp_path: Path, starter_home: Path) -> None:
    from app.context import open_app
    from app.store.conversations import Conversations

    code, _out, err = run_folio("add", str(make_contract_pdf(tmp_path / "contract.pdf")))
    assert code == 0, err
    ctx = open_app()
    try:
        doc = ctx.library.all()[0]
        conv_id = Conversations(ctx.db).create([doc.id], "Governing law")
        segments = ctx.library.segments(doc.id)
    finally:
        ctx.close()

    listed = json.loads(run_folio("list", "--json")[1])
    assert [(d["id"], d["sha256"], d["title"], d["page_count"]) for d in listed] == [
        (doc.id, doc.sha256, doc.title, doc.page_count)
    ]

    shown = json.loads(run_folio("show", str(doc.id), "--json", "--segments")[1])
    assert shown["document"]["sha256"] == doc.sha256
    assert [p["number"] for p in shown["pages"]] == list(range(1, doc.page_count + 1))
    assert [s["text"] for s in shown["segments"]] == [s.text for s in segments]  # whole text, not previews
    assert shown["video"] is None and "text" not in shown

    marked = json.loads(run_folio("show", str(doc.id), "--json", "--text")[1])["text"]
    assert [b["marker"] for b in marked] == [f"[p. {n}]" for n in range(1, doc.page_count + 1)]

    conversations = json.loads(run_folio("conversations", "--json")[1])
    assert [(c["id"], c["title"], c["document_ids"]) for c in conversations] == [(conv_id, "Governing law", [doc.id])]

    code, out, err = run_folio("models", "list", "--json")
    assert code == 0, err
    models = json.loads(out)
    assert len(models) == 1 and models[0]["is_starter"] and models[0]["active"]
    assert re.fullmatch(r"[0-9a-f]{64}", models[0]["sha256"]) and Path(models[0]["path"]).is_file()


def test_empty_library_lists_as_an_empty_json_array() -> None:
    assert [json.loads(run_folio(c, "--json")[1]) for c in ("list", "conversations")] == [[], []]

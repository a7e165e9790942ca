"""The CLI as a Unix tool: a closed pipe ends it quietly, `show --text` gives the whole marked text,
and `--json` gives scripts what the tables show."""

from __future__ import annotations

import io
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
    assert len(models) == 1 and models[0]["is_starter"] and models[0]["active"] and models[0]["id"] == 1
    # Listed under its number before it is first used, and not set up by the listing.
    assert re.fullmatch(r"[0-9a-f]{64}", models[0]["sha256"]) and models[0]["set_up"] is False


def test_empty_library_lists_as_an_empty_json_array() -> None:
    assert [json.loads(run_folio(c, "--json")[1]) for c in ("list", "conversations")] == [[], []]


class _Screen(io.StringIO):
    """One terminal that both stdout and stderr write to."""

    def isatty(self) -> bool:
        return True


def test_progress_lines_never_join_the_answer_on_one_screen(tmp_path: Path) -> None:
    from app.cli.lines import Lines, ProgressLines
    from app.engine.session import Progress

    screen = _Screen()
    lines = Lines(screen, screen)
    progress = ProgressLines(lines)
    progress(Progress("loading the model"))
    progress(Progress(done=512, total=2048, eta_s=3))  # rewritten in place: the line stays open
    progress(Progress(done=1024, total=2048, eta_s=2))
    lines.write("The agreement is governed ")  # reading stopped short of the end: the answer still starts anew
    lines.write("by Indiana laws.")
    progress(Progress("checking every sentence against the documents"))
    lines.close()
    shown = screen.getvalue().split("\n")
    assert shown[-1] == ""  # both streams ended their lines
    assert "The agreement is governed by Indiana laws." in shown
    assert "... checking every sentence against the documents" in shown
    assert not any("laws.." in line or "tokens, ETA 2 s The" in line for line in shown)

    # Apart (the answer to a file, progress to the terminal): the answer's text is kept exactly.
    answer, terminal = tmp_path / "answer.txt", _Screen()
    with answer.open("w") as out:
        apart = Lines(out, terminal)
        apart.write("Indiana")
        ProgressLines(apart)(Progress("checking every sentence against the documents"))
        apart.write(" law.")
        apart.close()
    assert answer.read_text() == "Indiana law.\n"
    assert terminal.getvalue() == "... checking every sentence against the documents\n"


def test_a_real_answer_and_its_progress_on_one_stream(starter_home: Path, tmp_path: Path) -> None:
    """`folio ask ... 2>&1`: every progress line stands on its own line, never after the answer's text."""
    contract = make_contract_pdf(tmp_path / "contract.pdf")
    assert run_folio("add", str(contract))[0] == 0
    both = subprocess.run(
        [sys.executable, "-m", "app.cli", "ask", "1", "Which law governs this agreement?", "--max-tokens", "24"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert both.returncode == 0, both.stdout
    lines = both.stdout.splitlines()
    checking = [i for i, line in enumerate(lines) if "checking every sentence" in line]
    assert checking and all(lines[i].startswith("... checking every sentence") for i in checking), lines

"""Questions beyond one context, end to end with the REAL starter model on a context deliberately too
small for the documents (the user's context limit): a document read in passes whose windows cover
every page, a page selection, the pages a word search ranks, several documents answered one by one,
and a stop between two passes that keeps what was read. Whatever the demo model writes, the footer
must say exactly what it read."""

from __future__ import annotations

import itertools
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_folio
from tests.fixtures.pdfs import make_text_pdf
from tests.fixtures.prompt_calls import record_prompt_calls

pytestmark = pytest.mark.e2e

CONTEXT = 1024  # tokens: the instructions, a few pages and a 48-token answer
ARBITRATION_PAGE = 9


def _settings(home: Path) -> None:
    # One llama.cpp thread: the test machines are small and shared.
    (home / "config" / "settings.toml").write_text(
        "schema_version = 1\nmax_answer_tokens = 48\nread_ahead = false\nthreads = 1\n"
        f"context_cap = {CONTEXT}\nthinking = false\n"
    )


def _pages(what: str, count: int) -> list[str]:
    pages = []
    for p in range(1, count + 1):
        text = (
            f"Clause {p}. The {what} shall deliver batch {p} of the goods to the buyer within {p + 9} days of "
            f"the order, packed and insured, and the buyer shall pay invoice {p} within {p + 29} days of "
            f"receipt. Late delivery of batch {p} entitles the buyer to a credit of {p} percent of its price. "
            f"The {what} warrants that batch {p} conforms to specification {p}-A for {p + 11} months, and shall "
            f"replace any unit of batch {p} found defective within {p + 4} business days of the buyer's notice."
        )
        if p == ARBITRATION_PAGE:
            text += " Any dispute shall be settled by arbitration in Geneva under the rules of the ICC."
        pages.append(text)
    return pages


def _long_pdf(tmp_path: Path, name: str = "supply.pdf", what: str = "supplier", pages: int = 12) -> Path:
    return make_text_pdf(tmp_path / name, _pages(what, pages))


def _assistant(home: Path) -> sqlite3.Row:
    db = sqlite3.connect(home / "data" / "folio.sqlite3")
    db.row_factory = sqlite3.Row
    rows = db.execute("SELECT * FROM messages ORDER BY seq").fetchall()
    claims = db.execute("SELECT char_start, char_end, text FROM claims").fetchall()
    db.close()
    assert [r["role"] for r in rows] == ["user", "assistant"]  # one question, one stored turn
    answer = rows[1]
    for start, end, text in claims:  # every checked sentence sits where the stored text has it
        assert answer["text"][start:end] == text
    return answer


def _windows(footer: str) -> list[tuple[int, int]]:
    listed = re.search(r"in (\d+) passes: pages ([\d, -]+)\.$", footer)
    assert listed, footer
    windows = [tuple(int(n) for n in w.split("-")) for w in listed.group(2).split(", ")]
    assert len(windows) == int(listed.group(1))
    return [(w[0], w[-1]) for w in windows]


def test_a_document_too_long_is_read_in_passes_that_cover_every_page(starter_home: Path, tmp_path: Path) -> None:
    _settings(starter_home)
    pdf = _long_pdf(tmp_path)
    code, _out, err = run_folio("add", str(pdf))
    assert code == 0, err

    code, out, err = run_folio("ask", str(pdf), "When is batch 7 delivered?")
    refused = [line for line in err.splitlines() if line.startswith("folio: error:")]
    assert code == 1 and len(refused) == 1 and "but your context limit holds 1,024" in refused[0], err
    # Each reading with how long it takes; nothing was read with the model here yet, so no number.
    unknown = "time unknown until Folio has read a document with this model"
    offered = re.search(
        rf"--strategy passes \(every page, in passes: (\d+) parts, {unknown}\), --strategy search \(the pages a "
        rf"word search ranks highest: one pass, {unknown}\) or --pages LIST$",
        refused[0],
    )
    assert offered, refused[0]

    code, out, err = run_folio("ask", "--strategy", "passes", str(pdf), "When is batch 7 delivered?")
    assert code == 0, err
    answer = _assistant(starter_home)
    assert answer["status"] == "complete" and out.startswith(answer["text"])
    last = answer["text"].splitlines()[-1]
    assert last.startswith("Read: pages 1-12 in ")
    windows = _windows(last)
    assert len(windows) >= 2 and windows[0][0] == 1 and windows[-1][1] == 12
    for (_, end), (start, _) in itertools.pairwise(windows):
        assert start == end  # contiguous, one page of overlap: no page skipped
    assert f"read in {len(windows)} passes" in answer["text"]
    assert re.search(r"part \d+ of \d+: pages 1-\d+", err)  # progress, pass by pass
    rows = [line for line in answer["text"].splitlines() if re.match(r"\| \d+-\d+ \|", line)]
    assert len(rows) == len(windows)  # one row per pass, each with its finding or "found nothing"
    assert int(offered.group(1)) == len(windows)  # the parts estimated were the passes read

    # That answer measured the model's reading and writing here: asked again, each reading has a time.
    code, _out, err = run_folio("ask", str(pdf), "When is batch 5 delivered?")
    refused = [line for line in err.splitlines() if line.startswith("folio: error:")]
    timed = r"about \d+(\.\d)? (s|min|h) on this computer"
    assert code == 1 and re.search(
        rf"\(every page, in passes: {len(windows)} parts, {timed}\), --strategy search \(the pages a word "
        rf"search ranks highest: one pass, {timed}\)",
        refused[0],
    ), err


def test_pages_limit_what_is_read_and_the_footer_says_so(starter_home: Path, tmp_path: Path) -> None:
    _settings(starter_home)
    pdf = _long_pdf(tmp_path)
    assert run_folio("add", str(pdf))[0] == 0

    code, _out, err = run_folio("ask", "--pages", "5-2", str(pdf), "When is batch 3 delivered?")
    assert code == 2 and err.strip() == "folio: error: --pages: '5-2' runs backwards: write the lower page first (2-5)"
    code, _out, err = run_folio("ask", "--pages", "2-3,40", str(pdf), "When is batch 3 delivered?")
    assert code == 1 and "has 12 pages: pages 40 are past its end" in err

    code, _out, err = run_folio("ask", "--pages", "2-3", str(pdf), "When is batch 3 delivered?")
    assert code == 0, err
    answer = _assistant(starter_home)
    footer = answer["text"].splitlines()[-1]
    assert footer == "Read: pages 2-3 of 12 (chosen by the user); not read: the other 10 pages."
    assert 0 < answer["prompt_tokens"] < CONTEXT


def test_search_reads_the_pages_holding_the_question_words(starter_home: Path, tmp_path: Path) -> None:
    from app.context import open_app
    from app.passes.service import LongQuestion

    _settings(starter_home)
    ctx = open_app()
    from app.chat import ChatService

    long = LongQuestion(ChatService(ctx))
    try:
        doc = ctx.library.add(_long_pdf(tmp_path)).document
        message = long.ask([doc.id], "Where is arbitration held?", strategy="search")
    finally:
        long.chat.close()
    footer = message.text.splitlines()[-1]
    read = re.match(r"Read: pages? ([\d, -]+) of 12 \(those a word search ranks highest", footer)
    assert read, footer
    assert f"{ARBITRATION_PAGE}" in read.group(1).replace("-", ", ").split(", ")
    assert "not read: the other" in footer
    assert message.status == "complete"
    ctx.close()


def test_documents_that_do_not_fit_together_are_answered_one_by_one(starter_home: Path, tmp_path: Path) -> None:
    from app.chat import ChatEvent, ChatService
    from app.context import open_app
    from app.engine.progress import Progress
    from app.passes.service import LongQuestion

    _settings(starter_home)
    ctx = open_app()
    long = LongQuestion(ChatService(ctx))
    events: list[ChatEvent] = []
    try:
        supply = ctx.library.add(make_text_pdf(tmp_path / "supply.pdf", _pages("supplier", 4))).document
        service = ctx.library.add(make_text_pdf(tmp_path / "service.pdf", _pages("contractor", 4))).document
        message = long.ask(
            [supply.id, service.id], "When is batch 2 delivered?", strategy="passes", on_event=events.append
        )
        conversation = long.chat.conversations.get(message.conversation_id)
    finally:
        long.chat.close()
    assert conversation.document_ids == [supply.id, service.id]
    assert message.status == "complete"
    lines = message.text.splitlines()
    assert "| Document | Answer |" in lines
    assert any(line.startswith(f"| D1 {supply.title} |") for line in lines), message.text
    assert any(line.startswith(f"| D2 {service.title} |") for line in lines), message.text
    assert lines[-3:] == [
        "Read, document by document:",
        f"- D1 {supply.title}: pages 1-4, whole",
        f"- D2 {service.title}: pages 1-4, whole",
    ]
    assert any(isinstance(e, Progress) and e.text.startswith("part 2 of 2: D2") for e in events)
    for claim in message.claims:  # each answer was checked, and points at its own document
        assert message.text[claim["start"] : claim["end"]] == claim["text"]
    ctx.close()


def test_the_estimate_of_documents_one_by_one_counts_what_was_read_ahead(starter_home: Path, tmp_path: Path) -> None:
    from app.caches import Readings
    from app.chat import ChatService
    from app.context import open_app
    from app.passes.service import LongQuestion
    from app.reading import read_document

    _settings(starter_home)
    ctx = open_app()
    long = LongQuestion(ChatService(ctx))
    question = "When is batch 2 delivered?"
    try:
        supply = ctx.library.add(make_text_pdf(tmp_path / "supply.pdf", _pages("supplier", 4))).document
        service = ctx.library.add(make_text_pdf(tmp_path / "service.pdf", _pages("contractor", 4))).document
        cold = long.estimate([supply.id, service.id], question)
        stats = read_document(ctx, long.session, supply.id, lambda _p: None)  # as read-ahead reads it
        warm = long.estimate([supply.id, service.id], question)
        model = ctx.models.active_sha256(ctx.settings)
        kept = Readings(ctx.paths).state(model, supply.sha256)
    finally:
        long.chat.close()
        ctx.close()
    # Nothing measured before the read; each document whole, one part each, then the merged answer.
    assert (cold.passes.parts, cold.passes.answers, cold.passes.kept_tokens) == (2, 3, 0)
    assert cold.passes.words() == "time unknown until Folio has read a document with this model"
    # The read kept the first document's state, and measured how fast the model reads here.
    assert kept.kind == "ready" and warm.passes.kept_tokens == kept.done > 0
    assert warm.passes.prompt_tokens == cold.passes.prompt_tokens
    read = stats.prompt_tokens - stats.cached_tokens
    assert warm.passes.speed.read_per_s == pytest.approx(read / (stats.prefill_ms / 1000))
    assert re.fullmatch(r"about \d+ s of reading on this computer, then writing 3 answers", warm.passes.words())
    assert warm.search.kept_tokens == 0  # the search reads pages of both in one request: nothing kept


def test_a_stop_between_passes_keeps_the_passes_done(starter_home: Path, tmp_path: Path) -> None:
    from app.chat import ChatEvent, ChatService
    from app.context import open_app
    from app.engine.progress import Progress
    from app.engine.session import CancelToken
    from app.passes.service import LongQuestion

    _settings(starter_home)
    ctx = open_app()
    long = LongQuestion(ChatService(ctx))
    stop = CancelToken()

    def on_event(event: ChatEvent) -> None:
        if (
            isinstance(event, Progress)
            and event.text.startswith("part 1 of ")
            and event.text.endswith(("answered", "found nothing"))
        ):
            stop.cancel()  # as Stop pressed while the first pass is stored

    try:
        doc = ctx.library.add(_long_pdf(tmp_path)).document
        message = long.ask([doc.id], "When is batch 7 delivered?", strategy="passes", on_event=on_event, cancel=stop)
    finally:
        long.chat.close()
    assert message.status == "cancelled"
    footer = message.text.splitlines()[-1]
    done = re.match(r"Read: pages 1-(\d+) in 1 of \d+ passes: pages 1-\d+; not read: pages (\d+)-12 \(stopped", footer)
    assert done, footer
    assert int(done.group(2)) == int(done.group(1)) + 1  # the rest of the document, named
    rows = [line for line in message.text.splitlines() if re.match(r"\| \d+-\d+ \|", line)]
    assert len(rows) == 1  # the pass done is kept

    # The same question again continues: the pass done is taken as it was kept, the rest is read.
    ctx = open_app()
    long = LongQuestion(ChatService(ctx))
    said: list[str] = []
    try:
        # The estimate counts only the passes still to ask: the one kept is not asked again.
        ahead = long.estimate([doc.id], "When is batch 7 delivered?").passes
        again = long.ask(
            [doc.id],
            "When is batch 7 delivered?",
            strategy="passes",
            on_event=lambda e: said.append(e.text) if isinstance(e, Progress) else None,
        )
        kept_keys = [r[0] for r in ctx.db.execute("SELECT request_key FROM answer_parts WHERE seq = 1")]
        reusable = [long.chat.conversations.kept_part(k) for k in kept_keys]
    finally:
        long.chat.close()
        ctx.close()
    assert again.status == "complete"
    total = re.search(r"in 1 of (\d+) passes", footer)
    assert total and ahead.parts == int(total.group(1)) - 1, ahead
    first = [t for t in said if t.startswith("part 1 of ")]
    assert len(first) == 1 and first[0].endswith("kept from an earlier reading"), said  # not asked again
    assert [t for t in said if t.startswith("part 2 of ")][-1].endswith(("answered", "found nothing"))
    again_rows = [line for line in again.text.splitlines() if re.match(r"\| \d+-\d+ \|", line)]
    assert again_rows[0] == rows[0] and len(again_rows) > 1
    assert again.text.splitlines()[-1].startswith("Read: pages 1-12 in ")
    assert len(kept_keys) == 2 and reusable == [None, None]  # a finished reply's parts are not reused


def test_a_question_over_documents_killed_midway_continues_from_the_documents_done(
    starter_home: Path, tmp_path: Path
) -> None:
    """`folio ask` over three documents that do not fit together, SIGKILLed (with its engine) once the
    first document's answer is stored: the same command again takes that answer as kept and asks only
    the other two."""
    _settings(starter_home)
    names = ("supplier", "contractor", "licensor")
    pdfs = [make_text_pdf(tmp_path / f"{what}.pdf", _pages(what, 4)) for what in names]
    for pdf in pdfs:
        assert run_folio("add", str(pdf))[0] == 0
    ask = ["ask", "--strategy", "passes", "1", "2", "3", "When is batch 2 delivered?"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", *ask],
        cwd=REPO,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if "part 1 of 3: D1" in line and line.rstrip().endswith(("answered", "found nothing")):
                break  # said once the answer is stored
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its engine child, as a power cut would
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    assert any("part 1 of 3: D1" in line and ("answered" in line or "found nothing" in line) for line in seen), seen

    code, _out, err = run_folio(*ask)
    assert code == 0, err
    assert re.search(r"part 1 of 3: D1: kept from an earlier reading$", err, re.MULTILINE), err
    assert not re.search(r"part 1 of 3: D1(, about .*)?$", err, re.MULTILINE)  # D1 was not asked again
    assert re.search(r"part 2 of 3: D2$", err, re.MULTILINE), err  # no time guessed from a kept part
    assert re.search(r"part 2 of 3: D2: (answered|found nothing)$", err, re.MULTILINE), err
    assert re.search(r"part 3 of 3: D3: (answered|found nothing)$", err, re.MULTILINE), err
    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    statuses = [r[0] for r in db.execute("SELECT status FROM messages WHERE role = 'assistant' ORDER BY id")]
    db.close()
    assert statuses == ["incomplete", "complete"]  # the killed reply is kept as it was, marked unfinished


def test_a_question_over_the_whole_matter_reads_its_documents_only(starter_home: Path, tmp_path: Path) -> None:
    _settings(starter_home)
    assert run_folio("add", str(make_text_pdf(tmp_path / "other.pdf", _pages("carrier", 2))))[0] == 0  # Unfiled
    assert run_folio("matter", "new", "Acme supply", "--use")[0] == 0
    for what in ("supplier", "contractor"):
        assert run_folio("add", str(make_text_pdf(tmp_path / f"{what}.pdf", _pages(what, 4))))[0] == 0
    code, _out, err = run_folio("ask", "--all", "1", "When is batch 2 delivered?")
    assert code == 2 and "give only the question" in err

    code, out, err = run_folio("ask", "--all", "When is batch 2 delivered?")
    assert code == 0, err
    answer = _assistant(starter_home)
    assert out.startswith(answer["text"])
    assert "each was asked the question alone" in answer["text"]  # the two do not fit together
    read = answer["text"].splitlines()[-3:]
    assert read[0] == "Read, document by document:" and len(read) == 3  # the matter's two, not the third
    assert all("pages 1-4, whole" in line for line in read[1:])
    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    matter = db.execute(
        "SELECT m.name FROM conversations c JOIN matters m ON m.id = c.matter_id WHERE c.id = ?",
        [answer["conversation_id"]],
    ).fetchone()
    db.close()
    assert matter == ("Acme supply",)


def test_the_reading_estimated_is_the_reading_run_and_a_stop_ends_its_planning(
    starter_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan an estimate made is the one the run reads by (planning a long document measures every
    window, seconds of the engine's time); a plan of another question is not taken; and a Stop while a
    reading is planned ends it before anything is stored."""
    from app.chat import ChatService
    from app.context import open_app
    from app.engine.session import CancelToken
    from app.errors import Cancelled
    from app.passes.service import LongQuestion

    # `stop` is cancelled at its count, as Stop pressed meanwhile.
    stop: list[tuple[int, CancelToken]] = []

    def stop_at(n: int) -> None:
        for at, token in stop:
            if n == at:
                token.cancel()

    calls = record_prompt_calls(monkeypatch, stop_at)
    _settings(starter_home)
    ctx = open_app()
    long = LongQuestion(ChatService(ctx))
    question = "When is batch 7 delivered?"
    try:
        doc = ctx.library.add(_long_pdf(tmp_path)).document
        offered = long.estimate([doc.id], question)
        plan = offered.plan("passes")
        assert plan is not None and len(plan.requests) == offered.passes.parts >= 2
        assert calls and "prepare" not in calls  # the estimate measured, and asked the model nothing

        calls.clear()
        message = long.ask([doc.id], question, strategy="passes", plan=plan)
        # Every count the run made was a request's own prompt: nothing was measured to plan it again.
        assert all(calls[i - 1] == "prepare" for i, call in enumerate(calls) if call == "count"), calls
        assert calls.count("prepare") >= len(plan.requests)
        assert message.status == "complete"
        windows = _windows(message.text.splitlines()[-1])
        assert windows == [(r.pages[doc.id][0], r.pages[doc.id][-1]) for r in plan.requests if r.pages]

        stored = ctx.db.execute("SELECT count(*) FROM messages").fetchone()[0]
        # Another question: its reading is planned again (not read by this plan); Stop while it is.
        calls.clear()
        stop[:] = [(2, CancelToken())]
        with pytest.raises(Cancelled):
            long.ask([doc.id], "When is batch 3 delivered?", strategy="passes", plan=plan, cancel=stop[0][1])
        assert "prepare" not in calls  # the model was asked nothing
        # The estimate stops as well, between two of its measures.
        calls.clear()
        stop[:] = [(2, CancelToken())]
        with pytest.raises(Cancelled):
            long.estimate([doc.id], question, cancel=stop[0][1])
        assert calls.count("count") == 2
        assert ctx.db.execute("SELECT count(*) FROM messages").fetchone()[0] == stored  # nothing half-stored
    finally:
        long.chat.close()
        ctx.close()

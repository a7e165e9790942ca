"""How long each offered reading of a question too big for the context would take: the arithmetic on
figures measured in benchmarks/RESULTS.md (Qwen2.5-Coder-1.5B Q4_K_M on the 2-CPU test machine: 17,028
tokens read in 698.8 s; 304 tokens written in 4 answers at 9.4 tok/s), and the measurements it is
fed from, in a real SQLite library and real reading records."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.caches import Readings
from app.context import AppContext
from app.passes.estimate import ReadingEstimate, Speed, estimate
from app.store.conversations import Conversations, KeptPart

MODEL = "a" * 64
# Qwen2.5-Coder-1.5B on this machine: its read-ahead of a 17,028-token PDF, its free-form answers.
READ = (17_028, 698_800.0)
WRITTEN = (304, 304 / 9.4 * 1000)
QWEN_1_5B = Speed.measured([READ], WRITTEN, answers=4, longest_answer=1024)


def test_the_measured_speeds_are_tokens_over_seconds() -> None:
    assert QWEN_1_5B.read_per_s == pytest.approx(24.37, abs=0.01)
    assert QWEN_1_5B.write_per_s == pytest.approx(9.4)
    assert QWEN_1_5B.answer_tokens == 76
    # An answer's usual length is never counted longer than the longest answer now allowed.
    assert Speed.measured([READ], WRITTEN, answers=4, longest_answer=48).answer_tokens == 48
    # Answers and reads ahead are added up, tokens and seconds alike.
    both = Speed.measured([READ, (4_268, 4_268 / 226 * 1000)], WRITTEN, 4, 1024)
    assert both.read_per_s == pytest.approx((17_028 + 4_268) / (698.8 + 4_268 / 226))


def test_a_600_page_document_in_20_passes_takes_hours_and_the_search_minutes() -> None:
    passes = estimate("passes", [31_000] * 20, [0] * 20, QWEN_1_5B)
    assert (passes.parts, passes.answers) == (20, 21)  # 20 passes, then the short answer merged from them
    assert passes.prompt_tokens == 20 * 31_000 + 20 * 76  # the merge reads the 20 answers
    assert passes.seconds == pytest.approx(621_520 / QWEN_1_5B.read_per_s + 21 * 76 / 9.4)
    assert passes.line() == "20 parts, about 7.1 h on this computer"

    search = estimate("search", [31_000], [0], QWEN_1_5B)
    assert (search.parts, search.answers, search.prompt_tokens) == (1, 1, 31_000)
    assert search.seconds == pytest.approx(31_000 / QWEN_1_5B.read_per_s + 76 / 9.4)  # 1,280 s
    assert search.line() == "one pass, about 21 min on this computer"


def test_what_the_kept_states_hold_is_not_read_again() -> None:
    # Three leases read one by one; the first was read ahead (16,921 of its 17,028 tokens kept).
    cold = estimate("passes", [17_028, 9_500, 12_200], [0, 0, 0], QWEN_1_5B)
    warm = estimate("passes", [17_028, 9_500, 12_200], [16_921, 0, 0], QWEN_1_5B)
    assert warm.tokens_to_read == cold.tokens_to_read - 16_921
    assert cold.seconds is not None and warm.seconds is not None
    assert cold.seconds - warm.seconds == pytest.approx(16_921 / QWEN_1_5B.read_per_s)
    assert (cold.line(), warm.line()) == (
        "3 parts, about 27 min on this computer",
        "3 parts, about 16 min on this computer",
    )
    # A state as long as the request or longer is not the prefix the request starts from: all is read.
    assert estimate("passes", [500], [900], QWEN_1_5B).tokens_to_read == 500


def test_parts_a_stopped_run_answered_are_not_asked_again() -> None:
    resumed = estimate("passes", [0, 0, 31_000], [0, 0, 0], QWEN_1_5B)
    assert (resumed.parts, resumed.prompt_tokens) == (1, 31_000)
    done = estimate("passes", [0, 0], [0, 0], QWEN_1_5B)
    assert done.line() == "answered before: nothing left to read"


def test_without_a_measurement_the_time_is_unknown_not_guessed() -> None:
    unknown = estimate("passes", [31_000] * 3, [0] * 3, Speed.measured([(0, 0.0)], (0, 0.0), 0, 1024))
    assert unknown.seconds is None
    assert unknown.line() == "3 parts, time unknown until Folio has read a document with this model"
    # Read ahead, never asked: the reading has a time, the writing is said as what follows it.
    read_only = estimate("search", [24_370], [0], Speed.measured([READ], (0, 0.0), 0, 1024))
    assert read_only.seconds is None
    assert read_only.line() == "one pass, about 17 min of reading on this computer, then writing 1 answer"


def test_a_reading_that_cannot_be_done_says_why() -> None:
    said = "a word search finds none of the question's words (tax) in the selection"
    assert ReadingEstimate("search", speed=QWEN_1_5B, note=said).line() == said


def test_the_answers_figures_are_those_of_the_model_that_reads(ctx: AppContext, tmp_path: Path) -> None:
    lease = tmp_path / "lease.txt"
    lease.write_text("LEASE\n\n1. The term ends on 31 March 2027.\n", encoding="utf-8")
    conversations = Conversations(ctx.db)
    conv = conversations.create([ctx.library.add(lease).document.id], "lease")
    assert conversations.answer_figures(MODEL).read_tokens == 0  # nothing answered yet

    def answer(sha: str, prompt: int, cached: int, prefill: float, written: int, generate: float) -> int:
        conversations.add_message(conv, "user", "When does the lease end?")
        return conversations.add_message(
            conv, "assistant", "On 31 March.", model_sha256=sha, prompt_tokens=prompt, cached_tokens=cached,
            prefill_ms=prefill, completion_tokens=written, generate_ms=generate,
        )  # fmt: skip

    answer(MODEL, 17_028, 0, 698_800.0, 76, 8_085.0)
    answer(MODEL, 17_040, 17_010, 1_230.0, 80, 8_510.0)  # read from the kept state: 30 tokens read
    answer("b" * 64, 4_000, 0, 20_000.0, 50, 1_000.0)  # another model's
    figures = conversations.answer_figures(MODEL)
    assert (figures.read_tokens, figures.read_ms) == (17_058, 700_030.0)
    assert (figures.answers, figures.written_tokens, figures.write_ms) == (2, 156, 16_595.0)
    # The read-ahead plan's speed (app/reading.py) is the same figures' tokens over seconds.
    assert figures.read_per_s == pytest.approx(17_058 / 700.030)

    # A reply read in 3 passes: the figures of its 3 requests added up, 3 answers of ~80 tokens, not one
    # of 240 (the usual answer an estimate multiplies by the answers it will write).
    passes = answer(MODEL, 3_000, 0, 120_000.0, 240, 25_000.0)
    for seq in (1, 2, 3):
        conversations.update_message(passes, part=KeptPart(seq, f"key {seq}", f"Pass {seq}: the term ends in 2027."))
    figures = conversations.answer_figures(MODEL)
    assert (figures.answers, figures.written_tokens) == (5, 396)
    assert figures.written_tokens / figures.answers == pytest.approx(79.2)


def test_reads_ahead_leave_their_speed_in_the_reading_records(ctx: AppContext) -> None:
    readings = Readings(ctx.paths)
    assert readings.reading_figures(MODEL) == (0, 0.0)
    readings.note(MODEL, "1" * 64, read_tokens=17_028, read_ms=698_800.0)
    readings.note(MODEL, "2" * 64, key="k", total=9_000)  # read by a question: no speed of its own
    readings.note(MODEL, "3" * 64, read_tokens=4_268, read_ms=18_885.0)
    readings.note("b" * 64, "1" * 64, read_tokens=100, read_ms=1.0)  # another model
    readings.note_documents(MODEL, ["1" * 64, "2" * 64], key="k2", tokens=26_000)  # a set's record
    assert readings.reading_figures(MODEL) == (21_296, 717_685.0)

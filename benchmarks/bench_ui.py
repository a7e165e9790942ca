"""UI responsiveness: is the window ever frozen? Writes its section of benchmarks/RESULTS.md.

A QTimer probe on the main thread fires every 5 ms and records how late each tick is; a late tick
is a frame the window could not draw. Goal: no stall over 50 ms.

Part 1, the real window (offscreen platform, or Xvfb) with the real starter model:
  A. adding a batch in the background: a 300-page text PDF, a 6-page scanned PDF, a video clip;
  B. a long answer streaming in (the model in its own process, tokens rendered as Markdown);
  C. paging and zooming through the 300-page PDF and the scanned one (pages drawn on a worker);
  D. all three at once.
Part 2, the same streamed answer replayed side by side into a transcript that already holds a
long conversation: Folio's incremental rendering against re-rendering the whole transcript's
Markdown on every update (throttled at 60 ms, and per token).

Run: .venv/bin/python benchmarks/bench_ui.py [--tokens 160] [--no-write] [--window-only] [--stacks FILE]
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import write_section  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

HEADING = "## UI responsiveness (benchmarks/bench_ui.py)"
PROBE_MS = 5
GOAL_MS = 50.0
STACKS = None  # --stacks: a file that gets every thread's stack whenever a tick is over the goal

from PySide6.QtCore import QEventLoop, QObject, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QTextBrowser  # noqa: E402

from app.store.conversations import MessageRow  # noqa: E402


class Probe(QObject):
    """Ticks every PROBE_MS on the UI thread; lateness = gap between ticks minus the interval."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(PROBE_MS)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self._last = 0.0

    def start(self) -> None:
        self.gaps = []
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> list[float]:
        self.timer.stop()
        if STACKS is not None:
            faulthandler.cancel_dump_traceback_later()
        return [max(0.0, g - PROBE_MS) for g in self.gaps]

    def _tick(self) -> None:
        if STACKS is not None:  # re-armed every tick: fires only when the UI thread misses the goal
            faulthandler.dump_traceback_later(GOAL_MS / 1000, file=STACKS)
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000)
        self._last = now


def spin_until(done: Callable[[], bool], timeout_s: float, step: Callable[[], None] | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark step did not finish in time")
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()
        if step is not None:
            step()


def settle(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def summary(name: str, lateness: list[float], seconds: float, extra: str = "") -> dict[str, object]:
    ordered = sorted(lateness) or [0.0]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name}: {seconds:.1f} s, longest stall {ordered[-1]:.0f} ms, p99 {p99:.0f} ms", file=sys.stderr)
    return {
        "name": name,
        "seconds": seconds,
        "ticks": len(lateness),
        "max": ordered[-1],
        "p99": p99,
        "over": sum(1 for x in ordered if x > GOAL_MS),
        "extra": extra,
    }


# -- part 1: the real window ---------------------------------------------------------------------
def make_inputs(folder: Path) -> dict[str, Path]:
    from tests.fixtures.media import make_scan, make_scanned_pdf, make_video, render_text_page
    from tests.fixtures.pdfs import make_contract_pdf, make_text_pdf

    clause = (
        "The Supplier shall maintain insurance with reputable insurers against such risks and in such amounts "
        "as are customary for businesses of its kind, and shall on request provide evidence of that cover. "
    )
    pages = [f"Schedule {i}\n\n" + clause * 12 for i in range(1, 301)]
    page = render_text_page()
    return {
        "contract": make_contract_pdf(folder / "contract.pdf"),
        "big": make_text_pdf(folder / "schedules-300p.pdf", pages),
        "big2": make_text_pdf(folder / "annex-300p.pdf", [p.replace("Supplier", "Vendor") for p in pages]),
        "scan": make_scanned_pdf(folder / "scan-6p.pdf", [make_scan(page, degrees=1.5) for _ in range(6)]),
        "video": make_video(folder / "clip.mp4"),
    }


class Recorder(QObject):
    """Receives the worker's chat events on the UI thread (a bound method of a UI-thread QObject)."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []

    def on_event(self, event: object) -> None:
        from app.chat import AnswerDelta

        if isinstance(event, AnswerDelta) and event.channel == "answer":
            self.pieces.append(event.text)


def run_window(tokens: int) -> tuple[list[dict[str, object]], list[str]]:
    home = Path(tempfile.mkdtemp(prefix="folio-bench-ui-"))
    os.environ["FOLIO_HOME"] = str(home)
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text(f"schema_version = 1\nmax_answer_tokens = {tokens}\n")
    from app.context import open_app
    from ui.main_window import MainWindow

    files = make_inputs(home)
    ctx = open_app()
    ctx.models.active(ctx.settings)  # assemble the starter model before anything is timed
    window = MainWindow(ctx)
    window.resize(1400, 860)
    window.show()
    recorder = Recorder()
    window.engine_worker.chat_event.connect(recorder.on_event)
    probe = Probe()
    rows: list[dict[str, object]] = []

    def add(paths: list[Path]) -> None:
        window.add_paths([str(p) for p in paths], interactive=False)

    def ingest_done(expected: int) -> Callable[[], bool]:
        return lambda: window.ctx.library.count() >= expected and not window.library.progress_row.isVisible()

    add([files["contract"], files["big"]])
    spin_until(ingest_done(2), 600)
    contract = next(d for d in ctx.library.all() if d.title == "Master Services Agreement")
    big = next(d for d in ctx.library.all() if d.page_count == 300)

    def ask() -> None:
        window.library.select(contract.id)
        window.conversation_list.new()
        window.chat.input.setPlainText("Restate every clause of this agreement in your own words, in detail.")
        window.chat.send_button.click()

    # Warm the engine (model load) so B and D measure streaming, not the child process starting;
    # stopped at its first token, the warm-up costs no answer's worth of time.
    ask()
    spin_until(lambda: bool(recorder.pieces), 900)
    window.stop()
    spin_until(lambda: window.chat.send_button.isEnabled(), 120)

    started = time.perf_counter()
    probe.start()
    add([files["big2"], files["scan"], files["video"]])
    spin_until(ingest_done(5), 900)
    rows.append(summary("A. adding 300-p PDF + 6-p scan + clip", probe.stop(), time.perf_counter() - started))

    recorder.pieces = []
    started = time.perf_counter()
    probe.start()
    ask()
    spin_until(lambda: window.chat.send_button.isEnabled(), 900)
    lateness = probe.stop()
    answer = list(recorder.pieces)
    extra = f"{len(answer)} tokens, {len(''.join(answer)):,} chars"
    rows.append(summary("B. long answer streaming", lateness, time.perf_counter() - started, extra))

    scan = next(d for d in ctx.library.all() if d.title.startswith("scan"))
    pages_seen: list[int] = []
    window.viewer.page_shown.connect(lambda _d, p: pages_seen.append(p))

    def paging(doc_id: int, steps: int) -> Callable[[], None]:
        state = {"n": 0, "next": time.monotonic()}
        window.viewer.show_page(doc_id, 1)

        def step() -> None:
            if state["n"] >= steps or time.monotonic() < state["next"]:
                return
            state["n"] += 1
            state["next"] = time.monotonic() + 0.15
            if state["n"] % 5 == 0:
                window.viewer.zoom_in()
            elif state["n"] % 5 == 1 and state["n"] > 1:
                window.viewer.fit()
            else:
                window.viewer.next_page()

        return step

    started = time.perf_counter()
    probe.start()
    for doc_id, steps in ((big.id, 40), (scan.id, 12)):
        step = paging(doc_id, steps)
        deadline = time.monotonic() + 0.15 * steps + 2
        spin_until(lambda deadline=deadline: time.monotonic() > deadline, 0.15 * steps + 30, step)
    rows.append(
        summary(
            "C. paging + zooming (300-p PDF, scan)",
            probe.stop(),
            time.perf_counter() - started,
            f"{len(pages_seen)} pages drawn",
        )
    )

    started = time.perf_counter()
    pages_seen.clear()
    for doc in ctx.library.all():
        if doc.id not in (contract.id, big.id):
            ctx.db.execute("DELETE FROM documents WHERE id = ?", [doc.id])
    window.refresh_library()
    probe.start()
    add([files["big2"], files["scan"], files["video"]])
    ask()
    step = paging(big.id, 10_000)
    spin_until(lambda: window.chat.send_button.isEnabled() and ingest_done(5)(), 900, step)
    rows.append(
        summary("D. all at once", probe.stop(), time.perf_counter() - started, f"{len(pages_seen)} pages drawn")
    )
    window.close()
    ctx.close()
    return rows, answer


# -- part 2: rendering strategies ----------------------------------------------------------------
def history(n: int) -> list[MessageRow]:
    body = (
        "The agreement is governed by Delaware law [p. 4]. **Termination**: either party may end it on "
        "ninety days' written notice [p. 3].\n\n| Clause | Page |\n| --- | --- |\n| Fees | 2 |\n| Notices | 4 |\n\n"
        "- confidentiality for five years [p. 2]\n- liability capped at twelve months of fees [p. 3]\n\n"
    ) * 3
    rows = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Question {i} about the contract?" if role == "user" else body
        rows.append(
            MessageRow(
                i + 1, 1, i + 1, role, text, "", [], "model", None, None, 300, None, None, 900.0, "complete", None, ""
            )
        )
    return rows


class FullRerender(QTextBrowser):
    """The straightforward way: the whole transcript's Markdown set again on every update."""

    def __init__(self, messages: list[MessageRow], throttle_ms: int) -> None:
        super().__init__()
        from ui.transcript import Transcript

        self._history = "\n\n---\n\n".join(Transcript().message_markdown(m) for m in messages)
        self.answer = ""
        self.render_ms: list[float] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.redraw)
        self.throttle_ms = throttle_ms

    def append_text(self, _channel: str, text: str) -> None:
        self.answer += text
        if self.throttle_ms == 0:
            self.redraw()
        elif not self._timer.isActive():
            self._timer.start(self.throttle_ms)

    def redraw(self) -> None:
        from ui.transcript import MARKDOWN

        started = time.perf_counter()
        bar = self.verticalScrollBar()
        self.document().setMarkdown(self._history + "\n\n---\n\n**Folio**\n\n" + self.answer, MARKDOWN)
        bar.setValue(bar.maximum())
        self.render_ms.append((time.perf_counter() - started) * 1000)


class Feeder(QObject):
    """Hands the answer's tokens to a transcript one per tick, as the worker's signals would."""

    def __init__(self, view: QTextBrowser, pieces: list[str]) -> None:
        super().__init__()
        self.view, self.pieces, self.index = view, pieces, 0
        self.timer = QTimer(self)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self.feed)

    def feed(self) -> None:
        if self.index < len(self.pieces):
            self.view.append_text("answer", self.pieces[self.index])  # type: ignore[attr-defined]
            self.index += 1

    def done(self) -> bool:
        return self.index >= len(self.pieces)


def replay(pieces: list[str], interval_ms: int, messages: int) -> list[dict[str, object]]:
    from ui.transcript import Transcript

    past = history(messages)
    rows = []
    candidates: list[tuple[str, Callable[[], QTextBrowser]]] = [
        ("Folio: incremental, adaptive throttle", lambda: Transcript()),
        ("whole transcript re-rendered every 60 ms", lambda: FullRerender(past, 60)),
        ("whole transcript re-rendered per token", lambda: FullRerender(past, 0)),
    ]
    for name, make in candidates:
        view = make()
        view.resize(560, 700)
        view.show()
        if isinstance(view, Transcript):
            view.show_messages(past, [])
            view.begin_answer("Restate every clause.", [])
        else:
            view.redraw()  # type: ignore[attr-defined]
        settle(300)
        probe = Probe()
        feeder = Feeder(view, pieces)
        started = time.perf_counter()
        probe.start()
        feeder.timer.start(interval_ms)
        spin_until(feeder.done, 600)
        settle(300)
        lateness = probe.stop()
        feeder.timer.stop()
        renders = view.render_ms  # type: ignore[attr-defined]
        extra = f"{len(renders)} renders, {sum(renders) / 1000:.1f} s rendering, longest {max(renders):.0f} ms"
        rows.append(summary(name, lateness, time.perf_counter() - started, extra))
        view.close()
    return rows


# -- report --------------------------------------------------------------------------------------
def table(rows: list[dict[str, object]]) -> list[str]:
    lines = [
        "| scenario | seconds | probe ticks | longest stall | p99 lateness | ticks late > 50 ms | notes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['seconds']:.1f} | {r['ticks']:,} | {r['max']:.0f} ms | {r['p99']:.0f} ms "
            f"| {r['over']} | {r['extra']} |"
        )
    return lines


def main() -> int:
    global STACKS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=160, help="answer length for the long answer (default 160)")
    parser.add_argument("--history", type=int, default=40, help="earlier messages in part 2's transcript")
    parser.add_argument("--replay-chars", type=int, default=5000, help="length of part 2's replayed answer")
    parser.add_argument("--window-only", action="store_true", help="part 1 only; print, leave RESULTS.md alone")
    parser.add_argument("--stacks", type=Path, help="write every thread's stack here at each stall over the goal")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    if args.stacks is not None:
        STACKS = args.stacks.open("w")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window_rows, pieces = run_window(args.tokens)
    if args.window_only:
        print("\n".join(table(window_rows)))
        return finish(app, 0)
    longer = pieces * max(1, -(-args.replay_chars // max(1, len("".join(pieces)))))
    replay_rows = replay(longer, 15, args.history)
    lines = [
        HEADING,
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"Qt platform `{os.environ.get('QT_QPA_PLATFORM')}`. A {PROBE_MS} ms QTimer on the UI thread; "
        f"lateness is how much later than due each tick fired. Goal: no stall over {GOAL_MS:.0f} ms.",
        "",
        "The real window with the starter model (Gemma 3 270M):",
        "",
        *table(window_rows),
        "",
        f"The streamed answer ({len(''.join(longer)):,} characters) replayed at one token per 15 ms into a "
        f"transcript already holding {args.history} messages:",
        "",
        *table(replay_rows),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section(HEADING, lines)
    worst = max(float(r["max"]) for r in window_rows)  # type: ignore[arg-type]
    print(f"longest stall in the window: {worst:.0f} ms (goal {GOAL_MS:.0f} ms)")
    return finish(app, 0)


def finish(app: QApplication, code: int) -> NoReturn:
    # PySide6 6.12 aborts in its finaliser ("bool_dealloc") when this script's interpreter exits
    # after the window ran, even with the application shut down first. The results are written by
    # now: leave without the finaliser.
    QApplication.closeAllWindows()
    app.processEvents()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())

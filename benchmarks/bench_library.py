"""A library of N generated contract PDFs in 50 matters (issue 30): adding them, listing a matter,
searching, opening the window, switching matters and typing a search in it. Writes its section of
benchmarks/RESULTS.md.

Side by side in one run, each against a named baseline where one exists:
  1. adding the folders, one `folio add --matter M FOLDER` per matter (pages/s, peak memory of the whole process tree),
     and all of them in one `folio add` into a library of its own (the goal's "a folder of 1,000 PDFs"),
     against raw PyMuPDF text extraction of the same files (pages/s). Goal >= 0.3x.
  2. `folio list --matter X`: the command's wall time (Python start and imports included) and its own
     time in-process. Goal < 0.3 s.
  3. `folio search` for a common word and a rare phrase, wall and in-process, against a plain SQLite FTS5
     query (same tokenizer, BM25, snippets, LIMIT 20) over the same pages' text in a database of its own.
     Goal for the rare phrase < 0.3 s.
  4. the window started in a fresh process until the library list is drawn (offscreen Qt). Goal < 2 s.
  5. in the window: switching matters, and typing a search (a common word, a rare phrase) one key per
     80 ms; the UI thread's longest stall, from a 5 ms QTimer probe as in bench_ui.py. Goal <= 50 ms.
     Also switching to a matter that holds every document (the list's lazy loading at full size).

The PDFs are generated once per size and seed and kept under the user cache dir
(benchmarks/library_corpus.py); the library is built in a temporary FOLIO_HOME and deleted after.

Run: .venv/bin/python benchmarks/bench_library.py [--docs 1000|10000] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.library_corpus import COMMON_WORD, RARE_PHRASE, Corpus, build  # noqa: E402
from benchmarks.results import best_of, write_subsection  # noqa: E402

HEADING = "## Library at scale: matters, list, search, window (benchmarks/bench_library.py)"
PYTHON = sys.executable
FOLIO = [PYTHON, "-m", "ui.entry"]  # the `folio` command, launcher included
ALL_MATTER = "Every document"
# Read-ahead off: with it on, the window's background reader would take the cores from what is measured.
SETTINGS = "schema_version = 1\nread_ahead = false\n"
PROBE_MS = 5
GOAL_STALL_MS = 50.0
KEY_MS = 80  # one key per 80 ms: brisk typing
SEARCH_LIMIT = 20  # `folio search` lists 20 hits by default


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


# -- 1. adding --------------------------------------------------------------------------------------
class PeakMemory:
    """The largest resident size of a process and its children together, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._pids: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def watch(self, pid: int) -> None:
        self._pids = [pid]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(0.05):
            total = 0
            for pid in list(self._pids):
                try:
                    proc = psutil.Process(pid)
                    total += sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)


def raw_pymupdf(corpus: Corpus) -> tuple[float, int, list[tuple[str, str]]]:
    """Seconds to extract every page's text with PyMuPDF, the pages, and (file, page text) pairs."""
    import pymupdf

    texts: list[tuple[str, str]] = []
    started = time.perf_counter()
    pages = 0
    for path in corpus.files:
        with pymupdf.open(path) as doc:
            for page in doc:
                texts.append((path.name, page.get_text()))
                pages += 1
    return time.perf_counter() - started, pages, texts


def folio(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*FOLIO, *args], env=env, capture_output=True, text=True, cwd=REPO)
    if check and done.returncode != 0:
        raise SystemExit(f"folio {' '.join(args[:2])} failed: {done.stderr.strip()[-400:]}")
    return done


def add_library(corpus: Corpus, env: dict[str, str]) -> tuple[float, int]:
    """One `folio matter new` and one `folio add --matter M FOLDER` per matter (the matter's folder of
    PDFs, as a user adds one); seconds adding (matter creation not counted) and the peak memory of the
    add processes."""
    memory = PeakMemory()
    memory.start()
    adding = 0.0
    for matter in corpus.matters:
        folio("matter", "new", matter, env=env)
        if not any((corpus.folder / matter).glob("*.pdf")):
            continue  # fewer contracts than matters (a trial run)
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*FOLIO, "add", "--matter", matter, str(corpus.folder / matter)],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        memory.watch(proc.pid)
        _, err = proc.communicate()
        adding += time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"folio add failed for {matter}: {err.strip()[-400:]}")
        print(f"  added {matter}: {adding:.0f} s so far, load {load()}", file=sys.stderr, flush=True)
    return adding, memory.stop()


def add_at_once(corpus: Corpus, settings: str) -> tuple[float, int]:
    """Every matter's folder in one `folio add` (the issue's "adding a folder of 1,000 PDFs": one
    command, so Python's start and the library's opening count once), into a home of its own; seconds
    and peak memory."""
    home = Path(tempfile.mkdtemp(prefix="folio-bench-library-once-"))
    try:
        (home / "config").mkdir(parents=True)
        (home / "config" / "settings.toml").write_text(settings)
        env = {**os.environ, "FOLIO_HOME": str(home)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        folders = [str(corpus.folder / m) for m in corpus.matters if any((corpus.folder / m).glob("*.pdf"))]
        memory = PeakMemory()
        memory.start()
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*FOLIO, "add", *folders], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        memory.watch(proc.pid)
        _, err = proc.communicate()
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"folio add (every folder at once) failed: {err.strip()[-400:]}")
        print(f"  added every folder in one command: {seconds:.0f} s, load {load()}", file=sys.stderr, flush=True)
        return seconds, memory.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- 2, 3. list and search ----------------------------------------------------------------------------
def best_wall(args: list[str], env: dict[str, str], rounds: int = 3) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(rounds):
        started = time.perf_counter()
        done = folio(*args, env=env)
        best = min(best, time.perf_counter() - started)
        out = done.stdout
    return best, out


def in_process(args: list[str]) -> float:
    """The command's own time: app.cli.main in this process (imports done), its output discarded."""
    import contextlib
    import io

    from app.cli.commands import main

    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            main(args)

    run()  # the first call's imports are not the command's
    return best_of(run, 3)


def fts_baseline(texts: list[tuple[str, str]], folder: Path) -> Callable[[str], float]:
    """A plain SQLite FTS5 table of the same pages' text (Folio's tokenizer); returns a timer of a
    BM25-ranked query with snippets, as Folio's search does, LIMIT 20."""
    import sqlite3

    path = folder / "baseline.sqlite3"
    path.unlink(missing_ok=True)  # left by an earlier run on the same home (--home)
    db = sqlite3.connect(path, check_same_thread=False)
    db.execute("CREATE VIRTUAL TABLE pages USING fts5(name, text, tokenize='porter unicode61 remove_diacritics 2')")
    with db:
        db.executemany("INSERT INTO pages(name, text) VALUES (?, ?)", texts)

    def query(text: str) -> float:
        def run() -> None:
            db.execute(
                "SELECT name, snippet(pages, 1, '[', ']', '…', 16) FROM pages WHERE pages MATCH ? "
                "ORDER BY bm25(pages) LIMIT ?",
                [text, SEARCH_LIMIT],
            ).fetchall()

        run()
        return best_of(run, 3)

    return query


# -- 4. the window, started in a process of its own ------------------------------------------------------
def window_child() -> int:
    """Run by the parent (--window-child): open the window; print DRAWN when the library list has
    painted its rows."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from app.context import open_app
    from ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    ctx = open_app()
    window = MainWindow(ctx)

    class Painted(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and window.library.model.rowCount() > 0:
                print("DRAWN", window.library.model.rowCount(), flush=True)
                os._exit(0)
            return False

    painted = Painted()
    window.library.list.viewport().installEventFilter(painted)
    window.resize(1400, 860)
    window.show()
    return app.exec()


def window_start(env: dict[str, str], rounds: int = 3) -> tuple[float, str]:
    best, said = float("inf"), ""
    for _ in range(rounds):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [PYTHON, __file__, "--window-child"], env=env, cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        try:
            line, _ = proc.communicate(timeout=120)  # the child leaves as soon as it has said DRAWN
        except subprocess.TimeoutExpired:
            proc.kill()
            line = ""
        elapsed = time.perf_counter() - started
        if not line.startswith("DRAWN"):
            raise SystemExit("the window did not draw its library list")
        best, said = min(best, elapsed), line.split()[1]
    return best, said


# -- 5. the window in this process: the UI thread's stalls ----------------------------------------------
def window_stalls(corpus: Corpus) -> list[tuple[str, float, float, str]]:
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.context import open_app
    from app.store.matters import Matters
    from benchmarks.bench_ui import Probe, settle, spin_until
    from ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    ctx = open_app()
    window = MainWindow(ctx)
    window.resize(1400, 860)
    window.show()
    settle(500)
    matters = {m.name: m.id for m in Matters(ctx.db).all()}
    rows: list[tuple[str, float, float, str]] = []
    probe = Probe()

    def measure(name: str, action: Callable[[], None], note: Callable[[], str] = lambda: "") -> None:
        probe.start()
        started = time.perf_counter()
        action()
        elapsed = time.perf_counter() - started
        lateness = probe.stop()
        rows.append((name, max(lateness, default=0.0), elapsed, note()))
        print(f"  {name}: longest stall {rows[-1][1]:.0f} ms", file=sys.stderr, flush=True)

    def switch_through(names: list[str]) -> Callable[[], None]:
        def run() -> None:
            for name in names:
                window.use_matter(matters[name])
                settle(150)

        return run

    measure(
        "switching matters (10 switches, 20-200 documents each)",
        switch_through(corpus.matters[1:11]),
        lambda: f"{window.library.model.rowCount()} rows listed in the last",
    )
    measure(
        f"switching to '{ALL_MATTER}' ({len(corpus.files):,} documents) and back",
        switch_through([ALL_MATTER, corpus.matters[0], ALL_MATTER]),
        lambda: f"{window.library.model.rowCount()} of {len(corpus.files):,} rows fetched",
    )

    def scroll_all() -> None:
        for _ in range(len(corpus.files) // 100 + 2):
            window.library.list.scrollToBottom()
            settle(30)

    measure(
        f"scrolling '{ALL_MATTER}' to its end (pages fetched as it scrolls)",
        scroll_all,
        lambda: f"{window.library.model.rowCount():,} rows listed",
    )
    rare_matter = corpus.rare_file.parent.name

    def typing(text: str, matter: str) -> Callable[[], None]:
        def run() -> None:
            window.use_matter(matters[matter])
            settle(200)
            box = window.library.search_box
            box.setFocus()
            box.clear()
            asked = window.library._serial
            for ch in text:
                QTest.keyClicks(box, ch)
                settle(KEY_MS)
            # The search starts 250 ms after the last key; wait for it and its hits.
            spin_until(lambda: window.library._serial > asked and not window.library.searching, 120)
            settle(300)

        return run

    for label, text, matter in (
        (f"typing '{COMMON_WORD}' in the search box", COMMON_WORD, ALL_MATTER),
        ("typing the rare phrase in the search box", RARE_PHRASE, rare_matter),
    ):
        where = "every document" if matter == ALL_MATTER else "its matter"
        measure(
            f"{label} ({where})",
            typing(text, matter),
            lambda: window.library.search_status.text(),
        )
    window.close()
    ctx.close()
    app.processEvents()
    return rows


# -- report --------------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=1000, help="contracts in the library (1000 or 10000)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument(
        "--home", type=Path, help="measure the library an earlier run built in this FOLIO_HOME (kept): no adding"
    )
    parser.add_argument("--keep", action="store_true", help="keep the library's FOLIO_HOME (its path is printed)")
    parser.add_argument("--window-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.window_child:
        return window_child()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    began = time.perf_counter()
    load_before = load()
    print(f"load average before: {load_before}", file=sys.stderr)
    corpus = build(args.docs)
    home = args.home or Path(tempfile.mkdtemp(prefix="folio-bench-library-"))
    print(f"library in {home}", file=sys.stderr)
    os.environ["FOLIO_HOME"] = str(home)
    if args.home is None:
        (home / "config").mkdir(parents=True)
        (home / "config" / "settings.toml").write_text(SETTINGS)
    env = {**os.environ, "FOLIO_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    # An installed Folio starts from compiled bytecode (pip and the bundle write it); a checkout run
    # with PYTHONDONTWRITEBYTECODE compiles every module on every start. Time the installed case.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    packages = ["app", "ui", "ingest", "inference", "common"]
    subprocess.run([PYTHON, "-m", "compileall", "-q", *packages], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    try:
        raw_s, pages, texts = raw_pymupdf(corpus)
        print(f"raw PyMuPDF: {pages / raw_s:.0f} pages/s", file=sys.stderr)
        add_s, peak = add_library(corpus, env) if args.home is None else (None, None)
        once = add_at_once(corpus, SETTINGS) if args.home is None else None
        if args.home is None:
            raw_again_s, _, _ = raw_pymupdf(corpus)  # once more after: the load may have changed meanwhile
            raw_s = min(raw_s, raw_again_s)

        from app.context import open_app
        from app.store.matters import Matters

        ctx = open_app()
        matters = Matters(ctx.db)
        if matters.find(ALL_MATTER) is None:
            with ctx.db.conn:  # one transaction: the whole library in one more matter
                everything = matters.create(ALL_MATTER)
                for doc in ctx.library.all():
                    matters.link(everything.id, doc.id)
        stored_pages = sum(d.page_count for d in ctx.library.all())
        ctx.close()

        matter = corpus.matters[0]
        rare_matter = corpus.rare_file.parent.name
        folio("matter", "use", matter, env=env)  # the window opens on it
        list_wall, _ = best_wall(["list", "--matter", matter], env)
        list_own = in_process(["list", "--matter", matter])
        list_all_own = in_process(["list", "--matter", ALL_MATTER])
        baseline = fts_baseline(texts, home)
        searches = []
        for label, text, where in (
            (f"common word '{COMMON_WORD}'", COMMON_WORD, ALL_MATTER),
            (f"common word '{COMMON_WORD}'", COMMON_WORD, matter),
            ("rare phrase", f'"{RARE_PHRASE}"', rare_matter),
            ("rare phrase", f'"{RARE_PHRASE}"', ALL_MATTER),
        ):
            wall, out = best_wall(["search", text, "--matter", where], env)
            own = in_process(["search", text, "--matter", where])
            searches.append((f"{label}, matter '{where}'", wall, own, baseline(text), out.count("\n")))
        started_s, drawn = window_start(env)
        stalls = window_stalls(corpus)
    finally:
        if args.home is None and not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    load_after = load()
    minutes = (time.perf_counter() - began) / 60
    lines = report(args.docs, corpus, stored_pages, pages, raw_s, add_s, peak, list_wall, list_own, list_all_own, once)
    lines += search_lines(searches)
    lines += window_lines(started_s, drawn, stalls)
    lines = [
        f"### {args.docs:,} contracts",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.machine()}, {os.cpu_count()} "
        f"CPUs shared with another long job (load average 1/5/15 min: {load_before} before, {load_after} after; "
        f"a load above 2 means the cores were shared, so absolute times are the loaded machine's); Python "
        f"{platform.python_version()}, Qt platform `offscreen`, read-ahead off. {len(corpus.files):,} generated "
        f"contract PDFs ({corpus.pages:,} pages, 5-30 each) in {len(corpus.matters)} matters; the run took "
        f"{minutes:.1f} min.",
        "",
        *lines,
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_subsection(HEADING, f"### {args.docs:,} contracts", lines)
    # PySide6 aborts in its finaliser when the interpreter exits after a window ran (see bench_ui.py's
    # finish); everything is written by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def report(
    n: int,
    corpus: Corpus,
    stored_pages: int,
    pages: int,
    raw_s: float,
    add_s: float | None,
    peak: int | None,
    list_wall: float,
    list_own: float,
    list_all_own: float,
    once: tuple[float, int] | None = None,
) -> list[str]:
    raw_rate = pages / raw_s
    if add_s is None or peak is None:
        adding = [
            f"| adding {n:,} PDFs | not in this run (--home: a library an earlier run built) | {raw_rate:,.0f} "
            "(raw PyMuPDF `get_text`) | | |"
        ]
    else:
        folio_rate = stored_pages / add_s
        ratio = folio_rate / raw_rate
        adding = [
            f"| adding {n:,} PDFs, one `folio add --matter M FOLDER` per matter (pages/s) | {folio_rate:,.0f} | "
            f"{raw_rate:,.0f} (raw PyMuPDF `get_text`) | {ratio:.2f}x | |",
            f"| peak memory while adding (process tree) | {peak / 1024**2:,.0f} MB | | | |",
        ]
        if once is not None:
            once_rate = stored_pages / once[0]
            once_ratio = once_rate / raw_rate
            adding += [
                f"| adding the {n:,} PDFs' folders in one `folio add` (pages/s) | {once_rate:,.0f} | {raw_rate:,.0f} "
                f"(raw PyMuPDF `get_text`) | {once_ratio:.2f}x | >= 0.3x: {'met' if once_ratio >= 0.3 else 'not met'} "
                "|",
                f"| peak memory while adding them in one command | {once[1] / 1024**2:,.0f} MB | | | |",
            ]
    return [
        "| measure | Folio | baseline | Folio / baseline | goal |",
        "| --- | ---: | ---: | ---: | --- |",
        *adding,
        f"| `folio list --matter {corpus.matters[0]}` ({n // len(corpus.matters)} documents), wall | "
        f"{list_wall:.2f} s | | | < 0.3 s: {'met' if list_wall < 0.3 else 'not met'} |",
        f"| the same, the command alone (in-process, imports done) | {list_own * 1000:.0f} ms | | | |",
        f"| `folio list --matter '{ALL_MATTER}'` ({n:,} documents), in-process | {list_all_own * 1000:.0f} ms | | | |",
    ]


def search_lines(searches: list[tuple[str, float, float, float, int]]) -> list[str]:
    lines = [
        "",
        "`folio search` (20 hits), wall (Python start and imports included) and in-process, against a plain "
        "SQLite FTS5 query on the same pages' text (one table, no matters: BM25 and snippets, LIMIT 20):",
        "",
        "| search | wall | in-process | plain FTS5 | in-process / FTS5 | goal |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, wall, own, base, _ in searches:
        goal = f"< 0.3 s: {'met' if wall < 0.3 else 'not met'}" if "rare" in name else ""
        lines.append(
            f"| {name} | {wall:.2f} s | {own * 1000:,.0f} ms | {base * 1000:,.1f} ms | {own / base:,.1f}x | {goal} |"
        )
    return lines


def window_lines(started_s: float, drawn: str, stalls: list[tuple[str, float, float, str]]) -> list[str]:
    lines = [
        "",
        f"The window, started in a fresh process (`python -m` ... `MainWindow`, offscreen) until the library list "
        f"has painted its rows ({drawn} rows): **{started_s:.2f} s** (best of 3; goal < 2 s: "
        f"{'met' if started_s < 2 else 'not met'}).",
        "",
        f"In the window, a {PROBE_MS} ms QTimer probe on the UI thread (as bench_ui.py); the search box is typed "
        f"one key per {KEY_MS} ms and searches {250} ms after the last key, on its own thread:",
        "",
        "| in the window | longest stall | seconds | notes | goal <= 50 ms |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for name, worst, seconds, note in stalls:
        lines.append(
            f"| {name} | {worst:.0f} ms | {seconds:.1f} | {note} | {'met' if worst <= GOAL_STALL_MS else 'not met'} |"
        )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())

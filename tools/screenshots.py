"""Take the README screenshots of the real window on a 1366x768 screen: run under Xvfb (make screenshots).

A throw-away FOLIO_HOME with the eval model (Qwen2.5-Coder-1.5B-Instruct, benchmarks/eval_model.py:
`make .venv/.folio-eval` installs it) registered and active, and real CUAD contracts from the shared
corpus under their own long file names. Every answer, extracted cell and summary shown is the eval
model's own, asked through the window as a user would (a question takes a minute or two on a busy
machine); the window picks its own size for the screen. Then: the answer with a sentence's check
clicked (its passage marked on the page) and another's hovered, a search, a video clip opened at a
time, a five-clause extraction of two contracts with a reviewer's decision, and two versions of a
contract compared with the model's summary. Saves PNGs to docs/screenshots/.
"""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
OUT = REPO / "docs" / "screenshots"
CORPUS = REPO.parent / "shared" / "corpus"
# Real contracts (CUAD, from the tuning and example sets, never the check set), under their own names.
CONTRACT = (
    "contracts_tune/EmeraldHealthBioceuticalsInc_20200218_1-A_EX1A-6 MAT CTRCT_11987205_EX1A-6 MAT CTRCT_"
    "Development Agreement.pdf"
)
OTHERS = (
    "contracts_tune/GridironBionutrientsInc_20171206_8-K_EX-10.2_10972556_EX-10.2_Endorsement Agreement.pdf",
    "contracts_tune/LEGACYTECHNOLOGYHOLDINGS,INC_12_09_2005-EX-10.2-DISTRIBUTOR AGREEMENT.PDF",
)
QUESTION = "Which law governs this agreement, and how can a party end it?"
CLAUSES = ("parties", "agreement_date", "governing_law", "termination_for_convenience", "cap_on_liability")
# The second version: the monthly fee raised and the notice to end the services shortened.
EDITS = {"$8,333 per month": "$9,500 per month", "60 days written notice": "30 days written notice"}
SETTINGS = "max_answer_tokens = 220\nread_ahead = false\n"


STEPS = ("answer", "search", "video", "extraction", "compare")


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", default=",".join(STEPS), help=f"some of {', '.join(STEPS)} (a model step takes minutes)"
    )
    steps = set(parser.parse_args().only.split(","))
    from benchmarks.eval_model import open_eval_app

    for rel in (CONTRACT, *OTHERS):
        if not (CORPUS / rel).is_file():
            print(f"screenshots: the shared corpus is needed ({CORPUS / rel} is missing)", file=sys.stderr)
            return 1
    home = Path(tempfile.mkdtemp(prefix="folio-shot-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    ctx, _ = open_eval_app(home, SETTINGS)

    from PySide6.QtCore import QEvent, QEventLoop, QTimer
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip, QWidget

    from app.extraction.review import review_cell
    from app.extraction.runner import load_table
    from app.extraction.templates import TemplateStore
    from tests.fixtures.answers import anchor_point
    from tests.fixtures.media import make_video
    from ui.app_setup import prepare_app
    from ui.main_window import MainWindow

    qt_app = QApplication(sys.argv[:1])
    prepare_app(qt_app, ctx.paths.cache_dir)
    OUT.mkdir(parents=True, exist_ok=True)

    def wait(done: Callable[[], bool], timeout_s: float = 1200) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("the screenshot step did not finish")
            loop = QEventLoop()
            QTimer.singleShot(50, loop.quit)
            loop.exec()

    def save(widget: QWidget, name: str) -> None:
        loop = QEventLoop()
        QTimer.singleShot(500, loop.quit)
        loop.exec()
        QApplication.primaryScreen().grabWindow(0).copy(widget.frameGeometry()).save(str(OUT / name))
        print(f"saved {OUT / name}", flush=True)

    window = MainWindow(ctx)
    window.show()
    print(f"screen {QApplication.primaryScreen().availableGeometry().getRect()}, window {window.geometry().getRect()}")

    # 1. Real contracts added like a drop.
    window.add_paths([str(CORPUS / rel) for rel in (*OTHERS, CONTRACT)], interactive=False)
    wait(lambda: len(ctx.library.all()) == 1 + len(OTHERS) and window._job is None and not window._batches)
    doc = next(d for d in ctx.library.all() if d.title == Path(CONTRACT).stem)
    window.library.select(doc.id)
    wait(lambda: window.viewer.last is not None)

    # 2. The eval model answers a question; a sentence's check clicked (the page that supports it, the
    #    passage marked), another's hovered.
    if "answer" in steps:
        window.chat.input.setPlainText(QUESTION)
        window.chat.send_button.click()
        wait(lambda: not window.chat.send_button.isEnabled(), 10)
        wait(lambda: window.chat.send_button.isEnabled())
        message = window.chat.transcript.messages[-1]
        print(f"answer ({message.model}): {message.text!r}")
        transcript = window.chat.transcript
        marks = transcript.claims_of(message.id)
        opening = [(href, t) for href, t in marks.items() if t.opens]
        if opening:
            window.open_claim(opening[0][1])
            wait(lambda: window.viewer.last is not None and bool(window.viewer.canvas.highlights), 60)
        save(window, "main-window.png")
        if marks:
            hovered = next((h for h, t in marks.items() if not opening or h != opening[0][0]), next(iter(marks)))
            point = anchor_point(transcript, hovered)
            viewport = transcript.viewport()
            QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, point, viewport.mapToGlobal(point)))
            save(window, "citation.png")
            QToolTip.hideText()
        window.statusBar().clearMessage()

    # 3. Searching the library's text: hits with the words marked on their page.
    if "search" in steps:
        window.library.search_box.setText("terminate notice")
        window.library.run_search()
        wait(lambda: window.library.hits.count() > 0, 30)
        window.open_hit(window.library.found[0])
        wait(lambda: bool(window.viewer.canvas.terms), 60)
        save(window, "search.png")
        window.library.search_box.setText("")
        window.library.run_search()

    # 4. A video clip: opened at a time, the keyframe strip at the frame shown then.
    if "video" in steps:
        clip = ctx.library.add(make_video(home / "Site inspection, warehouse B, 14 March 2024.mp4")).document
        window.refresh_library(select=clip.id)
        wait(lambda: window.viewer.strip.count() > 0, 120)
        window.viewer.show_time(clip.id, 6.0)
        wait(lambda: window.viewer.strip.currentRow() > 0, 30)
        save(window, "video.png")

    # 5. An extraction: five clauses of two contracts, each cell the eval model's answer, checked.
    if "extraction" in steps:
        store = TemplateStore.for_config(ctx.paths.config_dir)
        review = store.get("contract_review")
        fields = tuple(f for f in review.fields if f.key in CLAUSES)
        store.save(dataclasses.replace(review, key="first_look", name="Five clauses", version=1, fields=fields))
        second = next(d for d in ctx.library.all() if d.title == Path(OTHERS[0]).stem)
        window.run_extraction("first_look", [doc.id, second.id])
        run_dialog = window.extraction
        assert run_dialog is not None
        wait(lambda: run_dialog.finished_status is not None, 3600)
        assert run_dialog.run_id is not None
        review_cell(ctx, run_dialog.run_id, doc.id, "governing_law", "accepted")
        table = run_dialog.table
        table.set_table(load_table(ctx, run_dialog.run_id))
        room = table.view.viewport().width()  # the columns widened to the window, as a user would drag them
        for column in range(table.model.columnCount()):
            table.view.setColumnWidth(column, room // table.model.columnCount())
        table.view.resizeRowsToContents()
        table.view.setCurrentIndex(table.model.index(0, 2))
        save(run_dialog, "extraction.png")
        run_dialog.close()

    # 6. Two versions compared: side by side, a change chosen, the eval model's summary beside them.
    if "compare" in steps:
        revised = revised_copy(CORPUS / CONTRACT, home)
        new_id = ctx.library.add(revised).document.id
        window.refresh_library()
        window.compare_selected([doc.id, new_id])
        comparison = window.comparison
        assert comparison is not None
        wait(lambda: window._job is None, 1800)
        comparison.changes.setCurrentRow(0)
        save(comparison, "compare.png")
        comparison.close()

    window.close()
    ctx.close()
    del qt_app
    return 0


def revised_copy(original: Path, folder: Path) -> Path:
    """The contract with EDITS made in place, each in its own text block (line breaks kept, so its
    clauses stay as they were), as '... (revised).pdf'."""
    import re

    from tests.fixtures.contract_versions import pdf_blocks, rewrite_blocks

    blocks = pdf_blocks(original)
    edits: dict[int, str] = {}
    for old, new in EDITS.items():
        pattern = re.compile(r"\s+".join(re.escape(word) for word in old.split()))
        index = next(k for k, b in enumerate(blocks) if pattern.search(b.lines))
        edits[index] = pattern.sub(new, edits.get(index, blocks[index].lines), count=1)
    target = folder / f"{original.stem} (revised){original.suffix}"
    rewrite_blocks(original, target, edits)
    return target


if __name__ == "__main__":
    raise SystemExit(main())

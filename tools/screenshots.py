"""Take the README screenshots of the real window: run under Xvfb (make screenshots).

A throw-away FOLIO_HOME; a generated contract is added the way a drop adds it, the starter model
answers a question, then: an answer whose sentences got every verdict is shown and a wrong-page
sentence's mark is clicked (the supporting clause highlighted on its real page), an unsupported
sentence's mark is hovered, the library is searched, a generated video clip is opened at a cited time,
an extraction table is shown with sample answers (grounded for real) and two review decisions, and two
versions of the contract are compared (the starter model writes the summary).
The demo model rarely cites, so the cited answer is stored through app/ like any answer and says
so in its model line. Saves PNGs to docs/screenshots/.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
OUT = REPO / "docs" / "screenshots"
SAMPLE_ANSWER = (
    'The agreement is governed by Delaware law: it "shall be governed by and construed in accordance with '
    'the laws of the State of Delaware" [p. 4].\n\n'
    "- Either party may terminate for convenience on ninety days' written notice [p. 1].\n"
    "- Confidential Information stays secret for five (5) years after termination [p. 2].\n"
    "- The Client pays a monthly fee of 12,500 US dollars.\n"
    '- Late payments accrue interest at "two percent per month" [p. 2].'
)


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="folio-shot-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)  # a copy of the starter model: 250 MB
    os.environ["FOLIO_HOME"] = str(home)
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text("schema_version = 1\nmax_answer_tokens = 80\n")

    from PySide6.QtCore import QEvent, QEventLoop, QTimer
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    from app.context import open_app
    from app.extraction.review import review_cell
    from tests.fixtures.answers import anchor_point, store_cited_answer, store_sample_cells
    from tests.fixtures.contract_versions import edited_contract
    from tests.fixtures.media import make_video
    from tests.fixtures.pdfs import make_contract_pdf
    from ui.main_window import MainWindow

    qt_app = QApplication(sys.argv[:1])
    ctx = open_app()
    window = MainWindow(ctx)
    window.resize(1400, 860)
    window.show()
    OUT.mkdir(parents=True, exist_ok=True)

    def wait(done: Callable[[], bool], timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("the screenshot step did not finish")
            loop = QEventLoop()
            QTimer.singleShot(50, loop.quit)
            loop.exec()

    def pause(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def save(name: str) -> None:
        pause(400)
        QApplication.primaryScreen().grabWindow(0).copy(window.frameGeometry()).save(str(OUT / name))
        print(f"saved {OUT / name}")

    # 1. A contract added like a drop, and a real answer from the starter model (kept in the
    #    conversation list; the demo model is too small to cite well, see step 2).
    pdf = make_contract_pdf(home / "Master Services Agreement.pdf")
    window.add_paths([str(pdf)])
    wait(lambda: window.library.list.count() == 1 and bool(window.library.selected_ids()))
    window.chat.input.setPlainText("Which law governs this agreement?")
    window.chat.send_button.click()
    wait(lambda: not window.chat.send_button.isEnabled(), 10)
    wait(lambda: window.chat.send_button.isEnabled())
    window.splitter.setSizes([285, 600, 515])  # the viewer wide enough for a page at a readable size

    # 2. An answer whose sentences got every verdict: click the wrong-page sentence's mark (its clause
    #    opens highlighted on its real page), hover the unsupported sentence's mark.
    doc = ctx.library.all()[0]

    def stored_answer(doc_id: int, title: str, question: str, answer: str) -> tuple[int, int]:
        conversation, message = store_cited_answer(
            ctx, [doc_id], answer, question, title, model="sample answer stored for this picture"
        )
        window.conversation_list.set_documents([doc_id])
        window.open_conversation(conversation)
        return conversation, message

    _, message = stored_answer(
        doc.id, "Governing law and termination", "Which law governs, and how can it be ended?", SAMPLE_ANSWER
    )
    marks = window.chat.transcript.claims_of(message)
    wrong_page = next(t for t in marks.values() if t.verdict == "wrong_page")
    window.open_claim(wrong_page)
    wait(lambda: bool(window.viewer.canvas.highlights))
    wait(lambda: window.viewer.last is not None and window.viewer.canvas.image is not None)
    save("main-window.png")

    unsupported = next(href for href, t in marks.items() if t.verdict == "unsupported")
    transcript = window.chat.transcript
    point = anchor_point(transcript, unsupported)
    viewport = transcript.viewport()
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, point, viewport.mapToGlobal(point)))
    save("citation.png")
    QToolTip.hideText()
    window.statusBar().clearMessage()

    # 3. Searching the library text: hits with the words marked on the page.
    window.library.search_box.setText("terminate notice")
    window.library.run_search()
    wait(lambda: window.library.hits.count() > 0)
    window.open_hit(window.library.found[0])
    wait(lambda: bool(window.viewer.canvas.terms))
    save("search.png")
    window.library.search_box.setText("")
    window.library.run_search()

    # 4. A video clip: a cited time opens the keyframe strip at that frame.
    clip = ctx.library.add(make_video(home / "site-visit.mp4")).document
    window.refresh_library(select=clip.id)
    wait(lambda: window.viewer.strip.count() > 0)
    _, message = stored_answer(
        clip.id,
        "Site visit: scenes",
        "What does the clip show after the second cut?",
        "After the second cut the picture turns green with a dark square near the top left [t 00:00:06].",
    )
    window.statusBar().clearMessage()
    cited = next(iter(window.chat.transcript.targets_of(message).values()))
    window.open_citation(cited)
    wait(lambda: window.viewer.strip.currentRow() >= 0)
    save("video.png")

    # 5. An extraction table: each cell's value, what was checked and where; reviewers' decisions.
    run = store_sample_cells(ctx, doc.id)
    review_cell(ctx, run, doc.id, "parties", "accepted")
    review_cell(ctx, run, doc.id, "expiration_date", "corrected", "March 3, 2027")
    view = window.work_menu.show_table(run)
    assert view is not None
    dialog = view.window()
    dialog.resize(1380, 300)
    for column in range(view.model.columnCount()):
        view.view.setColumnWidth(column, 190)
    view.view.resizeRowsToContents()
    view.view.setCurrentIndex(view.model.index(0, 1))
    pause(400)
    QApplication.primaryScreen().grabWindow(0).copy(dialog.frameGeometry()).save(str(OUT / "extraction.png"))
    print(f"saved {OUT / 'extraction.png'}")
    dialog.close()

    # 6. Two versions compared: side by side, a change selected, the summary beside them.
    old, new = edited_contract(home)
    versions = [window.ctx.library.add(p).document.id for p in (old, new)]
    window.refresh_library()
    window.compare_selected(versions)
    comparison = window.comparison
    assert comparison is not None
    comparison.resize(1400, 760)
    wait(lambda: window._job is None)
    comparison.changes.setCurrentRow(1)
    pause(400)
    QApplication.primaryScreen().grabWindow(0).copy(comparison.frameGeometry()).save(str(OUT / "compare.png"))
    print(f"saved {OUT / 'compare.png'}")
    comparison.close()

    window.close()
    ctx.close()
    del qt_app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

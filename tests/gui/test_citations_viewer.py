"""Citations in the real window (offscreen): click one and the viewer shows that page with the clause
marked; a citation whose quote is not on its page looks different and says so; a time citation
jumps the video strip; search hits and extraction cells open their page too."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip

from app.citations.targets import BAD_ANCHOR, QUOTE_MISSING, VERIFIED
from tests.fixtures.answers import anchor_point, store_cited_answer
from tests.fixtures.pdfs import GOVERNING_LAW_PAGE
from tests.gui.conftest import char_format_at
from ui.transcript import UNTRUSTED

pytestmark = pytest.mark.gui
LAW = "governed by and construed in accordance with the laws of the State of Delaware"
ANSWER = (
    f'Delaware law governs: "{LAW}" [p. {GOVERNING_LAW_PAGE}]. '
    'The Client pays "a weekly fee of 900 euros" [p. 2]. Notices are on [p. 9].'
)


def _open_cited_answer(qtbot, window, contract_pdf: Path):  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    conversation, message = store_cited_answer(window.ctx, [doc.id], ANSWER)
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.conversation_id == conversation, timeout=5000)
    links = window.chat.transcript.targets_of(message)
    by_state = {t.state: href for href, t in links.items()}
    return doc, by_state


def _click(qtbot, transcript, href: str) -> None:  # type: ignore[no-untyped-def]
    point = anchor_point(transcript, href)
    QTest.mouseClick(transcript.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)


def test_click_a_citation_shows_the_page_with_the_clause_highlighted(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc, links = _open_cited_answer(qtbot, window, contract_pdf)
    assert set(links) == {VERIFIED, QUOTE_MISSING, BAD_ANCHOR}
    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.last is not None and viewer.page_number == 1, timeout=10000)
    assert not viewer.canvas.highlights

    with qtbot.waitSignal(viewer.page_shown, timeout=10000) as shown:
        _click(qtbot, window.chat.transcript, links[VERIFIED])
    assert shown.args == [doc.id, GOVERNING_LAW_PAGE]
    assert viewer.page_label.text() == f"p. {GOVERNING_LAW_PAGE} of 4"
    assert viewer.thumbnails.currentRow() == GOVERNING_LAW_PAGE - 1
    assert len(viewer.canvas.highlights) == 2 and not viewer.banner.isVisible()
    # The mark is really painted over the clause: the highlighted pixels are tinted yellow (most of a
    # grid over the line: at a small zoom some points fall on the letters).
    picture = viewer.canvas.grab().toImage()
    ratio = picture.width() / viewer.canvas.width()
    rect = viewer.canvas.to_widget(viewer.canvas.highlights[0])
    grid = [
        (rect.left() + rect.width() * i / 8, rect.top() + rect.height() * j / 4) for i in range(1, 8) for j in (1, 2, 3)
    ]
    samples = [picture.pixelColor(int(x * ratio), int(y * ratio)) for x, y in grid]
    tinted = [c for c in samples if c.red() > 200 and c.blue() < 200]
    assert len(tinted) > len(samples) / 2, (samples, rect, viewer.canvas.zoom)
    outside = picture.pixelColor(int((rect.left() - 20) * ratio), int((rect.bottom() + 20) * ratio))
    assert not (outside.red() > 200 and outside.blue() < 200)  # and the page around it is not
    assert viewer.canvas.image is not None and viewer.canvas.image.width() >= viewer.canvas.width()
    assert "Quote found" in window.statusBar().currentMessage()


def test_unverified_citations_look_different_and_say_why(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    _doc, links = _open_cited_answer(qtbot, window, contract_pdf)
    transcript = window.chat.transcript
    good, missing, bad = (char_format_at(transcript, links[s]) for s in (VERIFIED, QUOTE_MISSING, BAD_ANCHOR))
    assert good.foreground().color() != UNTRUSTED and good.underlineStyle() != good.UnderlineStyle.WaveUnderline
    for fmt in (missing, bad):
        assert fmt.foreground().color() == UNTRUSTED
        assert fmt.underlineStyle() == fmt.UnderlineStyle.WaveUnderline
    assert "quoted passage was not found on p. 2" in missing.toolTip()
    assert "not a page of this document" in bad.toolTip()
    assert "Quote found on p. 4" in good.toolTip()

    # Hovering shows it: the transcript answers a tooltip request at the link with the reason.
    point = anchor_point(transcript, links[QUOTE_MISSING])
    viewport = transcript.viewport()
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, point, viewport.mapToGlobal(point)))
    qtbot.waitUntil(lambda: "not found on p. 2" in QToolTip.text(), timeout=3000)
    QToolTip.hideText()

    with qtbot.waitSignal(window.viewer.page_shown, timeout=10000) as shown:
        _click(qtbot, transcript, links[QUOTE_MISSING])
    assert shown.args[1] == 2
    assert window.viewer.banner.isVisible() and "Not verified" in window.viewer.banner.text()
    assert not window.viewer.canvas.highlights

    _click(qtbot, transcript, links[BAD_ANCHOR])
    qtbot.waitUntil(lambda: "not in this document" in window.viewer.banner.text(), timeout=3000)
    assert window.viewer.page_number == 2  # stays where it was


def test_a_time_citation_jumps_the_keyframe_strip(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.media import make_video

    clip = window.ctx.library.add(make_video(tmp_path / "clip.mp4")).document
    frames = window.ctx.library.keyframes(clip.id)
    assert len(frames) >= 3
    cited = frames[2].t_seconds + 0.6  # a moment inside the third scene
    expected = max(i for i, f in enumerate(frames) if f.t_seconds <= cited + 0.5)
    minutes, seconds = divmod(int(cited), 60)
    _conv, message = store_cited_answer(
        window.ctx, [clip.id], f"The third scene starts here [t 00:{minutes:02d}:{seconds:02d}].", "When?"
    )
    window.refresh_library(select=clip.id)
    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.strip.count() == len(frames), timeout=10000)
    assert viewer.stack.currentIndex() == 2 and viewer.strip.currentRow() == 0
    assert viewer.sheet_button.isEnabled()  # the contact sheet is there too
    (href,) = window.chat.transcript.targets_of(message)
    _click(qtbot, window.chat.transcript, href)
    qtbot.waitUntil(lambda: viewer.strip.currentRow() == expected, timeout=5000)
    assert "the frame from" in viewer.frame_label.text()
    assert viewer.frame_canvas.image is not None
    viewer.sheet_button.click()
    assert viewer.frame_canvas.image is viewer._sheet  # the sheet replaces the frame
    assert "Contact sheet" in viewer.frame_label.text()


def test_search_box_finds_text_and_opens_the_page_with_words_marked(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library()
    window.activateWindow()
    window.find_action.trigger()  # Ctrl+F
    assert window.library.search_box.hasFocus() or QApplication.focusWidget() is window.library.search_box
    QTest.keyClicks(window.library.search_box, "Delaware")
    qtbot.waitUntil(lambda: window.library.hits.count() >= 1, timeout=3000)
    assert "found" in window.library.search_status.text()
    with qtbot.waitSignal(window.viewer.page_shown, timeout=10000) as shown:
        window.library.hits.itemActivated.emit(window.library.hits.item(0))
    assert shown.args == [doc.id, GOVERNING_LAW_PAGE]
    assert window.viewer.canvas.terms  # the word is marked on the page
    window.library.search_box.setText('"')
    window.library.run_search()
    assert window.library.hits.count() == 0 and window.library.search_status.text() == "type a word to search for"


def test_extraction_cell_opens_its_evidence_in_the_viewer(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    from app.extraction.runner import Cell, ExtractionService
    from app.extraction.templates import TemplateStore
    from inference.events import GenerationStats

    ctx = window.ctx
    doc = ctx.library.add(contract_pdf).document
    template = TemplateStore.for_config(ctx.paths.config_dir).get("contract_review")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc.id])
    law = Cell(doc.id, "governing_law", True, "Delaware", LAW, "4", GOVERNING_LAW_PAGE, "4", None, "exact", 1.0)
    service._store(run, [law], {}, GenerationStats(1, 0, 1, 1, 1, 1, "eos"))
    view = window.work_menu.show_table(run)
    col = [f.key for f in template.fields].index("governing_law")
    with qtbot.waitSignal(window.viewer.page_shown, timeout=10000) as shown:
        view.view.doubleClicked.emit(view.model.index(0, col))
    assert shown.args == [doc.id, GOVERNING_LAW_PAGE]
    assert len(window.viewer.canvas.highlights) == 2


def test_zoom_redraws_sharper_and_a_moved_original_shows_text(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.canvas.image is not None, timeout=10000)
    before = viewer.canvas.image.width()
    for _ in range(3):
        viewer.zoom_in_button.click()
    qtbot.waitUntil(lambda: viewer.canvas.image.width() > before * 1.5, timeout=10000)
    assert viewer.zoom_label.text().endswith("%") and not viewer.fit_width
    viewer.fit_button.click()
    assert viewer.fit_width

    contract_pdf.rename(contract_pdf.with_name("moved.pdf"))
    viewer.worker._renderer.close()  # a new session: nothing cached about the original
    viewer.worker._renderer = None
    viewer.doc = None
    with qtbot.waitSignal(viewer.page_shown, timeout=10000):
        viewer.show_page(doc.id, GOVERNING_LAW_PAGE, quote=LAW, quote_state=VERIFIED)
    assert viewer.page_stack.currentIndex() == 1 and "Delaware" in viewer.text_view.toPlainText()
    assert "no longer at" in viewer.banner.text()
    assert viewer.text_view.extraSelections()  # the quote is marked in the text


def test_a_crashed_drawing_process_costs_one_page_in_one_line(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    import os
    import signal
    import threading
    import time

    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    viewer = window.viewer
    qtbot.waitUntil(lambda: viewer.canvas.image is not None and viewer.thumbnails.count() == 4, timeout=15000)
    drawer = viewer.worker._renderer.drawer
    drawer.close()  # the next page starts a new child; it and its replacement die as soon as they start
    killed: list[int] = []

    def kill_new_children() -> None:
        end = time.monotonic() + 30
        while len(killed) < 2 and time.monotonic() < end:
            for pid in drawer.pids():
                if pid not in killed:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.002)

    killer = threading.Thread(target=kill_new_children)
    killer.start()
    viewer.show_page(doc.id, 2)
    qtbot.waitUntil(lambda: "drawing process stopped" in viewer.banner.text(), timeout=30000)
    killer.join()
    assert viewer.banner.text() == "page 2 could not be drawn: the page drawing process stopped"
    assert window.isVisible()
    with qtbot.waitSignal(viewer.page_shown, timeout=15000) as shown:  # the next page gets a new child
        viewer.show_page(doc.id, 3)
    assert shown.args == [doc.id, 3] and viewer.canvas.image is not None and not viewer.banner.isVisible()


def test_scanned_pages_show_their_cleaned_image(qtbot, window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(render_text_page(), degrees=2.0)])
    doc = window.ctx.library.add(pdf).document
    with qtbot.waitSignal(window.viewer.page_shown, timeout=15000):
        window.refresh_library(select=doc.id)
    viewer = window.viewer
    page = window.ctx.library.pages(doc.id)[0]
    assert page.scanned and viewer.canvas.image is not None
    stored = window.ctx.library.page_image(doc.id, 1)
    from PySide6.QtGui import QImage

    expected = QImage()
    expected.loadFromData(stored, "PNG")
    assert viewer.canvas.image.size() == expected.size()
    assert viewer.page_stack.currentIndex() == 0


def test_verdict_marks_say_what_was_checked_and_open_the_supporting_passage(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    answer = (
        "The agreement is governed by the laws of the State of Delaware [p. 1]. "
        "The Client pays a monthly fee of 12,500 US dollars. The monthly fee is 99,000 euros [p. 2]."
    )
    conversation, message = store_cited_answer(window.ctx, [doc.id], answer)
    window.refresh_library(select=doc.id)
    qtbot.waitUntil(lambda: window.conversation_id == conversation, timeout=5000)
    transcript = window.chat.transcript
    marks = {t.mark: href for href, t in transcript.claims_of(message).items()}
    assert set(marks) == {f"⚠ found on p. {GOVERNING_LAW_PAGE}", "+ added by Folio: p. 2", "✗ unsupported"}
    text = transcript.toPlainText()
    assert "1 wrong page · 1 source added by Folio · 1 unsupported" in text
    assert "citations check out" not in text
    added = char_format_at(transcript, marks["+ added by Folio: p. 2"])
    assert added.fontItalic() and "Source added by Folio" in added.toolTip() and "not the model's" in added.toolTip()
    wrong = char_format_at(transcript, marks[f"⚠ found on p. {GOVERNING_LAW_PAGE}"])
    assert "the answer cites [p. 1], which does not hold this" in wrong.toolTip()
    # The model's own [p. 1] is marked wrong too, and says where the sentence really is.
    (cited,) = [h for h, t in transcript.targets_of(message).items() if t.text == "[p. 1]"]
    assert char_format_at(transcript, cited).foreground().color() == UNTRUSTED

    viewer = window.viewer
    with qtbot.waitSignal(viewer.page_shown, timeout=10000) as shown:
        _click(qtbot, transcript, marks[f"⚠ found on p. {GOVERNING_LAW_PAGE}"])
    assert shown.args == [doc.id, GOVERNING_LAW_PAGE]
    qtbot.waitUntil(lambda: bool(viewer.canvas.highlights), timeout=10000)
    assert "Wrong page" in viewer.banner.text()
    _click(qtbot, transcript, marks["✗ unsupported"])
    qtbot.waitUntil(lambda: "Unsupported" in window.statusBar().currentMessage(), timeout=3000)
    assert viewer.page_number == GOVERNING_LAW_PAGE  # nothing supports it: the viewer stays

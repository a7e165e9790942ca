"""The document viewer: pages with thumbnails, zoom and labels; a video's keyframe strip and contact sheet.

Citations and search hits open here: the page is drawn with the quoted passage marked, or the
strip jumps to the frame at the cited time. Pages are drawn by a RenderWorker on its own thread.
With Edit > Mark areas to redact on, a drag over a PDF page drawn from its file marks an area to redact (File > Export
redacted copy... lists it); marks are kept per document while the window is open.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt, QThread, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QIcon,
    QImage,
    QKeySequence,
    QPixmap,
    QResizeEvent,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.citations.targets import BAD_ANCHOR, PASSAGE, QUOTE_MISSING, VERIFIED
from app.context import AppContext
from app.errors import NotFound
from app.store.library import DocumentRow, StoredKeyframe, StoredPage
from ingest.document import FLOWING_KINDS, Anchor, format_timestamp
from ui.background import start_worker_thread
from ui.elided_label import ElidedLabel
from ui.flow_text import FlowText
from ui.page_canvas import PageCanvas
from ui.render_worker import THUMB_WIDTH, PageRequest, RenderedPage, RenderWorker, Thumbnail, VideoFrames
from ui.theme import banner_style

THUMBNAILS_FROM = 3  # the viewer shows page thumbnails when it is this many times as wide as they are
ZOOM_STEP = 1.25
ZOOM_MIN, ZOOM_MAX = 0.25, 6.0
EMPTY, PAGES, VIDEO, FLOW = 0, 1, 2, 3


class DocumentViewer(QWidget):
    _want_page = Signal(object)  # PageRequest
    _want_thumbnails = Signal(int, int)  # generation, document id
    _want_frames = Signal(int, int)
    page_shown = Signal(int, int)  # document id, page: the picture (or text) is on screen
    document_opened = Signal(int)  # the viewer opened a document by itself (an e-mail's attachment link)
    marks_changed = Signal(int)  # document id: an area was marked for redaction, or marks were cleared

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.doc: DocumentRow | None = None
        self.pages: list[StoredPage] = []
        self.page_number = 0
        self.fit_width = True
        self.frames: list[StoredKeyframe] = []
        self.last: RenderedPage | None = None
        self._quote: str | None = None
        self._quote_state: str | None = None
        self._note = ""  # what was checked about the marked passage, said in the banner
        self._terms: tuple[str, ...] = ()
        self._generation = 0
        self._thumb_generation = 0
        self._pending_time: float | None = None
        self._thumb_items: dict[int, QListWidgetItem] = {}
        self._sheet: QImage | None = None
        self._frame_images: list[QImage] = []
        self.marks: dict[int, list[tuple[int, tuple[float, float, float, float]]]] = {}  # doc -> (page, area)
        self._markable = False  # the page on screen is drawn from the original PDF
        self._build()
        self._start_worker()

    # -- layout ----------------------------------------------------------------------------------
    def _build(self) -> None:
        # The document's name, cut in the middle to the room there is: a long file name must never
        # widen the window past the screen (the whole name is in its tooltip).
        self.title = ElidedLabel("", prefix="Document: ")
        self.title.setObjectName("viewerTitle")
        self.page_label = QLabel("")
        self.prev_button = _tool("◀", "Previous page", "Page Up", self.previous_page, "previousPage")
        self.next_button = _tool("▶", "Next page", "Page Down", self.next_page, "nextPage")
        self.zoom_out_button = _tool("−", "Zoom out", "Ctrl+-", self.zoom_out, "zoomOut")
        self.zoom_in_button = _tool("+", "Zoom in", "Ctrl+=", self.zoom_in, "zoomIn")
        self.fit_button = _tool("Fit", "Fit the page to the width", "", self.fit, "fitWidth")
        self.zoom_label = QLabel("")
        # Marking areas to redact is in the Edit menu (and the page's own menu), not a button: the page
        # controls' row must fit a small screen as it is.
        self.mark_action = QAction("&Mark areas to redact", self)
        self.mark_action.setToolTip("Drag over the page to mark an area to redact (File > Export redacted copy…)")
        self.mark_action.setCheckable(True)
        self.mark_action.toggled.connect(self._set_marking)
        self.clear_marks_action = QAction("C&lear the areas marked on this page", self)
        self.clear_marks_action.triggered.connect(self._clear_marks)
        self.clear_marks_action.setEnabled(False)
        # The name on a line of its own above the page controls: beside them it left a narrow
        # viewer (a 1280x720 screen at 150%) room for a dozen characters of it.
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        controls: list[QWidget] = [self.prev_button, self.page_label, self.next_button, self.zoom_out_button]
        controls += [self.zoom_label, self.zoom_in_button, self.fit_button]
        for widget in controls:
            bar.addWidget(widget)
        bar.addStretch(1)
        self.banner = QLabel("")
        self.banner.setObjectName("viewerBanner")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setVisible(False)

        self.thumbnails = QListWidget()
        self.thumbnails.setObjectName("thumbnails")
        self.thumbnails.setViewMode(QListWidget.ViewMode.IconMode)
        self.thumbnails.setFlow(QListWidget.Flow.TopToBottom)
        self.thumbnails.setWrapping(False)
        self.thumbnails.setMovement(QListWidget.Movement.Static)
        self.thumbnails.setIconSize(QSize(THUMB_WIDTH, round(THUMB_WIDTH * 1.42)))
        self.thumbnails.setGridSize(
            QSize(THUMB_WIDTH + 16, round(THUMB_WIDTH * 1.42) + self.fontMetrics().height() + 12)
        )
        self.thumbnails.setFixedWidth(THUMB_WIDTH + 36)
        self.thumbnails.setAccessibleName("Pages")
        self.thumbnails.setAccessibleDescription("Arrow keys choose the page shown")
        self.thumbnails.currentRowChanged.connect(self._thumbnail_chosen)
        self.canvas = PageCanvas()
        self.canvas.area_marked.connect(self._area_marked)
        self.page_scroll = QScrollArea()
        self.page_scroll.setWidget(self.canvas)
        self.page_scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.page_scroll.setBackgroundRole(self.palette().ColorRole.Mid)
        self.page_scroll.setObjectName("page")
        self.page_scroll.setAccessibleName("Page")
        self.text_view = QPlainTextEdit()
        self.text_view.setObjectName("pageText")
        self.text_view.setAccessibleName("Page text")
        self.text_view.setAccessibleDescription("The stored text of a page that cannot be drawn, with the quote marked")
        self.text_view.setReadOnly(True)
        self.page_stack = QStackedWidget()
        self.page_stack.addWidget(self.page_scroll)
        self.page_stack.addWidget(self.text_view)
        page_split = QWidget()
        page_row = QHBoxLayout(page_split)
        page_row.setContentsMargins(0, 0, 0, 0)
        page_row.addWidget(self.thumbnails)
        page_row.addWidget(self.page_stack, 1)

        self.frame_canvas = PageCanvas()
        self.frame_scroll = QScrollArea()
        self.frame_scroll.setWidget(self.frame_canvas)
        self.frame_scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.frame_label = QLabel("")
        self.frame_scroll.setAccessibleName("Frame")
        self.frame_scroll.setAccessibleDescription("The keyframe chosen in the strip below, at its time")
        self.sheet_button = QPushButton("Contact sheet")
        self.sheet_button.setObjectName("contactSheet")
        self.sheet_button.setToolTip("Every keyframe of the clip on one picture, with its time")
        self.sheet_button.setCheckable(True)
        self.sheet_button.toggled.connect(self._show_sheet)
        self.strip = QListWidget()
        self.strip.setObjectName("keyframes")
        self.strip.setAccessibleName("Keyframes")
        self.strip.setAccessibleDescription("Arrow keys choose the frame shown; each is named by its time")
        self.strip.setViewMode(QListWidget.ViewMode.IconMode)
        self.strip.setFlow(QListWidget.Flow.LeftToRight)
        self.strip.setWrapping(False)
        self.strip.setMovement(QListWidget.Movement.Static)
        self.strip.setIconSize(QSize(144, 81))
        self.strip.setGridSize(QSize(156, 81 + self.fontMetrics().height() + 14))
        self.strip.setFixedHeight(81 + self.fontMetrics().height() + 40)
        self.strip.currentRowChanged.connect(self._frame_chosen)
        video = QWidget()
        video_layout = QVBoxLayout(video)
        video_layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.frame_label, 1)
        row.addWidget(self.sheet_button)
        video_layout.addLayout(row)
        video_layout.addWidget(self.frame_scroll, 1)
        video_layout.addWidget(self.strip)

        self.hint = QLabel("Select a document to read it here.\nCitations in answers open their page.")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        self.flow = FlowText()
        self.flow.attachment_opened.connect(self._open_attachment)
        self.stack = QStackedWidget()
        for widget in (self.hint, page_split, video, self.flow):
            self.stack.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(self.banner)
        layout.addWidget(self.stack, 1)
        for key, slot, what in (
            (Qt.Key.Key_PageDown, self.next_page, "Next page (in the viewer)"),
            (Qt.Key.Key_PageUp, self.previous_page, "Previous page (in the viewer)"),
        ):
            # Only inside the viewer: elsewhere Page Up/Down scroll the transcript or the lists.
            context = Qt.ShortcutContext.WidgetWithChildrenShortcut
            QShortcut(QKeySequence(key), self, slot, context=context).setWhatsThis(what)
        QShortcut(QKeySequence.StandardKey.ZoomIn, self, self.zoom_in).setWhatsThis("Zoom in on the page")
        QShortcut(QKeySequence("Ctrl+="), self, self.zoom_in)
        QShortcut(QKeySequence.StandardKey.ZoomOut, self, self.zoom_out).setWhatsThis("Zoom out")
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(120)
        self._refit.timeout.connect(self._apply_fit)
        self._set_controls()

    def tab_order(self) -> list[QWidget]:
        """Tab goes through the page controls, then the page (or the clip, or the text)."""
        controls: list[QWidget] = [self.prev_button, self.next_button, self.zoom_out_button, self.zoom_in_button]
        pages: list[QWidget] = [self.fit_button, self.thumbnails, self.page_scroll, self.text_view]
        return [*controls, *pages, self.sheet_button, self.frame_scroll, self.strip, self.flow]

    def focus_page(self) -> None:
        """Keyboard focus to what is shown: the page, the keyframes, or the text."""
        shown: dict[int, QWidget] = {PAGES: self.page_stack.currentWidget() or self.page_scroll}
        shown |= {VIDEO: self.strip, FLOW: self.flow}
        shown.get(self.stack.currentIndex(), self.prev_button).setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _start_worker(self) -> None:
        self.worker = RenderWorker(self.ctx)
        self.render_thread: QThread = start_worker_thread(self.worker, "folio-render", cleanup="")
        self._want_page.connect(self.worker.page)
        self._want_thumbnails.connect(self.worker.thumbnails)
        self._want_frames.connect(self.worker.keyframes)
        self.worker.page_ready.connect(self._on_page)
        self.worker.thumbnails_ready.connect(self._on_thumbnails)
        self.worker.keyframes_ready.connect(self._on_frames)
        self.worker.failed.connect(self._on_failed)

    def shutdown(self) -> None:
        """Stop the render thread (the window calls this once, when it closes)."""
        from PySide6.QtCore import QMetaObject

        if self.render_thread.isRunning():
            self.worker.wanted = self.worker.wanted_thumbs = 1 << 62  # drop whatever is queued
            QMetaObject.invokeMethod(self.worker, "shutdown", Qt.ConnectionType.BlockingQueuedConnection)
            self.render_thread.quit()
            self.render_thread.wait(10000)

    # -- opening -----------------------------------------------------------------------------------
    def clear(self) -> None:
        self.doc = None
        self.pages, self.frames = [], []
        self.title.setText("")
        self._say("")
        self.stack.setCurrentIndex(EMPTY)
        self._set_controls()

    def open_document(self, document_id: int) -> bool:
        """Show a document from its first page (or first frame); False if it is gone."""
        if self.doc is not None and self.doc.id == document_id:
            return True
        try:
            doc = self.ctx.library.get(document_id)
        except NotFound:
            self.clear()
            return False
        self.doc = doc
        self.title.setText(doc.title)
        self._thumb_generation += 1
        self.worker.wanted_thumbs = self._thumb_generation
        self._say("")
        if doc.kind in FLOWING_KINDS:
            self.pages, self.frames = self.ctx.library.pages(doc.id), []
            self.flow.show_document(self.ctx.library, doc.id)
            self.stack.setCurrentIndex(FLOW)
            self.page_number = self.pages[0].number if self.pages else 0
        elif doc.kind == "video":
            self.pages, self.frames, self._frame_images = [], [], []
            self._sheet = None
            self.strip.clear()
            self.sheet_button.setChecked(False)
            self.frame_canvas.set_page(None, 1.0, (16, 9))
            self.frame_label.setText("Loading frames…")
            self.stack.setCurrentIndex(VIDEO)
            self._want_frames.emit(self._thumb_generation, doc.id)
        else:
            self.pages = self.ctx.library.pages(doc.id)
            self.thumbnails.blockSignals(True)
            self.thumbnails.clear()
            self._thumb_items = {}
            blank = QPixmap(self.thumbnails.iconSize())
            blank.fill(Qt.GlobalColor.white)
            for page in self.pages:
                item = QListWidgetItem(QIcon(blank), page.label)
                item.setTextAlignment(Qt.AlignmentFlag.AlignHCenter)
                printed = f" (printed {page.label})" if page.label != str(page.number) else ""
                item.setToolTip(f"page {page.number}{printed}")
                self.thumbnails.addItem(item)
                self._thumb_items[page.number] = item
            self.thumbnails.blockSignals(False)
            self.stack.setCurrentIndex(PAGES)
            self._want_thumbnails.emit(self._thumb_generation, doc.id)
            self.page_number = 0
            self._go(self.pages[0].number if self.pages else 1)
        self._set_controls()
        return True

    def show_page(
        self,
        document_id: int,
        page: int | None,
        *,
        quote: str | None = None,
        quote_state: str | None = None,
        terms: tuple[str, ...] = (),
        note: str = "",
    ) -> None:
        """Open a page with a quoted passage (a citation, a claim's support, a table cell) or search
        words marked; `note` is said above the page (what was checked)."""
        if not self.open_document(document_id) or self.doc is None:
            self._say("That document is no longer in the library.", "warn")
            return
        if self.doc.kind == "video":
            return
        numbers = {p.number for p in self.pages}
        if quote_state == BAD_ANCHOR or page not in numbers:
            cited = f"Page {page}" if page is not None else "The cited page"
            if self.doc.kind in FLOWING_KINDS:
                cited = f"Paragraph {page}" if page is not None else "The cited paragraph"
            self._say(f"{cited} is not in this document: the citation points nowhere.", "warn")
            return
        self._go(page, quote=quote, quote_state=quote_state, terms=terms, note=note)

    def _open_attachment(self, document_id: int) -> None:
        if self.open_document(document_id):
            self.document_opened.emit(document_id)

    def show_time(self, document_id: int, t_seconds: float | None) -> None:
        """Jump the keyframe strip to the frame shown at t_seconds (a [t mm:ss] citation)."""
        if not self.open_document(document_id) or self.doc is None or self.doc.kind != "video":
            return
        if t_seconds is None:
            return
        if not self.frames:
            self._pending_time = t_seconds
            return
        self._jump_to_time(t_seconds)

    # -- pages -------------------------------------------------------------------------------------
    def _go(
        self,
        number: int,
        *,
        quote: str | None = None,
        quote_state: str | None = None,
        terms: tuple[str, ...] = (),
        note: str = "",
    ) -> None:
        self.page_number = number
        self._quote, self._quote_state, self._terms, self._note = quote, quote_state, terms, note
        if self._flowing():  # a paragraph of a Word, text or e-mail document, the quote or words marked
            marked = self.flow.go_to(number, quote, terms)
            self._say(*self._banner("", marked and bool(quote)))
            self._set_controls()
            if self.doc is not None:
                self.page_shown.emit(self.doc.id, number)
            return
        row = next((i for i, p in enumerate(self.pages) if p.number == number), -1)
        self.thumbnails.blockSignals(True)
        self.thumbnails.setCurrentRow(row)
        self.thumbnails.blockSignals(False)
        if row >= 0:
            self.thumbnails.scrollToItem(self.thumbnails.item(row))
        page = self.pages[row] if row >= 0 else None
        if page is not None and self.fit_width:
            self.canvas.zoom = self._fit_zoom(page)
        self._request()
        self._set_controls()

    def _request(self) -> None:
        if self.doc is None or not self.page_number or self._flowing():
            return
        self._generation += 1
        self.worker.wanted = self._generation
        scale = self.canvas.zoom * self.devicePixelRatioF()
        self._want_page.emit(
            PageRequest(self._generation, self.doc.id, self.page_number, scale, self._quote, self._terms)
        )

    def _on_page(self, rendered: RenderedPage) -> None:
        if rendered.generation != self._generation:
            return  # the user has moved on
        self.last = rendered
        content = rendered.content
        page = content.page
        rects = content.highlight.rects if content.highlight else ()
        # Marks go on pages drawn from the PDF itself: a scanned page is shown straightened, in other
        # coordinates than the file's.
        self._markable = content.pixels is not None and content.png is None
        self._show_marks()
        if rendered.image is not None:
            self.canvas.set_page(rendered.image, rendered.image_scale, (page.width, page.height), rects, content.terms)
            self.page_stack.setCurrentIndex(0)
            if rects:
                first = self.canvas.to_widget(rects[0])
                self.page_scroll.ensureVisible(int(first.center().x()), int(first.center().y()), 40, 160)
        else:
            self.text_view.setPlainText(content.text or "(no text on this page)")
            self._mark_text(self._quote)
            self.page_stack.setCurrentIndex(1)
        self._say(*self._banner(content.note, bool(rects)))
        self.page_shown.emit(content.document_id, page.number)

    def _banner(self, note: str, marked: bool) -> tuple[str, str]:
        where = self._where()
        lines = [self._note] if self._note else []
        level = "info"
        if self._quote_state == QUOTE_MISSING:
            lines.append(f"Not verified: the quoted passage was not found on {where}.")
            level = "warn"
        elif self._quote and not marked and self._quote_state == PASSAGE:
            lines.append(f"The supporting passage is on {where}, but its place could not be marked.")
        elif self._quote and not marked:
            verified = self._quote_state == VERIFIED
            lines.append(
                f"The quote is {'verified' if verified else 'here'}, but its place on {where} could not be marked."
                if verified
                else f"The quoted passage could not be found on {where}."
            )
            level = "info" if verified else "warn"
        if note:
            lines.append(note)
        return " ".join(lines), level

    def _mark_text(self, quote: str | None) -> None:
        self.text_view.setExtraSelections([])
        if not quote:
            return
        # The stored text keeps the page's line breaks: match the quote's words across any spacing.
        pattern = r"\s+".join(re.escape(w) for w in quote.split())
        match = re.search(pattern, self.text_view.toPlainText(), re.IGNORECASE)
        if match is None:
            return
        found = QTextCursor(self.text_view.document())
        found.setPosition(match.start())
        found.setPosition(match.end(), QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = found
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 213, 0, 140))
        selection.format = fmt
        self.text_view.setExtraSelections([selection])

    def _on_thumbnails(self, batch: list[Thumbnail]) -> None:
        for thumb in batch:
            if thumb.generation != self._thumb_generation:
                return
            item = self._thumb_items.get(thumb.page)
            if item is not None:
                item.setIcon(QIcon(QPixmap.fromImage(thumb.image)))

    def _on_failed(self, generation: int, reason: str) -> None:
        if generation in (self._generation, self._thumb_generation):
            self._say(reason, "warn")

    def _thumbnail_chosen(self, row: int) -> None:
        if 0 <= row < len(self.pages):
            self._go(self.pages[row].number)

    def next_page(self) -> None:
        self._step(1)

    def previous_page(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        row = next((i for i, p in enumerate(self.pages) if p.number == self.page_number), -1)
        if row >= 0 and 0 <= row + delta < len(self.pages):
            self._go(self.pages[row + delta].number)

    # -- zoom --------------------------------------------------------------------------------------
    def zoom_in(self) -> None:
        if self._flowing():
            self.flow.zoom(ZOOM_STEP)
            return
        self._zoom_to(self.canvas.zoom * ZOOM_STEP)

    def zoom_out(self) -> None:
        if self._flowing():
            self.flow.zoom(1 / ZOOM_STEP)
            return
        self._zoom_to(self.canvas.zoom / ZOOM_STEP)

    def fit(self) -> None:
        if self._flowing():
            self.flow.reset_zoom()
            return
        self.fit_width = True
        self._apply_fit()

    def _flowing(self) -> bool:
        return self.doc is not None and self.doc.kind in FLOWING_KINDS

    def _zoom_to(self, zoom: float) -> None:
        self.fit_width = False
        self._set_zoom(max(ZOOM_MIN, min(ZOOM_MAX, zoom)))

    def _set_zoom(self, zoom: float) -> None:
        if abs(zoom - self.canvas.zoom) < 1e-3:
            return
        self.canvas.set_zoom(zoom)  # the current picture, stretched at once; a sharp one follows
        needed = zoom * self.devicePixelRatioF()
        have = self.canvas.image_scale if self.canvas.image is not None else 0.0
        if self.last is not None and self.last.content.pixels is not None and not 0.6 * have <= needed <= have * 1.05:
            self._request()
        self._set_controls()

    def _fit_zoom(self, page: StoredPage) -> float:
        width = self.page_scroll.viewport().width() - 12
        return max(ZOOM_MIN, min(ZOOM_MAX, width / max(page.width, 1.0)))

    def _apply_fit(self) -> None:
        if self._flowing():
            return
        page = self._current_page()
        if self.fit_width and page is not None:
            self._set_zoom(self._fit_zoom(page))
        if self.stack.currentIndex() == VIDEO:
            self._fit_frame()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # A narrow viewer (a small screen at 150% or 200%) gives the page the room of the thumbnails;
        # Page Up/Down and the page buttons still move through the pages.
        self.thumbnails.setVisible(event.size().width() >= THUMBNAILS_FROM * self.thumbnails.width())
        self._refit.start()

    # -- video -------------------------------------------------------------------------------------
    def _on_frames(self, video: VideoFrames) -> None:
        if video.generation != self._thumb_generation:
            return
        self.frames = [frame for frame, _ in video.frames]
        self._frame_images = [image for _, image in video.frames]
        self._sheet = video.contact_sheet
        self.sheet_button.setEnabled(self._sheet is not None)
        self.strip.blockSignals(True)
        self.strip.clear()
        for frame, image in video.frames:
            item = QListWidgetItem(QIcon(QPixmap.fromImage(image)), format_timestamp(frame.t_seconds))
            item.setToolTip(f"[t {format_timestamp(frame.t_seconds)}]")
            self.strip.addItem(item)
        self.strip.blockSignals(False)
        if not self.frames:
            self.frame_label.setText("This clip has no stored keyframes.")
            return
        if self._pending_time is not None:
            self._jump_to_time(self._pending_time)
            self._pending_time = None
        else:
            self.strip.setCurrentRow(0)

    def _jump_to_time(self, t_seconds: float) -> None:
        # The frame on screen at t: the last keyframe at or before it (a scene holds until the next cut).
        row = 0
        for i, frame in enumerate(self.frames):
            if frame.t_seconds <= t_seconds + 0.5:
                row = i
        self.sheet_button.setChecked(False)
        self.strip.setCurrentRow(row)
        self._frame_chosen(row)
        shown = format_timestamp(self.frames[row].t_seconds)
        self.frame_label.setText(f"[t {format_timestamp(t_seconds)}]: the frame from {shown}")

    def _frame_chosen(self, row: int) -> None:
        if not 0 <= row < len(self.frames):
            return
        self.sheet_button.setChecked(False)
        image = self._frame_images[row]
        self.frame_canvas.set_page(image, 1.0, (float(image.width()), float(image.height())))
        self.frame_label.setText(f"Frame at {format_timestamp(self.frames[row].t_seconds)}")
        self._fit_frame()
        if self.doc is not None:
            self.page_shown.emit(self.doc.id, 0)

    def _show_sheet(self, on: bool) -> None:
        if on and self._sheet is not None:
            sheet = self._sheet
            self.frame_canvas.set_page(sheet, 1.0, (float(sheet.width()), float(sheet.height())))
            self.frame_label.setText("Contact sheet: every keyframe with its time")
            self._fit_frame()
        elif not on and 0 <= self.strip.currentRow() < len(self.frames):
            self._frame_chosen(self.strip.currentRow())

    def _fit_frame(self) -> None:
        width, height = self.frame_canvas.page_size
        view = self.frame_scroll.viewport()
        zoom = min((view.width() - 8) / max(width, 1.0), (view.height() - 8) / max(height, 1.0))
        self.frame_canvas.set_zoom(max(0.05, zoom))

    # -- areas marked for redaction -------------------------------------------------------------
    def marks_for(self, document_id: int) -> list[tuple[int, tuple[float, float, float, float]]]:
        """The areas marked on a document's pages: (page, rectangle in page units as shown)."""
        return list(self.marks.get(document_id, []))

    def _set_marking(self, on: bool) -> None:
        self.canvas.set_marking(on and self._markable)
        if on and not self._markable:
            self._say("Areas can be marked on PDF pages drawn from their file; use terms for this one.", "warn")

    def _area_marked(self, rect: tuple[float, float, float, float]) -> None:
        if self.doc is None or not self._markable:
            return
        self.marks.setdefault(self.doc.id, []).append((self.page_number, rect))
        self._show_marks()
        self.marks_changed.emit(self.doc.id)

    def _clear_marks(self) -> None:
        if self.doc is None:
            return
        kept = [(p, r) for p, r in self.marks.get(self.doc.id, []) if p != self.page_number]
        self.marks[self.doc.id] = kept
        self._show_marks()
        self.marks_changed.emit(self.doc.id)

    def _show_marks(self) -> None:
        here = tuple(r for p, r in self.marks.get(self.doc.id, []) if p == self.page_number) if self.doc else ()
        self.canvas.set_redactions(here)
        self.canvas.set_marking(self.mark_action.isChecked() and self._markable)
        self.clear_marks_action.setEnabled(bool(here))

    # -- state -------------------------------------------------------------------------------------
    def _current_page(self) -> StoredPage | None:
        return next((p for p in self.pages if p.number == self.page_number), None)

    def _where(self) -> str:
        page = self._current_page()
        if page is None:
            return "this paragraph" if self._flowing() else "this page"
        if self._flowing():
            return Anchor(page=page.number, label=page.label or None, unit="paragraph").cited()
        return f"p. {page.label}"

    def _set_controls(self) -> None:
        paged = self.doc is not None and self.doc.kind != "video" and bool(self.pages)
        page = self._current_page()
        for widget in (self.prev_button, self.next_button, self.zoom_in_button, self.zoom_out_button):
            widget.setEnabled(paged)
        self.fit_button.setEnabled(paged)
        self.mark_action.setEnabled(paged and not self._flowing())
        if paged and page is not None and self._flowing():
            clause = f"§ {page.label}, " if page.label else ""
            self.page_label.setText(f"{clause}¶ {page.number} of {len(self.pages)}")
            self.zoom_label.setText("")
        elif paged and page is not None:
            label = f"p. {page.label}" if page.label == str(page.number) else f"p. {page.label} ({page.number})"
            self.page_label.setText(f"{label} of {len(self.pages)}")
            self.zoom_label.setText(f"{self.canvas.zoom * 100:.0f}%")
        else:
            self.page_label.setText("")
            self.zoom_label.setText("")
        self.page_scroll.setAccessibleDescription(self.page_label.text())

    def _say(self, text: str, level: str = "info") -> None:
        self.banner.setText(text)
        self.banner.setStyleSheet(banner_style(level))
        self.banner.setVisible(bool(text))


def _tool(text: str, name: str, keys: str, slot: object, object_name: str) -> QToolButton:
    """A small button whose symbol is said in words to a screen reader (`name`)."""
    button = QToolButton()
    button.setObjectName(object_name)
    button.setText(text)
    button.setAccessibleName(name)
    button.setToolTip(f"{name} ({keys})" if keys else name)
    button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # in the Tab order like any button
    if slot is not None:
        button.clicked.connect(slot)
    button.setAutoRaise(True)
    return button

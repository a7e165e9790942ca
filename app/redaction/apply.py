"""Redaction with PyMuPDF: the working copy made ready, the accepted areas removed, what hides
elsewhere in the file taken out, and a new file written without its earlier revisions.

Every step works on a copy in memory; the original file is only ever read.

1. `prepare`: the copy is decrypted; annotations and form fields are baked into the page (what they
   show stays, as page content the redaction then treats like any other text; a comment's hidden
   note, a field's stored value, an attached file go with the annotation); text that cannot be seen
   is removed: invisible text (render mode 3, as in a scan's OCR layer, or fully transparent) and
   text in optional-content layers that are switched off. When the copy is read for candidates, the
   words of each hidden place are read out first (`Inventory.hidden`, app/redaction/hidden.py), so the
   candidate list can show them; they go from the copy whatever is decided.
2. `redact`: for every accepted area, pictures under its box are blanked pixel by pixel and drawings
   wholly under it removed; then the text its characters' ink boxes touch is removed (see
   app/redaction/pagetext.py for why text goes by ink boxes); then the box is drawn, with its label.
3. `scrub`: metadata (the info dictionary and XMP), embedded files, JavaScript and other actions,
   links, outlines (bookmark titles), the structure tree (its alternate texts), page thumbnails,
   private application data.
4. The file is written whole (no incremental update, unreferenced objects collected), so the
   revisions the original kept (an incremental update holding old text) are not in it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.redaction.candidates import Candidate
from app.redaction.hidden import HIDDEN_LAYER, INVISIBLE, OFF_PAGE, HiddenText, spans_text

FILL = (0.0, 0.0, 0.0)
LABEL_COLOUR = (1.0, 1.0, 1.0)
LABEL_FONT = "helv"
LABEL_MAX_PT = 8.0
LABEL_MIN_PT = 4.0
# Catalogue entries that can hold the document's words outside its pages: forms, named JavaScript
# and attachments, actions run on opening, bookmarks, the tagged structure (alternate and actual
# text), an application's private data, and the whole-document thumbnail-like page piece info.
CATALOG_KEYS = ("AcroForm", "Names", "OpenAction", "AA", "Outlines", "StructTreeRoot", "MarkInfo", "PieceInfo")
PAGE_KEYS = ("AA", "PieceInfo", "Thumb", "StructParents")


@dataclass
class Inventory:
    """What the file holds besides its visible pages, counted before it is taken out (for the log and
    the window: 'also removed: 2 comments, 1 attached file, the author')."""

    annotations: int = 0
    form_fields: int = 0
    links: int = 0
    attached_files: int = 0
    metadata: list[str] = field(default_factory=list)  # the info dictionary's keys that had values
    xmp: bool = False
    javascript: bool = False
    revisions: int = 1
    invisible_chars: int = 0  # in render mode 3 or fully transparent
    hidden_layer_chars: int = 0  # in optional content switched off
    offpage_chars: int = 0  # placed outside the page's visible area
    encrypted: bool = False
    # The words in those hidden places, for the candidate list (app/redaction/hidden.py); never logged.
    hidden: list[HiddenText] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What was taken out, in words; empty when the file held none of it."""
        out = []
        if self.annotations:
            out.append(f"{self.annotations} annotation(s) (comments, stamps, markup: what they show is kept)")
        if self.form_fields:
            out.append(f"{self.form_fields} form field(s) (their shown values are kept as text)")
        if self.links:
            out.append(f"{self.links} link(s)")
        if self.attached_files:
            out.append(f"{self.attached_files} attached file(s)")
        if self.metadata:
            out.append("document properties: " + ", ".join(self.metadata))
        if self.xmp:
            out.append("XMP metadata")
        if self.javascript:
            out.append("JavaScript")
        if self.revisions > 1:
            out.append(f"{self.revisions - 1} earlier revision(s) kept by incremental updates")
        if self.invisible_chars:
            out.append(f"{self.invisible_chars} characters of invisible text (such as a scan's OCR layer)")
        if self.hidden_layer_chars:
            out.append(f"{self.hidden_layer_chars} characters in hidden layers")
        if self.offpage_chars:
            out.append(f"{self.offpage_chars} characters placed outside the visible page")
        return out


def _mupdf(name: str) -> int:
    """One of PyMuPDF's option constants by name (its type stubs do not list them)."""
    import pymupdf

    return int(getattr(pymupdf, name))


def open_pdf(data: bytes, password: str | None = None) -> Any:
    """A PDF in memory, decrypted; one plain line when it cannot be opened."""
    import pymupdf

    from app.errors import FolioError

    pymupdf.TOOLS.mupdf_display_errors(False)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # MuPDF raises several unrelated types for broken files
        raise FolioError(f"the PDF cannot be read ({_short(exc)})") from exc
    if doc.needs_pass and not doc.authenticate(password or ""):
        doc.close()
        raise FolioError("the PDF is password-protected: give its password" if not password else "wrong password")
    if doc.page_count == 0:
        doc.close()
        raise FolioError("the PDF has no pages")
    return doc


def prepare(doc: Any, *, look: bool = False, original: bytes | None = None, password: str | None = None) -> Inventory:
    """Make the working copy ready to search and redact, and count what hides in it; with `look`, also
    read the words in every hidden place (`Inventory.hidden`; `original`, the file's bytes, for its
    earlier revisions) before they are taken out."""
    from app.redaction.hidden import collect

    inventory = _count(doc)
    if look:
        inventory.hidden = collect(doc, original, password)
    _strip_marked_text(doc)
    _bake(doc)
    layers = _layers_on(doc)  # before any page changes: the probe must show the pages as they are
    try:
        for page in doc:
            _remove_hidden_text(page, inventory, layers)
            _remove_offpage_text(page, inventory)
    finally:
        if layers is not None:
            layers[0].close()
    return inventory


def _count(doc: Any) -> Inventory:

    inv = Inventory(encrypted=bool(doc.is_encrypted or doc.needs_pass))
    for page in doc:
        for annot in page.annots() or []:
            if annot.type[0] != _mupdf("PDF_ANNOT_FILE_ATTACHMENT"):
                inv.annotations += 1
            else:
                inv.attached_files += 1
        inv.form_fields += sum(1 for _ in page.widgets() or [])
        inv.links += len(page.get_links())
    inv.attached_files += doc.embfile_count()
    inv.metadata = sorted(k for k, v in (doc.metadata or {}).items() if v and k not in ("format", "encryption"))
    inv.xmp = bool(doc.get_xml_metadata())
    inv.javascript = _has_javascript(doc)
    inv.revisions = max(1, int(doc.version_count))
    return inv


def _has_javascript(doc: Any) -> bool:
    for xref in range(1, doc.xref_length()):
        try:
            if doc.xref_get_key(xref, "S")[1] == "/JavaScript" or doc.xref_get_key(xref, "JS")[0] != "null":
                return True
        except Exception:  # a damaged object: not JavaScript we could name
            continue
    return False


# Marked-content properties that carry words of their own: the text a reader shows or copies instead
# of the glyphs (ActualText), an alternate description (Alt), an abbreviation's expansion (E). MuPDF
# extracts ActualText in place of the glyphs it covers, and its redaction removes the glyphs but
# keeps the property: a name redacted there stayed in the file, readable by any tool that decompresses
# the page. They go before anything is searched, so the search sees the glyphs' own text.
def _strip_marked_text(doc: Any) -> None:
    from app.redaction.pdf_strings import strip_marked_text

    contents = {x for page in doc for x in page.get_contents()}
    for xref in range(1, doc.xref_length()):
        try:
            is_stream = doc.xref_is_stream(xref)
            form = is_stream and doc.xref_get_key(xref, "Subtype")[1] == "/Form"
        except Exception:  # a damaged object: nothing we can rewrite
            continue
        if not is_stream:  # a property list kept in the resources (/Properties << /MC0 12 0 R >>)
            for key in ("ActualText", "Alt", "E"):
                if doc.xref_get_key(xref, key)[0] == "string":
                    doc.xref_set_key(xref, key, "null")
            continue
        if xref in contents or form:
            stripped = strip_marked_text(doc.xref_stream(xref) or b"")
            if stripped is not None:
                doc.update_stream(xref, stripped)


def _bake(doc: Any) -> None:
    """Annotations and form fields become page content: what they show stays, the rest goes."""
    try:
        doc.bake(annots=True, widgets=True)
    except Exception:  # a damaged annotation MuPDF cannot draw: removed without its appearance
        for page in doc:
            for widget in list(page.widgets() or []):
                page.delete_widget(widget)
            annot = page.first_annot
            while annot is not None:
                annot = page.delete_annot(annot)
    for page in doc:  # links and anything bake leaves (a popup, a hidden annotation)
        for link in page.get_links():
            page.delete_link(link)
        annot = page.first_annot
        while annot is not None:
            annot = page.delete_annot(annot)


def _remove_hidden_text(page: Any, inventory: Inventory, layers: tuple[Any, set[str]] | None) -> None:
    """Invisible text (render mode 3 or fully transparent) and text in switched-off layers."""
    import pymupdf

    spans = page.get_texttrace()
    unseen = [s for s in spans if s["type"] == 3 or s.get("opacity", 1) == 0]
    invisible = sum(len(s["chars"]) for s in unseen)
    if invisible:
        inventory.invisible_chars += invisible
        inventory.hidden.append(HiddenText(page.number + 1, INVISIBLE, spans_text(unseen)))
        # One area over the whole page that removes only text nobody can see: visible text, pictures
        # and drawings stay exactly as they are.
        page.add_redact_annot(pymupdf.Rect(-1e5, -1e5, 1e5, 1e5), fill=False, cross_out=False)
        page.apply_redactions(
            images=_mupdf("PDF_REDACT_IMAGE_NONE"),
            graphics=_mupdf("PDF_REDACT_LINE_ART_NONE"),
            text=_mupdf("PDF_REDACT_TEXT_REMOVE_INVISIBLE"),
        )
    hidden = _hidden_layer_spans(page, layers)
    if hidden:
        inventory.hidden_layer_chars += sum(len(span["chars"]) for span in hidden)
        inventory.hidden.append(HiddenText(page.number + 1, HIDDEN_LAYER, spans_text(hidden)))
        for box in (pymupdf.Rect(span["bbox"]) for span in hidden):
            page.add_redact_annot(box, fill=False, cross_out=False)
        page.apply_redactions(
            images=_mupdf("PDF_REDACT_IMAGE_NONE"),
            graphics=_mupdf("PDF_REDACT_LINE_ART_NONE"),
            text=_mupdf("PDF_REDACT_TEXT_REMOVE"),
        )


def _remove_offpage_text(page: Any, inventory: Inventory) -> None:
    """Text placed outside the page's visible area (its crop box): no viewer shows it, every text
    extractor but MuPDF's clipped one reads it. Removed by redacting everything around the page (a
    character cut by the page's edge goes too; pictures are blanked only outside)."""
    import pymupdf

    visible = page.rect * page.derotation_matrix
    visible.normalize()

    def off(char: Any) -> bool:
        x0, y0, x1, y1 = char[3]
        return bool(x1 <= visible.x0 or x0 >= visible.x1 or y1 <= visible.y0 or y0 >= visible.y1)

    spans = page.get_texttrace()
    outside = sum(1 for span in spans for char in span["chars"] if off(char))
    if not outside:
        return
    inventory.offpage_chars += outside
    # Listed span by span, the part on the page too: an address cut by the page's edge is one address.
    cut = [span for span in spans if any(off(char) for char in span["chars"])]
    inventory.hidden.append(HiddenText(page.number + 1, OFF_PAGE, spans_text(cut)))
    far = 1e5
    for rect in (
        pymupdf.Rect(-far, -far, far, visible.y0),
        pymupdf.Rect(-far, visible.y1, far, far),
        pymupdf.Rect(-far, visible.y0, visible.x0, visible.y1),
        pymupdf.Rect(visible.x1, visible.y0, far, visible.y1),
    ):
        page.add_redact_annot(rect, fill=False, cross_out=False)
    page.apply_redactions(
        images=_mupdf("PDF_REDACT_IMAGE_PIXELS"),
        graphics=_mupdf("PDF_REDACT_LINE_ART_REMOVE_IF_COVERED"),
        text=_mupdf("PDF_REDACT_TEXT_REMOVE"),
    )


def _layers_on(doc: Any) -> tuple[Any, set[str]] | None:
    """A second copy of the document with every optional-content layer switched on, and the names of
    the layers that are off in the document; None when none is off. MuPDF's text extraction skips
    text in a switched-off layer (so nothing would find it) but other readers do not."""
    import pymupdf

    layers = doc.get_ocgs()
    off = {v["name"] for v in layers.values() if not v.get("on", True)} if layers else set()
    if not off:
        return None
    probe = pymupdf.open(stream=doc.tobytes(), filetype="pdf")
    for i in range(len(probe.layer_ui_configs())):
        probe.set_layer_ui_config(i, _mupdf("PDF_OC_ON"))
    return probe, off


def _hidden_layer_spans(page: Any, layers: tuple[Any, set[str]] | None) -> list[dict[str, Any]]:
    """The text in switched-off layers on a page: MuPDF's text-trace spans."""
    if layers is None:
        return []
    probe, off = layers
    return [span for span in probe[page.number].get_texttrace() if span.get("layer") in off and span["chars"]]


def redact(doc: Any, accepted: Iterable[Candidate], *, label: bool) -> int:
    """Remove every accepted area; returns the number of boxes drawn."""
    import pymupdf

    by_page: dict[int, list[Candidate]] = {}
    for c in accepted:
        if c.boxes or c.ink:  # a hidden place's words have no box: prepare() took them out already
            by_page.setdefault(c.page, []).append(c)
    drawn = 0
    for number, items in sorted(by_page.items()):
        page = doc[number - 1]
        boxes = [(box, c) for c in items for box in c.boxes]
        # First pass: pictures blanked under the whole box, drawings wholly under it removed; text is
        # left for the second pass, which goes by the characters' ink.
        for box, _c in boxes:
            page.add_redact_annot(pymupdf.Rect(box), fill=False, cross_out=False)
        page.apply_redactions(
            images=_mupdf("PDF_REDACT_IMAGE_PIXELS"),
            graphics=_mupdf("PDF_REDACT_LINE_ART_REMOVE_IF_COVERED"),
            text=_mupdf("PDF_REDACT_TEXT_NONE"),
        )
        _split_text_runs(page)
        for c in items:
            for ink in c.ink:
                page.add_redact_annot(_inset(ink), fill=False, cross_out=False)
        page.apply_redactions(
            images=_mupdf("PDF_REDACT_IMAGE_NONE"),
            graphics=_mupdf("PDF_REDACT_LINE_ART_NONE"),
            text=_mupdf("PDF_REDACT_TEXT_REMOVE"),
        )
        for box, c in boxes:
            rect = pymupdf.Rect(box)
            page.draw_rect(rect, color=None, fill=FILL, overlay=True)
            if label:
                _label(page, rect, c.label)
            drawn += 1
    return drawn


def _split_text_runs(page: Any) -> None:
    """Every shown string split into one string per glyph code, so a redaction never starts inside one.

    MuPDF's redaction drops the advance of the first glyph it removes from inside a string: the text
    after it on the line moves left by that glyph's width (measured: 'Write abc@def.com for' with the
    address removed put 'for' 6.1 pt to the left, partly under the box). When the removal starts at a
    string's edge it keeps every advance. Splitting shows exactly the same glyphs at the same places
    ([(ab)] TJ and [(a)(b)] TJ are one thing); only fonts whose code length is known are split (one
    byte for simple fonts, two for Identity-encoded CID fonts), others are left as they are."""
    from app.redaction.pdf_strings import split_shown_strings

    doc = page.parent
    lengths = {
        str(f[4]): _code_length(str(f[2]), str(f[5])) for f in page.get_fonts(full=True)
    }  # resource name -> bytes per glyph code
    streams = list(page.get_contents()) + [x[0] for x in page.get_xobjects() if x[0] > 0]
    for xref in streams:
        if xref not in page.get_contents() and doc.xref_get_key(xref, "Subtype")[1] != "/Form":
            continue
        data = doc.xref_stream(xref)
        if data and (b"Tj" in data or b"TJ" in data or b"'" in data or b'"' in data):
            split = split_shown_strings(data, lengths)
            if split is not None:
                doc.update_stream(xref, split)


def _code_length(font_type: str, encoding: str) -> int | None:
    if font_type == "Type0":
        return 2 if encoding in ("Identity-H", "Identity-V") else None
    return 1  # Type1, TrueType, Type3, MMType1: one byte per glyph


def _inset(box: tuple[float, float, float, float]) -> Any:
    """A character's ink box pulled in a little: MuPDF removes every glyph a rectangle touches, and a
    neighbour kerned against this one may share a sliver of its box."""
    import pymupdf

    x0, y0, x1, y1 = box
    dx = min(0.25, (x1 - x0) / 4)
    dy = min(0.25, (y1 - y0) / 4)
    return pymupdf.Rect(x0 + dx, y0 + dy, x1 - dx, y1 - dy)


def _label(page: Any, rect: Any, text: str) -> None:
    """The reason in white on the box, on one line, as large as fits up to 8 pt and centred; 'Redacted'
    alone if the reason does not fit; nothing on a box too small for even that."""
    import pymupdf

    shown = rect * page.rotation_matrix  # the label reads upright on a turned page
    shown.normalize()
    for words in (text, "Redacted"):
        size = min(LABEL_MAX_PT, shown.height * 0.75)
        while size >= LABEL_MIN_PT:
            width = pymupdf.get_text_length(words, fontname=LABEL_FONT, fontsize=size)
            if width <= shown.width - 2:
                # the baseline a little below the middle, so capitals sit centred
                start = pymupdf.Point((shown.x0 + shown.x1 - width) / 2, (shown.y0 + shown.y1) / 2 + size * 0.35)
                page.insert_text(start * page.derotation_matrix, words, fontsize=size, fontname=LABEL_FONT,
                                 color=LABEL_COLOUR, rotate=page.rotation)  # fmt: skip
                return
            size -= 0.5


def scrub(doc: Any) -> None:
    """Everything the file holds outside the pages' content that could carry the document's words."""
    doc.scrub(
        attached_files=True,
        clean_pages=True,
        embedded_files=True,
        hidden_text=False,  # done in prepare(), without touching visible text
        javascript=True,
        metadata=True,
        redactions=False,
        remove_links=True,
        reset_fields=True,
        reset_responses=True,
        thumbnails=True,
        xml_metadata=True,
    )
    catalog = doc.pdf_catalog()
    for key in CATALOG_KEYS:
        if doc.xref_get_key(catalog, key)[0] != "null":
            doc.xref_set_key(catalog, key, "null")
    for page in doc:
        for key in PAGE_KEYS:
            if doc.xref_get_key(page.xref, key)[0] != "null":
                doc.xref_set_key(page.xref, key, "null")
    doc.set_metadata({})
    doc.del_xml_metadata()


def write(doc: Any) -> bytes:
    """The whole file anew: compressed, unreferenced objects (earlier revisions) dropped, no encryption."""

    return bytes(
        doc.tobytes(
            garbage=4,
            deflate=True,
            deflate_images=True,
            deflate_fonts=True,
            clean=True,
            incremental=False,
            encryption=_mupdf("PDF_ENCRYPT_NONE"),
            no_new_id=False,
        )
    )


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]

"""Redaction that removes, proved: tricky layers, real contracts and scans with generated personal
data, rotated and encrypted PDFs, Word documents; nothing planted recoverable from the copy by any
reader we have, nothing unaccepted removed, the original untouched, no file when the check fails,
and a log that holds no redacted word."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app.context import AppContext
from app.errors import FolioError
from app.redaction.apply import open_pdf, prepare, redact, scrub, write
from app.redaction.candidates import HIDDEN, MARKED, Candidate, Mark, Search, find_candidates
from app.redaction.pdf_strings import split_shown_strings, strip_marked_text
from app.redaction.plan import plan_json, read_plan
from app.redaction.proof import RedactionFailed, prove, read_pages
from app.redaction.service import Redactor
from app.store.redactions import Redactions
from tests.conftest import CORPUS, run_folio
from tests.fixtures.redaction import (
    Planted,
    found_items,
    matching,
    plant_contract,
    planted_scan,
    recoverable,
    squash,
    tricky_pdf,
    words_outside,
)

CONTRACT = CORPUS / "contracts_pdf" / "SPHERE3DCORP_06_24_2020-EX-10.12-CONSULTING AGREEMENT.PDF"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus (../shared/corpus) is not here")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def redactor(ctx: AppContext) -> Redactor:
    r = Redactor(ctx)
    yield r  # type: ignore[misc]
    r.close()


# -- the whole path, through the child process, the Exporter and the log ------------------------------
def test_tricky_layers_nothing_planted_can_be_read_back_and_the_control_stays(
    tmp_path: Path, ctx: AppContext, redactor: Redactor
) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    before = sha(planted.path)
    assert {how for how in recoverable(planted.path, planted.items, ocr=False)} >= {
        "raw bytes and inflated streams",
        "PyMuPDF text (every revision)",
        "pypdf text (every revision)",
        "metadata and XMP",
        "annotations and form fields",
        "attached files",
    }, "the fixture hides its items everywhere the test then looks"
    source = redactor.source(str(planted.path))
    found = redactor.find(source, Search(terms=tuple(planted.terms)))
    lines = " ".join(found.inventory.lines())
    for removed in ("annotation", "form field", "attached file", "XMP", "JavaScript", "earlier revision",
                    "invisible text", "hidden layers", "outside the visible page"):  # fmt: skip
        assert removed in lines
    out = tmp_path / "out" / "tricky redacted.pdf"
    done = redactor.export(source, found, matching(found.candidates, planted), out)

    assert done.proof.ok and out.is_file()
    assert sha(planted.path) == before, "the original is byte-identical"
    survivors = recoverable(out, planted.items)
    control = [i for i in planted.items if not i.accept]
    for how, items in survivors.items():
        assert items == control, f"{how} reads back {[i.text for i in items if i.accept]}"
    assert set(survivors) >= {"PyMuPDF text (every revision)", "pypdf text (every revision)", "OCR"}

    log = Redactions(ctx.db).get(done.log_id)
    assert log.output_sha256 == sha(out) == done.export.sha256
    assert log.source_sha256 == before and log.proof["ok"] is True
    entry = ctx.audit.entries()[-1]
    assert entry.action == "export" and entry.details["sha256"] == log.output_sha256
    assert entry.details["redaction_log"] == log.id and entry.documents == [before]
    stored = json.dumps([log.areas, log.removed, log.proof, entry.details])
    for item in planted.items:
        assert squash(item.text) not in squash(stored), "the log never holds the redacted words"
    assert ctx.audit.verify().ok


def test_a_failed_check_keeps_no_file_no_log_and_no_audit_entry(
    tmp_path: Path, ctx: AppContext, redactor: Redactor
) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    source = redactor.source(str(planted.path))
    found = redactor.find(source, Search())
    real = next(c for c in found.candidates if c.page == 1)
    # A box drawn over empty paper while the words it claims stay on the page: the check must catch it.
    astray = Candidate(real.key, real.kind, 1, real.text, real.context, real.source, real.via,
                       ((300.0, 400.0, 320.0, 410.0),), ((300.0, 400.0, 320.0, 410.0),))  # fmt: skip
    entries = len(ctx.audit.entries())
    out = tmp_path / "out.pdf"
    with pytest.raises(RedactionFailed, match="page 1: e-mail address can still be found"):
        redactor.export(source, found, [astray], out)
    assert not out.exists() and list(tmp_path.glob("*.tmp")) == [] and list(tmp_path.glob(".out.pdf.*")) == []
    assert Redactions(ctx.db).list() == [] and len(ctx.audit.entries()) == entries


def test_an_existing_file_or_the_original_itself_is_never_replaced(tmp_path: Path, redactor: Redactor) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    source = redactor.source(str(planted.path))
    found = redactor.find(source, Search(terms=("Harborview",)))
    taken = tmp_path / "taken.pdf"
    taken.write_bytes(b"mine")
    with pytest.raises(FolioError, match="already exists"):
        redactor.export(source, found, found.candidates, taken)
    assert taken.read_bytes() == b"mine"
    with pytest.raises(FolioError, match="cannot replace the original"):
        redactor.export(source, found, found.candidates, planted.path, overwrite=True)
    with pytest.raises(FolioError, match=r"\.pdf"):
        redactor.export(source, found, found.candidates, tmp_path / "copy.docx")


@needs_corpus
def test_a_real_contract_with_planted_data_recall_and_nothing_else_removed(tmp_path: Path, redactor: Redactor) -> None:
    planted = plant_contract(CONTRACT, tmp_path / "contract.pdf", seed=7)
    before = sha(planted.path)
    source = redactor.source(str(planted.path))
    found = redactor.find(source, Search(terms=tuple(planted.terms)))
    hit, missed = found_items(found.candidates, planted)
    assert not missed and len(hit) >= 40
    accepted = matching(found.candidates, planted)
    out = tmp_path / "redacted.pdf"
    redactor.export(source, found, accepted, out)
    assert sha(planted.path) == before
    assert recoverable(out, [i for i in planted.items if i.accept], ocr=False) == {}
    control = [i for i in planted.items if not i.accept]
    assert recoverable(out, control, ocr=False)["pypdf text (every revision)"] == control
    boxes: dict[int, list[tuple[float, float, float, float]]] = {}
    for c in accepted:
        boxes.setdefault(c.page, []).extend(c.boxes)
    assert words_outside(planted.path, out, boxes) == [], "every word outside the boxes is where it was"


@needs_corpus
@pytest.mark.parametrize("ocr_layer", [False, True], ids=["image only", "with an OCR text layer"])
def test_a_scan_the_pixels_under_the_boxes_are_replaced(tmp_path: Path, redactor: Redactor, ocr_layer: bool) -> None:
    planted = planted_scan(CORPUS / "scans" / "epson.pdf", tmp_path / "scan.pdf", seed=11, ocr_layer=ocr_layer)
    source = redactor.source(str(planted.path))
    found = redactor.find(source, Search())
    assert all(c.via == "ocr" for c in found.candidates)
    hit, missed = found_items(found.candidates, planted)
    assert len(hit) >= 8, missed  # OCR may misread one item of nine; the rest must be there
    accepted = matching(found.candidates, planted)
    out = tmp_path / "redacted.pdf"
    done = redactor.export(source, found, accepted, out)
    assert done.proof.ocr_pages == [1]
    assert recoverable(out, [i for i in hit if i.accept]) == {}
    if ocr_layer:
        assert "invisible text" in " ".join(found.inventory.lines())


@needs_corpus
def test_turned_pages_boxes_land_on_their_words(tmp_path: Path, redactor: Redactor) -> None:
    path = CORPUS / "odd_pdfs" / "test-2812.pdf"  # pages turned by /Rotate 0, 90, 180 and 270
    source = redactor.source(str(path))
    found = redactor.find(source, Search(terms=("cell[0][4]", "cell[7][0]")))
    assert {c.page for c in found.candidates} == {1, 2, 3, 4}
    out = tmp_path / "redacted.pdf"
    redactor.export(source, found, found.candidates, out)
    readable = recoverable(out, [Planted("term", "cell[0][4]", 0), Planted("term", "cell[7][0]", 0)], ocr=False)
    assert readable == {}
    boxes: dict[int, list[tuple[float, float, float, float]]] = {}
    for c in found.candidates:
        boxes.setdefault(c.page, []).extend(c.boxes)
    assert words_outside(path, out, boxes) == []


@needs_corpus
def test_encrypted_pdfs_need_their_password_and_the_copy_is_not_encrypted(tmp_path: Path, redactor: Redactor) -> None:
    locked = CORPUS / "odd_pdfs" / "password.pdf"
    with pytest.raises(FolioError, match="password"):
        redactor.find(redactor.source(str(locked)), Search(terms=("password",)))
    source = redactor.source(str(locked), password="password")
    found = redactor.find(source, Search(terms=("password",)))
    out = tmp_path / "redacted.pdf"
    redactor.export(source, found, found.candidates, out)
    copy = open_pdf(out.read_bytes())
    assert not copy.needs_pass and "password" not in copy[0].get_text().lower()


def test_a_word_document_is_typeset_then_redacted(tmp_path: Path, ctx: AppContext, redactor: Redactor) -> None:
    from tests.fixtures.office import python_docx_memo

    doc = ctx.library.add(python_docx_memo(tmp_path / "memo.docx")).document
    source = redactor.source(doc.id)
    assert source.kind == "typeset" and source.sha256 == doc.sha256
    found = redactor.find(source, Search(patterns=(), terms=("Dana Lawyer", "supplier")))
    assert {c.text.lower() for c in found.candidates} == {"dana lawyer", "supplier"}
    out = tmp_path / "memo redacted.pdf"
    done = redactor.export(source, found, found.candidates, out)
    assert done.proof.ok and Redactions(ctx.db).list(doc.id)[0].id == done.log_id
    text = open_pdf(out.read_bytes())[0].get_text()
    assert "Dana" not in text and "supplier" not in text.lower() and "thirty days" in text


# -- the steps in this process ---------------------------------------------------------------------------
def test_a_marked_area_takes_text_and_picture_under_it(tmp_path: Path) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    doc = open_pdf(planted.path.read_bytes())
    prepare(doc)
    pages = read_pages(doc, None)
    # Page 2 has an address under a picture: mark the picture's area.
    candidates = find_candidates(pages, Search(patterns=(), marks=(Mark(2, (60.0, 110.0, 420.0, 140.0)),)))
    assert [c.kind for c in candidates] == [MARKED] and "@" in candidates[0].text
    redact(doc, candidates, label=False)
    scrub(doc)
    out = tmp_path / "out.pdf"
    out.write_bytes(write(doc))
    proof = prove(str(out), pages, candidates, ocr=None)
    assert proof.ok and proof.ocr_missing, "without an OCR engine the proof says the pictures went unread"
    import numpy as np
    import pymupdf

    copy = pymupdf.open(out)
    assert "Hidden address" not in copy[1].get_text()
    for image in copy[1].get_images():  # a picture wholly under the box goes; a part of one is blanked
        pixels = np.frombuffer(pymupdf.Pixmap(copy, image[0]).samples, np.uint8)
        assert (pixels == pixels[0]).all()


def _found_with_hidden(path: Path, terms: tuple[str, ...] = ()) -> tuple[object, list, list[Candidate]]:  # type: ignore[type-arg]
    data = path.read_bytes()
    doc = open_pdf(data)
    inventory = prepare(doc, look=True, original=data)
    pages = read_pages(doc, None)
    return doc, pages, find_candidates(pages, Search(terms=terms), hidden=inventory.hidden)


def test_hidden_places_are_listed_with_their_page_and_where_they_hide(tmp_path: Path) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    _doc, _pages, found = _found_with_hidden(planted.path, tuple(planted.terms))
    hit, missed = found_items(found, planted)
    assert missed == [] and len(hit) == len(planted.items)
    hidden = [i for i in planted.items if i.hidden]
    assert len(hidden) == 12 and any(i.page == 0 for i in hidden) and any(i.page == 8 for i in hidden)
    for item in hidden:
        listed = [c for c in found if c.page == item.page and squash(item.text) in squash(c.text)]
        places = [c.hidden for c in listed]
        assert item.hidden in places and len(places) == len(set(places)), item  # once per place it hides in
        if item.hidden == "in the document properties":
            assert places == [item.hidden, "in the XMP metadata"]
        c = next(c for c in listed if c.hidden == item.hidden)
        if item.hidden in ("white text", "partly under an image"):  # in the page: removed by its box if accepted
            assert c.via == "text" and c.boxes and c.ink
        else:  # a place the copy loses whatever is decided: nothing to box
            assert c.via == HIDDEN and c.boxes == () and c.ink == () and "@" in c.context
    for item in planted.items:  # words a page shows (a free-text box, a form field) are listed once, as shown
        if not item.hidden and item.kind == "email":
            assert [c.hidden for c in found if c.page == item.page and squash(item.text) == squash(c.text)] == [""]
    assert found[0].page == 0 and found[0].where == "the file", "the file's own places come first"


def test_hidden_places_go_from_the_copy_accepted_or_not_and_accepting_one_makes_the_proof_look_for_it(
    tmp_path: Path,
) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    doc, pages, found = _found_with_hidden(planted.path)
    in_places = [c for c in found if c.via == HIDDEN]
    last_page = [w[4] for w in doc[-1].get_text("words")]  # type: ignore[attr-defined]
    assert redact(doc, in_places, label=True) == 0, "a hidden place's candidate draws no box"
    assert [w[4] for w in doc[-1].get_text("words")] == last_page, "page 0 is the file, never the last page"  # type: ignore[attr-defined]
    shown = [c for c in found if c.via != HIDDEN and c.page == 1]
    redact(doc, shown, label=True)
    scrub(doc)  # type: ignore[arg-type]
    out = tmp_path / "out.pdf"
    out.write_bytes(write(doc))
    rejected = [i for i in planted.items if i.hidden and i.hidden not in ("white text", "partly under an image")]
    assert recoverable(out, rejected, ocr=False) == {}, "rejected, and still gone from the copy"
    proof = prove(str(out), pages, shown + in_places, ocr=None)
    assert proof.ok, proof.summary()
    assert proof.strings == len(shown) + len({squash(c.text) for c in in_places})
    # Proved against the original, the same accepted places are found: the proof does look for them.
    against_original = prove(str(planted.path), pages, in_places, ocr=None)
    assert not against_original.ok
    assert {s.page for s in against_original.survivors} >= {0, 5}


def test_white_text_and_text_under_a_picture_are_marked_only_where_nobody_sees_them(tmp_path: Path) -> None:
    import pymupdf

    path = tmp_path / "layers.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 10), False)
    pix.set_rect(pix.irect, (120, 30, 30))
    page.draw_rect(pymupdf.Rect(50, 50, 350, 80), color=None, fill=(0, 0, 0))
    page.insert_text((60, 70), "On black carol@example.com shows.", fontsize=11, color=(1, 1, 1))
    page.insert_text((60, 150), "On paper dan@example.com hides.", fontsize=11, color=(1, 1, 1))
    page.insert_image(pymupdf.Rect(50, 200, 350, 240), pixmap=pix, keep_proportion=False)
    page.insert_text((60, 225), "Over it eve@example.com shows.", fontsize=11)
    page.insert_text((60, 300), "Under it fay@example.com hides.", fontsize=11)
    page.insert_image(pymupdf.Rect(50, 285, 350, 310), pixmap=pix, keep_proportion=False)
    doc.save(path)
    _doc, _pages, found = _found_with_hidden(path)
    where = {c.text: c.hidden for c in found}
    assert where == {
        "carol@example.com": "",
        "dan@example.com": "white text",
        "eve@example.com": "",
        "fay@example.com": "under an image",
    }


def test_a_line_on_the_pages_bottom_edge_keeps_its_spaces(tmp_path: Path) -> None:
    """MuPDF's ink-box reading drops the space of a line set on the page's bottom edge (its ink box is
    empty): the page read 'HelloWorld' and the term Hello was not found (corpus odd_pdfs/test2238.pdf)."""
    import pymupdf

    path = tmp_path / "edge.pdf"
    doc = pymupdf.open()
    doc.new_page(width=300, height=144).insert_text((0, 144), "Hello World", fontsize=24)
    doc.save(path)
    work = open_pdf(path.read_bytes())
    prepare(work)
    pages = read_pages(work, None)
    assert pages[0].text == "Hello World"
    found = find_candidates(pages, Search(patterns=(), terms=("Hello",)))
    assert [c.text for c in found] == ["Hello"] and len(found[0].ink) == 5
    redact(work, found, label=False)
    scrub(work)
    out = tmp_path / "out.pdf"
    out.write_bytes(write(work))
    assert prove(str(out), pages, found, ocr=None).ok
    assert pymupdf.open(out)[0].get_text().split() == ["World"]


def test_the_attacker_reads_digits_in_the_raw_bytes_but_not_inside_glyph_codes(tmp_path: Path) -> None:
    import pymupdf

    amount = Planted("amount", "$320,029.00", 1)
    for content, readable in (
        (b"BT /helv 9 Tf 72 72 Td (deposit of $320,029.00.) Tj ET", True),
        (b"BT /helv 9 Tf 72 72 Td [($)(3)(2)(0)(,)(0)(2)(9)(.)(0)(0)] TJ ET", True),
        (b"BT /helv 9 Tf 72 72 Td <0032002900030030> Tj ET", False),  # a CID font's codes, by chance
    ):
        doc = pymupdf.open()
        page = doc.new_page()
        page.insert_text((72, 72), "x", fontname="helv")
        doc.update_stream(page.get_contents()[0], content)
        path = tmp_path / "digits.pdf"
        doc.save(path)
        found = recoverable(path, [amount], ocr=False).get("raw bytes and inflated streams", [])
        assert (found == [amount]) is readable, content


def test_the_proof_counts_only_what_the_user_left(tmp_path: Path) -> None:
    """A term accepted in one place and rejected in another stays where it was rejected, and the label
    on a box may say a redacted word: neither is a survivor."""
    import pymupdf

    path = tmp_path / "two.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Personal data of Acme here.", fontsize=12)
    page.insert_text((72, 140), "Acme stays in this line.", fontsize=12)
    doc.save(path)
    work = open_pdf(path.read_bytes())
    prepare(work)
    pages = read_pages(work, None)
    found = find_candidates(pages, Search(patterns=(), terms=("Acme", "personal data")))
    first = [c for c in found if c.context.startswith("[Personal") or "of [Acme]" in c.context]
    assert len(first) == 2
    redact(work, first, label=True)
    scrub(work)
    out = tmp_path / "out.pdf"
    out.write_bytes(write(work))
    proof = prove(str(out), pages, first, ocr=None)
    assert proof.ok, proof.summary()
    assert "Acme stays" in pymupdf.open(out)[0].get_text()


def test_shown_strings_are_split_without_moving_a_glyph_and_actual_text_goes() -> None:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Write abc@def.com for (x) notices", fontsize=11)
    xref = page.get_contents()[0]
    data = doc.xref_stream(xref)
    before = [(w[4], round(w[0], 2)) for w in page.get_text("words")]
    split = split_shown_strings(b"/Span <</ActualText (Jane Roe)>> BDC\n" + data + b"\nEMC\n", {"helv": 1})
    assert split is not None and b"] TJ" in split
    doc.update_stream(xref, split)
    assert page.get_text().startswith("Jane Roe")  # MuPDF reads ActualText in place of the glyphs
    stripped = strip_marked_text(split)
    assert stripped is not None and b"Jane" not in stripped
    doc.update_stream(xref, stripped)
    assert [(w[4], round(w[0], 2)) for w in page.get_text("words")] == before
    inline = b"BI /W 2 /H 1 /BPC 8 /CS /G ID \x00) EI Q (a) Tj"
    assert split_shown_strings(b"/F1 9 Tf " + inline, {"F1": 1}) == b"/F1 9 Tf " + inline[:-6] + b"[<61>] TJ"


def test_a_plan_file_round_trips_and_is_refused_for_another_document(tmp_path: Path) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    data = planted.path.read_bytes()
    doc = open_pdf(data)
    inventory = prepare(doc, look=True, original=data)
    found = find_candidates(read_pages(doc, None), Search(terms=("Harborview",)), hidden=inventory.hidden)
    assert any(c.hidden for c in found) and any(not c.hidden for c in found)
    keep = found[0].key
    plan = tmp_path / "plan.json"
    plan.write_text(plan_json("t", "abc", found, {c.key for c in found if c.key != keep}, label=False))
    candidates, accepted, label = read_plan(plan, "abc")
    assert candidates == found and keep not in accepted and len(accepted) == len(found) - 1 and label is False
    with pytest.raises(FolioError, match="another document"):
        read_plan(plan, "def")


# -- the command line ---------------------------------------------------------------------------------------
def test_folio_redact_writes_the_copy_and_says_what_was_checked(tmp_path: Path) -> None:
    planted = tricky_pdf(tmp_path / "tricky.pdf")
    code, out, err = run_folio("redact", str(planted.path), "--patterns", "email", "--list")
    assert code == 0 and "e-mail address" in out, err
    assert "the file\te-mail address (in an attached file)" in out and "p. 5\te-mail address (invisible text)" in out
    code, _out, err = run_folio("redact", str(planted.path), "--terms", "Harborview")
    assert code == 2 or (code == 1 and "--out" in err)
    target = tmp_path / "copy.pdf"
    code, out, err = run_folio("redact", str(planted.path), "--terms", "Harborview", "--patterns", "email",
                               "--out", str(target))  # fmt: skip
    assert code == 0, err
    assert f"wrote {target}" in out and "checked:" in out and "the original is unchanged" in out
    assert recoverable(target, [i for i in planted.items if i.accept], ocr=False) == {}
    code, _out, err = run_folio("redact", str(planted.path), "--patterns", "email", "--out", str(target))
    assert code == 1 and "already exists" in err and len(err.strip().splitlines()) == 1


def test_the_exporter_keeps_a_checked_file_only_when_check_and_record_both_succeed(
    tmp_path: Path, ctx: AppContext
) -> None:
    from app.export import Exporter

    target = tmp_path / "copy.pdf"
    audit = {"what": "redacted copy", "documents": ["a" * 64], "model_sha256": None}

    def refuse(_tmp: Path) -> dict[str, object]:
        raise RedactionFailed("page 1: e-mail address can still be found (pypdf text)")

    with pytest.raises(RedactionFailed):
        Exporter(ctx).checked(target, "pdf", b"%PDF-1.7", overwrite=False, audit=dict(audit), check=refuse)

    def fail_to_record(_sha: str) -> dict[str, object]:
        raise OSError("disk full")

    seen: list[bytes] = []

    def look(tmp: Path) -> dict[str, object]:
        seen.append(tmp.read_bytes())  # the check reads the file as it will be kept
        return {"proof": ["read"]}

    with pytest.raises(OSError):
        Exporter(ctx).checked(
            target, "pdf", b"%PDF-1.7", overwrite=False, audit=dict(audit), check=look, record=fail_to_record
        )
    assert seen == [b"%PDF-1.7"]
    assert not target.exists() and not list(tmp_path.glob(".copy.pdf.*")), "no file, no temp file left"
    assert ctx.audit.entries() == []
    done = Exporter(ctx).checked(target, "pdf", b"%PDF-1.7", overwrite=False, audit=dict(audit), check=look)
    assert target.read_bytes() == b"%PDF-1.7" and done.sha256 == sha(target)
    assert ctx.audit.entries()[-1].details["proof"] == ["read"] and ctx.audit.verify().ok

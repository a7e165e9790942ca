"""The redline's exports: a PDF whose text holds the changes, and a .docx whose tracked changes Word,
LibreOffice and Folio's own reader see, and which gives the new version when they are accepted."""

from __future__ import annotations

import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.compare.redline import Redline, compare
from app.compare.tracked import accepted, tracked_paragraphs
from app.compare.words import fold
from app.export import REDLINE_AUTHOR as AUTHOR
from app.export import redline_docx, redline_pdf
from tests.fixtures.office import soffice
from tests.unit.test_compare import CLAUSES, paged

# The fee changed, clause 3 deleted, a new clause inserted, the governing law moved to the front.
NEW = [
    CLAUSES[4].replace("New York", "Delaware"),
    CLAUSES[0],
    CLAUSES[1].replace("12,500", "15,000"),
    CLAUSES[3],
    "6. Audit. The Supplier shall keep accurate records and let the Client audit them once a year.",
]


ODF_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"


def redline() -> Redline:
    return compare(paged(CLAUSES), paged(NEW))


def new_words() -> list[str]:
    return fold(" ".join(NEW)).split()


def test_the_tracked_text_gives_the_new_version_when_every_change_is_accepted() -> None:
    lines = redline()
    assert sorted(c.kind for c in lines.changes) == ["changed", "changed", "clause deleted", "clause inserted", "moved"]
    paragraphs = tracked_paragraphs(lines)
    assert accepted(paragraphs) == new_words()
    kinds = [[p.kind for p in paragraph] for paragraph in paragraphs]
    assert ["deleted"] in kinds and ["inserted"] in kinds and ["same", "deleted", "inserted", "note"] in kinds


def test_the_pdf_opens_and_its_text_holds_every_change(tmp_path: Path) -> None:
    import pymupdf

    path = tmp_path / "redline.pdf"
    path.write_bytes(redline_pdf(redline()))
    with pymupdf.open(path) as pdf:
        text = " ".join(unicodedata.normalize("NFKC", " ".join(page.get_text() for page in pdf)).split())  # ligatures
    for words in ("12,500", "15,000", "New York.", "Delaware.", "Confidentiality", "6. Audit.", "moved", "[old p. 3]"):
        assert words in text, words
    assert "~~" not in text and "**" not in text  # typeset, not Markdown


def test_the_docx_holds_real_tracked_changes(tmp_path: Path) -> None:
    import docx
    from docx.oxml.ns import qn

    from ingest.load import load
    from ingest.word import accepted_text

    path = tmp_path / "redline.docx"
    path.write_bytes(redline_docx(redline()))
    body = docx.Document(str(path)).element.body
    inserted = [" ".join(t.text for t in e.iter(qn("w:t"))) for e in body.iter(qn("w:ins"))]
    deleted = [" ".join(t.text for t in e.iter(qn("w:delText"))) for e in body.iter(qn("w:del"))]
    assert {e.get(qn("w:author")) for e in [*body.iter(qn("w:ins")), *body.iter(qn("w:del"))]} == {AUTHOR}
    assert any("15,000" in t for t in inserted) and any("12,500" in t for t in deleted)
    assert any(t.startswith("6. Audit.") for t in inserted) and any(
        t.startswith("3. Confidentiality.") for t in deleted
    )
    # Folio's own Word reader sees them as revisions by their author; accepted, they give the new version.
    segments = load(path).segments
    marked = " ".join(s.text for s in segments if s.text and s.role != "comment")
    assert any(s.role == "comment" and "moved from old p. 3" in s.text for s in segments)
    assert f"[+ inserted by {AUTHOR}: 15,000 +]" in marked and f"[- deleted by {AUTHOR}: 12,500 -]" in marked
    text = fold(accepted_text(marked)).split()
    start = text.index("tracked") + 1
    assert text[start:] == new_words()


@pytest.mark.skipif(soffice() is None, reason="LibreOffice (soffice) is not installed")
def test_libreoffice_opens_the_docx_with_its_revisions_and_comment(tmp_path: Path) -> None:
    """LibreOffice converts the .docx to its own flat XML (.fodt): the revisions arrive as its tracked
    changes with their author, and the body, with deletions held apart as ODF holds them, is the new version."""
    from xml.etree import ElementTree

    path = tmp_path / "redline.docx"
    path.write_bytes(redline_docx(redline()))
    subprocess.run(
        [soffice() or "soffice", f"-env:UserInstallation=file://{tmp_path / 'lo-profile'}", "--headless",
         "--convert-to", "fodt", "--outdir", str(tmp_path), str(path)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    root = ElementTree.parse(tmp_path / "redline.fodt").getroot()
    text_ns, office_ns = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}", ODF_OFFICE
    regions = list(root.iter(f"{text_ns}changed-region"))
    kinds = sorted(child.tag.removeprefix(text_ns) for region in regions for child in region)
    assert kinds == ["deletion"] * 3 + ["insertion"] * 3
    assert {e.text for e in root.iter("{http://purl.org/dc/elements/1.1/}creator")} >= {AUTHOR}
    assert len(list(root.iter(f"{office_ns}annotation"))) == 1  # the moved clause's comment
    deletions = {r.get(f"{text_ns}id") for r in regions if r.find(f"{text_ns}deletion") is not None}

    def pieces(element: ElementTree.Element) -> Iterator[tuple[str, str]]:
        """The body in order: its text, and where each change starts and ends (LibreOffice keeps deleted
        words in place between those marks)."""
        if element.tag == f"{office_ns}annotation":
            return
        if element.tag in (f"{text_ns}change-start", f"{text_ns}change-end"):
            yield element.tag.removeprefix(text_ns), element.get(f"{text_ns}change-id") or ""
        yield "text", element.text or ""
        for child in element:
            if child.tag != f"{text_ns}tracked-changes":
                yield from pieces(child)
            yield "text", child.tail or ""

    shown: list[str] = []
    deleted: list[str] = []
    open_deletion = False
    for kind, value in pieces(next(root.iter(f"{office_ns}text"))):
        if kind != "text":
            open_deletion = kind == "change-start" and value in deletions
        else:
            (deleted if open_deletion else shown).append(value)
    assert "12,500" in " ".join(deleted) and "3. Confidentiality." in " ".join(deleted)
    body = fold(" ".join(shown)).split()
    assert body[body.index("tracked") + 1 :] == new_words()

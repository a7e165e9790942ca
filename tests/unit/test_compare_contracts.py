"""`folio compare` on a real contract (CUAD, ../shared/corpus) against a second version made here with
PyMuPDF: the governing law, an amount and a date changed, a clause deleted, the next one renumbered, a
clause moved. Every edit must be found with its pages in both versions, and nothing else reported;
the changes alone must turn the old text into the new text, read independently of Folio."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.compare.apply import apply_changes
from app.compare.redline import Redline, compare
from app.compare.versions import version_from_document
from tests.conftest import CORPUS, run_folio
from tests.fixtures.contract_versions import PdfBlock, layout_pdf, pdf_blocks, rewrite_blocks

GAINSCO = CORPUS / "contracts_pdf" / "GAINSCOINC_01_21_2010-EX-10.41-SPONSORSHIP AGREEMENT.PDF"
pytestmark = pytest.mark.skipif(not GAINSCO.exists(), reason=f"the CUAD corpus is not at {CORPUS}")

Row = tuple[str, tuple[str, ...], tuple[str, ...], str, str]  # kind, old words, new words, [old ...], [new ...]


class Edits:
    """The edits of the second version, as new text for some of the original's blocks."""

    def __init__(self, blocks: list[PdfBlock]) -> None:
        self.blocks = blocks
        at = self.at
        self.term, self.fee, self.law = at("1. Term."), at("3. Sponsorship Fee."), at("(c) This Agreement shall")
        self.relationship, self.notices_end = at("7. Relationship"), at("Either party may change")
        self.assignment, self.entire = at("11. Assignment."), at("12. Entire Agreement")
        self.remedies = at("10. Remedies.")
        self.new_text = {
            self.term: self._swap(self.term, "December 31, 2010.", "December 31, 2011."),  # a date
            self.fee: self._swap(self.fee, "$750,000.00", "$800,000.00"),  # an amount
            self.law: self._swap(self.law, "State of Texas", "State of Delaware"),  # governing law
            self.assignment: "",  # a clause deleted...
            self.entire: self._swap(self.entire, "12. Entire", "11. Entire"),  # ...and the next renumbered
            self.relationship: "",  # clause 7 moved to the end of clause 13, pages later
            self.notices_end: blocks[self.notices_end].text + "\n" + blocks[self.relationship].text,
        }

    def at(self, start: str) -> int:
        (index,) = [k for k, b in enumerate(self.blocks) if b.text.startswith(start)]
        return index

    def _swap(self, index: int, old: str, new: str) -> str:
        text = self.blocks[index].text
        assert text.count(old) == 1
        return text.replace(old, new)

    def paragraphs(self) -> list[str]:
        """The new version's text, block by block ('' blocks gone, the moved clause its own paragraph)."""
        out: list[str] = []
        for k, block in enumerate(self.blocks):
            text = self.new_text.get(k, block.text)
            out += [part for part in text.split("\n") if part]
        return out

    def old_words(self, index: int) -> tuple[str, ...]:
        return tuple(self.blocks[index].text.split())


def rows(redline: Redline) -> list[Row]:
    return [
        (c.kind, c.old_words, c.new_words, f"[old {c.old_at.cited()}]", f"[new {c.new_at.cited()}]")
        for c in redline.changes
    ]


def expected_rows(e: Edits, new_page: dict[int, str]) -> list[Row]:
    """new_page: for the edited blocks (and clause 10, before the deleted one), their page in the new version."""
    old_page = {k: f"[old p. {b.page}]" for k, b in enumerate(e.blocks)}
    return [
        ("changed", ("2010.",), ("2011.",), old_page[e.term], new_page[e.term]),
        ("changed", ("$750,000.00",), ("$800,000.00",), old_page[e.fee], new_page[e.fee]),
        ("clause deleted", e.old_words(e.assignment), (), old_page[e.assignment], new_page[e.remedies]),
        ("renumbered", ("12.",), ("11.",), old_page[e.entire], new_page[e.entire]),
        ("moved", (), (), old_page[e.relationship], new_page[e.relationship]),
        ("changed", ("Texas,",), ("Delaware,",), old_page[e.law], new_page[e.law]),
    ]


def redline_of(old: Path, new: Path) -> Redline:
    from ingest.load import load

    return compare(version_from_document(load(old)), version_from_document(load(new)))


def words(paragraphs: list[str]) -> list[str]:
    return " ".join(paragraphs).split()


def test_edits_in_place_are_found_with_their_pages_and_nothing_else(tmp_path: Path) -> None:
    """The original PDF with edited blocks redacted and rewritten in their own box."""
    edits = Edits(pdf_blocks(GAINSCO))
    new_pdf = tmp_path / "sponsorship-v2.pdf"
    rewrite_blocks(GAINSCO, new_pdf, edits.new_text)
    redline = redline_of(GAINSCO, new_pdf)
    same_place = {k: f"[new p. {b.page}]" for k, b in enumerate(edits.blocks)}
    same_place[edits.relationship] = same_place[edits.notices_end]  # moved onto clause 13's page
    assert rows(redline) == expected_rows(edits, same_place)
    assert [w for c in redline.old_clauses for w in c] == words([b.text for b in edits.blocks])
    assert [w for c in apply_changes(redline.old_clauses, redline.changes) for w in c] == words(edits.paragraphs())


def test_a_relaid_version_with_other_headers_and_hyphenation_gives_the_same_redline(tmp_path: Path) -> None:
    """The new version laid out afresh (Letter instead of A4, a running header, 'Page N of M', words broken
    at line ends), so every page and line break differs: only the edits are changes."""
    edits = Edits(pdf_blocks(GAINSCO))
    paragraphs = edits.paragraphs()
    new_pdf = tmp_path / "sponsorship-v2-relaid.pdf"
    layout = layout_pdf(paragraphs, new_pdf, header="Sponsorship Agreement - draft of 2 April 2010 - confidential")
    assert layout.page_count >= 3  # enough pages for the header to be a running one
    redline = redline_of(GAINSCO, new_pdf)

    def page_of(index: int, word: str, last: bool = False) -> str:
        text = edits.new_text.get(index, edits.blocks[index].text).split("\n")[-1]
        p = paragraphs.index(text)
        k = len(text.split()) - 1 if last else text.split().index(word)
        return f"[new p. {layout.page_of(p, k)}]"

    moved = paragraphs.index(edits.blocks[edits.relationship].text)
    first, last = layout.page_of(moved, 0), layout.page_of(moved, -1)
    new_page = {
        edits.term: page_of(edits.term, "2011."),
        edits.fee: page_of(edits.fee, "$800,000.00"),
        edits.law: page_of(edits.law, "Delaware,"),
        edits.entire: page_of(edits.entire, "11."),
        edits.remedies: page_of(edits.remedies, "", last=True),
        edits.relationship: f"[new p. {first}]" if first == last else f"[new pp. {first}-{last}]",
    }
    assert rows(redline) == expected_rows(edits, new_page)
    assert [w for c in apply_changes(redline.old_clauses, redline.changes) for w in c] == words(paragraphs)
    import re

    import pymupdf

    with pymupdf.open(new_pdf) as doc:
        broken = re.findall(r"[a-z]-\n[a-z]", "".join(page.get_text() for page in doc))
    assert len(broken) >= 10  # words really were broken at line ends in the new version


def test_folio_compare_prints_and_writes_the_redline(tmp_path: Path) -> None:
    edits = Edits(pdf_blocks(GAINSCO))
    new_pdf = tmp_path / "sponsorship-v2.pdf"
    rewrite_blocks(GAINSCO, new_pdf, edits.new_text)
    code, out, err = run_folio("add", str(GAINSCO), str(new_pdf))
    assert code == 0, err
    code, out, err = run_folio("compare", "1", str(new_pdf))  # an id and a path, as other commands take them
    assert code == 0, err
    assert "6 changes: 3 changed, 1 renumbered, 1 moved, 1 clause deleted." in out
    assert "- **changed** [old p. 6] [new p. 6]: …internal laws of the State of ~~Texas,~~ **Delaware,**" in out
    assert "- **moved** [old p. 3] [new p. 5]" in out
    target = tmp_path / "redline.md"
    code, written, err = run_folio("compare", "1", "2", "--out", str(target))
    assert code == 0, err
    assert written.startswith(f"wrote {target}: 6 changes")
    assert target.read_text(encoding="utf-8") == out
    code, _, err = run_folio("compare", "1", "2", "--out", str(target))  # no silent replace
    assert code == 1 and err.count("\n") == 1 and "already exists" in err
    assert run_folio("compare", "1", "2", "--out", str(target), "--force")[0] == 0
    for name in ("redline.pdf", "redline.docx"):  # the other formats, by their extension
        assert run_folio("compare", "1", "2", "--out", str(tmp_path / name))[0] == 0
    import docx
    import pymupdf

    with pymupdf.open(tmp_path / "redline.pdf") as pdf:
        assert "Delaware," in " ".join(" ".join(page.get_text() for page in pdf).split())
    body = docx.Document(str(tmp_path / "redline.docx")).element.body
    assert "Delaware," in " ".join(t.text or "" for t in body.iter(docx.oxml.ns.qn("w:t")))
    code, _, err = run_folio("compare", "1", "2", "--out", str(tmp_path / "redline.txt"))
    assert code == 1 and "use one of .md, .pdf, .docx" in err


def test_a_file_outside_the_library_is_read_but_not_added(tmp_path: Path) -> None:
    code, out, err = run_folio("compare", str(GAINSCO), str(GAINSCO))
    assert code == 0, err
    assert "No changes" in out
    assert "The library is empty" in run_folio("list")[1]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["7", "8"], "no document '7' in the library"),
        (["{missing}", "{gainsco}"], "no document"),
        (["{notes}", "{gainsco}"], "notes.bin"),
        (["{gainsco}", "{gainsco}", "--out", "{out_txt}"], "cannot export to redline.txt"),
    ],
)
def test_bad_input_is_one_plain_line_and_a_non_zero_exit(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "notes.bin").write_bytes(b"\x00\x01\x02 not a document" * 10)
    names = {
        "missing": str(tmp_path / "missing.pdf"),
        "gainsco": str(GAINSCO),
        "notes": str(tmp_path / "notes.bin"),
        "out_txt": str(tmp_path / "redline.txt"),
    }
    code, out, err = run_folio("compare", *[a.format(**names) for a in args])
    assert code != 0 and out == ""
    assert err.startswith("folio: error: ") and err.count("\n") == 1 and says in err
    assert not (tmp_path / "redline.txt").exists()

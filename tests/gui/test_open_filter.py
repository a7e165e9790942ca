"""File > Open offers every kind of file Folio reads: a file of each kind, made by code and told by
its content (ingest/sniff.py), passes the dialog's default filter, whatever the case of its name."""

from __future__ import annotations

import re
import shutil
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from tests.gui import library_rows as rows

pytestmark = pytest.mark.gui

# The families ingest.load reads (`_read_into` in ingest/load.py); the others are refused in one line.
READ_FAMILIES = {"pdf", "image", "video", "word", "text", "email", "msg"}
DATA = Path(__file__).resolve().parents[1] / "data"
# The first bytes that make each container a video to ingest.sniff (an ftyp box, a RIFF AVI, EBML).
VIDEO_HEADS = {
    "clip.mp4": b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2",
    "clip.mov": b"\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  ",
    "clip.avi": b"RIFF\x24\x00\x00\x00AVI LIST",
    "clip.mkv": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska",
    "clip.webm": b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm",
}


def _one_of_each(folder: Path) -> list[Path]:
    import cv2
    import numpy as np

    from tests.fixtures.office import email_with_attachments, python_docx_memo
    from tests.fixtures.pdfs import make_contract_pdf

    files = [
        make_contract_pdf(folder / "contract.pdf"),
        python_docx_memo(folder / "memo.docx"),
        email_with_attachments(folder / "mail.eml", []),
        Path(shutil.copy(DATA / "strangeDate.msg", folder / "outlook.msg")),
    ]
    notes = folder / "notes.txt"
    notes.write_text("The supplier delivers the goods within thirty days.\n", encoding="utf-8")
    memo = folder / "memo.md"
    memo.write_text("# Supply memo\n\nThe buyer pays within thirty days of delivery.\n", encoding="utf-8")
    files += [notes, memo]
    page = np.full((64, 48, 3), 255, np.uint8)
    for name in ("scan.png", "scan.jpg", "scan.jpeg", "scan.tif", "scan.tiff", "scan.webp", "scan.bmp"):
        assert cv2.imwrite(str(folder / name), page)
        files.append(folder / name)
    for name, head in VIDEO_HEADS.items():
        (folder / name).write_bytes(head + bytes(64))
        files.append(folder / name)
    return files


def _default_patterns(file_filter: str) -> list[str]:
    """The patterns of a Qt filter string's first entry ('Documents (*.pdf *.docx ...)'), the one shown."""
    first = file_filter.split(";;")[0]
    match = re.search(r"\(([^)]*)\)", first)
    assert match is not None, file_filter
    return match.group(1).split()


def test_file_open_offers_every_kind_of_file_folio_reads(window, qtbot, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFileDialog

    from ingest.sniff import sniff

    files = _one_of_each(tmp_path)
    assert {sniff(f).family for f in files} == READ_FAMILIES  # each kind Folio reads, told by content

    asked: list[str] = []
    text_files = [str(tmp_path / "notes.txt"), str(tmp_path / "memo.md")]

    def pick(_parent, _caption, _folder, file_filter, *_args, **_kwargs):  # type: ignore[no-untyped-def]
        asked.append(file_filter)
        return text_files, file_filter.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", pick)
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    next(a for a in file_menu.actions() if a.text() == "&Open…").trigger()

    assert len(asked) == 1
    patterns = _default_patterns(asked[0])
    # Case-sensitive, as GTK's dialog matches: a file named in capitals (from Windows, a scanner) too.
    left_out = [
        name for f in files for name in (f.name, f.name.upper()) if not any(fnmatchcase(name, p) for p in patterns)
    ]
    assert left_out == []
    # What File > Open picked is added: the text and Markdown files the old filter hid.
    qtbot.waitUntil(lambda: rows.count(window) == 2, timeout=30000)
    assert not window.warnings

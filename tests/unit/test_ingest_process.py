"""Reading files in a child process (the window's ingest worker): the same Document as reading in
process, rejections keep their type and line, a crashed or stopped child costs only its file."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app.errors import Cancelled
from app.processes.ingest_reader import IngestProcess
from ingest.errors import CorruptFile, UnsupportedFile
from ingest.load import load as ingest_load


def _kill_child_when_it_starts(reader: IngestProcess, method: str) -> threading.Thread:
    """The child imports the readers for about a second before it reads: killed then, it dies mid-file."""

    def run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pool = reader._pool
            if pool is not None and getattr(pool, "_processes", None):
                if method == "stop":
                    reader.stop()
                else:
                    for process in list(pool._processes.values()):
                        process.kill()
                return
            time.sleep(0.005)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_child_reads_the_same_document_and_rejects_in_one_line(contract_pdf: Path, tmp_path: Path) -> None:
    reader = IngestProcess()
    try:
        assert reader.load(contract_pdf) == ingest_load(contract_pdf)
        bad = tmp_path / "notes.xyz"
        bad.write_bytes(b"\x00\x01 not a document")
        with pytest.raises(UnsupportedFile) as rejected:
            reader.load(bad)
        with pytest.raises(UnsupportedFile) as in_process:
            ingest_load(bad)
        assert str(rejected.value) == str(in_process.value) and rejected.value.path == in_process.value.path
        assert reader.load(contract_pdf).sha256 == ingest_load(contract_pdf).sha256  # the same child goes on
    finally:
        reader.close()


@pytest.mark.parametrize("method", ["crash", "stop"])
def test_a_dead_child_costs_only_its_file(contract_pdf: Path, method: str) -> None:
    reader = IngestProcess()
    try:
        killer = _kill_child_when_it_starts(reader, method)
        expected = Cancelled if method == "stop" else CorruptFile
        with pytest.raises(expected) as error:
            reader.load(contract_pdf)
        killer.join()
        if method == "crash":
            assert str(error.value) == f"{contract_pdf.name}: the file reader crashed on this file"
        assert reader.load(contract_pdf).sha256 == ingest_load(contract_pdf).sha256  # a new child reads the next
    finally:
        reader.close()


def test_pages_read_in_the_child_are_reported_here_as_they_finish(tmp_path: Path) -> None:
    """OCR in the child takes seconds a page: each page's progress reaches the caller while it reads,
    and the Document that comes back holds the OCR words with their boxes."""
    from ingest.progress import ReadProgress
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    pdf = make_scanned_pdf(tmp_path / "scans.pdf", [make_scan(render_text_page(), degrees=1.0)] * 3)
    heard: list[tuple[ReadProgress, str]] = []
    reader = IngestProcess()
    try:
        doc = reader.load(pdf, progress=lambda p: heard.append((p, threading.current_thread().name)))
    finally:
        reader.close()
    # Pages are read side by side (one per core): two that finish together may arrive as one step.
    steps = [(p.done, p.total) for p, _thread in heard]
    assert steps[-1] == (3, 3) and len(steps) >= 2 and all(total == 3 for _done, total in steps)
    assert [done for done, _total in steps] == sorted(set(done for done, _total in steps))  # only forward
    assert {thread for _p, thread in heard} == {threading.current_thread().name}  # on the calling thread
    assert all(p.ocr for p in doc.pages) and any(s.words for s in doc.segments)

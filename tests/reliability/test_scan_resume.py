"""Resumable scanned reading: `folio add` of a scanned PDF killed with SIGKILL in the middle goes on,
the next time, from the first page it had not finished - no finished page is read again - and stores
the whole document. The mechanism is the one a 500-page production uses (every finished page kept
on disk, ingest/page_memo.py); the test uses 8 pages so that it runs in a minute or two. Blank pages
(a production's separator sheets) are stored as pages but not sent to OCR."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_folio

PAGES = 8
KILL_AFTER = 3  # pages finished when the add is killed


def _kept(home: Path) -> list[Path]:
    return sorted((home / "cache" / "pages").glob("*/p*.json"))


def test_a_killed_scan_resumes_at_the_next_unread_page(tmp_path: Path, folio_home: Path) -> None:
    import numpy as np

    from ingest.page_memo import PageMemo
    from tests.fixtures.media import make_scan, make_scanned_pdf, render_text_page

    page = render_text_page()
    blank = np.full_like(page, 255)
    scans = [make_scan(page, degrees=0.5 * (n % 3)) for n in range(PAGES - 1)] + [make_scan(blank)]
    pdf = make_scanned_pdf(tmp_path / "production.pdf", scans)
    env = {**os.environ, "FOLIO_HOME": str(folio_home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "add", str(pdf)], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 600
    while len(_kept(folio_home)) < KILL_AFTER:
        assert proc.poll() is None, (
            f"the add ended before it could be killed: {proc.stderr.read() if proc.stderr else ''}"
        )
        assert time.monotonic() < deadline, "no page was finished in 10 minutes"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    kept = _kept(folio_home)
    if len(kept) >= PAGES:
        pytest.skip("every page was finished before the kill landed (a very fast machine): nothing to resume")
    con = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 0  # nothing half-added
    con.close()
    texts = {}
    for path in kept:
        stored = PageMemo(path.parent).get(int(path.stem[1:]))
        assert stored is not None, f"{path.name} was torn by the kill and would not be trusted"
        texts[stored[0].number] = [s.text for s in stored[1] if s.kind == "text"]

    code, out, err = run_folio("add", str(pdf), env=env, timeout=900)
    assert code == 0, err
    # Each page finished before the kill was taken as it was, not read again.
    assert f"resumed: {len(kept)} scanned page(s) kept from an interrupted reading" in err
    assert out.startswith("added: #1") and f"{PAGES} pages" in out
    con = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    try:
        for number, page_texts in texts.items():
            stored = [
                r[0]
                for r in con.execute(
                    "SELECT text FROM segments WHERE page = ? AND kind = 'text' ORDER BY seq", [number]
                )
            ]
            assert stored == page_texts
        ocr_pages = {r[0] for r in con.execute("SELECT page FROM segments WHERE role = 'ocr'")}
        assert set(range(1, PAGES)) <= ocr_pages and PAGES not in ocr_pages  # the blank last page: no text
        assert con.execute("SELECT count(*) FROM pages WHERE scanned = 1").fetchone()[0] == PAGES
    finally:
        con.close()
    assert not _kept(folio_home)  # forgotten once the document is stored

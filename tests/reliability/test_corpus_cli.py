"""Every real-world file in ../shared/corpus (odd PDFs, scans, clips and text files written by other
projects) through ONE `folio add` run: each is added or rejected with a one-line reason, nothing
crashes, and the library afterwards holds exactly the added documents, each complete. (The run is
the `corpus_add` fixture of tests/conftest.py, shared with tests/unit/test_corpus.py.)

(tests/unit/test_corpus.py checks each file's stored document from the same run, and tries each
rejected file again in-process to check that a rejection leaves the database untouched: no row
changed, no page image written.)
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any

import pytest

from tests.conftest import CORPUS, CorpusAdd

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"real-world corpus not found at {CORPUS}")


def test_every_corpus_file_through_one_folio_add(corpus_add: CorpusAdd, figures: dict[str, Any]) -> None:
    files, code, out, err = corpus_add.files, corpus_add.code, corpus_add.out, corpus_add.err
    added = [line for line in out.splitlines() if line.startswith(("added: ", "already in library: "))]
    errors = [line for line in err.splitlines() if line.startswith("folio: error: ")]
    figures.update(
        files=len(files), added=len(added), rejected=len(errors), crashes=len(files) - len(added) - len(errors)
    )
    assert "Traceback" not in err and code in (0, 1), err[-2000:]
    assert len(added) + len(errors) == len(files), "a file got no answer: the run died on it"
    assert not [line for line in err.splitlines() if line.strip() and not line.startswith("folio: error: ")]
    rejected_names = {line.removeprefix("folio: error: ").split(": ", 1)[0] for line in errors}
    rejected = [p for p in files if p.name in rejected_names]
    assert len(rejected) == len(errors) and all(len(line) < 300 for line in errors)
    db = sqlite3.connect(corpus_add.home / "data" / "folio.sqlite3")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {row[0] for row in db.execute("SELECT sha256 FROM documents")}
        assert len(stored) == len({hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p not in rejected})
        assert not stored & {hashlib.sha256(p.read_bytes()).hexdigest() for p in rejected}
        half = db.execute(
            "SELECT d.id FROM documents d "
            "WHERE d.page_count != (SELECT count(*) FROM pages p WHERE p.document_id = d.id) "
            "OR NOT EXISTS (SELECT 1 FROM segments s WHERE s.document_id = d.id)"
        ).fetchall()
        assert half == []
    finally:
        db.close()

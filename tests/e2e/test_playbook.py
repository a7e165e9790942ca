"""`folio review` end to end with the REAL starter model: every rule of the built-in playbook gets a
verdict, stored and audited in the extraction run's matter; the .docx export carries real tracked changes
by "Folio playbook" with one comment per change, and only the accepted findings once any is reviewed.
Verdict quality is not asserted: the demo model is tiny (benchmarks measure it with a real model)."""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest

from tests.conftest import run_folio
from tests.fixtures.pdfs import make_contract_pdf

pytestmark = pytest.mark.e2e

VERDICTS = {"met", "fallback", "not_met", "missing", "needs_person"}


def _changes(path: Path) -> tuple[list[str], int, int]:
    """(authors of every w:ins and w:del, comments in comments.xml, comment ranges in the body)."""
    with zipfile.ZipFile(path) as z:
        body = z.read("word/document.xml").decode()
        names = z.namelist()
        comments = z.read("word/comments.xml").decode() if "word/comments.xml" in names else ""
    authors = re.findall(r'<w:(?:ins|del) [^>]*w:author="([^"]+)"', body)
    return authors, comments.count("<w:comment "), len(re.findall(r"<w:commentRangeStart ", body))


def test_review_gives_every_rule_a_verdict_stored_audited_and_exported(starter_home: Path, tmp_path: Path) -> None:
    (starter_home / "config" / "settings.toml").write_text(
        "schema_version = 1\nmax_answer_tokens = 48\nread_ahead = false\nthreads = 1\n"
        "[extraction]\nvalue_chars = 24\nquote_chars = 80\n"
    )
    pdf = make_contract_pdf(tmp_path / "contract.pdf")
    out = tmp_path / "review.docx"
    code, stdout, err = run_folio(
        "review", str(pdf), "--playbook", "commercial_contract", "--json", "--out", str(out), timeout=1200
    )
    assert code == 0, err
    review = json.loads(stdout)
    findings = review["findings"]
    assert [f["rule"] for f in findings] == [
        "governing_law", "cap_on_liability", "uncapped_liability", "anti_assignment", "audit_rights",
        "renewal_term", "termination_for_convenience", "non_compete", "exclusivity", "insurance",
    ]  # fmt: skip
    for f in findings:
        assert f["verdict"] in VERDICTS and f["reason"] and "\n" not in f["reason"]
        if f["quote"]:  # a clause quoted is cited and checked by the chat's grounding
            assert f["grounding"] in ("quoted", "supported", "wrong_page", "added", "partly", "unsupported")
        if f["decided_by"] == "logits":
            assert 0 < f["score"] < 1 and 0.5 <= f["confidence"] <= 1

    db = sqlite3.connect(starter_home / "data" / "folio.sqlite3")
    stored = db.execute("SELECT id, run_id, matter_id, playbook_key FROM playbook_reviews").fetchall()
    assert len(stored) == 1 and stored[0][3] == "commercial_contract"
    review_id, run_id, matter_id, _key = stored[0]
    assert review_id == review["review_id"] and run_id == review["extraction_run"]
    assert matter_id == db.execute("SELECT matter_id FROM extraction_runs WHERE id = ?", [run_id]).fetchone()[0]
    verdicts = dict(db.execute("SELECT rule_key, verdict FROM playbook_findings WHERE review_id = ?", [review_id]))
    assert verdicts == {f["rule"]: f["verdict"] for f in findings}
    actions = [r[0] for r in db.execute("SELECT action FROM audit_log ORDER BY id")]
    assert actions.count("extraction") == 1 and actions.count("playbook") == 1 and actions[-1] == "export"
    details = json.loads(db.execute("SELECT details FROM audit_log WHERE action = 'playbook'").fetchone()[0])
    assert details["review_id"] == review_id and details["verdicts"] == verdicts
    db.close()

    # Nobody has reviewed a finding yet: every one that falls short is proposed, each with its comment.
    short = [f for f in findings if f["verdict"] in ("not_met", "missing")]
    assert short, "the starter model met every rule of the playbook on this contract"
    authors, comments, ranges = _changes(out)
    assert authors and set(authors) == {"Folio playbook"}
    assert comments == ranges == len(short)

    # Once a finding is accepted, the export carries the accepted ones only.
    code, said, err = run_folio("finding", str(review_id), short[0]["rule"], "accept", "--note", "agreed")
    assert code == 0 and "accepted" in said, err
    again = tmp_path / "accepted.docx"
    code, _out, err = run_folio("export", "review", str(review_id), "--out", str(again))
    assert code == 0, err
    authors, comments, ranges = _changes(again)
    assert set(authors) == {"Folio playbook"} and comments == ranges == 1
    report = tmp_path / "review.md"
    assert run_folio("export", "review", str(review_id), "--out", str(report))[0] == 0
    assert "Proposed edits: 1, for the accepted findings" in report.read_text()
    code, said, _err = run_folio("audit", "verify")
    assert code == 0 and "audit log OK" in said

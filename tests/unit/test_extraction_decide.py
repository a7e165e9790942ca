"""Scored decisions (app/extraction/decide.py): P(yes) against a per-model line, the decision's
confidence, calibration files (the user's before the shipped ones, a damaged one refused in one
line), and the form that can only give a value once a field was decided there."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.errors import FolioError
from app.extraction.decide import (
    Calibration,
    FieldCalibration,
    calibration_path,
    confidence_word,
    decide,
    load_calibration,
)
from app.extraction.schema import NOT_STATED, group_schema, schema_errors

SHA = "ab" * 32


def test_the_score_is_p_yes_between_the_two_answers() -> None:
    # log P(Yes) = -0.4, log P(No) = -1.6: P(yes | yes or no) = 1 / (1 + e^-1.2).
    d = decide((-0.4, -1.6), FieldCalibration(), "logits")
    assert d.score == pytest.approx(1 / (1 + math.exp(-1.2)), abs=1e-6)
    assert d.there and d.threshold == 0.5 and d.decided_by == "logits"
    # Uncalibrated, the score is the probability: the decision is right with that probability.
    assert d.confidence == pytest.approx(d.score, abs=1e-6)
    absent = decide((-2.0, -0.2), FieldCalibration(), "logprobs")
    assert not absent.there and absent.confidence == pytest.approx(1 - absent.score, abs=1e-6)  # type: ignore[operator]


def test_a_calibrated_line_and_probability() -> None:
    # This model leans yes: its line sits at P(yes) 0.8, and its scores map to lower probabilities.
    line = FieldCalibration(threshold=0.8, slope=1.0, offset=-1.5)
    leaning = decide((-0.3, -1.5), line, "logits")  # P(yes) 0.77: under the line
    assert not leaning.there and leaning.score is not None and leaning.score < 0.8
    assert leaning.confidence == pytest.approx(1 - 1 / (1 + math.exp(-(1.2 - 1.5))), abs=1e-6)
    sure = decide((-0.01, -6.0), line, "logits")
    assert sure.there and sure.confidence is not None and sure.confidence > 0.98


@pytest.mark.parametrize(
    ("confidence", "word"), [(None, ""), (0.99, "high"), (0.85, "high"), (0.84, "check"), (0.5, "check"), (0.2, "low")]
)
def test_confidence_in_a_word(confidence: float | None, word: str) -> None:
    assert confidence_word(confidence) == word


def test_calibration_files_the_users_first(tmp_path: Path) -> None:
    user, shipped = tmp_path / "user", tmp_path / "shipped"
    for folder in (user, shipped):
        folder.mkdir()
    assert load_calibration([user, shipped], SHA).fields == {}  # no file: the model's own yes/no
    assert load_calibration([user, shipped], SHA).of("anything") == FieldCalibration()
    made = Calibration(SHA, "Test model", "contracts_pdf + contracts_tune", {"audit_rights": FieldCalibration(0.7)})
    calibration_path(shipped, SHA).write_text(made.to_json(), encoding="utf-8")
    assert load_calibration([user, shipped], SHA) == made
    own = Calibration(SHA, "Test model", "my firm's contracts", {"audit_rights": FieldCalibration(0.6, 2.0, -0.5)})
    calibration_path(user, SHA).write_text(own.to_json(), encoding="utf-8")
    assert load_calibration([user, shipped], SHA).of("audit_rights") == FieldCalibration(0.6, 2.0, -0.5)
    assert load_calibration([user, shipped], None) == Calibration()  # a model server: nothing to look up


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        '{"fields": {}}',
        f'{{"model_sha256": "{SHA}", "fields": {{"x": {{"threshold": 3}}}}}}',
        f'{{"model_sha256": "{SHA}", "fields": {{"x": {{"threshold": "NaN"}}}}}}',
    ],
    ids=["not json", "no model", "threshold over 1", "not a number"],
)
def test_a_damaged_calibration_is_one_line(tmp_path: Path, text: str) -> None:
    calibration_path(tmp_path, SHA).write_text(text, encoding="utf-8")
    with pytest.raises(FolioError, match="not a calibration file Folio can read") as info:
        load_calibration([tmp_path], SHA)
    assert "\n" not in str(info.value)


def test_a_calibration_for_another_model_is_refused(tmp_path: Path) -> None:
    other = Calibration(SHA[:16] + "cd" * 24, "Other", "x", {})
    calibration_path(tmp_path, SHA).write_text(other.to_json(), encoding="utf-8")
    with pytest.raises(FolioError, match="made for another model"):
        load_calibration([tmp_path], SHA)


def test_a_decided_form_can_only_give_the_field() -> None:
    specs = [("law", False, 3), ("fee", False, 0), ("audit", True, 0), ("cap", True, 2)]
    free, decided = group_schema(specs, 40, 80), group_schema(specs, 40, 80, decided=True)
    nothing = {"law": {"stated": "no", "answer": NOT_STATED}, "fee": {"evidence": "", "answer": NOT_STATED},
               "audit": {"clause": "", "present": "no"}, "cap": {"passage": 0, "present": "no"}}  # fmt: skip
    assert schema_errors(free, nothing) == []
    assert all(schema_errors(decided, {**nothing, key: value}) for key, value in nothing.items())
    given = {"law": {"stated": "yes", "passage": 2, "answer": "Delaware"},
             "fee": {"evidence": "a fee of $12,500 a month", "page": "2", "answer": "$12,500"},
             "audit": {"clause": "Client may audit the books.", "page": "3", "present": "yes"},
             "cap": {"passage": 1, "present": "yes"}}  # fmt: skip
    assert schema_errors(decided, given) == [] and schema_errors(free, given) == []
    assert schema_errors(decided, {**given, "audit": {**given["audit"], "present": "no"}})

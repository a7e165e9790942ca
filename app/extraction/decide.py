"""Decisions the model scores: is a clause of this kind in the document, does it state this value?

Issue 29. A decision is read from the model's own probabilities, not from a generated answer and
never from a word list: after the chat's instructions and the whole document (the prefix the engine
already holds), the field's question asked for a plain Yes or No, and one forward pass gives
P("Yes") and P("No") for the first answer token (`GenerateRequest.choices`). The score is
P(yes) / (P(yes) + P(no)). Measured with the 1.5B on CUAD, a generated "present" said yes to
almost every clause a word search offered a passage for; scored, the same model's yes/no
probability ranks the contracts that have a clause above those that do not, and where the line
lies is a setting chosen on tuning data (benchmarks/bench_extraction_quality.py --calibrate),
per model: a 1.5B and a 9B do not lean the same way.

A calibration (assets/calibration/<model sha256 prefix>.json, or one of the user's own in the
config folder's calibration/) holds, per field, the threshold and a logistic map from the score's
log-odds to the probability that the field is there, fitted on the tuning contracts. A model
without one is judged at P(yes) >= 0.5 (its own argmax between the two answers) and its score is
taken as the probability. The cell keeps the score, the threshold, how the score was read and the
decision's confidence: the probability that the decision is right.

A model server that returns no log-probabilities cannot score: the caller falls back to the
generated decision and the cell says so ('generated').
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import FolioError

YES = ("Yes", "yes")
NO = ("No", "no")
YES_NO = (YES, NO)
SCORED_BY = ("logits", "logprobs")  # how a scored decision was read (inference.events.Scored.source)
GENERATED = "generated"  # the model's generated answer decided (no probabilities were available)
# Confidence words: the probability that a decision is right, for a reviewer sorting what to check.
HIGH = 0.85
CHECK = 0.5


@dataclass(frozen=True)
class FieldCalibration:
    """Where the line lies for one field, and how a score maps to the probability that it is there."""

    threshold: float = 0.5  # P(yes) at or above which the field counts as there
    slope: float = 1.0  # P(there) = sigmoid(slope * log-odds(score) + offset)
    offset: float = 0.0

    def probability(self, log_odds: float) -> float:
        return _sigmoid(self.slope * log_odds + self.offset)


@dataclass(frozen=True)
class Calibration:
    """Per-field thresholds for one model, chosen on tuning data; the default for a model without one."""

    model_sha256: str = ""
    label: str = ""
    chosen_on: str = ""  # where the thresholds were chosen (the tuning contracts), for the record
    fields: dict[str, FieldCalibration] = field(default_factory=dict)
    default: FieldCalibration = FieldCalibration()

    def of(self, key: str) -> FieldCalibration:
        return self.fields.get(key, self.default)

    @property
    def source(self) -> str:
        return f"chosen on {self.chosen_on}" if self.fields else "the model's own yes/no (no calibration)"

    def to_json(self) -> str:
        out = {
            "format": 1,
            "model_sha256": self.model_sha256,
            "label": self.label,
            "chosen_on": self.chosen_on,
            "default": vars(self.default),
            "fields": {k: vars(v) for k, v in sorted(self.fields.items())},
        }
        return json.dumps(out, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str) -> Calibration:
        try:
            raw = json.loads(text)
            fields = {str(k): _field(v) for k, v in raw.get("fields", {}).items()}
            default = _field(raw.get("default", {}))
            sha, label, chosen_on = str(raw["model_sha256"]), str(raw.get("label", "")), str(raw.get("chosen_on", ""))
            return cls(sha, label, chosen_on, fields, default)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise FolioError(f"{where}: not a calibration file Folio can read ({exc})") from exc


def _field(raw: Any) -> FieldCalibration:
    calibration = FieldCalibration(
        float(raw.get("threshold", 0.5)), float(raw.get("slope", 1.0)), float(raw.get("offset", 0.0))
    )
    if not 0.0 <= calibration.threshold <= 1.0 or not all(map(math.isfinite, vars(calibration).values())):
        raise ValueError(f"a threshold must be a probability, got {calibration.threshold}")
    return calibration


def calibration_path(folder: Path, model_sha256: str) -> Path:
    return folder / f"{model_sha256[:16]}.json"


def load_calibration(folders: Sequence[Path], model_sha256: str | None) -> Calibration:
    """The calibration of this model from the first folder that has one (the user's own first), else
    the default. A damaged file is an error in one line, not a silent default."""
    if model_sha256 is None:
        return Calibration()
    for folder in folders:
        path = calibration_path(folder, model_sha256)
        if path.is_file():
            found = Calibration.from_json(path.read_text(encoding="utf-8"), str(path))
            if found.model_sha256 != model_sha256:
                raise FolioError(f"{path}: made for another model ({found.model_sha256[:16]})")
            return found
    return Calibration(model_sha256)


@dataclass(frozen=True)
class Decision:
    """One field's decision: there (a clause present, a value stated) or not, and how sure."""

    there: bool
    score: float | None = None  # P(yes) / (P(yes) + P(no)); None for a generated decision
    threshold: float | None = None
    decided_by: str = GENERATED
    confidence: float | None = None  # the probability that this decision is right


def decide(logprobs: Sequence[float], calibration: FieldCalibration, source: str) -> Decision:
    """The decision from the scored answers (Yes, No): log P(yes) and log P(no)."""
    log_yes, log_no = logprobs
    log_odds = log_yes - log_no
    score = _sigmoid(log_odds)
    there = score >= calibration.threshold
    likely = calibration.probability(log_odds)
    return Decision(there, round(score, 6), calibration.threshold, source, round(likely if there else 1 - likely, 6))


def confidence_word(confidence: float | None) -> str:
    """high (the decision is right with probability >= 85%), check (50-85%), low (< 50%), '' unscored."""
    if confidence is None:
        return ""
    return "high" if confidence >= HIGH else "check" if confidence >= CHECK else "low"


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)

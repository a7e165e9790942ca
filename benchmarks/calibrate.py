"""Choosing where the line lies for scored decisions, on tuning contracts only (issue 29).

Each cell of a scoring run holds the model's P(yes) for its question (app/extraction/decide.py). Per
kind of field (yes/no clauses; short answers' "is it stated"), a logistic map from the score's
log-odds to the probability that the field is there is fitted: one slope and intercept shared by
the fields of that kind, plus an offset per field pulled towards 0 (an L2 penalty), because a field
with two contracts that have it cannot carry a line of its own. The cut on that probability is
chosen by leave-one-contract-out cross-validation: each contract's probabilities come from a fit on
the other contracts, and the cut is the highest one whose out-of-fold recall reaches the target
(yes/no clauses; CUAD's DeBERTa figure is read at 80% recall, so the target leaves a margin), or
the one with the most right decisions (short answers). The final map is fitted on all the tuning
contracts; per field it becomes a threshold on P(yes), which is what the app compares.

Nothing here ever sees the check set: benchmarks/bench_extraction_quality.py refuses --calibrate
with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

YES_NO_RECALL = 0.85  # the out-of-fold recall the yes/no line must reach on the tuning contracts
L2 = 2.0  # how hard a field's own offset is pulled towards the shared line
CLIP = 1e-6


@dataclass(frozen=True)
class Point:
    contract: str
    key: str
    yes_no: bool
    score: float  # P(yes) / (P(yes) + P(no))
    truth: bool  # CUAD says the clause is there / the value is stated

    @property
    def log_odds(self) -> float:
        p = min(max(self.score, CLIP), 1 - CLIP)
        return math.log(p / (1 - p))


@dataclass(frozen=True)
class Fit:
    slope: float
    intercept: float
    offsets: dict[str, float]

    def probability(self, key: str, log_odds: float) -> float:
        return 1 / (1 + math.exp(-(self.slope * log_odds + self.intercept + self.offsets.get(key, 0.0))))


def fit(points: Sequence[Point], l2: float = L2) -> Fit:
    """Penalised logistic regression (Newton's method): slope and intercept free, per-field offsets
    with an L2 penalty."""
    keys = sorted({p.key for p in points})
    column = {k: i + 2 for i, k in enumerate(keys)}
    x = np.zeros((len(points), 2 + len(keys)))
    y = np.array([float(p.truth) for p in points])
    for row, p in enumerate(points):
        x[row, 0] = p.log_odds
        x[row, 1] = 1.0
        x[row, column[p.key]] = 1.0
    penalty = np.diag([0.0, 0.0, *([l2] * len(keys))]) + np.eye(2 + len(keys)) * 1e-6
    w = np.zeros(2 + len(keys))
    w[0] = 1.0
    for _ in range(100):
        z = np.clip(x @ w, -30, 30)
        prob = 1 / (1 + np.exp(-z))
        gradient = x.T @ (prob - y) + penalty @ w
        hessian = (x * (prob * (1 - prob))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return Fit(float(w[0]), float(w[1]), {k: float(w[column[k]]) for k in keys})


def out_of_fold(points: Sequence[Point]) -> list[tuple[Point, float]]:
    """Each point's probability from a fit on the other contracts (leave one contract out)."""
    out: list[tuple[Point, float]] = []
    for contract in sorted({p.contract for p in points}):
        held = [p for p in points if p.contract == contract]
        rest = [p for p in points if p.contract != contract]
        model = fit(rest)
        out += [(p, model.probability(p.key, p.log_odds)) for p in held]
    return out


def precision_recall(scored: Sequence[tuple[Point, float]], cut: float) -> tuple[float, float, int, int, int]:
    tp = sum(1 for p, q in scored if q >= cut and p.truth)
    fp = sum(1 for p, q in scored if q >= cut and not p.truth)
    fn = sum(1 for p, q in scored if q < cut and p.truth)
    return (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0), tp, fp, fn


def cut_for_recall(scored: Sequence[tuple[Point, float]], recall: float) -> float:
    """The highest cut whose recall reaches `recall` (the lowest probability, when none does)."""
    for cut in sorted({q for _p, q in scored}, reverse=True):
        if precision_recall(scored, cut)[1] >= recall:
            return cut
    return min(q for _p, q in scored)


def cut_for_accuracy(scored: Sequence[tuple[Point, float]]) -> float:
    """The cut with the most right decisions (ties: the one nearest 0.5)."""
    best = (-1, 0.0, 0.5)
    for cut in sorted({q for _p, q in scored} | {0.5}):
        right = sum(1 for p, q in scored if (q >= cut) == p.truth)
        key = (right, -abs(cut - 0.5), cut)
        if key[:2] > best[:2]:
            best = key
    return best[2]


@dataclass(frozen=True)
class Chosen:
    """One kind's line: the final fit, the cut, and what cross-validation says it is worth."""

    fit: Fit
    cut: float
    cv_precision: float
    cv_recall: float
    cv_accuracy: float

    def threshold(self, key: str) -> float:
        """The P(yes) at which this field's calibrated probability meets the cut."""
        logit_cut = math.log(self.cut / (1 - self.cut))
        if self.fit.slope <= 0:
            return 0.5  # the scores do not rank this kind at all: the model's own yes/no
        z = (logit_cut - self.fit.intercept - self.fit.offsets.get(key, 0.0)) / self.fit.slope
        return 1 / (1 + math.exp(-max(min(z, 30.0), -30.0)))


def choose(points: Sequence[Point], yes_no: bool) -> Chosen:
    folds = out_of_fold(points)
    cut = cut_for_recall(folds, YES_NO_RECALL) if yes_no else cut_for_accuracy(folds)
    cut = min(max(cut, CLIP), 1 - CLIP)
    precision, recall, *_ = precision_recall(folds, cut)
    accuracy = sum(1 for p, q in folds if (q >= cut) == p.truth) / len(folds)
    return Chosen(fit(points), cut, precision, recall, accuracy)

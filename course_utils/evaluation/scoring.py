"""The scorer's decision fitted on labelled queries: the logistic `selection.scorer.Decider` reads.

Each labelled query's shortlist gives the decision's features (`scorer.decision_features`) and whether its most
probable skill is the expected one; a logistic fitted on those (Platt scaling, `gating.fit_logistic`) is the
probability that the pick is right. The package ships the one fitted on the course's three development sets
(`scorer.COURSE_DECIDER`); `eval-trigger --selectors scored --dev FILE` fits one on the given queries instead.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from course_utils.evaluation.gating import GateError, fit_logistic
from course_utils.selection.scorer import Decider, Score, ScoringSelector, decision_features
from course_utils.skills.queries import LabelledQuery

Shortlisted = tuple[Sequence[Score], Sequence[float], "str | None"]
"""One labelled shortlist: its model scores, its fused ranking scores (nearest first) and the expected skill."""


def fit_decider(examples: Sequence[Shortlisted]) -> Decider:
    """The logistic P(the most probable skill is right) over the examples the model scored; GateError when they
    hold no right pick or no wrong one."""
    rows = [(found[0], found[1] == expected and expected is not None)
            for scores, fused, expected in examples if (found := decision_features(scores, fused)) is not None]
    if len({right for _, right in rows}) < 2:
        raise GateError(f"the scorer's decision needs development queries whose pick is right and others whose pick "
                        f"is wrong, got {len(rows)} of which {sum(r for _, r in rows)} right: use a development set "
                        f"with queries that need no skill")
    weights = fit_logistic(np.array([f for f, _ in rows], dtype=float), np.array([r for _, r in rows], dtype=float))
    return Decider(tuple(round(float(w), 6) for w in weights))


def fit_on_dev(selector: ScoringSelector, queries: Sequence[LabelledQuery]) -> Decider:
    """Score the development queries' shortlists, fit the decision on them and keep it in `selector`. A query
    expecting a skill the model may not choose expects none, as the harness decides."""
    examples = [(*selector.shortlisted(q.query), q.expected if q.expected in selector.shortlist.names else None)
                for q in tqdm(queries, desc="scoring dev queries", unit="query", leave=False)]
    selector.decider = fit_decider(examples)
    return selector.decider


def calibration_points(records: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """(the decision's P(right), whether the most probable skill was the expected one) for each recorded query the
    model scored (a report's `records`); the queries the ranking decided alone carry no probability and are left
    out."""
    points = [(r["pick_probability"], max(r["top_k"], key=lambda pair: pair[1])[0] == r["expected"])
              for r in records if r.get("pick_probability") is not None and r.get("top_k")]
    return np.array([p for p, _ in points], dtype=float), np.array([right for _, right in points], dtype=float)


def expected_calibration_error(probability: np.ndarray, outcome: np.ndarray, bins: int = 10) -> float:
    """ECE: over equal-width bins of the predicted probability, the gap between the mean prediction and the share
    that came true, weighted by the bin's share of the predictions (0 is perfectly calibrated)."""
    total = 0.0
    for i in range(bins):
        inside = (probability >= i / bins) & ((probability < (i + 1) / bins) | (i == bins - 1))
        if inside.any():
            total += inside.mean() * abs(probability[inside].mean() - outcome[inside].mean())
    return float(total)

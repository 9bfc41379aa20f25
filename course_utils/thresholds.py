"""Thresholds on similarity scores: counts at a threshold, sweeps, and fitting on held-out queries.

Used by `notebooks/06_threshold_analysis.ipynb`, the threshold explorer (`course_utils.widgets`)
and its static twin (`course_utils.plots`). A query here is reduced to what a threshold acts on:
its expected skill (or None), the nearest skill by similarity, and that top score.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from course_utils.queries import LabelledQuery


@dataclass(frozen=True)
class ScoredQuery:
    """One query as a threshold sees it."""

    expected: str | None
    top_skill: str
    top_score: float


@dataclass(frozen=True)
class Counts:
    """Outcomes at one threshold (or one set of per-skill thresholds)."""

    correct: int
    false_triggers: int
    misses: int
    wrong_skill: int

    @property
    def total(self) -> int:
        return self.correct + self.false_triggers + self.misses + self.wrong_skill

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


@dataclass(frozen=True)
class PerSkill:
    """One threshold per skill, and the global one for skills that had no training query."""

    by_skill: Mapping[str, float]
    default: float

    def for_skill(self, skill: str) -> float:
        return self.by_skill.get(skill, self.default)


Thresholds = float | PerSkill


def scored_queries(queries: Sequence[LabelledQuery], scores: np.ndarray, names: Sequence[str]) -> list[ScoredQuery]:
    """Reduce a query × skill score matrix to each query's nearest skill and top score."""
    best = scores.argmax(axis=1)
    return [ScoredQuery(q.expected, names[i], float(scores[row, i])) for row, (q, i) in enumerate(zip(queries, best))]


def separability(queries: Sequence[ScoredQuery]) -> tuple[float | None, float | None]:
    """(lowest top score of a correctly ranked must-trigger query, highest top score of a none-query).

    A threshold can separate the two groups only if the first is above the second.
    """
    positives = [q.top_score for q in queries if q.expected is not None and q.top_skill == q.expected]
    nones = [q.top_score for q in queries if q.expected is None]
    return (min(positives) if positives else None, max(nones) if nones else None)


def decide(query: ScoredQuery, thresholds: Thresholds) -> str | None:
    """The skill activated for `query`: the nearest one if its score clears its threshold."""
    limit = thresholds.for_skill(query.top_skill) if isinstance(thresholds, PerSkill) else thresholds
    return query.top_skill if query.top_score >= limit else None


def count_outcomes(queries: Sequence[ScoredQuery], thresholds: Thresholds) -> Counts:
    """Correct, false triggers (none expected, one fired), misses (one expected, none fired), wrong skill."""
    correct = false_triggers = misses = wrong = 0
    for query in queries:
        chosen = decide(query, thresholds)
        if chosen == query.expected:
            correct += 1
        elif query.expected is None:
            false_triggers += 1
        elif chosen is None:
            misses += 1
        else:
            wrong += 1
    return Counts(correct, false_triggers, misses, wrong)


def candidate_thresholds(scores: Sequence[float]) -> np.ndarray:
    """Midpoints between consecutive distinct scores, plus one below the lowest and one above the highest."""
    distinct = np.unique(np.asarray(scores, dtype=float))
    if distinct.size == 0:
        return np.array([0.0])
    middles = (distinct[:-1] + distinct[1:]) / 2
    return np.concatenate([[distinct[0] - 1e-3], middles, [distinct[-1] + 1e-3]])


def sweep(queries: Sequence[ScoredQuery], thresholds: Sequence[float]) -> list[Counts]:
    """Counts at each threshold, for the rates-against-threshold chart."""
    return [count_outcomes(queries, float(t)) for t in thresholds]


def best_threshold(queries: Sequence[ScoredQuery]) -> tuple[float, float]:
    """The global threshold with the highest accuracy on `queries`, and that accuracy.

    Ties are broken by the middle of the tied candidates, which keeps the widest margin.
    """
    candidates = candidate_thresholds([q.top_score for q in queries])
    accuracies = np.array([c.accuracy for c in sweep(queries, candidates)])
    best = np.flatnonzero(accuracies == accuracies.max())
    chosen = float(candidates[best[len(best) // 2]])
    return chosen, float(accuracies.max())


def fit_global(queries: Sequence[ScoredQuery]) -> float:
    """One threshold for every skill, fitted on `queries`."""
    return best_threshold(queries)[0]


def fit_per_skill(queries: Sequence[ScoredQuery]) -> PerSkill:
    """One threshold per skill, each fitted on the queries whose nearest skill it is.

    Skills no training query lands on get the global threshold fitted on all of them.
    """
    groups: dict[str, list[ScoredQuery]] = {}
    for query in queries:
        groups.setdefault(query.top_skill, []).append(query)
    return PerSkill({skill: best_threshold(group)[0] for skill, group in groups.items()}, fit_global(queries))


def split(queries: Sequence[ScoredQuery], train_fraction: float = 0.6, seed: int = 0) -> tuple[list, list]:
    """A fixed, stratified split: the same share of must-trigger and must-not-trigger queries in each part."""
    rng = random.Random(seed)
    train: list[ScoredQuery] = []
    test: list[ScoredQuery] = []
    for group in ([q for q in queries if q.expected is not None], [q for q in queries if q.expected is None]):
        shuffled = group[:]
        rng.shuffle(shuffled)
        cut = round(len(shuffled) * train_fraction)
        train += shuffled[:cut]
        test += shuffled[cut:]
    return train, test


def cross_validate(
    queries: Sequence[ScoredQuery], fit: Callable[[Sequence[ScoredQuery]], Thresholds], folds: int = 5, seed: int = 0
) -> float:
    """Held-out accuracy pooled over `folds` stratified folds: every query is scored by a fit that never saw it."""
    rng = random.Random(seed)
    assignment: dict[int, int] = {}
    for group in ([i for i, q in enumerate(queries) if q.expected is not None],
                  [i for i, q in enumerate(queries) if q.expected is None]):
        rng.shuffle(group)
        assignment.update({index: n % folds for n, index in enumerate(group)})
    correct = 0
    for fold in range(folds):
        train = [q for i, q in enumerate(queries) if assignment[i] != fold]
        held_out = [q for i, q in enumerate(queries) if assignment[i] == fold]
        correct += count_outcomes(held_out, fit(train)).correct
    return correct / len(queries)

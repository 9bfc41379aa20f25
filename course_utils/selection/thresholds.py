"""Thresholds on similarity scores: counts at a threshold, sweeps, and fitting on held-out queries.

Used by `notebooks/08_threshold_analysis.ipynb`, the threshold explorer (`course_utils.lessons.widgets`)
and its static twin (`course_utils.evaluation.plots`). A query here is reduced to what a threshold acts on:
its expected skill (or None), the nearest skill by similarity, and that top score. Where no threshold
works is defined once, by `Overlap` (computed by `overlap`).
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from course_utils.skills.queries import LabelledQuery, verdict


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
MARGIN = 1e-3
"""How far outside the lowest or highest score a threshold goes to fire on all of them, or on none."""


def scored_queries(queries: Sequence[LabelledQuery], scores: np.ndarray, names: Sequence[str]) -> list[ScoredQuery]:
    """Reduce a query × skill score matrix to each query's nearest skill and top score."""
    best = scores.argmax(axis=1)
    return [ScoredQuery(q.expected, names[i], float(scores[row, i])) for row, (q, i) in enumerate(zip(queries, best))]


@dataclass(frozen=True)
class Overlap:
    """Where no threshold works: the one definition of overlap that lesson 08's figure, table and verdict use.

    A threshold t fires the top-1 skill when its score is ≥ t. Only two kinds of query can be right:
    a must-trigger query whose top-1 skill is the expected one (`right`: it must fire) and a must-not-
    trigger query (`nones`: it must stay silent). A must-trigger query whose top-1 skill is another is a
    *ranking error*: wrong at every threshold (a wrong skill above it, a miss below), so it is counted
    apart and takes no part in the overlap.

    The overlap is the score interval [lowest right score, highest none score] when the first is not
    above the second, and the queries in it are the right-ranked must-trigger queries scoring at most the
    highest none score and the must-not-trigger queries scoring at least the lowest right one. No threshold
    gets all of them right. Without an overlap, every t in (highest none score, lowest right score]
    separates the two groups.
    """

    right: tuple[float, ...]
    nones: tuple[float, ...]
    wrong_top: tuple[float, ...]
    """The top scores of the ranking errors."""

    @property
    def ranking_errors(self) -> int:
        return len(self.wrong_top)

    @property
    def lowest_right(self) -> float | None:
        return min(self.right, default=None)

    @property
    def highest_none(self) -> float | None:
        return max(self.nones, default=None)

    @property
    def interval(self) -> tuple[float, float] | None:
        """(lowest right score, highest none score) when they overlap, else None."""
        low, high = self.lowest_right, self.highest_none
        return (low, high) if low is not None and high is not None and low <= high else None

    @property
    def right_inside(self) -> int:
        """Right-ranked must-trigger queries inside the overlap."""
        return sum(score <= self.interval[1] for score in self.right) if self.interval else 0

    @property
    def nones_inside(self) -> int:
        """Must-not-trigger queries inside the overlap."""
        return sum(score >= self.interval[0] for score in self.nones) if self.interval else 0

    @property
    def threshold(self) -> float | None:
        """A threshold that separates the two groups (the middle of the gap), or None when none does or
        there is nothing to separate."""
        low, high = self.lowest_right, self.highest_none
        if self.interval or (low is None and high is None):
            return None
        if low is None or high is None:
            return high + MARGIN if low is None else low - MARGIN
        return (low + high) / 2

    def verdict(self) -> str:
        """One sentence: which threshold separates these queries, or the counts and interval of the overlap."""
        n, right, nones = len(self.right) + len(self.nones), len(self.right), len(self.nones)
        one = self.ranking_errors == 1
        errors = (f"; apart from them, {self.ranking_errors} ranking error{'' if one else 's'} (must-trigger "
                  f"quer{'y' if one else 'ies'} whose top-1 skill is wrong), which no threshold makes right")
        if self.interval:
            low, high = self.interval
            text = (f"no threshold separates these {n} queries: {self.right_inside} of {right} must-trigger queries "
                    f"ranked right and {self.nones_inside} of {nones} must-not-trigger queries score inside the "
                    f"overlap [{low:.3f}, {high:.3f}]")
        elif self.threshold is None:
            text = "no threshold to choose: no must-trigger query ranked right and no must-not-trigger query"
        else:
            text = (f"threshold {self.threshold:.3f} separates these {n} queries: the {right} must-trigger queries "
                    f"ranked right fire, the {nones} must-not-trigger queries stay silent")
        return text + (errors if self.ranking_errors else "")


def overlap(queries: Sequence[ScoredQuery]) -> Overlap:
    """The top scores of `queries` split into right-ranked must-trigger, must-not-trigger and ranking errors
    (see `Overlap`)."""
    must = [q for q in queries if q.expected is not None]
    return Overlap(tuple(q.top_score for q in must if q.top_skill == q.expected),
                   tuple(q.top_score for q in queries if q.expected is None),
                   tuple(q.top_score for q in must if q.top_skill != q.expected))


def decide(query: ScoredQuery, thresholds: Thresholds) -> str | None:
    """The skill activated for `query`: the nearest one if its score clears its threshold."""
    limit = thresholds.for_skill(query.top_skill) if isinstance(thresholds, PerSkill) else thresholds
    return query.top_skill if query.top_score >= limit else None


def count_outcomes(queries: Sequence[ScoredQuery], thresholds: Thresholds) -> Counts:
    """Correct, false triggers (none expected, one fired), misses (one expected, none fired), wrong skill."""
    verdicts = Counter(verdict(query.expected, decide(query, thresholds)) for query in queries)
    return Counts(verdicts["correct"], verdicts["false trigger"], verdicts["miss"], verdicts["wrong skill"])


def candidate_thresholds(scores: Sequence[float]) -> np.ndarray:
    """Midpoints between consecutive distinct scores, plus one below the lowest and one above the highest."""
    distinct = np.unique(np.asarray(scores, dtype=float))
    if distinct.size == 0:
        return np.array([0.0])
    middles = (distinct[:-1] + distinct[1:]) / 2
    return np.concatenate([[distinct[0] - MARGIN], middles, [distinct[-1] + MARGIN]])


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

"""Feedback after grading (lesson 09): the queries a selector got wrong, each with the skill it expected (or
none), what was decided and, given the similarity selector, where the expected skill ranked by cosine."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from course_utils.evaluation.outcomes import Outcome

@dataclass(frozen=True)
class GradedMiss:
    """One graded query a selector got wrong: the query, what it expected and what the selector decided."""

    query: str
    kind: str
    expected: str | None
    """The skill the query must trigger; None: it must trigger none."""
    picked: str | None
    """The decision: the majority of the runs that answered (`evaluation.majority`: a tie decides None)."""
    verdict: str
    """false trigger, miss, wrong skill, or error (no run answered)."""
    runs: tuple[str | None, ...] = ()
    """Each answering run's skill, when the query ran more than once and the runs disagreed; else empty."""
    error: str | None = None
    rank: int | None = None
    """The expected skill's place by cosine (1 = nearest; tied skills share a place): 1 plus the number of skills
    scoring strictly higher. None for a query that expects none, or when no selector was given."""

    @property
    def picked_text(self) -> str:
        if self.verdict == "error":
            return "no answer (error)"
        shown = self.picked or "none"
        return f"{shown} (runs: {', '.join(r or 'none' for r in self.runs)})" if self.runs else shown


@dataclass(frozen=True)
class GradingFeedback:
    """The queries one graded selector got wrong, in the grading set's order; `str()` is the table a lesson prints."""

    selector: str
    queries: int
    misses: tuple[GradedMiss, ...]
    k: int | None = None
    """The shortlist's size, when the selector shortlists: a rank above it was left out of the shortlist."""

    def __str__(self) -> str:
        if not self.misses:
            return f"{self.selector}: right on all {self.queries} graded queries."
        header = ("expected", "picked", "verdict", "rank", "query")
        rows = [(m.expected or "none", m.picked_text, m.verdict, _rank_text(m.rank, self.k), json.dumps(
            m.query, ensure_ascii=False)) for m in self.misses]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
        line = lambda row: "  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths)) + "  " + row[4]  # noqa: E731
        lines = [f"{self.selector}: wrong on {len(self.misses)} of {self.queries} graded queries", line(header),
                 *(line(row) for row in rows)]
        if any(m.rank is not None for m in self.misses):
            where = f"; above {self.k}, the shortlist left it out" if self.k is not None else ""
            lines.append(f"rank: the expected skill's place by cosine, 1 = nearest{where}")
        return "\n".join(lines)


def _rank_text(rank: int | None, k: int | None) -> str:
    if rank is None:
        return "-"
    return f"{rank} (> k)" if k is not None and rank > k else str(rank)


def grading_feedback(name: str, outcomes: Sequence[Outcome], selector: Any = None,
                     k: int | None = None) -> GradingFeedback:
    """The queries of a grading run (`evaluation.run_selector`'s outcomes) that `name` got wrong, each with what it
    expected and what was decided; with `selector` (any object with `names` and `scores`), where the expected
    skill ranks by cosine, which tells a shortlist that left it out from a model that chose otherwise."""
    misses = []
    for outcome in outcomes:
        if outcome.verdict == "correct":
            continue
        expected = outcome.query.expected
        rank = None
        if selector is not None and expected is not None:
            row = np.asarray(selector.scores([outcome.query.query])[0])
            rank = 1 + int(np.sum(row > row[list(selector.names).index(expected)]))
        answers = tuple(outcome.answers)
        misses.append(GradedMiss(outcome.query.query, outcome.query.kind, expected, outcome.chosen, outcome.verdict,
                                 answers if len(set(answers)) > 1 else (), outcome.error, rank))
    return GradingFeedback(name, len(outcomes), tuple(misses), k)

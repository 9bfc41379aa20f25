"""The rule the scorer first decided by, kept in the lab as the baseline its logistic decision is compared with.

A `Rule` picks a shortlisted skill by a P(yes) threshold and a lead over the others; `fit_on_dev` searches a small
grid for the rule right on the most labelled queries. The package decides with `selection.scorer.Decider` instead:
on the dev sets it did better both fitted on the other catalogs and cross-validated (`docs/lab/scorer.md`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from course_utils.selection.scorer import Score


DEFAULT_THRESHOLD = 0.5
"""With nothing fitted: pick when the model thinks "yes" more likely than "no"."""

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
MARGINS = (-1.0, -0.05, 0.0, 0.025, 0.05, 0.075, 0.1)
"""The grid `fit_on_dev` searches, with both ways of choosing the candidate (`Rule.first`): the candidate's P(yes),
and its lead over the best other one (a negative margin lets the shortlist's first skill trail another; -1 ignores
the others)."""




@dataclass(frozen=True)
class Rule:
    """Which shortlisted skill is the candidate, and when it is picked.

    The candidate is the shortlist's first skill (`first`) or the most probable one (ties: the nearer). It is
    picked when its P(yes) reaches `threshold` and it leads every other shortlisted skill by at least `margin`;
    else no skill is. A request near several skills' domains but served by none scores them all alike."""

    threshold: float = DEFAULT_THRESHOLD
    margin: float = 0.0
    first: bool = False

    def __str__(self) -> str:
        candidate = "the shortlist's first" if self.first else "the most probable"
        lead = "" if self.margin <= -1 else f", leading the others by {self.margin:+g}"
        return f"{candidate} at P(yes) ≥ {self.threshold:g}{lead}"

    def decide(self, scores: Sequence[Score]) -> str | None:
        known = [s for s in scores if s.probability is not None]
        if not known:
            return None
        candidate = known[0] if self.first else max(known, key=lambda s: s.probability)
        others = [s.probability for s in known if s is not candidate]
        lead = candidate.probability - max(others, default=0.0)
        return candidate.skill if candidate.probability >= self.threshold and lead >= self.margin else None


def fit_on_dev(scored: Sequence[tuple[Sequence[Score], str | None]]) -> Rule:
    """The rule of the grid right on the most development queries, each given as (its shortlist's scores, the
    expected skill or None); ties go to the most probable candidate, the margin nearest 0, then the smaller
    threshold: the rule closest to the one with nothing fitted."""
    def correct(rule: Rule) -> int:
        return sum(rule.decide(scores) == expected for scores, expected in scored)

    grid = [Rule(t, m, first) for first in (False, True) for m in MARGINS for t in THRESHOLDS]
    return max(grid, key=lambda rule: (correct(rule), -rule.first, -abs(rule.margin), -rule.threshold))


COURSE_RULE = Rule(threshold=0.6, margin=0.025, first=True)
"""The rule `fit_on_dev` gives on the course's three catalogs' development queries together (the record
`docs/lab/records/scorer_dev.jsonl`, Qwen2.5-Coder-1.5B)."""



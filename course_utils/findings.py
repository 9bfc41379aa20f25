"""A lesson's "What we found": sentences computed from a run's numbers, never written to fit any outcome.

Each finding states a rate with its 95 % interval, names the model that ran, and, where the source lesson makes
a claim about that rate, says whether the run agrees with it. The verdict comes from the interval alone: it
agrees when the whole interval lies on the claimed side of the claim's bound, disagrees when the whole interval
lies on the other side, and is not settled when the interval straddles the bound (more runs would tell).
So the same code tells a learner on Gemini, or on a bigger model, what their own run found.
"""
from __future__ import annotations

from dataclasses import dataclass

from course_utils.stats import Rate


@dataclass(frozen=True)
class Claim:
    """A source lesson's claim about a rate: its words (quoted), where it comes from, and the bound it implies:
    the rate is claimed to be above `above`, or below `below` ("sometimes" is above 0)."""

    quote: str
    source: str
    above: float | None = None
    below: float | None = None

    def __post_init__(self) -> None:
        if (self.above is None) == (self.below is None):
            raise ValueError("a claim bounds the rate on one side: give above or below, not both")

    def verdict(self, rate: Rate) -> str:
        """'agrees with', 'disagrees with' or 'does not settle' (the interval reaches both sides of the bound)."""
        if rate.n == 0:
            return "does not settle"
        if self.above is not None:
            claimed_side, other_side = rate.low > self.above, rate.high <= self.above
        else:
            claimed_side, other_side = rate.high < self.below, rate.low >= self.below
        return "agrees with" if claimed_side else "disagrees with" if other_side else "does not settle"

    def bound_text(self) -> str:
        return f"above {self.above:.1%}" if self.above is not None else f"below {self.below:.1%}"


def rate_finding(what: str, rate: Rate, model: str, unit: str = "runs") -> str:
    """One sentence: the rate, its counts and interval, and the model that ran."""
    if rate.n == 0:
        return f"{model} gave no {unit} to measure {what}."
    return (f"On {model}, {what}: {rate.successes} of {rate.n} {unit}, {rate.value:.1%} "
            f"(95 % CI {rate.low:.1%}–{rate.high:.1%}).")


def claim_finding(claim: Claim, rate: Rate) -> str:
    """Whether the rate agrees with the claim, with the bound the claim implies and the interval that decides."""
    interval = "no runs" if rate.n == 0 else f"the interval {rate.low:.1%}–{rate.high:.1%}"
    return (f'This run {claim.verdict(rate)} the claim "{claim.quote}" ({claim.source}): the claim means a rate '
            f"{claim.bound_text()}, and {interval} decides.")

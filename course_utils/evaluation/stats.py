"""How sure a rate measured on a few dozen queries is, and whether two selectors really differ.

30 queries is a small sample: 23/30 correct is "somewhere between 0.59 and 0.88", not "0.767".
`course_utils.evaluation.outcomes` gives every rate a Wilson interval and compares two selectors on the same
queries with the exact McNemar test: the course's method for every rate and every comparison.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

SIGNIFICANCE = 0.05
"""The rule used in the reports: a difference between two selectors is a finding only at p < 0.05."""


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the rate `successes / n`, as (low, high), both within [0, 1].

    Unlike the textbook "p ± 1.96·sd" it stays inside [0, 1] and does not shrink to a point at 0/n or n/n
    (0/10 gives (0, 0.28)). Raises ValueError when n == 0: no query, no rate and no interval
    (the reports print "n/a").
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes}/{n}")
    return wilson_at(successes / n, n, confidence)


def wilson_at(p: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval a rate of `p` would have on `n` trials, `p * n` not necessarily a whole count: what
    `course_utils.evaluation.findings` reads to say how many queries would decide a claim at the rate observed."""
    if n <= 0 or not 0 <= p <= 1:
        raise ValueError(f"need 0 <= p <= 1 and n > 0, got p={p}, n={n}")
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, min(p, center - half)), min(1.0, max(p, center + half))  # rounding never puts p outside


@dataclass(frozen=True)
class Rate:
    """A rate with its counts and its Wilson interval; with n == 0, value, low and high are None."""

    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    confidence: float = 0.95

    @classmethod
    def of(cls, successes: int, n: int, confidence: float = 0.95) -> Rate:
        if n == 0:
            return cls(successes, 0, None, None, None, confidence)
        low, high = wilson_interval(successes, n, confidence)
        return cls(successes, n, successes / n, low, high, confidence)

    @property
    def interval(self) -> list[float] | None:
        """[low, high] as the JSON reports write it, or None without data."""
        return None if self.n == 0 else [self.low, self.high]

    def format(self, unit: str = "queries") -> str:
        """E.g. `0.767 (23/30, 95% CI 0.59–0.88)`; without data `n/a (0 queries)`, `unit` naming what n counts."""
        if self.n == 0:
            return f"n/a (0 {unit})"
        return (f"{self.value:.3f} ({self.successes}/{self.n}, "
                f"{self.confidence:.0%} CI {self.low:.2f}–{self.high:.2f})")


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts of a paired comparison.

    b = queries A got right and B wrong, c = the reverse; queries both got right (or both wrong) say
    nothing about which is better. If A and B were equally good, each discordant query would go either
    way with probability 1/2: p is twice the binomial tail of the smaller count, capped at 1
    (1.0 when there is no discordant query). b=0, c=5 gives 0.0625: five to nothing is not yet p < 0.05.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be non-negative, got b={b}, c={c}")
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def format_p(p_value: float) -> str:
    """A p-value as the reports write it after "p": `< 0.001`, else `= 0.062`."""
    return "< 0.001" if p_value < 0.001 else f"= {p_value:.3f}"

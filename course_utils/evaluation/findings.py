"""A lesson's "What we found": sentences computed from a run's numbers, never written to fit any outcome.

Each finding states a rate with its 95 % interval and names the model that ran. Where the source lesson makes a
claim, the finding says whether the run agrees with it, and a claim is one of two kinds:

- a claim about *this set* (`CountClaim`: "the 24 positives rank first", "no threshold separates the two
  groups") is decided by the count, exactly: it agrees or disagrees, nothing in between;
- a claim about *a rate* (`RateClaim`: "the model knows how to decline") is decided by the Wilson interval
  against a bound strictly between 0 and 1. It agrees when the whole interval lies on the claimed side of the
  bound, disagrees when it lies wholly on the other side; in between, the run is too small, and the finding
  says how many queries would decide at the rate observed (`RateClaim.needed`).

A bound the sample can reach only one way makes a verdict that cannot come out the other: `verdicts_at(n)`
lists the verdicts a claim can reach on n queries, and the tests check every lesson's claim on its own n
(the lessons' claims are in `course_utils.evaluation.claims`).

After the templated sentence, `claim_finding` adds a plain one, computed too: "On <model>, 'none' does not work:
1 of 6 queries needing no skill are declined." So the same code tells a learner on Gemini, or on a bigger model,
what their own run found.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from course_utils.evaluation.stats import Rate, wilson_at

AGREES, DISAGREES, TOO_FEW = "agrees with", "disagrees with", "is too small to decide"
"""The verdicts: a count claim reaches only the first two; a rate claim the three."""

QUANTIFIERS = {  # what a count claim says of k out of n: the test, and the words of "it holds when …"
    "all": (lambda k, n: k == n, "all {n} {of}"),
    "none": (lambda k, n: k == 0, "none of the {n} {of}"),
    "some": (lambda k, n: k >= 1, "at least one of the {n} {of}"),
    "not all": (lambda k, n: k < n, "fewer than all {n} {of}"),
    "most": (lambda k, n: 2 * k > n, "more than half of the {n} {of}"),
}
LARGEST_N = 10**9
"""`RateClaim.needed` looks no further: a rate this close to its bound is, for a course, on it."""


@dataclass(frozen=True)
class SourceClaim:
    """What both kinds of claim share: the source's words (`quote`, from `source`), and how the sentences word the
    count — `of` what items (e.g. "must-trigger queries"), which `did` what (e.g. "have the expected skill
    nearest"); `holds` and `fails` are the plain sentence's two clauses."""

    quote: str
    source: str
    of: str = field(default="queries", kw_only=True)
    did: str = field(default="count", kw_only=True)
    holds: str = field(default="the claim holds", kw_only=True)
    fails: str = field(default="the claim does not hold", kw_only=True)

    def verdict(self, rate: Rate) -> str:
        raise NotImplementedError

    def verdicts_at(self, n: int) -> set[str]:
        """The verdicts some count of n items gives."""
        return {self.verdict(Rate.of(k, n)) for k in range(n + 1)}


@dataclass(frozen=True)
class CountClaim(SourceClaim):
    """A claim about this set, decided by the count `k` of `n` exactly: `holds_when` is one of QUANTIFIERS ("all",
    "none", "some", "not all", "most"), and the claim holds when that many of the `n` items do what `did` says."""

    holds_when: str
    holds: str = field(default="the claim holds on this set", kw_only=True)
    fails: str = field(default="the claim does not hold on this set", kw_only=True)

    kind = "count"

    def __post_init__(self) -> None:
        if self.holds_when not in QUANTIFIERS:
            raise ValueError(f"holds_when is one of {', '.join(QUANTIFIERS)}, not {self.holds_when!r}")

    def verdict(self, rate: Rate) -> str:
        """AGREES or DISAGREES: the count alone decides."""
        return AGREES if QUANTIFIERS[self.holds_when][0](rate.successes, rate.n) else DISAGREES

    def bound_text(self, n: int) -> str:
        return QUANTIFIERS[self.holds_when][1].format(n=n, of=self.of)

    def sentence(self, rate: Rate) -> str:
        opening = (f'This run {self.verdict(rate)} the claim "{self.quote}" ({self.source}), a claim about this set '
                   "and so decided by the count")
        if rate.n == 0:
            return f"{opening}: this run has no {self.of} to count."
        return f"{opening}: it holds when {self.bound_text(rate.n)} {self.did}."

    def plain(self, rate: Rate, model: str) -> str:
        clause = self.holds if self.verdict(rate) == AGREES else self.fails
        if rate.n == 0:
            return f"On {model}, {clause}: there are no {self.of}."
        return f"On {model}, {clause}: {rate.successes} of {rate.n} {self.of} {self.did}."


@dataclass(frozen=True)
class RateClaim(SourceClaim):
    """A claim about a rate, decided by its Wilson interval against a bound strictly between 0 and 1: the rate is
    claimed to be above `above`, or below `below`. A bound of 0 or 1 ("sometimes", "never") is refused: no
    interval can contradict it; make such a claim a `CountClaim` about the run, or give a bound the lesson's sample
    can reach both ways."""

    above: float | None = None
    below: float | None = None

    kind = "rate"

    def __post_init__(self) -> None:
        if (self.above is None) == (self.below is None):
            raise ValueError("a claim bounds the rate on one side: give above or below, not both")
        if not 0 < self.bound < 1:
            raise ValueError(f"the bound must lie strictly between 0 and 1, got {self.bound}: an interval never "
                             "reaches the other side of 0 or 1 (make it a CountClaim about this run)")

    @property
    def bound(self) -> float:
        return self.above if self.above is not None else self.below

    def _side(self, low: float, high: float) -> str:
        if self.above is not None:
            return AGREES if low > self.above else DISAGREES if high <= self.above else TOO_FEW
        return AGREES if high < self.below else DISAGREES if low >= self.below else TOO_FEW

    def verdict(self, rate: Rate) -> str:
        """AGREES, DISAGREES, or TOO_FEW when the interval reaches both sides of the bound (or n is 0)."""
        return TOO_FEW if rate.n == 0 else self._side(rate.low, rate.high)

    def smallest_deciding_n(self, limit: int = 100_000) -> int | None:
        """The fewest items on which both AGREES and DISAGREES can come out."""
        return next((n for n in range(1, limit + 1) if {AGREES, DISAGREES} <= self.verdicts_at(n)), None)

    def needed(self, rate: Rate) -> int | None:
        """The fewest items on which the interval at the rate observed would lie wholly on one side of the bound;
        None without data, or when the rate sits on the bound (then no number of items at that rate decides)."""
        if rate.n == 0:
            return None
        p = rate.value

        def decided(n: int) -> bool:
            return self._side(*wilson_at(p, n, rate.confidence)) != TOO_FEW

        high = 1
        while not decided(high):
            if high > LARGEST_N:
                return None
            high *= 2
        low = high // 2  # undecided (or 0); the interval narrows as n grows, so bisect
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if decided(middle) else (middle, high)
        return high

    def bound_text(self) -> str:
        return f"above {self.above:.1%}" if self.above is not None else f"below {self.below:.1%}"

    def sentence(self, rate: Rate) -> str:
        verdict = self.verdict(rate)
        opening = f'This run {verdict} the claim "{self.quote}" ({self.source}), read as a rate {self.bound_text()}'
        if rate.n == 0:
            return f"{opening}: it has no {self.of} to measure it on."
        interval = f"the interval {rate.low:.1%}–{rate.high:.1%}"
        if verdict != TOO_FEW:
            on_claimed_side = verdict == AGREES
            side = "above" if (self.above is not None) == on_claimed_side else "below"
            return f"{opening}: {interval} lies wholly {side if on_claimed_side else 'at or ' + side} the bound."
        more = self.needed(rate)
        if more is None:
            return (f"{opening}: {interval} reaches both sides, and the observed {rate.value:.1%} sits on the bound, "
                    f"so no number of {self.of} at that rate would decide it.")
        return (f"{opening}: {interval} reaches both sides; at the observed {rate.value:.1%}, {more:,} {self.of} "
                f"would decide it (this run has {rate.n}).")

    def plain(self, rate: Rate, model: str) -> str:
        verdict = self.verdict(rate)
        counts = f"{rate.successes} of {rate.n} {self.of} {self.did}"
        if verdict != TOO_FEW:
            return f"On {model}, {self.holds if verdict == AGREES else self.fails}: {counts}."
        if rate.n == 0:
            return f"On {model}, nothing was measured: 0 {self.of}."
        leans = self._side(rate.value, rate.value) if rate.value != self.bound else TOO_FEW
        clause = {AGREES: self.holds, DISAGREES: self.fails}.get(leans)
        if clause is None:
            return f"On {model}, this run sits on the bound: {counts}."
        return f"On {model}, {clause} in this run, too few {self.of} to say it of the model: {counts}."


def rate_finding(what: str, rate: Rate, model: str, unit: str = "runs") -> str:
    """One sentence: the rate, its counts and interval, and the model that ran."""
    if rate.n == 0:
        return f"{model} gave no {unit} to measure {what}."
    return (f"On {model}, {what}: {rate.successes} of {rate.n} {unit}, {rate.value:.1%} "
            f"(95 % CI {rate.low:.1%}–{rate.high:.1%}).")


def claim_finding(claim: CountClaim | RateClaim, rate: Rate, model: str = "this model") -> str:
    """Whether the run agrees with the claim, and why (the count, or the interval against the bound and how many
    items would decide it), then the plain sentence on `model`. `rate` holds the count k of n for either kind."""
    return f"{claim.sentence(rate)} {claim.plain(rate, model)}"

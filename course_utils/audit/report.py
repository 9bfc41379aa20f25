"""The audit's report as typed, frozen values: findings, sections and rates.

JSON, SARIF, GitHub annotations, text and the HTML page are all rendered from an `AuditReport`
(`course_utils.audit.render`); nothing is looked up by string in a dict, and a finding's fix is a field of
its own, never parsed out of its message.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from course_utils.audit.folders import SkillsFolder
from course_utils.evaluation.stats import Rate

STANDS_OUT_Z = 3.0
"""A pair stands out when its score is at least this many standard deviations above the mean of all pairs of
the folder (a conventional outlier cut, not fitted)."""


@dataclass(frozen=True)
class Finding:
    """One problem: the rule it breaks, where, what was seen, and what to do.

    `file` is relative to the audited folder (None for a finding about the whole folder or the query file),
    `skill` the skill it is about (and `other` the second skill of a pair or a confusion),
    `evidence` names the section and the item of the report that shows why, `weight` orders findings of one
    rule (more affected skills, a larger z, more queries first).
    """

    code: str
    severity: str
    message: str
    fix: str
    section: str
    evidence: str
    file: str | None = None
    skill: str | None = None
    line: int | None = None
    """The line of `file` the finding is about (see `audit.lines.locate`); None without a file."""
    weight: float = 0.0
    other: str | None = None
    """The second skill of a pair or of a confusion, if any."""
    field: str | None = None
    """The frontmatter field the finding is about (`description`, `metadata.author`), if any: it gives `line`."""
    count: int = 1
    """In the summary, how many findings of its rule this one stands for (the others are like it)."""
    column: int | None = None
    """The 1-based column of `line` where what the finding is about starts (the field's key, the reference), if
    known; `end_column` the column just past its end."""
    end_column: int | None = None
    suppressed: str | None = None
    """Why the finding is not counted, when a directive suppresses it (`audit.suppress`): its kind and where."""


@dataclass(frozen=True)
class RateValue:
    """A rate with its 95 % Wilson interval (None when n is 0)."""

    label: str
    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, label: str, rate: Rate) -> RateValue:
        low, high = rate.interval if rate.interval else (None, None)
        return cls(label, rate.successes, rate.n, rate.value, low, high)


@dataclass(frozen=True)
class ValidationSection:
    valid: int
    invalid_files: int
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class ListingView:
    """What the model sees of one skill in the harness's listing (`listing.SEEN`: whole, cut, name, removed,
    omitted), how many characters of its entry, out of how many, and why."""

    skill: str
    seen: str
    chars: int
    entry_chars: int
    reason: str


@dataclass(frozen=True)
class ListingSection:
    """The listing a harness builds for the folder (`listing.harness_listing`): its budget in its unit, the order
    that decides who gives way (said in words, e.g. that no usage was known), and one view per skill."""

    harness: str
    label: str
    context_tokens: int
    window_source: str
    budget: int | None
    """None when the harness has no budget of its own (Gemini CLI)."""
    unit: str
    used: int
    order: str
    source: str
    listing_chars: int
    listing_tokens: int
    context_share: float
    counts: dict[str, int]
    views: tuple[ListingView, ...]


@dataclass(frozen=True)
class NoListing:
    """A harness with no listing rule (the Agent Skills spec): no listing is simulated, and `reason` says so."""

    harness: str
    reason: str


@dataclass(frozen=True)
class WhenRow:
    skill: str
    says_when: bool
    when_words: str | None
    excludes: bool
    exclusion_words: str | None


@dataclass(frozen=True)
class WhenSection:
    rule: str
    rows: tuple[WhenRow, ...]

    @property
    def without_when(self) -> int:
        return sum(not r.says_when for r in self.rows)

    @property
    def without_exclusion(self) -> int:
        return sum(not r.excludes for r in self.rows)


@dataclass(frozen=True)
class Pair:
    """Two skills and how close their descriptions are, by one signal (`signal`: embedding or lexical)."""

    signal: str
    a: str
    b: str
    score: float
    z: float
    stands_out: bool
    a_description: str
    b_description: str
    body_cosine: float | None = None


@dataclass(frozen=True)
class PairSignal:
    """The closest pairs by one signal, with the mean and spread of all pairs' scores."""

    signal: str
    method: str
    pairs: tuple[Pair, ...]
    pair_count: int
    mean: float | None
    std: float | None
    rule: str

    @property
    def cutoff(self) -> float | None:
        """The score above which a pair stands out: the mean plus `STANDS_OUT_Z` standard deviations."""
        return None if self.mean is None or self.std is None else self.mean + STANDS_OUT_Z * self.std


@dataclass(frozen=True)
class PairsSection:
    signals: tuple[PairSignal, ...]

    def signal(self, name: str) -> PairSignal | None:
        return next((s for s in self.signals if s.signal == name), None)


@dataclass(frozen=True)
class Confusion:
    """Which skill fired instead: `expected` (None: no skill) went to `got` (None: no skill), `count` times."""

    expected: str | None
    got: str | None
    count: int


@dataclass(frozen=True)
class SelectorResult:
    selector: str
    rates: dict[str, RateValue]
    mean_prompt_tokens: float | None
    seconds_per_decision: float | None
    errors: int
    confusions: tuple[Confusion, ...]
    report: dict[str, Any] = field(repr=False)
    """The evaluation's own report (`evaluation.Report.to_dict()`), every query's record in it."""


@dataclass(frozen=True)
class Attractor:
    """A skill that took queries meant for others (`stolen`) or for no skill (`false_triggers`)."""

    skill: str
    stolen: int
    false_triggers: int

    @property
    def taken(self) -> int:
        return self.stolen + self.false_triggers


@dataclass(frozen=True)
class ConfusablePair:
    """One pair of skills by the three signals of confusion: the words their descriptions share (lexical z),
    what their embeddings say (embedding z), and what the trigger evaluation saw (queries of one that went to
    the other, both ways). A signal that did not run, or did not rank the pair among its closest, is None."""

    a: str
    b: str
    lexical_z: float | None
    embedding_z: float | None
    observed: int | None
    signals: int
    """How many signals flag the pair: a z that stands out (`STANDS_OUT_Z`), or a confusion seen twice."""


@dataclass(frozen=True)
class UnknownQuery:
    item: int
    query: str
    expected: str


@dataclass(frozen=True)
class AccuracyGate:
    """`--min-accuracy`: each selector's accuracy, judged on the lower bound of its Wilson interval."""

    min_accuracy: float
    passed: bool
    rows: tuple[tuple[str, RateValue], ...]


@dataclass(frozen=True)
class TriggerSection:
    file: str
    format: str
    queries: int
    unknown: tuple[UnknownQuery, ...]
    error: str | None
    setup: dict[str, Any]
    """What decided (backend, models, decoding, runs, k, threshold), as the selector set describes itself."""
    selectors: tuple[SelectorResult, ...] = ()
    comparisons: tuple[dict[str, Any], ...] = ()
    attractors: tuple[Attractor, ...] = ()
    gate: AccuracyGate | None = None


@dataclass(frozen=True)
class AuditReport:
    """The whole audit. `findings` holds every finding the selected rules made, most severe first;
    `summary` the five most useful of them."""

    folder: str
    harness: str
    skills: int
    validation: ValidationSection
    listing: ListingSection | NoListing
    when: WhenSection
    pairs: PairsSection | None
    trigger: TriggerSection | None
    findings: tuple[Finding, ...]
    summary: tuple[Finding, ...]
    seconds: float
    changed: tuple[str, ...] | None = None
    """With `--changed`: the skills the change touched, the only ones audited."""
    confusable: tuple[ConfusablePair, ...] = ()
    """The pairs any signal ranks closest or saw confused, the most flagged first (`confusable_pairs`)."""
    folders: tuple[SkillsFolder, ...] = ()
    """The folders a harness would load, where the skills were found (`folders.collect`)."""
    suppressed: tuple[Finding, ...] = ()
    """The findings a directive suppresses (`audit.suppress`): reported, never counted in the exit status."""

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (what `--format json` writes)."""
        return dataclasses.asdict(self)

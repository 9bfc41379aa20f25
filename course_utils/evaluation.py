"""Run selectors over a labelled query set and report what they got right, wrong, and what it cost.

Used from `notebooks/04_selection_by_model.ipynb` on, and by `python -m course_utils eval-trigger`.
A selector is any callable `(query) -> Decision`; nothing here knows which backend is behind it.

Every query lands in exactly one bucket: correct, false trigger (a skill where none was expected),
miss (none where a skill was expected), wrong skill, or error (no run gave a decision: the selector raised,
or returned a decision carrying an error such as a malformed answer).
Triggering is scored like retrieval: precision = right triggers / all triggers,
recall = right triggers / queries that must trigger.
"""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tqdm.auto import tqdm

from course_utils.faults import describe_error, one_line
from course_utils.queries import LabelledQuery
from course_utils.selection import Decision, Selector

QUERY_WIDTH = 70


@dataclass(frozen=True)
class Outcome:
    """One labelled query and the decisions a selector made on it, one per run."""

    query: LabelledQuery
    decisions: tuple[Decision, ...]

    @property
    def succeeded(self) -> list[Decision]:
        return [d for d in self.decisions if d.error is None]

    @property
    def chosen(self) -> str | None:
        """The skill picked in at least half of the successful runs, else None."""
        return majority([d.skill for d in self.succeeded])

    @property
    def error(self) -> str | None:
        """The first run's error when no run succeeded."""
        return None if self.succeeded else self.decisions[0].error

    @property
    def verdict(self) -> str:
        """correct, false trigger, miss, wrong skill or error."""
        expected, chosen = self.query.expected, self.chosen
        if self.error is not None:
            return "error"
        if chosen == expected:
            return "correct"
        if expected is None:
            return "false trigger"
        return "miss" if chosen is None else "wrong skill"

    @property
    def score(self) -> float | None:
        """The mean top-1 score over the successful runs, for selectors that score."""
        scores = [d.score for d in self.succeeded if d.score is not None]
        return statistics.fmean(scores) if scores else None

    @property
    def top_skill(self) -> str | None:
        """The nearest skill whatever the threshold, for selectors that rank."""
        ranked = [d.top_k[0][0] for d in self.succeeded if d.top_k]
        return ranked[0] if ranked else None


def majority(skills: Sequence[str | None]) -> str | None:
    """The most frequent skill if it was picked in at least half of `skills`, else None."""
    counts = Counter(s for s in skills if s is not None)
    if not counts:
        return None
    skill, count = counts.most_common(1)[0]
    return skill if 2 * count >= len(skills) else None


def run_selector(selector: Selector, queries: Sequence[LabelledQuery], runs: int = 1,
                 name: str = "selector", progress: bool = True) -> list[Outcome]:
    """Ask `selector` about every query `runs` times; an exception becomes a decision with an error.

    The error is `faults.describe_error(err)`: one line saying what failed. Decisions already made are
    kept whatever happens later; only an interrupt (Ctrl-C) stops the run.
    """
    outcomes = []
    with tqdm(total=len(queries) * runs, desc=name, unit="decision", disable=not progress) as bar:
        for query in queries:
            decisions = []
            for _ in range(runs):
                try:
                    decisions.append(selector(query.query))
                except Exception as err:  # one failing decision is recorded, the run goes on
                    decisions.append(Decision(None, error=describe_error(err)))
                bar.update()
            outcomes.append(Outcome(query, tuple(decisions)))
    return outcomes


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def shorten(text: str, width: int = QUERY_WIDTH) -> str:
    """`text` on one line, cut to `width` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class Report:
    """What one selector did on one query set. `to_dict()` is what `eval-trigger --json` writes."""

    selector: str
    queries: int
    runs: int
    correct: int
    accuracy: float | None
    positives: int
    positives_correct: int
    positive_accuracy: float | None
    nones: int
    nones_correct: int
    none_accuracy: float | None
    false_triggers: int
    misses: int
    wrong_skill: int
    errors: int
    precision: float | None
    recall: float | None
    mean_prompt_tokens: float | None
    median_prompt_tokens: float | None
    seconds_per_decision: float | None
    ranked_first: int | None = None
    min_positive_score: float | None = None
    max_none_score: float | None = None
    mistakes: list[dict[str, Any]] = field(default_factory=list)
    error_reasons: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def mistake_lines(self) -> list[str]:
        """One line per mistake: `name: expected X -> got Y : "query"`."""
        return [f'{self.selector}: expected {m["expected"]} -> got {m["got"]} : "{shorten(m["query"])}"'
                for m in self.mistakes]

    def summary(self) -> str:
        """The report as the lessons print it: counts, rates, cost, scores, then every mistake."""
        pad = " " * (len(self.selector) + 2)
        lines = [
            f"{self.selector}: accuracy {_rate(self.correct, self.queries)} | must trigger "
            f"{_rate(self.positives_correct, self.positives)} | must not {_rate(self.nones_correct, self.nones)}",
            f"{pad}precision {_num(self.precision)}, recall {_num(self.recall)} | false triggers {self.false_triggers}, "
            f"misses {self.misses}, wrong skill {self.wrong_skill}, errors {self.errors}",
            f"{pad}prompt tokens per decision: mean {_num(self.mean_prompt_tokens, ',.0f')}, median "
            f"{_num(self.median_prompt_tokens, ',.0f')} | {_num(self.seconds_per_decision, '.3f')} s per decision"
            + (f" | {self.runs} runs per query" if self.runs > 1 else ""),
        ]
        if self.ranked_first is not None:
            lines.append(f"{pad}scores: min positive {_num(self.min_positive_score)} | max none "
                         f"{_num(self.max_none_score)} | nearest skill right on {self.ranked_first}/{self.positives} positives")
        lines += self.mistake_lines()
        reasons = Counter(e["error"] for e in self.error_reasons)
        lines += [f"{self.selector}: error on {n} quer{'y' if n == 1 else 'ies'}: {reason}" for reason, n in reasons.items()]
        return "\n".join(lines)


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _rate(part: int, whole: int) -> str:
    return "n/a (0 queries)" if not whole else f"{part / whole:.3f} ({part}/{whole})"


def evaluate(name: str, outcomes: Sequence[Outcome]) -> Report:
    """Score a selector's outcomes (see the module docstring for the buckets and rates)."""
    verdicts = Counter(o.verdict for o in outcomes)
    positives = [o for o in outcomes if o.query.expected is not None]
    nones = [o for o in outcomes if o.query.expected is None]
    right_triggers = sum(o.verdict == "correct" for o in positives)
    right_nones = sum(o.verdict == "correct" for o in nones)
    triggers = sum(o.chosen is not None for o in outcomes if o.error is None)
    decisions = [d for o in outcomes for d in o.succeeded]
    tokens = [d.prompt_tokens for d in decisions]
    report = Report(
        selector=name,
        queries=len(outcomes),
        runs=max((len(o.decisions) for o in outcomes), default=0),
        correct=verdicts["correct"],
        accuracy=_ratio(verdicts["correct"], len(outcomes)),
        positives=len(positives),
        positives_correct=right_triggers,
        positive_accuracy=_ratio(right_triggers, len(positives)),
        nones=len(nones),
        nones_correct=right_nones,
        none_accuracy=_ratio(right_nones, len(nones)),
        false_triggers=verdicts["false trigger"],
        misses=verdicts["miss"],
        wrong_skill=verdicts["wrong skill"],
        errors=verdicts["error"],
        precision=_ratio(right_triggers, triggers),
        recall=_ratio(right_triggers, len(positives)),
        mean_prompt_tokens=statistics.fmean(tokens) if tokens else None,
        median_prompt_tokens=statistics.median(tokens) if tokens else None,
        seconds_per_decision=statistics.fmean(d.seconds for d in decisions) if decisions else None,
        mistakes=[{"expected": o.query.expected, "got": o.chosen, "kind": o.query.kind, "query": o.query.query}
                  for o in outcomes if o.verdict not in ("correct", "error")],
        error_reasons=[{"query": o.query.query, "error": one_line(o.error)} for o in outcomes if o.error is not None],
    )
    if any(o.score is not None for o in outcomes):
        ranked = [o for o in positives if o.top_skill == o.query.expected and o.score is not None]
        none_scores = [o.score for o in nones if o.score is not None]
        report.ranked_first = len(ranked)
        report.min_positive_score = min((o.score for o in ranked), default=None)
        report.max_none_score = max(none_scores, default=None)
    return report


def comparison_table(reports: Sequence[Report]) -> str:
    """The main numbers of several reports side by side, one column per selector."""
    rows = [
        ("accuracy", "accuracy", ".3f"), ("must trigger", "positive_accuracy", ".3f"),
        ("must not trigger", "none_accuracy", ".3f"), ("precision", "precision", ".3f"),
        ("recall", "recall", ".3f"), ("false triggers", "false_triggers", "d"), ("misses", "misses", "d"),
        ("wrong skill", "wrong_skill", "d"), ("errors", "errors", "d"),
        ("mean prompt tokens", "mean_prompt_tokens", ",.0f"), ("seconds per decision", "seconds_per_decision", ".3f"),
    ]
    width = max(12, *(len(r.selector) for r in reports))
    lines = [f"{'':22}" + "".join(f"{r.selector:>{width + 2}}" for r in reports)]
    for label, key, spec in rows:
        lines.append(f"{label:22}" + "".join(f"{_num(getattr(r, key), spec):>{width + 2}}" for r in reports))
    return "\n".join(lines)

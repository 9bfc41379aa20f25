"""Who picks? Every selector on a catalog's test queries, each choice made first on its development queries.

Built in `notebooks/13_who_picks.ipynb`; `python -m course_utils who-picks` runs it headless and writes the
record the lesson reads. `trigger.choose_on_dev` makes every choice on development queries: the similarity
threshold (`thresholds.best_threshold`), the hybrid's k (the most correct of `trigger.K_CANDIDATES`, the smaller k
on a tie) and the gated hybrid's gate (`gating.fit_gate` at that k). The test queries are then run once through
the selectors of the comparison (`selectors.compared`), and `answer` says in plain words who should pick on the model
that ran, for which criterion, where selectors tie and what each costs; every word of it comes from the numbers.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.evaluation.outcomes import Outcome, Report
from course_utils.evaluation.selectors import REGISTRY
from course_utils.evaluation.stats import SIGNIFICANCE, Rate, mcnemar_exact
from course_utils.evaluation.trigger import DevChoices
from course_utils.selection.pick import Decision
from course_utils.skills.queries import LabelledQuery

LABELS = {name: entry.label for name, entry in REGISTRY.items()}
"""Each selector in the answer's words."""
CRITERIA = {"accuracy": ("right", lambda q: True), "positive_accuracy": ("must trigger", lambda q: q.expected),
            "none_accuracy": ("must not trigger", lambda q: q.expected is None)}
"""Each criterion of the answer: its words, and which queries it counts."""


@dataclass(frozen=True)
class Standing:
    """One criterion's answer: the best selector, those not shown worse than it, and the rest."""

    criterion: str
    best: str
    rate: Rate
    tied: tuple[tuple[str, float], ...]
    behind: tuple[tuple[str, float], ...]


def _correct(outcomes: Sequence[Outcome], counts: Any) -> list[bool]:
    return [o.verdict == "correct" for o in outcomes if counts(o.query)]


def standing(outcomes: Mapping[str, Sequence[Outcome]], criterion: str) -> Standing:
    """Who is right most often on `criterion` (a key of `CRITERIA`), and who is not shown worse (exact McNemar
    on the same queries, p ≥ `SIGNIFICANCE`)."""
    words, counts = CRITERIA[criterion]
    right = {name: _correct(found, counts) for name, found in outcomes.items()}
    best = max(right, key=lambda name: (sum(right[name]), -list(right).index(name)))
    tied, behind = [], []
    for name, answers in right.items():
        if name == best:
            continue
        b = sum(x and not y for x, y in zip(right[best], answers))
        c = sum(y and not x for x, y in zip(right[best], answers))
        p = mcnemar_exact(b, c)
        (tied if p >= SIGNIFICANCE else behind).append((name, p))
    return Standing(words, best, Rate.of(sum(right[best]), len(right[best])), tuple(tied), tuple(behind))


def _names(pairs: Sequence[tuple[str, float]]) -> str:
    named = [f"{LABELS.get(n, n)} (p = {p:.2g})" for n, p in pairs]
    return ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1] if named else ""


def standing_sentence(found: Standing, unit: str) -> str:
    rate = found.rate
    head = (f"{found.criterion.capitalize()}: {LABELS.get(found.best, found.best)}, {rate.successes} of {rate.n} "
            f"{unit} (95 % CI {rate.low:.0%}–{rate.high:.0%})")
    if not found.tied:
        return head + ", ahead of every other selector (exact McNemar p < 0.05)."
    if not found.behind:
        return head + f"; no other selector is shown worse on these queries: {_names(found.tied)}."
    return head + f"; not shown better than {_names(found.tied)}; ahead of {_names(found.behind)}."


def cheapest_of(names: Sequence[str], reports: Mapping[str, Report]) -> str:
    """The selector of `names` that reads the fewest prompt tokens a decision (the first on a tie)."""
    return min(names, key=lambda name: reports[name].mean_prompt_tokens or 0.0)


def answer(outcomes: Mapping[str, Sequence[Outcome]], reports: Mapping[str, Report], model: str,
           catalog: str) -> list[str]:
    """Who should pick on this model and catalog, in plain sentences computed from the test run."""
    overall = standing(outcomes, "accuracy")
    sentences = [f"On {model}, with the {catalog} catalog:"]
    sentences.append(standing_sentence(overall, "queries"))
    sentences.append(standing_sentence(standing(outcomes, "positive_accuracy"), "queries that need a skill"))
    sentences.append(standing_sentence(standing(outcomes, "none_accuracy"), "queries that need none"))
    contenders = [overall.best, *(name for name, _ in overall.tied)]
    cheapest = cheapest_of(contenders, reports)
    costs = "; ".join(f"{LABELS.get(n, n)} {reports[n].mean_prompt_tokens or 0:,.0f} tokens and "
                      f"{reports[n].seconds_per_decision or 0:.2f} s" for n in reports)
    sentences.append(f"Cost per decision (mean prompt tokens, seconds): {costs}.")
    if len(contenders) == 1:
        verdict = f"So on this model, let {LABELS.get(cheapest, cheapest)} pick: it is right most often."
    else:
        verdict = (f"So on this model, let {LABELS.get(cheapest, cheapest)} pick: it is the cheapest of the "
                   f"{len(contenders)} selectors that these queries cannot tell apart on being right.")
    sentences.append(verdict)
    return sentences


def outcomes_of(report: Report) -> list[Outcome]:
    """A recorded report's per-query outcomes, rebuilt from its records (each run's skill or error)."""
    return [Outcome(LabelledQuery(r["query"], r["expected"], r["kind"], r["lang"]),
                    tuple(Decision(skill, error=error) for skill, error in zip(r["runs"], r["errors"])))
            for r in report.records]


@dataclass
class Record:
    """A `who-picks` record read back: who ran, the choices made on dev, the test reports and the answer."""

    data: dict[str, Any]
    choices: DevChoices
    reports: dict[str, Report]

    @property
    def outcomes(self) -> dict[str, list[Outcome]]:
        return {name: outcomes_of(report) for name, report in self.reports.items()}

    @property
    def model(self) -> str:
        """The label of the model that made the decisions (`Backend.generation_label()` of the run)."""
        return self.data["generation_model"]

    generation_label = model

    def best(self) -> str:
        """The selector lesson 13's answer names: the cheapest of those not shown worse than the most accurate."""
        overall = standing(self.outcomes, "accuracy")
        return cheapest_of([overall.best, *(name for name, _ in overall.tied)], self.reports)


def read_record(path: str | Path) -> Record:
    """Read a record written by `python -m course_utils who-picks --json`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return Record(data, DevChoices.from_dict(data["dev_choices"]),
                  {name: Report.from_dict(r) for name, r in data.get("selectors", {}).items()})


def course_finding(records: Mapping[str, Record]) -> str:
    """One paragraph: who should pick on the recorded model, per catalog, with every selector's counts.

    The README and lesson 00 carry it; a test checks the README's copy against the records."""
    model = next(iter(records.values())).model
    parts = []
    for record in records.values():
        counts = "; ".join(f"{LABELS[name]} {report.correct}/{report.queries}"
                           + (f" ({report.errors} failed decisions)" if report.errors else "")
                           + f", declining {report.nones_correct}/{report.nones}"
                           for name, report in record.reports.items())
        parts.append(f"with the {record.data['catalog']} catalog, let {LABELS[record.best()]} pick ({counts})")
    return (f"On {model}, lesson 13's test sets answer the course's question: " + "; and ".join(parts) +
            ". Each answer is the cheapest selector that no other is shown to beat (exact McNemar, p < 0.05).")

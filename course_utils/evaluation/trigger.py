"""The trigger evaluation that `eval-trigger` and `audit` both run: build the selectors, run them, plot the scores."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from course_utils.backend.client import backend_of
from course_utils.evaluation import gating
from course_utils.evaluation.outcomes import Comparison, Outcome, Report, evaluate, paired_comparison, run_selector
from course_utils.skills.queries import LabelledQuery, load_queries
from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.who_picks import K_CANDIDATES, DevChoices, choose_on_dev
from course_utils.selection import abstain, pick

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SELECTORS = ("model", "model-abstain", "similarity", "hybrid", "gated")
WITHOUT_DEV = SELECTORS[:-1]
"""The selectors that need no development queries: the gated hybrid's gate is fitted on them (`--dev`)."""
SAMPLING_TEMPERATURE = 0.7
"""The temperature of repeated runs on a greedy backend (the local one) when no temperature is given: greedy
decoding gives the same decision every run, so repeating it would measure nothing."""


@dataclass
class SelectorSet:
    """The selectors to run, each with its runs per query, and how the model-based ones decode."""

    backend: str
    generation_model: str
    embedding_model: str
    runs: int
    decoding: str
    selectors: dict[str, tuple[Callable[[str], Any], int]] = field(default_factory=dict)
    similarity: pick.SimilaritySelector | None = None
    k: int = 3
    gate: gating.Gate | None = None

    def describe(self) -> dict[str, Any]:
        """What a report needs to say how its decisions were made: the threshold only when similarity decides
        (the hybrid uses similarity to shortlist, with no threshold), k only when the hybrid runs."""
        extra: dict[str, Any] = {"threshold": self.similarity.threshold} if "similarity" in self.selectors else {}
        if "hybrid" in self.selectors or "gated" in self.selectors:
            extra["k"] = self.k
        if self.gate is not None and "gated" in self.selectors:
            extra["gate"] = self.gate.to_dict()
        return {"backend": self.backend, "generation_model": self.generation_model,
                "embedding_model": self.embedding_model, "runs": self.runs, "decoding": self.decoding, **extra}


def build_selectors(client: Any, loader: SkillLoader, names: Sequence[str], *, k: int = 3,
                    threshold: float | None = None, runs: int | None = None,
                    temperature: float | None = None, gate: gating.Gate | None = None) -> SelectorSet:
    """The named selectors (`SELECTORS`) on `client` and `loader`.

    Runs per query default to the backend's (`Facts.runs`: 3 on Gemini, which samples, 1 where decoding is
    greedy); several runs on a greedy backend sample at `SAMPLING_TEMPERATURE`.
    Selectors are looked up on their modules at call time, so a test may replace one.
    `gated` needs `gate`, fitted on development queries (`who_picks.choose_on_dev`); with one greedy run per
    query the hybrid and the gated hybrid share each model call, as a harness running the gated hybrid makes one.
    """
    if "gated" in names and gate is None:
        raise ValueError("the gated hybrid needs its gate fitted on development queries: pass --dev FILE")
    backend = backend_of(client)
    facts = backend.facts
    model_runs = runs or facts.runs
    if temperature is None and facts.greedy:
        temperature = SAMPLING_TEMPERATURE if model_runs > 1 else facts.greedy_temperature
    decoding = ("greedy" if temperature == 0 or (temperature is None and facts.greedy)
                else f"temperature {temperature}" if temperature is not None else "the model's default temperature")
    chosen = SelectorSet(backend.name, backend.generation_label(), backend.embedding_label(), model_runs, decoding, k=k,
                         gate=gate)
    if "model" in names:
        chosen.selectors["model"] = (lambda q: pick.pick_by_model(client, loader, q, temperature=temperature),
                                     model_runs)
    if "model-abstain" in names:  # the course's recommended small-model selector (course_utils.selection.abstain)
        chosen.selectors["model-abstain"] = (lambda q: abstain.recommended(client, loader, q, temperature=temperature),
                                             model_runs)
    if {"similarity", "hybrid", "gated"} & set(names):
        chosen.similarity = pick.SimilaritySelector(client, loader, threshold=threshold, k=k)
    if "similarity" in names:
        chosen.selectors["similarity"] = (chosen.similarity, 1)  # embeddings are deterministic
    if "gated" in names:  # the hybrid asked with log-probabilities, then the gate
        confident = gating.confident_hybrid(client, loader, chosen.similarity, k=k, temperature=temperature)
        shared = gating.remembering(confident) if model_runs == 1 and "hybrid" in names else confident
        if "hybrid" in names:
            chosen.selectors["hybrid"] = (shared, model_runs)
        chosen.selectors["gated"] = (gating.gated_selector(shared, gate), model_runs)
    elif "hybrid" in names:  # the top k by similarity, then the model decides among them
        hybrid = pick.hybrid_selector(client, loader, chosen.similarity, k=k, temperature=temperature)
        chosen.selectors["hybrid"] = (hybrid, model_runs)
    return chosen


def choices_from_dev(client: Any, loader: SkillLoader, dev_file: Any, k: int | None = None,
                     progress: bool = True) -> DevChoices:
    """Lesson 13's choices made on the development queries of `dev_file`: the threshold, k (among `K_CANDIDATES`
    unless `k` is given) and the gated hybrid's gate."""
    queries = load_queries(dev_file, loader.names)
    return choose_on_dev(client, loader, queries, ks=K_CANDIDATES if k is None else (k,), progress=progress)


@dataclass
class TriggerRun:
    """Every selector's outcomes and report, and the paired comparison of each pair of selectors."""

    outcomes: dict[str, list[Outcome]]
    reports: list[Report]
    comparisons: list[Comparison]


def run_selectors(chosen: SelectorSet, queries: Sequence[LabelledQuery],
                  on_report: Callable[[Report], None] = lambda report: None, concurrency: int = 1) -> TriggerRun:
    """Run each selector over the queries (first turn only), calling `on_report` as each one finishes.

    `concurrency` decisions at once for the selectors that ask the model (`run_selector`); similarity embeds in
    this process, in milliseconds, one query at a time."""
    outcomes, reports = {}, []
    for name, (selector, runs) in chosen.selectors.items():
        at_once = 1 if name == "similarity" else concurrency
        outcomes[name] = run_selector(selector, queries, runs=runs, name=name, concurrency=at_once)
        reports.append(evaluate(name, outcomes[name]))
        on_report(reports[-1])
    comparisons = [paired_comparison(a, outcomes[a], b, outcomes[b]) for a, b in itertools.combinations(outcomes, 2)]
    return TriggerRun(outcomes, reports, comparisons)


def histogram_figure(outcomes: Sequence[Outcome], threshold: float, title: str) -> Figure:
    """Lesson 08's histogram: the top-1 scores of must-trigger and must-not-trigger queries, and the threshold.

    matplotlib is imported here, not with the module: `python -m course_utils validate` loads this module and
    never draws."""
    from matplotlib.figure import Figure

    from course_utils.evaluation.plots import score_histogram

    figure = Figure(figsize=(7, 4))
    positive = [o.score for o in outcomes if o.query.expected is not None and o.score is not None]
    none = [o.score for o in outcomes if o.query.expected is None and o.score is not None]
    score_histogram(figure.subplots(), positive, none, threshold).set_title(title)
    return figure

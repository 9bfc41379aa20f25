"""The trigger evaluation that `eval-trigger`, `audit` and `who-picks` run: choose on development queries, build the
registered selectors (`selectors.REGISTRY`), run them, plot the scores."""
from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from course_utils.backend.client import backend_of
from course_utils.evaluation import gating
from course_utils.evaluation.gating import Bin, Gate, confident_hybrid, fit_gate, gated_outcomes, reliability
from course_utils.evaluation.outcomes import Comparison, Outcome, Report, evaluate, paired_comparison, run_selector
from course_utils.evaluation.selectors import REGISTRY, Ingredients
from course_utils.selection import pick
from course_utils.selection.pick import SimilaritySelector
from course_utils.selection.thresholds import best_threshold, scored_queries
from course_utils.skills.queries import LabelledQuery
from course_utils.skills.skill import SkillLoader

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SAMPLING_TEMPERATURE = 0.7
"""The temperature of repeated runs on a greedy backend (the local one) when no temperature is given: greedy
decoding gives the same decision every run, so repeating it would measure nothing."""
K_CANDIDATES = (1, 3)
"""The shortlist sizes tried on development queries: one (the model only confirms or refuses similarity's pick)
and three (it chooses). Each hybrid decision computes its shortlist's lines, so a larger k costs seconds too."""


@dataclass(frozen=True)
class Options:
    """How one trigger evaluation builds its selectors: similarity's threshold (None: the backend's), the hybrid's
    k, runs per query and temperature (None: the backend's), the gate and the development queries, if any."""

    k: int = 3
    threshold: float | None = None
    runs: int | None = None
    temperature: float | None = None
    gate: Gate | None = None
    dev: Sequence[LabelledQuery] = ()


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
        """What a report needs to say how its decisions were made: each setting only when a selector that runs
        reads it (the threshold when similarity decides, k when the hybrid runs, the gate when it gates)."""
        read = {key for name in self.selectors for key in REGISTRY[name].reports}
        values = {"threshold": lambda: self.similarity.threshold, "k": lambda: self.k,
                  "gate": lambda: self.gate.to_dict()}
        extra = {key: value() for key, value in values.items()
                 if key in read and (key != "gate" or self.gate is not None)}
        return {"backend": self.backend, "generation_model": self.generation_model,
                "embedding_model": self.embedding_model, "runs": self.runs, "decoding": self.decoding, **extra}


def build_selectors(client: Any, loader: SkillLoader, names: Sequence[str], options: Options | None = None,
                    **changes: Any) -> SelectorSet:
    """The named selectors (`selectors.REGISTRY`, in its order) on `client` and `loader`, built with `options`
    and `changes` to its fields (`build_selectors(client, loader, ["hybrid"], k=4)`).

    Runs per query default to the backend's (`Facts.runs`: 3 on Gemini, which samples, 1 where decoding is
    greedy); several runs on a greedy backend sample at `SAMPLING_TEMPERATURE`. A selector that embeds only
    (no model) runs once: embeddings are deterministic.
    """
    options = replace(options or Options(), **changes)
    backend = backend_of(client)
    facts = backend.facts
    runs = options.runs or facts.runs
    temperature = options.temperature
    if temperature is None and facts.greedy:
        temperature = SAMPLING_TEMPERATURE if runs > 1 else facts.greedy_temperature
    decoding = ("greedy" if temperature == 0 or (temperature is None and facts.greedy)
                else f"temperature {temperature}" if temperature is not None else "the model's default temperature")
    made = Ingredients(client, loader, tuple(names), options.k, options.threshold, temperature, runs, options.gate,
                       options.dev)
    chosen = SelectorSet(backend.name, backend.generation_label(), backend.embedding_label(), runs, decoding,
                         k=options.k, gate=options.gate)
    for name, entry in REGISTRY.items():
        if name in names:
            chosen.selectors[name] = (entry.build(made), runs if entry.model else 1)
    chosen.similarity = made.shared.get("similarity")
    return chosen


@dataclass
class DevChoices:
    """What `choose_on_dev` chose, and the development reports it chose on."""

    threshold: float
    k: int
    gate: Gate
    similarity: Report
    hybrids: dict[int, Report]
    gated: Report
    reliability: list[Bin]

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "k": self.k, "gate": self.gate.to_dict(),
                "gate_rule": self.gate.describe(), "similarity": self.similarity.to_dict(),
                "hybrids": {str(k): r.to_dict() for k, r in self.hybrids.items()},
                "gated": self.gated.to_dict(), "reliability": [vars(b) for b in self.reliability]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DevChoices:
        return cls(float(data["threshold"]), int(data["k"]), Gate.from_dict(data["gate"]),
                   Report.from_dict(data["similarity"]),
                   {int(k): Report.from_dict(r) for k, r in data["hybrids"].items()},
                   Report.from_dict(data["gated"]), [Bin(**b) for b in data["reliability"]])


def choose_on_dev(client: Any, loader: SkillLoader, queries: Sequence[LabelledQuery],
                  similarity: SimilaritySelector | None = None, ks: Sequence[int] = K_CANDIDATES,
                  progress: bool = True) -> DevChoices:
    """Every choice of an evaluation, made on development `queries` (one greedy run per query).

    The threshold is the one that gets the most development queries right; k the most correct hybrid (the
    smaller k on a tie: fewer prompt tokens); the gate is fitted on that hybrid's decisions.
    """
    similarity = similarity or SimilaritySelector(client, loader)
    scored = scored_queries(queries, similarity.scores([q.query for q in queries]), similarity.names)
    threshold = best_threshold(scored)[0]
    at_threshold = copy.copy(similarity)
    at_threshold.threshold = threshold
    similar = evaluate("similarity", run_selector(at_threshold, queries, name="similarity", progress=progress))
    outcomes = {k: run_selector(confident_hybrid(client, loader, similarity, k), queries, name=f"hybrid k={k}",
                                progress=progress) for k in ks}
    hybrids = {k: evaluate(f"hybrid k={k}", found) for k, found in outcomes.items()}
    k = max(ks, key=lambda size: (hybrids[size].correct, -size))
    gate = fit_gate(outcomes[k])
    gated = evaluate("gated", gated_outcomes(outcomes[k], gate))
    return DevChoices(threshold, k, gate, similar, hybrids, gated, reliability(outcomes[k], gate))


def chosen_on_dev(options: Options, choices: DevChoices, dev: Sequence[LabelledQuery]) -> Options:
    """`options` with what `choices` chose on `dev` (k, the gate, and the threshold unless `options` sets one) and
    the development queries themselves, which a selector that fits on them reads (`Entry.dev`, the scorer)."""
    threshold = choices.threshold if options.threshold is None else options.threshold
    return replace(options, k=choices.k, threshold=threshold, gate=choices.gate, dev=tuple(dev))


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
        at_once = concurrency if REGISTRY[name].model else 1
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

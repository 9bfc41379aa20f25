"""The scripted world the solved lesson 09 runs on in its test: the workplace catalog on the stand-in backend
(`course_utils.lessons.scripted`), with a plan for each grading query and each query of the check's real half.

A plan says which skills are nearest the query (so the scripted embeddings give the similarity selector and
the hybrid's shortlist) and what the scripted model calls: the first skill of its preferences that it is
offered, or "none". The plans make every selector wrong somewhere, for the reasons the lesson names:

- similarity alone ranks a look-alike first, falls under its threshold on a real request, or clears it on
  a near-miss;
- the model alone, reading the whole catalog, is drawn to a look-alike that the shortlist leaves out (the
  hybrid then gets it right), or triggers on a near-miss;
- the hybrid cannot choose a skill its shortlist lacks (the shortlist is a ceiling).

`implied_outcomes()` is what the plans imply for the three selectors the lesson grades, decided here without
any request, so that the test can compare the lesson's printed grade with numbers it did not read from it.
`install()` is what the kernel's IPython startup file calls: `make_client` then returns a stand-in client.
A query with no plan (the lesson's first cells read the English test set) gets cosine 0 with every skill, as the
stand-in gives any text it was not scripted for, and a text answer from the model: the test claims nothing there.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from course_utils.evaluation.outcomes import Outcome
from course_utils.lessons.exercises.world import CHECK_QUERIES
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.lessons.scripted import SCRIPTED_FACTS, ScriptedBackend
from course_utils.selection.pick import Decision
from course_utils.skills.skill import SkillLoader

WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace")
GRADING = load_queries(DATA_DIR / "hybrid_grading.yaml", WORKPLACE.names)
NONE = "none"
"""The scripted model's decline: a call with "none" where the tool's enum lists it (model-abstain), else a text
answer (a tool whose name is any string, as the hybrid's, is declined in text, as its instruction asks)."""
DECAY = 0.2
"""The i-th nearest skill of a plan (from 0) scores top × (1 − DECAY × i)."""
REST = 0.02
"""The cosine of every skill a plan does not name."""
THRESHOLD = SCRIPTED_FACTS.threshold
K = 3
"""The k the lesson grades the hybrid with."""


@dataclass(frozen=True)
class Plan:
    """One query: the skills nearest it, nearest first, the nearest one's cosine, and the model's preferences."""

    nearest: tuple[str, ...]
    top: float
    prefers: tuple[str, ...]

    def scores(self) -> tuple[float, ...]:
        """The query's cosine with each workplace skill, in catalog order."""
        named = {name: self.top * (1 - DECAY * i) for i, name in enumerate(self.nearest)}
        return tuple(named.get(name, REST) for name in WORKPLACE.names)

    def shortlist(self, k: int = K) -> list[str]:
        """The k nearest skills, nearest first."""
        return [WORKPLACE.names[i] for i in np.argsort(-np.asarray(self.scores()), kind="stable")[:k]]

    def calls(self, offered: Sequence[str]) -> str:
        """What the scripted model calls when offered these skills: its first preference among them, else none."""
        return next((p for p in self.prefers if p == NONE or p in offered), NONE)


def plan(nearest: str, top: float, prefers: str) -> Plan:
    return Plan(tuple(nearest.split()), top, tuple(prefers.split()))


# One plan per grading query, in the file's order: 12 English, then the same 12 in French.
GRADING_PLANS = (
    # csv-data-profiler: right everywhere.
    plan("csv-data-profiler invoice-matcher expense-report-checker meeting-notes-summarizer",
         0.62, "csv-data-profiler"),
    # contract-clause-reviewer: right everywhere.
    plan("contract-clause-reviewer invoice-matcher hr-policy-qa expense-report-checker",
         0.58, "contract-clause-reviewer"),
    # email-tone-rewriter ranks second: similarity alone picks the wrong skill, the model does not.
    plan("meeting-notes-summarizer email-tone-rewriter invoice-matcher it-helpdesk-triage",
         0.54, "email-tone-rewriter"),
    # incident-postmortem-writer: right everywhere.
    plan("incident-postmortem-writer it-helpdesk-triage meeting-notes-summarizer presentation-outline-builder", 0.64,
         "incident-postmortem-writer"),
    # onboarding-checklist ranks fourth: out of the shortlist, so the hybrid declines; the model alone is right.
    plan("it-helpdesk-triage hr-policy-qa job-description-writer onboarding-checklist", 0.52, "onboarding-checklist"),
    # okr-drafter: the model alone is drawn to it-helpdesk-triage (support, response time), left out of the shortlist.
    plan("okr-drafter presentation-outline-builder meeting-notes-summarizer hr-policy-qa", 0.57,
         "it-helpdesk-triage okr-drafter"),
    # presentation-outline-builder: right everywhere.
    plan("presentation-outline-builder meeting-notes-summarizer okr-drafter email-tone-rewriter", 0.60,
         "presentation-outline-builder"),
    # job-description-writer ranks first, under the threshold: similarity alone misses it.
    plan("job-description-writer onboarding-checklist hr-policy-qa leave-balance-calculator",
         0.46, "job-description-writer"),
    # near-miss (approve a claim in the finance system): every selector triggers expense-report-checker.
    plan("expense-report-checker invoice-matcher hr-policy-qa csv-data-profiler", 0.63, "expense-report-checker"),
    # near-miss (order a monitor): similarity alone triggers it-helpdesk-triage, the model declines.
    plan("it-helpdesk-triage onboarding-checklist invoice-matcher expense-report-checker", 0.55, NONE),
    # near-miss (move a meeting): under the threshold; the model triggers meeting-notes-summarizer, shortlisted too.
    plan("meeting-notes-summarizer presentation-outline-builder hr-policy-qa leave-balance-calculator", 0.48,
         "meeting-notes-summarizer"),
    # off-topic (houseplants): every selector declines.
    plan("email-tone-rewriter meeting-notes-summarizer okr-drafter hr-policy-qa", 0.20, NONE),
    # --- French
    plan("csv-data-profiler invoice-matcher expense-report-checker meeting-notes-summarizer",
         0.51, "csv-data-profiler"),
    # contract-clause-reviewer under the threshold in French: similarity alone misses it.
    plan("contract-clause-reviewer hr-policy-qa invoice-matcher expense-report-checker",
         0.44, "contract-clause-reviewer"),
    plan("email-tone-rewriter meeting-notes-summarizer invoice-matcher it-helpdesk-triage",
         0.53, "email-tone-rewriter"),
    plan("incident-postmortem-writer it-helpdesk-triage meeting-notes-summarizer presentation-outline-builder", 0.61,
         "incident-postmortem-writer"),
    # onboarding-checklist first but under the threshold: similarity alone misses it; the models are right.
    plan("onboarding-checklist job-description-writer it-helpdesk-triage hr-policy-qa", 0.49, "onboarding-checklist"),
    plan("okr-drafter presentation-outline-builder meeting-notes-summarizer hr-policy-qa", 0.55,
         "it-helpdesk-triage okr-drafter"),
    plan("presentation-outline-builder meeting-notes-summarizer okr-drafter email-tone-rewriter", 0.58,
         "presentation-outline-builder"),
    plan("job-description-writer onboarding-checklist hr-policy-qa leave-balance-calculator",
         0.52, "job-description-writer"),
    # near-miss: similarity alone triggers expense-report-checker; the model declines.
    plan("expense-report-checker invoice-matcher hr-policy-qa csv-data-profiler", 0.59, NONE),
    # near-miss under the threshold: the models trigger it-helpdesk-triage, which is shortlisted.
    plan("it-helpdesk-triage onboarding-checklist invoice-matcher expense-report-checker", 0.47, "it-helpdesk-triage"),
    # near-miss: the model alone is drawn to leave-balance-calculator, ranked fourth; on the shortlist it declines.
    plan("meeting-notes-summarizer presentation-outline-builder hr-policy-qa leave-balance-calculator", 0.45,
         "leave-balance-calculator none"),
    plan("email-tone-rewriter meeting-notes-summarizer okr-drafter hr-policy-qa", 0.22, NONE),
)
CHECK_PLANS = {
    # The check's real half (exercises.world.CHECK_QUERIES): one query that triggers a skill, one the model declines.
    CHECK_QUERIES[0][0]: plan("leave-balance-calculator hr-policy-qa onboarding-checklist expense-report-checker", 0.64,
                              "leave-balance-calculator"),
    CHECK_QUERIES[1][0]: plan("leave-balance-calculator hr-policy-qa it-helpdesk-triage onboarding-checklist", 0.58,
                              NONE),
}
assert len(GRADING_PLANS) == len(GRADING), "one plan per grading query"
PLANS = {**{q.query: p for q, p in zip(GRADING, GRADING_PLANS)}, **CHECK_PLANS}


def script(query: str, offered: list[str], functions: list[str], none_listed: bool = True) -> str | None:
    """The stand-in's script: the plan's choice among the skills offered (an unplanned query gets a text answer);
    its decline is a text answer unless the request's tool lists "none" (`none_listed`)."""
    choice = PLANS[query].calls(offered) if query in PLANS else None
    return None if choice == NONE and not none_listed else choice


class StandIn(ScriptedBackend):
    """The scripted backend, its script told whether the request it answers lists "none" in a tool's enum."""

    none_listed = False

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(":generateContent"):
            self.none_listed = NONE in _enum_values(json.loads(request.content).get("tools") or [])
        return super().handle(request)


def _enum_values(value: object) -> list[str]:
    """Every value of every `enum` inside a JSON value."""
    if isinstance(value, dict):
        return [*value.get("enum", []), *(v for item in value.values() for v in _enum_values(item))]
    return [v for item in value for v in _enum_values(item)] if isinstance(value, list) else []


def stand_in() -> ScriptedBackend:
    """The stand-in backend over the workplace catalog, its cosines and decisions planned above."""
    backend: StandIn | None = None

    def decide(query: str, offered: list[str], functions: list[str]) -> str | None:
        return script(query, offered, functions, backend.none_listed)

    backend = StandIn(list(WORKPLACE.skills.values()), {q: p.scores() for q, p in PLANS.items()}, decide,
                      generate_delay=0.002, embed_delays=(0.002,))
    return backend


BANNER = ("Backend: the scripted stand-in of tests/helpers/lesson09_stand_in.py (a real genai.Client over httpx's "
          "MockTransport; scripted decisions and embeddings, no model).")


def make_client(backend: str = "auto", *, model_file: str | None = None, verbose: bool = True):
    """`course_utils.backend.client.make_client` as the test's kernel sees it: a stand-in client, whatever is asked."""
    if verbose:
        print(BANNER)
    return stand_in().client()


def install(figures: str | Path) -> None:
    """Called by the kernel's IPython startup file, before the lesson's first cell: `make_client` returns a stand-in
    client, and figures go to `figures` (so the stand-in's numbers never replace a real run's in build/figures/)."""
    import course_utils.backend.client as client_module
    import course_utils.evaluation.plots as plots

    client_module.make_client = make_client
    save_figure = plots.save_figure

    def save_aside(figure, name, folder=Path(figures)):
        return save_figure(figure, name, folder)

    plots.save_figure = save_aside


# ----------------------------------------------------------------- what the plans imply


def _decision(choice: str) -> Decision:
    return Decision(None if choice == NONE else choice)


def implied_outcomes() -> dict[str, list[Outcome]]:
    """Each graded selector's decisions on the English grading queries (the half the lesson grades on) as the plans
    imply them, named as the lesson names them.

    model alone is offered the whole catalog; similarity alone takes the nearest skill when it reaches the
    threshold; the tested hybrid offers the model the K nearest.
    """
    def similarity(p: Plan) -> Decision:
        nearest = p.shortlist(1)[0]
        return Decision(nearest if p.scores()[WORKPLACE.names.index(nearest)] >= THRESHOLD else None)

    deciders = {
        "model alone": lambda p: _decision(p.calls(WORKPLACE.names)),
        "similarity alone": similarity,
        "tested hybrid k=3": lambda p: _decision(p.calls(p.shortlist(K))),
    }
    return {name: [Outcome(q, (decide(p),)) for q, p in zip(GRADING, GRADING_PLANS) if q.lang == "en"]
            for name, decide in deciders.items()}


def implied_check_lines(label: str) -> list[str]:
    """The lines the check's real half prints for the planned CHECK_QUERIES, up to the returned skill."""
    lines = []
    for query, k in CHECK_QUERIES:
        p = PLANS[query]
        shortlist = p.shortlist(k)
        offered = [n for n in WORKPLACE.names if n in shortlist]  # the check lists them in catalog order
        returned = _decision(p.calls(shortlist)).skill
        lines.append(f"  {label}, k={k}: offered {', '.join(offered)}; you returned {returned}")
    return lines

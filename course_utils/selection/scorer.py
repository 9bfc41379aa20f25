"""The model as a scorer: a fused ranking shortlists (`selection.shortlist`), the model answers "yes" or "no"
for each shortlisted skill, and a logistic over those probabilities and the ranking's scores decides.

Asked to write a call, a small model offered a tool nearly always calls one. Asked whether one skill fits, it
answers with one token, and the log-probabilities of that token (Gemini's `response_logprobs`) say how sure it
is. Each shortlisted skill gets its own probability; the most probable one is picked when a logistic fitted on
labelled queries (`Decider`) says it is more likely right than wrong, else no skill is. No text is sampled beyond
the one token.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from google import genai
from google.genai import types

from course_utils.backend.client import GENERATION_MODEL
from course_utils.selection.pick import Decision
from course_utils.selection.shortlist import Shortlist
from course_utils.skills.skill import Skill, SkillLoader

SCORER_INSTRUCTION = ("You decide whether one skill should handle a user's request. A skill fits only when its "
                      "description covers what the user asks for. Answer with one word: yes or no.")
"""What the model is asked, before the skill it is asked about."""

TOP_CANDIDATES = 20
"""Alternatives asked for at the answer token: Gemini's maximum, enough to hold both "yes" and "no"."""

def skill_instruction(skill: Skill) -> str:
    """The system instruction for one skill: the same for every request, so each skill's prompt prefix is
    computed once and reused (the local backend saves it to disk; Gemini may cache it)."""
    return f"{SCORER_INSTRUCTION}\n\nSkill: {skill.name}\nDescription: {skill.description}"


def request_turn(query: str) -> types.Content:
    """The user turn: the request, then the question."""
    text = f"Request: {query}\n\nShould this skill handle the request? Answer yes or no."
    return types.Content(role="user", parts=[types.Part(text=text)])


def yes_probability(response: types.GenerateContentResponse) -> float | None:
    """P("yes") renormalised over "yes" and "no" at the first answer token; None without log-probabilities."""
    candidate = response.candidates[0] if response.candidates else None
    result = candidate.logprobs_result if candidate is not None else None
    if result is None or not result.top_candidates:
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for option in result.top_candidates[0].candidates or []:
        word = (option.token or "").strip().lower()
        if word in mass and option.log_probability is not None:
            mass[word] += math.exp(option.log_probability)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total else None


@dataclass(frozen=True)
class Score:
    """One skill's probability of fitting a request, and what asking cost."""

    skill: str
    probability: float | None
    prompt_tokens: int


def score_skill(client: genai.Client, skill: Skill, query: str, model: str = GENERATION_MODEL) -> Score:
    """Ask the model whether `skill` fits `query`: one answer token, read as a probability."""
    config = types.GenerateContentConfig(system_instruction=skill_instruction(skill), max_output_tokens=1,
                                         temperature=0, response_logprobs=True, logprobs=TOP_CANDIDATES)
    response = client.models.generate_content(model=model, contents=[request_turn(query)], config=config)
    usage = response.usage_metadata
    return Score(skill.name, yes_probability(response), (usage and usage.prompt_token_count) or 0)


FEATURES = ("the best P(yes)", "its lead over the next", "the shortlist's first fused score",
            "its lead over the next", "the most probable skill is the shortlist's first")
"""What the decision reads of a shortlist, in this order: the model's scores and the ranking's."""


def decision_features(scores: Sequence[Score], fused: Sequence[float]) -> tuple[list[float], str] | None:
    """`FEATURES` of a shortlist (its model scores and fused ranking scores, nearest first), and its most probable
    skill (ties: the nearer); None when the model gave no probability."""
    known = [s for s in scores if s.probability is not None]
    if not known:
        return None
    ranked = sorted(known, key=lambda s: -s.probability)
    best = ranked[0].probability
    runner_up = ranked[1].probability if len(ranked) > 1 else 0.0
    first, second = fused[0], fused[1] if len(fused) > 1 else 0.0
    return [best, best - runner_up, first, first - second, float(ranked[0].skill == scores[0].skill)], ranked[0].skill


@dataclass(frozen=True)
class Decider:
    """P(the most probable shortlisted skill is the right one) = sigmoid(w0 + w · `FEATURES`), fitted on labelled
    queries; the skill is picked when that probability reaches `cutoff`, else no skill is."""

    weights: tuple[float, ...]
    cutoff: float = 0.5

    def probability(self, features: Sequence[float]) -> float:
        return 1 / (1 + math.exp(-(self.weights[0] + sum(w * x for w, x in zip(self.weights[1:], features)))))

    def decide(self, scores: Sequence[Score], fused: Sequence[float]) -> str | None:
        found = decision_features(scores, fused)
        return found[1] if found is not None and self.probability(found[0]) >= self.cutoff else None


COURSE_DECIDER = Decider((-8.369181, 6.610511, 16.022752, 0.207783, 0.073568, 1.615805))
"""The decision fitted on the course's three catalogs' development queries together (`python -m scripts.lab
scorer-dev --report` fits it from `docs/lab/records/scorer_dev.jsonl`, Qwen2.5-Coder-1.5B): the selector's decision
on a catalog nobody labelled."""


SHORTLIST_K = 3
"""The skills the scorer asks about: the k its decision was fitted at (its features read the first two)."""

CASCADE_LEAD = 4.0
"""When the shortlist's first skill leads the second by this much fused score (standard deviations, summed over
the three signals), the ranking decides alone and the model is not asked. Chosen on the dev sets: the same
number right as the model on every query, with a third of the queries decided without it (docs/lab/scorer.md)."""


class ScoringSelector:
    """Shortlist the `k` best-ranked skills for the query, score each with the model, and let `decider` decide.
    A selector `(query) -> Decision`; its `top_k` holds each shortlisted skill's P(yes), nearest skill first, and
    its `pick_probability` the decider's probability that the most probable skill is right. A shortlist whose
    first skill leads by `cascade` or more is decided by the ranking alone (no model call, no `top_k`)."""

    def __init__(self, client: genai.Client, loader: SkillLoader, shortlist: Shortlist | None = None,
                 k: int = SHORTLIST_K, decider: Decider | None = None, cascade: float | None = CASCADE_LEAD) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}: a shortlist of no skill leaves nothing to score")
        self.client, self.loader, self.k, self.model, self.cascade = client, loader, k, GENERATION_MODEL, cascade
        self.decider = COURSE_DECIDER if decider is None else decider
        self.shortlist = Shortlist.of(client, loader) if shortlist is None else shortlist

    def shortlisted(self, query: str) -> tuple[list[Score], list[float]]:
        """The shortlist's model scores and fused ranking scores, nearest skill first."""
        return self._asked(query, self.shortlist.top(query, self.k))

    def _asked(self, query: str, top: list[tuple[str, float]]) -> tuple[list[Score], list[float]]:
        return ([score_skill(self.client, self.loader.skills[name], query, self.model) for name, _ in top],
                [fused for _, fused in top])

    def __call__(self, query: str) -> Decision:
        start = time.perf_counter()
        top = self.shortlist.top(query, self.k)
        if self.cascade is not None and len(top) > 1 and top[0][1] - top[1][1] >= self.cascade:
            return Decision(top[0][0], 0, time.perf_counter() - start)
        scores, fused = self._asked(query, top)
        found = decision_features(scores, fused)
        error = None if found else "the backend returned no log-probabilities: the scorer needs response_logprobs"
        best = found[0][0] if found else None
        return Decision(self.decider.decide(scores, fused), sum(s.prompt_tokens for s in scores),
                        time.perf_counter() - start, score=best,
                        pick_probability=self.decider.probability(found[0]) if found else None,
                        top_k=tuple((s.skill, s.probability or 0.0) for s in scores), error=error)

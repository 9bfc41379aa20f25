"""The model as a scorer: a fused ranking shortlists (`selection.shortlist`), the model answers "yes" or "no"
for each shortlisted skill, and the probability of "yes" decides.

Asked to write a call, a small model offered a tool nearly always calls one. Asked whether one skill fits, it
answers with one token, and the log-probabilities of that token (Gemini's `response_logprobs`) say how sure it
is. Each shortlisted skill gets its own probability; the best one is picked if it reaches the threshold, else
no skill is. No text is sampled beyond the one token.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from google import genai
from google.genai import types
from tqdm.auto import tqdm

from course_utils.backend.client import GENERATION_MODEL
from course_utils.selection.pick import Decision
from course_utils.selection.shortlist import Shortlist
from course_utils.skills.queries import LabelledQuery
from course_utils.skills.skill import Skill, SkillLoader

SCORER_INSTRUCTION = ("You decide whether one skill should handle a user's request. A skill fits only when its "
                      "description covers what the user asks for. Answer with one word: yes or no.")
"""What the model is asked, before the skill it is asked about."""

TOP_CANDIDATES = 20
"""Alternatives asked for at the answer token: Gemini's maximum, enough to hold both "yes" and "no"."""

DEFAULT_THRESHOLD = 0.5
"""With nothing fitted: pick when the model thinks "yes" more likely than "no"."""

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
MARGINS = (-1.0, -0.05, 0.0, 0.025, 0.05, 0.075, 0.1)
"""The grid `fit_on_dev` searches, with both ways of choosing the candidate (`Rule.first`): the candidate's P(yes),
and its lead over the best other one (a negative margin lets the shortlist's first skill trail another; -1 ignores
the others)."""


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


@dataclass(frozen=True)
class Rule:
    """Which shortlisted skill is the candidate, and when it is picked.

    The candidate is the shortlist's first skill (`first`) or the most probable one (ties: the nearer). It is
    picked when its P(yes) reaches `threshold` and it leads every other shortlisted skill by at least `margin`;
    else no skill is. A request near several skills' domains but served by none scores them all alike."""

    threshold: float = DEFAULT_THRESHOLD
    margin: float = 0.0
    first: bool = False

    def __str__(self) -> str:
        candidate = "the shortlist's first" if self.first else "the most probable"
        lead = "" if self.margin <= -1 else f", leading the others by {self.margin:+g}"
        return f"{candidate} at P(yes) ≥ {self.threshold:g}{lead}"

    def decide(self, scores: Sequence[Score]) -> str | None:
        known = [s for s in scores if s.probability is not None]
        if not known:
            return None
        candidate = known[0] if self.first else max(known, key=lambda s: s.probability)
        others = [s.probability for s in known if s is not candidate]
        lead = candidate.probability - max(others, default=0.0)
        return candidate.skill if candidate.probability >= self.threshold and lead >= self.margin else None


def fit_on_dev(scored: Sequence[tuple[Sequence[Score], str | None]]) -> Rule:
    """The rule of the grid right on the most development queries, each given as (its shortlist's scores, the
    expected skill or None); ties go to the most probable candidate, the margin nearest 0, then the smaller
    threshold: the rule closest to the one with nothing fitted."""
    def correct(rule: Rule) -> int:
        return sum(rule.decide(scores) == expected for scores, expected in scored)

    grid = [Rule(t, m, first) for first in (False, True) for m in MARGINS for t in THRESHOLDS]
    return max(grid, key=lambda rule: (correct(rule), -rule.first, -abs(rule.margin), -rule.threshold))


COURSE_RULE = Rule(threshold=0.6, margin=0.025, first=True)
"""The rule `fit_on_dev` gives on the course's three catalogs' development queries together (the record
`docs/lab/records/scorer_dev.jsonl`, Qwen2.5-Coder-1.5B): the selector's rule on a catalog nobody labelled."""


class ScoringSelector:
    """Shortlist the `k` best-ranked skills for the query, score each with the model, and let `rule` decide.
    A selector `(query) -> Decision`; its `top_k` holds each shortlisted skill's P(yes), nearest skill first."""

    def __init__(self, client: genai.Client, loader: SkillLoader, shortlist: Shortlist | None = None,
                 k: int = 3, rule: Rule | None = None, model: str = GENERATION_MODEL) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}: a shortlist of no skill leaves nothing to score")
        self.client, self.loader, self.k, self.model = client, loader, k, model
        self.rule = COURSE_RULE if rule is None else rule
        self.shortlist = Shortlist.of(client, loader) if shortlist is None else shortlist

    def scores(self, query: str) -> list[Score]:
        """The shortlist's scores, nearest skill first."""
        names = [name for name, _ in self.shortlist.top(query, self.k)]
        return [score_skill(self.client, self.loader.skills[name], query, self.model) for name in names]

    def fit(self, queries: Sequence[LabelledQuery]) -> Rule:
        """Fit the rule on labelled development queries (`fit_on_dev`) and keep it. A query expecting a skill the
        model may not choose expects none, as the harness decides."""
        scored = [(self.scores(q.query), q.expected if q.expected in self.shortlist.names else None)
                  for q in tqdm(queries, desc="scoring dev queries", unit="query", leave=False)]
        self.rule = fit_on_dev(scored)
        return self.rule

    def __call__(self, query: str) -> Decision:
        start = time.perf_counter()
        scores = self.scores(query)
        known = [s.probability for s in scores if s.probability is not None]
        error = None if known else "the backend returned no log-probabilities: the scorer needs response_logprobs"
        return Decision(self.rule.decide(scores), sum(s.prompt_tokens for s in scores), time.perf_counter() - start,
                        score=max(known, default=None), pick_probability=max(known, default=None),
                        top_k=tuple((s.skill, s.probability or 0.0) for s in scores), error=error)

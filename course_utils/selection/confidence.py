"""The model's own confidence at its decision point: the probability that it declines.

Lesson 08 asks of cosine scores whether some threshold separates must-trigger from must-not-trigger
queries. This module asks the same of the model. `pick_by_model(..., logprobs=N)` asks the backend for
each answer token's log-probability and its N most likely alternatives (Gemini's `response_logprobs` and
`logprobs`; the local backend serves the same fields from llama.cpp). The answer turns into a call or a
text answer at one token, its decision point (where it is, the backend's facts say: `backend.facts.DecisionPoint`);
the share of probability on the text branch there is the model's probability of declining.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google import genai

from course_utils.backend.client import backend_of
from course_utils.backend.facts import GRAMMAR_DECISION_POINT, DecisionPoint
from course_utils.skills.queries import LabelledQuery
from course_utils.selection.pick import pick_by_model
from course_utils.skills.skill import SkillLoader

TOP_CANDIDATES = 20
"""Alternatives asked for per token: Gemini's maximum, enough to hold both branches at the decision point."""


def decline_probability(response: Any, point: DecisionPoint = GRAMMAR_DECISION_POINT) -> float | None:
    """P(text answer) at the decision point `point` (by default the local grammar's: `{"` then `name` or `text`),
    renormalised over the two branches; None when the response carries no log-probabilities (a backend may return
    none) or has no decision point: its answer does not open with `point.opening` followed by one of its words.
    An answer that opens otherwise (a server's own tool-call format such as Qwen's `<tool_call>` tags, a plain text
    reply) has none, even if the word comes later.

    A branch missing from the top candidates gets probability 0: it was less likely than all of them.
    """
    candidate = response.candidates[0] if response.candidates else None
    result = candidate.logprobs_result if candidate is not None else None
    if result is None or not result.chosen_candidates:
        return None
    branches = {point.call_word: "call", point.text_word: "decline"}
    opened = ""
    for chosen, top in zip(result.chosen_candidates, result.top_candidates or []):
        token = (chosen.token or "").strip()
        if opened == point.opening and token in branches:
            mass = dict.fromkeys(branches.values(), 0.0)
            for option in top.candidates or []:
                branch = branches.get((option.token or "").strip())
                if branch and option.log_probability is not None:
                    mass[branch] += math.exp(option.log_probability)
            total = sum(mass.values())
            return mass["decline"] / total if total else None
        opened += token
        if not point.opening.startswith(opened):
            return None  # not the expected answer: the word further on would give a wrong number
    return None


def decline_probabilities(client: genai.Client, loader: SkillLoader, queries: Sequence[LabelledQuery],
                          progress: Callable[[Iterable], Iterable] = iter) -> list[float | None]:
    """The model's probability of declining for each query (the plain selector, `pick_by_model`, first turn only).

    Each answer is cut at its decision point where the backend's facts give that cap (the local backend's second
    token: the rest of a call is about 17 more tokens, each a forward pass); Gemini's answer is left uncapped (its
    thinking tokens count against a cap). A backend whose decision point is not known (an OpenAI-compatible
    server answers in its model's own tool-call format), or whose answers carry no log-probabilities, is not asked:
    every probability is None.
    """
    facts = backend_of(client).facts
    point = facts.decision_point
    if point is None or not facts.logprobs:
        return [None for _ in queries]
    return [decline_probability(pick_by_model(client, loader, q.query, max_output_tokens=point.tokens,
                                              logprobs=TOP_CANDIDATES).raw, point)
            for q in progress(queries)]


def roc_auc(lower: Sequence[float], higher: Sequence[float]) -> float:
    """The area under the ROC curve: the chance that a score of `higher` (the group that should score
    higher) beats one of `lower`, ties counting half. 1.0 separates the groups, 0.5 is a coin.
    Raises ValueError when a group is empty."""
    if not lower or not higher:
        raise ValueError("need at least one score in each group")
    wins = sum((h > low) + 0.5 * (h == low) for low in lower for h in higher)
    return wins / (len(lower) * len(higher))

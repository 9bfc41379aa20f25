"""The model's own confidence at its decision point: the probability that it declines.

Lesson 08 asks of cosine scores whether some threshold separates must-trigger from must-not-trigger
queries. This module asks the same of the model. `pick_by_model(..., logprobs=N)` asks the backend for
each answer token's log-probability and its N most likely alternatives (Gemini's `response_logprobs` and
`logprobs`; the local backend serves the same fields from llama.cpp). The answer turns into a call or a
text answer at one token; the share of probability on the text branch there is the model's probability
of declining.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google import genai

from course_utils.backend.client import backend_name
from course_utils.queries import LabelledQuery
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader

TOP_CANDIDATES = 20
"""Alternatives asked for per token: Gemini's maximum, enough to hold both branches at the decision point."""
BRANCHES = {"name": "call", "text": "decline"}
"""The local backend's answer opens `{"name": …` (a call) or `{"text": …` (a text answer): the decision point
is the answer token right after that opening `{"`, when it is one of these words."""
OPENING = '{"'
"""What the local answer writes before its decision point. An answer that opens otherwise (a server's own
tool-call format such as Qwen's `<tool_call>` tags, a plain text reply) has no decision point here, even if the
word "name" comes later."""
DECISION_POINT_TOKENS = 2
"""The local answer reaches its decision point at its second token (``{"``, then ``name`` or ``text``): greedy
decoding makes those tokens and their probabilities the same whatever the cap, so `decline_probabilities` stops
the answer there instead of decoding the rest of the call (about 17 tokens, each a forward pass)."""


def decline_probability(response: Any) -> float | None:
    """P(text answer) at the decision point, renormalised over the two branches; None when the response
    carries no log-probabilities (a backend may return none) or has no decision point: its answer does not open
    with `OPENING` followed by a word of `BRANCHES`.

    A branch missing from the top candidates gets probability 0: it was less likely than all of them.
    """
    candidate = response.candidates[0] if response.candidates else None
    result = candidate.logprobs_result if candidate is not None else None
    if result is None or not result.chosen_candidates:
        return None
    opened = ""
    for chosen, top in zip(result.chosen_candidates, result.top_candidates or []):
        token = (chosen.token or "").strip()
        if opened == OPENING and token in BRANCHES:
            mass = dict.fromkeys(BRANCHES.values(), 0.0)
            for option in top.candidates or []:
                branch = BRANCHES.get((option.token or "").strip())
                if branch and option.log_probability is not None:
                    mass[branch] += math.exp(option.log_probability)
            total = sum(mass.values())
            return mass["decline"] / total if total else None
        opened += token
        if not OPENING.startswith(opened):
            return None  # not the local JSON answer: a "name" further on would give a wrong number
    return None


def decline_probabilities(client: genai.Client, loader: SkillLoader, queries: Sequence[LabelledQuery],
                          progress: Callable[[Iterable], Iterable] = iter) -> list[float | None]:
    """The model's probability of declining for each query (the plain selector, `pick_by_model`, first turn only).

    On the local backend each answer is cut at its decision point (`DECISION_POINT_TOKENS`); Gemini's answer is
    left uncapped (its thinking tokens count against a cap). An OpenAI-compatible server answers in its model's own
    tool-call format, whose decision point is not known here: every probability is None.
    """
    if backend_name(client) == "openai":  # a server's own tool-call format has no known decision point
        return [None for _ in queries]
    cap = DECISION_POINT_TOKENS if backend_name(client) == "local" else None
    return [decline_probability(pick_by_model(client, loader, q.query, max_output_tokens=cap,
                                              logprobs=TOP_CANDIDATES).raw)
            for q in progress(queries)]


def roc_auc(lower: Sequence[float], higher: Sequence[float]) -> float:
    """The area under the ROC curve: the chance that a score of `higher` (the group that should score
    higher) beats one of `lower`, ties counting half. 1.0 separates the groups, 0.5 is a coin.
    Raises ValueError when a group is empty."""
    if not lower or not higher:
        raise ValueError("need at least one score in each group")
    wins = sum((h > low) + 0.5 * (h == low) for low in lower for h in higher)
    return wins / (len(lower) * len(higher))

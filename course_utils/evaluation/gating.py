"""The gated hybrid: similarity shortlists, the model picks, and both signals together may still say "none".

Built in `notebooks/13_who_picks.ipynb`. `selection.pick_hybrid` lets the model decline, but a small model
rarely does once a shortlist is on offer; similarity alone declines with a threshold, but its top cosine
separates "none" badly. Each signal is weak alone; this selector reads both for every pick the model makes:

- the cosine of the skill the model picked (how close its description is to the query), and
- the model's own probability of declining at its decision point (`confidence.decline_probability`).

A logistic model fitted on development decisions (Platt scaling) turns the two into the probability that the
pick is right, and the pick stands only when that probability reaches a cut-off, also chosen on development
data (the one that gets the most development queries right). When the backend gives no log-probabilities
(an OpenAI-compatible server, for instance) the gate is fitted on the cosine alone. A text answer (the model
declined) is "none" whatever the gate says.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from google import genai

from course_utils.backend.client import backend_of
from course_utils.selection.confidence import TOP_CANDIDATES, decline_probability
from course_utils.evaluation.outcomes import Outcome
from course_utils.selection.pick import Decision, Selector, SimilaritySelector, pick_hybrid
from course_utils.skills.skill import SkillLoader

FEATURES = ("cosine", "decline")
"""The gate's inputs, in order: the picked skill's cosine, and the model's decline probability as a logit."""
EDGE = 1e-4
"""Probabilities are clipped to [EDGE, 1 - EDGE] before their logit, so a certain answer stays a finite number."""
RIDGE = 1e-2
"""The L2 penalty of the logistic fit: it keeps the weights finite when dev picks are separable."""


def logit(p: float) -> float:
    p = min(max(p, EDGE), 1 - EDGE)
    return math.log(p / (1 - p))


def picked_cosine(decision: Decision) -> float | None:
    """The cosine of the skill the decision picked, read from its shortlist; None when it picked none."""
    return next((score for name, score in decision.top_k if name == decision.skill), None)


def features(decision: Decision, used: Sequence[str] = FEATURES) -> list[float] | None:
    """The gate's inputs for a pick, or None when one is missing (no pick, or no log-probabilities)."""
    values = {"cosine": picked_cosine(decision),
              "decline": None if decision.decline_probability is None else logit(decision.decline_probability)}
    chosen = [values[name] for name in used]
    return None if any(v is None for v in chosen) else chosen


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, steps: int = 50) -> np.ndarray:
    """Weights (intercept first) of P(y=1) = sigmoid(w0 + x·w), by Newton's method with an L2 penalty.

    The features are standardised inside the fit and the weights returned on their original scale."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = ridge * np.eye(z.shape[1])
    penalty[0, 0] = 0.0  # the intercept is not penalised
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w)))
        gradient = z.T @ (p - y) + penalty @ w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    weights = w[1:] / scale
    return np.concatenate([[w[0] - float(mean @ weights)], weights])


@dataclass(frozen=True)
class Gate:
    """A fitted gate: which features, the logistic weights (intercept first) and the cut-off on P(right)."""

    used: tuple[str, ...]
    weights: tuple[float, ...]
    cutoff: float

    def probability(self, decision: Decision) -> float | None:
        """P(the pick is right), or None when the decision picked nothing or lacks a feature."""
        x = features(decision, self.used)
        if decision.skill is None or x is None:
            return None
        return 1 / (1 + math.exp(-(self.weights[0] + float(np.dot(self.weights[1:], x)))))

    def apply(self, decision: Decision) -> Decision:
        """The gated decision: the pick if its probability reaches the cut-off, else none (also when a feature is
        missing); a decline and an error pass through."""
        if decision.error is not None or decision.skill is None:
            return decision
        p = self.probability(decision)
        skill = decision.skill if p is not None and p >= self.cutoff else None
        return dataclasses.replace(decision, skill=skill, pick_probability=p)

    def describe(self) -> str:
        terms = " ".join(f"{w:+.2f}·{name}" for w, name in zip(self.weights[1:], self.used))
        return (f"P(right) = sigmoid({self.weights[0]:+.2f} {terms}); "
                f"the pick stands when P(right) ≥ {self.cutoff:.2f}")

    def to_dict(self) -> dict:
        return {"used": list(self.used), "weights": list(self.weights), "cutoff": self.cutoff}

    @classmethod
    def from_dict(cls, data: dict) -> Gate:
        return cls(tuple(data["used"]), tuple(data["weights"]), float(data["cutoff"]))


class GateError(ValueError):
    """Too few development picks, or only right (or only wrong) ones: no gate can be fitted."""


def first_decisions(outcomes: Sequence[Outcome]) -> list[Decision]:
    return [o.decisions[0] for o in outcomes]


def fit_gate(outcomes: Sequence[Outcome]) -> Gate:
    """Fit the gate on the hybrid's development outcomes (one greedy run per query, with log-probabilities).

    The logistic model learns P(right) from the picks; the cut-off is the one that gets the most development
    queries right once the gate is applied (declines and errors included), ties going to the cut-off nearest
    0.5, where a calibrated probability says "as likely right as wrong".
    """
    decisions = first_decisions(outcomes)
    used = FEATURES if all(features(d) is not None for d in decisions if d.skill and not d.error) else ("cosine",)
    picks = [(features(d, used), d.skill == o.query.expected) for o, d in zip(outcomes, decisions)
             if d.skill is not None and d.error is None]
    labels = {right for _, right in picks}
    if len(picks) < 4 or len(labels) < 2:
        raise GateError(f"the gate needs development picks both right and wrong, got {len(picks)} pick(s), "
                        f"{sum(r for _, r in picks)} right: use a development set with queries that need no skill")
    x = np.array([f for f, _ in picks], dtype=float)
    y = np.array([r for _, r in picks], dtype=float)
    weights = tuple(float(w) for w in fit_logistic(x, y))
    draft = Gate(used, weights, 0.0)
    probabilities = sorted({p for d in decisions if (p := draft.probability(d)) is not None})
    candidates = [0.0, *[(a + b) / 2 for a, b in zip(probabilities, probabilities[1:])], 1.0 + EDGE]

    def correct(cutoff: float) -> int:
        gate = Gate(used, weights, cutoff)
        return sum(gate.apply(d).skill == o.query.expected and d.error is None for o, d in zip(outcomes, decisions))

    scores = [correct(c) for c in candidates]
    best = max(scores)
    cutoff = min((c for c, s in zip(candidates, scores) if s == best), key=lambda c: (abs(c - 0.5), c))
    return Gate(used, weights, float(cutoff))


def gated_outcomes(outcomes: Sequence[Outcome], gate: Gate) -> list[Outcome]:
    """The hybrid's outcomes as the gated hybrid decides them (each run gated)."""
    return [Outcome(o.query, tuple(gate.apply(d) for d in o.decisions)) for o in outcomes]


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability table: picks whose predicted P(right) fell in [low, high)."""

    low: float
    high: float
    picks: int
    predicted: float | None
    observed: float | None


def reliability(outcomes: Sequence[Outcome], gate: Gate, bins: int = 5) -> list[Bin]:
    """Predicted P(right) against the share of picks that were right, in equal-width bins: the calibration check."""
    pairs = [(p, d.skill == o.query.expected) for o in outcomes for d in o.decisions[:1]
             if d.error is None and (p := gate.probability(d)) is not None]
    table = []
    for i in range(bins):
        low, high = i / bins, (i + 1) / bins
        inside = [(p, r) for p, r in pairs if low <= p < high or (i == bins - 1 and p == 1.0)]
        table.append(Bin(low, high, len(inside),
                         float(np.mean([p for p, _ in inside])) if inside else None,
                         float(np.mean([r for _, r in inside])) if inside else None))
    return table


def confident_hybrid(client: genai.Client, loader: SkillLoader, similarity: SimilaritySelector, k: int = 3,
                     temperature: float | None = None) -> Selector:
    """`selection.pick_hybrid` as a selector whose decisions carry the model's decline probability."""

    def select(query: str) -> Decision:
        decision = pick_hybrid(client, loader, similarity, query, k=k, temperature=temperature,
                               logprobs=TOP_CANDIDATES)
        point = backend_of(client).facts.decision_point
        probability = decline_probability(decision.raw, point) if decision.raw is not None and point else None
        return dataclasses.replace(decision, decline_probability=probability)

    return select


def gated_selector(hybrid: Selector, gate: Gate) -> Selector:
    """The gated hybrid as a selector: `hybrid` (asked with log-probabilities) decides, then the gate."""

    def select(query: str) -> Decision:
        return gate.apply(hybrid(query))

    return select


def remembering(selector: Selector) -> Selector:
    """A greedy selector that answers each query once: the hybrid and the gated hybrid then share one model call
    per query, as a harness running the gated hybrid would make it (only valid for one greedy run per query)."""
    seen: dict[str, Decision] = {}

    def select(query: str) -> Decision:
        if query not in seen:
            seen[query] = selector(query)
        return seen[query]

    return select

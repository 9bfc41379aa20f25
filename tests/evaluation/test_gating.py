"""The gated hybrid (`course_utils.evaluation.gating`) and lesson 13's answer (`course_utils.evaluation.who_picks`),
without a model."""
from __future__ import annotations

import numpy as np
import pytest

from course_utils.evaluation.outcomes import Outcome, evaluate
from course_utils.evaluation.gating import (
    Gate,
    GateError,
    fit_gate,
    fit_logistic,
    gated_outcomes,
    gated_selector,
    reliability,
    remembering,
)
from course_utils.skills.queries import LabelledQuery
from course_utils.selection.pick import Decision
from course_utils.evaluation.trigger import DevChoices
from course_utils.evaluation.who_picks import answer, standing


def outcome(expected: str | None, skill: str | None, cosine: float, decline: float | None = 0.2,
            error: str | None = None) -> Outcome:
    kind = "positive" if expected else "near-miss"
    query = LabelledQuery(f"q{expected}{skill}{cosine}{decline}", expected, kind, "en")
    top = ((skill or "a", cosine), ("other", cosine - 0.1))
    return Outcome(query, (Decision(skill, 100, 1.0, score=cosine, top_k=top, decline_probability=decline,
                                    error=error),))


def dev_outcomes() -> list[Outcome]:
    """Right picks have high cosines and low decline probabilities; false triggers the opposite."""
    right = [outcome("a", "a", 0.5 + 0.02 * i, 0.1 + 0.01 * i) for i in range(10)]
    wrong = [outcome(None, "a", 0.1 + 0.02 * i, 0.4 + 0.02 * i) for i in range(10)]
    declined = [outcome(None, None, 0.2, 0.9)]
    return right + wrong + declined


def test_the_logistic_fit_orders_probabilities_as_the_labels() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 1))
    y = (rng.random(400) < 1 / (1 + np.exp(-(0.5 + 2.0 * x[:, 0])))).astype(float)
    w = fit_logistic(x, y)
    assert w[1] == pytest.approx(2.0, abs=0.5) and w[0] == pytest.approx(0.5, abs=0.4)


def test_the_gate_keeps_right_picks_and_declines_false_triggers_on_separable_dev_data() -> None:
    found = dev_outcomes()
    gate = fit_gate(found)
    assert gate.used == ("cosine", "decline")
    gated = evaluate("gated", gated_outcomes(found, gate))
    assert gated.correct == len(found)
    assert evaluate("hybrid", found).correct == 11  # 10 right picks and the decline: the gate adds the 10 nones
    assert gate.probability(found[0].decisions[0]) > gate.cutoff > gate.probability(found[10].decisions[0])


def test_a_decline_and_an_error_pass_through_the_gate_unchanged() -> None:
    gate = Gate(("cosine",), (-100.0, 0.0), 0.5)  # would decline every pick
    declined, failed = outcome(None, None, 0.9).decisions[0], outcome("a", None, 0.9, error="boom").decisions[0]
    assert gate.apply(declined) is declined and gate.apply(failed) is failed
    assert gate.apply(outcome("a", "a", 0.9).decisions[0]).skill is None


def test_without_log_probabilities_the_gate_is_fitted_on_the_cosine_alone() -> None:
    found = [outcome(o.query.expected, o.decisions[0].skill, o.decisions[0].score, None) for o in dev_outcomes()]
    assert fit_gate(found).used == ("cosine",)


def test_no_gate_from_picks_that_are_all_right() -> None:
    with pytest.raises(GateError, match="both right and wrong"):
        fit_gate([outcome("a", "a", 0.5 + 0.01 * i) for i in range(8)])


def test_the_reliability_table_counts_every_pick_once() -> None:
    found = dev_outcomes()
    table = reliability(found, fit_gate(found), bins=4)
    assert sum(b.picks for b in table) == 20  # the decline has no P(right)
    assert all(b.observed is None or 0 <= b.observed <= 1 for b in table)


def test_the_hybrid_and_the_gated_hybrid_share_one_call_per_query() -> None:
    calls = []

    def hybrid(query: str) -> Decision:
        calls.append(query)
        return Decision("a", top_k=(("a", 0.9),), decline_probability=0.1)

    shared = remembering(hybrid)
    gated = gated_selector(shared, Gate(("cosine", "decline"), (0.0, 1.0, -1.0), 0.5))
    assert shared("x").skill == "a" and gated("x").skill == "a"
    assert calls == ["x"]


def test_the_gate_and_the_choices_survive_a_round_trip_through_json() -> None:
    found = dev_outcomes()
    gate = fit_gate(found)
    choices = DevChoices(0.3, 1, gate, evaluate("similarity", found), {1: evaluate("hybrid k=1", found)},
                         evaluate("gated", gated_outcomes(found, gate)), reliability(found, gate))
    again = DevChoices.from_dict(choices.to_dict())
    assert again.gate == gate and again.k == 1 and again.gated.correct == choices.gated.correct


def selectors_on(right: dict[str, list[bool]]) -> dict[str, list[Outcome]]:
    """Outcomes of several selectors on the same queries, right or wrong as given (the first half need a skill)."""
    n = len(next(iter(right.values())))
    queries = [LabelledQuery(f"q{i}", "a" if i < n // 2 else None, "positive" if i < n // 2 else "off-topic", "en")
               for i in range(n)]
    return {name: [Outcome(q, (Decision(q.expected if ok else ("b" if q.expected is None else None),
                                        prompt_tokens=tokens),))
                   for q, ok in zip(queries, flags)]
            for (name, flags), tokens in zip(right.items(), (1000, 30))}


def test_the_answer_names_the_cheapest_of_the_selectors_the_queries_cannot_tell_apart() -> None:
    found = selectors_on({"model": [True] * 20 + [False] * 20, "similarity": [True] * 19 + [False] * 21})
    reports = {name: evaluate(name, o) for name, o in found.items()}
    sentences = answer(found, reports, "a test model", "test (2 skills)")
    assert "no other selector is shown worse" in sentences[1]
    assert sentences[-1].startswith("So on this model, let similarity alone pick: it is the cheapest of the 2")


def test_the_answer_names_a_clear_winner_when_the_paired_test_finds_one() -> None:
    found = selectors_on({"model": [True] * 10 + [False] * 30, "similarity": [True] * 40})
    reports = {name: evaluate(name, o) for name, o in found.items()}
    assert standing(found, "accuracy").behind[0][0] == "model"
    sentences = answer(found, reports, "m", "c")
    assert "ahead of every other selector" in sentences[1]
    assert sentences[-1] == "So on this model, let similarity alone pick: it is right most often."

"""The model as a scorer: one answer token's log-probabilities read as P(yes) per shortlisted skill. No model here."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from google.genai import types

from course_utils.evaluation.gating import GateError
from course_utils.evaluation.scoring import fit_decider, fit_on_dev
from course_utils.selection.scorer import (Decider, Score, ScoringSelector, decision_features, skill_instruction,
                                          yes_probability)
from course_utils.skills.skill import SkillLoader
from course_utils.skills.paths import REPO_ROOT

SKILLS = {"alpha": "Writes alpha reports.", "beta": "Checks beta invoices.", "gamma": "Plans gamma trips."}


def answer(tops: dict[str, float] | None) -> types.GenerateContentResponse:
    """A one-token answer with these top candidates (token → probability), or none at all."""
    result = None if tops is None else types.LogprobsResult(top_candidates=[types.LogprobsResultTopCandidates(
        candidates=[types.LogprobsResultCandidate(token=t, log_probability=math.log(p)) for t, p in tops.items()])])
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=[types.Part.from_text(text="yes")]),
                                    logprobs_result=result)],
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=40))


class FakeModels:
    """Answers each skill's question with the probability of "yes" given for that skill; records requests."""

    def __init__(self, p_yes: dict[str, float | None]) -> None:
        self.p_yes, self.requests = p_yes, []

    def generate_content(self, model: str, contents: list, config: types.GenerateContentConfig):
        self.requests.append((config.system_instruction, contents))
        name = next(n for n in SKILLS if f"Skill: {n}\n" in config.system_instruction)
        p = self.p_yes[name]
        return answer(None if p is None else {"yes": p, "no": 1 - p})


class FakeShortlist:
    """Ranks the skills in SKILLS order, whatever the query."""

    names = list(SKILLS)

    def top(self, query, k):
        return [(name, 1.0 - i / 10) for i, name in enumerate(SKILLS)][:k]


@pytest.fixture
def loader(tmp_path) -> SkillLoader:
    for name, description in SKILLS.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    return SkillLoader.from_root(tmp_path)


def selector(loader, p_yes, **kwargs) -> tuple[ScoringSelector, FakeModels]:
    models = FakeModels(p_yes)
    return ScoringSelector(SimpleNamespace(models=models), loader, FakeShortlist(), **kwargs), models


def test_yes_is_renormalised_over_yes_and_no_and_spellings_add_up():
    assert yes_probability(answer({"yes": 0.3, "no": 0.1, "maybe": 0.6})) == pytest.approx(0.75)
    assert yes_probability(answer({"Yes": 0.2, " yes": 0.2, "No": 0.4})) == pytest.approx(0.5)
    assert yes_probability(answer({"maybe": 1.0})) is None
    assert yes_probability(answer(None)) is None
    assert yes_probability(types.GenerateContentResponse(candidates=[])) is None


def test_no_log_probabilities_is_an_error_not_a_silent_none(loader):
    decision = selector(loader, {"alpha": None, "beta": None, "gamma": None})[0]("any request")
    assert decision.skill is None and "log-probabilities" in decision.error


def test_each_skill_s_prompt_prefix_is_the_same_for_every_request(loader):
    pick, models = selector(loader, {"alpha": 0.1, "beta": 0.1, "gamma": 0.1})
    pick("first request")
    pick("second request")
    firsts, seconds = models.requests[:3], models.requests[3:]
    assert [system for system, _ in firsts] == [system for system, _ in seconds]
    assert firsts[0][0] == skill_instruction(loader.skills["alpha"])
    assert "first request" in firsts[0][1][0].parts[0].text and "first request" not in firsts[0][0]


def test_k_below_one_is_refused(loader):
    with pytest.raises(ValueError, match="at least 1"):
        selector(loader, {}, k=0)


def test_each_skill_s_question_is_long_enough_for_the_local_backend_to_save_its_prefix():

    from course_utils.backend.local.prefixes import MIN_PREFIX_CHARS

    root = REPO_ROOT / "skills"
    for catalog in ("workplace", "mattpocock", "wshobson"):
        short = [s.name for s in SkillLoader.from_root(root / catalog).skills.values()
                 if len(skill_instruction(s)) < MIN_PREFIX_CHARS]
        assert short == [], f"{catalog}: computed again at every decision: {short}"


def test_the_decision_reads_the_model_s_scores_and_the_ranking_s():
    scores = [Score("alpha", 0.6, 0), Score("beta", 0.8, 0), Score("gamma", None, 0)]
    features, best = decision_features(scores, [3.0, 1.0, 0.5])
    assert best == "beta" and features == pytest.approx([0.8, 0.2, 3.0, 2.0, 0.0])
    assert decision_features([Score("alpha", 0.7, 0)], [2.0]) == ([0.7, 0.7, 2.0, 2.0, 1.0], "alpha")
    assert decision_features([Score("alpha", None, 0)], [2.0]) is None


SURE = Decider((-5.0, 10.0, 0.0, 0.0, 0.0, 0.0))
"""P(right) = sigmoid(10 · best P(yes) − 5): a pick from P(yes) 0.5 up."""


def test_the_most_probable_skill_is_picked_when_the_decision_says_it_is_more_likely_right(loader):
    pick, models = selector(loader, {"alpha": 0.4, "beta": 0.8, "gamma": 0.6}, decider=SURE)
    decision = pick("any request")
    assert decision.skill == "beta" and decision.pick_probability == pytest.approx(1 / (1 + math.exp(-3)))
    assert [name for name, _ in decision.top_k] == ["alpha", "beta", "gamma"] and decision.score == 0.8
    assert selector(loader, {"alpha": 0.4, "beta": 0.45, "gamma": 0.1}, decider=SURE)[0]("q").skill is None


def test_a_tie_keeps_the_nearer_skill_and_only_k_are_asked(loader):
    pick, models = selector(loader, {"alpha": 0.7, "beta": 0.7, "gamma": 0.9}, k=2, decider=SURE)
    assert pick("any request").skill == "alpha"
    assert len(models.requests) == 2


def test_fitting_on_dev_keeps_the_decision_and_needs_right_and_wrong_picks(loader):
    from course_utils.skills.queries import LabelledQuery

    pick, _ = selector(loader, {"alpha": 0.8, "beta": 0.6, "gamma": 0.3})
    queries = [LabelledQuery("q1", "alpha", "positive", "en"), LabelledQuery("q2", "deploy", "positive", "en"),
               LabelledQuery("q3", None, "near-miss", "en"), LabelledQuery("q4", "alpha", "positive", "en")]
    decider = fit_on_dev(pick, queries)
    assert pick.decider == decider and len(decider.weights) == 6
    with pytest.raises(GateError, match="right and others whose pick is wrong"):
        fit_on_dev(pick, [LabelledQuery("q1", "alpha", "positive", "en")])


def test_the_fitted_decision_separates_right_picks_from_wrong_ones():
    right = [([Score("alpha", 0.9 - i / 100, 0), Score("beta", 0.3, 0)], [3.0, 1.0], "alpha") for i in range(5)]
    wrong = [([Score("alpha", 0.5 + i / 100, 0), Score("beta", 0.45, 0)], [1.0, 0.9], None) for i in range(5)]
    decider = fit_decider(right + wrong)
    assert all(decider.decide(s, f) == "alpha" for s, f, _ in right)
    assert all(decider.decide(s, f) is None for s, f, _ in wrong)


class FarAhead(FakeShortlist):
    """Ranks alpha far ahead of the others."""

    def top(self, query, k):
        return [("alpha", 6.0), ("beta", 1.0), ("gamma", 0.5)][:k]


def test_a_first_skill_far_ahead_is_picked_by_the_ranking_without_asking_the_model(loader):
    models = FakeModels({"alpha": 0.1, "beta": 0.1, "gamma": 0.1})
    decision = ScoringSelector(SimpleNamespace(models=models), loader, FarAhead(), decider=SURE)("any request")
    assert decision.skill == "alpha" and decision.prompt_tokens == 0 and models.requests == []
    asked = ScoringSelector(SimpleNamespace(models=models), loader, FarAhead(), decider=SURE, cascade=None)
    assert asked("any request").skill is None and len(models.requests) == 3  # P(yes) 0.1: the model says no


def test_calibration_reads_the_scored_queries_and_ece_is_the_weighted_gap():
    """Two scored queries and one the ranking decided: the first is right at 0.9, the second wrong at 0.3. Bins of
    0.1: |0.9 - 1| and |0.3 - 0| each weigh a half, so ECE = 0.2; perfectly calibrated predictions give 0."""
    from course_utils.evaluation.scoring import calibration_points, expected_calibration_error

    records = [{"pick_probability": 0.9, "top_k": [["a", 0.2], ["b", 0.8]], "expected": "b"},
               {"pick_probability": 0.3, "top_k": [["a", 0.7], ["b", 0.7]], "expected": "b"},  # a tie: the nearer
               {"pick_probability": None, "top_k": None, "expected": "a"}]
    probability, right = calibration_points(records)
    assert probability.tolist() == [0.9, 0.3] and right.tolist() == [1.0, 0.0]
    assert expected_calibration_error(probability, right) == pytest.approx(0.2)
    assert expected_calibration_error(np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0, 1.0])) == 0.0

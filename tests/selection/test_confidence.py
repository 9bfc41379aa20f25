"""The model's probability of declining, read from log-probabilities (issue #17, item 4). No model here."""
from __future__ import annotations

import math

import pytest
from google.genai import types

from course_utils.backend.content import logprobs_result
from course_utils.backend.declarations import InvalidRequest
from course_utils.backend.facts import GRAMMAR_DECISION_POINT
from course_utils.backend.local.app import generation_options
from course_utils.selection.confidence import TOP_CANDIDATES, decline_probability, roc_auc


def response(chosen: list[str], tops: list[dict[str, float]]) -> types.GenerateContentResponse:
    """A response whose answer tokens are `chosen`, with these top candidates (token → probability) per token."""
    def cand(token: str, p: float) -> types.LogprobsResultCandidate:
        return types.LogprobsResultCandidate(token=token, log_probability=math.log(p))

    result = types.LogprobsResult(
        chosen_candidates=[cand(t, tops[i].get(t, 0.5)) for i, t in enumerate(chosen)],
        top_candidates=[types.LogprobsResultTopCandidates(candidates=[cand(t, p) for t, p in top.items()])
                        for top in tops])
    return types.GenerateContentResponse(candidates=[types.Candidate(
        content=types.Content(role="model", parts=[types.Part.from_text(text="x")]), logprobs_result=result)])


def test_the_decision_point_is_the_first_branch_token():
    r = response(['{"', "name", '":"'], [{'{"': 0.99}, {"name": 0.6, "text": 0.2, "other": 0.2}, {'":"': 1.0}])
    assert decline_probability(r) == pytest.approx(0.2 / 0.8)  # renormalised over the two branches


def test_a_branch_outside_the_top_candidates_counts_zero_and_spellings_add_up():
    assert decline_probability(response(['{"', "text"], [{'{"': 1.0}, {"text": 0.7, " text": 0.1}])) == 1.0
    both = response(['{"', "name"], [{'{"': 1.0}, {"name": 0.5, " name": 0.1, "text": 0.2, " text": 0.2}])
    assert decline_probability(both) == pytest.approx(0.4)


def test_no_log_probabilities_or_no_decision_point_is_none():
    plain = types.GenerateContentResponse(candidates=[types.Candidate(
        content=types.Content(role="model", parts=[types.Part.from_text(text="x")]))])
    assert decline_probability(plain) is None
    assert decline_probability(types.GenerateContentResponse(candidates=[])) is None
    assert decline_probability(response(["Hello"], [{"Hello": 1.0}])) is None


def test_roc_auc():
    assert roc_auc([0.1, 0.2], [0.8, 0.9]) == 1.0
    assert roc_auc([0.8, 0.9], [0.1, 0.2]) == 0.0
    assert roc_auc([0.5], [0.5]) == 0.5
    with pytest.raises(ValueError):
        roc_auc([], [0.3])


def test_the_local_backend_serves_gemini_shaped_logprobs():
    tokens = [{"id": 1, "token": '{"', "logprob": -0.01, "top_logprobs": [
        {"id": 1, "token": '{"', "logprob": -0.01}, {"id": 2, "token": "{", "logprob": -5.0}]}]
    result = logprobs_result(tokens, top=1)
    assert result == {"chosenCandidates": [{"token": '{"', "tokenId": 1, "logProbability": -0.01}],
                      "topCandidates": [{"candidates": [{"token": '{"', "tokenId": 1, "logProbability": -0.01}]}]}
    parsed = types.LogprobsResult.model_validate(result)  # the SDK reads it as Gemini's shape
    assert parsed.chosen_candidates[0].token == '{"'


def test_logprobs_options_are_checked_like_gemini():
    assert generation_options({})["top_logprobs"] is None
    assert generation_options({"generationConfig": {"responseLogprobs": True}})["top_logprobs"] == 0
    assert generation_options({"generationConfig": {"responseLogprobs": True, "logprobs": 20}})["top_logprobs"] == 20
    with pytest.raises(InvalidRequest, match="from 0 to 20"):
        generation_options({"generationConfig": {"responseLogprobs": True, "logprobs": 21}})


@pytest.mark.model
def test_model_logprobs_leave_the_decision_unchanged_and_give_a_probability(local_client):
    """Asking for log-probabilities changes nothing the model decides; the decision point is found, and an answer
    cut there (`decline_probabilities`' cap) gives exactly the probability of the whole answer."""
    from course_utils.skills.paths import SKILLS_DIR
    from course_utils.selection.pick import pick_by_model
    from course_utils.skills.skill import SkillLoader

    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    query = "Merge these three PDF files into one document."
    plain = pick_by_model(local_client, workplace, query)
    read = pick_by_model(local_client, workplace, query, logprobs=5)
    assert (read.skill, read.prompt_tokens) == (plain.skill, plain.prompt_tokens)
    p = decline_probability(read.raw)
    assert p is not None and 0.0 <= p <= 1.0
    assert (p < 0.5) == (plain.skill is not None)  # greedy follows the likelier branch
    assert read.raw.candidates[0].avg_logprobs <= 0
    cut = pick_by_model(local_client, workplace, query, logprobs=TOP_CANDIDATES,
                        max_output_tokens=GRAMMAR_DECISION_POINT.tokens)
    whole = pick_by_model(local_client, workplace, query, logprobs=TOP_CANDIDATES)
    assert decline_probability(cut.raw) == decline_probability(whole.raw) is not None
    assert cut.raw.usage_metadata.candidates_token_count == GRAMMAR_DECISION_POINT.tokens

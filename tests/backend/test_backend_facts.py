"""A backend's facts (`course_utils.backend.facts`) decide what differs between backends; the lessons read them.
A made-up backend with facts of its own gets its own cap, runs, decoding, threshold and decision point, and no
lesson changes. No model here."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from google.genai import types

from course_utils.selection import abstain
from course_utils.backend import facts as known
from course_utils.backend.client import Backend, backend_of, local_backend
from course_utils.backend.facts import Facts
from course_utils.selection.confidence import decline_probabilities
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.queries import LabelledQuery
from course_utils.scale.decision import context_window
from course_utils.selection.pick import default_threshold, pick_by_model
from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.trigger import SAMPLING_TEMPERATURE, build_selectors

BAKERY = SkillLoader.from_root(SKILLS_DIR / "bakery")
NEW = Facts(decision_tokens=7, threshold=0.42, greedy=False, greedy_temperature=None, runs=5, logprobs=False,
            decision_point=None)


class FakeModels:
    """Records each request; answers with no skill, and reports an input limit when asked about a model."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def generate_content(self, **request):
        self.requests.append(request)
        return types.GenerateContentResponse.model_validate(
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "no skill"}]}}]})

    def get(self, *, model: str):
        return SimpleNamespace(input_token_limit=123_456)


def client_with(facts: Facts, name: str = "new") -> SimpleNamespace:
    return SimpleNamespace(models=FakeModels(), course_backend=Backend(name, "new model", "new encoder", facts))


def test_a_decision_is_capped_as_the_backend_says():
    client = client_with(NEW)
    pick_by_model(client, BAKERY, "A cake for Sunday?")
    abstain.pick_with_none_option(client, BAKERY, "A cake for Sunday?", reason=True)
    caps = [request["config"].max_output_tokens for request in client.models.requests]
    assert caps == [7, 7 + abstain.REASON_CHARS // 2]
    uncapped = client_with(dataclasses.replace(NEW, decision_tokens=None))
    pick_by_model(uncapped, BAKERY, "A cake for Sunday?")
    assert uncapped.models.requests[0]["config"].max_output_tokens is None


@pytest.mark.parametrize("facts, runs, temperature, decoding", [
    (NEW, 5, None, "the model's default temperature"),
    (dataclasses.replace(NEW, greedy=True, greedy_temperature=0.0, runs=1), 1, 0.0, "greedy"),
    (dataclasses.replace(NEW, greedy=True, runs=1), 1, None, "greedy"),
    (dataclasses.replace(NEW, greedy=True, runs=3), 3, SAMPLING_TEMPERATURE, f"temperature {SAMPLING_TEMPERATURE}"),
])
def test_runs_and_decoding_come_from_the_facts(facts, runs, temperature, decoding):
    client = client_with(facts)
    chosen = build_selectors(client, BAKERY, ["model"])
    assert (chosen.runs, chosen.decoding) == (runs, decoding)
    chosen.selectors["model"][0]("A cake for Sunday?")
    assert client.models.requests[0]["config"].temperature == temperature


def test_the_default_threshold_is_the_backends_or_none():
    assert default_threshold(client_with(NEW)) == 0.42
    with pytest.raises(ValueError, match="No threshold is fitted for new encoder"):
        default_threshold(client_with(dataclasses.replace(NEW, threshold=None)))


def test_no_decision_point_means_no_request_for_a_probability():
    client = client_with(dataclasses.replace(NEW, logprobs=True))
    queries = [LabelledQuery("A cake for Sunday?", "custom-cake-order", "positive", "en")]
    assert decline_probabilities(client, BAKERY, queries) == [None] and client.models.requests == []


def test_the_context_window_is_the_backends_else_the_models_api(monkeypatch):
    assert context_window(client_with(NEW)) == 123_456
    monkeypatch.setenv("COURSE_OPENAI_CONTEXT_TOKENS", "4096")
    assert context_window(client_with(known.OPENAI, name="openai")) == 4096


def test_each_backend_carries_its_facts():
    assert backend_of(SimpleNamespace()).facts == known.GEMINI  # a client built any other way is Gemini
    assert local_backend("qwen2.5-coder-1.5b").facts == known.LOCAL
    assert (known.LOCAL.decision_tokens, known.OPENAI.decision_tokens, known.GEMINI.decision_tokens) == (32, 256, None)
    assert (known.LOCAL.runs, known.GEMINI.runs) == (1, 3) and known.OPENAI.decision_point is None

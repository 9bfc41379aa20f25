"""`pick_hybrid` (lesson 09's reference solution) and `hybrid_selector`: similarity shortlists, the model decides."""
from __future__ import annotations

import json

import pytest

import httpx
from google import genai
from google.genai import types
from helpers.hybrid_fakes import FakeSelector, ScoredSelector, fake_client, listed

from course_utils.backend.client import LOCAL_BASE_URL
from course_utils.backend.local.app import build_prompt
from course_utils.evaluation.outcomes import evaluate, run_selector
from course_utils.lessons.exercises.learner import RecordingClient
from course_utils.skills.queries import load_queries
from course_utils.selection.pick import ACTIVATE, Decision, SimilaritySelector, hybrid_selector, pick_hybrid
from course_utils.skills.skill import SkillLoader
from course_utils.skills.paths import REPO_ROOT
from helpers.paths import FIXTURES

TINY = SkillLoader.from_root(FIXTURES / "tiny_catalog")
WORKPLACE = SkillLoader.from_root(REPO_ROOT / "skills" / "workplace")


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_the_model_sees_only_the_top_k(k):
    client, selector = fake_client(), FakeSelector(WORKPLACE)
    decision = pick_hybrid(client, WORKPLACE, selector, "any query", k=k)
    expected = list(reversed(WORKPLACE.names))[:k]
    (config,), (contents,) = client.models.requests, client.models.contents
    assert listed(contents) == expected  # nearest first, in the user turn
    assert contents[0].role == "user" and contents[0].parts[-1].text == "any query"  # the shortlist, then the query
    assert not any(n in config.system_instruction for n in WORKPLACE.names)  # the system instruction names no skill
    assert config.tools[0].function_declarations[0].parameters.properties["name"].enum is None
    assert isinstance(decision, Decision) and decision.skill == expected[0]  # the fake model picks the first
    assert [name for name, _ in decision.top_k] == expected and decision.score == decision.top_k[0][1]
    assert decision.prompt_tokens == 100 + 50 * k  # the generation model's count, nothing added
    assert decision.seconds > 0 and decision.raw is not None


def offered(client) -> list[str]:
    return listed(client.models.contents[-1])


@pytest.mark.parametrize("extra", [0, 1, 7])
def test_k_at_or_above_the_catalog_size_offers_the_whole_catalog(extra):
    client = fake_client()
    pick_hybrid(client, TINY, FakeSelector(TINY), "any query", k=len(TINY.names) + extra)
    assert sorted(offered(client)) == TINY.names


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_a_value_error_before_anything_is_asked(k):
    client, selector = fake_client(), FakeSelector(WORKPLACE)
    selector.scores = lambda queries: pytest.fail("the query was embedded")
    with pytest.raises(ValueError, match="k must be at least 1"):
        pick_hybrid(client, WORKPLACE, selector, "any query", k=k)
    assert client.models.requests == []


def test_a_tie_for_the_last_place_keeps_the_skill_listed_first():
    first, second, third, fourth = WORKPLACE.names[:4]
    selector = ScoredSelector(WORKPLACE, {fourth: 0.5, first: 0.3, third: 0.3, second: 0.3})
    client = fake_client()
    decision = pick_hybrid(client, WORKPLACE, selector, "any query", k=2)
    assert offered(client) == [fourth, first]  # nearest first; of the three tied, the one listed first
    assert [name for name, _ in decision.top_k] == [fourth, first]


def recording_client(bodies: list) -> genai.Client:
    """A genai.Client whose requests are recorded as the JSON bodies the SDK sends, each answered in text."""

    def app(environ, start_response):
        bodies.append(json.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": "no skill"}]}}],
                            "usageMetadata": {"promptTokenCount": 1}}).encode()]

    return genai.Client(api_key="local", http_options=types.HttpOptions(
        base_url=LOCAL_BASE_URL, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1),
        httpx_client=httpx.Client(transport=httpx.WSGITransport(app=app))))


def test_the_system_message_is_the_same_whatever_the_shortlist():
    """The local backend's system message (instruction and tool, as `build_prompt` renders them) is one prefix for
    every decision: the shortlists differ, so the only place they go is the user turn."""
    bodies = []
    client = recording_client(bodies)
    first, second, third, fourth = WORKPLACE.names[:4]
    for scores in ({first: 0.9, second: 0.8, third: 0.7}, {fourth: 0.9, third: 0.8, first: 0.7}):
        pick_hybrid(client, WORKPLACE, ScoredSelector(WORKPLACE, scores), "a query", k=3)
    prompts = [build_prompt(body).messages for body in bodies]
    assert [m["role"] for m in prompts[0]] == [m["role"] for m in prompts[1]] == ["system", "user"]
    assert prompts[0][0] == prompts[1][0] and ACTIVATE in prompts[0][0]["content"]
    assert not any(n in prompts[0][0]["content"] for n in WORKPLACE.names)
    assert [n for n in WORKPLACE.names if n in prompts[1][1]["content"]] == [first, third, fourth]
    assert prompts[1][1]["content"].endswith("</available-skills>\na query")


def test_a_name_outside_the_shortlist_is_an_error_not_a_decision():
    client = fake_client()
    outside = WORKPLACE.names[0]  # the FakeSelector ranks it last
    client.models.generate_content = lambda **kw: types.GenerateContentResponse.model_validate({
        "candidates": [{"content": {"role": "model", "parts": [
            {"function_call": {"name": ACTIVATE, "args": {"name": outside}}}]}}]})
    decision = pick_hybrid(client, WORKPLACE, FakeSelector(WORKPLACE), "any query", k=3)
    assert decision.skill is None and "the 3 skills in the catalog" in decision.error


def test_hybrid_selector_is_a_selector():
    select = hybrid_selector(fake_client(), WORKPLACE, FakeSelector(WORKPLACE), k=2)
    queries = load_queries(FIXTURES / "tiny_queries.yaml")
    report = evaluate("hybrid", run_selector(select, queries, progress=False))
    assert report.queries == 5 and report.errors == 0 and report.mean_prompt_tokens == 200
    with pytest.raises(ValueError, match="k must be at least 1"):
        hybrid_selector(fake_client(), WORKPLACE, FakeSelector(WORKPLACE), k=0)


@pytest.mark.model
def test_pick_hybrid_on_the_local_backend(local_client):
    selector = SimilaritySelector(local_client, WORKPLACE)
    query = "How many vacation days do I have left this year?"
    top = [name for name, _ in selector.top(selector.scores([query])[0], 3)]
    client = RecordingClient(local_client)
    decision = pick_hybrid(client, WORKPLACE, selector, query, k=3)
    (call,) = client.models.calls
    assert call.offered(WORKPLACE.names) == [n for n in WORKPLACE.names if n in top]  # the model saw only the k skills
    assert decision.skill in top and decision.skill == "leave-balance-calculator"
    assert 100 < decision.prompt_tokens < 1000 and decision.seconds > 0

"""What the OpenAI-compatible backend's answers mean to the rest of the course, through a real `genai.Client`.

A fake chat server on loopback records each request (body and headers) and answers from a queue. These tests add
to `test_openai_compatible.py` (the translation both ways, each fault): the API key, a conversation as the SDK
sends it, an evaluation where one of two queries fails, and the probability of declining, which a server's own
tool-call format does not carry.
"""
from __future__ import annotations

import json
import math

import pytest
from google.genai import types
from helpers.openai_fakes import chat_server

from course_utils.backend.client import make_client
from course_utils.selection.confidence import decline_probability
from course_utils.evaluation.outcomes import evaluate, run_selector
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.queries import LabelledQuery
from course_utils.selection.pick import pick_by_model
from course_utils.skills.skill import SkillLoader


def call(name: str, logprobs: list[dict] | None = None) -> dict:
    """A chat completion whose answer is one call of activate_skill with `name`."""
    choice = {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
              "tool_calls": [{"id": "x", "type": "function", "function": {
                  "name": "activate_skill", "arguments": json.dumps({"name": name})}}]}}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"choices": [choice], "usage": {"prompt_tokens": 300, "completion_tokens": 20}}


@pytest.fixture
def server(monkeypatch):
    with chat_server(monkeypatch, timeout_s=5) as fake:
        fake.answers = [(200, call("leave-balance-calculator"))]
        yield fake


@pytest.fixture(scope="module")
def workplace() -> SkillLoader:
    return SkillLoader.from_root(SKILLS_DIR / "workplace")


def test_the_api_key_goes_as_a_bearer_token_and_only_when_set(server, monkeypatch):
    make_client("openai", verbose=False).models.generate_content(model="gemini-2.5-flash", contents="hi")
    monkeypatch.setenv("COURSE_OPENAI_API_KEY", "sk-test")
    make_client("openai", verbose=False).models.generate_content(model="gemini-2.5-flash", contents="hi")
    without, with_key = server.headers
    assert "authorization" not in without and with_key["authorization"] == "Bearer sk-test"


def test_a_conversation_as_the_sdk_sends_it_pairs_each_result_with_its_call(server):
    """Two calls of one turn and their results, written with the SDK's own types: each `tool` message answers
    the id its call was given, and the ids are the same on every request."""
    contents = [
        types.Content(role="user", parts=[types.Part.from_text(text="Leave left, and the policy?")]),
        types.Content(role="model", parts=[
            types.Part.from_function_call(name="load_skill", args={"name": "leave-balance-calculator"}),
            types.Part.from_function_call(name="read_file", args={"path": "policy.md"})]),
        types.Content(role="user", parts=[
            types.Part.from_function_response(name="load_skill", response={"result": "the body"}),
            types.Part.from_function_response(name="read_file", response={"result": "the policy"})]),
    ]
    config = types.GenerateContentConfig(
        system_instruction="You are a helpful assistant.",
        tools=[types.Tool(function_declarations=[
            types.FunctionDeclaration(name="load_skill", parameters={"type": "OBJECT", "properties": {
                "name": {"type": "STRING"}}}),
            types.FunctionDeclaration(name="read_file", parameters={"type": "OBJECT", "properties": {
                "path": {"type": "STRING"}}})])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    client = make_client("openai", verbose=False)
    for _ in range(2):
        client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    first, second = server.requests
    assert first["messages"] == second["messages"]
    system, user, assistant, *results = first["messages"]
    assert (system["role"], user["role"], assistant["role"]) == ("system", "user", "assistant")
    calls = {c["function"]["name"]: c for c in assistant["tool_calls"]}
    assert json.loads(calls["read_file"]["function"]["arguments"]) == {"path": "policy.md"}
    assert {(m["role"], m["tool_call_id"], m["content"]) for m in results} == {
        ("tool", calls["load_skill"]["id"], "the body"), ("tool", calls["read_file"]["id"], "the policy")}
    assert first["tools"][0]["function"]["parameters"]["properties"]["name"]["type"] == "string"


def test_one_failed_decision_of_two_is_recorded_and_the_other_kept(server, workplace):
    server.answers = [(200, call("leave-balance-calculator")),
                      (500, {"error": {"message": "CUDA error: out of memory"}})]
    client = make_client("openai", verbose=False)
    queries = [LabelledQuery("How many vacation days do I have left?", "leave-balance-calculator", "positive", "en"),
               LabelledQuery("Will it rain tomorrow?", None, "off-topic", "en")]
    outcomes = run_selector(lambda query: pick_by_model(client, workplace, query), queries, progress=False)
    assert [outcome.query for outcome in outcomes] == queries
    (kept,), (failed,) = (outcome.decisions for outcome in outcomes)
    assert (kept.skill, kept.error) == ("leave-balance-calculator", None)
    assert failed.error and "CUDA error: out of memory" in failed.error and "127.0.0.1" in failed.error
    assert evaluate("model", outcomes).errors == 1


def tokens(chosen: list[str], alternatives: dict[int, dict[str, float]] | None = None) -> list[dict]:
    """OpenAI-shaped log-probabilities of `chosen`, each its own only alternative unless `alternatives` says."""
    def entry(token: str, p: float) -> dict:
        return {"token": token, "logprob": math.log(p)}

    alternatives = alternatives or {}
    return [{**entry(t, 0.9), "top_logprobs": [entry(a, p) for a, p in alternatives.get(i, {t: 0.9}).items()]}
            for i, t in enumerate(chosen)]


def test_a_servers_own_tool_call_format_has_no_decline_probability(server, workplace):
    """Qwen's `<tool_call>` answer reaches the word "name" later on, where no text answer competes: reading a
    probability there would say "certain to call" whatever the model weighed. The answer has no decision point."""
    native = ["<tool_call>", "\n", '{"', "name", '":', ' "', "activate", "_skill"]
    server.answers = [(200, call("leave-balance-calculator", tokens(native, {3: {"name": 0.99, "arguments": 0.01}})))]
    client = make_client("openai", verbose=False)
    decision = pick_by_model(client, workplace, "How many vacation days do I have left?", logprobs=5)
    assert decision.skill == "leave-balance-calculator"
    assert [c.token for c in decision.raw.candidates[0].logprobs_result.chosen_candidates] == native
    assert decline_probability(decision.raw) is None
    assert server.requests[-1]["logprobs"] is True and server.requests[-1]["top_logprobs"] == 5


@pytest.mark.parametrize("chosen, alternatives, expected", [
    (['{"', "text"], {1: {"text": 0.6, "name": 0.2}}, 0.75),  # the local JSON answer: its second token
    (["{", ' "', "name"], {2: {"name": 0.5, "text": 0.5}}, 0.5),  # the opening in two tokens
    (["Sure", ",", " your", " name", "?"], {3: {" name": 0.9}}, None),  # a reply that says "name" later
    (["<tool_call>", "\n", '{"', "name"], {3: {"name": 0.9}}, None),  # a server's own call format
    (["name"], {0: {"name": 0.9, "text": 0.1}}, None),  # no opening
])
def test_the_decision_point_is_only_right_after_the_local_answers_opening(chosen, alternatives, expected):
    from course_utils.backend.content import logprobs_result

    result = types.LogprobsResult.model_validate(logprobs_result(tokens(chosen, alternatives), 20))
    response = types.GenerateContentResponse(candidates=[types.Candidate(
        content=types.Content(role="model", parts=[types.Part.from_text(text="x")]), logprobs_result=result)])
    assert decline_probability(response) == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize("status, says, not_says", [
    (401, "Set COURSE_OPENAI_API_KEY", "GEMINI_API_KEY"),
    (404, "Check COURSE_OPENAI_MODEL", "COURSE_EMBEDDING_MODEL"),
])
def test_a_refusal_says_which_course_openai_variable_to_check(server, status, says, not_says):
    from google.genai import errors

    from course_utils.selection.faults import describe_error

    server.answers = [(status, {"error": {"message": "no"}})]
    with pytest.raises(errors.APIError) as caught:
        make_client("openai", verbose=False).models.generate_content(model="gemini-2.5-flash", contents="hi")
    reason = describe_error(caught.value)
    assert says in reason and not_says not in reason, reason


def test_with_an_embedding_model_the_server_embeds(server, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_EMBEDDING_MODEL", "nomic-embed-text")
    server.answers = [(200, {"data": [{"index": 1, "embedding": [0.0, 3.0, 4.0]},
                                      {"index": 0, "embedding": [1.0, 0.0, 0.0]}]})]
    client = make_client("openai", verbose=False)
    result = client.models.embed_content(model="gemini-embedding-2", contents=[
        types.Content(parts=[types.Part.from_text(text="first")]),
        types.Content(parts=[types.Part.from_text(text="second"), types.Part.from_text(text="part")])],
        config=types.EmbedContentConfig(output_dimensionality=2))
    assert [e.values for e in result.embeddings] == [[1.0, 0.0], [0.0, 1.0]]
    assert server.requests[-1] == {"model": "nomic-embed-text", "input": ["first", "second\npart"]}


def test_server_embeddings_have_their_own_label_cache_and_no_borrowed_threshold(server, monkeypatch, workplace):
    from course_utils.backend.client import backend_of, embedding_backend
    from course_utils.selection.pick import SimilaritySelector

    assert embedding_backend(make_client("openai", verbose=False)) == "local"  # the local encoder, its threshold
    monkeypatch.setenv("COURSE_OPENAI_EMBEDDING_MODEL", "nomic-embed-text")
    client = make_client("openai", verbose=False)
    host = server.url.removeprefix("http://").removesuffix("/v1")
    assert backend_of(client).embedding_label() == f"nomic-embed-text (OpenAI-compatible server at {host})"
    assert embedding_backend(client) == "openai-nomic-embed-text"
    with pytest.raises(ValueError, match="No threshold is fitted"):
        SimilaritySelector(client, workplace, cache=False)

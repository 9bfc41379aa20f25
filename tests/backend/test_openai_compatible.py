"""The OpenAI-compatible backend (`course_utils.backend.openai_compatible`) through a real `genai.Client`.

A fake chat server on loopback records what it is sent and answers what a test asks for; the `model` test starts
llama.cpp's own OpenAI-compatible server on the course's model.
"""
from __future__ import annotations

import json

import pytest
from google.genai import errors, types
from helpers.openai_fakes import CALL, chat_server

from course_utils.backend.client import backend_of, make_client
from course_utils.backend.openai_compatible import Endpoint, chat_request
from course_utils.evaluation.outcomes import evaluate, run_selector
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.queries import LabelledQuery
from course_utils.selection.pick import pick_by_model
from course_utils.skills.skill import SkillLoader

@pytest.fixture
def server(monkeypatch):
    with chat_server(monkeypatch) as fake:
        yield fake


@pytest.fixture(scope="module")
def workplace() -> SkillLoader:
    return SkillLoader.from_root(SKILLS_DIR / "workplace")


def test_the_client_names_the_servers_model_and_a_decision_comes_back_as_a_function_call(server, workplace):
    client = make_client(verbose=False)  # auto: the base URL is set, so the server answers
    assert backend_of(client).generation_label() == (
        f"qwen2.5:7b (OpenAI-compatible server at {server.url.split('//')[1].removesuffix('/v1')})")
    assert backend_of(client).embedding_label() == "multilingual USE v3 (local)"
    decision = pick_by_model(client, workplace, "How many vacation days do I have left?")
    assert (decision.skill, decision.error, decision.prompt_tokens) == ("leave-balance-calculator", None, 321)
    assert decision.raw.model_version.startswith("qwen2.5:7b (OpenAI-compatible server at 127.0.0.1:")
    (sent,) = server.requests
    assert sent["model"] == "qwen2.5:7b" and sent["messages"][0]["role"] == "system"
    assert "leave-balance-calculator" in sent["messages"][0]["content"]
    assert sent["messages"][1] == {"role": "user", "content": "How many vacation days do I have left?"}
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["activate_skill"]
    assert sent["tool_choice"] == "auto"


def test_a_conversation_with_calls_and_results_pairs_them_by_id():
    request = {"systemInstruction": {"parts": [{"text": "S"}]}, "contents": [
        {"role": "user", "parts": [{"text": "Q"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "load_skill", "args": {"name": "a"}}},
                                    {"functionCall": {"name": "read_file", "args": {"path": "x"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"result": "file"}}},
                                   {"functionResponse": {"name": "load_skill", "response": {"result": "body"}}}]}]}
    messages = chat_request(request, "m")["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    calls = messages[2]["tool_calls"]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("call_1", "load_skill", {"name": "a"}), ("call_2", "read_file", {"path": "x"})]
    assert [(m["tool_call_id"], m["content"]) for m in messages[3:]] == [("call_2", "file"), ("call_1", "body")]


DECLARED = [{"functionDeclarations": [{"name": "load_skill", "parameters": {"type": "OBJECT"}},
                                      {"name": "read_file", "parameters": {"type": "OBJECT"}}]}]


@pytest.mark.parametrize("config, choice, offered", [
    (None, "auto", ["load_skill", "read_file"]),
    ({"mode": "NONE"}, "none", ["load_skill", "read_file"]),
    ({"mode": "ANY"}, "required", ["load_skill", "read_file"]),
    ({"mode": "ANY", "allowedFunctionNames": ["read_file"]}, "required", ["read_file"]),
    ({"mode": "VALIDATED", "allowedFunctionNames": ["load_skill"]}, "auto", ["load_skill"]),
])
def test_each_tool_config_mode_becomes_its_tool_choice(config, choice, offered):
    request = {"contents": [{"role": "user", "parts": [{"text": "q"}]}], "tools": DECLARED,
               "toolConfig": {"functionCallingConfig": config} if config else None,
               "generationConfig": {"temperature": 0.2, "seed": 7, "maxOutputTokens": 32, "topP": 0.9, "topK": 20}}
    body = chat_request(request, "m")
    assert body["tool_choice"] == choice and [t["function"]["name"] for t in body["tools"]] == offered
    options = (body["temperature"], body["seed"], body["max_tokens"], body["top_p"], body["top_k"])
    assert options == (0.2, 7, 32, 0.9, 20)


def test_text_usage_logprobs_and_counted_tokens_come_back_in_geminis_shape(server):
    token = {"token": "Hi", "logprob": -0.1, "top_logprobs": [{"token": "Hi", "logprob": -0.1},
                                                              {"token": "Yo", "logprob": -2.5}]}
    server.answers = [(200, {"choices": [{"index": 0, "finish_reason": "length", "message": {"content": "Hi"},
                                          "logprobs": {"content": [token]}}],
                             "usage": {"prompt_tokens": 12, "completion_tokens": 1}})]
    client = make_client("openai", verbose=False)
    response = client.models.generate_content(model="gemini-2.5-flash", contents="hello",
                                              config=types.GenerateContentConfig(response_logprobs=True, logprobs=2))
    assert response.text == "Hi" and response.candidates[0].finish_reason.name == "MAX_TOKENS"
    assert response.usage_metadata.prompt_token_count == 12
    top = response.candidates[0].logprobs_result.top_candidates[0].candidates
    assert [(c.token, c.log_probability) for c in top] == [("Hi", -0.1), ("Yo", -2.5)]
    assert server.requests[-1]["logprobs"] is True and server.requests[-1]["top_logprobs"] == 2
    assert client.models.count_tokens(model="gemini-2.5-flash", contents="hello").total_tokens == 12
    assert server.requests[-1]["max_tokens"] == 1


def test_a_server_without_logprobs_says_so(server):
    server.answers = [(200, {"choices": [{"message": {"content": "Hi"}}], "usage": {}})]
    client = make_client("openai", verbose=False)
    with pytest.raises(errors.APIError, match="returned no log-probabilities for qwen2.5:7b"):
        client.models.generate_content(model="gemini-2.5-flash", contents="hello",
                                       config=types.GenerateContentConfig(response_logprobs=True, logprobs=2))


@pytest.mark.parametrize("fault, expected", [
    ("down", "503 UNREACHABLE: No server answers at http://127.0.0.1:"),
    ("slow", "504 TIMEOUT: The server at 127.0.0.1:"),
    ("not json", "something that is not JSON: '<html>proxy error</html>'"),
    ("refused", "The server at 127.0.0.1:"),
    ("bad arguments", "arguments are not JSON"),
])
def test_a_fault_is_one_clear_line_and_the_evaluation_keeps_every_record(server, workplace, fault, expected):
    client = make_client("openai", verbose=False)
    if fault == "down":
        server.shutdown()
        server.server_close()
    elif fault == "slow":
        server.delay = 3.0
    elif fault == "not json":
        server.answers = [(200, b"<html>proxy error</html>")]
    elif fault == "refused":
        server.answers = [(500, {"error": {"message": "model 'qwen2.5:7b' not found"}})]
    else:
        server.answers = [(200, {**CALL, "choices": [{"message": {"tool_calls": [{"function": {
            "name": "activate_skill", "arguments": "{name: leave"}}]}}]})]
    queries = [LabelledQuery("How many vacation days do I have left?", "leave-balance-calculator", "positive", "en"),
               LabelledQuery("Will it rain tomorrow?", None, "off-topic", "en")]
    outcomes = run_selector(lambda query: pick_by_model(client, workplace, query), queries, progress=False)
    report = evaluate("model", outcomes)
    assert [outcome.query for outcome in outcomes] == queries and report.errors == 2
    reasons = [outcome.decisions[0].error for outcome in outcomes]
    assert all(expected in reason and "Gemini" not in reason for reason in reasons), reasons
    if fault == "refused":
        assert "model 'qwen2.5:7b' not found" in reasons[0]


def test_without_a_model_name_the_client_says_what_to_set(monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.delenv("COURSE_OPENAI_MODEL", raising=False)
    with pytest.raises(ValueError, match="set COURSE_OPENAI_MODEL too"):
        make_client(verbose=False)
    assert Endpoint("http://h:1/v1", "m").host == "h:1"


@pytest.fixture(scope="module")
def llama_server():
    """llama.cpp's own OpenAI-compatible server on the course's model, on a loopback port, stopped after."""
    import xllamacpp

    from course_utils.backend.local.llm import llama_params
    from course_utils.backend.local.model_file import load_model

    params = llama_params(xllamacpp, load_model().path, 4096, None)
    params.use_jinja = True  # tools need the chat template
    server = xllamacpp.Server(params)
    yield f"{server.listening_address}/v1"
    del server


@pytest.mark.model
def test_llama_cpps_own_server_answers_a_decision_and_counts_tokens(llama_server, workplace, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_BASE_URL", llama_server)
    monkeypatch.setenv("COURSE_OPENAI_MODEL", "qwen2.5-coder-1.5b")
    client = make_client("openai", verbose=False)
    decision = pick_by_model(client, workplace, "How many vacation days do I have left this year?")
    assert decision.error is None and decision.prompt_tokens > 1000
    assert decision.raw.model_version.startswith("qwen2.5-coder-1.5b (OpenAI-compatible server at 127.0.0.1:")
    counted = client.models.count_tokens(model="gemini-2.5-flash", contents="How many vacation days?").total_tokens
    assert 0 < counted < 100
    print(f"llama-server decided {decision.skill!r} from {decision.prompt_tokens} prompt tokens "
          f"in {decision.seconds:.1f} s")


def test_the_context_window_and_the_decline_probability_say_what_the_server_cannot_tell(server, workplace,
                                                                                          monkeypatch):
    from course_utils.selection.confidence import decline_probabilities
    from course_utils.scale.decision import context_window

    client = make_client("openai", verbose=False)
    assert context_window(client) == 8192
    monkeypatch.setenv("COURSE_OPENAI_CONTEXT_TOKENS", "32768")
    assert context_window(client) == 32768
    queries = [LabelledQuery("Will it rain tomorrow?", None, "off-topic", "en")]
    assert decline_probabilities(client, workplace, queries) == [None] and server.requests == []

"""The local backend through the real google-genai SDK, with network access blocked.

Tests marked `model` run the local LLM: they check formats and unambiguous cases only.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import numpy as np
import pytest
from google import genai
from google.genai import errors, types

from helpers.chat_models import SENTINEL, qwen_model, render_qwen

from course_utils.backend.client import (
    LOCAL_BASE_URL,
    backend_of,
    make_client,
)
from course_utils.backend.declarations import gemini_schema_to_json_schema, parse_declaration
from course_utils.backend.encoders.embed import strip_task_prefix
from course_utils.backend.local.app import (
    LocalGeminiApp,
    answer_parts,
    build_prompt,
    content_messages,
    decision_schema,
    get_app,
)
from course_utils.backend.local.llm import Completion, ContextOverflow, get_llm
from course_utils.backend.local.model_file import model_choice
from course_utils.backend.provision.models import MODELS

pytestmark = pytest.mark.usefixtures("no_network")

MODEL = "gemini-2.5-flash"
EMBEDDING = "gemini-embedding-2"
WEATHER = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="get_weather", description="Get the current weather in a city.",
    parameters=types.Schema(type="OBJECT", required=["city", "unit"], properties={
        "city": types.Schema(type="STRING", enum=["Paris", "Berlin", "Tokyo"]),
        "unit": types.Schema(type="STRING", enum=["celsius", "fahrenheit"]),
    }))])
QUESTION = "What is the weather in Paris right now, in celsius?"


def _config(mode: str = "AUTO", **kwargs) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=[WEATHER], tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode=mode)), **kwargs)


def _client_for(wsgi_app) -> genai.Client:
    """A genai.Client whose HTTP goes to any WSGI app (for wrapped or recording apps)."""
    return genai.Client(api_key="local", http_options=types.HttpOptions(
        base_url=LOCAL_BASE_URL, api_version="v1beta",
        httpx_client=httpx.Client(transport=httpx.WSGITransport(app=wsgi_app)),
        retry_options=types.HttpRetryOptions(attempts=1)))


# ----------------------------------------------------------------- generation (model files)


@pytest.mark.model
def test_declared_function_comes_back_with_schema_valid_args(local_client) -> None:
    response = local_client.models.generate_content(model=MODEL, contents=QUESTION,
                                                    config=_config("ANY"))
    (call,) = response.function_calls
    assert call.name == "get_weather"
    assert set(call.args) == {"city", "unit"}
    assert call.args["city"] in {"Paris", "Berlin", "Tokyo"}
    assert call.args["unit"] in {"celsius", "fahrenheit"}
    usage = response.usage_metadata
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count


@pytest.mark.model
def test_mode_none_gives_a_text_answer(local_client) -> None:
    response = local_client.models.generate_content(
        model=MODEL, contents="Say hello in one word.", config=_config("NONE",
                                                                        max_output_tokens=16))
    assert response.function_calls is None
    assert response.text.strip()


@pytest.mark.model
def test_function_response_turn(local_client) -> None:
    first = local_client.models.generate_content(model=MODEL, contents=QUESTION,
                                                 config=_config("ANY"))
    history = [
        types.Content(role="user", parts=[types.Part(text=QUESTION)]),
        first.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(
            name="get_weather", response={"temperature": 21, "sky": "sunny"})]),
    ]
    second = local_client.models.generate_content(model=MODEL, contents=history,
                                                  config=_config("NONE", max_output_tokens=40))
    assert second.text.strip()
    question_only = local_client.models.count_tokens(model=MODEL, contents=QUESTION)
    assert second.usage_metadata.prompt_token_count > question_only.total_tokens


@pytest.mark.model
def test_python_callable_declaration(local_client) -> None:
    def forecast(city: str, days: int) -> str:
        """Weather forecast for a city over a number of days."""
        return "sunny"

    response = local_client.models.generate_content(
        model=MODEL, contents="Forecast for Rome for the next 3 days.",
        config=types.GenerateContentConfig(
            tools=[forecast],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
                mode="ANY"))))
    (call,) = response.function_calls
    assert call.name == "forecast"
    assert isinstance(call.args["city"], str) and isinstance(call.args["days"], int)


@pytest.mark.model
def test_count_tokens_agrees_with_usage(local_client) -> None:
    contents = "Name one prime number."
    counted = local_client.models.count_tokens(model=MODEL, contents=contents)
    response = local_client.models.generate_content(
        model=MODEL, contents=contents, config=types.GenerateContentConfig(max_output_tokens=8))
    assert counted.total_tokens == response.usage_metadata.prompt_token_count > 0


@pytest.mark.model
def test_prompt_longer_than_context_is_counted_then_refused_with_a_readable_400(local_client) -> None:
    long = "word " * 9000
    counted = local_client.models.count_tokens(model=MODEL, contents=long).total_tokens
    assert counted > 9000  # every "word " and the chat template's tokens, counted (as Gemini counts past a limit)
    with pytest.raises(errors.ClientError) as caught:
        local_client.models.generate_content(model=MODEL, contents=long)
    assert caught.value.code == 400
    assert f"The input has {counted:,} tokens; the local model's context is 8,192 tokens" in caught.value.message


@pytest.mark.model
def test_counting_and_refusing_leave_the_cached_prompt_as_it_was(local_client) -> None:
    """Both work from llama.cpp's refusal of an oversized prompt, before any token is computed."""
    llm = get_llm()
    messages = [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Name a colour."}]
    first = llm.chat(messages, max_tokens=2)
    again = llm.chat(messages, max_tokens=2)
    assert again.cached_tokens > 0 and again.text == first.text
    assert llm.count_tokens(messages) == first.prompt_tokens
    with pytest.raises(ContextOverflow):
        llm.chat([{"role": "user", "content": "word " * 9000}], max_tokens=2)
    after = llm.chat(messages, max_tokens=2)
    assert (after.cached_tokens, after.text) == (again.cached_tokens, again.text)


@pytest.mark.model
def test_async_client_generates(local_client) -> None:
    async def ask() -> types.GenerateContentResponse:
        return await local_client.aio.models.generate_content(
            model=MODEL, contents="Say hi.", config=types.GenerateContentConfig(
                max_output_tokens=4))

    assert asyncio.run(ask()).usage_metadata.candidates_token_count <= 4


# ----------------------------------------------------------------- embeddings (no LLM)


def test_n_contents_give_n_unit_vectors(local_client) -> None:
    texts = ["Book a meeting room", "Réserver une salle", "Reset my password"]
    response = local_client.models.embed_content(
        model=EMBEDDING, contents=[types.Content(parts=[types.Part(text=t)]) for t in texts],
        config=types.EmbedContentConfig(task_type="RETRIEVAL_QUERY"))
    vectors = np.array([e.values for e in response.embeddings])
    assert vectors.shape == (3, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_list_of_strings_is_one_content_for_gemini_embedding_2(local_client) -> None:
    response = local_client.models.embed_content(model=EMBEDDING, contents=["a", "b", "c"])
    assert len(response.embeddings) == 1


def test_output_dimensionality_truncates_and_renormalizes(local_client) -> None:
    response = local_client.models.embed_content(
        model=EMBEDDING, contents="Book a meeting room",
        config=types.EmbedContentConfig(output_dimensionality=128))
    values = np.array(response.embeddings[0].values)
    assert values.shape == (128,)
    assert np.isclose(np.linalg.norm(values), 1.0, atol=1e-5)


def test_output_dimensionality_above_512_is_a_400(local_client) -> None:
    with pytest.raises(errors.ClientError, match="outputDimensionality must be between 1 and 512"):
        local_client.models.embed_content(
            model=EMBEDDING, contents="x", config=types.EmbedContentConfig(
                output_dimensionality=768))


def test_async_embeddings_go_through_asgi(local_client) -> None:
    async def embed() -> types.EmbedContentResponse:
        return await local_client.aio.models.embed_content(model=EMBEDDING, contents="hello")

    assert len(asyncio.run(embed()).embeddings[0].values) == 512


def test_task_prefixes_are_rewritten() -> None:
    assert strip_task_prefix("task: search result | query: leave days") == "leave days"
    assert strip_task_prefix("title: payslip | text: Explains pay") == "payslip: Explains pay"
    assert strip_task_prefix("title: none | text: Explains pay") == "Explains pay"
    assert strip_task_prefix("plain text") == "plain text"


# ----------------------------------------------------------------- errors


def test_unknown_model_is_a_404_listing_names(local_client) -> None:
    with pytest.raises(errors.ClientError) as caught:
        local_client.models.embed_content(model="text-bison", contents="x")
    assert caught.value.code == 404
    assert "use-multilingual-v3" in caught.value.message


def test_unknown_method_and_malformed_body() -> None:
    app = get_app()
    status, body = app.handle("POST", "/v1beta/models/gemini-2.5-flash:predictLongRunning", b"{}")
    assert status == 404 and body["error"]["status"] == "NOT_FOUND"
    status, body = app.handle("POST", "/v1beta/models/gemini-2.5-flash:generateContent", b"{")
    assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
    status, body = app.handle("POST", "/v1beta/models/gemini-2.5-flash:generateContent",
                              b'{"contents": []}')
    assert status == 400 and "contents" in body["error"]["message"]


def test_malformed_request_surfaces_as_client_error(local_client) -> None:
    with pytest.raises(errors.ClientError) as caught:
        local_client.models.generate_content(model=MODEL, contents=[types.Content(
            role="user", parts=[types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")])])
    assert caught.value.code == 400
    assert "text, functionCall and functionResponse" in caught.value.message


def test_missing_model_file_says_how_to_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("COURSE_MODELS_DIR", str(tmp_path))
    other = next(name for name in MODELS if name != model_choice())  # never loaded here
    client = _client_for(LocalGeminiApp(other).wsgi)
    with pytest.raises(errors.ServerError) as caught:
        client.models.generate_content(model=MODEL, contents="hi")
    assert caught.value.code == 503
    assert "python -m course_utils models fetch" in caught.value.message


class RateLimited:
    """WSGI middleware: answer 429 to the first `failures` requests, then pass through."""

    def __init__(self, app, failures: int) -> None:
        self.app, self.failures, self.calls = app, failures, 0

    def __call__(self, environ, start_response):
        self.calls += 1
        if self.calls > self.failures:
            return self.app(environ, start_response)
        body = json.dumps({"error": {"code": 429, "message": "Quota exceeded, slow down.",
                                     "status": "RESOURCE_EXHAUSTED"}}).encode()
        start_response("429 Too Many Requests", [("Content-Type", "application/json")])
        return [body]


def test_429_surfaces_as_client_error() -> None:
    client = _client_for(RateLimited(get_app().wsgi, failures=1))
    with pytest.raises(errors.ClientError) as caught:
        client.models.embed_content(model=EMBEDDING, contents="x")
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"


def test_retrying_client_retries_429() -> None:
    limited = RateLimited(get_app().wsgi, failures=2)
    client = genai.Client(api_key="local", http_options=types.HttpOptions(
        base_url=LOCAL_BASE_URL, api_version="v1beta",
        httpx_client=httpx.Client(transport=httpx.WSGITransport(app=limited)),
        retry_options=types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.05,
                                             http_status_codes=[429])))
    response = client.models.embed_content(model=EMBEDDING, contents="x")
    assert len(response.embeddings) == 1 and limited.calls == 3


# ----------------------------------------------------------------- wire format and schemas


def test_sdk_sends_json_schema_for_callables_and_openapi_types_for_schemas() -> None:
    seen = []

    def recorder(environ, start_response):
        seen.append(json.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))))
        body = json.dumps({"candidates": [{"content": {"role": "model",
                                                       "parts": [{"text": "ok"}]}}]}).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]

    def forecast(city: str) -> str:
        """Forecast."""
        return city

    _client_for(recorder).models.generate_content(
        model=MODEL, contents="x", config=types.GenerateContentConfig(
            tools=[forecast, WEATHER],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    declarations = [d for tool in seen[0]["tools"] for d in tool["functionDeclarations"]]
    assert "parameters_json_schema" in declarations[0]
    assert declarations[1]["parameters"]["properties"]["city"]["type"] == "STRING"


def test_gemini_schema_conversion() -> None:
    schema = {"type": "OBJECT", "required": ["n"], "propertyOrdering": ["n", "tags"],
              "properties": {"n": {"type": "INTEGER", "nullable": True, "format": "int32"},
                             "tags": {"type": "ARRAY", "items": {"type": "STRING",
                                                                 "enum": ["a", "b"]}}}}
    assert gemini_schema_to_json_schema(schema) == {
        "type": "object", "required": ["n"], "additionalProperties": False,
        "properties": {"n": {"type": ["integer", "null"]},
                       "tags": {"type": "array", "items": {"type": "string",
                                                           "enum": ["a", "b"]}}}}


def test_decision_schema_has_one_alternative_per_function_and_text() -> None:
    declaration = parse_declaration({"name": "f", "parametersJsonSchema": {
        "type": "object", "properties": {"x": {"type": "string"}}}})
    assert declaration.parameters["additionalProperties"] is False
    auto = decision_schema([declaration], allow_text=True)["anyOf"]
    assert [alt["properties"].get("name", {}).get("const") for alt in auto] == ["f", None]
    assert len(decision_schema([declaration], allow_text=False)["anyOf"]) == 1


def test_constrained_answers_become_parts() -> None:
    def parts(raw: str) -> list[dict]:
        return answer_parts(Completion(raw, 10, 5, "stop"), constrained=True)

    assert parts('{"name":"f","arguments":{"x":"a"}}') == [
        {"functionCall": {"name": "f", "args": {"x": "a"}}}]
    assert parts('{"text":"caf\\u00e9"}') == [{"text": "café"}]
    assert parts('{"text":"cut short \\u00') == [{"text": "cut short "}]  # maxOutputTokens
    assert parts('{"name":"f","arguments":{"x":"a') == []  # a call cut short: not shown as a text (a silent "none")


def test_a_text_result_is_shown_as_text_and_anything_else_as_json() -> None:
    body = "# Custom cake orders\n\n1. **Size by guests.**"
    turn = {"role": "user", "parts": [
        {"functionResponse": {"name": "load_skill", "response": {"result": body}}},
        {"functionResponse": {"name": "count", "response": {"result": 3}}},
        {"functionResponse": {"name": "pair", "response": {"a": "x", "b": "y"}}}]}
    text, number, pair = content_messages(turn)
    assert text == {"role": "tool", "content": body}  # line breaks kept, not escaped as \\n
    assert json.loads(number["content"]) == {"name": "count", "response": {"result": 3}}
    assert json.loads(pair["content"]) == {"name": "pair", "response": {"a": "x", "b": "y"}}


def test_a_first_turn_prompt_has_no_tool_result_to_render() -> None:
    """The tool-result rendering changes only later turns: a first-turn decision (lessons 06-11) is untouched."""
    request = {"systemInstruction": {"parts": [{"text": "Pick."}]},
               "contents": [{"role": "user", "parts": [{"text": "What is the capital of Australia?"}]}]}
    assert [m["role"] for m in build_prompt(request).messages] == ["system", "user"]


LOAD = {"name": "load_skill", "parameters": {"type": "OBJECT", "required": ["name"], "properties": {
    "name": {"type": "STRING", "enum": ["cake", "hours", "allergens"]}}}}
CALENDAR = {"name": "check_calendar", "parameters": {"type": "OBJECT", "properties": {
    "day": {"type": "STRING"}, "line": {"type": "STRING", "enum": ["regular", "nut-free"]}}}}
ASK = {"role": "user", "parts": [{"text": "A cake, please."}]}


def _request(mode: str | None = None, allowed: list[str] | None = None) -> dict:
    config = {"mode": mode, **({"allowedFunctionNames": allowed} if allowed else {})} if mode else None
    return {"tools": [{"functionDeclarations": [LOAD, CALENDAR]}], "contents": [ASK],
            **({"toolConfig": {"functionCallingConfig": config}} if config else {})}


def _answers(grammar_request: dict) -> tuple[set[str], bool]:
    """(the functions the grammar accepts a call of, whether it accepts text) for a request."""
    grammar = build_prompt(grammar_request).grammar
    return {name for name in ("load_skill", "check_calendar") if name in grammar}, '"text"' in grammar


@pytest.mark.parametrize(("mode", "allowed", "functions", "text"), [
    (None, None, {"load_skill", "check_calendar"}, True),
    ("AUTO", None, {"load_skill", "check_calendar"}, True),
    ("ANY", None, {"load_skill", "check_calendar"}, False),
    ("ANY", ["check_calendar"], {"check_calendar"}, False),
    ("NONE", None, set(), True),
    ("VALIDATED", None, {"load_skill", "check_calendar"}, True),
    ("VALIDATED", ["load_skill"], {"load_skill"}, True),
])
def test_the_grammar_accepts_what_the_tool_config_allows(mode, allowed, functions, text) -> None:
    assert _answers(_request(mode, allowed)) == (functions, text)


def test_the_prompt_shows_every_declaration_whatever_the_allowed_names() -> None:
    system = build_prompt(_request()).messages[0]
    assert build_prompt(_request("VALIDATED", ["check_calendar"])).messages[0] == system  # same cached prefix
    assert "load_skill" in system["content"] and "check_calendar" in system["content"]


@pytest.mark.parametrize(("config", "says"), [
    ({"mode": "AUTO", "allowedFunctionNames": ["load_skill"]}, "only with mode ANY or VALIDATED"),
    ({"mode": "NONE", "allowedFunctionNames": ["load_skill"]}, "only with mode ANY or VALIDATED"),
    ({"mode": "VALIDATED", "allowedFunctionNames": ["read_file"]}, "not declared"),
    ({"mode": "SOMETIMES"}, "Unsupported functionCallingConfig.mode"),
])
def test_a_tool_config_gemini_refuses_is_a_400_naming_the_problem(config: dict, says: str) -> None:
    body = {**_request(), "toolConfig": {"functionCallingConfig": config}}
    status, payload = LocalGeminiApp("qwen2.5-coder-1.5b").handle(
        "POST", f"/v1beta/models/{MODEL}:generateContent", json.dumps(body).encode())
    assert status == 400 and payload["error"]["status"] == "INVALID_ARGUMENT" and says in payload["error"]["message"]


# ----------------------------------------------------------------- make_client


def test_make_client_picks_gemini_when_a_key_is_set(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    client = make_client()
    assert backend_of(client).name == "gemini"
    assert backend_of(client).key_variable == "GEMINI_API_KEY"
    retry = backend_of(client).http_options.retry_options
    assert retry.attempts == 5 and 429 in retry.http_status_codes
    assert capsys.readouterr().out.startswith("Backend: Gemini")


def test_make_client_is_local_without_a_key(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    client = make_client()
    assert backend_of(client).name == "local"
    assert backend_of(client).http_options.base_url == LOCAL_BASE_URL and backend_of(client).key_variable is None
    assert "Set GEMINI_API_KEY to use Gemini" in capsys.readouterr().out


def test_gemini_without_a_key_explains_the_local_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="uses the local backend"):
        make_client("gemini")


def test_second_encoder_gives_unit_vectors_of_its_own_size(local_client) -> None:
    texts = ["task: search result | query: How many vacation days are left?",
             "title: leave-balance-calculator | text: Computes paid leave left.", "Will it rain?"]
    response = local_client.models.embed_content(
        model="multilingual-e5-small", contents=[types.Content(parts=[types.Part(text=t)]) for t in texts])
    vectors = np.array([e.values for e in response.embeddings])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


class RecordingServer:
    """llama.cpp replaced: `computed` lists the prefill pieces, `requests` the answers' requests; a token is a
    character; `refuse` makes it refuse everything."""

    build = "test"

    def __init__(self) -> None:
        self.computed: list[str] = []
        self.requests: list[dict] = []
        self.refuse = False

    def complete(self, request: dict) -> dict:
        prompt = request["prompt"]
        self.computed.append(prompt) if prompt.endswith(SENTINEL) else self.requests.append(request)
        if self.refuse:
            return {"error": {"type": "server_error", "message": "refused"}}
        return {"choices": [{"text": "ok", "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1}}

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]


def recording_llm(context: int = 8192):
    """A `LocalLLM` talking to a `RecordingServer` (its `server`)."""
    from course_utils.backend.local.llm import LocalLLM

    return LocalLLM(qwen_model(context), RecordingServer())


def test_each_request_cuts_the_last_answer_off_at_its_messages_checkpoint() -> None:
    from course_utils.backend.local.llm import LLMError

    llm, system = recording_llm(), "<|im_start|>system\nBe brief.<|im_end|>\n"
    hello = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
    bye = [hello[0], {"role": "user", "content": "bye"}]
    llm.chat(hello)
    assert llm.server.computed == [system + SENTINEL, system + "<|im_start|>user\nhello<|im_end|>\n" + SENTINEL]
    before = len(llm.server.computed)
    llm.chat(hello)
    assert llm.server.computed[before:] == [system + "<|im_start|>user\nhello<|im_end|>\n" + SENTINEL]  # the cut
    llm.server.refuse = True
    with pytest.raises(LLMError, match="refused"):
        llm.chat(bye)
    llm.server.refuse = False
    before = len(llm.server.computed)
    llm.chat(bye)
    assert llm.server.computed[before:] == [system + SENTINEL, system + "<|im_start|>user\nbye<|im_end|>\n" + SENTINEL]


def test_tokens_are_counted_by_the_tokenizer_and_an_overlong_prompt_is_refused_before_any_request() -> None:
    llm, messages = recording_llm(context=200), [{"role": "user", "content": "hello"}]
    assert llm.count_tokens(messages) == len(render_qwen(messages)[0])
    with pytest.raises(ContextOverflow, match=r"The input has \d{3} tokens; the local model.s context is 200 tokens"):
        llm.chat([{"role": "user", "content": "x" * 200}])
    assert llm.server.requests == llm.server.computed == []


def test_top_p_and_top_k_reach_llama_cpp_only_when_a_request_sets_them() -> None:
    llm = recording_llm()
    messages = [{"role": "user", "content": "hello"}]
    llm.chat(messages)
    llm.chat(messages, temperature=0.7, seed=1)
    llm.chat(messages, temperature=0.7, seed=1, top_p=0.5, top_k=3)
    greedy, default, chosen = llm.server.requests
    assert greedy["temperature"] == 0.0 and default["temperature"] == 0.7
    assert not {"top_p", "top_k"} & (greedy.keys() | default.keys())  # llama.cpp's own defaults
    assert (chosen["top_p"], chosen["top_k"]) == (0.5, 3)


def test_top_p_and_top_k_of_a_request_reach_the_model_and_bad_values_are_a_400() -> None:
    from course_utils.backend.declarations import InvalidRequest
    from course_utils.backend.local.app import generation_options

    seen = []

    def recorder(environ, start_response):
        seen.append(json.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"]))))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}}]}).encode()]

    _client_for(recorder).models.generate_content(
        model=MODEL, contents="x", config=types.GenerateContentConfig(temperature=0.7, top_p=0.5, top_k=3))
    assert generation_options(seen[0]) == {"temperature": 0.7, "max_tokens": None, "seed": None,
                                            "top_logprobs": None, "top_p": 0.5, "top_k": 3}
    for bad in ({"topP": 0}, {"topP": 1.5}, {"topK": 0}, {"topK": 2.5}, {"topP": "high"}):
        with pytest.raises(InvalidRequest, match="topP|topK"):
            generation_options({"generationConfig": bad})

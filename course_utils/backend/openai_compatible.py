"""An in-process app that answers the course's Gemini requests with a chat server the learner already runs.

``COURSE_OPENAI_BASE_URL`` names an OpenAI-compatible endpoint (Ollama ``http://127.0.0.1:11434/v1``, LM Studio
``http://127.0.0.1:1234/v1``, vLLM, llama.cpp's ``llama-server``) and ``COURSE_OPENAI_MODEL`` the model it serves;
``COURSE_OPENAI_API_KEY`` is sent as a bearer token when set. A real ``genai.Client`` reaches this app as it reaches
the local one (``backend.wire``), so learner code does not change. Each ``generateContent`` becomes one
``POST /chat/completions``:

| Gemini | OpenAI chat |
|---|---|
| ``systemInstruction`` | a ``system`` message |
| user text, model text | ``user``, ``assistant`` messages |
| a model ``functionCall`` | an ``assistant`` message with ``tool_calls`` |
| a ``functionResponse`` | a ``tool`` message answering the latest call of that name |
| ``functionDeclarations`` | ``tools`` (the JSON schema of ``backend.declarations``) |
| ``toolConfig`` AUTO, NONE, ANY, VALIDATED | ``tool_choice`` auto, none, required, auto (the allowed ``tools``) |
| ``temperature``, ``seed``, ``maxOutputTokens``, ``topP``, ``topK`` | the same (``top_k`` where the server has it) |
| ``responseLogprobs``, ``logprobs`` | ``logprobs``, ``top_logprobs``: a clear error when the server returns none |

``countTokens`` has no OpenAI equivalent: the same chat request is sent with ``max_tokens: 1`` and its
``usage.prompt_tokens`` is the count. Embeddings stay local (the course's encoders, ``backend.encoders``). A
server that is down, slow, refuses, or answers something other than JSON gets a Gemini-shaped error with a status
of its own (UNREACHABLE, TIMEOUT, REFUSED, BAD_ANSWER, NO_LOGPROBS) and a message saying what to do;
``evaluation`` records it against the query and goes on.
A server that answers 408, 429, 502, 503 or 504 (busy, rate-limited, a gateway in front of it) is asked again
with the Gemini client's back-off (``retries.retry_options``: 2, 4, 8, 16 s); one that does not answer at all fails at
once, so a server that is gone costs each remaining decision one refused connection.

How a request that declares functions is asked (``tools``, a JSON ``schema``, or ``auto``: ``COURSE_OPENAI_DECISION``)
is ``backend.structured``'s business.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from course_utils.backend.content import logprobs_result, response_text, text_of
from course_utils.backend.declarations import Json, function_calling, parse_declarations
from course_utils.backend.encoders.api import METHODS as EMBEDDING_METHODS
from course_utils.backend.encoders.api import serve as serve_embedding
from course_utils.backend.encoders.embed import truncate
from course_utils.backend.structured import Way, decision_setting, schema_body, schema_parts, tools_verdict
from course_utils.backend.wire import ApiError, InProcessApp

BASE_URL_ENV = "COURSE_OPENAI_BASE_URL"
MODEL_ENV = "COURSE_OPENAI_MODEL"
KEY_ENV = "COURSE_OPENAI_API_KEY"
TIMEOUT_ENV = "COURSE_OPENAI_TIMEOUT_S"
EMBEDDING_ENV = "COURSE_OPENAI_EMBEDDING_MODEL"
CONTEXT_ENV = "COURSE_OPENAI_CONTEXT_TOKENS"
DEFAULT_CONTEXT_TOKENS = 8192
DEFAULT_TIMEOUT_S = 300.0
"""A first request may wait while the server loads its model."""
RETRIED_STATUS_CODES = (408, 429, 502, 503, 504)
"""The server's answers asked again: busy or rate-limited, not refusals (a 500 or a 4xx says the same twice)."""


@dataclass(frozen=True)
class Endpoint:
    """Where the chat requests go."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    embedding_model: str | None = None
    """The server's embedding model; None: embeddings stay on the local encoders."""

    @property
    def host(self) -> str:
        """The server's host and port, as labels show it."""
        return urlsplit(self.base_url).netloc or self.base_url

    @classmethod
    def from_env(cls) -> Endpoint:
        """The endpoint the environment names; ValueError saying what is missing."""
        base_url, model = os.environ.get(BASE_URL_ENV), os.environ.get(MODEL_ENV)
        if not base_url:
            raise ValueError(f"Set {BASE_URL_ENV} to the server's OpenAI-compatible address, e.g. "
                             "http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:1234/v1 (LM Studio).")
        if not model:
            raise ValueError(f"{BASE_URL_ENV} is set: set {MODEL_ENV} too, to the model the server should run "
                             "(for Ollama, a name `ollama list` shows, e.g. qwen2.5:7b).")
        try:
            timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S)
        except ValueError:
            raise ValueError(f"{TIMEOUT_ENV} must be a number of seconds.") from None
        return cls(base_url.rstrip("/"), model, os.environ.get(KEY_ENV) or None, timeout,
                   os.environ.get(EMBEDDING_ENV) or None)


def context_tokens() -> int:
    """The server's context window: the OpenAI API does not report it, so COURSE_OPENAI_CONTEXT_TOKENS says it
    (default 8,192, the local backend's)."""
    value = os.environ.get(CONTEXT_ENV) or str(DEFAULT_CONTEXT_TOKENS)
    if not value.isdigit() or int(value) <= 0:
        raise ValueError(f"{CONTEXT_ENV} must be a positive whole number of tokens, got {value!r}.")
    return int(value)


def shorten(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters: a server's answer quoted in an error."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ----------------------------------------------------------------- Gemini request → OpenAI chat request


def chat_messages(request: Json) -> list[Json]:
    """The chat messages of a generateContent request, calls and results paired by id."""
    messages: list[Json] = []
    if request.get("systemInstruction") is not None:
        messages.append({"role": "system", "content": text_of(request["systemInstruction"], "systemInstruction")})
    contents = request.get("contents")
    contents = [contents] if isinstance(contents, dict) else contents
    if not isinstance(contents, list) or not contents:
        raise ApiError(400, "contents must be a non-empty list of Content objects.")
    ids = (f"call_{n}" for n in itertools.count(1))
    open_calls: dict[str, list[str]] = {}
    for content in contents:
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            raise ApiError(400, "Each item of contents must be a Content with a list of parts.")
        texts = [part["text"] for part in parts if "text" in part]
        if content.get("role") == "model":
            message: Json = {"role": "assistant", "content": "\n".join(texts) or None}
            calls = [part["functionCall"] for part in parts if "functionCall" in part]
            if calls:
                message["tool_calls"] = []
                for call in calls:
                    call_id = next(ids)
                    open_calls.setdefault(call.get("name", ""), []).append(call_id)
                    message["tool_calls"].append({"id": call_id, "type": "function", "function": {
                        "name": call.get("name", ""), "arguments": json.dumps(call.get("args") or {})}})
            messages.append(message)
            continue
        for part in parts:
            if "functionResponse" in part:
                name = part["functionResponse"].get("name", "")
                waiting = open_calls.get(name) or [next(ids)]
                messages.append({"role": "tool", "tool_call_id": waiting.pop(0),
                                 "content": response_text(part["functionResponse"])})
        if texts:
            messages.append({"role": "user", "content": "\n".join(texts)})
    return messages


def chat_request(request: Json, model: str) -> Json:
    """The OpenAI chat request for a generateContent request."""
    body: Json = {"model": model, "messages": chat_messages(request)}
    declarations = parse_declarations(request.get("tools"))
    if declarations:
        calling = function_calling(request.get("toolConfig"), declarations)
        offered = calling.functions or declarations
        body["tools"] = [{"type": "function", "function": {"name": d.name, "description": d.description,
                                                           "parameters": d.parameters}} for d in offered]
        if not calling.functions:
            body["tool_choice"] = "none"
        elif calling.allow_text:
            body["tool_choice"] = "auto"
        else:  # only the allowed functions are offered: "required" is one of them, on every server
            body["tool_choice"] = "required"
    config = request.get("generationConfig") or {}
    options = {"temperature": config.get("temperature"), "seed": config.get("seed"),
               "max_tokens": config.get("maxOutputTokens"), "top_p": config.get("topP"), "top_k": config.get("topK")}
    body.update((key, value) for key, value in options.items() if value is not None)
    if config.get("responseLogprobs"):
        body["logprobs"] = True
        body["top_logprobs"] = config.get("logprobs") or 0
    return body


# ----------------------------------------------------------------- OpenAI chat answer → Gemini response


def gemini_response(answer: Json, endpoint: Endpoint, logprobs_asked: int | None, schema: bool = False) -> Json:
    """A generateContent response made of one chat completion (`schema`: an answer to ``structured.schema_body``)."""
    try:
        choice = answer["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError):
        raise ApiError(502, f"The server at {endpoint.host} answered without a choice: "
                            f"{shorten(json.dumps(answer), 200)}", "BAD_ANSWER") from None
    if schema:
        parts = schema_parts(message.get("content"), choice.get("finish_reason"))
    else:
        parts = [{"text": message["content"]}] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            raise ApiError(502, f"The server at {endpoint.host} sent a call of {function.get('name')!r} whose "
                                f"arguments are not JSON: {shorten(str(function.get('arguments')), 200)}",
                           "BAD_ANSWER") from None
        parts.append({"functionCall": {"name": function.get("name", ""), "args": arguments}})
    candidate: Json = {"content": {"role": "model", "parts": parts}, "index": 0,
                       "finishReason": "MAX_TOKENS" if choice.get("finish_reason") == "length" else "STOP"}
    if logprobs_asked is not None:
        tokens = (choice.get("logprobs") or {}).get("content")
        if not tokens:
            raise ApiError(501, f"The server at {endpoint.host} returned no log-probabilities for "
                                f"{endpoint.model}. Use a server that returns them (llama.cpp's llama-server, "
                                "vLLM), or the local backend.", "NO_LOGPROBS")
        candidate["logprobsResult"] = logprobs_result(tokens, logprobs_asked)
    usage = answer.get("usage") or {}
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return {"candidates": [candidate], "modelVersion": f"{endpoint.model} (OpenAI-compatible server at "
                                                       f"{endpoint.host})",
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                              "totalTokenCount": prompt + completion}}


# ----------------------------------------------------------------- the app


class OpenAICompatibleApp(InProcessApp):
    """The Gemini-compatible app whose generation requests go to an OpenAI-compatible chat server."""

    def __init__(self, endpoint: Endpoint, decisions: str = "auto") -> None:
        self.endpoint = endpoint
        self.way = Way(decisions, endpoint.host)
        self._http = httpx.Client(timeout=endpoint.timeout_s, trust_env=False)

    def serve(self, model: str, method: str, payload: Json) -> Json:
        """Generation on the server; embeddings on the local encoders, or on the server's embedding model."""
        if method in EMBEDDING_METHODS and self.endpoint.embedding_model:
            return self.embed(payload, method)
        if method in EMBEDDING_METHODS:
            return serve_embedding(method, payload, model)
        if method == "generateContent":
            return self.generate(payload)
        if method == "countTokens":
            inner = payload.get("generateContentRequest")
            body = self.request_body(inner if isinstance(inner, dict) else payload, self.way.current)
            body.update(max_tokens=1, logprobs=False)
            body.pop("top_logprobs", None)
            return {"totalTokens": int((self.chat(body).get("usage") or {}).get("prompt_tokens") or 0)}
        raise ApiError(404, f"{method} is not supported with an OpenAI-compatible server: generateContent, "
                            "countTokens, embedContent and batchEmbedContents are.")

    def request_body(self, request: Json, way: str) -> Json:
        """The chat request of a generateContent request, asked `way` ("tools" or "schema") when it declares
        functions."""
        body = chat_request(request, self.endpoint.model)
        return schema_body(body, request) if way == "schema" and "tools" in body else body

    def generate(self, request: Json) -> Json:
        """One generateContent on the server, asked the app's way; under ``auto`` an answer that shows tools do not
        work for this server and model (a refusal, a call written as text) settles on the schema and is asked again."""
        config = request.get("generationConfig") or {}
        asked = (config.get("logprobs") or 0) if config.get("responseLogprobs") else None
        declared = parse_declarations(request.get("tools"))
        way = self.way.current if declared else "tools"
        if way == "schema":
            return gemini_response(self.chat(self.request_body(request, way)), self.endpoint, asked, schema=True)
        try:
            response = gemini_response(self.chat(self.request_body(request, way)), self.endpoint, asked)
        except ApiError as error:
            if not (declared and self.way.deciding and error.status == "REFUSED" and error.code in (400, 422, 500)):
                raise
            self.way.settle("schema", f"it refused tools: {shorten(error.message, 120)}")
            return self.generate(request)
        if declared and self.way.deciding:
            verdict = tools_verdict(response["candidates"][0]["content"]["parts"], declared)
            if verdict == "tools":
                self.way.settle("tools", "its model answered with a tool call")
            elif verdict == "schema" and self.way.settle("schema", "its model wrote a call as text, not a tool "
                                                                   "call") == "schema":
                return self.generate(request)
        return response

    def embed(self, payload: Json, method: str) -> Json:
        """Vectors from the server's ``/embeddings``: one per request, a Content's parts joined with a newline (as
        the local app does), cut to ``outputDimensionality`` and renormalised."""
        import numpy as np

        items = payload.get("requests") if method == "batchEmbedContents" else [payload]
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) and "content" in i for i in items):
            raise ApiError(400, "requests must be a non-empty list of requests, each with a content.")
        answer = self.post("/embeddings", {"model": self.endpoint.embedding_model,
                                           "input": [text_of(item["content"], "content") for item in items]})
        data = sorted(answer.get("data") or [], key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
        vectors = [d.get("embedding") if isinstance(d, dict) else None for d in data]
        if len(vectors) != len(items) or not all(isinstance(v, list) and v for v in vectors):
            raise ApiError(502, f"The server at {self.endpoint.host} answered {len(vectors)} embedding(s) for "
                                f"{len(items)} text(s) with {self.endpoint.embedding_model}.", "BAD_ANSWER")
        values = [truncate(np.asarray([v], dtype=np.float64), item.get("outputDimensionality"))[0].tolist()
                  for v, item in zip(vectors, items)]
        if method == "embedContent":
            return {"embedding": {"values": values[0]}}
        return {"embeddings": [{"values": v} for v in values]}

    def chat(self, body: Json) -> Json:
        """POST one chat completion; every failure becomes an ApiError saying what to do."""
        return self.post("/chat/completions", body)

    def post(self, path: str, body: Json) -> Json:
        """POST `body` to the server's `path`; every failure becomes an ApiError saying what to do."""
        from course_utils.backend.retries import retry_options

        url = f"{self.endpoint.base_url}{path}"
        headers = {"Authorization": f"Bearer {self.endpoint.api_key}"} if self.endpoint.api_key else {}
        retry = retry_options()
        try:
            for attempt in range(retry.attempts):
                response = self._http.post(url, json=body, headers=headers)
                if response.status_code not in RETRIED_STATUS_CODES or attempt == retry.attempts - 1:
                    break
                time.sleep(retry.initial_delay * retry.exp_base ** attempt)
        except httpx.TimeoutException:
            raise ApiError(504, f"The server at {self.endpoint.host} gave no answer within "
                                f"{self.endpoint.timeout_s:g} s: it may still be loading {self.endpoint.model}, or "
                                f"be overloaded. Try again, or raise {TIMEOUT_ENV}.", "TIMEOUT") from None
        except httpx.TransportError as error:
            raise ApiError(503, f"No server answers at {self.endpoint.base_url} ({type(error).__name__}): start it "
                                f"(ollama serve, LM Studio's server, llama-server), or unset {BASE_URL_ENV} to use "
                                "the local model.", "UNREACHABLE") from None
        try:
            answer = response.json()
        except ValueError:
            raise ApiError(502, f"The server at {self.endpoint.host} answered HTTP {response.status_code} with "
                                f"something that is not JSON: {shorten(response.text, 200)!r}",
                           "BAD_ANSWER") from None
        if response.status_code >= 400:
            error = answer.get("error") if isinstance(answer, dict) else None
            message = error.get("message") if isinstance(error, dict) else error or answer
            advice = {401: f" Set {KEY_ENV} to the server's key.", 403: f" Check {KEY_ENV}.",
                      404: f" Check {MODEL_ENV} (a model the server has) and {BASE_URL_ENV} (most servers' "
                           "address ends in /v1)."}.get(response.status_code, "")
            raise ApiError(response.status_code, f"The server at {self.endpoint.host} refused the request: "
                                                 f"{shorten(str(message), 300)}.{advice}", "REFUSED")
        if not isinstance(answer, dict):
            raise ApiError(502, f"The server at {self.endpoint.host} answered JSON that is not an object.",
                           "BAD_ANSWER")
        return answer


_APPS: dict[tuple[Endpoint, str], OpenAICompatibleApp] = {}


def get_app(endpoint: Endpoint | None = None) -> OpenAICompatibleApp:
    """The shared app for an endpoint (default: the one the environment names)."""
    endpoint, decisions = endpoint or Endpoint.from_env(), decision_setting()
    if (endpoint, decisions) not in _APPS:
        _APPS[endpoint, decisions] = OpenAICompatibleApp(endpoint, decisions)
    return _APPS[endpoint, decisions]

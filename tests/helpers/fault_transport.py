"""A real genai.Client whose HTTP goes to a scripted httpx transport: faults on demand, no model, no socket.

`FaultTransport(handler)` calls `handler(request)` for every request the SDK sends and records it;
the handler returns an `httpx.Response` or raises (e.g. `httpx.ReadTimeout`). The helpers below build
the bodies Gemini sends.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpx
from google import genai
from google.genai import types

from course_utils.backend.client import retry_options
from course_utils.selection.pick import ACTIVATE

BASE_URL = "http://faulty-gemini"
Handler = Callable[[httpx.Request], httpx.Response]


class FaultTransport(httpx.BaseTransport):
    """Serves every request with `handler(request)`; `.requests` keeps them all, in order."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return self.handler(request)


def fast_retries() -> types.HttpRetryOptions:
    """The course's Gemini retry options (attempts, status codes) with millisecond waits and no jitter."""
    return retry_options().model_copy(update={"initial_delay": 0.001, "max_delay": 0.005, "jitter": 0.0})


def fault_client(handler: Handler, retries: bool = True) -> tuple[genai.Client, FaultTransport]:
    """A genai.Client (seen as "gemini" by backend_of) served by `handler`, with or without retries."""
    transport = FaultTransport(handler)
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(
        base_url=BASE_URL, api_version="v1beta", retry_options=fast_retries() if retries else None,
        httpx_client=httpx.Client(transport=transport, base_url=BASE_URL)))
    return client, transport


def in_order(*answers: httpx.Response | Exception) -> Handler:
    """A handler giving `answers` one per request, the last one again for every later request."""
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handle


def error(code: int, status: str, message: str = "something went wrong", retry_delay: str | None = None,
          headers: dict[str, str] | None = None) -> httpx.Response:
    """Gemini's error body; with `retry_delay`, the RetryInfo detail a 429 carries (e.g. "30s")."""
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}] if retry_delay else []
    body: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        body["details"] = details
    return httpx.Response(code, json={"error": body}, headers=headers)


def raw(code: int, text: str, content_type: str = "text/html") -> httpx.Response:
    """A body that is not JSON (a proxy's HTML page, say)."""
    return httpx.Response(code, content=text.encode(), headers={"Content-Type": content_type})


def generated(parts: Sequence[dict[str, Any]] | None, tokens: int = 321, **extra: Any) -> httpx.Response:
    """A generateContent answer with these parts (None: no candidates at all)."""
    body: dict[str, Any] = {"usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 5,
                                              "totalTokenCount": tokens + 5}, **extra}
    if parts is not None:
        body["candidates"] = [{"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}]
    return httpx.Response(200, json=body)


def activate(name: Any, **more: Any) -> dict[str, Any]:
    """A functionCall part calling activate_skill."""
    return {"functionCall": {"name": ACTIVATE, "args": {"name": name, **more}}}


def embedded(vectors: Iterable[Sequence[float]]) -> httpx.Response:
    """A batchEmbedContents answer."""
    return httpx.Response(200, json={"embeddings": [{"values": list(v)} for v in vectors]})


def body(request: httpx.Request) -> dict[str, Any]:
    return json.loads(request.content)


def query_of(request: httpx.Request) -> str:
    """The user's text in a generateContent request."""
    return body(request)["contents"][-1]["parts"][0]["text"]


def texts_of(request: httpx.Request) -> list[str]:
    """The texts of a batchEmbedContents request."""
    return [item["content"]["parts"][0]["text"] for item in body(request)["requests"]]


def method_of(request: httpx.Request) -> str:
    return request.url.path.rsplit(":", 1)[-1]

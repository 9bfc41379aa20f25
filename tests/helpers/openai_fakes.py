"""A fake OpenAI-compatible chat server on loopback, for the tests of `course_utils.backend.openai_compatible`."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CALL = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "activate_skill", "arguments": "{\"name\": \"leave-balance-calculator\"}"}}]}}],
    "usage": {"prompt_tokens": 321, "completion_tokens": 9}}


class FakeChatServer(ThreadingHTTPServer):
    """Answers each POST with the next (status, body) of `answers` (the last one repeated; bytes are sent as they
    are), or with `answer_for(request)` when set, after `delay` seconds; `requests` and `headers` record what came,
    `most_at_once` the most requests it was answering at the same time."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.answers: list[tuple[int, dict | bytes]] = [(200, CALL)]
        self.delay = 0.0
        self.answer_for: Callable[[dict], tuple[int, dict | bytes]] | None = None
        self.in_flight = self.most_at_once = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        server: FakeChatServer = self.server  # type: ignore[assignment]
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            server.requests.append(request)
            server.headers.append({key.lower(): value for key, value in self.headers.items()})
            server.in_flight += 1
            server.most_at_once = max(server.most_at_once, server.in_flight)
        time.sleep(server.delay)
        with server.lock:
            server.in_flight -= 1
            if server.answer_for is not None:
                status, answer = server.answer_for(request)
            else:
                status, answer = server.answers.pop(0) if len(server.answers) > 1 else server.answers[0]
        body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def chat_server(monkeypatch: pytest.MonkeyPatch, timeout_s: float = 2) -> Iterator[FakeChatServer]:
    """A running fake server that COURSE_OPENAI_BASE_URL names, serving the model "qwen2.5:7b"; shut down after."""
    fake = FakeChatServer()
    threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    monkeypatch.setenv("COURSE_OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("COURSE_OPENAI_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("COURSE_OPENAI_TIMEOUT_S", str(timeout_s))
    monkeypatch.delenv("COURSE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("COURSE_OPENAI_EMBEDDING_MODEL", raising=False)
    try:
        yield fake
    finally:
        fake.shutdown()
        fake.server_close()


def content(text: str, finish_reason: str = "stop") -> dict:
    """A chat completion whose message is `text` (a schema answer, or a model's text)."""
    return {"choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant",
                                                                               "content": text}}],
            "usage": {"prompt_tokens": 345, "completion_tokens": 12}}

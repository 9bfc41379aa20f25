"""The envelope of the Gemini REST API as the offline backends serve it: routes, errors, JSON bodies, and the
WSGI and ASGI entry points through which a real ``genai.Client`` reaches an app inside this process.

An app subclasses ``InProcessApp`` and implements ``serve(model, method, payload)``; ``handle`` routes a request
(``POST /{api_version}/models/{model}:{method}``), parses its JSON body, and turns every failure into Gemini's
``{"error": {"code", "message", "status"}}`` shape, so the client always gets a reply it can read.
"""
from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any

from course_utils.backend.declarations import InvalidRequest, Json

ROUTE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
STATUS_NAMES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
                500: "INTERNAL", 503: "FAILED_PRECONDITION"}


class ApiError(Exception):
    """An error returned to the client in Gemini's ``{"error": {...}}`` shape."""

    def __init__(self, code: int, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS_NAMES.get(code, HTTPStatus(code).phrase.upper())

    def body(self) -> Json:
        """The JSON body Gemini sends with this error."""
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


def route(method: str, path: str) -> tuple[str, str]:
    """(model, method name) of a request path, or ApiError 404/405."""
    match = ROUTE.match(path)
    if match is None:
        raise ApiError(404, f"No such endpoint on the local backend: {path}. Expected "
                            "/{api_version}/models/{model}:{method}.")
    if method != "POST":
        raise ApiError(405, f"Use POST for {path}, not {method}.")
    return match["model"], match["method"]


def parse_body(body: bytes) -> Json:
    """A request's JSON object, or ApiError 400."""
    try:
        payload = json.loads(body or b"{}")
    except ValueError as error:
        raise ApiError(400, f"The request body is not valid JSON: {error}.") from None
    if not isinstance(payload, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    return payload


class InProcessApp:
    """A Gemini-shaped JSON app, as a WSGI callable (``wsgi``) and an ASGI one (``asgi``)."""

    errors: dict[type[Exception], int] = {}
    """Exception types the app answers with their own status (the message is the exception's)."""

    def serve(self, model: str, method: str, payload: Json) -> Json:
        """The JSON answer to one routed request; raise ApiError (or an exception of `errors`) to refuse it."""
        raise NotImplementedError

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Json]:
        """Serve one request: (HTTP status, JSON body)."""
        try:
            model, action = route(method, path)
            return 200, self.serve(model, action, parse_body(body))
        except ApiError as error:
            return error.code, error.body()
        except InvalidRequest as error:
            return 400, ApiError(400, str(error)).body()
        except tuple(self.errors) as error:
            code = next(code for kind, code in self.errors.items() if isinstance(error, kind))
            return code, ApiError(code, str(error)).body()
        except Exception as error:  # the client must always get a reply in Gemini's shape
            return 500, ApiError(500, f"Local backend error: {type(error).__name__}: {error}").body()

    def wsgi(self, environ: Json, start_response: Callable) -> Iterable[bytes]:
        """The WSGI entry point (used by ``httpx.WSGITransport``)."""
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        status, payload = self.handle(environ["REQUEST_METHOD"], environ["PATH_INFO"], body)
        data = json.dumps(payload).encode()
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    async def asgi(self, scope: Json, receive: Callable[[], Any], send: Callable[[Json], Any]) -> None:
        """The ASGI entry point (used by ``httpx.ASGITransport``); the work runs in a thread."""
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        status, payload = await asyncio.to_thread(self.handle, scope["method"], scope["path"], body)
        data = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})

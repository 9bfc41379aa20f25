"""A scripted stand-in backend: a real ``genai.Client`` whose "model" does what a script says, in milliseconds.

The exercise checker (and the tests) use it to judge behaviour: the script decides, for each query,
whether the model calls a skill (and which) or declines in text, and every request is recorded with
what it offered, what came back and the prompt tokens the backend reported. Embeddings are scripted
too: each skill's document text is a unit vector, and each query's vector is built so that its cosine
with every skill is exactly the score the script gave. Each embedding request is recorded with its
texts and how long it took; that time varies from one request to the next, so a decision's seconds
must be measured, not rebuilt from a known delay. A request's ``toolConfig`` is obeyed as Gemini's
contract says (``course_utils.backend.declarations``): the script's call is made only if the mode allows
that function, text only if the mode allows text. Requests go through httpx's MockTransport: no socket,
no model file.
"""
from __future__ import annotations

import functools
import json
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import numpy as np
from google import genai
from google.genai import types

from course_utils.backend.client import LOCAL_BASE_URL, Backend
from course_utils.backend.declarations import InvalidRequest, function_calling, parse_declarations
from course_utils.backend.facts import Facts
from course_utils.selection.pick import document_text, query_text
from course_utils.skills.skill import Skill

SCRIPTED_FACTS = Facts(decision_tokens=None, threshold=0.5, greedy=True, greedy_temperature=None, runs=1,
                       logprobs=False, decision_point=None)
"""The stand-in's facts: its script decides (the same answer every run), its cosines are a script's, cut at 0.5
(the exercise checker uses it), and its answers carry no log-probabilities."""
SCRIPTED = Backend("scripted", "scripted stand-in model", "scripted stand-in encoder", SCRIPTED_FACTS)
DECLINE_TEXT = "None of the skills I was offered fits this request, so I will answer it myself."
_ROUTE = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")

EMBED_DELAYS = (0.02, 0.09, 0.03, 0.15, 0.02, 0.06, 0.12, 0.04)
"""Seconds the stand-in's embedding requests take, in turn (then again from the first)."""

@functools.cache
def _unused_tls() -> ssl.SSLContext:
    """One TLS context for every stand-in client. genai.Client otherwise loads the CA bundle twice per client
    (about 40 ms each) for a transport that never opens a socket."""
    return ssl.create_default_context()


Script = Callable[[str, list[str], list[str]], str | None]
"""What the scripted model does: (query, skills offered, functions declared) -> the value it passes to the
first declared function that takes a string (a skill's name, or any value of that parameter's enum, such
as "none" or "yes"), or None to answer in text."""


@dataclass
class Exchange:
    """One generateContent request the stand-in answered."""

    query: str | None
    """The scripted query found in the request (None if the request held none of them)."""
    offered: list[str]
    """The skill names that appear anywhere in the request, in catalog order."""
    functions: list[str]
    """The names of the functions the request declared."""
    called: str | None
    """The value the model called a function with, None when it answered in text."""
    request: dict[str, Any]
    """The request's JSON body."""
    prompt_tokens: int
    """The prompt tokens the stand-in reported in usageMetadata."""
    start: float
    end: float


@dataclass
class EmbedRequest:
    """One embedding request the stand-in answered: the texts it carried, and when."""

    texts: list[str]
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class ScriptedBackend:
    """The stand-in: a catalog, the cosine score of every scripted query with every skill, and a script."""

    skills: Sequence[Skill]
    scores: Mapping[str, Sequence[float]]
    """query -> its cosine with each skill, in `skills` order."""
    script: Script
    generate_delay: float = 0.02
    """Seconds each generation request takes."""
    embed_delays: Sequence[float] = EMBED_DELAYS
    """Seconds the embedding requests take, in turn: a decision's `seconds` is checked against the ones it made."""
    exchanges: list[Exchange] = field(default_factory=list)
    embed_requests: list[EmbedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.names = [s.name for s in self.skills]
        self._mentions = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, self.names)) + r")(?![\w-])")
        self._lock = threading.Lock()
        self._embed_turn = 0
        self._vectors = {document_text(s): np.eye(len(self.skills) + 1)[i] for i, s in enumerate(self.skills)}
        for query, row in self.scores.items():
            row = np.asarray(row, dtype=float)
            rest = 1.0 - float(row @ row)
            if rest < 0:
                raise ValueError(f"the scores of {query!r} cannot be cosines of unit vectors "
                                 "(their squares sum over 1)")
            self._vectors[query_text(query)] = self._vectors[query] = np.append(row, np.sqrt(rest))

    def client(self) -> genai.Client:
        """A real genai.Client answered by this stand-in."""
        tls = _unused_tls()
        options = types.HttpOptions(
            base_url=LOCAL_BASE_URL, api_version="v1beta", client_args={"verify": tls},
            async_client_args={"verify": tls, "ssl": tls},
            httpx_client=httpx.Client(transport=httpx.MockTransport(self.handle), base_url=LOCAL_BASE_URL))
        client = genai.Client(api_key="scripted", http_options=options)
        client.course_backend = replace(SCRIPTED, http_options=options)
        return client

    def generations(self, since: int = 0) -> list[Exchange]:
        """The generateContent requests answered since the `since`-th one."""
        return self.exchanges[since:]

    @property
    def embeddings(self) -> int:
        """How many embedding requests were answered."""
        return len(self.embed_requests)

    def embedded(self, since: int = 0) -> list[EmbedRequest]:
        """The embedding requests answered since the `since`-th one."""
        return self.embed_requests[since:]

    # --------------------------------------------------------------- serving

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one HTTP request in Gemini's JSON shape."""
        route = _ROUTE.search(request.url.path)
        method = route["method"] if route else ""
        body = json.loads(request.content or b"{}")
        if method == "generateContent":
            try:
                return httpx.Response(200, json=self._generate(body))
            except InvalidRequest as error:
                return httpx.Response(400, json={"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                                           "message": str(error)}})
        if method in ("embedContent", "batchEmbedContents"):
            items = body.get("requests") or [body]
            texts = [_text(item) for item in items]
            vectors = self._embed_request(texts)
            if method == "embedContent":
                return httpx.Response(200, json={"embedding": {"values": vectors[0]}})
            return httpx.Response(200, json={"embeddings": [{"values": v} for v in vectors]})
        error = {"code": 404, "status": "NOT_FOUND",
                 "message": "the scripted stand-in answers generateContent and embeddings only, "
                            f"not {method or request.url.path}"}
        return httpx.Response(404, json={"error": error})

    def _embed_request(self, texts: list[str]) -> list[list[float]]:
        """Vectors for one request's texts, after the request's turn of `embed_delays`; the request is recorded."""
        start = time.perf_counter()
        with self._lock:
            turn = self._embed_turn
            self._embed_turn += 1
        time.sleep(self.embed_delays[turn % len(self.embed_delays)])
        vectors = [self._embed(text) for text in texts]
        with self._lock:
            self.embed_requests.append(EmbedRequest(texts, start, time.perf_counter()))
        return vectors

    def _embed(self, text: str) -> list[float]:
        if text not in self._vectors:
            # Any other text: a vector orthogonal to every skill (cosine 0 with all of them).
            return [0.0] * len(self.skills) + [1.0]
        return self._vectors[text].tolist()

    def _generate(self, body: Mapping[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        time.sleep(self.generate_delay)
        text = json.dumps(body, ensure_ascii=False)
        offered = [n for n in self.names if n in set(self._mentions.findall(text))]
        query = next((q for q in self.scores if json.dumps(q, ensure_ascii=False)[1:-1] in text), None)
        declarations = [d for tool in body.get("tools") or [] for d in tool.get("functionDeclarations") or []]
        functions = [str(d.get("name")) for d in declarations]
        calling = function_calling(body.get("toolConfig"), parse_declarations(body.get("tools")))
        callable_now = [d for d in declarations if d.get("name") in {c.name for c in calling.functions}]
        choice = self.script(query, offered, functions) if query is not None else None
        call = _call_for(callable_now, choice) if choice is not None else None
        if call is None and not calling.allow_text:  # mode ANY: a call it must make, of the first allowed function
            call = _first_call(callable_now[0])
        prompt_tokens = 97 + len(text) // 5  # the stand-in's own count: no estimate a learner could rebuild
        part = {"functionCall": call} if call else {"text": DECLINE_TEXT}
        with self._lock:
            self.exchanges.append(Exchange(query, offered, functions, _value(call), dict(body),
                                           prompt_tokens, start, time.perf_counter()))
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 12,
                                  "totalTokenCount": prompt_tokens + 12},
                "modelVersion": SCRIPTED.generation_model}


def _text(item: Mapping[str, Any]) -> str:
    """The text of one embedding request item (its parts joined)."""
    return "\n".join(part.get("text", "") for part in item.get("content", {}).get("parts", []))


def _string_parameter(declaration: Mapping[str, Any]) -> str | None:
    """The name of the declaration's string parameter (the one with an enum first), if it has one."""
    schema = declaration.get("parameters") or declaration.get("parametersJsonSchema") or {}
    properties = schema.get("properties") or {}
    strings = [name for name, p in properties.items() if str(p.get("type", "")).upper() == "STRING"]
    with_enum = [name for name in strings if properties[name].get("enum")]
    return (with_enum or strings or [None])[0]


def _value(call: Mapping[str, Any] | None) -> str | None:
    """The value a call passed (its first argument), None for no call."""
    return next(iter((call or {}).get("args", {}).values()), None) if call else None


def _first_call(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """A call of `declaration` with its string parameter's first listed value (or an empty string)."""
    parameter = _string_parameter(declaration)
    if parameter is None:
        return {"name": declaration.get("name"), "args": {}}
    schema = declaration.get("parameters") or declaration.get("parametersJsonSchema") or {}
    values = (schema.get("properties") or {})[parameter].get("enum") or [""]
    return {"name": declaration.get("name"), "args": {parameter: values[0]}}


def _call_for(declarations: Sequence[Mapping[str, Any]], value: str) -> dict[str, Any] | None:
    """A call passing `value` to the first declared function whose string parameter accepts it (any string when
    the parameter has no enum), or None when no declared function can take it."""
    for declaration in declarations:
        parameter = _string_parameter(declaration)
        if parameter is None:
            continue
        schema = declaration.get("parameters") or declaration.get("parametersJsonSchema") or {}
        allowed = (schema.get("properties") or {})[parameter].get("enum")
        if not allowed or value in allowed:
            return {"name": declaration.get("name"), "args": {parameter: value}}
    return None

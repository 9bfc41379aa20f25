"""An in-process app that speaks the subset of the Gemini REST API the course uses.

A real ``genai.Client`` sends its HTTP here through httpx's WSGI transport (``client.models``)
or ASGI transport (``client.aio.models``); both call the same ``LocalGeminiApp.handle``, and no
socket is opened. Routes: ``POST /{api_version}/models/{model}:{method}`` with method
``generateContent``, ``countTokens``, ``embedContent`` or ``batchEmbedContents``.

Function calling is decided by the model under constrained decoding: the request's function
declarations are compiled into one JSON schema whose alternatives are one object per declared
function (``{"name": <const>, "arguments": <its parameters>}``) and, unless the mode is ANY, a
text answer ``{"text": …}``. Every answer is therefore one declared call with schema-valid
arguments, or text. The declarations and the expected JSON are also described in the prompt.

Some things serve later turns of a tool loop only, so a first-turn decision (lessons 06–11) is
untouched: a one-string tool result is shown as plain text, not escaped JSON (``response_text``);
and the grammar narrows what the answer may call (``guards.callable_now``): a selection already made
(``load_skill`` called once) is not accepted again, nor a call already made with the same
arguments, nor, in the next turn, a function whose latest call succeeded or whose last two calls
failed. The prompt still shows every declaration. Each was chosen on lesson 04's development requests.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from course_utils.backend.local import embed as embedding
from course_utils.backend.local.guards import callable_now, selection_declines
from course_utils.backend.local.llm import (
    Completion,
    ContextOverflow,
    Message,
    default_llm_name,
    get_llm,
)
from course_utils.backend.local.models import MODELS, ModelFileMissing
from course_utils.backend.local.selection_decode import Selection, decode_selection, selection_of

EMBEDDING_MODEL_NAME = embedding.USE_NAME
LOCAL_MODEL_NAMES = (*MODELS, *embedding.DIMENSIONS)
_ROUTE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
                 500: "INTERNAL", 503: "FAILED_PRECONDITION"}
_PART_JOINER = "\n"
Json = dict[str, Any]


class ApiError(Exception):
    """An error returned to the client in Gemini's ``{"error": {...}}`` shape."""

    def __init__(self, code: int, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or _STATUS_NAMES.get(code, HTTPStatus(code).phrase.upper())

    def body(self) -> Json:
        """The JSON body Gemini sends with this error."""
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


def _invalid(message: str) -> ApiError:
    return ApiError(400, message)


# ----------------------------------------------------------------- models and routes


@dataclass(frozen=True)
class Target:
    """What a request's model name resolves to: an LLM or the sentence encoder."""

    kind: str  # "generate" or "embed"
    name: str


def resolve_model(model: str, default_llm: str) -> Target:
    """Map a model name to a local model; 404 listing the accepted names otherwise.

    ``gemini-*`` names containing "embedding" go to USE, other ``gemini-*`` names to the
    default local LLM; the local names pick a model explicitly.
    """
    if model in embedding.DIMENSIONS:
        return Target("embed", model)
    if model.startswith("gemini-") and "embedding" in model:
        return Target("embed", EMBEDDING_MODEL_NAME)
    if model in MODELS:
        return Target("generate", model)
    if model.startswith("gemini-"):
        return Target("generate", default_llm)
    raise ApiError(404, f"models/{model} is not found on the local backend. Accepted names: "
                        f"gemini-* (generation → the local LLM; names containing 'embedding' → "
                        f"USE), {', '.join(LOCAL_MODEL_NAMES)}.")


def _route(method: str, path: str) -> tuple[str, str]:
    """Return (model, method name) of a request path, or raise 404/405."""
    match = _ROUTE.match(path)
    if match is None:
        raise ApiError(404, f"No such endpoint on the local backend: {path}. Expected "
                            "/{api_version}/models/{model}:{method}.")
    if method != "POST":
        raise ApiError(405, f"Use POST for {path}, not {method}.")
    return match["model"], match["method"]


# ----------------------------------------------------------------- schemas and prompts

_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions"}
_LITERALS = {"enum", "const", "default", "examples", "example"}
_SCHEMA_KEYS_KEPT = {"enum", "required", "description", "minItems", "maxItems", "minimum",
                     "maximum", "minLength", "maxLength", "pattern", "title",
                     "minProperties", "maxProperties"}


def gemini_schema_to_json_schema(schema: Json) -> Json:
    """Convert a Gemini ``Schema`` (upper-case OpenAPI types) into JSON schema.

    Types become lower-case, ``nullable`` becomes a union with "null", enums and bounds are
    kept, ``format``/``propertyOrdering``/``example`` are dropped, and objects with listed
    properties are closed (``additionalProperties: false``).
    """
    out: Json = {key: value for key, value in schema.items() if key in _SCHEMA_KEYS_KEPT}
    kind = str(schema.get("type", "")).lower()
    if kind and kind != "type_unspecified":
        out["type"] = [kind, "null"] if schema.get("nullable") else kind
    if "properties" in schema:
        out["properties"] = {name: gemini_schema_to_json_schema(sub)
                             for name, sub in schema["properties"].items()}
    if "items" in schema:
        out["items"] = gemini_schema_to_json_schema(schema["items"])
    if "anyOf" in schema:
        out["anyOf"] = [gemini_schema_to_json_schema(sub) for sub in schema["anyOf"]]
    return close_objects(out)


def close_objects(schema: Any) -> Any:
    """Recursively forbid extra keys in objects that list their properties."""
    if isinstance(schema, list):
        return [close_objects(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed: Json = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            closed[key] = {name: close_objects(sub) for name, sub in value.items()}
        else:
            closed[key] = value if key in _LITERALS else close_objects(value)
    if "properties" in closed:
        closed.setdefault("additionalProperties", False)
    return closed


@dataclass(frozen=True)
class Declaration:
    """A declared function: its name, description and JSON-schema arguments."""

    name: str
    description: str
    parameters: Json

    def describe(self) -> str:
        """One JSON line shown to the model."""
        return json.dumps({"name": self.name, "description": self.description,
                           "parameters": self.parameters}, ensure_ascii=False)


_NO_ARGUMENTS: Json = {"type": "object", "properties": {}, "additionalProperties": False}


def parse_declaration(raw: Json) -> Declaration:
    """Read one functionDeclaration in either parameter form the SDK sends."""
    if not isinstance(raw, dict) or not raw.get("name"):
        raise _invalid("Each function declaration needs a name.")
    json_schema = raw.get("parametersJsonSchema", raw.get("parameters_json_schema"))
    if json_schema is not None:
        parameters = close_objects(json_schema)
    elif raw.get("parameters") is not None:
        parameters = gemini_schema_to_json_schema(raw["parameters"])
    else:
        parameters = _NO_ARGUMENTS
    return Declaration(raw["name"], raw.get("description", ""), parameters)


def parse_declarations(tools: Any) -> list[Declaration]:
    """All function declarations of a request's ``tools`` list."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _invalid("tools must be a list.")
    return [parse_declaration(raw) for tool in tools
            for raw in (tool or {}).get("functionDeclarations", [])]


def calling_mode(tool_config: Any) -> tuple[str, list[str]]:
    """The function-calling mode (AUTO, ANY or NONE) and the allowed function names."""
    config = (tool_config or {}).get("functionCallingConfig") or {}
    mode = str(config.get("mode", "AUTO")).upper()
    if mode in ("MODE_UNSPECIFIED", "VALIDATED"):
        mode = "AUTO"  # constrained decoding already validates every call
    if mode not in ("AUTO", "ANY", "NONE"):
        raise _invalid(f"Unsupported functionCallingConfig.mode {mode!r}: use AUTO, ANY or NONE.")
    return mode, list(config.get("allowedFunctionNames") or [])


def decision_schema(declarations: list[Declaration], allow_text: bool) -> Json:
    """The JSON schema of an answer: one declared call, or (if allowed) a text answer."""
    alternatives: list[Json] = [
        {"type": "object",
         "properties": {"name": {"const": d.name}, "arguments": d.parameters},
         "required": ["name", "arguments"], "additionalProperties": False}
        for d in declarations
    ]
    if allow_text:
        alternatives.append({"type": "object", "properties": {"text": {"type": "string"}},
                             "required": ["text"], "additionalProperties": False})
    # Compact JSON: no newlines or indentation to spend tokens on.
    return {"anyOf": alternatives, "x-guidance": {"whitespace_flexible": False}}


def tools_prompt(declarations: list[Declaration], allow_text: bool) -> str:
    """The part of the system message that shows the functions and the answer format.

    It lists each function's signature, one JSON object per line, then asks for exactly one JSON
    object: a call, or (when text is allowed) a text reply. The last line says how to answer, not
    when: it is neutral about declining, because the caller's system instruction says when not to
    call. How this wording was chosen, and on which data: docs/lab/answer-format-wording.md.
    """
    lines = ["# Functions",
             "You may call one of these functions. Their signatures, one JSON object per line:",
             *(d.describe() for d in declarations), ""]
    call = '{"name": <function name>, "arguments": <its arguments>}'
    if allow_text:
        lines.append(f"Reply with exactly one JSON object: {call} to call a function, "
                     'or {"text": <your reply>} to reply without calling one.')
    else:
        lines.append(f"Reply with exactly one JSON object: {call}.")
    return "\n".join(lines)


# ----------------------------------------------------------------- contents → chat messages


def _text_of(content: Any, what: str) -> str:
    """The text parts of one Content, joined with a newline."""
    if isinstance(content, str):
        return content
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise _invalid(f"{what} must be a Content with a list of parts.")
    texts = []
    for part in content["parts"]:
        if "text" not in part:
            raise _invalid(f"{what}: the local backend reads only text parts, got {sorted(part)}.")
        texts.append(part["text"])
    return _PART_JOINER.join(texts)


def call_json(name: str, arguments: Json) -> str:
    """A function call written the way the model is asked to write it."""
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def response_text(response: Json) -> str:
    """What the model reads of one function result.

    A result that is one string (``{"result": "…"}``, the shape ``run_agent`` sends) is shown as that
    text, line breaks and all: a skill body escaped inside a JSON string (``\\n`` for every line break)
    is much harder for a small model to read than the Markdown it was written in. Any other result is
    shown as compact JSON with the function's name.
    """
    value = response.get("response")
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return next(iter(value.values()))
    return json.dumps({"name": response.get("name"), "response": value}, ensure_ascii=False)


def content_messages(content: Any) -> list[Message]:
    """Translate one Gemini Content into chat messages for the model's chat template.

    Model turns become assistant messages (calls written as the JSON the model produces);
    ``functionResponse`` parts become ``tool`` messages, which Qwen's template shows inside
    ``<tool_response>`` tags, the format it was trained on; user text stays user text.
    """
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise _invalid("Each item of contents must be a Content with a list of parts.")
    texts, responses = [], []
    for part in content["parts"]:
        if "text" in part:
            texts.append(part["text"])
        elif "functionCall" in part:
            call = part["functionCall"]
            texts.append(call_json(call.get("name", ""), call.get("args") or {}))
        elif "functionResponse" in part:
            responses.append({"role": "tool", "content": response_text(part["functionResponse"])})
        elif not {"thought", "thoughtSignature"} & set(part):
            raise _invalid(f"Unsupported part {sorted(part)}: the local backend reads text, "
                           "functionCall and functionResponse parts.")
    if content.get("role") == "model":
        return [{"role": "assistant", "content": _PART_JOINER.join(texts)}]
    text = [{"role": "user", "content": _PART_JOINER.join(texts)}] if texts else []
    return responses + text


@dataclass(frozen=True)
class Prompt:
    """What the model sees for a request, the grammar constraining its answer, and its selection if any."""

    messages: list[Message]
    grammar: str | None
    selection: Selection | None = None


def build_prompt(request: Json) -> Prompt:
    """Turn a generateContent request into chat messages and an output grammar."""
    contents = request.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise _invalid("contents must be a non-empty list of Content objects.")
    mode, allowed = calling_mode(request.get("toolConfig"))
    declarations = parse_declarations(request.get("tools"))
    if allowed:
        declarations = [d for d in declarations if d.name in allowed]
    if mode == "NONE":
        declarations = []
    if mode == "ANY" and not declarations:
        raise _invalid("functionCallingConfig mode ANY needs at least one declared function.")
    allow_text = mode != "ANY"
    system = []
    if request.get("systemInstruction") is not None:
        system.append(_text_of(request["systemInstruction"], "systemInstruction"))
    if declarations:
        system.append(tools_prompt(declarations, allow_text))
    messages = ([{"role": "system", "content": "\n\n".join(system)}] if system else [])
    messages += [message for content in contents for message in content_messages(content)]
    offered = callable_now(declarations, contents) or ([] if allow_text else declarations)
    text_now = allow_text and not selection_declines(declarations, contents)
    if not declarations:
        return Prompt(messages, None)
    import xllamacpp

    return Prompt(messages, xllamacpp.json_schema_to_grammar(decision_schema(offered, text_now)),
                  selection_of(offered, text_now))


_TEXT_OPENING = '{"text":"'


def _cut_text(raw: str) -> str:
    """The readable part of a text answer cut short inside its JSON string."""
    body = raw[len(_TEXT_OPENING):]
    for end in range(len(body), max(len(body) - 8, -1), -1):  # drop a broken escape
        try:
            return json.loads(f'"{body[:end]}"')
        except ValueError:
            continue
    return body


def answer_parts(completion: Completion, constrained: bool) -> list[Json]:
    """The response parts: one functionCall or one text part."""
    if not constrained:
        return [{"text": completion.text}]
    try:
        answer = json.loads(completion.text)
    except ValueError:  # cut short by maxOutputTokens
        if completion.text.startswith(_TEXT_OPENING):
            return [{"text": _cut_text(completion.text)}]
        return []  # a call cut short is no call, and no text either: an empty answer whose finish reason says why
    if "name" in answer:
        return [{"functionCall": {"name": answer["name"], "args": answer["arguments"]}}]
    return [{"text": answer["text"]}]


# ----------------------------------------------------------------- handlers


MAX_LOGPROBS = 20
"""Gemini accepts ``logprobs`` (top candidates per position) from 0 to 20."""


def _generation_options(request: Json) -> dict[str, Any]:
    config = request.get("generationConfig") or {}
    if not isinstance(config, dict):
        raise _invalid("generationConfig must be an object.")
    top = None
    if config.get("responseLogprobs"):
        top = config.get("logprobs") or 0
        if not (isinstance(top, int) and 0 <= top <= MAX_LOGPROBS):
            raise _invalid(f"logprobs must be an integer from 0 to {MAX_LOGPROBS}, got {top!r}.")
    top_p, top_k = config.get("topP"), config.get("topK")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise _invalid(f"topP must be a number in (0, 1], got {top_p!r}.")
    if top_k is not None and not (isinstance(top_k, (int, float)) and top_k >= 1 and float(top_k).is_integer()):
        raise _invalid(f"topK must be a whole number of at least 1, got {top_k!r}.")
    return {"temperature": config.get("temperature"), "max_tokens": config.get("maxOutputTokens"),
            "seed": config.get("seed"), "top_logprobs": top, "top_p": top_p,
            "top_k": None if top_k is None else int(top_k)}


def logprobs_result(tokens: list[Json], top: int) -> Json:
    """llama.cpp's per-token log-probabilities in Gemini's ``logprobsResult`` shape.

    The tokens are the ones the model generated, which on this backend include the JSON the
    grammar wraps a call or a text answer in (``{"name":…`` or ``{"text":…``).
    """
    def candidate(item: Json) -> Json:
        return {"token": item.get("token", ""), "tokenId": item.get("id"), "logProbability": item.get("logprob")}

    return {"chosenCandidates": [candidate(t) for t in tokens],
            "topCandidates": [{"candidates": [candidate(c) for c in (t.get("top_logprobs") or [])[:top]]}
                              for t in tokens]}


def generate_content(request: Json, target: Target) -> Json:
    """Serve ``generateContent``."""
    prompt = build_prompt(request)
    options = _generation_options(request)
    llm = get_llm(target.name)
    if prompt.selection is not None:
        completion = decode_selection(llm, prompt.messages, prompt.grammar, prompt.selection, options)
    else:
        completion = llm.chat(prompt.messages, grammar=prompt.grammar, **options)
    finish = "MAX_TOKENS" if completion.finish_reason == "length" else "STOP"
    candidate: Json = {"content": {"role": "model", "parts": answer_parts(completion, prompt.grammar is not None)},
                       "finishReason": finish, "index": 0}
    if completion.logprobs is not None:
        candidate["logprobsResult"] = logprobs_result(completion.logprobs, options["top_logprobs"])
        chosen = [t["logprob"] for t in completion.logprobs if t.get("logprob") is not None]
        candidate["avgLogprobs"] = sum(chosen) / len(chosen) if chosen else None
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": completion.prompt_tokens,
                          "candidatesTokenCount": completion.completion_tokens,
                          "totalTokenCount": completion.prompt_tokens
                          + completion.completion_tokens},
        "modelVersion": f"{target.name} (local)",
    }


def count_tokens(request: Json, target: Target) -> Json:
    """Serve ``countTokens``: the prompt tokens generateContent would report."""
    inner = request.get("generateContentRequest")
    prompt = build_prompt(inner if isinstance(inner, dict) else request)
    return {"totalTokens": get_llm(target.name).count_tokens(prompt.messages)}


def _embedding_request(item: Any, model: str) -> tuple[str, int | None]:
    """The text and requested dimensionality of one embedding request."""
    if not isinstance(item, dict) or "content" not in item:
        raise _invalid("Each embedding request needs a content.")
    dimensions = item.get("outputDimensionality")
    most = embedding.DIMENSIONS[model]
    if dimensions is not None and not (isinstance(dimensions, int) and 0 < dimensions <= most):
        raise _invalid(f"outputDimensionality must be between 1 and {most} "
                       f"for the local encoder ({model}), got {dimensions}.")
    return _text_of(item["content"], "content"), dimensions


def embed_requests(items: list[Any], model: str = EMBEDDING_MODEL_NAME) -> list[list[float]]:
    """Embed several requests in one batch.

    A Content with N parts gives ONE vector, of its parts joined with a newline, as
    gemini-embedding-2 aggregates the parts of a Content. ``taskType`` is accepted and
    ignored: USE has no task types (see ``embed.strip_task_prefix`` for the text prefixes).
    """
    parsed = [_embedding_request(item, model) for item in items]
    vectors = embedding.embed([text for text, _ in parsed], model)
    return [embedding.truncate(vectors[i:i + 1], dims)[0].tolist()
            for i, (_, dims) in enumerate(parsed)]


def batch_embed_contents(request: Json, target: Target) -> Json:
    """Serve ``batchEmbedContents``."""
    items = request.get("requests")
    if not isinstance(items, list) or not items:
        raise _invalid("requests must be a non-empty list.")
    return {"embeddings": [{"values": values} for values in embed_requests(items, target.name)]}


def embed_content(request: Json, target: Target) -> Json:
    """Serve ``embedContent``."""
    return {"embedding": {"values": embed_requests([request], target.name)[0]}}


Handler = Callable[[Json, Target], Json]
HANDLERS: dict[str, tuple[str, Handler]] = {
    "generateContent": ("generate", generate_content),
    "countTokens": ("generate", count_tokens),
    "batchEmbedContents": ("embed", batch_embed_contents),
    "embedContent": ("embed", embed_content),
}


# ----------------------------------------------------------------- the app


def _parse_body(body: bytes) -> Json:
    try:
        payload = json.loads(body or b"{}")
    except ValueError as error:
        raise _invalid(f"The request body is not valid JSON: {error}.") from None
    if not isinstance(payload, dict):
        raise _invalid("The request body must be a JSON object.")
    return payload


class LocalGeminiApp:
    """The Gemini-compatible app, as a WSGI callable (``wsgi``) and an ASGI one (``asgi``)."""

    def __init__(self, llm_name: str | None = None) -> None:
        self.llm_name = llm_name or default_llm_name()

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, Json]:
        """Serve one request: (HTTP status, JSON body)."""
        try:
            model, action = _route(method, path)
            target = resolve_model(model, self.llm_name)
            if action not in HANDLERS or HANDLERS[action][0] != target.kind:
                raise ApiError(404, f"models/{model} is not found for the local backend, or "
                                    f"is not supported for {action}. Supported: "
                                    f"{', '.join(HANDLERS)}.")
            return 200, HANDLERS[action][1](_parse_body(body), target)
        except ApiError as error:
            return error.code, error.body()
        except ContextOverflow as error:
            return 400, ApiError(400, str(error)).body()
        except ModelFileMissing as error:
            return 503, ApiError(503, str(error)).body()
        except Exception as error:  # the client must always get a reply in Gemini's shape
            return 500, ApiError(500, f"Local backend error: {error}").body()

    def wsgi(self, environ: Json, start_response: Callable) -> Iterable[bytes]:
        """The WSGI entry point (used by ``httpx.WSGITransport``)."""
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        status, payload = self.handle(environ["REQUEST_METHOD"], environ["PATH_INFO"], body)
        data = json.dumps(payload).encode()
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [("Content-Type", "application/json"),
                        ("Content-Length", str(len(data)))])
        return [data]

    async def asgi(self, scope: Json, receive: Callable, send: Callable) -> None:
        """The ASGI entry point (used by ``httpx.ASGITransport``); work runs in a thread."""
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        status, payload = await asyncio.to_thread(self.handle, scope["method"], scope["path"],
                                                  body)
        data = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})


_APPS: dict[str, LocalGeminiApp] = {}
_APPS_LOCK = threading.Lock()


def get_app(llm_name: str | None = None) -> LocalGeminiApp:
    """The shared app for an LLM name; models load on the first request that needs them."""
    name = llm_name or default_llm_name()
    with _APPS_LOCK:
        if name not in _APPS:
            _APPS[name] = LocalGeminiApp(name)
        return _APPS[name]

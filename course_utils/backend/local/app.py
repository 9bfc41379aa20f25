"""An in-process app that speaks the subset of the Gemini REST API the course uses, on the local models.

A real ``genai.Client`` reaches it through httpx's WSGI or ASGI transport (``backend.wire``); methods:
``generateContent``, ``countTokens``, ``embedContent`` and ``batchEmbedContents``.

Function calling follows Gemini's contract (``backend.declarations``: modes AUTO, ANY, NONE, VALIDATED and
``allowedFunctionNames``) by constrained decoding: the functions the request's tool_config allows become one JSON
schema, one alternative per function (``{"name": <const>, "arguments": <its parameters>}``) plus, unless the mode is
ANY, a text answer ``{"text": …}``. The prompt shows every declared function whatever the allowed names, so the
system message (and its cached prefix) stays the same from one turn to the next while the mode does. Which
functions a turn allows is the harness's business (``course_utils.loop.tool_policy``), not the backend's. A one-string
tool result is shown as plain text, not escaped JSON (``backend.content.response_text``); embeddings come from
the course's encoders (``backend.encoders``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course_utils.backend.content import PART_JOINER, logprobs_result, response_text, text_of
from course_utils.backend.declarations import Declaration, InvalidRequest, Json, function_calling, parse_declarations
from course_utils.backend.encoders import api as encoders
from course_utils.backend.encoders.embed import DIMENSIONS
from course_utils.backend.local.chat_template import TemplateError
from course_utils.backend.local.llm import Completion, ContextOverflow, Message, get_llm
from course_utils.backend.local.model_file import NoChatTemplate, model_choice
from course_utils.backend.provision.gguf import NotAModelFile
from course_utils.backend.provision.models import MODELS, ModelFileMissing
from course_utils.backend.wire import ApiError, InProcessApp

LOCAL_MODEL_NAMES = (*MODELS, *DIMENSIONS)


@dataclass(frozen=True)
class Target:
    """What a request's model name resolves to: an LLM or the sentence encoder."""

    kind: str  # "generate" or "embed"
    name: str


def resolve_model(model: str, default_llm: str) -> Target:
    """Map a model name to a local model; 404 listing the accepted names otherwise.

    ``gemini-*`` names containing "embedding" go to USE, other ``gemini-*`` names to the
    default local LLM (a published model's name or a GGUF path); the published names pick a model explicitly.
    """
    encoder = encoders.encoder_for(model)
    if encoder is not None:
        return Target("embed", encoder)
    if model in MODELS:
        return Target("generate", model)
    if model.startswith("gemini-"):
        return Target("generate", default_llm)
    raise ApiError(404, f"models/{model} is not found on the local backend. Accepted names: "
                        f"gemini-* (generation → the local LLM; names containing 'embedding' → "
                        f"USE), {', '.join(LOCAL_MODEL_NAMES)}.")


# ----------------------------------------------------------------- schemas and prompts

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


def call_json(name: str, arguments: Json) -> str:
    """A function call written the way the model is asked to write it."""
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def content_messages(content: Any) -> list[Message]:
    """Translate one Gemini Content into chat messages for the model's chat template.

    Model turns become assistant messages (calls written as the JSON the model produces);
    ``functionResponse`` parts become ``tool`` messages, which Qwen's template shows inside
    ``<tool_response>`` tags, the format it was trained on; user text stays user text.
    """
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise InvalidRequest("Each item of contents must be a Content with a list of parts.")
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
            raise InvalidRequest(f"Unsupported part {sorted(part)}: the local backend reads text, "
                           "functionCall and functionResponse parts.")
    if content.get("role") == "model":
        return [{"role": "assistant", "content": PART_JOINER.join(texts)}]
    text = [{"role": "user", "content": PART_JOINER.join(texts)}] if texts else []
    return responses + text


@dataclass(frozen=True)
class Prompt:
    """What the model sees for a request, and the grammar constraining its answer (None: free text)."""

    messages: list[Message]
    grammar: str | None


def build_prompt(request: Json) -> Prompt:
    """Turn a generateContent request into chat messages and an output grammar."""
    contents = request.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise InvalidRequest("contents must be a non-empty list of Content objects.")
    declarations = parse_declarations(request.get("tools"))
    calling = function_calling(request.get("toolConfig"), declarations)
    system = []
    if request.get("systemInstruction") is not None:
        system.append(text_of(request["systemInstruction"], "systemInstruction"))
    if declarations:
        system.append(tools_prompt(declarations, calling.allow_text))
    messages = ([{"role": "system", "content": "\n\n".join(system)}] if system else [])
    messages += [message for content in contents for message in content_messages(content)]
    if not declarations:
        return Prompt(messages, None)
    import xllamacpp

    return Prompt(messages, xllamacpp.json_schema_to_grammar(decision_schema(calling.functions, calling.allow_text)))


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


def generation_options(request: Json) -> dict[str, Any]:
    """The sampling options of a request's generationConfig, checked, in llama.cpp's terms."""
    config = request.get("generationConfig") or {}
    if not isinstance(config, dict):
        raise InvalidRequest("generationConfig must be an object.")
    top = None
    if config.get("responseLogprobs"):
        top = config.get("logprobs") or 0
        if not (isinstance(top, int) and 0 <= top <= MAX_LOGPROBS):
            raise InvalidRequest(f"logprobs must be an integer from 0 to {MAX_LOGPROBS}, got {top!r}.")
    top_p, top_k = config.get("topP"), config.get("topK")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise InvalidRequest(f"topP must be a number in (0, 1], got {top_p!r}.")
    if top_k is not None and not (isinstance(top_k, (int, float)) and top_k >= 1 and float(top_k).is_integer()):
        raise InvalidRequest(f"topK must be a whole number of at least 1, got {top_k!r}.")
    return {"temperature": config.get("temperature"), "max_tokens": config.get("maxOutputTokens"),
            "seed": config.get("seed"), "top_logprobs": top, "top_p": top_p,
            "top_k": None if top_k is None else int(top_k)}


def generate_content(request: Json, target: Target) -> Json:
    """Serve ``generateContent``."""
    prompt = build_prompt(request)
    options = generation_options(request)
    llm = get_llm(target.name)
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
        "modelVersion": f"{llm.model.name} (local)",
    }


def count_tokens(request: Json, target: Target) -> Json:
    """Serve ``countTokens``: the prompt tokens generateContent would report."""
    inner = request.get("generateContentRequest")
    prompt = build_prompt(inner if isinstance(inner, dict) else request)
    return {"totalTokens": get_llm(target.name).count_tokens(prompt.messages)}


Handler = Callable[[Json, Target], Json]
HANDLERS: dict[str, tuple[str, Handler]] = {
    "generateContent": ("generate", generate_content),
    "countTokens": ("generate", count_tokens),
    "batchEmbedContents": ("embed", lambda request, target: encoders.batch_embed_contents(request, target.name)),
    "embedContent": ("embed", lambda request, target: encoders.embed_content(request, target.name)),
}


# ----------------------------------------------------------------- the app


class LocalGeminiApp(InProcessApp):
    """The Gemini-compatible app on the local models (``wire.InProcessApp`` gives it its WSGI and ASGI entries)."""

    errors = {ContextOverflow: 400, TemplateError: 400, ModelFileMissing: 503, NotAModelFile: 503,
              NoChatTemplate: 503}

    def __init__(self, llm_name: str | None = None) -> None:
        self.llm_name = model_choice(llm_name)

    def serve(self, model: str, method: str, payload: Json) -> Json:
        """Answer one request with the handler of its method, on the model its name resolves to."""
        target = resolve_model(model, self.llm_name)
        if method not in HANDLERS or HANDLERS[method][0] != target.kind:
            raise ApiError(404, f"models/{model} is not found for the local backend, or is not supported for "
                                f"{method}. Supported: {', '.join(HANDLERS)}.")
        return HANDLERS[method][1](payload, target)


_APPS: dict[str, LocalGeminiApp] = {}
_APPS_LOCK = threading.Lock()


def get_app(llm_name: str | None = None) -> LocalGeminiApp:
    """The shared app for a published model's name or a GGUF path; models load on the first request that needs them."""
    name = model_choice(llm_name)
    with _APPS_LOCK:
        if name not in _APPS:
            _APPS[name] = LocalGeminiApp(name)
        return _APPS[name]

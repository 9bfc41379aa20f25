"""Decisions as constrained JSON on an OpenAI-compatible server, for a model that cannot write native tool calls.

``COURSE_OPENAI_DECISION`` says how a request that declares functions goes to the server:

- ``tools``: as ``tools`` and ``tool_choice`` (``openai_compatible.chat_request``); the server renders its own tool
  format and parses the model's calls;
- ``schema``: as the local backend asks its model (``backend.local.app``): the functions and the answer format are
  written into the system message (``tools_prompt``), and the answer is constrained by the JSON schema of one
  allowed call or, unless the mode is ANY, a text answer (``decision_schema``: each call's ``arguments`` are the
  declaration's parameters, so the enum of skill names, with "none" where the harness offers it). The answer's
  JSON comes back as the same ``functionCall`` or text part: the harness cannot tell the two ways apart;
- ``auto`` (the default): tools until the server shows what works for its model (``Way``), then that.

The schema goes in ``response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``, the
field OpenAI's API defines and each server family accepts on ``/v1/chat/completions``: llama.cpp's ``llama-server``
(tools/server/README.md, "response_format"; ggml-org/llama.cpp#11847 shows the request), vLLM
(docs.vllm.ai, features/structured_outputs: ``response_format`` and ``structured_outputs``; the older
``guided_json`` was removed in v0.12.0), LM Studio (lmstudio.ai/docs/advanced/structured-output) and Ollama from
v0.5.0 (which enforces it with llama.cpp's grammar; its own ``format`` field belongs to its native ``/api/chat``,
not to the ``/v1`` endpoint this backend talks to). One field, so no server is sent a field it may refuse.
"""
from __future__ import annotations

import os
import re
import threading

from course_utils.backend.declarations import Declaration, Json, function_calling, parse_declarations

DECISION_ENV = "COURSE_OPENAI_DECISION"
WAYS = ("tools", "schema", "auto")
SCHEMA_NAME = "decision"


def decision_setting() -> str:
    """The way COURSE_OPENAI_DECISION asks for (default auto); ValueError naming the choices."""
    value = (os.environ.get(DECISION_ENV) or "auto").strip().lower()
    if value not in WAYS:
        raise ValueError(f"{DECISION_ENV} must be one of {', '.join(WAYS)}, got {value!r}.")
    return value


def schema_body(tools_body: Json, request: Json) -> Json:
    """The chat request of `tools_body` (``chat_request``'s) asked the schema way: no ``tools``, the functions and
    the answer format appended to the system message as the local backend writes them, and ``response_format``."""
    from course_utils.backend.local.app import decision_schema, tools_prompt

    declarations = parse_declarations(request.get("tools"))
    calling = function_calling(request.get("toolConfig"), declarations)
    body = {key: value for key, value in tools_body.items() if key not in ("tools", "tool_choice")}
    messages = [dict(message) for message in body["messages"]]
    prompt = tools_prompt(declarations, calling.allow_text)
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = f"{messages[0]['content']}\n\n{prompt}"
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    body["messages"] = messages
    body["response_format"] = {"type": "json_schema", "json_schema": {
        "name": SCHEMA_NAME, "strict": True, "schema": decision_schema(calling.functions, calling.allow_text)}}
    return body


def schema_parts(content: str | None, finish_reason: str | None) -> list[Json]:
    """The Gemini parts of a schema answer: one ``functionCall``, or one text part (as the local backend reads its
    model's constrained answer; a call cut short by the output cap is no part at all)."""
    from course_utils.backend.local.app import answer_parts
    from course_utils.backend.local.llm import Completion

    text = content or ""
    opening = _TEXT_OPENING.match(text)
    if opening and finish_reason == "length":  # a server's grammar may allow spaces the local one does not
        text = '{"text":"' + text[opening.end():]
    return answer_parts(Completion(text, 0, 0, finish_reason or "stop"), constrained=True)


_TEXT_OPENING = re.compile(r'^\s*\{\s*"text"\s*:\s*"')
_CALL_SIGNS = re.compile(r"<tool_call>|\"name\"\s*:|```json", re.IGNORECASE)


def tools_verdict(parts: list[Json], declarations: list[Declaration]) -> str | None:
    """What one answer to a tools request shows about the server and model: "tools" when it holds a call,
    "schema" when it is a call written as text (a JSON block, a ``<tool_call>`` tag, a declared function's name) or
    blank (the newlines a forced call produced on llama-server), None when it is a plain text answer (which says
    nothing: declining is a right answer too)."""
    if any("functionCall" in part for part in parts):
        return "tools"
    text = "".join(part.get("text", "") for part in parts)
    if not text.strip() or _CALL_SIGNS.search(text) or any(d.name in text for d in declarations):
        return "schema"
    return None


class Way:
    """How one app asks for decisions: the setting, and under ``auto`` what the server has shown so far.

    ``auto`` keeps the first verdict (``tools_verdict``, or "schema" when the server refuses ``tools``) for the rest
    of the process, and says it once, in one line. Thread-safe: concurrent decisions may race to the first verdict;
    one wins.
    """

    def __init__(self, setting: str, server: str) -> None:
        self.setting, self.server = setting, server
        self.settled: str | None = None if setting == "auto" else setting
        self._lock = threading.Lock()

    @property
    def current(self) -> str:
        """The way the next request goes: tools while ``auto`` has not settled."""
        return self.settled or "tools"

    @property
    def deciding(self) -> bool:
        """Whether answers still decide the way (``auto``, unsettled)."""
        return self.settled is None

    def settle(self, way: str, reason: str) -> str:
        """Keep `way` unless another answer settled first; print the one line. The way kept."""
        with self._lock:
            if self.settled is None:
                self.settled = way
                print(f"{DECISION_ENV}=auto: decisions go to {self.server} as {way} ({reason}).", flush=True)
            return self.settled

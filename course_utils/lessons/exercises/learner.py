"""What the learner's code does, seen from outside: the requests it sends (through a recording client), the
notebook globals it reads, the loader it was given (changed or not), and the line that raised."""
from __future__ import annotations

import dis
import json
import re
import time
import traceback
import types as pytypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google import genai

from course_utils.selection.pick import SimilaritySelector
from course_utils.skills.skill import SkillLoader

@dataclass
class ModelCall:
    """One `generate_content` a function made through the recording client."""

    request: str
    """The request (model, contents, config) as JSON text."""
    response: Any
    seconds: float

    def offered(self, names: Sequence[str]) -> list[str]:
        """The skills among `names` that appear anywhere in the request, in `names` order."""
        return [n for n in names if _mentions(n, self.request)]


def _mentions(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _json(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value if isinstance(value, (str, int, float, bool)) or value is None else repr(value)


class RecordingModels:
    """Stands in for `client.models`: records each generation request and its response, then forwards it."""

    def __init__(self, models: Any):
        self._models = models
        self.calls: list[ModelCall] = []

    def generate_content(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        response = self._models.generate_content(*args, **kwargs)
        self.calls.append(ModelCall(json.dumps(_json([args, kwargs]), ensure_ascii=False), response,
                                    time.perf_counter() - start))
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._models, name)


class RecordingClient:
    """A client proxy whose `.models` records generation requests; everything else is the real client's."""

    def __init__(self, client: Any):
        self._client = client
        self.models = RecordingModels(client.models)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def called_skill(response: Any, offered: Sequence[str]) -> str | None:
    """The skill a first turn called: a function call argument naming one of `offered`, else None."""
    for call in getattr(response, "function_calls", None) or []:
        for value in (call.args or {}).values():
            if value in offered:
                return value
    return None


def globals_read(function: Callable) -> list[str]:
    """The global names the function (and functions defined inside it) reads that hold a client, loader or selector."""
    code, namespace = getattr(function, "__code__", None), getattr(function, "__globals__", {})
    names: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        current = stack.pop()
        names |= {i.argval for i in dis.get_instructions(current) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
        stack += [c for c in current.co_consts if isinstance(c, pytypes.CodeType)]
    course_types = (genai.Client, RecordingClient, SkillLoader, SimilaritySelector)
    return sorted(n for n in names
                  if isinstance(namespace.get(n), course_types) or hasattr(namespace.get(n), "course_backend"))


def snapshot(loader: SkillLoader) -> list[tuple[str, str, str]]:
    return [(n, s.description, s.body) for n, s in loader.skills.items()]


def where_raised(err: BaseException, function: Callable) -> list[str]:
    """The line of the learner's code that raised, and where it finally broke if that was elsewhere."""
    frames = traceback.extract_tb(err.__traceback__)
    code = getattr(function, "__code__", None)
    own = [f for f in frames if code is not None and f.filename == code.co_filename]
    lines = [f"Your line: {own[-1].line} ({own[-1].name}, line {own[-1].lineno})"] if own else []
    if frames and (not own or frames[-1] is not own[-1]):
        last = frames[-1]
        short = "/".join(last.filename.replace("\\", "/").split("/")[-3:])
        lines.append(f"It finally broke in {last.name} ({short}, line {last.lineno}): {last.line}")
    return lines


def raised_by(err: BaseException, function: Callable) -> bool:
    """Whether the exception was raised in the function's own code (its last frame is in the function's file)."""
    frames = traceback.extract_tb(err.__traceback__)
    code = getattr(function, "__code__", None)
    return bool(frames) and code is not None and frames[-1].filename == code.co_filename

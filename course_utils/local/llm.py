"""The local LLM: a Qwen2.5-Coder GGUF file run in-process by llama.cpp (``xllamacpp``).

One ``xllamacpp.Server`` per model and process, created on first use. Decoding is greedy unless
a temperature is given; the KV cache of the previous prompt is kept (``cache_prompt``), so a
request that shares a long prefix with the previous one (the same system instruction and
catalog) only processes its new tokens. llama.cpp's logs are silenced.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from course_utils.local.models import DEFAULT_MODEL, get_spec, require_model

LLM_ENV = "COURSE_LOCAL_LLM"
CONTEXT_TOKENS = 8192
DEFAULT_MAX_OUTPUT_TOKENS = 512
_CACHE: dict[str, LocalLLM] = {}
_CACHE_LOCK = threading.Lock()

Message = dict[str, Any]


class ContextOverflow(ValueError):
    """The prompt does not fit in the model's context window."""

    def __init__(self, prompt_tokens: int, context: int) -> None:
        super().__init__(
            f"The input has {prompt_tokens:,} tokens; the local model's context is "
            f"{context:,} tokens (prompt and answer together). Shorten the input or "
            "use Gemini (set GEMINI_API_KEY)."
        )
        self.prompt_tokens = prompt_tokens
        self.context = context


class LLMError(RuntimeError):
    """llama.cpp refused a request for another reason."""


@dataclass(frozen=True)
class Completion:
    """One chat completion: the text and the token counts the model really processed."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" or "length"


def default_llm_name() -> str:
    """The configured local LLM: env COURSE_LOCAL_LLM, else the 1.5B model."""
    name = os.environ.get(LLM_ENV) or DEFAULT_MODEL
    get_spec(name)
    return name


class LocalLLM:
    """A loaded GGUF chat model; thread-safe (llama.cpp queues requests)."""

    def __init__(self, name: str, context: int = CONTEXT_TOKENS) -> None:
        import xllamacpp

        self.name = name
        self.context = context
        self.path = require_model(name)
        self._server = xllamacpp.Server(self._params(xllamacpp))

    def _params(self, xllamacpp) -> Any:
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self.context
        params.n_parallel = 1  # one slot: its KV cache is the reused prompt prefix
        params.cache_prompt = True
        params.use_jinja = True  # the model's own chat template (Qwen's ChatML)
        params.cpuparams.n_threads = os.cpu_count() or 1
        params.cpuparams_batch.n_threads = os.cpu_count() or 1
        params.sampling.temp = 0.0
        params.warmup = False
        params.verbosity = -1  # llama.cpp logs nothing
        return params

    def chat(self, messages: Sequence[Message], *, grammar: str | None = None,
             temperature: float | None = None, max_tokens: int | None = None) -> Completion:
        """Run one chat completion, optionally constrained by a llama.cpp grammar."""
        request: dict[str, Any] = {
            "messages": list(messages),
            "max_tokens": max_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "temperature": 0.0 if temperature is None else temperature,
            "cache_prompt": True,
        }
        if grammar is not None:
            request["grammar"] = grammar
        response = self._server.handle_chat_completions(request)
        if "error" in response:
            raise self._error(response["error"])
        choice, usage = response["choices"][0], response["usage"]
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """The prompt tokens of these messages, counted by the model's own tokenizer.

        llama.cpp's in-process API has no tokenize call, so this runs the prompt and stops
        after one token: as slow as a prompt the cache has not seen, instant for one it has.
        """
        return self.chat(messages, max_tokens=1).prompt_tokens

    def _error(self, error: dict[str, Any]) -> Exception:
        if error.get("type") == "exceed_context_size_error":
            return ContextOverflow(int(error["n_prompt_tokens"]), int(error["n_ctx"]))
        return LLMError(str(error.get("message", error)))


def get_llm(name: str | None = None) -> LocalLLM:
    """The shared LocalLLM for a model name (default: ``default_llm_name()``)."""
    name = name or default_llm_name()
    with _CACHE_LOCK:
        if name not in _CACHE:
            _CACHE[name] = LocalLLM(name)
        return _CACHE[name]

"""The local LLM: a GGUF chat model (``model_file``) run in this process by llama.cpp's server (``xllamacpp``).

``LlamaServer`` is what the model runs in: one llama.cpp server per model and process, with one slot. Completions go
through xllamacpp's in-process call. That call has no tokenizer and no way to save or restore the slot's KV cache,
so those two go over loopback to the HTTP listener the same server opens on 127.0.0.1 (a port of its own): ``POST
/tokenize`` and ``POST /slots/0?action=save|restore``, never through a proxy. Nothing leaves the machine.

``LocalLLM`` asks it for chat completions. Decoding is greedy unless a temperature is given. Same prompt, same
answer, whatever ran before: llama.cpp keeps the KV cache of the previous prompt and reuses its longest common
prefix, but a token's values depend (in the last bits) on the batch it was computed in, so a prompt reached from
another history could decode differently. So the prompt is rendered as text (by the model's own chat template,
``chat_template``) and cut at *checkpoints*, the end of each message. Each message is computed as one batch
starting at the previous checkpoint (and followed by a sentinel token, which the next piece overwrites), and the
final request computes only the generation header and the answer. Every token is therefore computed the same way
for the same text, while the shared system message (instructions and catalog) is computed once per process and
reused, and saved on disk for the next processes (``prefixes``).
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from course_utils.backend.local.chat_template import RenderedPrompt
from course_utils.backend.local.model_file import LocalModel, load_model, model_choice
from course_utils.backend.local.prefixes import MIN_PREFIX_CHARS, PrefixFolder, open_prefix_folder, prefix_name

DEFAULT_MAX_OUTPUT_TOKENS = 512
_CACHE: dict[str, LocalLLM] = {}
_CACHE_LOCK = threading.Lock()

Message = dict[str, Any]


class ContextOverflow(ValueError):
    """The prompt does not fit in the model's context window."""

    def __init__(self, prompt_tokens: int, context: int) -> None:
        super().__init__(f"The input has {prompt_tokens:,} tokens; the local model's context is {context:,} tokens "
                         "(prompt and answer together). Shorten the input or use Gemini (set GEMINI_API_KEY).")
        self.prompt_tokens, self.context = prompt_tokens, context


class LLMError(RuntimeError):
    """llama.cpp refused a request, or its loopback listener did not answer."""


class Refused(LLMError):
    """llama.cpp's loopback listener answered with an error (a slot file it cannot read, a save that failed)."""


class Sampling(TypedDict, total=False):
    """How a completion samples: None or left out, greedy (temperature 0) and llama.cpp's own defaults."""

    temperature: float | None
    seed: int | None
    top_p: float | None
    top_k: int | None


@dataclass(frozen=True)
class Completion:
    """One chat completion: the text and the token counts the model really processed."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" or "length"
    cached_tokens: int = 0  # prompt tokens reused from the KV cache instead of computed
    logprobs: list[dict[str, Any]] | None = None  # per generated token: token, logprob, top_logprobs (if asked)


def llama_params(xllamacpp, path: str | Path, context: int, slot_dir: Path | None) -> Any:
    """llama.cpp's parameters: one slot whose KV cache `LocalLLM` manages, greedy, silent."""
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = context
    params.n_parallel = 1  # one slot: its KV cache is the reused prompt prefix
    params.cache_prompt = True
    params.cache_ram_mib = 0  # no host-memory prompt cache: the slot holds only what `_prefill` left
    params.swa_full = True  # a sliding-window model (Gemma 3) keeps every position, so a prefix can be reused
    params.no_extra_bufts = True  # no repacked second copy of the mmap'd weights: it would double their memory
    params.cpuparams.n_threads = os.cpu_count() or 1
    params.cpuparams_batch.n_threads = os.cpu_count() or 1
    params.sampling.temp = 0.0
    params.warmup = False
    params.verbosity = -1  # llama.cpp logs nothing
    if slot_dir is not None:
        params.slot_save_path = str(slot_dir) + os.sep  # llama.cpp appends the file name
    return params


class LlamaServer:
    """llama.cpp's server for one model file, in this process: completions in-process, the rest over loopback."""

    def __init__(self, path: str | Path, context: int, slot_dir: Path | None) -> None:
        import xllamacpp

        self.build = getattr(xllamacpp, "__version__", "unknown") + "+no-extra-bufts"  # the kernels: in a prefix's key
        self._server = xllamacpp.Server(llama_params(xllamacpp, path, context, slot_dir))

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """llama.cpp's ``/completion`` answer (or its ``error``), through the in-process call."""
        return self._server.handle_completions(request)

    def tokenize(self, text: str) -> list[int]:
        """The token ids of `text` as a prompt is tokenized (special tokens such as ``<|im_start|>`` parsed)."""
        return self._post("/tokenize", {"content": text})["tokens"]

    def slot(self, action: str, filename: str) -> None:
        """Save slot 0's KV cache to `filename` in the slot folder, or restore it from there (`Refused` if refused)."""
        self._post(f"/slots/0?action={action}", {"filename": filename})

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        address = self._server.listening_address
        request = urllib.request.Request(f"{address}{path}", data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
        try:
            with opener.open(request, timeout=300) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise Refused(f"llama.cpp refused POST {path}: {error.code} {error.read().decode(errors='replace')}") \
                from error
        except OSError as error:
            raise LLMError(f"llama.cpp's loopback listener at {address!r} did not answer POST {path}: {error}") \
                from error


class LocalLLM:
    """`model` served by `server` (a `LlamaServer`); thread-safe (one request at a time, under a lock).

    `prefixes`, if given, is the folder where the system message's KV cache is saved and restored. Each piece the
    cache holds ends with a *sentinel*, a special token the prompt does not contain, so the next request's common
    prefix with the cache stops exactly at the piece's checkpoint.
    """

    def __init__(self, model: LocalModel, server: Any, prefixes: PrefixFolder | None = None,
                 context: int | None = None) -> None:
        self.model = model
        self.server = server
        self.context = context or model.context
        self._prefixes = prefixes
        self._lock = threading.Lock()
        self._pieces: list[str] = []  # the checkpoint prefixes the KV cache holds (see _prefill)
        self._dirty = False  # the cache holds tokens past the last piece (an answer)
        self._on_disk: set[str] = set()  # names this process saved, restored or found whole on disk

    def chat(self, messages: Sequence[Message], *, grammar: str | None = None, max_tokens: int | None = None,
             top_logprobs: int | None = None, **sampling: Unpack[Sampling]) -> Completion:
        """Run one chat completion, optionally constrained by a llama.cpp grammar.

        Greedy (temperature 0) unless a temperature is given; then ``seed`` makes the sample repeatable, and
        ``top_p``/``top_k`` narrow the candidates (left out, llama.cpp's defaults apply: top_k 40, top_p 0.95,
        min_p 0.05). The prompt is computed the same way whatever ran before (module docstring), so greedy
        answers and token counts depend on the messages alone. ``top_logprobs`` asks for each generated token's
        log-probability and the ``top_logprobs`` most likely tokens at its position, from the softmax of the
        model's logits (before the grammar: a candidate may be a token the grammar would not have allowed).
        """
        prompt = self.model.template.prompt(messages)
        text = prompt.text
        temperature = sampling.get("temperature")
        request: dict[str, Any] = {"prompt": text, "n_predict": max_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
                                   "temperature": 0.0 if temperature is None else temperature, "cache_prompt": True}
        optional = {"seed": sampling.get("seed"), "top_p": sampling.get("top_p"), "top_k": sampling.get("top_k"),
                    "grammar": grammar,
                    "n_probs": None if top_logprobs is None else max(top_logprobs, 1)}  # 0 returns none at all
        request.update((key, value) for key, value in optional.items() if value is not None)
        with self._lock:
            if len(text.encode()) >= self.context:  # a token is at least one byte: a shorter text fits
                size = len(self.server.tokenize(text))
                if size >= self.context:
                    raise ContextOverflow(size, self.context)
            self._prefill(prompt, self.model.template.sentinel(text))
            self._dirty = True
            response = self._complete(request)
        choice, usage = response["choices"][0], response["usage"]
        return Completion(
            text=choice.get("text") or "",
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            finish_reason=choice.get("finish_reason") or "stop",
            cached_tokens=int((response.get("timings") or {}).get("cache_n", 0)),
            logprobs=(choice.get("logprobs") or {}).get("content") if top_logprobs is not None else None,
        )

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """The prompt tokens of these messages, counted by the model's tokenizer (none computed)."""
        return len(self.server.tokenize(self.model.template.render(messages)))

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self.server.complete(request)
        error = response.get("error")
        if error is None:
            return response
        if error.get("type") == "exceed_context_size_error":
            raise ContextOverflow(int(error["n_prompt_tokens"]), int(error["n_ctx"]))
        raise LLMError(str(error.get("message", error)))

    def _compute(self, prompt: str) -> None:
        """Compute `prompt` into the cache (one new piece and the sentinel); nothing is sampled."""
        self._complete({"prompt": prompt, "n_predict": 1, "temperature": 0.0, "cache_prompt": True})

    def _prefill(self, prompt: RenderedPrompt, sentinel: str) -> None:
        """Leave in the cache exactly the checkpoints of `text`, each message computed from the last.

        ``self._pieces`` lists the checkpoint prefixes the cache holds. The common ones are kept; if the
        cache holds anything past them (the previous answer, or another prompt's messages), a sentinel at the
        last common checkpoint cuts it off (with nothing in common, a lone sentinel empties the cache); then
        each missing message is computed. The system message is restored from disk instead when it was saved
        (``prefixes``), and saved the first time it is computed (only when the first checkpoint is the system
        message's own, `system_cut`). A cut exactly after it is a restore too:
        reading the file back is cheaper than computing a sentinel, and leaves the same state.
        """
        checkpoints = [prompt.text[:cut] for cut in prompt.cuts]
        kept = 0
        while kept < min(len(checkpoints), len(self._pieces)) and self._pieces[kept] == checkpoints[kept]:
            kept += 1
        name = self._prefix_name(checkpoints[0]) if prompt.system_cut else None
        if name and (kept == 0 or (kept == 1 and (self._dirty or len(self._pieces) > 1))):
            if self._restore(name):
                self._pieces, self._dirty, kept = checkpoints[:1], False, 1
            kept = min(kept, len(self._pieces))  # a refused restore leaves nothing known in the cache
        if self._dirty or kept < len(self._pieces):
            self._pieces = self._pieces[:kept]
            self._compute((checkpoints[kept - 1] if kept else "") + sentinel)
            self._dirty = False
            if kept == 1:
                self._save(name)
        for index in range(kept, len(checkpoints)):
            self._compute(checkpoints[index] + sentinel)
            self._pieces.append(checkpoints[index])
            if index == 0:
                self._save(name)

    def _prefix_name(self, system: str) -> str | None:
        """The saved-prefix file name of the system message, or None if it is not worth a file."""
        if self._prefixes is None or len(system) < MIN_PREFIX_CHARS:
            return None
        return prefix_name(self.model.sha256, self.server.build, self.context, [system])

    def _save(self, name: str | None) -> None:
        """The cache ends at the system message: save it unless it is on disk already."""
        if name is None or name in self._on_disk:
            return
        if not self._prefixes.has(name):
            temporary = self._prefixes.temporary(name)
            try:
                self.server.slot("save", temporary)
            except LLMError as error:
                self._prefixes.forget(temporary)
                warnings.warn(f"The system message was not saved for the next processes: {error}", stacklevel=4)
                return
            self._prefixes.publish(temporary, name)
        self._on_disk.add(name)  # checked or written once per process, not hashed again at every decision

    def _restore(self, name: str) -> bool:
        """Restore a saved system message into the cache; a file llama.cpp refuses is deleted, with a warning."""
        if not self._prefixes.has(name):
            return False
        try:
            self.server.slot("restore", name)
        except Refused as error:  # a file llama.cpp cannot read; an unreachable listener is raised as it is
            self._prefixes.forget(name)
            self._on_disk.discard(name)
            self._pieces, self._dirty = [], True  # whatever the refused restore left is emptied next
            warnings.warn(f"A saved system message was deleted and is computed instead: {error}", stacklevel=4)
            return False
        self._on_disk.add(name)
        return True


def get_llm(choice: str | os.PathLike | None = None) -> LocalLLM:
    """The shared LocalLLM for a published model's name or a GGUF path (default: ``model_file.model_choice()``),
    its server started on first use."""
    choice = model_choice(choice)
    with _CACHE_LOCK:
        if choice not in _CACHE:
            model = load_model(choice)
            prefixes = open_prefix_folder()
            server = LlamaServer(model.path, model.context, prefixes.folder if prefixes else None)
            _CACHE[choice] = LocalLLM(model, server, prefixes)
        return _CACHE[choice]

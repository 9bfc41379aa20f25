"""The local LLM: a Qwen2.5-Coder GGUF file run in-process by llama.cpp (``xllamacpp``).

One ``xllamacpp.Server`` per model and process, created on first use. Decoding is greedy unless
a temperature is given. llama.cpp's logs are silenced.

Same prompt, same answer, whatever ran before. llama.cpp keeps the KV cache of the previous prompt
and reuses its longest common prefix, but a token's values depend (in the last bits) on the batch it
was computed in, so a prompt reached from different histories could decode differently (the
llama.cpp server documents that ``cache_prompt`` can make results nondeterministic). Here the
prompt is rendered as text (Qwen's ChatML, as its chat template writes it) and cut at *checkpoints*
that depend on the text alone: after each message, and at paragraph breaks inside a long system
message. Each piece between two checkpoints is computed as one batch that starts at the previous
checkpoint (followed by a sentinel token, which the next piece overwrites), and the final request
only computes the assistant header and the answer (a selection's later requests continue that answer:
``chat(resume=True)``, ``selection_decode``). Every token is therefore computed the same way
for the same text, while the shared prefix (the system instruction and catalog) is still computed
once per process and reused — and, saved on disk the first time a process computes it, restored instead of
computed by the next processes (``prefixes``).
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course_utils.backend.local.models import DEFAULT_MODEL, get_spec, require_model
from course_utils.backend.local.prefixes import MIN_PREFIX_CHARS, PrefixFolder, prefix_dir, prefix_name

LLM_ENV = "COURSE_LOCAL_LLM"
CONTEXT_TOKENS = 8192
DEFAULT_MAX_OUTPUT_TOKENS = 512
SENTINEL = "<|endoftext|>"
"""Ends every prefill piece: a token no rendered message contains, so the next request's common
prefix with the cache stops exactly at the piece's checkpoint."""
MIN_PIECE_CHARS = 400
"""A paragraph break inside a message is a checkpoint once the piece since the last one is this long."""
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
    cached_tokens: int = 0  # prompt tokens reused from the KV cache instead of computed
    logprobs: list[dict[str, Any]] | None = None  # per generated token: token, logprob, top_logprobs (if asked)


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def render_chatml(messages: Sequence[Message]) -> tuple[str, list[int]]:
    """The prompt as Qwen2.5's chat template writes it (no ``tools`` passed), and its checkpoints.

    Checkpoints are character offsets that depend on the text alone: the end of each message
    (consecutive tool messages share one ``user`` turn, as the template groups them) and, inside
    a message, the paragraph breaks (a blank line before text) that close a piece of at least
    ``MIN_PIECE_CHARS``: a cut there leaves the tokens on both sides as they are in the whole text.
    The text ends with the generation header ``<|im_start|>assistant\n``.
    """
    parts: list[str] = []
    cuts: list[int] = []
    length = 0

    def add(text: str, breaks: bool = False) -> None:
        nonlocal length
        if breaks:
            last = cuts[-1] if cuts else 0
            for match in re.finditer(r"\n\n(?=\S)", text):
                at = length + match.end()
                if at - last >= MIN_PIECE_CHARS:
                    cuts.append(at)
                    last = at
        parts.append(text)
        length += len(text)

    items = list(messages)
    if not items or items[0].get("role") != "system":
        add("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n")
        cuts.append(length)
    for index, message in enumerate(items):
        role, text = message.get("role"), _message_text(message)
        if role == "tool":
            if index == 0 or items[index - 1].get("role") != "tool":
                add("<|im_start|>user")
            add("\n<tool_response>\n")
            add(text, breaks=True)
            add("\n</tool_response>")
            if index == len(items) - 1 or items[index + 1].get("role") != "tool":
                add("<|im_end|>\n")
                cuts.append(length)
            continue
        add(f"<|im_start|>{role}\n")
        add(text, breaks=True)
        add("<|im_end|>\n")
        cuts.append(length)
    add("<|im_start|>assistant\n")
    return "".join(parts), cuts


def default_llm_name() -> str:
    """The configured local LLM: env COURSE_LOCAL_LLM, else the 1.5B model."""
    name = os.environ.get(LLM_ENV) or DEFAULT_MODEL
    get_spec(name)
    return name


class LocalLLM:
    """A loaded GGUF chat model; thread-safe (one request at a time, under a lock)."""

    def __init__(self, name: str, context: int = CONTEXT_TOKENS) -> None:
        import xllamacpp

        self.name = name
        self.context = context
        self.path = require_model(name)
        self._build = getattr(xllamacpp, "__version__", "unknown") + "+no-extra-bufts"  # the kernels, in the prefix key
        self._prefixes = self._prefix_folder()
        self._server = xllamacpp.Server(self._params(xllamacpp))
        self._lock = threading.Lock()
        self._pieces: list[str] = []  # the checkpoint prefixes the KV cache holds (see _prefill)
        self._dirty = False  # the cache holds tokens past the last piece (an answer)
        self._answered: str | None = None  # the prompt whose answer the cache holds past its pieces (see `resume`)
        self._on_disk: set[str] = set()  # names this process saved, restored or found whole on disk
        self._token_counts: dict[str, int] = {}  # token_count's answers

    @staticmethod
    def _prefix_folder() -> PrefixFolder | None:
        folder = prefix_dir()
        if folder is None:
            return None
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            warnings.warn(f"Saved prompt prefixes are off: cannot create {folder} ({error}).", stacklevel=3)
            return None
        return PrefixFolder(folder)

    def _params(self, xllamacpp) -> Any:
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self.context
        params.n_parallel = 1  # one slot: its KV cache is the reused prompt prefix
        params.cache_prompt = True
        params.cache_ram_mib = 0  # no host-memory prompt cache: what the slot holds is only what `_prefill` left
        # No repacked copy of the weights ("extra buffer types"): llama.cpp would copy the mmap'd Q4_K tensors into
        # an interleaved layout and keep both resident. Measured on the 90 dev decisions (2-core AMD EPYC, 2026-12-01):
        # peak 2,193 -> 1,596 MiB, load 3.0 -> 1.8 s, decision p50 3.18 -> 3.15 s, 89 of 90 decisions the same.
        params.no_extra_bufts = True
        params.cpuparams.n_threads = os.cpu_count() or 1
        params.cpuparams_batch.n_threads = os.cpu_count() or 1
        params.sampling.temp = 0.0
        params.warmup = False
        params.verbosity = -1  # llama.cpp logs nothing
        if self._prefixes is not None:
            params.slot_save_path = str(self._prefixes.folder) + os.sep  # llama.cpp appends the file name
        return params

    def chat(self, messages: Sequence[Message], *, grammar: str | None = None,
             temperature: float | None = None, max_tokens: int | None = None,
             seed: int | None = None, top_logprobs: int | None = None,
             top_p: float | None = None, top_k: int | None = None, prefix: str = "",
             resume: bool = False) -> Completion:
        """Run one chat completion, optionally constrained by a llama.cpp grammar.

        Greedy (temperature 0) unless a temperature is given; then ``seed`` makes the sample
        repeatable, and ``top_p``/``top_k`` (the request's ``topP``/``topK``) narrow the candidates;
        left out, llama.cpp's own defaults apply (top_k 40, top_p 0.95, min_p 0.05). The nucleus Qwen
        publishes for the model (top_k 20, top_p 0.8) was tried as the default on the bakery's
        development requests (lesson 04, row 20) and not kept. Either way the prompt is computed the
        same way whatever ran before (module docstring), so greedy answers and token counts depend on
        the messages alone.
        ``top_logprobs`` asks llama.cpp for each generated token's log-probability and the
        ``top_logprobs`` most likely tokens at its position, from the softmax of the model's logits
        (before the grammar: a candidate may be a token the grammar would not have allowed).
        ``prefix`` is the start of the answer, given rather than decoded: computed in one batch after the
        generation header, and returned at the start of the text; the grammar constrains what follows it.
        The token counts are the prompt's and the generated ones, the prefix in neither.
        ``resume`` says the previous request was for the same messages: what the cache holds past them
        (that answer's tokens) is kept instead of cut off, and llama.cpp reuses it as far as it matches this
        prompt (a given ``prefix`` that continues it). The computation then depends on the previous request,
        which itself depended on the messages alone: still the same answer for the same requests.
        """
        text, cuts = render_chatml(messages)
        request: dict[str, Any] = {
            "prompt": text + prefix,
            "n_predict": max_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "temperature": 0.0 if temperature is None else temperature,
            "cache_prompt": True,
        }
        if seed is not None:
            request["seed"] = seed
        if top_p is not None:
            request["top_p"] = top_p
        if top_k is not None:
            request["top_k"] = top_k
        if grammar is not None:
            request["grammar"] = grammar
        if top_logprobs is not None:
            request["n_probs"] = max(top_logprobs, 1)  # 0 would return no log-probabilities at all
        with self._lock:
            if len((text + prefix).encode()) >= self.context:  # a token is at least one byte: a shorter text fits
                size = self._prompt_tokens(text + prefix)
                if size >= self.context:
                    raise ContextOverflow(size, self.context)
            resumed, self._answered = resume and self._answered == text, None
            if not resumed:
                try:
                    self._prefill(text, cuts)
                except ContextOverflow:
                    pass  # the request below reports the whole prompt's size
            self._dirty = True
            response = self._complete(request)
            self._answered = text
            given = self._counted(prefix) if prefix else 0
        choice, usage = response["choices"][0], response["usage"]
        return Completion(
            text=prefix + (choice.get("text") or ""),
            prompt_tokens=usage["prompt_tokens"] - given,
            completion_tokens=usage["completion_tokens"],
            finish_reason=choice.get("finish_reason") or "stop",
            cached_tokens=int((response.get("timings") or {}).get("cache_n", 0)),
            logprobs=(choice.get("logprobs") or {}).get("content") if top_logprobs is not None else None,
        )

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self._server.handle_completions(request)
        if "error" in response:
            raise self._error(response["error"])
        return response

    def _compute(self, prompt: str) -> None:
        """Compute `prompt` into the cache (one new piece and the sentinel); nothing is sampled."""
        self._complete({"prompt": prompt, "n_predict": 1, "temperature": 0.0, "cache_prompt": True})

    def _prefill(self, text: str, cuts: Sequence[int]) -> None:
        """Leave in the cache exactly the checkpoints of `text`, each piece computed from the last.

        ``self._pieces`` lists the checkpoint prefixes the cache holds, computed this way. The
        common ones are kept; if the cache holds anything past them (the previous answer, or
        another prompt's pieces), a sentinel at the last common checkpoint cuts it off (or, with
        nothing in common, a lone sentinel empties the cache); then each missing piece is computed.
        The first message's pieces are restored from disk instead when they were saved (``prefixes``),
        and saved the first time the cache ends exactly at them (a later process restores them). A cut
        exactly at them is a restore too: reading the file back (~20 ms for a 1,400-token catalog) is cheaper
        than computing a sentinel (one forward pass, ~130 ms on a 2-core CPU), and leaves the same state.
        """
        checkpoints = [text[:cut] for cut in cuts]
        kept = 0
        while (kept < len(checkpoints) and kept < len(self._pieces)
               and self._pieces[kept] == checkpoints[kept]):
            kept += 1
        head = next((i + 1 for i, checkpoint in enumerate(checkpoints) if checkpoint.endswith("<|im_end|>\n")), 0)
        name = self._prefix_name(checkpoints[:head])
        cut = self._dirty or kept < len(self._pieces)
        if name and (kept < head or (kept == head and cut)):
            if self._restore(name):
                self._pieces, self._dirty, kept = checkpoints[:head], False, head
            kept = min(kept, len(self._pieces))  # a failed restore leaves nothing known in the cache
        if self._dirty or kept < len(self._pieces):
            self._pieces = self._pieces[:kept]
            self._compute((checkpoints[kept - 1] if kept else "") + SENTINEL)
            self._dirty = False
            if kept == head:
                self._at_head(name)
        for index in range(kept, len(checkpoints)):
            self._compute(checkpoints[index] + SENTINEL)
            self._pieces.append(checkpoints[index])
            if index + 1 == head:
                self._at_head(name)

    def _prefix_name(self, checkpoints: Sequence[str]) -> str | None:
        """The saved-prefix file name of the first message's pieces, or None if not worth saving."""
        if self._prefixes is None or not checkpoints or len(checkpoints[-1]) < MIN_PREFIX_CHARS:
            return None
        return prefix_name(get_spec(self.name).sha256, self._build, self.context, checkpoints)

    def _at_head(self, name: str | None) -> None:
        """The cache ends at the first message: save it unless it is on disk already."""
        if name is None or name in self._on_disk:
            return
        if not self._prefixes.has(name):
            temporary = self._prefixes.temporary(name)
            if not self._slot("save", temporary):
                self._prefixes.forget(temporary)
                return
            self._prefixes.publish(temporary, name)
        self._on_disk.add(name)  # checked or written once per process, not hashed again at every decision

    def _restore(self, name: str) -> bool:
        """Restore a saved first message into the cache; a file llama.cpp refuses is deleted."""
        if not self._prefixes.has(name):
            return False
        if self._slot("restore", name):
            self._on_disk.add(name)
            return True
        self._prefixes.forget(name)
        self._pieces, self._dirty = [], True  # whatever the failed restore left is emptied next
        return False

    def _slot(self, action: str, filename: str) -> bool:
        """Ask llama.cpp's server to save or restore slot 0's KV cache (the in-process API has no call for it)."""
        address = self._server.listening_address
        if not address:
            return False
        request = urllib.request.Request(f"{address}/slots/0?action={action}", method="POST",
                                         data=json.dumps({"filename": filename}).encode(),
                                         headers={"Content-Type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
        try:
            with opener.open(request, timeout=120) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """The prompt tokens of these messages, counted by the model's own tokenizer, none computed."""
        with self._lock:
            return self._prompt_tokens(render_chatml(messages)[0])

    def token_count(self, text: str) -> int:
        """How many tokens `text` is, none computed; remembered per text (answers repeat: a call's JSON)."""
        with self._lock:
            return self._counted(text)

    def _counted(self, text: str) -> int:
        if text not in self._token_counts:
            self._token_counts[text] = self._prompt_tokens(text)
        return self._token_counts[text]

    def _prompt_tokens(self, text: str) -> int:
        """How many tokens `text` is, without computing any of them.

        llama.cpp's in-process API has no tokenize call, but it refuses a prompt longer than the
        context before computing anything, and the refusal gives the prompt's size. So `text` is
        sent padded with one sentinel (a single token) per position of the context: always refused,
        and its size less the padding is the text's. Nothing reaches the KV cache.
        """
        response = self._server.handle_completions(
            {"prompt": text + SENTINEL * self.context, "n_predict": 1, "cache_prompt": False})
        error = response.get("error") or {}
        if error.get("type") != "exceed_context_size_error":
            raise LLMError(f"counting tokens: expected llama.cpp to refuse the padded prompt, got {response!r:.200}")
        return int(error["n_prompt_tokens"]) - self.context

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

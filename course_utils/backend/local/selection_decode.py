"""A greedy selection's answer, with only the model's choices decoded one token at a time.

A skill decision's answer is a text or ``{"name":"activate_skill","arguments":{"name":"<skill>"}}``.
The grammar leaves the model three things to choose: text or call, which value, and (for values that
share a start) where they part. Every other token of the call is the only one the grammar allows, yet
decoding it costs a full forward pass (about 100 ms each on a 2-core CPU, against about 25 ms per token
computed in a batch), and a call is about sixteen tokens. So:

1. the first two tokens are decoded under the whole grammar: ``{"t`` opens a text, decoded as before
   (the same request again, nothing else changed);
2. otherwise the call up to its value is *given* (computed in one batch after the generation header),
   and one token of the value is decoded, constrained to the listed values;
3. as soon as one listed value is left that starts with what was decoded, the answer is known: the
   grammar allows nothing else, so the rest is written, not decoded. Values that share a start get one
   more decoded token each time, from the values still possible.

Greedy requests only: a sampled answer (a temperature), log-probabilities, or a token cap too short for
a whole call take the ordinary path, one request decoded token by token. Same messages, same requests,
same answer (``llm``'s module docstring), so decisions stay deterministic; the given tokens are computed
in a batch instead of one at a time, which can move a near-tie (``scripts/check_selection_decode.py``
runs the development queries both ways).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from course_utils.backend.local.guards import is_selection
from course_utils.backend.local.llm import Completion

if TYPE_CHECKING:
    from course_utils.backend.local.app import Declaration
    from course_utils.backend.local.llm import LocalLLM, Message

Json = dict[str, Any]
MIN_TOKEN_CAP = 64
"""Below this output cap the ordinary path runs: it would cut a call at the cap, this path writes it whole (a call
on the workplace catalog took 15 to 18 answer tokens, the end token included, on the
90 development queries)."""
END_TOKENS = 1
"""llama.cpp counts among an answer's tokens the end-of-text token it decodes once the grammar is complete."""


@dataclass(frozen=True)
class Selection:
    """An answer that is a text (if allowed) or a call of one function whose one argument is a listed value."""

    opening: str  # the call up to its value's opening quote, as the grammar writes it
    endings: tuple[str, ...]  # each value's JSON string without its opening quote, and the braces that close the call
    allow_text: bool


def selection_of(offered: Sequence[Declaration], allow_text: bool) -> Selection | None:
    """The Selection of an answer whose only callable function takes one required argument among listed strings."""
    if len(offered) != 1 or not is_selection(offered[0]):
        return None
    (declaration,) = offered
    ((argument, schema),) = declaration.parameters["properties"].items()
    values = schema["enum"]
    if not all(isinstance(v, str) for v in values) or argument not in (declaration.parameters.get("required") or []):
        return None
    empty = json.dumps({"name": declaration.name, "arguments": {argument: ""}}, ensure_ascii=False,
                       separators=(",", ":"))  # compact, as the grammar writes it
    opening, closing = empty[:-3], empty[-2:]  # up to the value's opening quote; the braces after it
    return Selection(opening, tuple(json.dumps(v, ensure_ascii=False)[1:] + closing for v in values), allow_text)


def _grammar(endings: Sequence[str]) -> str:
    """A llama.cpp grammar accepting exactly one of `endings`."""
    return "root ::= " + " | ".join(json.dumps(ending, ensure_ascii=False) for ending in endings)


def decode_selection(llm: LocalLLM, messages: Sequence[Message], grammar: str, selection: Selection,
                     options: Json) -> Completion:
    """The model's answer to `messages` under `grammar`, a selection's call decoded as the module docstring says."""
    cap = options.get("max_tokens") or MIN_TOKEN_CAP
    if options.get("temperature") or options.get("top_logprobs") is not None or cap < MIN_TOKEN_CAP:
        return llm.chat(messages, grammar=grammar, **options)
    first = None
    if selection.allow_text:
        first = llm.chat(messages, grammar=grammar, **{**options, "max_tokens": 2})
        if not first.text.startswith(selection.opening[:3]):  # '{"t' opens a text; '{"n' the call
            return llm.chat(messages, grammar=grammar, **options)
    decoded, left = "", list(selection.endings)
    while len(left) > 1:
        step = llm.chat(messages, grammar=_grammar([e[len(decoded):] for e in left]),
                        prefix=selection.opening + decoded, **{**options, "max_tokens": 1})
        first = first or step
        if len(step.text) <= len(selection.opening + decoded):  # no new character (a partial one): decode as usual
            return llm.chat(messages, grammar=grammar, **options)
        decoded = step.text[len(selection.opening):]
        left = [e for e in left if e.startswith(decoded)]
    answer = selection.opening + left[0]
    return Completion(text=answer, prompt_tokens=first.prompt_tokens if first else llm.count_tokens(messages),
                      completion_tokens=llm.token_count(answer) + END_TOKENS, finish_reason="stop",
                      cached_tokens=first.cached_tokens if first else 0)

"""A greedy selection's answer, with only the model's choices decoded one token at a time.

A skill decision's answer is a text or ``{"name":"activate_skill","arguments":{"name":"<skill>"}}``.
The grammar leaves the model three things to choose: text or call, which value, and (for values that
share a start) where they part. Every other token of the call is the only one the grammar allows, yet
decoding it costs a full forward pass, and a call is about sixteen tokens (on the 2-core Intel Xeon of
2026-12-03, ~100 ms a decoded token against ~25 ms a token computed in a batch; on the AMD EPYC of 2026-12-04 a
batch of a few tokens cost about what decoding them did, ~50 ms a token: ``scripts/profile_decision.py``). So:

1. the first two tokens are decoded under the whole grammar: ``{"t`` opens a text, whose decoding goes on
   from there (``resume``, the two tokens given, a grammar for the rest of a text answer): the same
   computation as decoding it whole in one request, each further token decoded one at a time as there;
2. otherwise the call up to its value is *given* (computed in one batch after the token decoded first),
   and one token of the value is decoded, constrained to the listed values; it continues the cache the
   previous step left (``resume``), so the tokens already decoded there are not computed again;
3. as soon as one listed value is left that starts with what was decoded, the answer is known: the
   grammar allows nothing else, so the rest is written, not decoded. Values that share a start get one
   more decoded token each time, from the values still possible.

Greedy requests only: a sampled answer (a temperature) or log-probabilities take the ordinary path, one
request decoded token by token, and so does a call longer than the token cap (the ordinary path cuts it
where the cap falls, as decoding it would). Same messages, same requests,
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
from course_utils.backend.local.llm import DEFAULT_MAX_OUTPUT_TOKENS, Completion

if TYPE_CHECKING:
    from course_utils.backend.local.app import Declaration
    from course_utils.backend.local.llm import LocalLLM, Message

Json = dict[str, Any]
END_TOKENS = 1
"""llama.cpp counts among an answer's tokens the end-of-text token it decodes once the grammar is complete."""
TEXT_OPENING = '{"text":'
"""A text answer up to its string, as the grammar writes it (compact JSON)."""


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


def _text_rest_grammar(opened: str) -> str:
    """A llama.cpp grammar for the rest of a text answer whose first characters, `opened`, are given."""
    return (f"%llguidance {{}}\nstart: {json.dumps(TEXT_OPENING[len(opened):])} value \"}}\"\n"
            'value: %json {"type": "string"}\n')


def _continue_text(llm: LocalLLM, messages: Sequence[Message], grammar: str, first: Completion,
                   options: Json, cap: int) -> Completion:
    """A text answer whose first tokens `first` decoded: the rest decoded from there, as one request would."""
    if not TEXT_OPENING.startswith(first.text) or first.finish_reason != "length" or cap <= first.completion_tokens:
        return llm.chat(messages, grammar=grammar, **options)  # not the opening alone: decode it whole again
    rest = llm.chat(messages, grammar=_text_rest_grammar(first.text), prefix=first.text, resume=True,
                    **{**options, "max_tokens": cap - first.completion_tokens})
    return Completion(text=rest.text, prompt_tokens=first.prompt_tokens,
                      completion_tokens=first.completion_tokens + rest.completion_tokens,
                      finish_reason=rest.finish_reason, cached_tokens=first.cached_tokens)


def decode_selection(llm: LocalLLM, messages: Sequence[Message], grammar: str, selection: Selection,
                     options: Json) -> Completion:
    """The model's answer to `messages` under `grammar`, a selection's call decoded as the module docstring says."""
    cap = options.get("max_tokens") or DEFAULT_MAX_OUTPUT_TOKENS
    if options.get("temperature") or options.get("top_logprobs") is not None or cap < 2:
        return llm.chat(messages, grammar=grammar, **options)
    first = None
    if selection.allow_text:
        first = llm.chat(messages, grammar=grammar, **{**options, "max_tokens": 2})
        if not first.text.startswith(selection.opening[:3]):  # '{"t' opens a text; '{"n' the call
            return _continue_text(llm, messages, grammar, first, options, cap)
    decoded, left = "", list(selection.endings)
    while len(left) > 1:
        step = llm.chat(messages, grammar=_grammar([e[len(decoded):] for e in left]), resume=first is not None,
                        prefix=selection.opening + decoded, **{**options, "max_tokens": 1})
        first = first or step
        if len(step.text) <= len(selection.opening + decoded):  # no new character (a partial one): decode as usual
            return llm.chat(messages, grammar=grammar, **options)
        decoded = step.text[len(selection.opening):]
        left = [e for e in left if e.startswith(decoded)]
    answer = selection.opening + left[0]
    tokens = llm.token_count(answer) + END_TOKENS
    if tokens > cap:  # the cap cuts this call short
        return llm.chat(messages, grammar=grammar, **options)
    return Completion(text=answer, prompt_tokens=first.prompt_tokens if first else llm.count_tokens(messages),
                      completion_tokens=tokens, finish_reason="stop",
                      cached_tokens=first.cached_tokens if first else 0)

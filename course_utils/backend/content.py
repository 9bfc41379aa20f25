"""Gemini request and response pieces that both in-process backends read and write the same way.

The local app (``backend.local.app``) and the OpenAI-compatible one (``backend.openai_compatible``) each turn a
Gemini request into their model's prompt and its answer back into a Gemini response; these are the parts they
share: the text of a Content, what a model reads of a function result, and log-probabilities in Gemini's shape.
"""

from __future__ import annotations

import json
from typing import Any

from course_utils.backend.declarations import InvalidRequest, Json

PART_JOINER = "\n"
"""What joins the text parts of one Content (as gemini-embedding-2 aggregates a Content's parts)."""


def text_of(content: Any, what: str) -> str:
    """The text parts of one Content (or a plain string), joined with a newline; `InvalidRequest` naming `what`
    for anything but text parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise InvalidRequest(f"{what} must be a Content with a list of parts.")
    texts = []
    for part in content["parts"]:
        if "text" not in part:
            raise InvalidRequest(f"{what}: only text parts are read here, got {sorted(part)}.")
        texts.append(part["text"])
    return PART_JOINER.join(texts)


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


def logprobs_result(tokens: list[Json], top: int) -> Json:
    """Per-token log-probabilities in the OpenAI shape llama.cpp also uses (``token``, ``id``, ``logprob``,
    ``top_logprobs``) turned into Gemini's ``logprobsResult``, with at most `top` candidates per position."""
    def candidate(item: Json) -> Json:
        return {"token": item.get("token", ""), "tokenId": item.get("id"), "logProbability": item.get("logprob")}

    return {"chosenCandidates": [candidate(t) for t in tokens],
            "topCandidates": [{"candidates": [candidate(c) for c in (t.get("top_logprobs") or [])[:top]]}
                              for t in tokens]}

"""A model's chat template: how its messages become the one text it reads, and where each message ends.

A GGUF chat model carries its template (``tokenizer.chat_template``), a Jinja program written for Hugging Face's
``apply_chat_template``. ``ChatTemplate`` runs it the same way (a sandbox, ``trim_blocks`` and ``lstrip_blocks``,
``raise_exception``, ``tojson`` without HTML escaping) with ``add_generation_prompt=True``.

``LocalLLM`` computes a prompt message by message (see ``llm``), so it needs the *checkpoints*: the offsets where
messages end. A checkpoint is where the rendering of the first i messages is a prefix of the whole prompt; where it
is not (a template that closes a turn differently when it is the last, or raises on a partial conversation),
that message shares the next one's checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

Message = dict[str, Any]


class TemplateError(ValueError):
    """The chat template cannot render these messages; the message names the model and the template's complaint."""


@dataclass(frozen=True)
class RenderedPrompt:
    """A prompt as the model reads it: the text, the message checkpoints, and whether the first is the system's."""

    text: str
    cuts: list[int]
    system_cut: bool  # cuts[0] ends the system message alone: the prefix worth saving


def _raise(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value: Any, indent: int | None = None, separators: Any = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)


class ChatTemplate:
    """One model's chat template, compiled once."""

    def __init__(self, source: str, *, model: str, bos_token: str = "", eos_token: str = "",
                 strip_bos: bool = False, special_tokens: Sequence[str] = ()) -> None:
        environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                    extensions=["jinja2.ext.loopcontrols"])
        environment.filters["tojson"] = _tojson
        environment.globals.update(raise_exception=_raise,
                                   strftime_now=lambda fmt: datetime.now().strftime(fmt))
        try:
            self._template = environment.from_string(source)
        except jinja2.exceptions.TemplateSyntaxError as error:
            raise TemplateError(f"The chat template of {model} does not compile: {error}") from None
        self.model = model
        self.bos_token, self.eos_token, self.strip_bos = bos_token, eos_token, strip_bos
        self.special_tokens = tuple(special_tokens)

    def render(self, messages: Sequence[Message], add_generation_prompt: bool = True) -> str:
        """The text of `messages` (without the BOS token the tokenizer adds itself)."""
        try:
            text = self._template.render(messages=list(messages), add_generation_prompt=add_generation_prompt,
                                         bos_token=self.bos_token, eos_token=self.eos_token)
        except jinja2.exceptions.TemplateError as error:
            raise TemplateError(f"The chat template of {self.model} refused the conversation: {error}") from None
        if self.strip_bos and self.bos_token and text.startswith(self.bos_token):
            text = text[len(self.bos_token):]
        return text

    def prompt(self, messages: Sequence[Message]) -> RenderedPrompt:
        """The prompt of `messages`, ending with the model's generation header, and its checkpoints."""
        items = list(messages)
        text = self.render(items)
        cuts: list[int] = []
        for end in range(1, len(items) + 1):
            try:
                head = self.render(items[:end], add_generation_prompt=False)
            except TemplateError:
                continue
            if head and text.startswith(head) and (not cuts or len(head) > cuts[-1]) and len(head) < len(text):
                cuts.append(len(head))
        first = items[0].get("role") == "system" if items else False
        system_cut = bool(cuts) and first and self._ends_first(items, cuts[0])
        return RenderedPrompt(text, cuts, system_cut)

    def _ends_first(self, items: list[Message], cut: int) -> bool:
        try:
            return len(self.render(items[:1], add_generation_prompt=False)) == cut
        except TemplateError:
            return False

    def sentinel(self, text: str) -> str:
        """A special token that `text` does not contain: it ends a computed piece (see ``llm``)."""
        for token in self.special_tokens:
            if token not in text:
                return token
        raise TemplateError(f"Every special token of {self.model} occurs in the prompt; none can end a piece.")

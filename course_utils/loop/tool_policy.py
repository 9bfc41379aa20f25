"""The harness's policies: small objects `run_agent` consults, each saying one thing in Gemini's own terms.

A small model told in words "load the skill first" or "do not call it again" often does not. A harness can
say it in the request instead: `FunctionCallingConfig(mode=…, allowed_function_names=[…])`, computed from
the conversation so far before every model call. Gemini applies it, and the local backend applies the same
contract by constrained decoding, so the very same requests go to both. A call repeated with the same
arguments is refused by the harness as a tool result, and a tool that writes the user's reply can end the run.

`run_agent(..., policies=[...])` asks each `Policy` at three moments (`Policy`'s docstring). The named ones:

- `OneStepAtATime()`: before any call, when a selection is declared (`load_skill` with an enum of names): mode
  VALIDATED (ANY if "none" is a name), only the selections allowed; later: mode VALIDATED, every function allowed
  except a selection already made, a function whose latest call succeeded (its result is above: act on it) and
  one whose last two calls failed; later, nothing left to call: mode NONE.
- `RefuseRepeats()`: a call identical to an earlier one (same function, same arguments) is not run; the model
  reads `repeat_note(...)`, which points it at the earlier result.
- `StopAt(tools)`: the first successful result of one of these tools is the answer and ends the run.
- `Fixed(tool_config)`: the same tool_config every turn.
"""
from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from google.genai import types

from course_utils.selection.abstain import NONE

Mode = types.FunctionCallingConfigMode

FAILURES_IN_A_ROW = 2
"""After this many failed results in a row, a function is not offered in the next turn."""


def tool_config(mode: types.FunctionCallingConfigMode, allowed: Sequence[str] = ()) -> types.ToolConfig:
    """A `ToolConfig` with this mode and, if any, these allowed function names."""
    return types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=mode, allowed_function_names=list(allowed) or None))


def describe(config: types.ToolConfig | None) -> str | None:
    """A trace's short form of a tool_config: "VALIDATED [load_skill]", "NONE"; None when there is none."""
    calling = config.function_calling_config if config else None
    if calling is None or calling.mode is None:
        return None
    names = f" [{', '.join(calling.allowed_function_names)}]" if calling.allowed_function_names else ""
    return f"{calling.mode.value}{names}"


def selection_values(declaration: types.FunctionDeclaration) -> list[str] | None:
    """The listed values of a selection (a function whose one argument is a choice among them), else None."""
    if declaration.parameters is not None:
        properties = {name: schema.enum for name, schema in (declaration.parameters.properties or {}).items()}
    else:
        schema: Any = declaration.parameters_json_schema or {}
        properties = {name: sub.get("enum") for name, sub in (schema.get("properties") or {}).items()}
    if len(properties) != 1:
        return None
    values = next(iter(properties.values()))
    return list(values) if values else None


def calls_made(history: Sequence[types.Content]) -> list[str]:
    """The name of every function call in the model turns of a conversation, in order."""
    return [part.function_call.name for content in history if content.role == "model"
            for part in content.parts or [] if part.function_call]


def _failed(response: types.FunctionResponse) -> bool:
    """Whether a result reports a failure: an `error` field, or one string starting "Error"."""
    value = response.response or {}
    texts = list(value.values())
    return "error" in value or (len(texts) == 1 and isinstance(texts[0], str) and texts[0].startswith("Error"))


def results(history: Sequence[types.Content]) -> dict[str, list[bool]]:
    """For each function, whether each of its results in the conversation failed, in order."""
    failed: dict[str, list[bool]] = {}
    for content in history:
        for part in content.parts or []:
            if part.function_response is not None:
                failed.setdefault(part.function_response.name, []).append(_failed(part.function_response))
    return failed


class Call(NamedTuple):
    """A function call of the conversation, with the turn of the run that made it (0: the history passed in)."""

    turn: int
    name: str
    arguments: Mapping[str, Any]


class Policy:
    """A rule of the harness. `run_agent` asks each policy, in order, at three moments; None means "no say".

    - `tool_config(declarations, history)`: before each model call, the functions the model may call now
      (Gemini's own `ToolConfig`); the first policy with a say decides, else the request sends none;
    - `refusal(call, earlier)`: before a call runs, a result to send back instead of running it (`earlier`: the
      calls before it, in the history passed in and in this run);
    - `answer(name, result)`: after a call ran, the run's answer, which ends the run.
    """

    def tool_config(self, declarations: Sequence[types.FunctionDeclaration],
                    history: Sequence[types.Content]) -> types.ToolConfig | None:
        """This turn's tool_config, or None."""
        return None

    def refusal(self, call: Call, earlier: Sequence[Call]) -> str | None:
        """What the model reads instead of this call's result, or None to run the call."""
        return None

    def answer(self, name: str, result: Any) -> str | None:
        """The run's answer after this result, or None to go on."""
        return None


@dataclass(frozen=True)
class OneStepAtATime(Policy):
    """A selection first, then every function but the ones done or failing (the module docstring's table)."""

    def tool_config(self, declarations: Sequence[types.FunctionDeclaration],
                    history: Sequence[types.Content]) -> types.ToolConfig | None:
        names = [d.name for d in declarations]
        selections = [d.name for d in declarations if selection_values(d)]
        made = calls_made(history)
        if not made and selections:
            declines = any(NONE in (selection_values(d) or []) for d in declarations)
            return tool_config(Mode.ANY if declines else Mode.VALIDATED, selections)
        resting = {name for name, failed in results(history).items()
                   if not failed[-1] or failed[-FAILURES_IN_A_ROW:] == [True] * FAILURES_IN_A_ROW}
        allowed = [name for name in names if name not in resting and not (name in selections and name in made)]
        if allowed == names:
            return None
        return tool_config(Mode.VALIDATED, allowed) if allowed else tool_config(Mode.NONE)


def repeat_note(tool: str, turn: int) -> str:
    """What the model reads instead of a repeated call's result (turn 0: a call in the history passed in)."""
    when = f"at turn {turn}" if turn else "earlier in this conversation"
    return (f"Error: you already called {tool} with these arguments {when}; its result is above. "
            "Do not call it again: use that result, call a different tool, or answer the user in words.")


def _key(name: str, arguments: Mapping[str, Any]) -> str:
    return json.dumps([name, dict(arguments)], sort_keys=True, default=str)


@dataclass(frozen=True)
class RefuseRepeats(Policy):
    """A call identical to an earlier one is not run again: the model reads `repeat_note` instead."""

    def refusal(self, call: Call, earlier: Sequence[Call]) -> str | None:
        first = next((c for c in earlier if _key(c.name, c.arguments) == _key(call.name, call.arguments)), None)
        return repeat_note(call.name, first.turn) if first else None


@dataclass(frozen=True)
class StopAt(Policy):
    """The first successful result of one of `tools` is the answer, as the OpenAI Agents SDK's `stopAtToolNames`
    and LangChain's `return_direct` do: for a tool that writes the user's reply (a skill's script), so that the
    model does not paraphrase it. A result starting with "Error" does not stop the run."""

    tools: Collection[str]

    def answer(self, name: str, result: Any) -> str | None:
        failed = isinstance(result, str) and result.startswith("Error")
        return str(result) if name in self.tools and not failed else None


@dataclass(frozen=True)
class Fixed(Policy):
    """The same tool_config every turn (e.g. mode ANY: a call, never text)."""

    config: types.ToolConfig

    def tool_config(self, declarations: Sequence[types.FunctionDeclaration],
                    history: Sequence[types.Content]) -> types.ToolConfig | None:
        return self.config

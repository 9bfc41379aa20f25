"""Which functions the model may call in each turn: a harness policy, sent as Gemini's own `tool_config`.

A small model told in words "load the skill first" or "do not call it again" often does not. A harness can
say it in the request instead: `FunctionCallingConfig(mode=…, allowed_function_names=[…])`, computed from
the conversation so far before every model call. Gemini applies it, and the local backend applies the same
contract by constrained decoding, so the very same requests go to both. `run_agent(..., tool_policy=...)`
calls the policy once per turn; a call repeated with the same arguments is refused by the loop itself, as a
tool result (`run_agent(..., refuse_repeats=True)`).

`one_step_at_a_time` is the policy lessons 03 and 04 run:

- before any call, when a selection is declared (`load_skill` with an enum of names): mode VALIDATED (ANY if "none"
  is a name), only the selections allowed;
- later: mode VALIDATED, every function allowed except a selection already made, a function whose latest call
  succeeded (its result is above: act on it) and one whose last two calls failed;
- later, nothing left to call: mode NONE.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google.genai import types

from course_utils.abstain import NONE

Mode = types.FunctionCallingConfigMode
ToolPolicy = Callable[[Sequence[types.FunctionDeclaration], Sequence[types.Content]], types.ToolConfig | None]
"""(the declarations, the conversation so far) -> this turn's tool_config (None: the request's own)."""

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


def one_step_at_a_time(declarations: Sequence[types.FunctionDeclaration],
                       history: Sequence[types.Content]) -> types.ToolConfig | None:
    """This turn's tool_config under the policy of the module docstring's table."""
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

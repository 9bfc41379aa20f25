"""What the local backend's grammar accepts in a later turn of a tool loop: the loop guards.

A small model told in words not to repeat a call often repeats it (lessons 03 and 04), so the grammar
itself narrows what the answer may call once the conversation holds earlier calls: a selection is not
made twice, a call is not repeated with the same arguments, and a function rests for one turn after its
call succeeded or after two failures in a row; and before any call, where a selection is offered, the
answer selects or answers in text. The prompt still shows every declaration (the cached prefix is
reused). A first turn whose only tool is the selection (lessons 06–11) is unchanged. Chosen on lesson
04's development requests (``data/measured/bakery/dev_*.json``).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from course_utils.backend.local.app import Declaration

Json = dict[str, Any]


def _calls_made(contents: list[Any]) -> list[tuple[str, Json]]:
    """(name, args) of every function call in the model turns of a conversation."""
    return [(part["functionCall"].get("name"), part["functionCall"].get("args") or {})
            for content in contents if isinstance(content, dict) and content.get("role") == "model"
            for part in content.get("parts") or [] if isinstance(part, dict) and "functionCall" in part]


def is_selection(declaration: Declaration) -> bool:
    """Whether a function's one argument is a choice among listed values (``load_skill`` and the catalog's names)."""
    properties = declaration.parameters.get("properties") or {}
    return len(properties) == 1 and "enum" in next(iter(properties.values()))


def unmade_choices(declarations: list[Declaration], contents: list[Any]) -> list[Declaration]:
    """The declarations the answer may call: a selection already made in this conversation is not offered again.

    A function whose one argument is a choice among listed values (``load_skill(name)`` with the
    catalog's names) is a selection. Once the conversation holds a call to it, the grammar no longer
    accepts another: small models otherwise go on selecting, one value after another, instead of acting
    on what they selected. The prompt still shows every declaration as sent. Functions with other
    arguments are unchanged.
    """
    made = {name for name, _ in _calls_made(contents)}
    return [d for d in declarations if not (d.name in made and is_selection(d))]


MAX_ARGUMENT_COMBINATIONS = 64
"""Above this many combinations of listed values, a function's repeated calls are left to the tools to refuse."""


_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


def _literal(char: str) -> str:
    return "\\" + char if char in _REGEX_META else char


def none_of(values: Iterable[str]) -> str:
    """A regular expression matching the strings that differ from every given value once stripped.

    Built on the values' trie. A matching string neither starts nor ends with whitespace, so a value
    cannot be given again with a space added. Only regex metacharacters are escaped: the grammar
    engine's regex syntax rejects escaped spaces.
    """
    trie: dict = {}
    for value in values:
        node = trie
        for char in value.strip():
            node = node.setdefault(char, {})
        node[None] = True  # a value ends here

    def branch(node: dict, first: bool, spaced: bool = False) -> str:
        chars = sorted(c for c in node if c is not None)
        other = "".join(_literal(c) for c in chars)
        # it may stop here unless that spells a value, or ends with whitespace
        options = [] if None in node or first or spaced else [""]
        options += [_literal(c) + f"(?:{branch(node[c], False, c.isspace())})" for c in chars]
        options.append(f"[^{other}\\s](?:.*\\S)?")  # any other character, then anything, ending unspaced
        if not first:
            options.append((f"[^{other}]" if other else ".") + ".*\\S")
        return "|".join(options)

    return f"^(?:{branch(trie, True)})$"


def _listed_values(schema: Json) -> list[Any] | None:
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    return list(values) if isinstance(values, list) else None


def unrepeated(declaration: Declaration, made: list[Json]) -> Declaration | None:
    """The declaration with its arguments narrowed so that no call already made can be made again.

    A call's result is already in the conversation: repeating it adds nothing, and small models that
    are told so in words still repeat it (lesson 03). When every argument is required and is either a
    listed value or a free string without a pattern of its own (at most one), the grammar gets one
    alternative per combination of listed values, whose free string excludes the values already called
    with it; a combination whose only call was made is dropped, and a function with nothing left to call
    is dropped (None). Any other shape is returned unchanged (the tools still refuse a repeat in words).
    """
    properties = declaration.parameters.get("properties") or {}
    if not made or set(declaration.parameters.get("required") or []) != set(properties):
        return declaration
    listed = {name: values for name, sub in properties.items() if (values := _listed_values(sub)) is not None}
    free = [name for name in properties if name not in listed]
    if len(free) > 1 or any(properties[name].get("type") != "string" or "pattern" in properties[name]
                            for name in free):
        return declaration  # a string's own pattern is kept whole: one pattern cannot hold it and the exclusion
    combinations: list[dict[str, Any]] = [{}]
    for name, values in listed.items():
        combinations = [{**combo, name: value} for combo in combinations for value in values]
        if len(combinations) > MAX_ARGUMENT_COMBINATIONS:
            return declaration
    alternatives = []
    for combo in combinations:
        called = [args for args in made if all(args.get(name) == value for name, value in combo.items())]
        if called and not free:
            continue
        fixed = {name: {**properties[name], "enum": [value]} for name, value in combo.items()}
        if free:
            name = free[0]
            values = [str(args.get(name)) for args in called]
            fixed[name] = {**properties[name], "pattern": none_of(values)} if values else properties[name]
        alternatives.append({"type": "object", "properties": {name: fixed[name] for name in properties},
                             "required": list(properties), "additionalProperties": False})
    if not alternatives:
        return None
    return replace(declaration, parameters={"anyOf": alternatives})


def _failed(response: Json) -> bool:
    """Whether a function result reports a failure: an ``error`` field, or one string starting "Error"."""
    value = response.get("response")
    if not isinstance(value, dict):
        return False
    texts = list(value.values())
    return "error" in value or (len(texts) == 1 and isinstance(texts[0], str) and texts[0].startswith("Error"))


def _results(contents: list[Any]) -> dict[str, list[bool]]:
    """For each function, whether each of its results in the conversation failed, in order."""
    failed: dict[str, list[bool]] = {}
    for content in contents:
        if isinstance(content, dict) and content.get("role") != "model":
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    response = part["functionResponse"]
                    failed.setdefault(response.get("name"), []).append(_failed(response))
    return failed


def answered_functions(contents: list[Any]) -> set[str]:
    """The functions whose latest result in the conversation is not a failure."""
    return {name for name, failed in _results(contents).items() if not failed[-1]}


FAILURES_IN_A_ROW = 2
"""After this many failed results in a row, a function is not offered in the next turn."""


def failing_functions(contents: list[Any]) -> set[str]:
    """The functions whose latest `FAILURES_IN_A_ROW` results all failed."""
    return {name for name, failed in _results(contents).items()
            if len(failed) >= FAILURES_IN_A_ROW and all(failed[-FAILURES_IN_A_ROW:])}


def selection_first(declarations: list[Declaration], contents: list[Any]) -> list[Declaration]:
    """Before any call in the conversation, only the selections, when there are any: select, or answer in text.

    A harness that offers skills asks the model to load the one that applies before anything else: Claude
    Code's Skill tool says "When a skill is relevant, you must invoke this tool IMMEDIATELY as your first
    action" (its description in version 2.0.73, as collected by the tweakcc project, read 2026-12-02). Told
    so in words (the bakery's preamble since development row 3: read the matching instructions before any
    other tool call), the small model still called another tool first: in lesson 04's fifth test record its
    first call was ``check_calendar`` in 20 of 38 on-demand runs. So the grammar says it: the first answer
    is a selection or a text answer. Declarations without a selection, and later turns, are
    unchanged.
    """
    if _calls_made(contents) or not any(is_selection(d) for d in declarations):
        return declarations
    return [d for d in declarations if is_selection(d)]


NO_CHOICE = "none"
"""A selection value that means "no skill" (``abstain.NONE``): a selection listing it can decline by itself."""


def selection_declines(declarations: list[Declaration], contents: list[Any]) -> bool:
    """Before any call, whether a selection offered lists ``NO_CHOICE``: then the first answer is that selection.

    A first answer may otherwise be text, which is how a selection without such a value declines; with one,
    "no skill" is a value to choose like the others (lesson 06's recommended selector, ``abstain.RECOMMENDED``),
    and text no longer lets the model skip the choice.
    """
    return not _calls_made(contents) and any(
        is_selection(d) and NO_CHOICE in next(iter(d.parameters["properties"].values()))["enum"] for d in declarations)


def callable_now(declarations: list[Declaration], contents: list[Any]) -> list[Declaration]:
    """What the grammar accepts in this turn: a selection or text first (``selection_first``); no selection
    made twice (``unmade_choices``); no function whose latest call succeeded (its answer is above: act on
    it) or whose last two calls failed (say so instead of trying again); no call repeated with the same
    arguments (``unrepeated``)."""
    calls = _calls_made(contents)
    resting = answered_functions(contents) | failing_functions(contents)
    narrowed = (unrepeated(d, [args for name, args in calls if name == d.name])
                for d in unmade_choices(selection_first(declarations, contents), contents) if d.name not in resting)
    return [d for d in narrowed if d is not None]

"""Model selectors that can say "none": the harness techniques a small model needs to decline.

Lesson 06 measures the plain selector, `selection.pick_by_model`: the catalog, the activate tool,
and a decline is a text answer. A small model rarely answers in text once a tool is on offer. Each
function below changes what the harness asks, never the model, and works the same on Gemini:

- `pick_with_none_option`: the model must call the tool, and "none" is one of the names it may give;
- `pick_with_none_option(reason=True)`: the same, with a one-sentence reason written *before* the name
  (the tool's first parameter), so the choice comes after the model has read the lines that decide;
- `pick_with_gate`: a first request asks only "does any skill fit?" (yes/no); a second one picks;
- `pick_with_examples`: the plain selector, with worked declines in the system instruction;
- `pick_by_agreement`: several sampled runs; a skill only when every run names it.

Which one the course recommends is chosen on `data/dev/` (see `RECOMMENDED` and the README).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from google import genai
from google.genai import types

from course_utils.backend.client import GENERATION_MODEL, backend_of
from course_utils.selection.pick import ACTIVATE, Decision, pick_by_model, read_activation
from course_utils.skills.skill import SkillLoader

NONE = "none"
"""The name that means "no skill" when the model must call the tool."""
REASON_CHARS = 200
"""The most characters the reason may take (a grammar bound on the local backend, a schema bound on Gemini)."""

ABSTAIN_INSTRUCTION = """{preamble}

<available-skills>
{catalog}
</available-skills>

Decide whether one of these skills is made for the user's request. Read each skill's "Use when" and
"Not for" sentences. Call {function} with that skill's name only if the request is what the skill is
for. Call it with "{none}" when no skill is made for the request: when a skill's "Not for" sentence
excludes it, when it only shares words with a skill, or when it is about something else entirely."""

GATE_INSTRUCTION = """{preamble}

<available-skills>
{catalog}
</available-skills>

Is one of these skills made for the user's request? Read each skill's "Use when" and "Not for"
sentences. Answer "no" when a skill's "Not for" sentence excludes the request, when it only shares
words with a skill, or when it is about something else entirely. Call answer with "yes" or "no"."""

EXAMPLES = """How to decide, shown on skills that are not in this catalog:
- Skill "flight-status": reports whether a flight is on time. Not for booking or changing flights.
  Request "Is AF1234 to Lisbon delayed?" -> call it with "flight-status".
  Request "Book me on the 9:40 to Madrid tomorrow." -> no skill: booking is what its "Not for" excludes.
- Skill "recipe-scaler": scales a recipe to another number of servings. Not for inventing recipes.
  Request "Turn this 4-person risotto into one for 10." -> call it with "recipe-scaler".
  Request "Invent a vegan dessert with dates." -> no skill: the request only shares words with the skill.
- Request "What is the capital of Peru?" -> no skill: no skill is about general knowledge; answer it yourself."""


def _output_cap(client: genai.Client, extra: int = 0) -> int | None:
    """The backend's decision cap, `extra` tokens longer (Gemini is left uncapped: its thinking counts against it)."""
    return backend_of(client).facts.decision_cap(extra)


def _forced(function: str) -> types.ToolConfig:
    return types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=[function]))


def _usage(response: Any) -> int:
    usage = response.usage_metadata
    return (usage and usage.prompt_token_count) or 0


def _name_choice(loader: SkillLoader, reason: bool) -> types.FunctionDeclaration:
    """activate_skill(name ∈ skills ∪ {"none"}), with a `reason` parameter first if asked."""
    properties = {}
    if reason:
        properties["reason"] = types.Schema(
            type=types.Type.STRING, max_length=REASON_CHARS,
            description="One sentence: the 'Use when' or 'Not for' line that decides, and why.")
    properties["name"] = types.Schema(
        type=types.Type.STRING, enum=[*loader.names, NONE],
        description=f'The skill\'s name, or "{NONE}" when no skill is made for the request.')
    return types.FunctionDeclaration(
        name=ACTIVATE, description="Activate the skill made for the request, or none.",
        parameters=types.Schema(type=types.Type.OBJECT, properties=properties, required=list(properties),
                                property_ordering=list(properties)))


def _read_named(response: Any, loader: SkillLoader) -> tuple[str | None, str | None]:
    """(skill, error) of a forced call whose `name` may be "none"."""
    calls = [c for c in response.function_calls or [] if c.name == ACTIVATE]
    if not calls:
        return None, "the model was required to call activate_skill and did not"
    name = (calls[0].args or {}).get("name")
    if name == NONE:
        return None, None
    if name in loader.skills:
        return name, None
    return None, f"activate_skill was called with a name outside the catalog: {name!r}"


def pick_with_none_option(client: genai.Client, loader: SkillLoader, query: str, reason: bool = False,
                          model: str = GENERATION_MODEL, temperature: float | None = None) -> Decision:
    """The model must call activate_skill; "none" is one of the names. With `reason`, it writes why first."""
    config = types.GenerateContentConfig(
        system_instruction=ABSTAIN_INSTRUCTION.format(preamble="You are a helpful assistant.", catalog=loader.catalog(),
                                                      function=ACTIVATE, none=NONE),
        tools=[types.Tool(function_declarations=[_name_choice(loader, reason)])], tool_config=_forced(ACTIVATE),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        max_output_tokens=_output_cap(client, REASON_CHARS // 2 if reason else 0),
        temperature=temperature)
    start = time.perf_counter()
    response = client.models.generate_content(model=model, contents=query, config=config)
    skill, error = _read_named(response, loader)
    return Decision(skill, _usage(response), time.perf_counter() - start, error=error, raw=response)


def pick_with_gate(client: genai.Client, loader: SkillLoader, query: str, model: str = GENERATION_MODEL,
                   temperature: float | None = None) -> Decision:
    """Two requests: "does any skill fit?" (a forced yes/no), then, on yes, a forced choice among the skills."""
    answer = types.FunctionDeclaration(
        name="answer", description="Say whether one of the skills is made for the request.",
        parameters=types.Schema(type=types.Type.OBJECT, required=["fits"], properties={
            "fits": types.Schema(type=types.Type.STRING, enum=["yes", "no"])}))
    gate = types.GenerateContentConfig(
        system_instruction=GATE_INSTRUCTION.format(preamble="You are a helpful assistant.", catalog=loader.catalog()),
        tools=[types.Tool(function_declarations=[answer])], tool_config=_forced("answer"),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        max_output_tokens=_output_cap(client), temperature=temperature)
    start = time.perf_counter()
    response = client.models.generate_content(model=model, contents=query, config=gate)
    tokens = _usage(response)
    calls = [c for c in response.function_calls or [] if c.name == "answer"]
    fits = (calls[0].args or {}).get("fits") if calls else None
    if fits != "yes":
        error = None if fits == "no" else "the model was required to answer yes or no and did not"
        return Decision(None, tokens, time.perf_counter() - start, error=error, raw=response)
    choose = types.GenerateContentConfig(
        system_instruction=loader.system_instruction(function=ACTIVATE), tools=[loader.tool(ACTIVATE)],
        tool_config=_forced(ACTIVATE), automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        max_output_tokens=_output_cap(client), temperature=temperature)
    response = client.models.generate_content(model=model, contents=query, config=choose)
    skill, error = read_activation(response, loader)
    return Decision(skill, tokens + _usage(response), time.perf_counter() - start, error=error, raw=response)


def pick_with_examples(client: genai.Client, loader: SkillLoader, query: str, model: str = GENERATION_MODEL,
                       temperature: float | None = None) -> Decision:
    """The plain selector (`pick_by_model`) with worked declines, from another domain, in the system instruction."""
    return pick_by_model(client, loader, query, model=model, temperature=temperature,
                         preamble=f"You are a helpful assistant.\n\n{EXAMPLES}")


def pick_by_agreement(client: genai.Client, loader: SkillLoader, query: str, runs: int = 3,
                      temperature: float = 0.7, model: str = GENERATION_MODEL) -> Decision:
    """`runs` sampled decisions of the plain selector; a skill only when every run names it, else none."""
    decisions = [pick_by_model(client, loader, query, model=model, temperature=temperature) for _ in range(runs)]
    errors = [d.error for d in decisions if d.error]
    names = {d.skill for d in decisions}
    skill = names.pop() if len(names) == 1 and not errors else None
    return Decision(skill, sum(d.prompt_tokens for d in decisions), sum(d.seconds for d in decisions),
                    error=errors[0] if len(errors) == runs else None)


TECHNIQUES: dict[str, Callable[..., Decision]] = {
    "none-option": pick_with_none_option,
    "reason-then-none": lambda client, loader, query, **kw: pick_with_none_option(client, loader, query, reason=True,
                                                                                  **kw),
    "gate": pick_with_gate,
    "examples": pick_with_examples,
    "agreement-3": pick_by_agreement,
}
"""Every technique by name, each `(client, loader, query) -> Decision`."""

RECOMMENDED = "none-option"
"""The course's recommended small-model selector, `eval-trigger --selectors model-abstain`.

Chosen on the development queries (`data/dev/`, English and French, the workplace catalog, the local model,
greedy) by a rule fixed before the run: the most correct decisions wins among the techniques whose mean
prompt tokens stay within 1.5x the plain selector's (`selection.pick_by_model`); a tie goes to fewer tokens.
none-option wins by that rule without being shown better than the plain selector. The gate is left out: its two
alternating prompts evict the local backend's cached prefix, so each decision recomputes the catalog.
The figures and the records: docs/lab/choices.md and docs/lab/docstring-history.md."""


def recommended(client: genai.Client, loader: SkillLoader, query: str, temperature: float | None = None) -> Decision:
    """The recommended abstaining selector (`RECOMMENDED`), as `eval-trigger --selectors model-abstain` runs it."""
    return TECHNIQUES[RECOMMENDED](client, loader, query, temperature=temperature)

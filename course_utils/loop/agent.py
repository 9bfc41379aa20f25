"""The plain tool loop, with events, and the three ways to hand skills to a model.

Built step by step in `notebooks/03_load_skill_loop.ipynb`; the three modes are compared in
`notebooks/04_three_modes.ipynb`, and trusted roots shown in `notebooks/05_skills_are_code.ipynb`.

The loop knows nothing about skills: it sends the conversation, runs every function call the model
asks for through a dict of Python callables, appends the results, and stops when the model answers
in text. Skills enter only through what the harness puts in the system instruction and the tools:

| mode | system instruction | tools |
|---|---|---|
| `all` | every skill body | the task tools |
| `on-demand` | the catalog | `load_skill` + the task tools |
| `filesystem` | the catalog with each `SKILL.md` path | `read_file` (confined to the skills root) + the task tools |
"""
from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from google.genai import types

from course_utils.selection.abstain import NONE
from course_utils.loop.files import ConfinedReader
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.skill import SkillLoader
from course_utils.skills.text import shorten
from course_utils.loop.tool_policy import Call, Policy, describe

EventKind = Literal["request", "tool_start", "tool_end", "answer"]
PREVIEW_CHARS = 120
DEFAULT_MAX_TURNS = 8


@dataclass(frozen=True)
class Event:
    """One step of a run.

    `request`: a model call came back (`prompt_tokens`, `output_tokens`, `seconds` of that call; `calling`, the
    turn's tool_config in short, e.g. "VALIDATED [load_skill]", when one was sent).
    `tool_start`: the loop is about to run `tool` with `arguments`.
    `tool_end`: the tool returned; `output` is a preview of what the model will read.
    `answer`: the model answered in text; `output` is the whole answer.
    """

    kind: EventKind
    turn: int
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    output: str | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    calling: str | None = None
    seconds: float | None = field(default=None, compare=False)  # timing noise: not part of equality


@dataclass
class AgentResult:
    """What a run produced: the answer, every event, the full history, the prompt tokens per turn."""

    answer: str
    events: list[Event]
    history: list[types.Content]
    prompt_tokens: list[int | None]

    @property
    def turns(self) -> int:
        """How many model calls the run made."""
        return len(self.prompt_tokens)

    @property
    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """(tool name, arguments) of every call, in order."""
        return [(e.tool, e.arguments or {}) for e in self.events if e.kind == "tool_start"]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        """The arguments of every call to `tool`."""
        return [args for name, args in self.tool_calls if name == tool]

    @property
    def total_prompt_tokens(self) -> int:
        """Prompt tokens summed over every model call: what the whole run paid for its inputs."""
        return sum(t or 0 for t in self.prompt_tokens)


class MaxTurnsExceeded(RuntimeError):
    """The model was still calling tools after `max_turns` model calls; `.result` holds the partial run."""

    def __init__(self, max_turns: int, result: AgentResult):
        self.max_turns = max_turns
        self.result = result
        last = ", ".join(name for name, _ in result.tool_calls[-3:]) or "none"
        super().__init__(
            f"No text answer after {max_turns} model calls (last tool calls: {last}). The model may be "
            "looping on a tool: read the events in `.result.events`, then raise max_turns, make the tool's "
            "result say what to do next, or tell the model in the system instruction when to stop."
        )


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def run_tool(functions: Mapping[str, Callable[..., Any]], name: str, arguments: Mapping[str, Any]) -> Any:
    """Run one function call; an unknown tool or an exception becomes an error string for the model."""
    function = functions.get(name)
    if function is None:
        return f'Error: unknown tool "{name}". Available tools: {", ".join(functions) or "none"}.'
    try:
        return _jsonable(function(**dict(arguments)))
    except Exception as err:  # the model reads the error and may retry; the loop never crashes on a tool
        return f"Error: {name} failed: {type(err).__name__}: {err}"


@dataclass(frozen=True)
class RunOptions:
    """How each model call of a run is made, and how many it may make.

    `model` None: the backend's generation model. `max_output_tokens`, `temperature` and `seed` go to the model
    as they are (None: its default; the local backend decodes greedily).
    """

    model: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    max_output_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None


def _first(answers: Iterable[Any]) -> Any:
    return next((answer for answer in answers if answer is not None), None)


def run_agent(client: Any, prompt: str | Sequence[types.Content], *, system_instruction: str | None = None,
              declarations: Sequence[types.FunctionDeclaration] = (),
              functions: Mapping[str, Callable[..., Any]] | None = None, policies: Sequence[Policy] = (),
              options: RunOptions = RunOptions(), callbacks: Iterable[Callable[[Event], None]] = ()) -> AgentResult:
    """Call the model, run the tools it asks for, repeat until it answers in text.

    `prompt` is the user's message (or a whole history of Contents to continue). `functions` maps
    each declared tool name to the Python callable that runs it; a call's `args` become keyword
    arguments and its return value goes back as `{"result": value}`. Every step is sent to each
    callback as an `Event`. Raises `MaxTurnsExceeded` (holding the partial result) when the model
    has made `options.max_turns` calls without answering in text.

    `policies` (`course_utils.loop.tool_policy`) are asked, in order, for each turn's tool_config, for a result
    that refuses a call instead of running it, and for an answer that ends the run after a result.
    """
    model = options.model
    if model is None:
        from course_utils.backend.client import GENERATION_MODEL as model  # noqa: N811 - the default model
    functions = dict(functions or {})
    callbacks = list(callbacks)
    history = [types.Content(role="user", parts=[types.Part.from_text(text=prompt)])] if isinstance(prompt, str) \
        else list(prompt)
    config = _loop_config(system_instruction, declarations, options)
    events: list[Event] = []
    prompt_tokens: list[int | None] = []
    earlier = [Call(0, part.function_call.name or "", dict(part.function_call.args or {}))
               for content in history if content.role == "model" for part in content.parts or [] if part.function_call]

    def emit(event: Event) -> None:
        events.append(event)
        for callback in callbacks:
            callback(event)

    for turn in range(1, options.max_turns + 1):
        turn_config = config.model_copy(update={
            "tool_config": _first(p.tool_config(declarations, history) for p in policies)})
        start = time.perf_counter()
        response = client.models.generate_content(model=model, contents=history, config=turn_config)
        usage = response.usage_metadata
        prompt_tokens.append(usage.prompt_token_count if usage else None)
        emit(Event("request", turn, prompt_tokens=prompt_tokens[-1], seconds=time.perf_counter() - start,
                   output_tokens=usage.candidates_token_count if usage else None,
                   calling=describe(turn_config.tool_config)))
        content = response.candidates[0].content if response.candidates else None
        calls = response.function_calls or []
        if content is not None and content.parts:
            history.append(content)
        if not calls:
            answer = response.text or ""
            emit(Event("answer", turn, output=answer))
            return AgentResult(answer, events, history, prompt_tokens)
        parts = [_run_call(function_call, turn, functions, policies, earlier, emit) for function_call in calls]
        history.append(types.Content(role="user", parts=parts))
        direct = _first(p.answer(part.function_response.name, part.function_response.response["result"])
                        for part in parts for p in policies)
        if direct is not None:
            emit(Event("answer", turn, output=direct))
            return AgentResult(direct, events, history, prompt_tokens)
    raise MaxTurnsExceeded(options.max_turns, AgentResult("", events, history, prompt_tokens))


def _loop_config(system_instruction: str | None, declarations: Sequence[types.FunctionDeclaration],
                 options: RunOptions) -> types.GenerateContentConfig:
    """The request every turn of the loop sends, before its policies' tool_config."""
    return types.GenerateContentConfig(
        system_instruction=system_instruction,
        tools=[types.Tool(function_declarations=list(declarations))] if declarations else None,
        max_output_tokens=options.max_output_tokens,
        temperature=options.temperature,
        seed=options.seed,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def _run_call(function_call: types.FunctionCall, turn: int, functions: Mapping[str, Callable[..., Any]],
              policies: Sequence[Policy], earlier: list[Call], emit: Callable[[Event], None]) -> types.Part:
    """Run one tool call, or its policies' refusal instead, and give its result as a function response part."""
    call = Call(turn, function_call.name or "", dict(function_call.args or {}))
    emit(Event("tool_start", turn, tool=call.name, arguments=call.arguments))
    refusal = _first(p.refusal(call, earlier) for p in policies)
    output = refusal if refusal is not None else run_tool(functions, call.name, call.arguments)
    earlier.append(call)
    emit(Event("tool_end", turn, tool=call.name, arguments=call.arguments, output=shorten(output, PREVIEW_CHARS)))
    return types.Part(function_response=types.FunctionResponse(id=function_call.id, name=call.name,
                                                               response={"result": output}))


def format_event(event: Event) -> str:
    """One line of a readable trace."""
    head = f"turn {event.turn}"
    if event.kind == "request":
        tokens = f"{event.prompt_tokens:,}" if event.prompt_tokens is not None else "?"
        took = f", {event.seconds:.1f} s" if event.seconds is not None else ""
        calling = f" ({event.calling})" if event.calling else ""
        return f"{head}  model call{calling}: {tokens} prompt tokens{took}"
    if event.kind == "tool_start":
        arguments = ", ".join(f"{k}={v!r}" for k, v in (event.arguments or {}).items())
        return f"{head}    → {event.tool}({arguments})"
    if event.kind == "tool_end":
        return f"{head}    ← {event.output}"
    return f"{head}  answer: {event.output}"


def print_event(event: Event) -> None:
    """A callback that prints each event as it happens."""
    print(format_event(event), flush=True)


# --- Recording a run, and replaying it --------------------------------------------------------

@dataclass
class Exchange:
    """One model call: the contents sent (a copy) and the response that came back."""

    contents: list[types.Content]
    response: types.GenerateContentResponse


class RecordingClient:
    """Wraps a client; every `models.generate_content` call is kept in `.exchanges`."""

    def __init__(self, client: Any):
        self.client = client
        self.exchanges: list[Exchange] = []
        self.models = self

    def generate_content(self, *, model: str, contents: Any, config: Any = None) -> types.GenerateContentResponse:
        response = self.client.models.generate_content(model=model, contents=contents, config=config)
        self.exchanges.append(Exchange([c.model_copy(deep=True) for c in contents], response))
        return response


class ReplayClient:
    """Serves recorded responses in order, and checks each request's contents match the recording.

    Replaying one loop's recording to another loop shows, without a model, that both send the same
    requests and run the same tools. Raises ReplayMismatch at the first request that differs.
    """

    def __init__(self, exchanges: Sequence[Exchange]):
        self.exchanges = list(exchanges)
        self.calls = 0
        self.models = self

    def generate_content(self, *, model: str, contents: Any, config: Any = None) -> types.GenerateContentResponse:
        if self.calls >= len(self.exchanges):
            raise ReplayMismatch(f"request {self.calls + 1}: the recording has only {len(self.exchanges)} responses")
        expected = self.exchanges[self.calls]
        self.calls += 1
        if list(contents) != expected.contents:
            raise ReplayMismatch(f"request {self.calls}: the contents differ from the recorded request")
        return expected.response


class ReplayMismatch(AssertionError):
    """A replayed loop sent a request the recorded loop did not."""


# --- The three ways to hand skills to the model -------------------------------------------------

MODES = ("all", "on-demand", "filesystem")

ALL_TEMPLATE = """{preamble}

<skills>
These are the instructions for the kinds of work you do. Follow the one that matches the user's request.
{bodies}
</skills>"""

FILESYSTEM_TEMPLATE = """{preamble}

<available-skills>
When the user's request matches one of these skills, call {function} with its file path before you answer,
then follow the instructions in the file. If no skill matches, do not call {function}: answer directly.
{catalog}
</available-skills>"""


@dataclass
class Harness:
    """What one mode hands to the model: a system instruction, declarations and the callables behind them."""

    mode: str
    system_instruction: str
    declarations: list[types.FunctionDeclaration]
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def run(self, client: Any, prompt: str | Sequence[types.Content], *, policies: Sequence[Policy] = (),
            options: RunOptions = RunOptions(), callbacks: Iterable[Callable[[Event], None]] = ()) -> AgentResult:
        """`run_agent` with this harness's instruction and tools."""
        return run_agent(client, prompt, system_instruction=self.system_instruction, declarations=self.declarations,
                         functions=self.functions, policies=policies, options=options, callbacks=callbacks)


ACTIVATION_NOTE = ('The skill "{name}" is now active; its instructions follow. Do not call {function} again. '
                   "Apply them to the user's request now: make the tool calls they ask for, one at a time, "
                   "then answer the user in words.")
"""What `activating_loader` puts before a loaded body: the skill's state and the next step, for the model."""


NONE_NOTE = ("No skill is loaded: none is made for this request. "
             "Answer the user now, in words, without calling any tool.")
"""What the load tool returns for the name `NONE`, when the harness offers it
(`build_harness(..., none_choice=True)`)."""


def activating_loader(loader: SkillLoader, function: str = "load_skill", *,
                      none_choice: bool = False) -> Callable[[str], str]:
    """`loader.load_skill`, with a result that says the skill is now active and what to do next.

    A small model that reads only a body often calls the load tool again, or comments on the body instead
    of acting on it; harnesses built for such models make every tool result say what state changed and
    what comes next. Errors (an unknown name) come back unchanged. With `none_choice`, the name `NONE`
    loads nothing and returns `NONE_NOTE`.
    """
    def load_skill(name: str) -> str:
        if none_choice and name == NONE:
            return NONE_NOTE
        body = loader.load_skill(name)
        return (body if body.startswith("Error:")
                else f"{ACTIVATION_NOTE.format(name=name, function=function)}\n\n{body}")

    load_skill.__doc__ = loader.load_skill.__doc__
    return load_skill


def wrap_body(loader: SkillLoader, name: str) -> str:
    """A skill's body as the `all` mode shows it: the same `<skill …>` wrapper `load_skill` returns."""
    return loader.load_skill(name)


def _shown_path(path: Path, base: Path) -> str:
    real = path.resolve()
    return str(real.relative_to(base)) if real.is_relative_to(base) else str(real)


def build_harness(
    mode: str,
    loader: SkillLoader,
    preamble: str = "You are a helpful assistant.",
    declarations: Sequence[types.FunctionDeclaration] = (),
    functions: Mapping[str, Callable[..., Any]] | None = None,
    *,
    base: str | Path | None = None,
    none_choice: bool = False,
) -> Harness:
    """The system instruction and tools of one mode ("all", "on-demand" or "filesystem").

    `declarations` and `functions` are the task tools (e.g. `check_calendar`), added in every mode.
    With `none_choice`, the on-demand load tool also takes the name `NONE` ("no skill"), as lesson 06's
    recommended selector does, and the instruction asks for it when no skill matches.
    In the filesystem mode the catalog shows each path relative to `base` (default: the parent of the
    skills root's parent, i.e. the repository for `skills/<catalog>/`), and `read_file` reads only
    inside the folder that holds the skills.
    """
    task_declarations, task_functions = list(declarations), dict(functions or {})
    if mode == "all":
        bodies = "\n\n".join(wrap_body(loader, name) for name in loader.names)
        return Harness(mode, ALL_TEMPLATE.format(preamble=preamble, bodies=bodies), task_declarations, task_functions)
    if mode == "on-demand":
        none = NONE if none_choice else None
        return Harness(mode, loader.system_instruction(preamble, none=none),
                       [loader.function_declaration(none=none), *task_declarations],
                       {"load_skill": activating_loader(loader, none_choice=none_choice), **task_functions})
    if mode == "filesystem":
        skills = list(loader.skills.values())
        if not skills:
            raise ValueError("the filesystem mode needs at least one skill")
        root = skills[0].path.parent.parent
        base = Path(base) if base is not None else root.parent.parent
        reader = ConfinedReader(root, base)
        lines = "\n".join(f"- {s.name}: {s.description} (file: {_shown_path(s.path, reader.base)})" for s in skills)
        system = FILESYSTEM_TEMPLATE.format(preamble=preamble, function="read_file", catalog=lines)
        return Harness(mode, system, [reader.declaration(), *task_declarations],
                       {"read_file": reader, **task_functions})
    raise ValueError(f'unknown mode "{mode}": choose one of {", ".join(MODES)}')


# --- Skills are code: load them only from folders you trust --------------------------------------

TRUSTED_ROOTS: tuple[Path, ...] = (SKILLS_DIR,)
"""The folders this course trusts skills from: the ones checked into the repository."""


class UntrustedSkillRoot(PermissionError):
    """A skills folder outside every trusted root, loaded without `allow_untrusted=True`."""


def load_trusted_skills(root: str | Path, trusted: Iterable[str | Path] = TRUSTED_ROOTS, *,
                        allow_untrusted: bool = False) -> SkillLoader:
    """`SkillLoader.from_root(root)`, but only when `root` (symlinks resolved) lies inside a trusted root.

    A skill body is instructions the model will follow, so whoever can write a `SKILL.md` steers the
    agent. Outside the trusted roots this raises `UntrustedSkillRoot`, saying how to opt in:
    `allow_untrusted=True` (on the command line, `--allow-untrusted-skills`) loads the folder anyway,
    with a warning naming it.
    """
    real = Path(root).resolve()
    roots = [Path(t).resolve() for t in trusted]
    if not any(real.is_relative_to(t) for t in roots):
        shown = ", ".join(str(t) for t in roots) or "none"
        if not allow_untrusted:
            raise UntrustedSkillRoot(
                f"{root} is not inside a trusted skills root ({shown}). A skill's body is instructions the model "
                "follows: review the skills, then copy them into a trusted root, or opt in with "
                "load_trusted_skills(root, allow_untrusted=True) (command line: --allow-untrusted-skills)")
        warnings.warn(f"loading skills from {real}, outside the trusted roots ({shown}): allow_untrusted=True",
                      stacklevel=2)
    return SkillLoader.from_root(real)

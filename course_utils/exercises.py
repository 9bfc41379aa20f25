"""Checkers for the lessons' exercises: run the learner's function, explain in plain words what is wrong.

Used in `notebooks/07_hybrid_exercise.ipynb`. A checker never raises: whatever the learner's code
does (not written yet, crashes, returns the wrong thing, sends the model too much), it prints what
happened and what to change, and returns a `CheckResult` the notebook (and the tests) can read.
"""
from __future__ import annotations

import inspect
import re
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from course_utils.selection import ACTIVATE, Decision
from course_utils.skills import SkillLoader

CHECK_QUERIES = (
    "How many vacation days do I have left this year?",
    "Book 3 days of leave for me in the HR tool.",
)
"""Two queries the hybrid check runs: one that must trigger a skill, one that must not."""

_CATALOG_LINE = re.compile(r"^- ([a-z0-9]+(?:-[a-z0-9]+)*):", re.MULTILINE)


@dataclass
class CheckResult:
    """The outcome of a check: `passed`, the plain-words `messages`, and a short `problem` code.

    `problem` is one of: None (passed), "not implemented", "crash", "return type", "no model call",
    "too many skills", "outside the top k", "no prompt tokens", "checker".
    """

    passed: bool
    messages: list[str] = field(default_factory=list)
    problem: str | None = None

    def __str__(self) -> str:
        return "\n".join(self.messages)


# ----------------------------------------------------------------- watching what reaches the model


@dataclass
class ModelCall:
    """What one `generate_content` request showed the model: the skills it could pick."""

    declared: list[str]
    """The names the activate tool's `name` parameter allowed (its enum)."""
    catalog: list[str]
    """The skills listed in the system instruction's catalog lines (`- name: description`)."""

    @property
    def skills(self) -> list[str]:
        return list(dict.fromkeys(self.declared + self.catalog))


class RecordingModels:
    """Stands in for `client.models`: records each generation request, then forwards it."""

    def __init__(self, models: Any):
        self._models = models
        self.calls: list[ModelCall] = []

    def generate_content(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(inspect_request(kwargs.get("config")))
        return self._models.generate_content(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._models, name)


class RecordingClient:
    """A client proxy whose `.models` records generation requests; everything else is the real client's."""

    def __init__(self, client: Any):
        self._client = client
        self.models = RecordingModels(client.models)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _plain(value: Any) -> Any:
    """A pydantic object (or a dict of them) as plain JSON-like data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _enums(data: Any) -> list[str]:
    """Every value of every `enum` list found anywhere in `data`."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "enum" and isinstance(value, list):
                found += [str(v) for v in value]
            else:
                found += _enums(value)
    elif isinstance(data, list):
        for value in data:
            found += _enums(value)
    return found


def _text(instruction: Any) -> str:
    """The text of a system instruction given as a string, a Content, a Part or a list of them."""
    data = _plain(instruction)
    if isinstance(data, str):
        return data
    if isinstance(data, list):
        return "\n".join(_text(x) for x in data)
    if isinstance(data, dict):
        if "text" in data:
            return str(data["text"])
        return "\n".join(_text(p) for p in data.get("parts", []))
    return ""


def inspect_request(config: Any) -> ModelCall:
    """The skills a `generate_content` config offers: the activate tool's enum, and the catalog lines."""
    data = _plain(config) or {}
    if not isinstance(data, dict):
        return ModelCall([], [])
    declared: list[str] = []
    for tool in data.get("tools") or []:
        declarations = tool.get("function_declarations") or [] if isinstance(tool, dict) else []
        for declaration in declarations:
            if isinstance(declaration, dict) and declaration.get("name") == ACTIVATE:
                declared += _enums(declaration.get("parameters")) + _enums(declaration.get("parameters_json_schema"))
    catalog = _CATALOG_LINE.findall(_text(data.get("system_instruction")))
    return ModelCall(list(dict.fromkeys(declared)), list(dict.fromkeys(catalog)))


# ----------------------------------------------------------------- explaining a crash


def _where(err: BaseException, function: Callable) -> list[str]:
    """The line of the learner's code that raised, and where it finally broke if that was elsewhere."""
    frames = traceback.extract_tb(err.__traceback__)
    code = getattr(function, "__code__", None)
    own = [f for f in frames if code is not None and f.filename == code.co_filename]
    lines = [f"Your line: {own[-1].line} ({own[-1].name}, line {own[-1].lineno})"] if own else []
    if frames and (not own or frames[-1] is not own[-1]):
        last = frames[-1]
        lines.append(f"It finally broke in {last.name} ({_short(last.filename)}, line {last.lineno}): {last.line}")
    return lines


def _short(filename: str) -> str:
    return "/".join(filename.replace("\\", "/").split("/")[-2:])


# ----------------------------------------------------------------- the hybrid check


def check_hybrid(function: Callable, client: Any, loader: SkillLoader, selector: Any,
                 queries: Sequence[str] = CHECK_QUERIES, k: int = 3, verbose: bool = True) -> CheckResult:
    """Check a learner's `pick_hybrid(client, loader, selector, query, k)`; print and return the verdict.

    Each query is asked once, each with its own k (`k`, then one less, so that a function which
    ignores its `k` argument is caught). The real client is wrapped: every `generate_content`
    request is recorded, and the skills it offered the model (the activate tool's enum and the
    catalog lines) must be exactly the top k by similarity. The answer must be a `Decision` whose
    skill is None or one of those k, with the model's prompt tokens. Never raises.
    """
    try:
        result = _check_hybrid(function, client, loader, selector, queries, k)
    except Exception as err:  # a bug in the checker must not look like the learner's
        result = CheckResult(False, [f"The checker itself failed ({type(err).__name__}: {err}). "
                                     "This is not your fault: please report it."], "checker")
    if verbose:
        print(result)
    return result


def _fail(problem: str, *messages: str) -> CheckResult:
    return CheckResult(False, ["Not yet. " + messages[0][:1].upper() + messages[0][1:], *messages[1:]], problem)


def _check_hybrid(function: Callable, client: Any, loader: SkillLoader, selector: Any,
                  queries: Sequence[str], k: int) -> CheckResult:
    if not callable(function):
        return _fail("return type", f"pick_hybrid should be a function; it is a {type(function).__name__}.")
    size = len(loader.skills)
    ks = [max(1, min(size - 1, k - i)) if size > 1 else 1 for i in range(len(queries))]
    checked = []
    for query, kk in zip(queries, ks):
        try:
            top = [name for name, _ in selector.top(selector.scores([query])[0], kk)]
        except Exception as err:  # the selector itself is broken: not the learner's function
            return CheckResult(False, [f"The checker could not rank the skills for {query!r}: "
                                       f"{type(err).__name__}: {err}. Rebuild `selector` and run this cell again."],
                               "checker")
        proxy = RecordingClient(client)
        try:
            decision = function(proxy, loader, selector, query, k=kk)
        except (Exception, SystemExit) as err:
            if isinstance(err, NotImplementedError):
                return _not_implemented()
            return _fail("crash", f"your function crashed on the query {query!r} (k={kk}).",
                         f"{type(err).__name__}: {err}",
                         *_where(err, function))
        if decision is NotImplemented:
            return _not_implemented()
        calls = proxy.models.calls
        where = f"On the query {query!r} with k={kk}"
        if not calls:
            return _fail(
                "no model call",
                f"{where}, your function never asked the model.",
                "The hybrid lets similarity shortlist and the MODEL decide: call pick_by_model(client, …) on the "
                "shortlist, with the `client` your function receives (not another one from the notebook).")
        for n, call in enumerate(calls, 1):
            sent = call.skills
            which = f"request {n} of {len(calls)}" if len(calls) > 1 else "the request"
            if len(sent) == size and size > kk:
                return _fail(
                    "too many skills",
                    f"{where}, {which} sent the model the full catalog ({size} skills), not the top {kk}.",
                    f"The top {kk} by similarity were: {', '.join(top)}.",
                    "Build a smaller catalog with loader.subset(names) and give that one to pick_by_model.")
            if set(sent) != set(top):
                extra = [s for s in sent if s not in top]
                missing = [s for s in top if s not in sent]
                detail = []
                if extra:
                    detail.append(f"it offered {len(extra)} skill(s) outside the top {kk}: {', '.join(extra)}")
                if missing:
                    detail.append(f"it left out {', '.join(missing)}")
                hint = f" Use the k your function receives (here {kk}), not a fixed number." if len(sent) != kk else ""
                return _fail(
                    "too many skills" if len(sent) > kk else "outside the top k",
                    f"{where}, {which} offered the model {len(sent)} skill(s): {', '.join(sent) or 'none'}.",
                    f"Expected exactly the top {kk} by similarity: {', '.join(top)} ({'; '.join(detail)}).{hint}")
        if not isinstance(decision, Decision) and not (hasattr(decision, "skill") and hasattr(decision, "prompt_tokens")):
            shown = repr(decision)
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            return _fail(
                "return type",
                f"{where}, your function returned a {type(decision).__name__}: {shown}.",
                "Expected a Decision (course_utils.selection.Decision) with .skill: return what pick_by_model "
                "gives you." + (" Did you forget `return`?" if decision is None else ""))
        if decision.skill is not None and decision.skill not in top:
            return _fail(
                "outside the top k",
                f"{where}, your function returned {decision.skill!r}, which is not in the top {kk}.",
                f"The top {kk} by similarity were: {', '.join(top)}. The model only chooses among the shortlist, "
                "so the answer must be one of them, or None.")
        if not decision.prompt_tokens:
            return _fail(
                "no prompt tokens",
                f"{where}, the Decision says the model read 0 prompt tokens.",
                "Keep the prompt tokens pick_by_model measured: the measurement below compares costs with them.")
        checked.append(f"  {query!r}, k={kk}: the model saw {', '.join(top)} and chose {decision.skill} "
                       f"({decision.prompt_tokens:,} prompt tokens)")
    return CheckResult(True, [f"Passed: on {len(checked)} queries your function sent the model only the top k "
                              "skills by similarity, and returned one of them or None.", *checked])


def _not_implemented() -> CheckResult:
    return _fail("not implemented",
                 "your pick_hybrid is not implemented yet.",
                 "Replace the `# YOUR CODE HERE` part of the cell above with your code, run that cell, "
                 "then run this one again.")

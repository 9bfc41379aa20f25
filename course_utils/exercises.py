"""The lesson 09 exercise: its hints, and a checker that judges what the learner's `pick_hybrid` does.

`check_hybrid(fn, client, loader, selector)` runs the function first on a scripted stand-in backend
(`course_utils.scripted`: a real genai.Client whose "model" calls a skill or declines as the checker
decides, with its own catalog and cosine scores), then on the real backend the notebook uses. It
judges behaviour, not shape: which skills reached the model, how many requests one decision made,
whether the returned skill is the model's answer, whether the tokens are the ones the backend
counted and the seconds include the embedding. Any tool name, catalog format or request code that
behaves right passes. The checker never raises: each mistake gets one plain sentence.
"""
from __future__ import annotations

import dis
import json
import re
import time
import traceback
import types as pytypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from google import genai

from course_utils.backend.client import backend_of
from course_utils.scripted import Exchange, ScriptedBackend
from course_utils.selection import SimilaritySelector
from course_utils.skills import Skill, SkillLoader
from course_utils.text import shorten

# ----------------------------------------------------------------- the stand-in's world

_LIBRARY = {
    "book-renewal": "Renews books a member has on loan and says the new due date. Use when someone wants to keep a borrowed book longer.",
    "room-booking": "Books the library's study rooms for a date and time. Use when someone wants a room to work or meet in.",
    "fine-payment": "Explains and settles overdue fines on a member's account. Use when someone asks what they owe or wants to pay it.",
    "event-calendar": "Lists the library's talks, workshops and readings. Use when someone asks what is on, and when.",
    "interlibrary-loan": "Requests a book the library does not hold from a partner library. Use when a title is not in the catalogue.",
    "printing-credits": "Tops up and explains printing and copying credits. Use when someone needs to print or scan.",
    "catalog-search": "Finds books and media in the library's catalogue by title, author or subject. Use when someone looks for a title.",
    "membership-card": "Issues, renews and replaces library cards. Use when a card is new, expired, lost or damaged.",
}
CHECK_SKILLS = tuple(Skill(name, description, f"# {name}\n", Path("checker") / name / "SKILL.md")
                     for name, description in _LIBRARY.items())
"""The stand-in's catalog: a city library's skills, none of them in the course's catalogs."""


@dataclass(frozen=True)
class ScriptedCase:
    """One scripted decision: the query, its k, each skill's cosine, and what the model will do."""

    query: str
    k: int
    scores: tuple[float, ...]
    """Cosine with each skill of `CHECK_SKILLS`, in catalog order."""
    model_picks: int | None
    """The rank (1 = nearest) in the top k of the skill the model calls; None: it declines."""

    @staticmethod
    def names() -> list[str]:
        return [s.name for s in CHECK_SKILLS]

    def top(self) -> list[str]:
        """The k nearest skills, nearest first."""
        return [CHECK_SKILLS[i].name for i in np.argsort(-np.asarray(self.scores), kind="stable")[: self.k]]

    def model_choice(self) -> str | None:
        return None if self.model_picks is None else self.top()[self.model_picks - 1]


CHECK_CASES = (
    ScriptedCase("Can I keep 'Dune' two more weeks?", 3, (0.34, 0.20, 0.24, 0.10, 0.27, 0.06, 0.31, 0.15), 2),
    ScriptedCase("What time is it in Tokyo right now?", 2, (0.20, 0.24, 0.10, 0.34, 0.06, 0.31, 0.15, 0.27), None),
    ScriptedCase("I lost my card and I need to print my CV today.", 4, (0.15, 0.24, 0.27, 0.20, 0.10, 0.31, 0.06, 0.34), 4),
    ScriptedCase("Somewhere quiet for four of us on Saturday morning?", 1, (0.24, 0.34, 0.15, 0.31, 0.06, 0.10, 0.27, 0.20), 1),
)
"""Each k once (so a fixed k is caught), a call to a skill that is not the nearest, and a decline."""

CHECK_QUERIES = (
    ("How many vacation days do I have left this year?", 3),
    ("Book 3 days of leave for me in the HR tool.", 2),
)
"""The real-backend part of the check: one query that must trigger a skill, one that must not, with their k."""


def scripted_world(cases: Sequence[ScriptedCase] = CHECK_CASES) -> tuple[ScriptedBackend, genai.Client, SkillLoader,
                                                                       SimilaritySelector]:
    """The stand-in backend, a client it answers, its catalog and a SimilaritySelector over it (no cache)."""
    choices = {case.query: case.model_choice() for case in cases}
    backend = ScriptedBackend(CHECK_SKILLS, {case.query: case.scores for case in cases},
                              lambda query, offered, functions: choices.get(query) if choices.get(query) in offered else None)
    client = backend.client()
    loader = SkillLoader(CHECK_SKILLS)
    return backend, client, loader, SimilaritySelector(client, loader, cache=False)  # the stand-in's default threshold


# ----------------------------------------------------------------- results and hints


@dataclass
class CheckResult:
    """The outcome of a check: `passed`, the plain-words `messages`, and a short `problem` code (None if passed)."""

    passed: bool
    messages: list[str] = field(default_factory=list)
    problem: str | None = None

    def __str__(self) -> str:
        return "\n".join(self.messages)


HYBRID_HINTS = (
    "The cosine row: `selector.scores([query])` gives one row of cosines per query, one number per skill, in "
    "`selector.names` order. Take the row of your one query.",
    "The k nearest: numpy's `argsort` sorts ascending, so sort the negated row (or reverse the result) and keep "
    "the first k indices; `selector.names[i]` is the skill at index i. `np.argpartition` does the same without "
    "sorting everything. Use the `k` you receive.",
    "The reduced catalog and tool: `loader.subset(names)` is a SkillLoader of those skills only; its "
    "`.system_instruction(function=...)` and `.tool(...)` are the catalog and the activate tool of lesson 06, "
    "for the shortlist. Writing your own catalog text and FunctionDeclaration is fine too.",
    "The model, first turn only: one `client.models.generate_content(model=GENERATION_MODEL, contents=query, "
    "config=GenerateContentConfig(system_instruction=…, tools=[…], automatic_function_calling=…(disable=True)))`. "
    "`response.function_calls` is empty when the model answered in text: that is its way of saying none.",
    "The Decision: `Decision(skill, prompt_tokens, seconds)`. The skill is the model's (the call's `name` "
    "argument, or None); the tokens are `response.usage_metadata.prompt_token_count`, what the backend counted; "
    "the seconds run from before the embedding to after the answer (`time.perf_counter()`).",
)


def hint(n: int) -> None:
    """Print hint `n` (1 to 5) of the hybrid exercise; each one unlocks a single step, not the code."""
    if not 1 <= n <= len(HYBRID_HINTS):
        print(f"There are {len(HYBRID_HINTS)} hints: hint(1) to hint({len(HYBRID_HINTS)}).")
        return
    more = f" (next: hint({n + 1}))" if n < len(HYBRID_HINTS) else " (the last one)"
    print(f"Hint {n} of {len(HYBRID_HINTS)}{more}: {HYBRID_HINTS[n - 1]}")


# ----------------------------------------------------------------- watching the real backend


@dataclass
class ModelCall:
    """One `generate_content` a function made through the recording client."""

    request: str
    """The request (model, contents, config) as JSON text."""
    response: Any
    seconds: float

    def offered(self, names: Sequence[str]) -> list[str]:
        """The skills among `names` that appear anywhere in the request, in `names` order."""
        return [n for n in names if _mentions(n, self.request)]


def _mentions(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _json(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value if isinstance(value, (str, int, float, bool)) or value is None else repr(value)


class RecordingModels:
    """Stands in for `client.models`: records each generation request and its response, then forwards it."""

    def __init__(self, models: Any):
        self._models = models
        self.calls: list[ModelCall] = []

    def generate_content(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        response = self._models.generate_content(*args, **kwargs)
        self.calls.append(ModelCall(json.dumps(_json([args, kwargs]), ensure_ascii=False), response,
                                    time.perf_counter() - start))
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._models, name)


class RecordingClient:
    """A client proxy whose `.models` records generation requests; everything else is the real client's."""

    def __init__(self, client: Any):
        self._client = client
        self.models = RecordingModels(client.models)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def called_skill(response: Any, offered: Sequence[str]) -> str | None:
    """The skill a first turn called: a function call argument naming one of `offered`, else None."""
    for call in getattr(response, "function_calls", None) or []:
        for value in (call.args or {}).values():
            if value in offered:
                return value
    return None


# ----------------------------------------------------------------- what the learner's code touches


def _globals_read(function: Callable) -> list[str]:
    """The global names the function (and functions defined inside it) reads that hold a client, loader or selector."""
    code, namespace = getattr(function, "__code__", None), getattr(function, "__globals__", {})
    names: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        current = stack.pop()
        names |= {i.argval for i in dis.get_instructions(current) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
        stack += [c for c in current.co_consts if isinstance(c, pytypes.CodeType)]
    course_types = (genai.Client, RecordingClient, SkillLoader, SimilaritySelector)
    return sorted(n for n in names if isinstance(namespace.get(n), course_types) or hasattr(namespace.get(n), "course_backend"))


def _snapshot(loader: SkillLoader) -> list[tuple[str, str, str]]:
    return [(n, s.description, s.body) for n, s in loader.skills.items()]


def _where(err: BaseException, function: Callable) -> list[str]:
    """The line of the learner's code that raised, and where it finally broke if that was elsewhere."""
    frames = traceback.extract_tb(err.__traceback__)
    code = getattr(function, "__code__", None)
    own = [f for f in frames if code is not None and f.filename == code.co_filename]
    lines = [f"Your line: {own[-1].line} ({own[-1].name}, line {own[-1].lineno})"] if own else []
    if frames and (not own or frames[-1] is not own[-1]):
        last = frames[-1]
        short = "/".join(last.filename.replace("\\", "/").split("/")[-2:])
        lines.append(f"It finally broke in {last.name} ({short}, line {last.lineno}): {last.line}")
    return lines


class Mistake(Exception):
    """A wrong behaviour found by the check: `problem` code and the plain sentences that explain it."""

    def __init__(self, problem: str, *messages: str):
        super().__init__(messages[0])
        self.problem, self.messages = problem, list(messages)

    def result(self) -> CheckResult:
        first = self.messages[0]
        return CheckResult(False, [f"Not yet. {first[:1].upper()}{first[1:]}", *self.messages[1:]], self.problem)


# ----------------------------------------------------------------- the check


def check_hybrid(function: Callable, client: Any, loader: SkillLoader, selector: Any,
                 verbose: bool = True, real: bool = True) -> CheckResult:
    """Check a learner's `pick_hybrid(client, loader, selector, query, k)`; print and return the verdict.

    First 4 decisions on the scripted stand-in (k from 1 to 4; the model calls a skill that is not
    the nearest, or declines), then, with `real`, 2 on the notebook's `client`, `loader` and
    `selector`. Never raises.
    """
    return _checked(lambda: _check(function, client, loader, selector, real), verbose)


def _check(function: Callable, client: Any, loader: SkillLoader, selector: Any, real: bool) -> list[str]:
    if not callable(function):
        raise Mistake("return type", f"pick_hybrid should be a function; it is a {type(function).__name__}.")
    used = _globals_read(function)
    if used:
        raise Mistake("globals", f"your function reads the notebook's {', '.join(f'`{n}`' for n in used)} instead of "
                      "its arguments: use the client, loader, selector and k it receives (the checker passes its own).")
    lines = _check_scripted(function)
    passed = [f"Passed on the scripted stand-in: {len(CHECK_CASES)} decisions, k = 1 to 4, the model calling a skill "
              "that was not the nearest, and declining.", *lines]
    if real:
        label = backend_of(client).generation_label()
        for query, k in CHECK_QUERIES:
            passed.append(_check_real(function, client, loader, selector, query, k, label))
        passed[0] += f" Passed on {label}: {len(CHECK_QUERIES)} decisions."
    return passed


def _run(function: Callable, client: Any, loader: SkillLoader, selector: Any, query: str, k: int,
         label: str = "pick_hybrid") -> tuple[Any, float]:
    """Call the learner's function `label`; (its result, wall seconds). Mistakes for crashes, stubs, a changed loader."""
    before = _snapshot(loader)
    start = time.perf_counter()
    try:
        decision = function(client, loader, selector, query, k=k)
    except NotImplementedError:
        raise Mistake("not implemented", f"`{label}` is not implemented yet.",
                      "Replace the `# YOUR CODE HERE` part of the cell above with your code, run that cell, then run "
                      "this one again." + (" `hint(1)` gives a first step." if label == "pick_hybrid" else "")) from None
    except (Exception, SystemExit) as err:
        raise Mistake("crash", f"`{label}` crashed on the query {query!r} (k={k}).",
                      f"{type(err).__name__}: {err}", *_where(err, function)) from None
    wall = time.perf_counter() - start
    if decision is NotImplemented:
        raise Mistake("not implemented", f"`{label}` is not implemented yet.",
                      "Replace the `# YOUR CODE HERE` part of the cell above with your code, then run this cell again.")
    if _snapshot(loader) != before:
        raise Mistake("changed the loader", f"on the query {query!r}, your function changed the loader it was given "
                      f"({len(before)} skills before, {len(loader.skills)} after): build a smaller one with "
                      "loader.subset(names) and leave the original as it was.")
    if not all(hasattr(decision, a) for a in ("skill", "prompt_tokens", "seconds")):
        shown = shorten(repr(decision), 80, flat=False)
        raise Mistake("return type", f"on the query {query!r}, your function returned a {type(decision).__name__}: "
                      f"{shown}. Return a Decision(skill, prompt_tokens, seconds)."
                      + (" Did you forget `return`?" if decision is None else ""))
    return decision, wall


def _check_offered(offered: Sequence[str], scores: dict[str, float], k: int, where: str) -> None:
    """Mistakes when the skills offered to the model are not k skills that score at least as high as all the others.

    Ties are honoured: any k of equally scored skills are a right shortlist.
    """
    ranked = sorted(scores, key=lambda n: -scores[n])
    rest = [scores[n] for n in scores if n not in offered]
    if len(offered) == min(k, len(scores)) and (not rest or min(scores[n] for n in offered) >= max(rest)):
        return
    top = ranked[:k]
    if len(offered) == len(scores) and len(scores) > k:
        raise Mistake("whole catalog", f"{where}, the request offered the model the whole catalog ({len(scores)} skills), "
                      f"not the {k} nearest: {', '.join(top)}.")
    if len(offered) != k:
        raise Mistake("wrong k", f"{where}, the request offered {len(offered)} skill(s) ({', '.join(offered) or 'none'}) "
                      f"where k={k}: use the k your function receives.")
    if set(offered) == set(ranked[-k:]):
        raise Mistake("not ranked by score", f"{where}, the request offered the {k} skills FARTHEST from the query "
                      f"({', '.join(offered)}): argsort sorts ascending, so sort the negated scores.")
    raise Mistake("not ranked by score", f"{where}, the request offered {', '.join(offered)}, which are not the {k} "
                  f"skills with the highest cosine: those are {', '.join(top)}.")


def _check_answer(decision: Any, model_choice: str | None, where: str) -> None:
    if decision.skill == model_choice:
        return
    if model_choice is None:
        raise Mistake("overrides the model", f"{where}, the model declined (it answered in text), but your function "
                      f"returned {decision.skill!r}: when the model calls no function, the decision is None. "
                      "Saying none is the reason the model decides in the hybrid.")
    raise Mistake("overrides the model", f"{where}, the model called {model_choice!r}, but your function returned "
                  f"{decision.skill!r}: return the skill the model chose, not one of your own.")


@dataclass
class Observed:
    """One scripted decision as the checker saw it: the case, what the function returned, what reached the model."""

    case: ScriptedCase
    decision: Any
    wall: float
    exchanges: list[Exchange]
    embedded: bool

    @property
    def where(self) -> str:
        return f"On the query {self.case.query!r} with k={self.case.k}"


def _observe(function: Callable, backend: ScriptedBackend, client: genai.Client, loader: SkillLoader,
             selector: SimilaritySelector, case: ScriptedCase) -> Observed:
    seen, embeddings = len(backend.exchanges), backend.embeddings
    decision, wall = _run(function, client, loader, selector, case.query, case.k)
    return Observed(case, decision, wall, backend.generations(seen), backend.embeddings > embeddings)


def _judge_requests(seen: Observed) -> None:
    """One request per decision, holding the query, exactly the k nearest skills, and a tool to call."""
    where, case = seen.where, seen.case
    if not seen.exchanges:
        raise Mistake("no model call", f"{where}, your function never asked the model through the `client` it "
                      "received: the hybrid lets similarity shortlist and the model decide.")
    if len(seen.exchanges) > 1:
        raise Mistake("several model calls", f"{where}, your function asked the model {len(seen.exchanges)} times for "
                      "one decision: read the first turn's answer only, one request per decision.")
    (exchange,) = seen.exchanges
    if exchange.query is None:
        raise Mistake("query not sent", f"{where}, the request to the model did not contain the query.")
    if not exchange.offered:
        unused = "" if seen.embedded else " (and the query was never embedded by the selector it received)"
        raise Mistake("not the arguments", f"{where}, the request named none of the skills of the loader your function "
                      f"received{unused}: build the shortlist from the loader and selector it receives.")
    _check_offered(exchange.offered, dict(zip(case.names(), case.scores)), case.k, where)
    if not exchange.functions:
        raise Mistake("no tool", f"{where}, the request declared no function, so the model could only answer in "
                      "text: declare the activate tool for the shortlist (lesson 06).")


def _judge_cost(seen: Observed, embed_delay: float) -> None:
    """The backend's own token count, and seconds that cover the embedding and the model."""
    (exchange,) = seen.exchanges
    decision, where = seen.decision, seen.where
    if decision.prompt_tokens != exchange.prompt_tokens:
        raise Mistake("tokens not counted", f"{where}, the Decision says {decision.prompt_tokens} prompt tokens, but "
                      f"the backend counted {exchange.prompt_tokens} for that request: report "
                      "response.usage_metadata.prompt_token_count, not an estimate or a sum.")
    model_seconds = exchange.end - exchange.start
    if not (0.9 * (model_seconds + embed_delay) <= decision.seconds <= seen.wall + 0.01):
        raise Mistake("seconds", f"{where}, the Decision says {decision.seconds:.3f} s, but embedding the query took "
                      f"about {embed_delay:.2f} s and the model {model_seconds:.2f} s, {seen.wall:.3f} s in all: "
                      "time the whole decision, from before the embedding to after the answer.")


def _check_scripted(function: Callable) -> list[str]:
    """Every scripted case, judged mistake kind by mistake kind (the most basic mistake is reported first)."""
    backend, client, loader, selector = scripted_world()
    observed = [_observe(function, backend, client, loader, selector, case) for case in CHECK_CASES]
    for seen in observed:
        _judge_requests(seen)
    for seen in observed:
        _check_answer(seen.decision, seen.exchanges[0].called, seen.where)
    for seen in observed:
        _judge_cost(seen, backend.embed_delay)
    lines = []
    for seen in observed:
        exchange = seen.exchanges[0]
        choice = "declined" if exchange.called is None else f"called {exchange.called}"
        lines.append(f"  stand-in, k={seen.case.k}: offered {', '.join(exchange.offered)}; the model {choice}; "
                     f"you returned {seen.decision.skill}")
    return lines


def _check_real(function: Callable, client: Any, loader: SkillLoader, selector: Any, query: str, k: int,
                label: str) -> str:
    where = f"On {label}, query {query!r} with k={k}"
    scores = dict(zip(selector.names, (float(x) for x in selector.scores([query])[0])))
    proxy = RecordingClient(client)
    decision, wall = _run(function, proxy, loader, selector, query, k)
    calls = proxy.models.calls
    if len(calls) != 1:
        raise Mistake("no model call" if not calls else "several model calls",
                      f"{where}, your function made {len(calls)} generate_content requests through the client it "
                      "received; one decision is one request.")
    (call,) = calls
    offered = call.offered(loader.names)
    _check_offered(offered, scores, k, where)
    _check_answer(decision, called_skill(call.response, offered), where)
    usage = call.response.usage_metadata
    counted = (usage and usage.prompt_token_count) or 0
    if decision.prompt_tokens != counted:
        raise Mistake("tokens not counted", f"{where}, the Decision says {decision.prompt_tokens} prompt tokens; the "
                      f"backend counted {counted}.")
    if not 0.9 * call.seconds <= decision.seconds <= wall + 0.01:
        raise Mistake("seconds", f"{where}, the Decision says {decision.seconds:.2f} s; the model alone took "
                      f"{call.seconds:.2f} s and the whole call {wall:.2f} s.")
    return (f"  {label}, k={k}: offered {', '.join(offered)}; you returned {decision.skill} "
            f"({decision.prompt_tokens:,} prompt tokens, {decision.seconds:.1f} s)")


# ----------------------------------------------------------------- stretch tasks, each with its own check

CONFIDENT = ScriptedCase("My library card expired yesterday, can you renew it?", 3,
                         (0.10, 0.06, 0.15, 0.20, 0.24, 0.27, 0.31, 0.62), None)
"""A query whose nearest skill leads the second by 0.31: a margin rule of 0.1 skips the model; the model would decline."""
MENTIONS = (("/book-renewal can I keep it one more week?", "book-renewal"),
            ("Please, @fine-payment: what do I owe?", "fine-payment"),
            ("/no-such-skill hello", None))
"""Explicit activations: a known `/name`, a known `@name`, and an unknown name that must activate nothing."""
DEV_CASES = (
    (ScriptedCase("Renew 'Dune' for me.", 1, (0.34, 0.20, 0.24, 0.10, 0.27, 0.06, 0.31, 0.15), None), "book-renewal"),
    (ScriptedCase("Is there a poetry reading this month?", 1, (0.20, 0.24, 0.10, 0.34, 0.06, 0.31, 0.15, 0.27), None),
     "event-calendar"),
    (ScriptedCase("Do you have the new Le Carré novel?", 1, (0.24, 0.10, 0.15, 0.20, 0.31, 0.06, 0.34, 0.27), None),
     "interlibrary-loan"),
    (ScriptedCase("I need twenty pages printed in colour.", 1, (0.31, 0.24, 0.15, 0.34, 0.10, 0.27, 0.06, 0.20), None),
     "printing-credits"),
    (ScriptedCase("What's the capital of Australia?", 1, (0.27, 0.20, 0.31, 0.06, 0.24, 0.10, 0.15, 0.34), None), None),
)
"""A scripted development set: the expected skill ranks 1st, 1st, 2nd and 3rd; the last query expects none."""


def _stretch_world() -> tuple[ScriptedBackend, genai.Client, SkillLoader, SimilaritySelector]:
    return scripted_world(CHECK_CASES + (CONFIDENT,) + tuple(case for case, _ in DEV_CASES))


def _checked(check: Callable[[], list[str]], verbose: bool) -> CheckResult:
    """Run a stretch check: its lines if it passes, the Mistake's sentences if not; never raises."""
    try:
        result = CheckResult(True, check())
    except Mistake as mistake:
        result = mistake.result()
    except Exception as err:
        result = CheckResult(False, [f"The checker itself failed ({type(err).__name__}: {err}). "
                                     "This is not your fault: please report it."], "checker")
    if verbose:
        print(result)
    return result


def check_choose_k(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (a): `choose_k(selector, dev_queries) -> int`, the smallest k whose shortlist recall on the
    development positives is the highest any k reaches. Checked on a scripted development set, with no model call."""
    from course_utils.queries import LabelledQuery

    def check() -> list[str]:
        backend, _, _, selector = _stretch_world()
        queries = [LabelledQuery(case.query, expected, "positive" if expected else "off-topic", "en")
                   for case, expected in DEV_CASES]
        try:
            chosen = function(selector, queries)
        except NotImplementedError:
            raise Mistake("not implemented", "`choose_k` is not implemented yet.") from None
        except Exception as err:
            raise Mistake("crash", f"`choose_k` crashed: {type(err).__name__}: {err}", *_where(err, function)) from None
        if backend.exchanges:
            raise Mistake("model call", "choose_k asked the model: shortlist recall needs only the embeddings.")
        ranks = [_rank(case, expected) for case, expected in DEV_CASES if expected]
        best = max(ranks)
        if not isinstance(chosen, (int, np.integer)) or isinstance(chosen, bool):
            raise Mistake("return type", f"choose_k returned {chosen!r}: return the k you chose, an int.")
        if chosen < best:
            missed = sum(r > chosen for r in ranks)
            raise Mistake("k too small", f"with k={chosen} the expected skill is left out of the shortlist for {missed} of "
                          f"the {len(ranks)} development positives; the smallest k that keeps every one is {best}.")
        if chosen > best:
            raise Mistake("k too large", f"k={chosen} reaches the same shortlist recall as k={best}, with a longer prompt: "
                          "choose the smallest k that reaches the highest recall on the development queries.")
        return [f"Passed: choose_k picked k={chosen} on {len(queries)} scripted development queries "
                f"(expected skills ranked {', '.join(map(str, ranks))}; the query that expects none was left out)."]

    return _checked(check, verbose)


def _rank(case: ScriptedCase, expected: str) -> int:
    """The rank (1 = nearest) of `expected` among all the skills for the case's query."""
    order = np.argsort(-np.asarray(case.scores), kind="stable")
    return [CHECK_SKILLS[i].name for i in order].index(expected) + 1


def check_confident_skip(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (b): `pick_hybrid_or_skip(client, loader, selector, query, k=3, margin=0.1)` activates the nearest
    skill without asking the model when it leads the second by at least `margin`, and is the hybrid otherwise."""

    def check() -> list[str]:
        backend, client, loader, selector = _stretch_world()
        lines = []
        for case, margin, skip in ((CONFIDENT, 0.1, True), (CHECK_CASES[0], 0.1, False), (CONFIDENT, 0.5, False)):
            where = f"On the query {case.query!r} (lead {_lead(case):.2f}, margin={margin})"
            seen = len(backend.exchanges)
            decision, _ = _run(lambda c, l, s, q, k: function(c, l, s, q, k=k, margin=margin),
                               client, loader, selector, case.query, case.k, label="pick_hybrid_or_skip")
            asked = backend.generations(seen)
            if skip:
                if asked:
                    raise Mistake("asked the model", f"{where}, the nearest skill leads by more than the margin, but your "
                                  "function still asked the model.")
                if decision.skill != case.top()[0] or decision.prompt_tokens != 0:
                    raise Mistake("wrong skip", f"{where}, a skipped model should give the nearest skill "
                                  f"({case.top()[0]}) with 0 prompt tokens; you returned {decision.skill!r} with "
                                  f"{decision.prompt_tokens}.")
                lines.append(f"  {where}: skipped the model, {decision.skill}")
                continue
            if len(asked) != 1:
                raise Mistake("no model call", f"{where}, the lead is below the margin, so the model must decide "
                              f"(one request); your function made {len(asked)}.")
            _check_answer(decision, asked[0].called, where)
            lines.append(f"  {where}: asked the model, which {'declined' if asked[0].called is None else 'called ' + asked[0].called}")
        return ["Passed: the model is skipped only when similarity leads by the margin, and decides otherwise.", *lines]

    return _checked(check, verbose)


def _lead(case: ScriptedCase) -> float:
    first, second = sorted(case.scores, reverse=True)[:2]
    return first - second


def check_explicit(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (c): `pick_with_mentions(client, loader, selector, query, k=3)` honours `/name` and `@name` first
    (no embedding, no model), activates nothing for an unknown name, and is the hybrid otherwise."""

    def check() -> list[str]:
        backend, client, loader, selector = _stretch_world()
        lines = []
        for query, expected in MENTIONS:
            seen, embedded = len(backend.exchanges), backend.embeddings
            decision, _ = _run(function, client, loader, selector, query, 3, label="pick_with_mentions")
            if decision.skill != expected:
                raise Mistake("mention", f"On {query!r}, your function returned {decision.skill!r}; "
                              + (f"the user named {expected!r} explicitly." if expected else
                                 "an unknown name must activate nothing (say which names exist instead)."))
            if expected and (backend.generations(seen) or backend.embeddings > embedded):
                raise Mistake("mention", f"On {query!r}, the user named the skill, yet your function still "
                              "embedded the query or asked the model: an explicit name needs neither.")
            lines.append(f"  {query!r}: {decision.skill}")
        case = CHECK_CASES[0]
        seen = len(backend.exchanges)
        decision, _ = _run(function, client, loader, selector, case.query, case.k, label="pick_with_mentions")
        asked = backend.generations(seen)
        if len(asked) != 1:
            raise Mistake("no model call", f"On {case.query!r} (no name in it), your function made {len(asked)} model "
                          "requests: without a name, it is the hybrid (one request).")
        _check_answer(decision, asked[0].called, f"On {case.query!r}")
        lines.append(f"  {case.query!r}: the hybrid, {decision.skill}")
        return ["Passed: explicit names win, without an embedding or a model call; otherwise the hybrid decides.",
                *lines]

    return _checked(check, verbose)

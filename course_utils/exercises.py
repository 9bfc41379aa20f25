"""The lesson 09 exercise: its hints, and a checker that judges what the learner's `pick_hybrid` does.

`check_hybrid(fn, client, loader, selector)` runs the function first on a scripted stand-in backend
(`course_utils.scripted`: a real genai.Client whose "model" calls a skill or declines as the checker
decides, with its own two catalogs and cosine scores), then on the real backend the notebook uses. It
judges behaviour, not shape: which skills reached the model (k past the catalog's size, and a tie,
included), how many requests one decision made, whether the returned skill is the model's answer for
this k and this catalog, what was embedded (the query once; no description again), whether the tokens
are the ones the backend counted and the seconds include an embedding whose time varies, and that
k=0 raises a ValueError. A function that is or runs the course's own `pick_hybrid` is refused. Any
tool name, catalog format or request code that behaves right passes. The checker never raises: each
mistake gets one plain sentence.

`passing_check()` is what the checker prints for a right function on the stand-in (the course's solution,
checked there), so a learner sees what passing looks like without seeing the code. After grading,
`grading_feedback` lists the queries a selector got wrong: the query, the skill it expected (or none), what
was decided and, given the similarity selector, where the expected skill ranked by cosine.
"""
from __future__ import annotations

import dis
import json
import re
import sys
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
from course_utils.evaluation import Outcome
from course_utils.scripted import EmbedRequest, Exchange, ScriptedBackend
from course_utils.selection import SimilaritySelector, document_text, pick_hybrid, query_text
from course_utils.skills import Skill, SkillLoader
from course_utils.text import shorten

# ----------------------------------------------------------------- the stand-in's world

_LIBRARY = {
    "book-renewal": ("Renews books a member has on loan and says the new due date. "
        "Use when someone wants to keep a borrowed book longer."),
    "room-booking": ("Books the library's study rooms for a date and time. "
        "Use when someone wants a room to work or meet in."),
    "fine-payment": ("Explains and settles overdue fines on a member's account. "
        "Use when someone asks what they owe or wants to pay it."),
    "event-calendar": "Lists the library's talks, workshops and readings. Use when someone asks what is on, and when.",
    "interlibrary-loan": ("Requests a book the library does not hold from a partner library. "
        "Use when a title is not in the catalogue."),
    "printing-credits": "Tops up and explains printing and copying credits. Use when someone needs to print or scan.",
    "catalog-search": ("Finds books and media in the library's catalogue by title, author or subject. "
        "Use when someone looks for a title."),
    "membership-card": "Issues, renews and replaces library cards. Use when a card is new, expired, lost or damaged.",
}
CHECK_SKILLS = tuple(Skill(name, description, f"# {name}\n", Path("checker") / name / "SKILL.md")
                     for name, description in _LIBRARY.items())
"""The stand-in's catalog: a city library's skills, none of them in the course's catalogs."""


BRANCH = ("room-booking", "event-calendar", "printing-credits", "membership-card")
"""A branch library's smaller catalog (no loans, no fines): the check's second catalog."""


@dataclass(frozen=True)
class ScriptedCase:
    """One scripted decision: the query, its k, each skill's cosine, what the model will do, and on which catalog."""

    query: str
    k: int
    scores: tuple[float, ...]
    """Cosine with each skill of `CHECK_SKILLS`, in catalog order (the branch catalog reads its own skills' ones)."""
    model_picks: int | None
    """The rank (1 = nearest) in the top k of the skill the model calls; None: it declines."""
    branch: bool = False
    """Asked on the branch library's catalog (`BRANCH`) instead of the whole library's."""

    @staticmethod
    def names() -> list[str]:
        return [s.name for s in CHECK_SKILLS]

    def catalog(self) -> list[str]:
        """The skills of the catalog the case is asked on, in catalog order."""
        return [n for n in self.names() if not self.branch or n in BRANCH]

    def catalog_scores(self) -> dict[str, float]:
        """Each skill of the case's catalog with its cosine."""
        scores = dict(zip(self.names(), self.scores))
        return {n: scores[n] for n in self.catalog()}

    def top(self) -> list[str]:
        """The k nearest skills of the catalog, nearest first; ties keep catalog order (the reference's rule)."""
        scores = self.catalog_scores()
        return sorted(scores, key=lambda n: -scores[n])[: self.k]

    def model_choice(self) -> str | None:
        return None if self.model_picks is None else self.top()[self.model_picks - 1]

    def is_shortlist(self, offered: Sequence[str]) -> bool:
        """Whether `offered` are k skills of the catalog that score at least as high as all the others."""
        scores = self.catalog_scores()
        rest = [scores[n] for n in scores if n not in offered]
        return (len(set(offered)) == len(offered) == min(self.k, len(scores)) and set(offered) <= set(scores)
                and (not rest or min(scores[n] for n in offered) >= max(rest)))

    def tied(self) -> list[str]:
        """The skills that tie with the k-th nearest, when the tie straddles the k-th place (else [])."""
        scores, top = self.catalog_scores(), self.top()
        if self.k >= len(scores):
            return []
        kth = scores[top[-1]]
        tied = [n for n in scores if scores[n] == kth]
        return tied if any(n not in top for n in tied) else []


DUNE = (0.34, 0.20, 0.24, 0.10, 0.27, 0.06, 0.31, 0.15)
CHECK_CASES = (
    ScriptedCase("Can I keep 'Dune' two more weeks?", 3, DUNE, 2),
    ScriptedCase("What time is it in Tokyo right now?", 2, (0.20, 0.24, 0.10, 0.34, 0.06, 0.31, 0.15, 0.27), None),
    ScriptedCase("I lost my card and I need to print my CV today.", 4,
                 (0.15, 0.24, 0.27, 0.20, 0.10, 0.31, 0.06, 0.34), 4),
    ScriptedCase("Somewhere quiet for four of us on Saturday morning?", 1,
                 (0.24, 0.34, 0.15, 0.31, 0.06, 0.10, 0.27, 0.20), 1),
    ScriptedCase("Can I keep 'Dune' two more weeks?", 1, DUNE, 1),
    ScriptedCase("Can I keep 'Dune' two more weeks?", 2, DUNE, None, branch=True),
    ScriptedCase("My card expired: can I still print here today?", 4, (0.12, 0.08, 0.10, 0.05, 0.03, 0.33, 0.07, 0.36),
                 1, branch=True),
    ScriptedCase("Is there a talk tonight, and can I book a room after it?", 6,
                 (0.05, 0.30, 0.04, 0.35, 0.02, 0.06, 0.09, 0.07), 2, branch=True),
    ScriptedCase("What's on this weekend, and can my study group meet there?", 2,
                 (0.08, 0.26, 0.03, 0.38, 0.10, 0.02, 0.26, 0.06), 1),
)
"""k from 1 to 4 on the library's 8 skills, and 2, 4 and 6 on the branch's 4 (the whole catalog at 4 and 6); the
same query with two k and on two catalogs; a tie at the k-th place (room-booking and catalog-search); the model
calling a skill that is not the nearest, and declining."""
K_ZERO = 0
"""The k that must be refused: a shortlist of no skill is a ValueError (see `course_utils.selection.pick_hybrid`)."""

CHECK_QUERIES = (
    ("How many vacation days do I have left this year?", 3),
    ("Book 3 days of leave for me in the HR tool.", 2),
)
"""The real-backend part of the check: one query that must trigger a skill, one that must not, with their k."""


def _script(cases: Sequence[ScriptedCase]) -> Callable[[str, list[str], list[str]], str | None]:
    """The stand-in model: for a case whose shortlist was offered, the case's choice; anything else, a decline."""

    def decide(query: str, offered: list[str], functions: list[str]) -> str | None:
        for case in cases:
            if case.query == query and case.is_shortlist(offered):
                choice = case.model_choice()
                return choice if choice in offered else None
        return None

    return decide


def scripted_world(cases: Sequence[ScriptedCase] = CHECK_CASES) -> tuple[ScriptedBackend, genai.Client, SkillLoader,
                                                                       SimilaritySelector]:
    """The stand-in backend, a client it answers, its catalog and a SimilaritySelector over it (no cache)."""
    rows = {case.query: case.scores for case in cases}
    if any(rows[case.query] != case.scores for case in cases):
        raise ValueError("a query asked twice must have the same scores each time")
    backend = ScriptedBackend(CHECK_SKILLS, rows, _script(cases))
    client = backend.client()
    loader = SkillLoader(CHECK_SKILLS)
    return backend, client, loader, SimilaritySelector(client, loader, cache=False)  # the stand-in's default threshold


def branch_catalog(client: genai.Client, loader: SkillLoader) -> tuple[SkillLoader, SimilaritySelector]:
    """The branch library's catalog on the same stand-in, and a SimilaritySelector over it (no cache)."""
    branch = loader.subset(BRANCH)
    return branch, SimilaritySelector(client, branch, cache=False)


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
    "The k nearest: numpy's `argsort` sorts ascending, so sort the negated row, `np.argsort(-row, kind='stable')`, "
    "and keep the first k indices with a slice, `[:k]`; `selector.names[i]` is the skill at index i. The stable "
    "sort keeps tied skills in catalog order, so at a tie for the k-th place the one listed first in the catalog "
    "is kept (any k of the tied skills pass the check; more than k do not). A slice stops at the end of the row, "
    "so a k at or above the catalog's size keeps the whole catalog. Use the `k` you receive, and raise a "
    "ValueError when it is below 1.",
    "The prompt's layout: what stays the same for every query comes first, what changes comes last. The system "
    "instruction names no skill: `shortlist_instruction()`. The tool names no skill either: `shortlist_tool()`, an "
    "activate_skill whose `name` is a plain string, with no enum of names. The shortlist goes in the user turn: "
    "`shortlist_turn(loader.subset(names), query)` is one user turn holding the k catalog lines in "
    "<available-skills>, then the query. All three come from `course_utils.selection`.",
    "The model, first turn only: one `client.models.generate_content(model=GENERATION_MODEL, contents=[that user "
    "turn], config=types.GenerateContentConfig(system_instruction=…, tools=[the tool], "
    "automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))`. `response.function_calls` is "
    "empty when the model answered in text: that is its way of saying none.",
    "The Decision: `Decision(skill, prompt_tokens, seconds)`. The skill is the call's `name` argument when it is "
    "one of the shortlist (a name outside it is no decision: None), or None for a text answer; the tokens are "
    "`response.usage_metadata.prompt_token_count`, what the backend counted; the seconds run from before the "
    "embedding to after the answer (`time.perf_counter()`).",
)
HINT_LAYOUT = ("shortlist_instruction", "shortlist_tool", "shortlist_turn")
"""The parts of the reference's prompt that hint 3 names: `pick_hybrid` builds its request from exactly these."""


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
    return sorted(n for n in names
                  if isinstance(namespace.get(n), course_types) or hasattr(namespace.get(n), "course_backend"))


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

COURSE_SOLUTION = "the course's solution"
"""The problem code of a function that is, or runs, `course_utils.selection.pick_hybrid`."""
DESCRIPTION_TEXTS = frozenset({document_text(s) for s in CHECK_SKILLS} | {s.description for s in CHECK_SKILLS})
"""Every form of a stand-in skill's description a function could embed."""


def check_hybrid(function: Callable, client: Any, loader: SkillLoader, selector: Any,
                 verbose: bool = True, real: bool = True, reference: bool = False) -> CheckResult:
    """Check a learner's `pick_hybrid(client, loader, selector, query, k)`; print and return the verdict.

    First the decisions of `CHECK_CASES` on the scripted stand-in (two catalogs, k from 1 to past the
    catalog's size, a query asked again with another k and catalog, a tie, varying embedding times),
    and k=0, which must raise a ValueError; then, with `real`, the 2 decisions of `CHECK_QUERIES` on
    the notebook's `client`, `loader` and `selector`. A function that is or runs the course's own
    `pick_hybrid` is refused unless `reference` says it is shown on purpose. Never raises.
    """
    return _checked(lambda: _check(function, client, loader, selector, real, reference), verbose)


def _check(function: Callable, client: Any, loader: SkillLoader, selector: Any, real: bool,
           reference: bool) -> list[str]:
    if not callable(function):
        raise Mistake("return type", f"pick_hybrid should be a function; it is a {type(function).__name__}.")
    if not reference and _is_course_solution(function):
        raise Mistake(COURSE_SOLUTION, "this `pick_hybrid` is the course's own, imported from course_utils.selection: "
                      "the exercise is to write it. Write yours in the exercise cell (`hint(1)` gives a first step), "
                      "or set SHOW_SOLUTION = True in the first code cell to study the reference.")
    used = _globals_read(function)
    if used:
        raise Mistake("globals", f"your function reads the notebook's {', '.join(f'`{n}`' for n in used)} instead of "
                      "its arguments: use the client, loader, selector and k it receives (the checker passes its own).")
    lines = _check_scripted(function, guard=not reference)
    passed = [f"Passed on the scripted stand-in: {len(CHECK_CASES)} decisions on two catalogs ({len(CHECK_SKILLS)} "
              f"and {len(BRANCH)} skills), k from 1 to past the catalog's size, the same query with two k and two "
              "catalogs, a tie, the model calling a skill that was not the nearest and declining, one embedding "
              "per decision; k=0 refused.", *lines]
    if real:
        label = backend_of(client).generation_label()
        for query, k in CHECK_QUERIES:
            passed.append(_check_real(function, client, loader, selector, query, k, label, guard=not reference))
        passed[0] += f" Passed on {label}: {len(CHECK_QUERIES)} decisions."
    return passed


def _is_course_solution(function: Callable) -> bool:
    """Whether `function` is the course's `pick_hybrid` (itself, or a partial of it)."""
    inner = getattr(function, "func", function)
    return getattr(inner, "__code__", None) is pick_hybrid.__code__


class Watch:
    """Notes which of the course's `pick_hybrid` and `SimilaritySelector.__init__` run while it is on.

    A profile hook on this thread, the previous one restored on exit. With `guard`, running the
    course's `pick_hybrid` is a mistake (`refuse`).
    """

    def __init__(self, guard: bool = True):
        self.guard = guard
        self._watched = {id(pick_hybrid.__code__): "pick_hybrid", id(SimilaritySelector.__init__.__code__): "selector"}
        self.ran: set[str] = set()

    def __enter__(self) -> Watch:
        self._previous = sys.getprofile()
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(self._previous)

    def _hook(self, frame: pytypes.FrameType, event: str, arg: Any) -> None:
        if event == "call" and id(frame.f_code) in self._watched:
            self.ran.add(self._watched[id(frame.f_code)])

    def refuse(self) -> None:
        """Mistake when the guard is on and the course's `pick_hybrid` ran."""
        if self.guard and "pick_hybrid" in self.ran:
            raise Mistake(COURSE_SOLUTION, "your function calls the course's own `pick_hybrid` "
                          "(course_utils.selection): the exercise is to write that step yourself. "
                          "Shortlist with the selector it receives and "
                          "ask the model with the loader's subset; `hint(1)` gives a first step.")


def _run(function: Callable, client: Any, loader: SkillLoader, selector: Any, query: str, k: int,
         label: str = "pick_hybrid", watch: Watch | None = None) -> tuple[Any, float]:
    """Call the learner's function `label`; (its result, wall seconds). Mistakes for crashes, stubs, a changed loader,
    and, with a guarding `watch`, a call to the course's own `pick_hybrid`."""
    before = _snapshot(loader)
    watch = watch or Watch(guard=False)
    start = time.perf_counter()
    try:
        with watch:
            decision = function(client, loader, selector, query, k=k)
    except NotImplementedError:
        raise Mistake("not implemented", f"`{label}` is not implemented yet.",
                      "Replace the `# YOUR CODE HERE` part of the cell above with your code, run that cell, then run "
                      "this one again."
                      + (" `hint(1)` gives a first step." if label == "pick_hybrid" else "")) from None
    except (Exception, SystemExit) as err:
        watch.refuse()
        raise Mistake("crash", f"`{label}` crashed on the query {query!r} (k={k}).",
                      f"{type(err).__name__}: {err}", *_past_the_catalog(k, loader), *_where(err, function)) from None
    wall = time.perf_counter() - start
    watch.refuse()
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


def _past_the_catalog(k: int, loader: SkillLoader) -> list[str]:
    """A line for a crash at a k at or above the catalog's size (np.argpartition's limit)."""
    size = len(getattr(loader, "skills", ()))
    if k < size:
        return []
    return [f"Here k={k} and the catalog has {size} skills: a k at or above the catalog's size keeps the whole "
            "catalog. A slice of argsort's order (`[:k]`) does that; "
            "np.argpartition(row, k) needs k below the row's length."]


def _check_offered(offered: Sequence[str], scores: dict[str, float], k: int, where: str) -> None:
    """Mistakes when the skills offered to the model are not k skills that score at least as high as all the others.

    Ties are honoured: any k of equally scored skills are a right shortlist. A k at or above the catalog's
    size means the whole catalog.
    """
    foreign = [n for n in offered if n not in scores]
    if foreign:
        raise Mistake("not the arguments", f"{where}, the request offered {', '.join(foreign)}, which the catalog your "
                      "function received does not hold: build the shortlist from the loader and selector it receives.")
    ranked = sorted(scores, key=lambda n: -scores[n])
    rest = [scores[n] for n in scores if n not in offered]
    size = min(k, len(scores))
    if len(offered) == size and (not rest or min(scores[n] for n in offered) >= max(rest)):
        return
    top = ranked[:k]
    if len(offered) == len(scores) and len(scores) > k:
        raise Mistake("whole catalog", f"{where}, the request offered the model the whole catalog "
                      f"({len(scores)} skills), not the {k} nearest: {', '.join(top)}.")
    kth = scores[ranked[size - 1]] if size else float("inf")
    if len(offered) > size and set(offered) == {n for n in scores if scores[n] >= kth}:
        tied = [n for n in scores if scores[n] == kth]
        raise Mistake("tie", f"{where}, the request offered {len(offered)} skills where k={k}: "
                      f"{' and '.join(tied)} tie for place {k}, and your function kept them all. "
                      "Keep exactly k: the course's solution keeps "
                      "the one listed first in the catalog (a stable sort, `np.argsort(-row, kind='stable')`).")
    if len(offered) != size:
        rule = (f"the catalog has {len(scores)} skills, so a k at or above that offers them all" if k >= len(scores)
                else "use the k your function receives")
        raise Mistake("wrong k", f"{where}, the request offered {len(offered)} skill(s) "
                      f"({', '.join(offered) or 'none'}) where k={k}: {rule}.")
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
    """One scripted decision as the checker saw it: the case, what the function returned, what reached the model
    and the embedder, whether it built a selector, and the earlier case with the same query, if any."""

    case: ScriptedCase
    decision: Any
    wall: float
    exchanges: list[Exchange]
    embeds: list[EmbedRequest]
    rebuilt: bool
    repeat_of: ScriptedCase | None

    @property
    def where(self) -> str:
        branch = f" on the branch library's catalog ({len(BRANCH)} skills)" if self.case.branch else ""
        return f"On the query {self.case.query!r} with k={self.case.k}{branch}"

    @property
    def model_seconds(self) -> float:
        return self.exchanges[0].end - self.exchanges[0].start

    @property
    def embed_seconds(self) -> float:
        return sum(request.seconds for request in self.embeds)


def _observe(function: Callable, backend: ScriptedBackend, client: genai.Client,
             catalog: tuple[SkillLoader, SimilaritySelector], case: ScriptedCase, earlier: Sequence[ScriptedCase],
             guard: bool) -> Observed:
    seen, embedded, watch = len(backend.exchanges), backend.embeddings, Watch(guard)
    decision, wall = _run(function, client, *catalog, case.query, case.k, watch=watch)
    repeat = next((c for c in earlier if c.query == case.query), None)
    return Observed(case, decision, wall, backend.generations(seen), backend.embedded(embedded),
                    "selector" in watch.ran, repeat)


def _judge_requests(seen: Observed) -> None:
    """One request per decision, holding the query, exactly the k nearest skills, and a tool to call."""
    where, case = seen.where, seen.case
    if not seen.exchanges and seen.repeat_of is not None:
        other = " on the other catalog" if seen.repeat_of.branch != case.branch else ""
        raise Mistake("cached", f"{where}, your function did not ask the model, though it asked it when the same query "
                      f"came with k={seen.repeat_of.k}{other}: a decision depends on k and on the catalog as well as "
                      "the query. Do not reuse an earlier decision: shortlist and ask the model on every call.")
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
        unused = "" if seen.embeds else " (and the query was never embedded by the selector it received)"
        raise Mistake("not the arguments", f"{where}, the request named none of the skills of the loader your function "
                      f"received{unused}: build the shortlist from the loader and selector it receives.")
    _check_offered(exchange.offered, case.catalog_scores(), case.k, where)
    if not exchange.functions:
        raise Mistake("no tool", f"{where}, the request declared no function, so the model could only answer in "
                      "text: declare the activate tool for the shortlist (lesson 06).")


def _judge_embeddings(seen: Observed) -> None:
    """One text embedded per decision, the query: no selector built again, no description embedded again."""
    where, query = seen.where, seen.case.query
    if seen.rebuilt:
        raise Mistake("rebuilds the selector", f"{where}, your function built a new SimilaritySelector, which embeds "
                      "every description again (or reads them all back from a cache) on every decision: use the "
                      "selector it receives, built once.")
    texts = [text for request in seen.embeds for text in request.texts]
    described = [text for text in texts if text in DESCRIPTION_TEXTS]
    if described:
        raise Mistake("rebuilds the selector", f"{where}, your function embedded {len(described)} skill descriptions "
                      "for one decision: the selector it receives embedded them once, when it was built. Embed only "
                      "the query: `selector.scores([query])`.")
    asked = sum(text in (query, query_text(query)) for text in texts)
    if not asked:
        raise Mistake("query embedding", f"{where}, your function did not embed the query: it reused cosines from an "
                      "earlier call. Take the row from the selector it receives on every call "
                      "(`selector.scores([query])`).")
    if len(texts) > 1:
        raise Mistake("query embedding", f"{where}, your function embedded {len(texts)} texts for one decision "
                      f"({asked} of them the query): embed the query once and keep its row.")


def _judge_tokens(seen: Observed) -> None:
    """The backend's own token count."""
    (exchange,) = seen.exchanges
    if seen.decision.prompt_tokens != exchange.prompt_tokens:
        raise Mistake("tokens not counted", f"{seen.where}, the Decision says {seen.decision.prompt_tokens} prompt "
                      f"tokens, but the backend counted {exchange.prompt_tokens} for that request: report "
                      "response.usage_metadata.prompt_token_count, not an estimate or a sum.")


def _judge_seconds(observed: Sequence[Observed]) -> None:
    """Each decision's seconds cover its own embedding and generation (90 % of them at least), and no more than the
    call.

    The stand-in's embedding times vary from one request to the next, so a figure added to the model's
    seconds is too short somewhere.
    """
    short = [s for s in observed if s.decision.seconds < 0.9 * (s.model_seconds + s.embed_seconds)]
    if short:
        seen = max(short, key=lambda s: s.embed_seconds)
        said, model, embed = seen.decision.seconds, seen.model_seconds, seen.embed_seconds
        if min(s.decision.seconds - s.model_seconds for s in observed) < 0.02:  # nothing added to the model's seconds
            raise Mistake("seconds", f"{seen.where}, the Decision says {said:.3f} s, but embedding the query took "
                          f"{embed:.2f} s and the model {model:.2f} s, {seen.wall:.3f} s in all: time the whole "
                          "decision, from before the embedding to after the answer.")
        raise Mistake("seconds", f"{seen.where}, the Decision says {said:.3f} s, the model's {model:.3f} s and "
                      f"{said - model:.3f} s more, but embedding the query took {embed:.3f} s this time. The "
                      "embedding's time varies from one call to the next: measure it (start the clock before the "
                      "embedding), do not add a figure.")
    for seen in observed:
        if seen.decision.seconds > seen.wall + 0.01:
            raise Mistake("seconds", f"{seen.where}, the Decision says {seen.decision.seconds:.3f} s, more than the "
                          f"{seen.wall:.3f} s the whole call took: measure the decision itself, from before the "
                          "embedding to after the answer.")


def _check_k_zero(function: Callable, client: genai.Client, loader: SkillLoader, selector: SimilaritySelector) -> str:
    """k=0 must raise a ValueError that the learner's code raises, or that names k."""
    query = CHECK_CASES[0].query
    where = f"On the query {query!r} with k={K_ZERO}"
    try:
        decision = function(client, loader, selector, query, k=K_ZERO)
    except ValueError as err:
        if _raised_by(err, function) or re.search(r"\bk\b", str(err)):
            return f"  stand-in, k={K_ZERO}: ValueError ({shorten(str(err), 70)})"
        raise Mistake("k=0", f"{where}, your function raised ValueError: {err}. It came from deeper code, by chance: "
                      "check k first and raise a ValueError that says k must be at least 1.",
                      *_where(err, function)) from None
    except (Exception, SystemExit) as err:
        raise Mistake("k=0", f"{where}, your function raised {type(err).__name__}: {err}. A k below 1 is the caller's "
                      "mistake: check k first and raise a ValueError that says k must be at least 1.",
                      *_where(err, function)) from None
    shown = shorten(repr(getattr(decision, "skill", decision)), 60, flat=False)
    raise Mistake("k=0", f"{where}, your function returned {shown} instead of raising: a shortlist of no skill leaves "
                  "the model nothing to decide, and a quiet answer would pass for a selector that never triggers. "
                  "Check k first: `if k < 1: raise ValueError(...)`.")


def _raised_by(err: BaseException, function: Callable) -> bool:
    """Whether the exception was raised in the function's own code (its last frame is in the function's file)."""
    frames = traceback.extract_tb(err.__traceback__)
    code = getattr(function, "__code__", None)
    return bool(frames) and code is not None and frames[-1].filename == code.co_filename


def _check_scripted(function: Callable, guard: bool = True) -> list[str]:
    """Every scripted case, judged mistake kind by mistake kind (the most basic mistake is reported first), then k=0."""
    backend, client, loader, selector = scripted_world()
    catalogs = {False: (loader, selector), True: branch_catalog(client, loader)}
    observed: list[Observed] = []
    for case in CHECK_CASES:
        earlier = [seen.case for seen in observed]
        observed.append(_observe(function, backend, client, catalogs[case.branch], case, earlier, guard))
    for seen in observed:
        _judge_requests(seen)
    for seen in observed:
        _check_answer(seen.decision, seen.exchanges[0].called, seen.where)
    for seen in observed:
        _judge_embeddings(seen)
    for seen in observed:
        _judge_tokens(seen)
    _judge_seconds(observed)
    lines = []
    for seen in observed:
        exchange = seen.exchanges[0]
        choice = "declined" if exchange.called is None else f"called {exchange.called}"
        branch = ", branch" if seen.case.branch else ""
        tied = seen.case.tied()
        tie = f" ({' and '.join(tied)} tie for place {seen.case.k})" if tied else ""
        lines.append(f"  stand-in, k={seen.case.k}{branch}: offered {', '.join(exchange.offered)}{tie}; the model "
                     f"{choice}; you returned {seen.decision.skill}")
    return [*lines, _check_k_zero(function, client, loader, selector)]


def _check_real(function: Callable, client: Any, loader: SkillLoader, selector: Any, query: str, k: int,
                label: str, guard: bool = True) -> str:
    where = f"On {label}, query {query!r} with k={k}"
    scores = dict(zip(selector.names, (float(x) for x in selector.scores([query])[0])))
    proxy = RecordingClient(client)
    decision, wall = _run(function, proxy, loader, selector, query, k, watch=Watch(guard))
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


def passing_check(verbose: bool = True) -> CheckResult:
    """What `check_hybrid` prints for a right `pick_hybrid` on the scripted stand-in: the course's solution checked
    there, as a learner's passing function is, and its report printed (with `verbose`) and returned.

    Only the stand-in half runs: the real half's lines depend on the learner's backend. The report says what reached
    the model and what came back, never the code.
    """
    _, client, loader, selector = scripted_world()
    return check_hybrid(pick_hybrid, client, loader, selector, verbose=verbose, real=False, reference=True)


# ----------------------------------------------------------------- feedback after grading


@dataclass(frozen=True)
class GradedMiss:
    """One graded query a selector got wrong: the query, what it expected and what the selector decided."""

    query: str
    kind: str
    expected: str | None
    """The skill the query must trigger; None: it must trigger none."""
    picked: str | None
    """The decision: the majority of the runs that answered (`evaluation.majority`: a tie decides None)."""
    verdict: str
    """false trigger, miss, wrong skill, or error (no run answered)."""
    runs: tuple[str | None, ...] = ()
    """Each answering run's skill, when the query ran more than once and the runs disagreed; else empty."""
    error: str | None = None
    rank: int | None = None
    """The expected skill's place by cosine (1 = nearest; tied skills share a place): 1 plus the number of skills
    scoring strictly higher. None for a query that expects none, or when no selector was given."""

    @property
    def picked_text(self) -> str:
        if self.verdict == "error":
            return "no answer (error)"
        shown = self.picked or "none"
        return f"{shown} (runs: {', '.join(r or 'none' for r in self.runs)})" if self.runs else shown


@dataclass(frozen=True)
class GradingFeedback:
    """The queries one graded selector got wrong, in the grading set's order; `str()` is the table a lesson prints."""

    selector: str
    queries: int
    misses: tuple[GradedMiss, ...]
    k: int | None = None
    """The shortlist's size, when the selector shortlists: a rank above it was left out of the shortlist."""

    def __str__(self) -> str:
        if not self.misses:
            return f"{self.selector}: right on all {self.queries} graded queries."
        header = ("expected", "picked", "verdict", "rank", "query")
        rows = [(m.expected or "none", m.picked_text, m.verdict, _rank_text(m.rank, self.k), json.dumps(
            m.query, ensure_ascii=False)) for m in self.misses]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
        line = lambda row: "  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths)) + "  " + row[4]  # noqa: E731
        lines = [f"{self.selector}: wrong on {len(self.misses)} of {self.queries} graded queries", line(header),
                 *(line(row) for row in rows)]
        if any(m.rank is not None for m in self.misses):
            where = f"; above {self.k}, the shortlist left it out" if self.k is not None else ""
            lines.append(f"rank: the expected skill's place by cosine, 1 = nearest{where}")
        return "\n".join(lines)


def _rank_text(rank: int | None, k: int | None) -> str:
    if rank is None:
        return "-"
    return f"{rank} (> k)" if k is not None and rank > k else str(rank)


def grading_feedback(name: str, outcomes: Sequence[Outcome], selector: Any = None,
                     k: int | None = None) -> GradingFeedback:
    """The queries of a grading run (`evaluation.run_selector`'s outcomes) that `name` got wrong, each with what it
    expected and what was decided; with `selector` (any object with `names` and `scores`), where the expected
    skill ranks by cosine, which tells a shortlist that left it out from a model that chose otherwise."""
    misses = []
    for outcome in outcomes:
        if outcome.verdict == "correct":
            continue
        expected = outcome.query.expected
        rank = None
        if selector is not None and expected is not None:
            row = np.asarray(selector.scores([outcome.query.query])[0])
            rank = 1 + int(np.sum(row > row[list(selector.names).index(expected)]))
        answers = tuple(outcome.answers)
        misses.append(GradedMiss(outcome.query.query, outcome.query.kind, expected, outcome.chosen, outcome.verdict,
                                 answers if len(set(answers)) > 1 else (), outcome.error, rank))
    return GradingFeedback(name, len(outcomes), tuple(misses), k)


# ----------------------------------------------------------------- stretch tasks, each with its own check

CONFIDENT = ScriptedCase("My library card expired yesterday, can you renew it?", 3,
                         (0.10, 0.06, 0.15, 0.20, 0.24, 0.27, 0.31, 0.62), None)
"""A query whose nearest skill leads the second by 0.31: a margin rule of 0.1 skips the model; the model would
decline."""
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
            raise Mistake("k too small", f"with k={chosen} the expected skill is left out of the shortlist for "
                          f"{missed} of the {len(ranks)} development positives; "
                          f"the smallest k that keeps every one is {best}.")
        if chosen > best:
            raise Mistake("k too large", f"k={chosen} reaches the same shortlist recall as k={best}, "
                          "with a longer prompt: choose the smallest k that reaches the highest recall "
                          "on the development queries.")
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
            decision, _ = _run(lambda c, skills, s, q, k, margin=margin: function(c, skills, s, q, k=k, margin=margin),
                               client, loader, selector, case.query, case.k, label="pick_hybrid_or_skip")
            asked = backend.generations(seen)
            if skip:
                if asked:
                    raise Mistake("asked the model", f"{where}, the nearest skill leads by more than the margin, "
                                  "but your function still asked the model.")
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
            lines.append(f"  {where}: asked the model, which "
                         f"{'declined' if asked[0].called is None else 'called ' + asked[0].called}")
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

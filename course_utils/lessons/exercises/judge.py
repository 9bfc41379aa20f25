"""The lesson 09 exercise's checker, which judges what the learner's `pick_hybrid` does.

`check_hybrid(fn, client, loader, selector)` runs the function first on a scripted stand-in backend
(`course_utils.lessons.scripted`: a real genai.Client whose "model" calls a skill or declines as the checker
decides, with its own two catalogs and cosine scores), then on the real backend the notebook uses. It
judges behaviour, not shape: which skills reached the model (k past the catalog's size, and a tie,
included), how many requests one decision made, whether the returned skill is the model's answer for
this k and this catalog, what was embedded (the query once; no description again), whether the tokens
are the ones the backend counted and the seconds include an embedding whose time varies, and that
k=0 raises a ValueError. A function that is or runs the course's own `pick_hybrid` is refused. Any
tool name, catalog format or request code that behaves right passes. The checker never raises: each
mistake gets one plain sentence.

`passing_check()` is what the checker prints for a right function on the stand-in (the course's solution,
checked there), so a learner sees what passing looks like without seeing the code.
"""
from __future__ import annotations

import re
import sys
import time
import types as pytypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google import genai

from course_utils.backend.client import backend_of
from course_utils.lessons.exercises.learner import (
    RecordingClient, called_skill, globals_read, raised_by, snapshot, where_raised,
)
from course_utils.lessons.exercises.world import (
    BRANCH, CHECK_CASES, CHECK_QUERIES, CHECK_SKILLS, K_ZERO, ScriptedCase, branch_catalog, scripted_world,
)
from course_utils.lessons.scripted import EmbedRequest, Exchange, ScriptedBackend
from course_utils.selection.pick import SimilaritySelector, document_text, pick_hybrid, query_text
from course_utils.skills.skill import SkillLoader
from course_utils.skills.text import shorten

@dataclass
class CheckResult:
    """The outcome of a check: `passed`, the plain-words `messages`, and a short `problem` code (None if passed)."""

    passed: bool
    messages: list[str] = field(default_factory=list)
    problem: str | None = None

    def __str__(self) -> str:
        return "\n".join(self.messages)


class Mistake(Exception):
    """A wrong behaviour found by the check: `problem` code and the plain sentences that explain it."""

    def __init__(self, problem: str, *messages: str):
        super().__init__(messages[0])
        self.problem, self.messages = problem, list(messages)

    def result(self) -> CheckResult:
        first = self.messages[0]
        return CheckResult(False, [f"Not yet. {first[:1].upper()}{first[1:]}", *self.messages[1:]], self.problem)


def checked(check: Callable[[], list[str]], verbose: bool) -> CheckResult:
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


COURSE_SOLUTION = "the course's solution"
"""The problem code of a function that is, or runs, `course_utils.selection.pick.pick_hybrid`."""
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
    return checked(lambda: _check(function, client, loader, selector, real, reference), verbose)


def _check(function: Callable, client: Any, loader: SkillLoader, selector: Any, real: bool,
           reference: bool) -> list[str]:
    if not callable(function):
        raise Mistake("return type", f"pick_hybrid should be a function; it is a {type(function).__name__}.")
    if not reference and _is_course_solution(function):
        raise Mistake(COURSE_SOLUTION, "this `pick_hybrid` is the course's own, imported from "
                      "course_utils.selection.pick: the exercise is to write it. Write yours in the exercise cell "
                      "(`hint(1)` gives a first step), or set SHOW_SOLUTION = True in the first code cell "
                      "to study the reference.")
    used = globals_read(function)
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
                          "(course_utils.selection.pick): the exercise is to write that step yourself. "
                          "Shortlist with the selector it receives and "
                          "ask the model with the loader's subset; `hint(1)` gives a first step.")


def run_learner(function: Callable, client: Any, loader: SkillLoader, selector: Any, query: str, k: int,
         label: str = "pick_hybrid", watch: Watch | None = None) -> tuple[Any, float]:
    """Call the learner's function `label`; (its result, wall seconds). Mistakes for crashes, stubs, a changed loader,
    and, with a guarding `watch`, a call to the course's own `pick_hybrid`."""
    before = snapshot(loader)
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
                      f"{type(err).__name__}: {err}", *_past_the_catalog(k, loader),
                      *where_raised(err, function)) from None
    wall = time.perf_counter() - start
    watch.refuse()
    if decision is NotImplemented:
        raise Mistake("not implemented", f"`{label}` is not implemented yet.",
                      "Replace the `# YOUR CODE HERE` part of the cell above with your code, then run this cell again.")
    if snapshot(loader) != before:
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


def check_answer(decision: Any, model_choice: str | None, where: str) -> None:
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
    decision, wall = run_learner(function, client, *catalog, case.query, case.k, watch=watch)
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
        if raised_by(err, function) or re.search(r"\bk\b", str(err)):
            return f"  stand-in, k={K_ZERO}: ValueError ({shorten(str(err), 70)})"
        raise Mistake("k=0", f"{where}, your function raised ValueError: {err}. It came from deeper code, by chance: "
                      "check k first and raise a ValueError that says k must be at least 1.",
                      *where_raised(err, function)) from None
    except (Exception, SystemExit) as err:
        raise Mistake("k=0", f"{where}, your function raised {type(err).__name__}: {err}. A k below 1 is the caller's "
                      "mistake: check k first and raise a ValueError that says k must be at least 1.",
                      *where_raised(err, function)) from None
    shown = shorten(repr(getattr(decision, "skill", decision)), 60, flat=False)
    raise Mistake("k=0", f"{where}, your function returned {shown} instead of raising: a shortlist of no skill leaves "
                  "the model nothing to decide, and a quiet answer would pass for a selector that never triggers. "
                  "Check k first: `if k < 1: raise ValueError(...)`.")


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
        check_answer(seen.decision, seen.exchanges[0].called, seen.where)
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
    decision, wall = run_learner(function, proxy, loader, selector, query, k, watch=Watch(guard))
    calls = proxy.models.calls
    if len(calls) != 1:
        raise Mistake("no model call" if not calls else "several model calls",
                      f"{where}, your function made {len(calls)} generate_content requests through the client it "
                      "received; one decision is one request.")
    (call,) = calls
    offered = call.offered(loader.names)
    _check_offered(offered, scores, k, where)
    check_answer(decision, called_skill(call.response, offered), where)
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

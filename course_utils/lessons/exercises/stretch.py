"""The lesson 09 stretch tasks' checks: choose k on development queries, skip the model when similarity is
confident, honour explicit `/name` and `@name` activations. Each runs on the scripted world and never raises."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from course_utils.lessons.exercises.judge import CheckResult, Mistake, check_answer, checked, run_learner
from course_utils.lessons.exercises.learner import where_raised
from course_utils.lessons.exercises.world import (
    CHECK_CASES, CHECK_SKILLS, CONFIDENT, DEV_CASES, MENTIONS, ScriptedCase, stretch_world,
)

def check_choose_k(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (a): `choose_k(selector, dev_queries) -> int`, the smallest k whose shortlist recall on the
    development positives is the highest any k reaches. Checked on a scripted development set, with no model call."""
    from course_utils.skills.queries import LabelledQuery

    def check() -> list[str]:
        backend, _, _, selector = stretch_world()
        queries = [LabelledQuery(case.query, expected, "positive" if expected else "off-topic", "en")
                   for case, expected in DEV_CASES]
        try:
            chosen = function(selector, queries)
        except NotImplementedError:
            raise Mistake("not implemented", "`choose_k` is not implemented yet.") from None
        except Exception as err:
            raise Mistake("crash", f"`choose_k` crashed: {type(err).__name__}: {err}",
                          *where_raised(err, function)) from None
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

    return checked(check, verbose)


def _rank(case: ScriptedCase, expected: str) -> int:
    """The rank (1 = nearest) of `expected` among all the skills for the case's query."""
    order = np.argsort(-np.asarray(case.scores), kind="stable")
    return [CHECK_SKILLS[i].name for i in order].index(expected) + 1


def check_confident_skip(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (b): `pick_hybrid_or_skip(client, loader, selector, query, k=3, margin=0.1)` activates the nearest
    skill without asking the model when it leads the second by at least `margin`, and is the hybrid otherwise."""

    def check() -> list[str]:
        backend, client, loader, selector = stretch_world()
        lines = []
        for case, margin, skip in ((CONFIDENT, 0.1, True), (CHECK_CASES[0], 0.1, False), (CONFIDENT, 0.5, False)):
            where = f"On the query {case.query!r} (lead {_lead(case):.2f}, margin={margin})"
            seen = len(backend.exchanges)
            decision, _ = run_learner(
                lambda c, skills, s, q, k, margin=margin: function(c, skills, s, q, k=k, margin=margin),
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
            check_answer(decision, asked[0].called, where)
            lines.append(f"  {where}: asked the model, which "
                         f"{'declined' if asked[0].called is None else 'called ' + asked[0].called}")
        return ["Passed: the model is skipped only when similarity leads by the margin, and decides otherwise.", *lines]

    return checked(check, verbose)


def _lead(case: ScriptedCase) -> float:
    first, second = sorted(case.scores, reverse=True)[:2]
    return first - second


def check_explicit(function: Callable, verbose: bool = True) -> CheckResult:
    """Stretch (c): `pick_with_mentions(client, loader, selector, query, k=3)` honours `/name` and `@name` first
    (no embedding, no model), activates nothing for an unknown name, and is the hybrid otherwise."""

    def check() -> list[str]:
        backend, client, loader, selector = stretch_world()
        lines = []
        for query, expected in MENTIONS:
            seen, embedded = len(backend.exchanges), backend.embeddings
            decision, _ = run_learner(function, client, loader, selector, query, 3, label="pick_with_mentions")
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
        decision, _ = run_learner(function, client, loader, selector, case.query, case.k, label="pick_with_mentions")
        asked = backend.generations(seen)
        if len(asked) != 1:
            raise Mistake("no model call", f"On {case.query!r} (no name in it), your function made {len(asked)} model "
                          "requests: without a name, it is the hybrid (one request).")
        check_answer(decision, asked[0].called, f"On {case.query!r}")
        lines.append(f"  {case.query!r}: the hybrid, {decision.skill}")
        return ["Passed: explicit names win, without an embedding or a model call; otherwise the hybrid decides.",
                *lines]

    return checked(check, verbose)

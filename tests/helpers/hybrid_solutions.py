"""What learners write for lesson 09's `pick_hybrid`: right solutions in different styles, and wrong ones.

Each wrong solution is paired (in `WRONG`) with the problem code and a piece of the sentence the
checker must answer it with. `WORKPLACE` is a module-level loader, as the notebook's `workplace` is.
`reset()` empties what the solutions that remember keep between calls.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
from google.genai import types

from course_utils.backend.client import GENERATION_MODEL
from course_utils.selection.embeddings import embed_texts
from course_utils.selection.pick import (
    Decision, SimilaritySelector, document_text, pick_by_model, pick_hybrid, query_text,
    shortlist_instruction, shortlist_tool, shortlist_turn,
)
from course_utils.skills.tokens import estimate_tokens
from course_utils.skills.paths import REPO_ROOT

WORKPLACE_ROOT = REPO_ROOT / "skills" / "workplace"


def assert_k(k):
    if k < 1:
        raise ValueError(f"a shortlist of {k} skills: k must be at least 1")


def _nearest(selector, query, k):
    row = selector.scores([query])[0]
    return [selector.names[i] for i in np.argsort(-row)[:k]]


# ----------------------------------------------------------------- right, in three styles (and the reference)


def right_with_numpy_and_own_tool(client, loader, selector, query, k=3):
    """Cosines by hand on the selector's vectors, a catalog and a tool of its own (other names)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    start = time.perf_counter()
    documents = selector.matrix / np.linalg.norm(selector.matrix, axis=1, keepdims=True)
    q = selector.embed([query_text(query)])[0]
    cosines = documents @ (q / np.linalg.norm(q))
    best = np.argpartition(-cosines, k - 1)[:k] if k < len(cosines) else np.arange(len(cosines))
    names = [selector.names[i] for i in best]
    catalog = "\n".join(f"* {n} — {loader.skills[n].description}" for n in names)
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name="choose_skill", description="Use one of the listed skills.",
        parameters=types.Schema(type=types.Type.OBJECT, required=["skill"], properties={
            "skill": types.Schema(type=types.Type.STRING, enum=names)}))])
    response = client.models.generate_content(
        model=GENERATION_MODEL, contents=query,
        config=types.GenerateContentConfig(
            system_instruction=f"Skills you may use, if one fits:\n{catalog}\nIf none fits, just answer.",
            tools=[tool], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    calls = response.function_calls or []
    skill = calls[0].args["skill"] if calls else None
    return Decision(skill, response.usage_metadata.prompt_token_count, time.perf_counter() - start)


def right_with_subset_and_sort(client, loader, selector, query, k=3):
    """Sorted pairs, the loader's subset, its instruction and tool under another function name."""
    if k <= 0:
        raise ValueError("the shortlist needs k >= 1")
    started = time.perf_counter()
    pairs = sorted(zip(selector.scores([query])[0], selector.names), reverse=True)[:k]
    shortlist = loader.subset(name for _, name in pairs)
    config = types.GenerateContentConfig(
        system_instruction=shortlist.system_instruction(function="use_skill"),
        tools=[shortlist.tool("use_skill")],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents = [types.Content(role="user", parts=[types.Part(text=query)])]
    response = client.models.generate_content(model=GENERATION_MODEL, contents=contents, config=config)
    chosen = None
    for part in response.candidates[0].content.parts:
        if part.function_call is not None:
            chosen = part.function_call.args.get("name")
    tokens = response.usage_metadata.prompt_token_count
    return Decision(chosen, prompt_tokens=tokens, seconds=time.perf_counter() - started)


def right_with_pick_by_model(client, loader, selector, query, k=3):
    """The four-line version, with the seconds widened to cover the embedding."""
    assert_k(k)
    start = time.perf_counter()
    decision = pick_by_model(client, loader.subset(_nearest(selector, query, k)), query)
    return dataclasses.replace(decision, seconds=time.perf_counter() - start)


def right_by_the_hints(client, loader, selector, query, k=3):
    """Hints 1 to 5 followed word for word: the reference's layout (a system instruction and a tool that name no
    skill, the shortlist's catalog lines in the user turn before the query), written out by hand."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    start = time.perf_counter()
    row = selector.scores([query])[0]
    names = [selector.names[i] for i in np.argsort(-row, kind="stable")[:k]]
    response = client.models.generate_content(
        model=GENERATION_MODEL, contents=[shortlist_turn(loader.subset(names), query)],
        config=types.GenerateContentConfig(
            system_instruction=shortlist_instruction(), tools=[shortlist_tool()],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    calls = response.function_calls or []
    named = calls[0].args.get("name") if calls else None
    return Decision(named if named in names else None, response.usage_metadata.prompt_token_count,
                    time.perf_counter() - start)


RIGHT = [pick_hybrid, right_with_numpy_and_own_tool, right_with_subset_and_sort, right_with_pick_by_model,
         right_by_the_hints]


# ----------------------------------------------------------------- wrong, each with what the checker must say


def stub_raises(client, loader, selector, query, k=3):
    # YOUR CODE HERE
    raise NotImplementedError


def stub_returns(client, loader, selector, query, k=3):
    # YOUR CODE HERE
    return NotImplemented


def crashes(client, loader, selector, query, k=3):
    row = selector.scores([query])[0]
    top = np.argsort(-row)[:k]
    return pick_by_model(client, loader.subset(top), query)  # indices, not names: KeyError


def returns_a_tuple(client, loader, selector, query, k=3):
    decision = right_with_pick_by_model(client, loader, selector, query, k)
    return decision.skill, decision.prompt_tokens


def forgets_return(client, loader, selector, query, k=3):
    right_with_pick_by_model(client, loader, selector, query, k)


def whole_catalog(client, loader, selector, query, k=3):
    start = time.perf_counter()
    selector.scores([query])
    return dataclasses.replace(pick_by_model(client, loader, query), seconds=time.perf_counter() - start)


def fixed_k(client, loader, selector, query, k=3):
    return right_with_pick_by_model(client, loader, selector, query, 3)


def farthest_k(client, loader, selector, query, k=3):
    start = time.perf_counter()
    row = selector.scores([query])[0]
    names = [selector.names[i] for i in np.argsort(row)[:k]]  # ascending: the k farthest
    return dataclasses.replace(pick_by_model(client, loader.subset(names), query), seconds=time.perf_counter() - start)


def catalog_order(client, loader, selector, query, k=3):
    start = time.perf_counter()
    selector.scores([query])
    return dataclasses.replace(pick_by_model(client, loader.subset(loader.names[:k]), query),
                               seconds=time.perf_counter() - start)


def overrides_none(client, loader, selector, query, k=3):
    start = time.perf_counter()
    names = _nearest(selector, query, k)
    decision = pick_by_model(client, loader.subset(names), query)
    return dataclasses.replace(decision, skill=decision.skill or names[0], seconds=time.perf_counter() - start)


def similarity_decides(client, loader, selector, query, k=3):
    start = time.perf_counter()
    names = _nearest(selector, query, k)
    decision = pick_by_model(client, loader.subset(names), query)
    return dataclasses.replace(decision, skill=names[0], seconds=time.perf_counter() - start)


def no_model(client, loader, selector, query, k=3):
    start = time.perf_counter()
    return Decision(_nearest(selector, query, 1)[0], 1, time.perf_counter() - start)


def asks_each_skill(client, loader, selector, query, k=3):
    start = time.perf_counter()
    names, tokens, chosen = _nearest(selector, query, k), 0, None
    for name in names:
        decision = pick_by_model(client, loader.subset([name]), query)
        tokens += decision.prompt_tokens
        chosen = chosen or decision.skill
    return Decision(chosen, tokens, time.perf_counter() - start)


def estimated_tokens(client, loader, selector, query, k=3):
    start = time.perf_counter()
    shortlist = loader.subset(_nearest(selector, query, k))
    decision = pick_by_model(client, shortlist, query)
    tokens = estimate_tokens(shortlist.system_instruction() + query)
    return Decision(decision.skill, tokens, time.perf_counter() - start)


def tokens_plus_embedding(client, loader, selector, query, k=3):
    decision = right_with_pick_by_model(client, loader, selector, query, k)
    return dataclasses.replace(decision, prompt_tokens=decision.prompt_tokens + estimate_tokens(query_text(query)))


def model_seconds_only(client, loader, selector, query, k=3):
    return pick_by_model(client, loader.subset(_nearest(selector, query, k)), query)


def reads_the_global_loader(client, loader, selector, query, k=3):
    start = time.perf_counter()
    names = _nearest(selector, query, k)
    decision = pick_by_model(client, WORKPLACE.subset(names), query)
    return dataclasses.replace(decision, seconds=time.perf_counter() - start)


def shrinks_the_loader(client, loader, selector, query, k=3):
    start = time.perf_counter()
    keep = set(_nearest(selector, query, k))
    for name in [n for n in loader.skills if n not in keep]:
        del loader.skills[name]
    return dataclasses.replace(pick_by_model(client, loader, query), seconds=time.perf_counter() - start)


def text_only(client, loader, selector, query, k=3):
    start = time.perf_counter()
    names = _nearest(selector, query, k)
    response = client.models.generate_content(
        model=GENERATION_MODEL, contents=f"Which of {', '.join(names)} fits? Answer with the name or none.\n{query}")
    text = (response.text or "").strip()
    return Decision(text if text in names else None, response.usage_metadata.prompt_token_count,
                    time.perf_counter() - start)


def calls_the_course_solution(client, loader, selector, query, k=3):
    return pick_hybrid(client, loader, selector, query, k=k)


_DECIDED = {}


def caches_by_query(client, loader, selector, query, k=3):
    """Remembers each query's decision, whatever k and catalog come with it."""
    if query not in _DECIDED:
        _DECIDED[query] = right_with_pick_by_model(client, loader, selector, query, k)
    return _DECIDED[query]


def partitions_at_k(client, loader, selector, query, k=3):
    """`np.argpartition(-row, k)`: fine below the catalog's size, a ValueError at it."""
    assert_k(k)
    start = time.perf_counter()
    row = selector.scores([query])[0]
    names = [selector.names[i] for i in np.argpartition(-row, k)[:k]]
    return dataclasses.replace(pick_by_model(client, loader.subset(names), query), seconds=time.perf_counter() - start)


EMBEDDING_SECONDS = 0.05
"""What a learner read off one run as the embedding's time."""


def adds_a_fixed_embedding_time(client, loader, selector, query, k=3):
    assert_k(k)
    decision = pick_by_model(client, loader.subset(_nearest(selector, query, k)), query)
    return dataclasses.replace(decision, seconds=decision.seconds + EMBEDDING_SECONDS)


def rebuilds_the_selector(client, loader, selector, query, k=3):
    assert_k(k)
    start = time.perf_counter()
    fresh = SimilaritySelector(client, loader)
    decision = pick_by_model(client, loader.subset(_nearest(fresh, query, k)), query)
    return dataclasses.replace(decision, seconds=time.perf_counter() - start)


def embeds_descriptions_each_call(client, loader, selector, query, k=3):
    assert_k(k)
    start = time.perf_counter()
    names = list(loader.skills)
    vectors = embed_texts(client, [document_text(s) for s in loader.skills.values()] + [query_text(query)])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit[:-1] @ unit[-1]
    shortlist = [names[i] for i in np.argsort(-cosines, kind="stable")[:k]]
    decision = pick_by_model(client, loader.subset(shortlist), query)
    return dataclasses.replace(decision, seconds=time.perf_counter() - start)


def embeds_the_query_twice(client, loader, selector, query, k=3):
    assert_k(k)
    start = time.perf_counter()
    names = _nearest(selector, query, k)
    nearest = float(selector.scores([query])[0].max())
    decision = pick_by_model(client, loader.subset(names), query)
    return dataclasses.replace(decision, score=nearest, seconds=time.perf_counter() - start)


def keeps_every_tie(client, loader, selector, query, k=3):
    """Every skill that scores at least the k-th best: k + 1 of them when two tie for place k."""
    assert_k(k)
    start = time.perf_counter()
    row = selector.scores([query])[0]
    kth = np.sort(row)[::-1][min(k, len(row)) - 1]
    names = [n for n, score in zip(selector.names, row) if score >= kth]
    return dataclasses.replace(pick_by_model(client, loader.subset(names), query), seconds=time.perf_counter() - start)


def ignores_k_zero(client, loader, selector, query, k=3):
    """Right for every k from 1; at k=0 it asks the model with no skill and returns its "none"."""
    start = time.perf_counter()
    decision = pick_by_model(client, loader.subset(_nearest(selector, query, k)), query)
    return dataclasses.replace(decision, seconds=time.perf_counter() - start)


def fails_at_k_zero(client, loader, selector, query, k=3):
    """Right for every k from 1; at k=0 it reads the nearest of an empty shortlist (an IndexError)."""
    start = time.perf_counter()
    row = selector.scores([query])[0]
    order = np.argsort(-row, kind="stable")[:k]
    decision = pick_by_model(client, loader.subset(selector.names[i] for i in order), query)
    return dataclasses.replace(decision, score=float(row[order[0]]), seconds=time.perf_counter() - start)


WRONG = [
    (stub_raises, "not implemented", "not implemented yet"),
    (stub_returns, "not implemented", "not implemented yet"),
    (crashes, "crash", "crashed on the query"),
    (returns_a_tuple, "return type", "returned a tuple"),
    (forgets_return, "return type", "Did you forget `return`?"),
    (whole_catalog, "whole catalog", "the whole catalog (8 skills)"),
    (fixed_k, "wrong k", "use the k your function receives"),
    (farthest_k, "not ranked by score", "FARTHEST from the query"),
    (catalog_order, "not ranked by score", "not the 3 skills with the highest cosine"),
    (overrides_none, "overrides the model", "the model declined"),
    (similarity_decides, "overrides the model", "return the skill the model chose"),
    (no_model, "no model call", "never asked the model"),
    (asks_each_skill, "several model calls", "asked the model 3 times for one decision"),
    (estimated_tokens, "tokens not counted", "the backend counted"),
    (tokens_plus_embedding, "tokens not counted", "not an estimate or a sum"),
    (model_seconds_only, "seconds", "time the whole decision"),
    (reads_the_global_loader, "globals", "reads the notebook's `WORKPLACE`"),
    (shrinks_the_loader, "changed the loader", "changed the loader it was given"),
    (text_only, "no tool", "declared no function"),
    (pick_hybrid, "the course's solution", "is the course's own, imported from course_utils.selection.pick"),
    (calls_the_course_solution, "the course's solution", "calls the course's own `pick_hybrid`"),
    (caches_by_query, "cached", "asked it when the same query came with k=3"),
    (partitions_at_k, "crash", "a k at or above the catalog's size keeps the whole catalog"),
    (adds_a_fixed_embedding_time, "seconds", "do not add a figure"),
    (rebuilds_the_selector, "rebuilds the selector", "built a new SimilaritySelector"),
    (embeds_descriptions_each_call, "rebuilds the selector", "embedded 8 skill descriptions for one decision"),
    (embeds_the_query_twice, "query embedding", "embedded 2 texts for one decision (2 of them the query)"),
    (keeps_every_tie, "tie", "room-booking and catalog-search tie for place 2"),
    (ignores_k_zero, "k=0", "returned None instead of raising"),
    (fails_at_k_zero, "k=0", "raised IndexError"),
]


def reset():
    """Forget what the solutions that remember have kept (so each check starts afresh)."""
    _DECIDED.clear()


def _workplace():
    from course_utils.skills.skill import SkillLoader

    return SkillLoader.from_root(WORKPLACE_ROOT)


WORKPLACE = _workplace()


# ----------------------------------------------------------------- the stretch tasks, right and wrong


def choose_k_right(selector, queries):
    positives = [q for q in queries if q.expected is not None]
    rows = selector.scores([q.query for q in positives])
    ranks = [1 + int(np.sum(row > row[selector.names.index(q.expected)])) for q, row in zip(positives, rows)]
    return max(ranks)


def choose_k_largest(selector, queries):
    return len(selector.names)


def choose_k_top1(selector, queries):
    return 1


def skip_right(client, loader, selector, query, k=3, margin=0.1):
    start = time.perf_counter()
    row = selector.scores([query])[0]
    first, second = np.sort(row)[::-1][:2]
    if first - second >= margin:
        return Decision(selector.names[int(np.argmax(row))], 0, time.perf_counter() - start)
    names = [selector.names[i] for i in np.argsort(-row)[:k]]
    return dataclasses.replace(pick_by_model(client, loader.subset(names), query), seconds=time.perf_counter() - start)


def skip_ignores_margin(client, loader, selector, query, k=3, margin=0.1):
    return skip_right(client, loader, selector, query, k, margin=0.1)


def skip_never(client, loader, selector, query, k=3, margin=0.1):
    return right_with_pick_by_model(client, loader, selector, query, k)


def mentions_right(client, loader, selector, query, k=3):
    from course_utils.selection.pick import explicit_skill

    return explicit_skill(loader, query) or pick_hybrid(client, loader, selector, query, k)


def mentions_after_the_model(client, loader, selector, query, k=3):
    from course_utils.selection.pick import explicit_skill

    decision = pick_hybrid(client, loader, selector, query, k)
    return explicit_skill(loader, query) or decision


def mentions_slash_only(client, loader, selector, query, k=3):
    word = query.split()[0]
    if word.startswith("/") and word[1:] in loader.skills:
        return Decision(word[1:])
    return pick_hybrid(client, loader, selector, query, k)

"""The same request gets the same answer on the local backend, whatever ran before it.

llama.cpp reuses the KV cache of the previous prompt, and a token's values depend on the batch it
was computed in; `course_utils.backend.local.llm` computes every prompt in pieces cut at checkpoints that
depend on the text alone (see its docstring). These tests check the rendering and the checkpoints
without a model, and the decisions with the real model: forward, reversed, and in fresh processes that
compute the catalog or restore it from disk.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from course_utils.backend.local.llm import MIN_PIECE_CHARS, render_chatml
from course_utils.paths import DATA_DIR, SKILLS_DIR


def test_rendering_is_qwens_chatml_with_tool_turns_grouped():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
                {"role": "assistant", "content": '{"name": "f", "arguments": {}}'},
                {"role": "tool", "content": "R1"}, {"role": "tool", "content": "R2"}]
    text, cuts = render_chatml(messages)
    assert text == ("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n"
                    '<|im_start|>assistant\n{"name": "f", "arguments": {}}<|im_end|>\n'
                    "<|im_start|>user\n<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n</tool_response>"
                    "<|im_end|>\n<|im_start|>assistant\n")
    assert [text[:c].endswith("<|im_end|>\n") for c in cuts] == [True] * 4  # one per turn, tools grouped
    assert cuts[-1] == len(text) - len("<|im_start|>assistant\n")


def test_checkpoints_depend_on_the_text_before_them_only():
    """A long system message is cut at paragraph breaks; the cuts of a shared beginning do not
    depend on what follows it (so two catalogs with the same instructions share those pieces)."""
    paragraph = "word " * (MIN_PIECE_CHARS // 5) + "\n\n"
    first, cuts_a = render_chatml([{"role": "system", "content": paragraph * 3 + "catalog A"},
                                   {"role": "user", "content": "q"}])
    second, cuts_b = render_chatml([{"role": "system", "content": paragraph * 3 + "another catalog"},
                                    {"role": "user", "content": "q"}])
    shared = [c for c in cuts_a if c <= len("<|im_start|>system\n") + 3 * len(paragraph)]
    assert len(shared) == 3 and shared == cuts_b[:3]
    assert all(first[:c] == second[:c] for c in shared)
    assert all(b - a >= MIN_PIECE_CHARS for a, b in zip([0, *cuts_a], cuts_a[:3]))


@pytest.fixture(scope="module")
def workplace():
    from course_utils.queries import load_queries
    from course_utils.skills import SkillLoader

    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    return loader, [q.query for q in load_queries(DATA_DIR / "trigger_eval.yaml", loader.names)]


def _decide(client, loader, queries):
    from course_utils.selection import pick_by_model

    return [(d.skill, d.prompt_tokens, d.error) for d in (pick_by_model(client, loader, q) for q in queries)]


FRESH_PROCESS = """
import json, sys
from course_utils.backend.client import make_client
from course_utils.backend.local.llm import get_llm
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader

llm, computed = get_llm(), []
complete = llm._complete
llm._complete = lambda request: computed.append(complete(request)) or computed[-1]
client, loader = make_client("local", verbose=False), SkillLoader.from_root(sys.argv[1])
decisions = [(d.skill, d.prompt_tokens, d.error) for d in (pick_by_model(client, loader, q) for q in json.loads(sys.argv[2]))]
print(json.dumps({"decisions": decisions, "computed_tokens": sum(r["timings"]["prompt_n"] for r in computed)}))
"""


def _fresh_process(queries: list[str], prefix_folder) -> dict:
    """Decide `queries` in a new Python process whose saved prompt prefixes live in `prefix_folder`."""
    from course_utils.backend.local.prefixes import PREFIX_DIR_ENV

    run = subprocess.run([sys.executable, "-c", FRESH_PROCESS, str(SKILLS_DIR / "workplace"), json.dumps(queries)],
                         capture_output=True, text=True, timeout=600, check=True,
                         env={**os.environ, PREFIX_DIR_ENV: str(prefix_folder)})
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.model
def test_queries_decide_the_same_forward_reversed_and_in_fresh_processes(local_client, workplace, tmp_path):
    """Every third query of the English test set (10 of 30, triggers and declines): forward, reversed, and
    three of them in two fresh processes: the first computes the catalog (its cold prompt is most of the
    test's time) and saves it, the second restores it from disk (`backend.local.prefixes`)."""
    loader, queries = workplace
    queries = queries[::3]
    forward = _decide(local_client, loader, queries)
    backward = _decide(local_client, loader, queries[::-1])[::-1]
    assert forward == backward
    picked = (6, 1, 9)  # fresh processes, starting with a query from the middle
    sample, expected = [queries[i] for i in picked], [list(forward[i]) for i in picked]
    computing = _fresh_process(sample, tmp_path)
    assert computing["decisions"] == expected
    assert computing["computed_tokens"] > expected[0][1]  # the whole first prompt, and more
    assert len(list(tmp_path.glob("*.kv"))) == 1  # the catalog, saved once computed
    restoring = _fresh_process(sample, tmp_path)
    assert restoring["decisions"] == expected
    assert restoring["computed_tokens"] < expected[0][1] // 4  # the catalog was restored, not computed


@pytest.mark.model
def test_the_shared_prefix_is_reused_between_decisions(local_client, workplace):
    """Determinism does not cost the cache: a second decision computes only its query, the header and the call's
    given opening (``selection_decode``)."""
    from course_utils.backend.local.llm import get_llm
    from course_utils.selection import pick_by_model

    loader, queries = workplace
    pick_by_model(local_client, loader, queries[0])
    llm, seen = get_llm(), []
    original = llm._complete
    llm._complete = lambda request: seen.append((request, original(request))) or seen[-1][1]
    try:
        decision = pick_by_model(local_client, loader, queries[1])
    finally:
        del llm._complete
    answering = [response["timings"] for request, response in seen if "grammar" in request]
    first = answering[0]
    assert first["cache_n"] + first["prompt_n"] == decision.prompt_tokens
    assert first["prompt_n"] <= 5  # only the assistant header (and no piece of the system prompt) is new
    assert all(later["prompt_n"] <= 16 for later in answering[1:])  # then at most the call's opening, given
    assert sum(response["timings"]["prompt_n"] for _, response in seen) < 140  # the catalog was not computed again

"""The same request gets exactly the same answer on the local backend, whatever ran before it.

llama.cpp reuses the KV cache of the previous prompt, and a token's values depend on the batch it
was computed in; `course_utils.backend.local.llm` computes every prompt in pieces cut at checkpoints that
depend on the text alone (see its docstring). Without the model, these tests check the rendering and the
checkpoints. With the model, they check the two requests the course makes of a query, compared exactly:

- its *decision* (lesson 06, `pick_by_model`): the whole greedy answer, an `activate_skill` call's name and
  arguments or a text, and its finish reason;
- its *reading* (lesson 08, `confidence`): the answer tokens up to its decision point (`backend.facts`), each with its
  log-probability and its `TOP_CANDIDATES` most likely candidates with theirs.

10 development queries (every ninth of data/dev: 5 English, 5 French; calls and a text answer) are asked in
a reference order (forward, each decision then its reading), then again in reverse order after each of
three other histories: a decision on another catalog (the bakery's: another system message), a sampled
request of the same query (temperature 1, a seed), and a multi-turn run (the same query, an
`activate_skill` call, its response, then the model's text). After each history the decision is asked
first for half the queries and the reading for the other half. All 30 decisions and 30 readings asked after
those histories equal the reference ones, log-probabilities to the last bit. Two fresh processes ask two
bakery requests: the first computes the bakery catalog and saves it, the second restores it from disk
(`backend.local.prefixes`); both get exactly the decisions and readings this process got.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from helpers.chat_models import render_qwen
from helpers.paths import TESTS_DIR

from course_utils.skills.paths import DATA_DIR, SKILLS_DIR


def test_checkpoints_are_message_ends_only():
    """A long system message with paragraph breaks is one piece: the prompt is cut where a message ends, nowhere
    else, so the same messages are always computed in the same pieces."""
    long = ("word " * 120 + "\n\n") * 3
    text, cuts = render_qwen([{"role": "system", "content": long}, {"role": "user", "content": "q"}])
    assert len(cuts) == 2 and all(text[:c].endswith("<|im_end|>\n") for c in cuts)


# ----------------------------------------------------------------- the two requests, as the course makes them


def decide(client, loader, query: str) -> dict[str, Any]:
    """A query's decision as `pick_by_model` makes it (greedy, capped as `backend.facts` says): the whole answer."""
    from course_utils.selection.pick import pick_by_model

    candidate = pick_by_model(client, loader, query).raw.candidates[0]
    parts = (candidate.content.parts if candidate.content else None) or []
    return {"parts": [part.model_dump(mode="json", exclude_none=True) for part in parts],
            "finish": candidate.finish_reason.name}


def read(client, loader, query: str) -> dict[str, Any]:
    """A query's reading as `confidence.decline_probabilities` asks it: the first answer tokens, each with its
    log-probability and its top candidates with theirs (token, token id, log-probability)."""
    from course_utils.backend.facts import GRAMMAR_DECISION_POINT
    from course_utils.selection.confidence import TOP_CANDIDATES
    from course_utils.selection.pick import pick_by_model

    decision = pick_by_model(client, loader, query, max_output_tokens=GRAMMAR_DECISION_POINT.tokens,
                             logprobs=TOP_CANDIDATES)
    return decision.raw.candidates[0].logprobs_result.model_dump(mode="json", exclude_none=True)


def ask(client, loader, query: str, reading_first: bool = False) -> dict[str, Any]:
    """A query's decision and its reading, in that order unless `reading_first`."""
    if reading_first:
        reading = read(client, loader, query)
        return {"decision": decide(client, loader, query), "reading": reading}
    return {"decision": decide(client, loader, query), "reading": read(client, loader, query)}


# ----------------------------------------------------------------- other histories to ask them after


@dataclass(frozen=True)
class Catalogs:
    workplace: Any  # SkillLoader
    queries: list  # the development queries compared (LabelledQuery)
    bakery: Any  # SkillLoader
    requests: list  # the bakery's development requests (BakeryRequest)


@pytest.fixture(scope="module")
def catalogs() -> Catalogs:
    from course_utils.evaluation.bakery_eval import load_requests
    from course_utils.skills.queries import load_queries
    from course_utils.skills.skill import SkillLoader

    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q for name in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / name, workplace.names)]
    return Catalogs(workplace, queries[::9], SkillLoader.from_root(SKILLS_DIR / "bakery"), load_requests(split="dev"))


def _run(client, loader, contents, policies=(), **options) -> Any:
    """One model turn of an agent run on `loader`'s catalog with `activate_skill` (a text answer ends it)."""
    from course_utils.loop.agent import RunOptions, run_agent
    from course_utils.selection.pick import ACTIVATE

    return run_agent(client, contents, system_instruction=loader.system_instruction(function=ACTIVATE),
                     declarations=loader.tool(ACTIVATE).function_declarations, policies=policies,
                     options=RunOptions(max_turns=1, **options))


def another_catalog(client, catalogs: Catalogs, query, index: int) -> None:
    """A decision on the bakery's catalog: another system message."""
    decide(client, catalogs.bakery, catalogs.requests[index % len(catalogs.requests)].text)


def sampled(client, catalogs: Catalogs, query, index: int) -> None:
    """The same query sampled (temperature 1, seeded): the same prompt, followed by another answer."""
    _run(client, catalogs.workplace, query.query, temperature=1.0, seed=index, max_output_tokens=6)


def multi_turn(client, catalogs: Catalogs, query, index: int) -> None:
    """The same query, an `activate_skill` call and its response, then the model's text (the skill's turn)."""
    from course_utils.selection.pick import ACTIVATE
    from course_utils.loop.tool_policy import OneStepAtATime

    name = query.expected or catalogs.workplace.names[index % len(catalogs.workplace.names)]
    history = [types.Content(role="user", parts=[types.Part.from_text(text=query.query)]),
               types.Content(role="model", parts=[types.Part.from_function_call(name=ACTIVATE, args={"name": name})]),
               types.Content(role="user", parts=[types.Part.from_function_response(
                   name=ACTIVATE, response={"result": f'The skill "{name}" is active. Answer the user now.'})])]
    # The harness's policy: a selection made is not offered again, so the skill's turn is text (NONE).
    result = _run(client, catalogs.workplace, history, max_output_tokens=4, policies=[OneStepAtATime()])
    assert [c.role for c in result.history] == ["user", "model", "user", "model"]  # it answered after the response


HISTORIES = (another_catalog, sampled, multi_turn)


@pytest.mark.model
def test_answers_and_log_probabilities_do_not_depend_on_what_ran_before(local_client, catalogs):
    """Each query is asked in the reference order, then after each history; after a history, the decision comes
    first for half the queries and the reading for the other half, so each is asked right after every kind."""
    client, loader, queries = local_client, catalogs.workplace, catalogs.queries
    reference = [ask(client, loader, q.query) for q in queries]
    again: dict[str, list] = {history.__name__: [None] * len(queries) for history in HISTORIES}
    for i in reversed(range(len(queries))):
        for k, history in enumerate(HISTORIES):
            history(client, catalogs, queries[i], 3 * i + k)
            again[history.__name__][i] = ask(client, loader, queries[i].query, reading_first=(i + k) % 2 == 0)

    assert len(queries) * len(HISTORIES) == 30
    for asked, query in zip(reference, queries):  # the comparisons hold something: two tokens, 20 candidates each
        assert [len(top["candidates"]) for top in asked["reading"]["top_candidates"]] == [20, 20], query
    called = [any("function_call" in part for part in r["decision"]["parts"]) for r in reference]
    assert 0 < sum(called) < len(queries)  # both calls and text answers are compared
    differing = [(name, q.query, [what for what in first if first[what] != second[what]])
                 for name, asked in again.items()
                 for q, first, second in zip(queries, reference, asked) if first != second]
    assert differing == []  # the whole of every answer and every log-probability, not only the decisions


# ----------------------------------------------------------------- fresh processes: computed and restored catalogs


FRESH_PROCESS = """
import json, sys
sys.path[:0] = sys.argv[1].split("|")
from test_determinism import ask
from course_utils.backend.client import make_client
from course_utils.backend.local.llm import get_llm
from course_utils.skills.skill import SkillLoader
from test_determinism import RecordingServer

llm = get_llm()
llm.server = recording = RecordingServer(llm.server)
client, loader = make_client("local", verbose=False), SkillLoader.from_root(sys.argv[2])
asked = [ask(client, loader, request) for request in json.loads(sys.argv[3])]
print(json.dumps({"asked": asked, "computed_tokens": sum(r["timings"]["prompt_n"] for _, r in recording.completions)}))
"""


class RecordingServer:
    """A `LlamaServer` seen from outside: every completion goes through to it and is kept, with its request."""

    def __init__(self, server: Any) -> None:
        self.server, self.completions = server, []

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self.server.complete(request)
        self.completions.append((request, response))
        return response

    def __getattr__(self, name: str) -> Any:  # tokenize, slot, build: the server's own
        return getattr(self.server, name)


def _fresh_process(requests: list[str], prefix_folder: Path) -> dict:
    """Ask `requests` of the bakery's catalog in a new Python process whose saved prompt prefixes live in
    `prefix_folder`; what it got, and how many prompt tokens it computed."""
    from course_utils.backend.local.prefixes import PREFIX_DIR_ENV

    paths = f"{Path(__file__).parent}|{TESTS_DIR}"  # this file (its `ask`) and the helpers it imports
    run = subprocess.run([sys.executable, "-c", FRESH_PROCESS, paths, str(SKILLS_DIR / "bakery"),
                          json.dumps(requests)], capture_output=True, text=True, timeout=600, check=True,
                         env={**os.environ, PREFIX_DIR_ENV: str(prefix_folder)})
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.model
def test_a_computed_and_a_restored_catalog_answer_as_this_process_does(local_client, catalogs, tmp_path):
    """Two bakery requests (a call and a text answer): the first fresh process computes the catalog (its cold
    prompt is most of the test's time) and saves it, the second restores it from disk."""
    from course_utils.selection.pick import pick_by_model

    requests = [catalogs.requests[0].text, next(r.text for r in catalogs.requests if r.skill is None)]
    here = [ask(local_client, catalogs.bakery, request) for request in requests]
    assert [list(asked["decision"]["parts"][0]) for asked in here] == [["function_call"], ["text"]]
    first_prompt = pick_by_model(local_client, catalogs.bakery, requests[0]).prompt_tokens
    computing = _fresh_process(requests, tmp_path)
    assert computing["asked"] == here
    assert computing["computed_tokens"] > first_prompt  # the whole first prompt, and more
    assert len(list(tmp_path.glob("*.kv"))) == 1  # the catalog, saved once computed
    restoring = _fresh_process(requests, tmp_path)
    assert restoring["asked"] == here
    assert restoring["computed_tokens"] < first_prompt // 4  # the catalog was restored, not computed


@pytest.mark.model
def test_the_shared_prefix_is_reused_between_decisions(local_client, catalogs):
    """Determinism does not cost the cache: a second decision computes only its query and the assistant header."""
    from course_utils.backend.local.llm import get_llm
    from course_utils.selection.pick import pick_by_model

    loader, queries = catalogs.workplace, [q.query for q in catalogs.queries]
    pick_by_model(local_client, loader, queries[0])
    llm = get_llm()
    llm.server = recording = RecordingServer(llm.server)
    try:
        decision = pick_by_model(local_client, loader, queries[1])
    finally:
        llm.server = recording.server
    seen = recording.completions
    answering = [response["timings"] for request, response in seen if "grammar" in request]
    first = answering[0]
    assert first["cache_n"] + first["prompt_n"] == decision.prompt_tokens
    assert first["prompt_n"] <= 5  # only the assistant header (and no piece of the system prompt) is new
    assert all(later["prompt_n"] <= 16 for later in answering[1:])  # then at most the call's opening, given
    assert sum(response["timings"]["prompt_n"] for _, response in seen) < 140  # the catalog was not computed again

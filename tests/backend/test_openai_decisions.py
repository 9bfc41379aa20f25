"""How decisions are asked of an OpenAI-compatible server (`course_utils.backend.structured`): native tools, a JSON
schema built from the same declarations, or `auto`; and the server's busy answers asked again.

The fake chat server of `openai_fakes` records what it is sent and answers what each test asks for.
"""
from __future__ import annotations

import threading

import pytest
from google.genai import errors
from helpers.openai_fakes import CALL, chat_server, content

from course_utils.selection import abstain
from course_utils.backend import openai_compatible
from course_utils.backend.client import make_client
from course_utils.backend.facts import LOCAL_DECISION_TOKENS
from course_utils.evaluation.outcomes import run_selector
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.selection.pick import Decision, pick_by_model
from course_utils.skills.skill import SkillLoader

LEAVE = '{"name":"activate_skill","arguments":{"name":"leave-balance-calculator"}}'
QUERY = "How many vacation days do I have left?"


@pytest.fixture
def server(monkeypatch):
    with chat_server(monkeypatch) as fake:
        yield fake


@pytest.fixture(scope="module")
def workplace() -> SkillLoader:
    return SkillLoader.from_root(SKILLS_DIR / "workplace")


def alternatives(sent: dict) -> list[dict]:
    """The alternatives of the schema a request constrains its answer to."""
    assert sent["response_format"]["type"] == "json_schema" and "tools" not in sent and "tool_choice" not in sent
    return sent["response_format"]["json_schema"]["schema"]["anyOf"]


def test_a_schema_decision_is_the_same_function_call_and_its_schema_is_the_catalogs_enum(server, workplace,
                                                                                         monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    server.answers = [(200, content(LEAVE)), (200, content('{"text":"Sure, here is a joke"}'))]
    client = make_client(verbose=False)
    decision = pick_by_model(client, workplace, QUERY)
    assert (decision.skill, decision.error, decision.prompt_tokens) == ("leave-balance-calculator", None, 345)
    assert decision.raw.function_calls[0].args == {"name": "leave-balance-calculator"}
    declined = pick_by_model(client, workplace, "Tell me a joke")
    assert (declined.skill, declined.error, declined.raw.text) == (None, None, "Sure, here is a joke")
    sent = server.requests[0]
    call, text = alternatives(sent)
    assert call["properties"]["name"] == {"const": "activate_skill"}
    assert call["properties"]["arguments"]["properties"]["name"]["enum"] == workplace.names
    assert text["required"] == ["text"]
    system = sent["messages"][0]["content"]
    assert "leave-balance-calculator" in system and system.endswith('{"text": <your reply>} to reply without '
                                                                    "calling one.")
    assert sent["max_tokens"] == LOCAL_DECISION_TOKENS  # the local backend's answers, the local backend's cap


def test_a_forced_choice_with_none_offers_none_and_no_text(server, workplace, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    server.answers = [(200, content('{"name":"activate_skill","arguments":{"name":"none"}}'))]
    decision = abstain.pick_with_none_option(make_client(verbose=False), workplace, "Will it rain tomorrow?")
    assert (decision.skill, decision.error) == (None, None)
    (call,) = alternatives(server.requests[0])  # mode ANY: a call, never text
    assert call["properties"]["arguments"]["properties"]["name"]["enum"] == [*workplace.names, "none"]


def test_a_text_answer_cut_short_with_spaces_is_still_no_skill(server, workplace, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    server.answers = [(200, content('{ "text": "I can help you with that. The', "length"))]
    decision = pick_by_model(make_client(verbose=False), workplace, QUERY)
    assert (decision.skill, decision.error, decision.raw.text) == (None, None, "I can help you with that. The")


def test_a_call_cut_short_is_no_decision_and_says_why(server, workplace, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    server.answers = [(200, content('{"name":"activate_skill","argum', "length"))]
    decision = pick_by_model(make_client(verbose=False), workplace, QUERY)
    assert decision.skill is None and decision.error == "the model's answer is empty (finish reason: MAX_TOKENS)"


CODE_BLOCK = '```json\n{"name": "activate_skill", "arguments": {"name": "leave-balance-calculator"}}\n```'


@pytest.mark.parametrize("first, reason", [
    ((200, content(CODE_BLOCK)), "its model wrote a call as text, not a tool call"),
    ((200, content("\n\n\n\n", "length")), "its model wrote a call as text, not a tool call"),
    ((400, {"error": {"message": "tools param requires --jinja flag"}}), "it refused tools: The server at"),
])
def test_auto_falls_back_to_the_schema_once_and_says_so_once(server, workplace, capsys, first, reason):
    server.answers = [first, (200, content(LEAVE))]
    client = make_client(verbose=False)
    decisions = [pick_by_model(client, workplace, QUERY) for _ in range(2)]
    assert [d.skill for d in decisions] == ["leave-balance-calculator"] * 2
    assert "tools" in server.requests[0] and [("response_format" in r) for r in server.requests[1:]] == [True, True]
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"COURSE_OPENAI_DECISION=auto: decisions go to "
                                                   f"{server.url.split('//')[1].removesuffix('/v1')} as schema "
                                                   f"({reason}")


def test_auto_keeps_tools_when_the_model_calls_and_a_plain_text_answer_settles_nothing(server, workplace, capsys):
    server.answers = [(200, content("I cannot help with the weather.")), (200, CALL)]
    client = make_client(verbose=False)
    skills = [pick_by_model(client, workplace, q).skill for q in ("Will it rain?", QUERY, QUERY)]
    assert skills == [None, "leave-balance-calculator", "leave-balance-calculator"]
    assert all("tools" in r and "response_format" not in r for r in server.requests) and len(server.requests) == 3
    assert capsys.readouterr().out.splitlines() == [
        f"COURSE_OPENAI_DECISION=auto: decisions go to {server.url.split('//')[1].removesuffix('/v1')} as tools "
        "(its model answered with a tool call)."]


def test_tools_asked_explicitly_never_fall_back(server, workplace, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "tools")
    server.answers = [(200, content(CODE_BLOCK))]
    decision = pick_by_model(make_client(verbose=False), workplace, QUERY)
    assert decision.skill is None and len(server.requests) == 1 and "tools" in server.requests[0]


def test_an_unknown_setting_is_refused_with_the_choices(server, monkeypatch):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "grammar")
    with pytest.raises(ValueError, match="COURSE_OPENAI_DECISION must be one of tools, schema, auto, got 'grammar'"):
        make_client(verbose=False)


def test_a_busy_server_is_asked_again_with_the_back_off_and_a_refusal_is_not(server, workplace, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(openai_compatible.time, "sleep", lambda s: s and slept.append(s))  # the fake server sleeps 0
    server.answers = [(503, {"error": {"message": "busy"}}), (429, {"error": {"message": "slow down"}}), (200, CALL)]
    client = make_client(verbose=False)
    assert pick_by_model(client, workplace, QUERY).skill == "leave-balance-calculator"
    assert len(server.requests) == 3 and slept == [2.0, 4.0]
    server.answers = [(500, {"error": {"message": "model not found"}})]
    with pytest.raises(errors.ServerError, match="500 REFUSED.*model not found"):
        pick_by_model(client, workplace, QUERY)
    assert len(server.requests) == 4


# ----------------------------------------------------------------- llama.cpp's own server, two slots (model tier)

DEV_QUERIES = DATA_DIR / "dev" / "trigger_dev.yaml"
EVERY = 3
"""The model test decides every third dev query (15 of 45) twice, on the server and in-process: about a minute on
two cores. The whole file's agreement, with the commands, is in docs/lab/local-models.md."""


@pytest.mark.model
@pytest.mark.timeout(600)
def test_schema_decisions_on_llama_cpps_server_agree_with_the_local_backend_and_a_killed_server_loses_no_record(
        local_client, workplace, monkeypatch):
    from helpers.llama_server import llama_server_process

    queries = load_queries(DEV_QUERIES, workplace.names)[::EVERY]
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    monkeypatch.setenv("COURSE_OPENAI_MODEL", "qwen2.5-coder-1.5b")
    with llama_server_process(slots=2) as (url, process):
        monkeypatch.setenv("COURSE_OPENAI_BASE_URL", url)
        client = make_client("openai", verbose=False)
        served = run_selector(lambda q: pick_by_model(client, workplace, q, temperature=0.0), queries,
                              progress=False, concurrency=2)
        local = run_selector(lambda q: pick_by_model(local_client, workplace, q), queries, progress=False)
        assert [o.error for o in served] == [None] * len(queries)
        agreed = sum(s.chosen == o.chosen for s, o in zip(served, local))
        print(f"llama-server (2 slots, schema, concurrency 2) and the in-process backend agree on {agreed} of "
              f"{len(queries)} dev queries")
        assert agreed >= 0.9 * len(queries)

        lock, answered = threading.Lock(), []

        def killed_after_two(query: str) -> Decision:
            decision = pick_by_model(client, workplace, query, temperature=0.0)
            with lock:
                answered.append(query)
                if len(answered) == 2:
                    process.kill()
            return decision

        outcomes = run_selector(killed_after_two, queries[:6], progress=False, concurrency=2)
    assert [o.query for o in outcomes] == queries[:6]  # every record, in query order
    errors = [o.error for o in outcomes if o.error is not None]
    assert 2 <= len(outcomes) - len(errors) < 6 and errors
    assert all(e.startswith("503 UNREACHABLE: No server answers at") for e in errors), errors

"""The abstaining selectors (`course_utils.selection.abstain`) on the scripted stand-in: what each one asks, and how it
reads the answer. No model: the stand-in answers as its script says."""
from __future__ import annotations

import itertools

import httpx
import pytest
from google import genai
from google.genai import types

from course_utils.selection.abstain import (
    EXAMPLES, NONE, TECHNIQUES, pick_by_agreement, pick_with_examples, pick_with_gate, pick_with_none_option,
)
from course_utils.backend.client import LOCAL_BASE_URL
from course_utils.lessons.scripted import ScriptedBackend
from course_utils.skills.skill import SkillLoader
from course_utils.skills.paths import REPO_ROOT

WORKPLACE = SkillLoader.from_root(REPO_ROOT / "skills" / "workplace")
QUERY = "Book 3 days of leave for me in the HR tool."


def stand_in(script):
    backend = ScriptedBackend(list(WORKPLACE.skills.values()), {QUERY: [0.0] * len(WORKPLACE.skills)}, script)
    return backend, backend.client()


def declaration(exchange, index=0):
    return exchange.request["tools"][0]["functionDeclarations"][index]


def forced(exchange):
    return exchange.request["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"


@pytest.mark.parametrize("answer, skill", [(NONE, None), ("leave-balance-calculator", "leave-balance-calculator")])
def test_the_none_option_is_a_name_the_model_must_give(answer, skill):
    backend, client = stand_in(lambda query, offered, functions: answer)
    decision = pick_with_none_option(client, WORKPLACE, QUERY)
    assert (decision.skill, decision.error) == (skill, None)
    (exchange,) = backend.exchanges
    assert forced(exchange)
    assert declaration(exchange)["parameters"]["properties"]["name"]["enum"] == [*WORKPLACE.names, NONE]
    assert decision.prompt_tokens == exchange.prompt_tokens
    assert '"none" when no skill is made for the request' in str(exchange.request["systemInstruction"])


def test_the_reason_comes_before_the_name():
    backend, client = stand_in(lambda query, offered, functions: NONE)
    assert pick_with_none_option(client, WORKPLACE, QUERY, reason=True).skill is None
    parameters = declaration(backend.exchanges[0])["parameters"]
    # the SDK writes these schema fields in snake_case on the wire
    assert list(parameters["properties"]) == ["reason", "name"] == parameters["property_ordering"]
    assert parameters["properties"]["reason"]["max_length"] == 200


def text_answering_client() -> genai.Client:
    """A client whose backend answers in text whatever the tool_config asks (the stand-in obeys it)."""
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": "No skill."}]}, "finishReason": "STOP"}],
              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}}
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
    return genai.Client(api_key="text-only", http_options=types.HttpOptions(
        base_url=LOCAL_BASE_URL, httpx_client=httpx.Client(transport=transport, base_url=LOCAL_BASE_URL)))


def test_a_forced_call_that_does_not_come_is_an_error_not_a_none():
    decision = pick_with_none_option(text_answering_client(), WORKPLACE, QUERY)
    assert decision.skill is None and "required to call activate_skill" in decision.error


def test_the_gate_says_no_in_one_request():
    backend, client = stand_in(lambda query, offered, functions: "no" if functions == ["answer"] else "hr-policy-qa")
    decision = pick_with_gate(client, WORKPLACE, QUERY)
    assert (decision.skill, decision.error, len(backend.exchanges)) == (None, None, 1)
    assert forced(backend.exchanges[0]) and declaration(backend.exchanges[0])["name"] == "answer"


def test_the_gate_says_yes_then_a_forced_choice_picks():
    backend, client = stand_in(lambda query, offered, functions: "yes" if functions == ["answer"] else "hr-policy-qa")
    decision = pick_with_gate(client, WORKPLACE, QUERY)
    assert decision.skill == "hr-policy-qa" and len(backend.exchanges) == 2
    assert forced(backend.exchanges[1])
    assert NONE not in declaration(backend.exchanges[1])["parameters"]["properties"]["name"]["enum"]
    assert decision.prompt_tokens == sum(e.prompt_tokens for e in backend.exchanges)


def test_worked_examples_open_the_system_instruction_and_a_text_answer_declines():
    backend, client = stand_in(lambda query, offered, functions: None)
    decision = pick_with_examples(client, WORKPLACE, QUERY)
    assert (decision.skill, decision.error) == (None, None)
    assert EXAMPLES in backend.exchanges[0].request["systemInstruction"]["parts"][0]["text"]
    assert "toolConfig" not in backend.exchanges[0].request  # the seed's selector: declining is answering in text
    assert not any(name in EXAMPLES for name in WORKPLACE.names)  # the examples come from another domain


def test_agreement_activates_only_what_every_run_names():
    backend, client = stand_in(lambda query, offered, functions: "hr-policy-qa")
    assert pick_by_agreement(client, WORKPLACE, QUERY, runs=3).skill == "hr-policy-qa"
    assert len(backend.exchanges) == 3
    assert all(e.request["generationConfig"]["temperature"] == 0.7 for e in backend.exchanges)
    answers = itertools.cycle(["hr-policy-qa", "hr-policy-qa", "leave-balance-calculator"])
    backend, client = stand_in(lambda query, offered, functions: next(answers))
    decision = pick_by_agreement(client, WORKPLACE, QUERY, runs=3)
    assert decision.skill is None and decision.prompt_tokens == sum(e.prompt_tokens for e in backend.exchanges)


def test_every_technique_is_a_selector_by_name():
    for name, technique in TECHNIQUES.items():
        backend, client = stand_in(lambda query, offered, functions: NONE if "answer" not in functions else "no")
        decision = technique(client, WORKPLACE, QUERY)
        assert decision.skill is None, name

"""A greedy selection's answer decodes only the model's choices (backend/local/selection_decode.py)."""
from __future__ import annotations

import json

import pytest

from course_utils.backend.local.app import build_prompt, parse_declaration
from course_utils.backend.local.llm import DEFAULT_MAX_OUTPUT_TOKENS, Completion
from course_utils.backend.local.selection_decode import END_TOKENS, decode_selection, selection_of

ACTIVATE = {"name": "activate_skill", "description": "Activate a skill.", "parameters": {
    "type": "OBJECT", "required": ["name"],
    "properties": {"name": {"type": "STRING", "enum": ["email-tone-rewriter", "email-triage", "okr-drafter"]}}}}
CALENDAR = {"name": "check_calendar", "description": "Free slots.", "parameters": {
    "type": "OBJECT", "required": ["day"], "properties": {"day": {"type": "STRING"}}}}
GREEDY = {"temperature": None, "max_tokens": None, "seed": None, "top_logprobs": None, "top_p": None, "top_k": None}
CALL = '{"name":"activate_skill","arguments":{"name":"%s"}}'


class ScriptedLLM:
    """Decodes greedily towards a fixed answer, 3 characters a token, and records each request."""

    def __init__(self, answer: str) -> None:
        self.answer, self.requests = answer, []

    def chat(self, messages, *, grammar=None, prefix="", max_tokens=None, **options) -> Completion:
        self.requests.append({"grammar": grammar, "prefix": prefix, "max_tokens": max_tokens, **options})
        assert self.answer.startswith(prefix), "a given prefix the model would not have written"
        rest = self.answer[len(prefix):]
        decoded = rest if max_tokens is None else rest[:3 * max_tokens]
        cut = len(decoded) < len(rest)  # stopped by the cap: no end token
        return Completion(text=prefix + decoded, prompt_tokens=100, completion_tokens=-(-len(decoded) // 3) + (not cut),
                          finish_reason="length" if cut else "stop", cached_tokens=90)

    def token_count(self, text: str) -> int:
        return -(-len(text) // 3)

    def count_tokens(self, messages) -> int:
        return 100


def _selection(allow_text: bool = True):
    return selection_of([parse_declaration(ACTIVATE)], allow_text)


def test_a_selection_is_one_function_whose_one_required_argument_is_listed() -> None:
    selection = _selection()
    assert selection.opening == '{"name":"activate_skill","arguments":{"name":"'
    assert selection.endings == ('email-tone-rewriter"}}', 'email-triage"}}', 'okr-drafter"}}')
    assert selection_of([parse_declaration(ACTIVATE), parse_declaration(CALENDAR)], True) is None  # two functions
    assert selection_of([parse_declaration(CALENDAR)], True) is None  # a free string: not a choice among values
    optional = {**ACTIVATE, "parameters": {**ACTIVATE["parameters"], "required": []}}
    assert selection_of([parse_declaration(optional)], True) is None  # {"arguments":{}} would be valid too


def test_build_prompt_marks_a_first_turn_selection_and_nothing_else() -> None:
    user = [{"role": "user", "parts": [{"text": "Rewrite this email."}]}]
    selection = build_prompt({"tools": [{"functionDeclarations": [ACTIVATE]}], "contents": user}).selection
    assert selection is not None and selection.allow_text
    both = {"tools": [{"functionDeclarations": [ACTIVATE, CALENDAR]}], "contents": user}
    assert build_prompt(both).selection == selection  # before any call only the selection or a text (guards)
    call = {"functionCall": {"name": "activate_skill", "args": {"name": "okr-drafter"}}}
    result = {"functionResponse": {"name": "activate_skill", "response": {"result": "…"}}}
    loaded = user + [{"role": "model", "parts": [call]}, {"role": "user", "parts": [result]}]
    assert build_prompt({**both, "contents": loaded}).selection is None  # then check_calendar or a text: no selection
    assert build_prompt({"contents": user}).selection is None  # no tools, no grammar


@pytest.mark.parametrize("skill", ["email-tone-rewriter", "email-triage", "okr-drafter"])
def test_a_call_decodes_the_opening_choice_then_the_value_until_one_is_left(skill: str) -> None:
    llm = ScriptedLLM(CALL % skill)
    completion = decode_selection(llm, [], "root ::= whole", _selection(), GREEDY)
    assert completion.text == CALL % skill
    assert completion.completion_tokens == llm.token_count(CALL % skill) + END_TOKENS
    assert completion.prompt_tokens == 100 and completion.cached_tokens == 90
    first, *steps = llm.requests
    assert first["grammar"] == "root ::= whole" and first["max_tokens"] == 2 and first["prefix"] == ""
    assert all(step["max_tokens"] == 1 and step["prefix"].startswith(_selection().opening) for step in steps)
    assert not first.get("resume") and all(step["resume"] for step in steps)  # each step continues the last one's cache
    # 'ema' leaves two values: one more token ('il-') is not enough, a third ('ton' or 'tri') parts them
    assert len(steps) == (3 if skill.startswith("email") else 1)
    assert json.loads(steps[0]["grammar"].removeprefix("root ::= ").split(" | ")[0]) == 'email-tone-rewriter"}}'
    if skill.startswith("email"):
        assert "okr" not in steps[1]["grammar"]  # only the values still possible are offered


def test_a_text_answer_goes_on_from_its_first_two_tokens() -> None:
    llm = ScriptedLLM('{"text":"Hello, how can I help?"}')
    completion = decode_selection(llm, [], "root ::= whole", _selection(), GREEDY)
    assert completion.text == '{"text":"Hello, how can I help?"}'
    first, rest = llm.requests
    assert first["max_tokens"] == 2 and not first.get("resume")
    # the rest continues the first request: its two tokens given, the grammar of the rest of a text, the cap less two
    assert rest["resume"] and rest["prefix"] == '{"text' and rest["max_tokens"] == DEFAULT_MAX_OUTPUT_TOKENS - 2
    assert rest["grammar"].startswith("%llguidance") and '"\\":"' in rest["grammar"]
    assert completion.completion_tokens == llm.token_count('{"text":"Hello, how can I help?"}') + 1


def test_a_text_opened_otherwise_is_decoded_whole_again() -> None:
    """Two tokens that already enter the string ('{"text":"Hel') leave no grammar for the rest: one request decodes it."""
    class WideTokens(ScriptedLLM):
        def chat(self, messages, **options):
            completion = super().chat(messages, **options)
            if options.get("max_tokens") == 2:
                return Completion('{"text":"Hel', 100, 2, "length", 90)
            return completion

    llm = WideTokens('{"text":"Hello"}')
    assert decode_selection(llm, [], "root ::= whole", _selection(), GREEDY).text == '{"text":"Hello"}'
    assert [r["max_tokens"] for r in llm.requests] == [2, None] and not llm.requests[1].get("resume")


def test_without_text_the_call_is_given_at_once() -> None:
    llm = ScriptedLLM(CALL % "okr-drafter")
    assert decode_selection(llm, [], "g", _selection(allow_text=False), GREEDY).text == CALL % "okr-drafter"
    assert [r["max_tokens"] for r in llm.requests] == [1]
    assert llm.requests[0]["resume"] is False  # a decision's first request never continues another's answer


def test_a_call_longer_than_the_cap_is_decoded_as_the_ordinary_path_cuts_it() -> None:
    llm = ScriptedLLM(CALL % "okr-drafter")  # 60 characters: 20 tokens, and the end token
    fits = decode_selection(llm, [], "root ::= whole", _selection(), {**GREEDY, "max_tokens": 21})
    assert fits.text == CALL % "okr-drafter" and fits.finish_reason == "stop" and fits.completion_tokens == 21
    llm.requests.clear()
    cut = decode_selection(llm, [], "root ::= whole", _selection(), {**GREEDY, "max_tokens": 19})
    assert llm.requests[-1] == {**GREEDY, "grammar": "root ::= whole", "prefix": "", "max_tokens": 19}
    assert cut.finish_reason == "length" and cut.text == (CALL % "okr-drafter")[:57]


@pytest.mark.parametrize("options", [{"temperature": 0.7, "seed": 3}, {"top_logprobs": 5}, {"max_tokens": 1}])
def test_sampled_answers_logprobs_and_short_caps_take_the_ordinary_path(options: dict) -> None:
    llm = ScriptedLLM(CALL % "okr-drafter")
    completion = decode_selection(llm, [], "root ::= whole", _selection(), {**GREEDY, **options})
    assert len(llm.requests) == 1 and llm.requests[0]["grammar"] == "root ::= whole"
    assert llm.requests[0]["prefix"] == "" and completion.text.startswith(CALL[:3 * (options.get("max_tokens") or 7)])


@pytest.mark.model
@pytest.mark.parametrize("query", ["Please make this email to my manager sound less blunt.", "What is 2 + 2?"])
def test_on_the_local_model_both_paths_give_the_same_answer_and_token_counts(local_client, monkeypatch, query) -> None:
    """The record of scripts/check_selection_decode.py covers the 90 dev queries; this keeps one call and one text."""
    import course_utils.backend.local.app as app
    from google.genai import types

    config = types.GenerateContentConfig(
        system_instruction="Call activate_skill when a skill fits the request; otherwise answer in text.",
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration.model_validate(ACTIVATE)])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))

    def answer():
        response = local_client.models.generate_content(model="gemini-2.5-flash", contents=query, config=config)
        usage = response.usage_metadata
        parts = [part.model_dump(exclude_none=True) for part in response.candidates[0].content.parts]
        return parts, usage.prompt_token_count, usage.candidates_token_count

    given = answer()
    assert ("function_call" in str(given[0])) == query.startswith("Please")  # both paths exercised
    monkeypatch.setattr(app, "selection_of", lambda offered, allow_text: None)
    assert answer() == given

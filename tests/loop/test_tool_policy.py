"""The harness's policies (`course_utils.loop.tool_policy`) and the tool_config contract both backends obey."""
from __future__ import annotations

import json

import pytest
from google import genai
from google.genai import errors, types

from course_utils.selection.abstain import NONE
from course_utils.loop.agent import RunOptions, build_harness, format_event, run_agent
from course_utils.loop.bakery import ASSISTANT_PREAMBLE, bakery_tools, check_calendar_declaration
from course_utils.skills.paths import SKILLS_DIR
from course_utils.lessons.scripted import ScriptedBackend
from course_utils.skills.skill import SkillLoader
from course_utils.loop.tool_policy import (Call, Fixed, Mode, OneStepAtATime, Policy, RefuseRepeats, StopAt, describe,
                                      repeat_note, selection_values, tool_config)

BAKERY = SkillLoader.from_root(SKILLS_DIR / "bakery")
LOAD = BAKERY.function_declaration()
LOAD_OR_NONE = BAKERY.function_declaration(none=NONE)
CALENDAR = check_calendar_declaration()
QUERY = "A chocolate cake for 12 guests on Friday, please."
FRIDAY = {"day": "Friday", "line": "regular"}


def _history(*turns: tuple[str, dict, str]) -> list[types.Content]:
    """The user's request, then for each (function, arguments, result) a model call and its result."""
    history = [types.Content(role="user", parts=[types.Part.from_text(text=QUERY)])]
    for name, args, result in turns:
        history += [types.Content(role="model", parts=[types.Part.from_function_call(name=name, args=args)]),
                    types.Content(role="user", parts=[types.Part.from_function_response(
                        name=name, response={"result": result})])]
    return history


def _allowed(declarations: list[types.FunctionDeclaration], history: list[types.Content]) -> str | None:
    return describe(OneStepAtATime().tool_config(declarations, history))


def test_a_selection_has_an_enum_of_names_and_a_task_tool_is_not_one() -> None:
    assert selection_values(LOAD) == BAKERY.names and selection_values(CALENDAR) is None


def test_before_any_call_only_the_selection_is_offered() -> None:
    assert _allowed([LOAD, CALENDAR], _history()) == "VALIDATED [load_skill]"  # select, or answer in text
    assert _allowed([LOAD_OR_NONE, CALENDAR], _history()) == "ANY [load_skill]"  # "none" is how it declines
    assert _allowed([CALENDAR], _history()) is None  # no selection: the request's own tool_config


def test_a_selection_made_and_a_function_answered_are_not_offered_again() -> None:
    loaded = ("load_skill", {"name": "custom-cake-order"}, "The skill is now active…")
    assert _allowed([LOAD, CALENDAR], _history(loaded)) == "VALIDATED [check_calendar]"
    assert _allowed([LOAD, CALENDAR], _history(loaded, ("check_calendar", FRIDAY, "Free slots: 9:00"))) == "NONE"


def test_a_function_is_offered_after_one_failure_and_rests_after_two() -> None:
    loaded = ("load_skill", {"name": "custom-cake-order"}, "The skill is now active…")
    closed = ("check_calendar", {"day": "Sunday", "line": "regular"}, "Error: the bakery is closed on Sundays.")
    assert _allowed([LOAD, CALENDAR], _history(loaded, closed)) == "VALIDATED [check_calendar]"
    assert _allowed([LOAD, CALENDAR], _history(loaded, closed, closed)) == "NONE"
    recovered = _history(loaded, closed, closed, ("check_calendar", FRIDAY, "Free slots: 9:00"))
    assert _allowed([LOAD, CALENDAR], recovered) == "NONE"  # its latest call succeeded: its result is above


def test_with_nothing_withdrawn_the_request_keeps_its_own_tool_config() -> None:
    failed = ("check_calendar", FRIDAY, "Error: no such day")
    assert OneStepAtATime().tool_config([CALENDAR], _history(failed)) is None


def test_a_policy_with_no_say_answers_none_at_every_moment() -> None:
    silent = Policy()
    assert silent.tool_config([LOAD], _history()) is None
    assert silent.refusal(Call(1, "load_skill", {}), []) is None and silent.answer("load_skill", "ok") is None


def test_refuse_repeats_names_the_turn_of_the_first_identical_call() -> None:
    friday, saturday = Call(1, "check_calendar", FRIDAY), Call(2, "check_calendar", {**FRIDAY, "day": "Saturday"})
    again = Call(3, "check_calendar", dict(reversed(FRIDAY.items())))  # the same arguments in another order
    assert RefuseRepeats().refusal(again, [friday, saturday, Call(2, "check_calendar", FRIDAY)]) == \
        repeat_note("check_calendar", 1)
    assert RefuseRepeats().refusal(again, [Call(0, "check_calendar", FRIDAY)]) == repeat_note("check_calendar", 0)
    assert RefuseRepeats().refusal(again, [saturday, Call(1, "load_skill", FRIDAY)]) is None


def test_stop_at_ends_on_a_successful_result_of_its_tools_only() -> None:
    stop = StopAt(("cake_quote",))
    assert stop.answer("cake_quote", "A 24 cm cake. Shall I book it?") == "A 24 cm cake. Shall I book it?"
    assert stop.answer("cake_quote", "Error: no such flavour.") is None
    assert stop.answer("check_calendar", "Free slots: 9:00") is None


def test_fixed_sends_its_tool_config_every_turn() -> None:
    forced = tool_config(Mode.ANY, ["check_calendar"])
    assert Fixed(forced).tool_config([LOAD, CALENDAR], _history()) is forced
    loaded = ("load_skill", {"name": "custom-cake-order"}, "The skill is now active…")
    assert Fixed(forced).tool_config([LOAD, CALENDAR], _history(loaded)) is forced


# ----------------------------------------------------------------- the contract, on the scripted stand-in

def _stand_in(choice: str | None = "custom-cake-order") -> ScriptedBackend:
    return ScriptedBackend(list(BAKERY.skills.values()), {QUERY: [0.0] * len(BAKERY.skills)},
                           lambda query, offered, functions: choice)


CASES = [  # (mode, allowed names, the functions an answer may call, whether it may be text)
    (None, None, {"load_skill", "check_calendar"}, True),
    (Mode.AUTO, None, {"load_skill", "check_calendar"}, True),
    (Mode.ANY, None, {"load_skill", "check_calendar"}, False),
    (Mode.ANY, ["check_calendar"], {"check_calendar"}, False),
    (Mode.NONE, None, set(), True),
    (Mode.VALIDATED, None, {"load_skill", "check_calendar"}, True),
    (Mode.VALIDATED, ["check_calendar"], {"check_calendar"}, True),
]


def contract_config(mode: Mode | None, allowed: list[str] | None) -> types.GenerateContentConfig:
    calling = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=mode, allowed_function_names=allowed)) if mode else None
    return types.GenerateContentConfig(
        system_instruction=BAKERY.system_instruction(ASSISTANT_PREAMBLE),
        tools=[types.Tool(function_declarations=[LOAD, CALENDAR])], tool_config=calling, max_output_tokens=64,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))


def obeys(response: types.GenerateContentResponse, functions: set[str], text: bool) -> bool:
    """Whether one answer is what the contract allows: one call of an allowed function, or text where allowed."""
    calls = response.function_calls or []
    return ([c.name for c in calls] in [[f] for f in functions]) if calls else text


def send_contract(client: genai.Client, model: str) -> list[tuple[str | None, bool]]:
    """Each contract case sent to a client: (the tool_config, whether the answer obeyed it)."""
    results = []
    for mode, allowed, functions, text in CASES:
        config = contract_config(mode, allowed)
        response = client.models.generate_content(model=model, contents=QUERY, config=config)
        results.append((describe(config.tool_config), obeys(response, functions, text)))
    return results


def refused(client: genai.Client, model: str) -> list[str]:
    """The error messages of requests Gemini refuses: allowed names with AUTO, an undeclared allowed name."""
    messages = []
    for mode, allowed in ((Mode.AUTO, ["load_skill"]), (Mode.VALIDATED, ["read_file"])):
        with pytest.raises(errors.ClientError) as caught:
            client.models.generate_content(model=model, contents=QUERY, config=contract_config(mode, allowed))
        assert caught.value.code == 400
        messages.append(str(caught.value))
    return messages


@pytest.mark.parametrize("choice", ["custom-cake-order", "regular", None])
def test_the_scripted_stand_in_obeys_the_contract(choice: str | None) -> None:
    results = send_contract(_stand_in(choice).client(), "gemini-test")
    assert all(ok for _, ok in results), results


def test_the_scripted_stand_in_refuses_what_gemini_refuses() -> None:
    assert len(refused(_stand_in().client(), "gemini-test")) == 2


@pytest.mark.model
def test_the_local_model_obeys_the_same_contract() -> None:
    from course_utils.backend.client import make_client

    client = make_client()
    results = send_contract(client, "gemini-2.5-flash")
    assert all(ok for _, ok in results), results
    assert len(refused(client, "gemini-2.5-flash")) == 2


# ----------------------------------------------------------------- in the loop

def test_run_agent_sends_the_policy_each_turn_and_the_trace_shows_it() -> None:
    backend = _stand_in()
    harness = build_harness("on-demand", BAKERY, ASSISTANT_PREAMBLE, *bakery_tools())
    result = harness.run(backend.client(), QUERY, policies=[OneStepAtATime()], options=RunOptions(model="gemini-test"))
    sent = [json.dumps(e.request.get("toolConfig")) for e in backend.generations()]
    assert "VALIDATED" in sent[0] and '"load_skill"' in sent[0] and "check_calendar" not in sent[0]
    assert "load_skill" not in sent[1] and "check_calendar" in sent[1]
    trace = [format_event(e) for e in result.events if e.kind == "request"]
    assert "(VALIDATED [load_skill])" in trace[0] and "(VALIDATED [check_calendar" in trace[1]
    assert result.tool_calls == [("load_skill", {"name": "custom-cake-order"})]


def test_without_a_policy_the_request_carries_no_tool_config() -> None:
    backend = _stand_in(None)
    run_agent(backend.client(), QUERY, declarations=[LOAD], functions={}, options=RunOptions(model="gemini-test"))
    assert "toolConfig" not in backend.generations()[0].request


def test_the_first_policy_with_a_say_sets_the_turn_s_tool_config() -> None:
    backend = _stand_in()
    forced = tool_config(Mode.ANY, ["load_skill"])
    harness = build_harness("on-demand", BAKERY, ASSISTANT_PREAMBLE, *bakery_tools())
    result = harness.run(backend.client(), QUERY, policies=[OneStepAtATime(), Fixed(forced)],
                         options=RunOptions(model="gemini-test", max_turns=2))
    trace = [e.calling for e in result.events if e.kind == "request"]
    assert trace[0] == "VALIDATED [load_skill]" and trace[1].startswith("VALIDATED [check_calendar")

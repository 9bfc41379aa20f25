"""The tool loop, the three skill modes and the confined read_file tool.

Mechanics run on a scripted client (prepared `GenerateContentResponse`s, no model); the tests marked
`model` run the local backend.
"""
from __future__ import annotations

import copy
import inspect

import pytest
from google.genai import types

from course_utils.selection.abstain import NONE
from course_utils.loop.agent import (
    NONE_NOTE,
    ACTIVATION_NOTE, MODES, PREVIEW_CHARS, activating_loader, AgentResult, Event, MaxTurnsExceeded, RecordingClient,
    ReplayClient, ReplayMismatch, UntrustedSkillRoot,
    RunOptions, build_harness, format_event, load_trusted_skills, run_agent, run_tool,
)
from course_utils.loop.bakery import (ANSWERING_TOOLS, ASSISTANT_PREAMBLE, CAKE_REQUEST, bakery_tools, check_calendar,
                                 check_calendar_declaration)
from course_utils.evaluation.bakery_eval import skills_loaded
from course_utils.loop.files import ConfinedReader
from course_utils.skills.paths import REPO_ROOT, SKILLS_DIR
from course_utils.skills.skill import SkillLoader
from course_utils.skills.text import shorten
from course_utils.loop.tool_policy import Fixed, RefuseRepeats, StopAt, repeat_note

PREAMBLE = ASSISTANT_PREAMBLE
M = RunOptions(model="m")


# --------------------------------------------------------------------------- a scripted client


def _response(parts: list[types.Part], prompt_tokens: int) -> types.GenerateContentResponse:
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts))],
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=prompt_tokens,
                                                                  candidates_token_count=7),
    )


def call(tool: str, prompt_tokens: int = 100, /, **args) -> types.GenerateContentResponse:
    return _response([types.Part.from_function_call(name=tool, args=args)], prompt_tokens)


def text(answer: str, prompt_tokens: int = 100) -> types.GenerateContentResponse:
    return _response([types.Part.from_text(text=answer)], prompt_tokens)


class ScriptedClient:
    """Stands in for `genai.Client`: `client.models.generate_content` returns the prepared responses in order."""

    def __init__(self, *responses: types.GenerateContentResponse):
        self.responses = list(responses)
        self.requests: list[dict] = []
        self.models = self

    def generate_content(self, *, model, contents, config):
        self.requests.append({"model": model, "contents": copy.deepcopy(list(contents)), "config": config})
        return self.responses.pop(0)


def function_responses(content: types.Content) -> list[types.FunctionResponse]:
    return [p.function_response for p in content.parts if p.function_response]


@pytest.fixture(scope="module")
def bakery() -> SkillLoader:
    return SkillLoader.from_root(SKILLS_DIR / "bakery")


# --------------------------------------------------------------------------- the loop


def test_a_stop_tool_s_result_is_the_answer_and_ends_the_run():
    """`StopAt`: the model's next paraphrase is never asked for; the tool's text is the answer."""
    quote = {"reply": lambda order: f"Cake for {order}. Shall I book it?"}
    client = ScriptedClient(call("reply", 120, order="10 guests"), text("Here is a summary of your order.", 180))
    seen: list[Event] = []
    result = run_agent(client, "A cake?", options=M, functions=quote, policies=[StopAt(("reply",))],
                       callbacks=[seen.append])
    assert result.answer == "Cake for 10 guests. Shall I book it?" and result.turns == 1 and len(client.requests) == 1
    assert [(e.kind, e.turn) for e in seen] == [("request", 1), ("tool_start", 1), ("tool_end", 1), ("answer", 1)]
    assert function_responses(result.history[-1])[0].response == {"result": "Cake for 10 guests. Shall I book it?"}


def test_a_stop_tool_that_fails_or_no_stop_option_lets_the_loop_go_on():
    failing = {"reply": lambda order: "Error: no such order."}
    client = ScriptedClient(call("reply", 100, order="x"), text("Sorry, I could not price it."))
    assert run_agent(client, "A cake?", options=M, functions=failing, policies=[StopAt(("reply",))]).answer == \
        "Sorry, I could not price it."
    plain = {"reply": lambda order: "Cake. Shall I book it?"}
    client = ScriptedClient(call("reply", 100, order="x"), text("Here is a summary of your order."))
    assert run_agent(client, "A cake?", options=M, functions=plain).answer == "Here is a summary of your order."


def test_events_come_in_order_and_the_answer_ends_the_run():
    client = ScriptedClient(call("check_calendar", 120, day="2026-12-04", line="nut-free"), text("Friday works.", 180))
    seen: list[Event] = []
    result = run_agent(client, "When?", options=M, declarations=[check_calendar_declaration()],
                       functions={"check_calendar": check_calendar}, callbacks=[seen.append])
    assert isinstance(result, AgentResult)
    assert [(e.kind, e.turn) for e in seen] == [
        ("request", 1), ("tool_start", 1), ("tool_end", 1), ("request", 2), ("answer", 2)]
    assert seen == result.events
    assert result.answer == "Friday works." and seen[-1].output == "Friday works."
    assert result.prompt_tokens == [120, 180] and result.total_prompt_tokens == 300 and result.turns == 2
    assert seen[1].tool == "check_calendar" and seen[1].arguments == {"day": "2026-12-04", "line": "nut-free"}
    assert seen[2].output.startswith("2026-12-04 (Friday, in 4 days), nut-free line: free baking slots 05:00, 08:00")
    assert result.calls("check_calendar") == [{"day": "2026-12-04", "line": "nut-free"}]
    assert all(format_event(e) for e in seen)


def test_history_holds_the_call_and_its_result():
    client = ScriptedClient(call("check_calendar", day="2026-12-05", line="regular"), text("Yes."))
    result = run_agent(client, "Saturday?", options=M, functions={"check_calendar": check_calendar})
    user, model_turn, tool_turn, answer = result.history
    assert (user.role, model_turn.role, tool_turn.role, answer.role) == ("user", "model", "user", "model")
    assert model_turn.parts[0].function_call.name == "check_calendar"
    (response,) = function_responses(tool_turn)
    assert response.name == "check_calendar"
    assert response.response == {"result": check_calendar("2026-12-05", "regular")}
    # the second request re-sends everything before it
    assert client.requests[1]["contents"] == result.history[:3]


def test_the_request_config_disables_automatic_calling_and_carries_the_tools():
    client = ScriptedClient(text("Hello."))
    run_agent(client, "Hi", options=M, system_instruction="Be brief.", declarations=[check_calendar_declaration()])
    config = client.requests[0]["config"]
    assert config.automatic_function_calling.disable is True
    assert config.system_instruction == "Be brief."
    assert config.tools[0].function_declarations[0].name == "check_calendar"
    assert client.requests[0]["model"] == "m"


def test_unknown_tool_becomes_an_error_the_model_reads():
    client = ScriptedClient(call("book_cake", size="24 cm"), text("Sorry."))
    result = run_agent(client, "Book it", options=M, functions={"check_calendar": check_calendar})
    (response,) = function_responses(result.history[2])
    assert response.response["result"] == 'Error: unknown tool "book_cake". Available tools: check_calendar.'
    assert result.answer == "Sorry."


def test_failing_tool_becomes_an_error_the_model_reads():
    def broken(day: str) -> str:
        raise KeyError(day)

    client = ScriptedClient(call("broken", day="x"), call("check_calendar", day="Friday"), text("Done."))
    result = run_agent(client, "Go", options=M, functions={"broken": broken, "check_calendar": check_calendar})
    outputs = [e.output for e in result.events if e.kind == "tool_end"]
    assert outputs[0] == "Error: broken failed: KeyError: 'x'"
    assert outputs[1].startswith("Error: check_calendar failed: TypeError:") and "line" in outputs[1]
    assert result.answer == "Done."


def test_several_calls_in_one_turn_answer_in_one_user_turn():
    both = _response([types.Part.from_function_call(name="check_calendar", args={"day": "Friday", "line": "nut-free"}),
                      types.Part.from_function_call(name="check_calendar",
                                                    args={"day": "Saturday", "line": "regular"})],
                     90)
    result = run_agent(ScriptedClient(both, text("Two options.")), "Options?", options=M,
                       functions={"check_calendar": check_calendar})
    responses = function_responses(result.history[2])
    assert [r.response["result"][:10] for r in responses] == ["2026-12-04", "2026-12-05"]
    assert [e.kind for e in result.events] == ["request", "tool_start", "tool_end", "tool_start", "tool_end",
                                               "request", "answer"]


def test_max_turns_stops_a_loop_with_a_clear_error():
    client = ScriptedClient(*[call("check_calendar", day="Friday", line="regular") for _ in range(3)])
    with pytest.raises(MaxTurnsExceeded) as caught:
        run_agent(client, "Loop", functions={"check_calendar": check_calendar},
                  options=RunOptions(model="m", max_turns=3))
    error = caught.value
    assert "No text answer after 3 model calls" in str(error) and "max_turns" in str(error)
    assert error.result.turns == 3 and len(error.result.calls("check_calendar")) == 3
    assert client.responses == []  # exactly three model calls, no fourth


def test_record_then_replay_gives_the_same_run():
    script = [call("check_calendar", 100, day="Friday", line="nut-free"), text("Friday.", 150)]
    recorder = RecordingClient(ScriptedClient(*script))
    first = run_agent(recorder, "When?", options=M, functions={"check_calendar": check_calendar})
    replayed = run_agent(ReplayClient(recorder.exchanges), "When?", options=M,
                         functions={"check_calendar": check_calendar})
    assert replayed.events == first.events and replayed.history == first.history
    with pytest.raises(ReplayMismatch, match="request 1: the contents differ"):
        run_agent(ReplayClient(recorder.exchanges), "Other?", options=M, functions={"check_calendar": check_calendar})
    with pytest.raises(ReplayMismatch, match="request 2: the contents differ"):  # a different tool result
        run_agent(ReplayClient(recorder.exchanges), "When?", options=M,
                  functions={"check_calendar": lambda day, line: "x"})


def test_refusing_repeats_answers_a_repeated_call_with_a_note():
    ran = []

    def tool(day: str) -> str:
        ran.append(day)
        return f"slots on {day}"

    script = [call("tool", 10, day="Friday"), call("tool", 20, day="Friday"), call("tool", 30, day="Saturday"),
              text("ok", 40)]
    result = run_agent(ScriptedClient(*script), "Go", options=M, functions={"tool": tool}, policies=[RefuseRepeats()])
    outputs = [e.output for e in result.events if e.kind == "tool_end"]
    assert ran == ["Friday", "Saturday"]
    assert outputs[1] == shorten(repeat_note("tool", 1), PREVIEW_CHARS)
    assert "already called tool with these arguments at turn 1" in outputs[1]
    # a call already in the history passed in counts as earlier too
    history = result.history[:3]
    again = run_agent(ScriptedClient(call("tool", 50, day="Friday"), text("fine")), history, options=M,
                      functions={"tool": tool}, policies=[RefuseRepeats()])
    assert again.events[2].output == shorten(repeat_note("tool", 0), PREVIEW_CHARS)
    assert "earlier in this conversation" in repeat_note("tool", 0)
    # without the policy the plain loop runs every call
    ran.clear()
    run_agent(ScriptedClient(*script), "Go", options=M, functions={"tool": tool})
    assert ran == ["Friday", "Friday", "Saturday"]


def test_run_agent_takes_the_harness_as_policies_and_options_not_flags():
    """Eight parameters at most: policies and options are values, not one keyword per rule."""
    assert list(inspect.signature(run_agent).parameters) == [
        "client", "prompt", "system_instruction", "declarations", "functions", "policies", "options", "callbacks"]


def test_run_tool_directly():
    assert run_tool({}, "x", {}) == 'Error: unknown tool "x". Available tools: none.'
    assert run_tool({"f": lambda: {"a": 1}}, "f", {}) == {"a": 1}
    assert run_tool({"f": lambda: object}, "f", {}).startswith("<class")  # not JSON: sent as text


# --------------------------------------------------------------------------- skills through the loop


def test_a_load_call_puts_the_body_in_the_history(bakery):
    harness = build_harness("on-demand", bakery, PREAMBLE)
    client = ScriptedClient(call("load_skill", 500, name="custom-cake-order"), text("24 cm.", 900))
    result = harness.run(client, CAKE_REQUEST, options=M)
    (response,) = function_responses(result.history[2])
    body = bakery.skills["custom-cake-order"].body
    assert body in response.response["result"]
    assert 'source="bakery/custom-cake-order/SKILL.md"' in response.response["result"]
    # every later request carries it
    assert body in str(client.requests[1]["contents"])


def test_an_unknown_skill_name_lists_the_available_ones(bakery):
    harness = build_harness("on-demand", bakery, PREAMBLE)
    result = harness.run(ScriptedClient(call("load_skill", name="wedding-cake"), text("?")), "A wedding cake",
                         options=M)
    (response,) = function_responses(result.history[2])
    assert response.response["result"] == (
        'Error: unknown skill "wedding-cake". Available skills: '
        "allergen-info, catering-quote, custom-cake-order, opening-hours-and-pickup.")


def test_the_three_modes(bakery):
    tools = ([check_calendar_declaration()], {"check_calendar": check_calendar})
    harnesses = {mode: build_harness(mode, bakery, PREAMBLE, *tools) for mode in MODES}
    body = bakery.skills["custom-cake-order"].body
    everything, on_demand, files = harnesses["all"], harnesses["on-demand"], harnesses["filesystem"]
    assert all(s.body in everything.system_instruction for s in bakery.skills.values())
    assert [d.name for d in everything.declarations] == ["check_calendar"]
    assert body not in on_demand.system_instruction and bakery.catalog() in on_demand.system_instruction
    assert [d.name for d in on_demand.declarations] == ["load_skill", "check_calendar"]
    assert body not in files.system_instruction
    assert "(file: skills/bakery/custom-cake-order/SKILL.md)" in files.system_instruction
    assert [d.name for d in files.declarations] == ["read_file", "check_calendar"]
    assert body in files.functions["read_file"]("skills/bakery/custom-cake-order/SKILL.md")
    assert files.functions["read_file"]("skills/workplace/expense-report-helper/SKILL.md").startswith("Error: refused")
    with pytest.raises(ValueError, match="unknown mode"):
        build_harness("some", bakery)


def test_read_file_through_the_loop(bakery):
    harness = build_harness("filesystem", bakery, PREAMBLE)
    client = ScriptedClient(call("read_file", path="skills/bakery/../../pyproject.toml"),
                            call("read_file", path="skills/bakery/custom-cake-order/SKILL.md"), text("OK"))
    result = harness.run(client, CAKE_REQUEST, options=M)
    first, second = [function_responses(c)[0].response["result"] for c in result.history[2:5:2]]
    assert first.startswith("Error: refused:") and "outside the readable folder skills/bakery/" in first
    assert "name: custom-cake-order" in second


def test_only_trusted_roots_load(tmp_path):
    assert load_trusted_skills(SKILLS_DIR / "bakery").names == SkillLoader.from_root(SKILLS_DIR / "bakery").names
    with pytest.raises(UntrustedSkillRoot, match="not inside a trusted skills root"):
        load_trusted_skills(tmp_path)
    link = tmp_path / "looks-local"
    link.symlink_to(SKILLS_DIR / "bakery", target_is_directory=True)
    assert load_trusted_skills(link).names  # a link INTO a trusted root resolves inside it
    escape = tmp_path / "skills"
    escape.mkdir()
    with pytest.raises(UntrustedSkillRoot):
        load_trusted_skills(escape, trusted=[SKILLS_DIR])
    assert load_trusted_skills(escape, trusted=[tmp_path]).names == []


def test_bakery_tools_use_the_reference_date():
    from datetime import date

    declarations, functions = bakery_tools(today=date(2026, 12, 5))
    assert [d.name for d in declarations] == ["check_calendar", "cake_quote"]
    assert functions["check_calendar"]("Friday", "nut-free").startswith("2026-12-11 (Friday, in 6 days)")
    assert functions["cake_quote"](10, "vanilla", False, "Monday").startswith("Sorry, a cake made to order needs")
    assert run_tool(functions, "check_calendar", {"day": "Friday"}).startswith(
        "Error: check_calendar failed: TypeError: check_calendar()")


# --------------------------------------------------------------------------- read_file confinement


def test_read_file_reads_inside_the_root(tree):
    _, root = tree
    reader = ConfinedReader(root)
    assert reader("cake/SKILL.md").endswith("Body.\n")
    assert reader(str(root / "cake" / "SKILL.md")).endswith("Body.\n")
    assert reader("cake/../cake/SKILL.md").endswith("Body.\n")  # `..` that stays inside is fine


@pytest.mark.parametrize("path", ["../secret.txt", "cake/../../secret.txt", "/etc/passwd", "..", "../outside/SKILL.md"])
def test_read_file_refuses_paths_outside_the_root(tree, path):
    tmp, root = tree
    answer = ConfinedReader(root)(path)
    assert answer.startswith("Error: refused:") and "outside the readable folder" in answer
    assert ConfinedReader(root)(str(tmp / "secret.txt")).startswith("Error: refused:")


def test_read_file_refuses_symlinks_that_leave_the_root(tree):
    tmp, root = tree
    (root / "cake" / "leak.md").symlink_to(tmp / "secret.txt")
    (root / "evil").symlink_to(tmp / "outside", target_is_directory=True)
    (root / "cake" / "alias.md").symlink_to(root / "cake" / "SKILL.md")
    reader = ConfinedReader(root)
    assert reader("cake/leak.md").startswith("Error: refused:")
    assert reader("evil/SKILL.md").startswith("Error: refused:")
    assert reader("cake/alias.md").endswith("Body.\n")  # a link that stays inside the root is followed


def test_read_file_other_errors(tree):
    _, root = tree
    reader = ConfinedReader(root, max_bytes=20)
    assert reader("missing.md").startswith('Error: no file "missing.md"')
    assert reader("cake") == 'Error: "cake" is a folder, not a file.'
    assert reader("cake/SKILL.md").startswith('Error: "cake/SKILL.md" is')
    assert reader("").startswith("Error: give the path")
    assert reader("cake/\x00SKILL.md").startswith("Error: give the path")
    (root / "bin.md").write_bytes(b"\xff\xfe\x00")
    assert reader("bin.md") == 'Error: "bin.md" is not UTF-8 text.'


def test_read_file_with_a_base_shows_repository_paths():
    reader = ConfinedReader(SKILLS_DIR / "bakery", REPO_ROOT)
    assert reader("skills/bakery/custom-cake-order/SKILL.md").startswith("---\nname: custom-cake-order")
    assert reader("pyproject.toml") == (
        'Error: refused: "pyproject.toml" is outside the readable folder skills/bakery/.')
    assert "skills/bakery/" in reader.declaration().description


# --------------------------------------------------------------------------- with the local model


# `local_client` comes from tests/conftest.py (one local genai.Client per session).


@pytest.mark.model
def test_model_a_forced_load_puts_the_body_in_the_history(local_client, bakery):
    harness = build_harness("on-demand", bakery, PREAMBLE, [check_calendar_declaration()],
                            {"check_calendar": check_calendar})
    force = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["load_skill"]))
    with pytest.raises(MaxTurnsExceeded) as caught:
        harness.run(local_client, CAKE_REQUEST, policies=[Fixed(force)], options=RunOptions(max_turns=1))
    result = caught.value.result
    ((name, args),) = result.tool_calls
    assert name == "load_skill" and args["name"] in bakery.names
    (response,) = function_responses(result.history[-1])
    assert bakery.skills[args["name"]].body in response.response["result"]
    assert result.prompt_tokens[0] > 0


@pytest.mark.model
def test_model_max_turns_stops_a_real_loop(local_client, bakery):
    force = types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["check_calendar"]))
    with pytest.raises(MaxTurnsExceeded) as caught:
        run_agent(local_client, "Is Friday free on the nut-free line?", system_instruction=PREAMBLE,
                  declarations=[check_calendar_declaration()], functions={"check_calendar": check_calendar},
                  policies=[Fixed(force)], options=RunOptions(max_turns=2, max_output_tokens=64))
    assert caught.value.result.turns == 2
    assert [e.kind for e in caught.value.result.events].count("tool_end") == 2


@pytest.mark.model
def test_model_the_cake_request_runs_end_to_end(local_client, bakery):
    """Whatever the small model decides, the loop ends with an answer or a clean MaxTurnsExceeded."""
    harness = build_harness("on-demand", bakery, PREAMBLE, *bakery_tools())
    try:
        result = harness.run(local_client, CAKE_REQUEST, policies=[RefuseRepeats(), StopAt(ANSWERING_TOOLS)],
                             options=RunOptions(max_turns=4, max_output_tokens=200))
        assert result.events[-1].kind == "answer" and result.answer.strip()
        if result.events[-2].kind == "tool_end":  # ended by the cake script's reply: that reply is the answer
            assert result.events[-2].tool in ANSWERING_TOOLS
            assert result.answer == result.history[-1].parts[-1].function_response.response["result"]
    except MaxTurnsExceeded as err:
        result = err.result
        assert result.turns == 4 and result.events[-1].kind == "tool_end"
    assert [e.turn for e in result.events if e.kind == "request"] == list(range(1, result.turns + 1))
    assert all(t and t > 0 for t in result.prompt_tokens)
    # the history only grows, so each call's prompt is at least as long as the one before
    assert result.prompt_tokens == sorted(result.prompt_tokens)


# --------------------------------------------------------------------------- results a small model can act on


def test_a_load_result_says_the_skill_is_active_and_what_to_do_next(bakery):
    harness = build_harness("on-demand", bakery, PREAMBLE)
    result = harness.run(ScriptedClient(call("load_skill", name="custom-cake-order"), text("ok")), CAKE_REQUEST,
                         options=M)
    (response,) = function_responses(result.history[2])
    note, body = response.response["result"].split("\n\n", 1)
    assert note == ACTIVATION_NOTE.format(name="custom-cake-order", function="load_skill")
    assert "now active" in note and "Do not call load_skill again" in note and "answer the user" in note
    assert body == bakery.load_skill("custom-cake-order")


def test_a_failed_load_is_reported_unchanged(bakery):
    load = activating_loader(bakery)
    assert load("wedding-cake") == bakery.load_skill("wedding-cake")
    assert load.__doc__ == bakery.load_skill.__doc__



def test_the_none_choice_loads_nothing_and_says_to_answer(bakery):
    harness = build_harness("on-demand", bakery, PREAMBLE, none_choice=True)
    (load,) = harness.declarations
    assert load.parameters.properties["name"].enum == [*bakery.names, NONE]
    assert f'call load_skill with "{NONE}"' in harness.system_instruction
    result = harness.run(ScriptedClient(call("load_skill", name=NONE), text("We do not sell wine.")), "Wine?",
                         options=M)
    (response,) = function_responses(result.history[2])
    assert response.response["result"] == NONE_NOTE and result.answer == "We do not sell wine."
    assert skills_loaded(result) == []  # "none" is not a skill read
    plain = build_harness("on-demand", bakery, PREAMBLE)
    assert NONE not in plain.declarations[0].parameters.properties["name"].enum
    assert plain.functions["load_skill"](NONE).startswith("Error:")

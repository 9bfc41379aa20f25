"""The bakery requests and the checklist each run gets; no model: runs are built by hand."""
from __future__ import annotations

import json
import re

import pytest

from course_utils.loop.agent import AgentResult, Event, RunOptions
from course_utils.loop.bakery import CAKE_REQUEST, TODAY, cake_quote, load_calendar
from course_utils.evaluation.bakery_eval import (
    MAX_OUTPUT_TOKENS, MAX_TURNS, MEASURED_DIR, BakeryRequest, Checklist, Fact, agreement, answered_by_cake_script,
    check_run, load_requests, read_record, recheck_facts, run_all, run_seed, skills_loaded, summarize,
)
from scripts.lab import LAB_RECORDS
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.skill import SkillLoader

REQUESTS = load_requests()
BAKERY = SkillLoader.from_root(SKILLS_DIR / "bakery")


def run(*calls: tuple[str, dict], answer: str = "", tokens: tuple[int, ...] = (100,)) -> AgentResult:
    """An AgentResult holding these tool calls and this answer, as run_agent would record them."""
    events = [Event("tool_start", 1, tool=name, arguments=args) for name, args in calls]
    if answer:
        events.append(Event("answer", len(tokens), output=answer))
    return AgentResult(answer, events, [], list(tokens))


# --------------------------------------------------------------------------- the request file


def test_the_test_split_covers_each_skill_language_and_rule_edge():
    test = [r for r in REQUESTS if r.split == "test"]
    assert len(test) >= 24
    assert {r.lang for r in test} == {"en", "fr"}
    assert {r.skill for r in test} == {*BAKERY.names, None}  # each skill, and requests no skill covers
    assert sum(r.skill is None for r in test) >= 4
    for skill in BAKERY.names:  # each skill asked in both languages
        assert {r.lang for r in test if r.skill == skill} == {"en", "fr"}, skill
    rules = " ".join(name for r in test for name in r.facts)
    for edge in ("lead time", "two tiers", "pastry chef", "day full", "nut-free", "flavours", "minimum"):
        assert edge in rules, edge


def test_the_first_test_split_is_dev_now_and_the_running_example_is_a_dev_request():
    former = [r for r in REQUESTS if r.former_split == "test"]
    assert len(former) == 19 and all(r.split == "dev" for r in former)
    assert next(r for r in REQUESTS if r.text == CAKE_REQUEST).split == "dev"


def test_dev_and_test_requests_are_distinct():
    assert len({r.id for r in REQUESTS}) == len(REQUESTS)
    dev, test = ({r.text for r in REQUESTS if r.split == s} for s in ("dev", "test"))
    assert dev and test and not dev & test


def test_every_expected_calendar_check_is_a_day_of_the_calendar():
    days = load_calendar()["days"]
    for request in REQUESTS:
        for day, line in request.calendar or ():
            assert day in days and line in ("regular", "nut-free"), request.id


@pytest.mark.parametrize("skill", sorted(BAKERY.names))
def test_no_worked_example_of_any_skill_answers_a_request(skill):
    """A skill's fenced blocks (output formats, worked examples) hold placeholders: copying one satisfies no
    request's facts, dev or test. (Its rules and tables may state a fact: quoting the rule is the right answer.)"""
    blocks = re.findall(r"```.*?```", BAKERY.skills[skill].body, re.DOTALL)
    for block in blocks:
        for request in REQUESTS:
            if any(not fact.never for fact in request.facts.values()):
                assert not all(fact.holds(block) for fact in request.facts.values()), (skill, request.id)


def test_a_worked_example_with_a_request_s_figures_is_caught():
    catering = next(r for r in REQUESTS if r.id == "catering-breakfast")
    assert all(fact.holds("- Breakfast platter: 20 × €6.50 = €130.00") for fact in catering.facts.values())


def test_a_fact_about_one_thing_counts_only_in_the_sentence_that_names_it():
    sunday = next(r for r in REQUESTS if r.id == "hours-sunday-fr").facts
    right = "Le dimanche, nous fermons à 13h00."
    wrong = "Le samedi nous fermons à 19h30, le 24 décembre à 13h. Le dimanche nous sommes fermés."
    assert all(f.holds(right) for f in sunday.values()) and not any(f.holds(wrong) for f in sunday.values())
    assert Fact.read({"never": "regular line"}).holds("nut-free line") and not Fact.read({"never": "x"}).holds("x")
    with pytest.raises(ValueError, match="a fact is"):
        Fact.read({"says": "a", "where": "b"})


def test_recorded_answers_are_checked_again_against_todays_facts():
    sunday = next(r for r in REQUESTS if r.id == "hours-sunday-fr")
    loose = Checklist(sunday.id, "on-demand", 0, ["opening-hours-and-pickup"], True, False, None,
                      {"Sunday: closes at 13:00": True}, True, 2, 900, 1.0,
                      "Le samedi : 7h-19h30, le 24 décembre jusqu'à 13h. Le dimanche nous sommes fermés.")
    (strict,) = recheck_facts([loose], REQUESTS)
    assert strict.facts == {"Sunday: closes at 13:00": False, "never: says Sunday is closed": False}
    assert loose.facts == {"Sunday: closes at 13:00": True}  # the record itself is left as it was


def test_a_malformed_request_names_its_entry(tmp_path):
    bad = tmp_path / "requests.yaml"
    bad.write_text("requests:\n  - id: broken\n    split: test\n    lang: en\n    text: hi\n    skill: null\n"
                   "    calendar: null\n    facts: {x: '('}\n")
    with pytest.raises(ValueError, match=r"request #1 \(broken\)"):
        load_requests(bad)


# --------------------------------------------------------------------------- the checklist


CAKE = next(r for r in REQUESTS if r.id == "cake-nut-free-saturday")
GOOD_ANSWER = ("A 24 cm chocolate cake on the nut-free line, baked Friday 2026-12-04 at 05:00, pick-up from 12:00. "
               "Price €48, deposit €24 now. Shall I book it?")


def test_a_run_that_does_everything_passes_every_check():
    result = run(("load_skill", {"name": "custom-cake-order"}),
                 ("check_calendar", {"day": "Friday", "line": "nut-free"}),
                 answer=GOOD_ANSWER, tokens=(700, 1300, 1400))
    c = check_run(CAKE, "on-demand", result, sample=2, seconds=3.5)
    assert (c.right_skill, c.loaded_twice, c.calendar_right, c.answered) == (True, False, True, True)
    assert all(c.facts.values()) and len(c.facts) == 5
    assert (c.model_calls, c.prompt_tokens, c.sample) == (3, 3400, 2)
    assert c.calls == ['load_skill({"name": "custom-cake-order"})',
                       'check_calendar({"day": "Friday", "line": "nut-free"})']


def test_an_order_sent_to_the_cake_script_counts_as_a_calendar_check_on_its_day_and_line():
    """The script checks the calendar itself: its order's day and line are judged like a check_calendar call's."""
    order = {"guests": 20, "flavour": "chocolate", "day": "this Friday"}
    right = check_run(CAKE, "on-demand", run(("load_skill", {"name": "custom-cake-order"}),
                                             ("cake_quote", {**order, "line": "nut-free"})))
    wrong_line = check_run(CAKE, "on-demand", run(("load_skill", {"name": "custom-cake-order"}),
                                                  ("cake_quote", {**order, "line": "regular"})))
    assert right.calendar_right is True and wrong_line.calendar_right is False
    allergy = check_run(CAKE, "on-demand", run(("load_skill", {"name": "custom-cake-order"}),
                                               ("cake_quote", {**order, "nut_allergy": True})))
    no_allergy = check_run(CAKE, "on-demand", run(("load_skill", {"name": "custom-cake-order"}),
                                                  ("cake_quote", {**order, "nut_allergy": False})))
    assert allergy.calendar_right is True and no_allergy.calendar_right is False  # the tool's line, from the allergy


def test_each_failure_is_its_own_check():
    twice = run(("load_skill", {"name": "custom-cake-order"}), ("load_skill", {"name": "custom-cake-order"}),
                ("check_calendar", {"day": "2026-12-05", "line": "regular"}), answer="Saturday works.")
    c = check_run(CAKE, "on-demand", twice)
    assert c.right_skill is True and c.loaded_twice is True  # the right skill, loaded twice
    assert c.calendar_right is False  # Saturday on the regular line: the wrong line
    assert not any(c.facts.values())
    wrong = check_run(CAKE, "on-demand", run(("load_skill", {"name": "allergen-info"}),
                                             ("load_skill", {"name": "custom-cake-order"})))
    assert wrong.right_skill is False and not wrong.answered


def test_modes_read_skills_their_own_way_and_all_mode_has_no_skill_check():
    files = run(("read_file", {"path": "skills/bakery/custom-cake-order/SKILL.md"}), answer="?")
    assert skills_loaded(files) == ["custom-cake-order"]
    assert check_run(CAKE, "filesystem", files).right_skill is True
    assert check_run(CAKE, "all", run(answer="?")).right_skill is None


def test_a_request_no_skill_covers_passes_only_when_nothing_is_loaded():
    none = BakeryRequest("x", "test", "en", "wine?", None, None, {})
    assert check_run(none, "on-demand", run(answer="We sell no wine.")).right_skill is True
    assert check_run(none, "on-demand", run(("load_skill", {"name": "allergen-info"}), answer="?")).right_skill is False
    assert check_run(none, "on-demand", run(answer="?")).calendar_right is None


def test_the_summary_counts_runs_and_agreement():
    same = [check_run(CAKE, "on-demand", run(("load_skill", {"name": "custom-cake-order"}), answer=GOOD_ANSWER),
                      sample=s) for s in range(3)]
    other = check_run(CAKE, "all", run(answer=GOOD_ANSWER), sample=0)
    differs = check_run(CAKE, "all", run(answer="No."), sample=1)
    assert agreement(same).format() .startswith("1.000 (1/1")
    (demand, everything) = summarize([*same, other, differs])
    assert demand["runs"] == 3 and demand["right skill"].successes == 3
    assert demand["calendar right"].successes == 0 and demand["calendar right"].n == 3
    assert everything["right skill"].n == 0  # n/a in `all` mode
    assert everything["agreement"].successes == 0 and everything["agreement"].n == 1
    assert everything["facts"].successes == 5 and everything["facts"].n == 10
    assert TODAY.isoformat() == "2026-11-30"


def test_every_recorded_measurement_reads_back_and_ran_only_its_split():
    """Each record ran one split: a dev record dev requests only (the first test split's requests are dev now,
    marked `former_split: test`); a test record requests that were test requests when it ran. The records are the
    lesson's (data/measured/bakery/) and the lab's (docs/lab/records/bakery/)."""
    files = sorted(MEASURED_DIR.glob("*.json")) + sorted((LAB_RECORDS / "bakery").glob("*.json"))
    assert any(p.name.startswith("test") for p in files) and any(p.name.startswith("dev_") for p in files)
    was_test = {r.id for r in REQUESTS if r.former_split == "test" or r.split == "test"}
    dev = {r.id for r in REQUESTS if r.split == "dev"}
    for path in files:
        settings, checklists = read_record(path)
        ran = {c.request for c in checklists}
        assert ran and ran <= (was_test if settings["split"] == "test" else dev), path.name
        assert settings["max_turns"] == MAX_TURNS and settings["max_output_tokens"] == MAX_OUTPUT_TOKENS


class RecordingHarness:
    """A harness that records the sampling options of each run instead of calling a model."""

    mode = "on-demand"

    def __init__(self) -> None:
        self.options: list[RunOptions] = []

    def run(self, client, prompt, *, policies=(), options=RunOptions()) -> AgentResult:
        self.options.append(options)
        return run(answer="We are open.")


def test_no_two_requests_share_a_seed_and_every_harness_gets_the_same_ones():
    """Run k of every request drawn with seed k made runs k move together; a seed per (request, run) does not."""
    requests = [r for r in REQUESTS if r.split == "dev"]
    first, second = RecordingHarness(), RecordingHarness()
    for harness in (first, second):
        run_all({"on-demand": harness}, None, requests, seeds=[1, 2], temperature=0.7)
    seeds = [o.seed for o in first.options]
    assert len(set(seeds)) == len(seeds) == 2 * len(requests)
    assert [o.seed for o in second.options] == seeds  # harness rows stay paired
    assert seeds[:2] == [run_seed(requests[0].id, 1), run_seed(requests[0].id, 2)]
    assert all(0 <= s < 2**31 and o.temperature == 0.7 for s, o in zip(seeds, first.options))


def test_a_greedy_run_has_no_seed_and_no_temperature():
    harness = RecordingHarness()
    run_all({"on-demand": harness}, None, REQUESTS[:2], options=RunOptions(max_turns=5, max_output_tokens=99))
    assert harness.options == [RunOptions(max_turns=5, max_output_tokens=99)] * 2  # no seed, no temperature


def test_a_run_answered_by_the_cake_script_is_told_from_one_that_answered_in_words():
    """Lesson 04 counts the runs of requests that are not cake orders which the cake script answered."""
    order = {"guests": 20, "flavour": "vanilla", "nut_allergy": False, "day": "Thursday 10 December"}
    call = f"cake_quote({json.dumps(order)})"
    reply = cake_quote(**order)
    base = dict(request="dev-catering-cocktail", mode="on-demand", sample=0, skills=["catering-quote"],
                right_skill=True, loaded_twice=False, calendar_right=None, facts={}, answered=True, model_calls=2,
                prompt_tokens=900, seconds=1.0)
    loaded = 'load_skill({"name": "catering-quote"})'
    assert answered_by_cake_script(Checklist(**base, answer=reply, calls=[loaded, call]))
    assert not answered_by_cake_script(Checklist(**base, answer="A quote: €190.", calls=[call]))  # refused, then words
    assert not answered_by_cake_script(Checklist(**base, answer=reply, calls=[]))  # no order sent
    twice = Checklist(**base, answer=reply, calls=['load_skill({"name": "x"})', call, call])
    assert twice.calls_of("cake_quote") == [order] * 2

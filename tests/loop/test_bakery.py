"""check_calendar answers, hand-checked against data/bakery_calendar.yaml (today = Monday 2026-11-30)."""
from datetime import date

import pytest

from course_utils.loop.bakery import LINES, TODAY, check_calendar, check_calendar_declaration, resolve_day


@pytest.mark.parametrize(("day", "expected"), [
    ("2026-12-04", date(2026, 12, 4)),
    ("Saturday", date(2026, 12, 5)),
    ("this saturday", date(2026, 12, 5)),
    ("  SATURDAY ", date(2026, 12, 5)),
    ("Friday", date(2026, 12, 4)),
    ("Monday", date(2026, 12, 7)),  # strictly after today, which is a Monday
    ("next Tuesday", date(2026, 12, 1)),
    ("tomorrow", date(2026, 12, 1)),
    ("today", date(2026, 11, 30)),
    ("samedi", date(2026, 12, 5)),
    ("vendredi prochain", date(2026, 12, 4)),
    ("Sat", date(2026, 12, 5)),
    ("demain", date(2026, 12, 1)),
    ("après-demain", date(2026, 12, 2)),
    ("the day after tomorrow", date(2026, 12, 2)),
    ("Thursday 10 December", date(2026, 12, 10)),
    ("jeudi 10 décembre", date(2026, 12, 10)),
    ("December 10th", date(2026, 12, 10)),
    ("Saturday, Dec. 5", date(2026, 12, 5)),
    ("le samedi 26 décembre", date(2026, 12, 26)),
    ("1er décembre", date(2026, 12, 1)),
    ("10 December 2026", date(2026, 12, 10)),
    ("5 January", date(2027, 1, 5)),  # a day and month already past this year mean next year's
])
def test_resolve_day(day, expected):
    assert resolve_day(day) == expected


def test_resolve_day_from_another_reference_date():
    assert resolve_day("Saturday", today=date(2026, 12, 5)) == date(2026, 12, 12)
    assert check_calendar("Friday", "nut-free", today=date(2026, 12, 5)).startswith("2026-12-11 (Friday, in 6 days)")


@pytest.mark.parametrize("day", ["next week", "banana", "Saturday or Sunday", "10 11 December", "31 November", ""])
def test_unreadable_day_is_an_error_string(day):
    answer = check_calendar(day, "regular")
    assert answer.startswith("Error:") and "YYYY-MM-DD" in answer and "as the customer wrote it" in answer


def test_a_weekday_that_does_not_match_its_date_is_an_error_that_asks_the_customer():
    answer = check_calendar("Friday 10 December", "regular")
    assert answer == ("Error: \"Friday 10 December\" does not match: 2026-12-10 is a Thursday, not a Friday; "
                      "ask the customer which day they mean.")


def test_the_day_says_how_far_it_is_from_today():
    assert check_calendar("tomorrow", "regular").startswith("2026-12-01 (Tuesday, tomorrow), regular line")
    assert check_calendar("2026-12-10", "regular").startswith("2026-12-10 (Thursday, in 10 days), regular line")


def test_free_slots_and_pickup():
    assert check_calendar("2026-12-04", "nut-free") == (
        "2026-12-04 (Friday, in 4 days), nut-free line: free baking slots 05:00, 08:00; pick-up 12:00-19:00.")
    assert check_calendar("2026-12-05", "regular") == (
        "2026-12-05 (Saturday, in 5 days), regular line: free baking slots 08:00, 14:00; pick-up 10:00-19:00.")
    assert check_calendar("2026-12-18", "nut-free") == (
        "2026-12-18 (Friday, in 18 days), nut-free line: free baking slots 07:00; pick-up 12:00-19:00.")


def test_weekday_name_gives_the_same_answer_as_the_date():
    assert check_calendar("Saturday", "regular") == check_calendar("2026-12-05", "regular")


def test_nut_free_line_only_on_fridays_points_to_the_nearest_fridays():
    answer = check_calendar("Saturday", "nut-free")
    assert answer.startswith("2026-12-05 (Saturday, in 5 days), nut-free line: no free baking slot")
    assert "only on Friday mornings" in answer
    assert "2026-12-04 (Friday), 2026-12-18 (Friday)" in answer  # 12-11 is fully booked


def test_fully_booked_day():
    answer = check_calendar("2026-12-12", "regular")
    assert "no free baking slot (fully booked)" in answer
    assert "2026-12-10 (Thursday), 2026-12-11 (Friday), 2026-12-13 (Sunday)" in answer
    assert "fully booked" in check_calendar("2026-12-11", "nut-free")


@pytest.mark.parametrize("day", ["2026-11-30", "2026-12-07", "2026-12-25"])
def test_closed_days(day):
    answer = check_calendar(day, "regular")
    assert answer.startswith("Error: the bakery is closed on " + day)


def test_unknown_line():
    answer = check_calendar("2026-12-04", "gluten-free")
    assert answer == 'Error: unknown line "gluten-free". The production lines are: regular, nut-free.'
    assert check_calendar("2026-12-04", "Nut-Free").startswith("2026-12-04 (Friday, in 4 days), nut-free line")


def test_dates_out_of_range():
    assert "outside the calendar, which covers 2026-11-30 to 2026-12-27" in check_calendar("2027-01-02", "regular")
    past = check_calendar("2023-12-09", "regular")
    assert past.startswith("Error: 2023-12-09 (Saturday, 1087 days ago) is in the past.")
    assert "word for word from the customer's message" in past
    assert "2026-11-30" not in past  # sampled runs copied today's date from here and checked a closed Monday


def test_declaration_matches_the_function():
    declaration = check_calendar_declaration()
    assert declaration.name == "check_calendar"
    assert declaration.parameters.required == ["day", "line"]
    assert declaration.parameters.properties["line"].enum == list(LINES)
    assert TODAY.weekday() == 0


# --------------------------------------------------------------------------- the cake skill's script

from course_utils.loop.bakery import ANSWERING_TOOLS, cake_quote, cake_quote_declaration  # noqa: E402
from course_utils.skills.paths import SKILLS_DIR  # noqa: E402


def _quote():
    import importlib.util

    script = SKILLS_DIR / "bakery" / "custom-cake-order" / "scripts" / "cake_quote.py"
    spec = importlib.util.spec_from_file_location("cake_quote_script", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.quote


@pytest.mark.parametrize("guests, flavour, line, day, expected", [
    (10, "vanilla", "regular", "Thursday 10 December",
     "Cake: 18 cm, vanilla, regular line\nBaked: Thursday 2026-12-10, 06:00 — pick-up from 15:00 to 19:00\n"
     "Price: €32 — deposit €16 now, the rest at pick-up\nShall I book it?"),
    (30, "vanille", "regular", "samedi 26 décembre", "Cake: two tiers, vanilla, regular line"),  # French flavour names
    (24, "chocolate", "nut-free", "2026-12-04", "Baked: Friday 2026-12-04, 05:00 — pick-up from 12:00 to 19:00"),
])
def test_the_script_writes_the_summary_in_the_skill_s_format(guests, flavour, line, day, expected):
    assert expected in _quote()(guests, flavour, line, day)


def test_the_script_applies_the_rules_that_are_not_a_summary():
    quote = _quote()
    assert "pastry chef" in quote(45, "vanilla", "regular", "Saturday 12 December")
    other = quote(12, "other", "regular", "Tuesday 8 December")
    assert "chocolate, vanilla or dulce de leche" in other and "18 cm (€32)" in other and other.endswith("?")
    assert "72 hours" in quote(8, "chocolate", "regular", "tomorrow")
    full = quote(20, "chocolate", "nut-free", "this Saturday")  # the nut-free line bakes on Fridays only
    assert "Friday 2026-12-04" in full and "€48" in full and "deposit €24" in full and full.endswith("?")
    assert quote(10, "vanilla", "gluten-free", "Friday").startswith("Error:")
    assert quote(10, "vanilla", "regular", "someday").startswith("Error:")


def test_the_tool_runs_the_script_in_its_own_process_and_declares_its_arguments():
    for nut_allergy, line in [(False, "regular"), (True, "nut-free")]:  # the tool derives the line from the allergy
        assert cake_quote(10, "vanilla", nut_allergy, "Thursday 10 December") == _quote()(10, "vanilla", line,
                                                                                          "Thursday 10 December")
    declaration = cake_quote_declaration()
    assert declaration.name == "cake_quote" and ANSWERING_TOOLS == ("cake_quote",)
    assert set(declaration.parameters.required) == set(declaration.parameters.properties) == {
        "guests", "flavour", "nut_allergy", "day"}

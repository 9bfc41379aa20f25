"""check_calendar answers, hand-checked against data/bakery_calendar.yaml (today = Monday 2026-11-30)."""
from datetime import date

import pytest

from course_utils.bakery import LINES, TODAY, check_calendar, check_calendar_declaration, resolve_day


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
])
def test_resolve_day(day, expected):
    assert resolve_day(day) == expected


def test_resolve_day_from_another_reference_date():
    assert resolve_day("Saturday", today=date(2026, 12, 5)) == date(2026, 12, 12)
    assert check_calendar("Friday", "nut-free", today=date(2026, 12, 5)).startswith("2026-12-11 (Friday)")


def test_unreadable_day_is_an_error_string():
    answer = check_calendar("next week", "regular")
    assert answer.startswith("Error:") and "YYYY-MM-DD" in answer


def test_free_slots_and_pickup():
    assert check_calendar("2026-12-04", "nut-free") == (
        "2026-12-04 (Friday), nut-free line: free baking slots 05:00, 08:00; pick-up 12:00-19:00.")
    assert check_calendar("2026-12-05", "regular") == (
        "2026-12-05 (Saturday), regular line: free baking slots 08:00, 14:00; pick-up 10:00-19:00.")
    assert check_calendar("2026-12-18", "nut-free") == (
        "2026-12-18 (Friday), nut-free line: free baking slots 07:00; pick-up 12:00-19:00.")


def test_weekday_name_gives_the_same_answer_as_the_date():
    assert check_calendar("Saturday", "regular") == check_calendar("2026-12-05", "regular")


def test_nut_free_line_only_on_fridays_points_to_the_nearest_fridays():
    answer = check_calendar("Saturday", "nut-free")
    assert answer.startswith("2026-12-05 (Saturday), nut-free line: no free baking slot")
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
    assert check_calendar("2026-12-04", "Nut-Free").startswith("2026-12-04 (Friday), nut-free line")


def test_dates_out_of_range():
    assert "outside the calendar, which covers 2026-11-30 to 2026-12-27" in check_calendar("2027-01-02", "regular")
    assert check_calendar("2026-11-20", "regular").startswith("Error: 2026-11-20 (Friday) is in the past")


def test_declaration_matches_the_function():
    declaration = check_calendar_declaration()
    assert declaration.name == "check_calendar"
    assert declaration.parameters.required == ["day", "line"]
    assert declaration.parameters.properties["line"].enum == list(LINES)
    assert TODAY.weekday() == 0

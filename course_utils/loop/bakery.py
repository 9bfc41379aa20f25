"""The bakery's tools: its calendar (free baking slots and pick-up times per day and production line), and the
cake skill's script, `cake_quote`, which writes the reply to a cake order.

Used by `notebooks/03_load_skill_loop.ipynb` and `04_three_modes.ipynb`, where the `custom-cake-order` skill tells
the model to send a cake order to its script, which checks the calendar before it promises a date; the other skills
point to `check_calendar`. The data is `data/bakery_calendar.yaml` (synthetic, four weeks from Monday 2026-11-30).

The calendar tool answers in short sentences a model can read. Every problem (an unknown line, a date it
cannot read, a date outside the calendar, a closed day) is an answer starting with `Error:` that
says what to do instead, never an exception: the agent loop hands the text to the model as is.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date, timedelta
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import yaml
from google.genai import types

from course_utils.skills.paths import DATA_DIR, SKILLS_DIR

CALENDAR_FILE = DATA_DIR / "bakery_calendar.yaml"
TODAY = date(2026, 11, 30)
"""The course's fixed "today" (a Monday): the calendar starts on this day."""

LINES = ("regular", "nut-free")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""In English whatever the locale (``calendar.day_name`` follows LC_TIME)."""
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_WEEKDAY_WORDS = {**{name.lower(): n for n, name in enumerate(WEEKDAYS)},
                  **{name[:3].lower(): n for n, name in enumerate(WEEKDAYS)},
                  **{name: n for n, name in enumerate(("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi",
                                                       "dimanche"))}}
_MONTH_WORDS = {**{name: n for n, name in enumerate(_MONTHS, 1)},
                **{name[:3]: n for n, name in enumerate(_MONTHS, 1)},
                **{name: n for n, name in enumerate(("janvier", "février", "mars", "avril", "mai", "juin", "juillet",
                                                    "août", "septembre", "octobre", "novembre", "décembre"), 1)},
                "fevrier": 2, "aout": 8, "decembre": 12, "déc": 12, "févr": 2, "sept": 9}
_RELATIVE_WORDS = {"today": 0, "aujourd'hui": 0, "tomorrow": 1, "demain": 1, "day after tomorrow": 2, "après-demain": 2}
_FILLER_WORDS = {"this", "next", "coming", "on", "the", "for", "of", "ce", "cette", "le", "la", "prochain", "prochaine",
                 "pour"}
_ORDINAL = re.compile(r"^(\d{1,2})(?:st|nd|rd|th|er|e)?$")


@lru_cache(maxsize=4)
def _read_calendar(path: str, mtime: float) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_calendar(path: str | Path = CALENDAR_FILE) -> dict[str, Any]:
    """The calendar as a dict (read once per file version)."""
    path = Path(path)
    return _read_calendar(str(path), path.stat().st_mtime)


def resolve_day(day: str, today: date = TODAY) -> date:
    """Read `day` as the customer may have written it, in English or French; raise ValueError if it cannot.

    Accepted: an ISO date ("2026-12-10"); "today", "tomorrow" (and "aujourd'hui", "demain"); a weekday
    ("Saturday", "this Saturday", "next Friday", "samedi", "vendredi prochain"), which means the first
    such day strictly after `today` (on Monday 2026-11-30, "Saturday" is 2026-12-05 and "Monday"
    2026-12-07); a day and a month, with or without the weekday and the year ("10 December",
    "Thursday 10 December", "December 10th", "jeudi 10 décembre"), in `today`'s year unless that day
    has passed. A weekday that does not match the date is an error: the customer must say which.
    """
    text = " ".join(str(day).strip().lower().split())
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    words = [w for w in re.sub(r"[,.;!?]", " ", text).replace("-", " ").split() if w not in _FILLER_WORDS]
    for phrase in (" ".join(words), "-".join(words)):
        if phrase in _RELATIVE_WORDS:
            return today + timedelta(days=_RELATIVE_WORDS[phrase])
    weekdays, months, numbers, years, unread = [], [], [], [], []
    for word in words:
        if word in _MONTH_WORDS:
            months.append(_MONTH_WORDS[word])
        elif word.removesuffix("s") in _WEEKDAY_WORDS:  # "Saturdays", "samedis"
            weekdays.append(_WEEKDAY_WORDS[word.removesuffix("s")])
        elif re.fullmatch(r"20\d\d", word):
            years.append(int(word))
        elif match := _ORDINAL.match(word):
            numbers.append(int(match.group(1)))
        else:
            unread.append(word)
    hint = ('give the day as the customer wrote it ("this Saturday", "Thursday 10 December", "demain") '
            "or as YYYY-MM-DD (e.g. 2026-12-27)")
    if unread or len(weekdays) > 1 or len(months) > 1 or len(numbers) > 1 or len(years) > 1:
        raise ValueError(f'cannot read the day "{day}": {hint}')
    if months and numbers:
        year = years[0] if years else today.year
        try:
            when = date(year, months[0], numbers[0])
            if not years and when < today:
                when = date(year + 1, months[0], numbers[0])
        except ValueError:
            raise ValueError(f'"{day}" is not a date in the calendar: {hint}') from None
        if weekdays and weekdays[0] != when.weekday():
            raise ValueError(f'"{day}" does not match: {when.isoformat()} is a {WEEKDAYS[when.weekday()]}, '
                             f"not a {WEEKDAYS[weekdays[0]]}; ask the customer which day they mean")
        return when
    if weekdays and not (months or numbers or years):
        return today + timedelta(days=(weekdays[0] - today.weekday() - 1) % 7 + 1)
    raise ValueError(f'cannot read the day "{day}": {hint}')


def day_label(when: date, today: date = TODAY) -> str:
    """`2026-12-05 (Saturday, in 5 days)`: the date, its weekday and how far it is from `today`."""
    ahead = (when - today).days
    distance = {0: "today", 1: "tomorrow", -1: "yesterday"}.get(ahead) or (
        f"in {ahead} days" if ahead > 0 else f"{-ahead} days ago")
    return f"{when.isoformat()} ({WEEKDAYS[when.weekday()]}, {distance})"


def line_slots(entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """One line's (free baking slots, pick-up windows) from its entry in a calendar day."""
    return list(entry.get("baking_slots") or []), list(entry.get("pickup") or [])


def free_days_near(when: date, line: str, data: dict[str, Any], today: date = TODAY, count: int = 3) -> list[date]:
    """Up to `count` days from `today` on with a free baking slot on `line`, nearest to `when` first,
    returned in date order (the nearest free day may come before the requested one)."""
    free = [date.fromisoformat(day) for day, entry in data["days"].items()
            if date.fromisoformat(day) >= today and line_slots(entry.get(line) or {})[0]]
    return sorted(sorted(free, key=lambda d: (abs((d - when).days), d))[:count])


def line_and_day(day: str, line: str, today: date = TODAY) -> tuple[str, date] | str:
    """The production line's name and the date `day` means (`resolve_day`), or the `Error:` sentence to answer with."""
    line_name = str(line).strip().lower()
    if line_name not in LINES:
        return f'Error: unknown line "{line}". The production lines are: {", ".join(LINES)}.'
    try:
        return line_name, resolve_day(day, today)
    except ValueError as err:
        return f"Error: {err}."


def check_calendar(day: str, line: str, *, today: date = TODAY, path: str | Path = CALENDAR_FILE) -> str:
    """Free baking slots and pick-up times for one day on one production line.

    `day` is read by `resolve_day` (a date, or the customer's words, from `today`); `line` is "regular" or
    "nut-free". The day comes back as `day_label` writes it, so the reader sees how far away it is.
    Returns one or two sentences; problems come back as a string starting with "Error:".
    """
    data = load_calendar(path)
    parsed = line_and_day(day, line, today)
    if isinstance(parsed, str):
        return parsed
    line_name, when = parsed
    first, last = min(data["days"]), max(data["days"])
    label = day_label(when, today)
    if when < today:
        # A past date is usually a year the model made up for an ISO date: the error asks for the customer's own
        # words, which resolve_day reads best.
        return (f"Error: {label} is in the past. "
                "Call check_calendar again with the day copied word for word from the customer's message.")
    entry = data["days"].get(when.isoformat())
    if entry is None:
        return (f"Error: {label} is outside the calendar, which covers {first} to {last}. "
                "Ask the customer for an earlier date or to call the shop.")
    slots, pickup = line_slots(entry.get(line_name) or {})
    if not any(line_slots(entry.get(name) or {})[1] for name in LINES):
        return f"Error: the bakery is closed on {label}: no baking and no pick-up. Try another day."
    if slots:
        return (f"{label}, {line_name} line: free baking slots {', '.join(slots)}; "
                f"pick-up {', '.join(pickup) or 'none'}.")
    reason = "the nut-free line bakes only on Friday mornings" if line_name == "nut-free" and when.weekday() != 4 \
        else "fully booked"
    near = free_days_near(when, line_name, data, today)
    hint = (" The nearest days with a free slot on this line: "
            + ", ".join(f"{d.isoformat()} ({WEEKDAYS[d.weekday()]})" for d in near) + "."
            if near else " No day in the calendar has a free slot on this line.")
    return f"{label}, {line_name} line: no free baking slot ({reason}).{hint}"


def check_calendar_declaration() -> types.FunctionDeclaration:
    """The declaration the model sees for `check_calendar`."""
    return types.FunctionDeclaration(
        name="check_calendar",
        description="Free baking slots and pick-up times for one day on one production line of the bakery.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={
                "day": types.Schema(type=types.Type.STRING,
                                    description="The day the customer asked for, copied word for word from the "
                                                "customer's message: the tool works out the date."),
                "line": types.Schema(type=types.Type.STRING, enum=list(LINES),
                                     description='"nut-free" when a guest has a nut allergy, else "regular".'),
            },
            required=["day", "line"],
        ),
    )


ASSISTANT_PREAMBLE = (
    "You are the order assistant of a bakery.\n"
    "Each kind of request has written instructions (a skill). Work in steps: first read the instructions "
    "that match the request, before any other tool call; then call the tools they ask for; then answer the "
    "customer in words. If no instructions match, answer directly. "
    "Do not repeat a call you have already made: its result is above."
)
"""The preamble of the bakery assistant's system instruction, the same in every skill mode."""

CAKE_REQUEST = "I need a cake for 20 people this Saturday. Chocolate, and one guest can't have nuts."
"""The lesson's running example: it needs the custom-cake-order skill and the nut-free line's calendar."""


CAKE_QUOTE_SCRIPT = SKILLS_DIR / "bakery" / "custom-cake-order" / "scripts" / "cake_quote.py"
"""The cake skill's script (Agent Skills' optional `scripts/` folder): the rules that are arithmetic and look-ups."""


def allergy_line(nut_allergy: bool) -> str:
    """The production line a cake order goes to: the nut-free line when a guest has a nut allergy (rule 3)."""
    return "nut-free" if nut_allergy else "regular"


def cake_quote(guests: int, flavour: str, nut_allergy: bool, day: str, *, today: date = TODAY) -> str:
    """Run the custom-cake-order skill's script in its own process, the order as JSON on stdin: the reply it writes
    for the customer (days counted from `today`; the nut-free line when a guest has a nut allergy), or an `Error:`
    line."""
    order = json.dumps({"guests": guests, "flavour": flavour, "line": allergy_line(nut_allergy), "day": day,
                        "today": today.isoformat()})
    run = subprocess.run([sys.executable, str(CAKE_QUOTE_SCRIPT)], input=order, capture_output=True, text=True,
                         timeout=60)
    if run.returncode != 0:
        return ("Error: the script failed: "
                f"{run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode}")
    return run.stdout.strip()


def cake_quote_declaration() -> types.FunctionDeclaration:
    """The declaration of the custom-cake-order skill's script."""
    return types.FunctionDeclaration(
        name="cake_quote",
        description="The custom-cake-order skill's script: checks the calendar, the lead time, the size, the price and "
                    "the deposit of a cake order, and writes the text to send the customer.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={
                "guests": types.Schema(type=types.Type.INTEGER, description="How many guests the cake is for."),
                "flavour": types.Schema(type=types.Type.STRING,
                                        enum=["chocolate", "vanilla", "dulce de leche", "other"],
                                        description='The flavour the customer asked for; "other" for any other '
                                                    'flavour.'),
                "nut_allergy": types.Schema(type=types.Type.BOOLEAN,
                                            description="true when a guest is allergic to nuts or cannot eat nuts."),
                "day": types.Schema(type=types.Type.STRING,
                                    description="The day the customer asked for, copied word for word from the "
                                                "customer's message."),
            },
            required=["guests", "flavour", "nut_allergy", "day"],
        ),
    )


ANSWERING_TOOLS = ("cake_quote",)
"""Tools whose successful result is the reply the customer reads: the harness's `StopAt(ANSWERING_TOOLS)`."""

NONE_CHOICE = True
"""The bakery's on-demand harness offers "none" among `load_skill`'s names:
`build_harness(..., none_choice=NONE_CHOICE)`."""


def bakery_tools(today: date = TODAY) -> tuple[list[types.FunctionDeclaration], dict[str, Any]]:
    """The bakery's task tools: (declarations, {name: callable}), ready for `build_harness`."""
    return ([check_calendar_declaration(), cake_quote_declaration()],
            {"check_calendar": partial(check_calendar, today=today), "cake_quote": partial(cake_quote, today=today)})

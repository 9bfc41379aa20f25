"""The custom-cake-order skill's quote: rules 1, 2, 4, 5 and 6 of its SKILL.md applied by code.

Input (JSON on stdin, or `quote(...)`): guests, flavour, line ("regular" or "nut-free"), day (the
customer's words) and, optionally, today (YYYY-MM-DD; the course's fixed today otherwise). Output: the answer
sent to the customer as it is — the summary in the skill's format, or what to say instead (a flavour not on
the list, too many guests, a lead time under 72 hours, a full day).
Needs the course's package, `course_utils`, for the bakery's calendar (`course_utils.loop.bakery`).
"""
from __future__ import annotations

import json
import sys
from datetime import date

from course_utils.loop.bakery import TODAY, WEEKDAYS, free_days_near, line_and_day, line_slots, load_calendar

FLAVOURS = ("chocolate", "vanilla", "dulce de leche")
FRENCH = {"chocolat": "chocolate", "vanille": "vanilla"}
SIZES = ((12, "18 cm", 32.0), (24, "24 cm", 48.0), (40, "two tiers", 95.0))
LEAD_DAYS = 3  # 72 hours: a slot on the third day from today at the earliest


def _euros(amount: float) -> str:
    return f"€{amount:.2f}".replace(".00", "")


def quote(guests: int, flavour: str, line: str, day: str, today: date = TODAY) -> str:
    """The text to send the customer for one cake order."""
    if guests > SIZES[-1][0]:
        return (f"For more than {SIZES[-1][0]} guests, our pastry chef designs the cake and quotes it. "
                "Shall I ask the pastry chef to call you?")
    size, price = next((s, p) for most, s, p in SIZES if guests <= most)
    choice = FRENCH.get(flavour.strip().lower(), flavour.strip().lower())
    if choice not in FLAVOURS:
        return (f"Sorry, we do not bake that flavour: our cakes are chocolate, vanilla or dulce de leche. "
                f"For {guests} guests the cake is {size} ({_euros(price)}). "
                "Which of these three flavours would you like?")
    parsed = line_and_day(day, line, today)
    if isinstance(parsed, str):
        return parsed
    line, when = parsed
    if (when - today).days < LEAD_DAYS:
        return ("Sorry, a cake made to order needs at least 72 hours between now and its baking slot: "
                f"{WEEKDAYS[when.weekday()]} {when.isoformat()} is too soon. Which later day would suit you?")
    data = load_calendar()
    free, pickup = line_slots((data["days"].get(when.isoformat()) or {}).get(line) or {})
    if not free:
        near = [d for d in free_days_near(when, line, data, today) if (d - today).days >= LEAD_DAYS]
        days = ", ".join(f"{WEEKDAYS[d.weekday()]} {d.isoformat()}" for d in near) or "none in the calendar"
        return (f"Sorry, {WEEKDAYS[when.weekday()]} {when.isoformat()} has no free baking slot on the {line} line. "
                f"The nearest free days: {days}. Your cake: {size}, {choice}, {_euros(price)}, deposit "
                f"{_euros(price / 2)} now, the rest at pick-up. Which of these days would you like?")
    start, _, end = (pickup[0] if pickup else "?-?").partition("-")  # the nut-free line's window opens at 12:00
    return (f"Cake: {size}, {choice}, {line} line\n"
            f"Baked: {WEEKDAYS[when.weekday()]} {when.isoformat()}, {free[0]} — pick-up from {start} to {end}\n"
            f"Price: {_euros(price)} — deposit {_euros(price / 2)} now, the rest at pick-up\n"
            "Shall I book it?")


if __name__ == "__main__":
    order = json.load(sys.stdin)
    today = date.fromisoformat(order["today"]) if "today" in order else TODAY
    print(quote(int(order["guests"]), str(order["flavour"]), str(order["line"]), str(order["day"]), today))

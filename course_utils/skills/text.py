"""Text cut short for a message: one helper, used by every module that quotes a value or a reason."""
from __future__ import annotations

WIDTH = 70
"""The default width: a query quoted in a report line."""


def shorten(text: str, width: int = WIDTH, *, flat: bool = True) -> str:
    """`text` cut to `width` characters, the last one "…"; with `flat`, every run of whitespace first made one space."""
    if flat:
        text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"

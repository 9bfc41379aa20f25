"""The checks of `audit` that need no model: validation with fixes, the listing a harness cuts, the "when" rule.

Each check returns plain data (lists and dicts of str, int, float) so the report can be written as JSON and
as HTML from the same values. `audit.py` runs them; `audit_pairs.py` holds the embedding-based check.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.listing import CLAUDE_CODE, CODEX, GEMINI_CLI, ListingBudget, render_listing
from course_utils.skills import Diagnostic, Skill, SkillLoader
from course_utils.tokens import estimate_tokens


# ---------------------------------------------------------------------------------------------- validation


FALLBACK_FIXES = (
    ("limit is", "shorten it to the limit"),
    ("not UTF-8", "save the file as UTF-8"),
    ("cannot be read", "make the file readable by the user who runs the harness (chmod a+r)"),
    ("resolves outside", "copy the skill into the folder instead of linking to a file outside it"),
    ("has no SKILL.md", "add a SKILL.md, or move the folder out of the skills folder"),
    ("frontmatter", "start the file with a '---' line, the YAML fields, and a closing '---' line"),
    ("not valid YAML", "quote values that hold ': ' or start with a special character"),
)
"""(words in the problem, the fix) for the problems whose message does not already end with a fix."""

FIX_VERBS = ("add", "quote", "rename", "remove", "use", "save", "write", "say", "give", "shorten", "move",
             "start", "keep", "make", "put", "copy", "indent", "close", "delete")


def split_fix(message: str) -> tuple[str, str]:
    """(problem, fix) of a diagnostic's message: from the first clause after ": " that starts with a fix verb,
    else a fix from `FALLBACK_FIXES`, else "see the problem"."""
    start = message.find(": ")
    while start != -1:
        tail = message[start + 2:]
        if tail.split(" ", 1)[0].lower().strip("`") in FIX_VERBS:
            return message[:start], tail
        start = message.find(": ", start + 2)
    fix = next((fix for words, fix in FALLBACK_FIXES if words in message), "see the problem")
    return message, fix


def validation_rows(diagnostics: Sequence[Diagnostic], root: Path) -> list[dict[str, Any]]:
    """One row per problem, as the reference validator rates it, with the file relative to `root`."""
    rows = []
    for diagnostic in diagnostics:
        problem, fix = split_fix(diagnostic.message)
        rows.append({"file": shown_path(diagnostic.path, root), "field": diagnostic.field,
                     "severity": diagnostic.severity, "problem": problem, "fix": fix})
    return rows


def shown_path(path: Path, root: Path) -> str:
    """`path` relative to `root` when it lies under it (symlinks not followed), else as given."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class Harness:
    """A harness whose listing `audit` reproduces: its budget, and the context window it is computed from."""

    budget: ListingBudget
    context_tokens: int
    window_source: str


HARNESSES = {
    "claude-code": Harness(CLAUDE_CODE, 200_000, "Claude Code's default context window"),
    "codex": Harness(CODEX, 272_000, "the window of a Codex log quoted in openai/codex#24299"),
    "gemini-cli": Harness(GEMINI_CLI, 1_048_576, "Gemini 2.5's input limit"),
}
"""The harnesses `audit --harness` knows; their listing rules and sources are in `course_utils.listing`."""


def listing_section(loader: SkillLoader, harness: Harness, context_tokens: int | None = None) -> dict[str, Any]:
    """The listing `harness` would give the model: its budget, what became of each skill, the context share."""
    window = context_tokens or harness.context_tokens
    listing = render_listing(loader, harness.budget, window)
    text = listing.text
    tokens = estimate_tokens(text)
    return {
        "harness": harness.budget.name, "context_tokens": window, "window_source": harness.window_source,
        "budget_chars": listing.budget_chars, "listing_chars": len(text), "listing_tokens": tokens,
        "context_share": tokens / window, "counts": listing.counts,
        "fates": [{"skill": name, "fate": fate, "description_chars": len(loader.skills[name].description)}
                  for name, fate in listing.fates.items()],
    }


# ---------------------------------------------------------------------------------------------- when / not for


WHEN_PATTERN = re.compile(
    r"\buse (?:it |this(?: skill)? )?(?:when|whenever|if|for|to|on|after|before)\b|\bwhen (?:the |a |an )?"
    r"(?:user|someone|you|employee|manager|team)\b|\bwhenever\b|\bif the user\b|\btrigger(?:s|ed)? (?:on|when|by)\b"
    r"|\binvoke (?:it )?when\b|\bà utiliser\b|\butilis\w* (?:quand|lorsque|si|pour)\b|\bquand\b|\blorsqu",
    re.IGNORECASE)
NOT_FOR_PATTERN = re.compile(
    r"\bnot (?:for|to be used|meant for|a substitute)\b|\bdo not use\b|\bdon't use\b|\bnever\b|\binstead\b"
    r"|\bexcept\b|\brather than\b|\bpas (?:pour|de|un|une)\b|\bne (?:pas|jamais)\b|\bsauf\b|\bjamais\b",
    re.IGNORECASE)
WHEN_RULE = ('A description says *when* if it holds a trigger clause: "use when", "use it/this when", "use for", '
             '"use if", "when the user/someone/you …", "whenever", "if the user", "triggers on", "invoke when", or in '
             'French "à utiliser", "utiliser quand/lorsque/si/pour", "quand", "lorsque". It excludes if it holds '
             '"not for", "do not use", "never", "instead", "except", "rather than", or "pas pour", "ne pas", "jamais", '
             '"sauf". Case is ignored; the rule reads words, not meaning.')


def when_check(skill: Skill) -> dict[str, Any]:
    """Whether the description says when to use the skill and when not to, with the words that say it."""
    when = WHEN_PATTERN.search(skill.description)
    excludes = NOT_FOR_PATTERN.search(skill.description)
    return {"skill": skill.name, "says_when": when is not None, "when_words": when.group(0) if when else None,
            "excludes": excludes is not None, "exclusion_words": excludes.group(0) if excludes else None}


def when_section(loader: SkillLoader) -> dict[str, Any]:
    """The rule, and one row per skill (see `when_check`)."""
    rows = [when_check(skill) for skill in loader.skills.values()]
    return {"rule": WHEN_RULE, "rows": rows, "without_when": sum(not r["says_when"] for r in rows),
            "without_exclusion": sum(not r["excludes"] for r in rows)}

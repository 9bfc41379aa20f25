"""The checks of `audit` that need no model: validation, the listing a harness cuts, the "when" rule.

Each check returns a typed section (`course_utils.audit.report`) and the findings it makes, each under a rule
of `course_utils.audit.rules`, its fix taken from the rule. `pairs.py` holds the checks on pairs of skills.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course_utils.audit.report import Finding, ListingFate, ListingSection, WhenRow, WhenSection
from course_utils.audit.rules import RULES, SEVERITIES
from course_utils.listing import CLAUDE_CODE, CODEX, GEMINI_CLI, ListingBudget, render_listing
from course_utils.skills import Diagnostic, Skill, SkillLoader
from course_utils.tokens import estimate_tokens


# ---------------------------------------------------------------------------------------------- validation


def validation_code(diagnostic: Diagnostic) -> str:
    """The rule a diagnostic of the validator breaks (see `rules.RULES`), read from its field and its kind.

    The fix comes from the rule; the diagnostic's message is kept whole as what was seen.
    """
    message = diagnostic.message
    if diagnostic.field == "name":
        return "SK002"
    if diagnostic.field == "description":
        return "SK003"
    if diagnostic.field in ("compatibility", "metadata", "license", "allowed-tools"):
        return "SK005"
    if diagnostic.field is not None:
        return "SK004"
    if "resolves outside" in message:
        return "SK007"
    if "byte-order mark" in message or "CRLF" in message:
        return "SK009"
    if "not a skill" in message or "holds no skill folder" in message or "not a directory of skills" in message:
        return "SK008"
    if "frontmatter" in message or message.startswith("the file must start") or "'---'" in message:
        return "SK001"
    return "SK006"


def validation_findings(diagnostics: Sequence[Diagnostic], root: Path) -> list[Finding]:
    """One finding per problem the reference validator's rules find, its file relative to `root`."""
    found = []
    for diagnostic in diagnostics:
        code = validation_code(diagnostic)
        file = shown_path(diagnostic.path, root)
        where = f"[{diagnostic.field}] " if diagnostic.field else ""
        severity = RULES[code].severity if diagnostic.severity == "error" else min(
            RULES[code].severity, diagnostic.severity, key=SEVERITIES.index)
        found.append(Finding(code, severity, f"{where}{diagnostic.message}", RULES[code].fix, "validation", file,
                             file=file, skill=Path(file).parts[0] if Path(file).parts else None))
    return found


def shown_path(path: Path, root: Path) -> str:
    """`path` relative to `root` when it lies under it (symlinks not followed), else as given."""
    try:
        relative = Path(path).relative_to(root)
        return str(relative) if relative.parts else str(path)
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


def listing_section(loader: SkillLoader, harness: Harness, context_tokens: int | None = None) -> ListingSection:
    """The listing `harness` would give the model: its budget, what became of each skill, the context share."""
    window = context_tokens or harness.context_tokens
    listing = render_listing(loader, harness.budget, window)
    tokens = estimate_tokens(listing.text)
    return ListingSection(
        harness.budget.name, window, harness.window_source, listing.budget_chars, len(listing.text), tokens,
        tokens / window, dict(listing.counts),
        tuple(ListingFate(name, fate, len(loader.skills[name].description)) for name, fate in listing.fates.items()))


def listing_findings(listing: ListingSection, loader: SkillLoader) -> list[Finding]:
    """SK201 for each skill listed by name only or not at all, SK202 for each description cut short."""
    found = []
    for fate in listing.fates:
        file = shown_path(loader.skills[fate.skill].path, loader.skills[fate.skill].path.parent.parent)
        if fate.fate in ("name", "dropped"):
            what = "by name only" if fate.fate == "name" else "not at all"
            found.append(Finding("SK201", RULES["SK201"].severity,
                                 f"{fate.skill} is listed {what}: {listing.harness}'s listing budget is "
                                 f"{listing.budget_chars:,} characters and the folder's listing needs more",
                                 RULES["SK201"].fix, "listing", f"{fate.skill} ({fate.fate})", file=file,
                                 skill=fate.skill))
        elif fate.fate == "cut":
            found.append(Finding("SK202", RULES["SK202"].severity,
                                 f"{fate.skill}'s description ({fate.description_chars:,} characters) is cut short "
                                 f"in {listing.harness}'s listing", RULES["SK202"].fix, "listing",
                                 f"{fate.skill} (cut)", file=file, skill=fate.skill))
    return found


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


def when_check(skill: Skill) -> WhenRow:
    """Whether the description says when to use the skill and when not to, with the words that say it."""
    when = WHEN_PATTERN.search(skill.description)
    excludes = NOT_FOR_PATTERN.search(skill.description)
    return WhenRow(skill.name, when is not None, when.group(0) if when else None, excludes is not None,
                   excludes.group(0) if excludes else None)


def when_section(loader: SkillLoader) -> WhenSection:
    """The rule, and one row per skill (see `when_check`)."""
    return WhenSection(WHEN_RULE, tuple(when_check(skill) for skill in loader.skills.values()))


def when_findings(when: WhenSection, loader: SkillLoader) -> list[Finding]:
    """SK101 for each description without "when", SK102 for each that excludes nothing."""
    found = []
    for row in when.rows:
        path = loader.skills[row.skill].path
        file = shown_path(path, path.parent.parent)
        if not row.says_when:
            found.append(Finding("SK101", RULES["SK101"].severity,
                                 f"{row.skill}'s description says what the skill does but not when to use it",
                                 RULES["SK101"].fix, "when", row.skill, file=file, skill=row.skill))
        if not row.excludes:
            found.append(Finding("SK102", RULES["SK102"].severity, f"{row.skill}'s description excludes nothing",
                                 RULES["SK102"].fix, "when", row.skill, file=file, skill=row.skill))
    return found

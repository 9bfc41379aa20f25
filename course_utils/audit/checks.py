"""The checks of `audit` that need no model: validation, a harness's own rules on names and descriptions, the
listing a harness cuts, the "when" rule.

Each check returns a typed section (`course_utils.audit.report`) and the findings it makes, each under a rule
of `course_utils.audit.rules`, its fix taken from the rule. `pairs.py` holds the checks on pairs of skills.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course_utils.audit.report import Finding, ListingSection, ListingView, NoListing, WhenRow, WhenSection
from course_utils.audit.rules import RULES, SEVERITIES
from course_utils.scale.listing import HARNESS_LABELS, harness_listing, listed_entry
from course_utils.skills.skill import SKILL_FILES, Diagnostic, Skill, SkillLoader
from course_utils.skills.tokens import estimate_tokens


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
    if "byte-order mark" in message and "rejects the file" in message:  # the spec's reader finds no '---'
        return "SK001"
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
        itself = Path(diagnostic.path) == Path(root)  # about the audited folder: no file of its own
        file = None if itself else shown_path(diagnostic.path, root)
        where = f"[{diagnostic.field}] " if diagnostic.field else ""
        severity = RULES[code].severity if diagnostic.severity == "error" else min(
            RULES[code].severity, diagnostic.severity, key=SEVERITIES.index)
        found.append(Finding(code, severity, f"{where}{diagnostic.message}", RULES[code].fix, "validation",
                             file or str(root), file=file, skill=None if itself else skill_of(diagnostic.path),
                             line=diagnostic.line, field=diagnostic.field))
    return found


def skill_of(path: Path) -> str:
    """The skill folder's name of a diagnostic's path: a SKILL.md's folder, or the folder itself."""
    path = Path(path)
    return path.parent.name if path.name in SKILL_FILES else path.name


def shown_path(path: Path, root: Path) -> str:
    """`path` relative to `root` when it lies under it (symlinks not followed), else as given."""
    try:
        relative = Path(path).relative_to(root)
        return str(relative) if relative.parts else str(path)
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------------------- a harness's own rules


RESERVED_WORDS = ("anthropic", "claude")
"""Words Anthropic's best practices reserve in a skill's name (SK011)."""
MARKUP = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
"""An XML or HTML tag: `<` (or `</`) right before a letter, up to its `>` (SK012); `a < b > c` is no tag."""


def claude_findings(loader: SkillLoader, harness: str) -> list[Finding]:
    """Under Claude Code, SK011 for a name with a reserved word and SK012 for a description holding a tag."""
    if harness != "claude-code":
        return []
    found = []
    for skill in loader.skills.values():
        where = dict(file=shown_path(skill.path, skill.path.parent.parent), skill=skill.name)
        if words := [w for w in RESERVED_WORDS if w in skill.name.lower()]:
            found.append(Finding("SK011", RULES["SK011"].severity,
                                 f"{skill.name}'s name contains the reserved word {words[0]!r}", RULES["SK011"].fix,
                                 "validation", skill.name, field="name", **where))
        if tag := MARKUP.search(skill.description):
            found.append(Finding("SK012", RULES["SK012"].severity,
                                 f"{skill.name}'s description holds the tag {tag.group(0)!r}", RULES["SK012"].fix,
                                 "validation", skill.name, field="description", **where))
    return found


# ---------------------------------------------------------------------------------------------- listing


@dataclass(frozen=True)
class Window:
    """The context window `audit` assumes for a harness's model, and where that number comes from."""

    tokens: int
    source: str


WINDOWS = {
    "claude-code": Window(200_000, "Claude Code's default context window"),
    "codex": Window(272_000, "the window of a Codex log quoted in openai/codex#24299"),
    "gemini-cli": Window(1_048_576, "Gemini 2.5's input limit"),
}
"""The harnesses whose listing `audit` builds; their rules and sources are in `course_utils.scale.listing`."""

NO_LISTING = ("The Agent Skills specification sets no listing rule, so no listing is simulated: what the model "
              "sees of each skill depends on the harness. Give --harness claude-code, codex or gemini-cli to see it.")


def listing_section(loader: SkillLoader, harness: str, context_tokens: int | None = None) -> ListingSection | NoListing:
    """The listing `harness` builds (`listing.harness_listing`): its budget and unit, the order it assumed (no usage is
    known to an audit), what the model sees of each skill and why, and the share of the context window it takes.
    `NoListing` for the spec."""
    if harness not in WINDOWS:
        return NoListing(harness, NO_LISTING)
    window = WINDOWS[harness]
    tokens = context_tokens or window.tokens
    built = harness_listing(harness, loader, tokens)
    estimate = estimate_tokens(built.text)
    views = tuple(ListingView(v.name, v.seen, v.chars, len(listed_entry(harness, loader.skills[v.name])), v.reason)
                  for v in built.views.values())
    return ListingSection(harness, HARNESS_LABELS[harness], tokens,
                          window.source if context_tokens is None else "--context-tokens",
                          built.budget or None, built.unit,  # Gemini CLI's 0: no budget of its own
                          built.used, built.order, built.source, len(built.text), estimate, estimate / tokens,
                          dict(built.counts), views)


def listing_findings(listing: ListingSection | NoListing, loader: SkillLoader) -> list[Finding]:
    """SK201 for each skill listed by name only or left out, SK202 for each entry cut short. A skill `removed`
    (it asked not to be chosen by the model) makes no finding: the listing does what its author asked."""
    if isinstance(listing, NoListing):
        return []
    found = []
    for view in listing.views:
        path = loader.skills[view.skill].path
        where = dict(file=shown_path(path, path.parent.parent), skill=view.skill, field="description")
        if view.seen in ("name", "omitted"):
            what = "by name only" if view.seen == "name" else "not at all (omitted)"
            found.append(Finding("SK201", RULES["SK201"].severity,
                                 f"{view.skill} is listed {what} in {listing.label}'s listing: {view.reason}",
                                 RULES["SK201"].fix, "listing", f"{view.skill} ({view.seen})", **where))
        elif view.seen == "cut":
            found.append(Finding("SK202", RULES["SK202"].severity,
                                 f"{view.skill}'s entry is cut to {view.chars:,} of {view.entry_chars:,} characters "
                                 f"in {listing.label}'s listing: {view.reason}", RULES["SK202"].fix, "listing",
                                 f"{view.skill} (cut)", **where))
    return found


# ---------------------------------------------------------------------------------------------- when / not for


WHEN_PATTERN = re.compile(
    r"\buse (?:it |this(?: skill)? )?(?:when|whenever|if|for|to|on|after|before)\b|\bshould be used (?:when|if|for)\b"
    r"|\bwhen (?:the |a |an )?"
    r"(?:user|someone|you|employee|manager|team)\b|\bwhenever\b|\bif the user\b|\btrigger(?:s|ed)? (?:on|when|by)\b"
    r"|\binvoke (?:it )?when\b|\bà utiliser\b|\butilis\w* (?:quand|lorsque|si|pour)\b|\bquand\b|\blorsqu",
    re.IGNORECASE)
NOT_FOR_PATTERN = re.compile(
    r"\bnot (?:for|to be used|meant for|a substitute)\b|\bdo not use\b|\bdon't use\b|\bnever\b|\binstead\b"
    r"|\bexcept\b|\brather than\b|\bpas (?:pour|de|un|une)\b|\bne (?:pas|jamais)\b|\bsauf\b|\bjamais\b",
    re.IGNORECASE)
WHEN_RULE = ('A description says *when* if it holds a trigger clause: "use when", "use it/this when", "use for", '
             '"should be used when/if/for", '
             '"use if", "when the user/someone/you …", "whenever", "if the user", "triggers on", "invoke when", or in '
             'French "à utiliser", "utiliser quand/lorsque/si/pour", "quand", "lorsque". It excludes if it holds '
             '"not for", "do not use", "never", "instead", "except", "rather than", or "pas pour", "ne pas", "jamais", '
             '"sauf". Case is ignored; the rule reads words, not meaning. Under Claude Code it reads the description '
             'with `when_to_use`, as Claude Code lists the two together.')


def when_check(skill: Skill, harness: str | None = None) -> WhenRow:
    """Whether the description says when to use the skill and when not to, with the words that say it.

    With `harness`, the text read is what that harness lists (`listing.listed_entry`): for Claude Code the
    description and `when_to_use`."""
    text = listed_entry(harness, skill) if harness in WINDOWS else skill.description
    when = WHEN_PATTERN.search(text)
    excludes = NOT_FOR_PATTERN.search(text)
    return WhenRow(skill.name, when is not None, when.group(0) if when else None, excludes is not None,
                   excludes.group(0) if excludes else None)


def when_section(loader: SkillLoader, harness: str | None = None) -> WhenSection:
    """The rule, and one row per skill (see `when_check`)."""
    return WhenSection(WHEN_RULE, tuple(when_check(skill, harness) for skill in loader.skills.values()))


def when_findings(when: WhenSection, loader: SkillLoader) -> list[Finding]:
    """SK101 for each description without "when", SK102 for each that excludes nothing."""
    found = []
    for row in when.rows:
        path = loader.skills[row.skill].path
        where = dict(file=shown_path(path, path.parent.parent), skill=row.skill, field="description")
        if not row.says_when:
            found.append(Finding("SK101", RULES["SK101"].severity,
                                 f"{row.skill}'s description says what the skill does but not when to use it",
                                 RULES["SK101"].fix, "when", row.skill, **where))
        if not row.excludes:
            found.append(Finding("SK102", RULES["SK102"].severity, f"{row.skill}'s description excludes nothing",
                                 RULES["SK102"].fix, "when", row.skill, **where))
    return found

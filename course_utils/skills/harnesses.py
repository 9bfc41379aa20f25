"""Harnesses: the frontmatter fields each agent harness reads, and what it does with the ones it does not.

The Agent Skills specification defines six fields. Each harness reads some of them and adds its own: Claude Code
reads `disable-model-invocation`, `when_to_use`, `argument-hint` and more; Codex reads `metadata.short-description`
and keeps its invocation policy in a separate `agents/openai.yaml`; Gemini CLI reads only `name` and `description`.
A field one harness defines is, to the spec's reference validator, a field outside the spec; moving it under
`metadata` would hide it from the harness that reads it at the top level, and so turn the feature off.

This module holds the tables (`RULES`: per harness, its fields with their expected types and values, and how it
treats `name` and `description`) and `field_problems`, which checks a parsed frontmatter's fields against one
harness's table. `skills.validate_frontmatter(..., harness=…)` joins them with the spec's own rules (name format,
description length, metadata as text), which live in `course_utils.skills.skill`.

Sources, one per harness (the versions read are in `docs/lab/audit.md`):
- spec: https://agentskills.io/specification ("Frontmatter"), as the reference validator `skills-ref` applies it;
- claude-code: https://code.claude.com/docs/en/skills, "Frontmatter reference" and "Control who invokes a skill";
- codex: `codex-rs/core-skills/src/loader.rs` (`SkillFrontmatter`, `validate_len`) in https://github.com/openai/codex,
  and https://developers.openai.com/codex/skills for `agents/openai.yaml`;
- gemini-cli: `packages/core/src/skills/skillLoader.ts` (`loadSkillFromFile`) in
  https://github.com/google-gemini/gemini-cli.
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Harness = Literal["spec", "claude-code", "codex", "gemini-cli"]
HARNESSES: tuple[Harness, ...] = ("spec", "claude-code", "codex", "gemini-cli")
DEFAULT_HARNESS: Harness = "spec"
"""The harness a check assumes when none is named: the Agent Skills spec, as its reference validator reads it."""

Kind = Literal["text", "bool", "text-or-list", "mapping", "choice"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class FieldRule:
    """One frontmatter field a harness reads: its expected kind of value (and allowed values for a choice)."""

    name: str
    kind: Kind
    choices: tuple[str, ...] = ()
    about: str = ""

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` for this field, or None."""
        if self.kind == "text" and not isinstance(value, str):
            return f"must be text, got {type(value).__name__}: quote it"
        if self.kind == "bool" and not isinstance(value, bool):
            return f"must be true or false (unquoted), got {value!r}: write `{self.name}: true` or `false`"
        if self.kind == "text-or-list" and not (isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value))):
            return f"must be text or a list of text, got {type(value).__name__}"
        if self.kind == "mapping" and not isinstance(value, dict):
            return f"must be a mapping, got {type(value).__name__}"
        if self.kind == "choice" and value not in self.choices:
            return f"must be one of {', '.join(self.choices)}, got {value!r}: use one of them"
        return None


def _fields(*rules: FieldRule) -> dict[str, FieldRule]:
    return {rule.name: rule for rule in rules}


SPEC_FIELDS = _fields(
    FieldRule("name", "text", about="1-64 lower-case letters, digits and single hyphens, equal to the folder"),
    FieldRule("description", "text", about="1-1024 characters: what the skill does and when to use it"),
    FieldRule("license", "text"),
    FieldRule("compatibility", "text", about="at most 500 characters"),
    FieldRule("metadata", "mapping", about="text keys to text values"),
    FieldRule("allowed-tools", "text", about="space-separated tools the skill may use (experimental)"),
)
"""The Agent Skills specification's fields (https://agentskills.io/specification)."""


@dataclass(frozen=True)
class HarnessRules:
    """How one harness reads a skill's frontmatter.

    - `fields`: the top-level fields it reads itself, with their expected values; the spec's other fields are
      portable and pass without a word;
    - `name_required`: False when a missing name falls back to the folder's; `name_format`: whether it applies
      the spec's name format (`skills.name_problem`); `name_max`: the longest name it loads (None: no limit);
    - `description_required`, `description_max`: whether it refuses a skill without a description, and the
      longest description it loads (None: no limit it enforces);
    - `unknown`: the severity of a field it does not read (the spec's validator refuses it; a harness ignores it).
    """

    harness: Harness
    label: str
    source: str
    fields: Mapping[str, FieldRule]
    name_required: bool = True
    name_format: bool = True
    name_max: int | None = 64
    description_required: bool = True
    description_max: int | None = 1024
    unknown: Severity = "warning"
    notes: Mapping[str, str] = field(default_factory=dict)
    """Per field of another harness: the fix that gets the same effect here too (Codex's `agents/openai.yaml`)."""


RULES: dict[Harness, HarnessRules] = {
    "spec": HarnessRules(
        "spec", "the Agent Skills spec", "https://agentskills.io/specification", SPEC_FIELDS, unknown="error"),
    "claude-code": HarnessRules(
        "claude-code", "Claude Code", "https://code.claude.com/docs/en/skills (Frontmatter reference)",
        _fields(
            FieldRule("name", "text", about="the /command; defaults to the folder's name"),
            FieldRule("description", "text", about="what the skill does; defaults to the body's first paragraph"),
            FieldRule("when_to_use", "text", about="trigger phrases, appended to the description in the listing"),
            FieldRule("argument-hint", "text", about="shown when the /command is typed, e.g. [issue-number]"),
            FieldRule("arguments", "text-or-list", about="named positional arguments for $name substitution"),
            FieldRule("disable-model-invocation", "bool", about="true: only the user can invoke it; the model "
                      "does not see it in the listing"),
            FieldRule("user-invocable", "bool", about="false: hidden from the / menu; the model can still load it"),
            FieldRule("allowed-tools", "text-or-list", about="tools it may use without asking"),
            FieldRule("model", "text", about="the model to run it with"),
            FieldRule("effort", "choice", ("low", "medium", "high", "xhigh", "max")),
            FieldRule("context", "choice", ("fork",), about="fork: run it in a subagent"),
            FieldRule("agent", "text", about="the subagent type when context: fork"),
            FieldRule("hooks", "mapping", about="lifecycle hooks scoped to the skill"),
            FieldRule("paths", "text-or-list", about="globs that limit when it activates"),
            FieldRule("shell", "choice", ("bash", "powershell")),
        ),
        name_required=False, description_required=False, description_max=None),
    "codex": HarnessRules(
        "codex", "Codex", "codex-rs/core-skills/src/loader.rs (SkillFrontmatter) in https://github.com/openai/codex",
        _fields(
            FieldRule("name", "text", about="defaults to the folder's name; at most 64 characters"),
            FieldRule("description", "text", about="required, at most 1,024 characters"),
            FieldRule("metadata", "mapping", about="Codex reads its short-description (at most 1,024 characters)"),
        ),
        name_required=False, name_format=False,
        notes={"disable-model-invocation": "keep it for Claude Code, and to keep Codex from choosing the skill "
                                           "itself put `policy: {allow_implicit_invocation: false}` in "
                                           "agents/openai.yaml"}),
    "gemini-cli": HarnessRules(
        "gemini-cli", "Gemini CLI", "packages/core/src/skills/skillLoader.ts (loadSkillFromFile) in "
        "https://github.com/google-gemini/gemini-cli",
        _fields(FieldRule("name", "text"), FieldRule("description", "text")),
        name_format=False, name_max=None, description_max=None),
}
"""Each harness's rules. The spec's fields not in a harness's own table are portable: no harness objects to them."""


def rules(harness: str) -> HarnessRules:
    """The rules of `harness`; a ValueError naming the known ones for any other name."""
    if harness not in RULES:
        raise ValueError(f"unknown harness {harness!r}: use one of {', '.join(HARNESSES)}")
    return RULES[harness]  # type: ignore[index]


def owners(name: str) -> list[str]:
    """The harnesses (not the spec) that define a top-level field `name`, by label."""
    return [r.label for r in RULES.values() if r.harness != "spec" and name in r.fields and name not in SPEC_FIELDS]


def _closest(name: str) -> str | None:
    """A field of some harness that `name` looks like a misspelling of (`disable_model_invocation`), or None."""
    known = sorted({f for r in RULES.values() for f in r.fields})
    found = difflib.get_close_matches(name.replace("_", "-").lower(), known, n=1, cutoff=0.85)
    found = found or difflib.get_close_matches(name, known, n=1, cutoff=0.85)
    return found[0] if found and found[0] != name else None


@dataclass(frozen=True)
class Problem:
    """One problem with one frontmatter field under one harness: what it is and how to fix it."""

    field: str | None
    severity: Severity
    message: str
    fix: str


def unknown_field_problem(key: str, harness: str) -> Problem:
    """What `harness` makes of a top-level field it does not read, and the fix that keeps the field working.

    A field another harness defines is never sent under `metadata`: that harness reads it only at the top level.
    """
    rule = rules(harness)
    name = str(key)[:60]
    defined_by = owners(name)
    if defined_by:
        who = " and ".join(defined_by)
        if rule.harness == "spec":
            return Problem(name, "error", f"not a field of the Agent Skills spec but {who}'s: the reference "
                           "validator refuses it", f"keep it if the skill is for {who} (check it as such a skill), "
                           "or remove it for a skill every harness reads the same way; do not move it under "
                           f"metadata: {who} reads it only at the top level")
        return Problem(name, rule.unknown, f"a {who} field: {rule.label} ignores it",
                       rule.notes.get(name, f"keep it for {who}; {rule.label} reads the skill without it"))
    close = _closest(name)
    if close:
        hint = " and ".join(owners(close)) or "the spec"
        return Problem(name, rule.unknown, f"not a field {rule.label} reads; did you mean `{close}` ({hint})?",
                       f"rename it to `{close}`")
    if rule.harness == "spec":
        return Problem(name, "error", "not a field of the Agent Skills spec "
                       f"({', '.join(sorted(SPEC_FIELDS))}): the reference validator refuses it",
                       "remove it, or move it under metadata if it is data for your own tools")
    return Problem(name, rule.unknown, f"not a field {rule.label} reads: ignored",
                   "remove it, or move it under metadata if it is data for your own tools")


def field_problems(data: Mapping[Any, Any], harness: str) -> list[Problem]:
    """The fields of `data` checked against `harness`'s table: values of the wrong kind, fields it does not read,
    and another harness's fields written under `metadata` (where that harness does not look for them).

    `name` and `description` are left to `skills.validate_frontmatter`, which applies the spec's rules to them as
    the harness does; so are the spec's own fields under the spec.
    """
    rule = rules(harness)
    problems: list[Problem] = []
    for key, value in data.items():
        if key in ("name", "description"):
            continue
        if key in rule.fields:
            if rule.harness != "spec" and (message := rule.fields[key].problem(value)):
                problems.append(Problem(str(key), "error", message, _fix_of(message)))
        elif key not in SPEC_FIELDS:
            problems.append(unknown_field_problem(key, harness))
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        for key in metadata:
            if isinstance(key, str) and owners(key):
                who = " and ".join(owners(key))
                problems.append(Problem(f"metadata.{key}"[:60], "warning", f"a {who} field under metadata: {who} "
                                        "reads it only at the top level, so it has no effect here",
                                        f"move it to the top level if the skill is for {who}"))
    if rule.harness == "codex" and isinstance(metadata, dict):
        short = metadata.get("short-description")
        if short is not None and not isinstance(short, str):
            problems.append(Problem("metadata.short-description", "error", "must be text: Codex refuses the skill",
                                    "quote it"))
        elif isinstance(short, str) and len(" ".join(short.split())) > 1024:
            problems.append(Problem("metadata.short-description", "error",
                                    f"is {len(short)} characters; Codex refuses a skill over 1,024",
                                    "shorten it to 1,024 characters"))
    return problems


def _fix_of(message: str) -> str:
    """The fix a `FieldRule.problem` message ends with (after its last ': '), or the message itself."""
    head, _, tail = message.rpartition(": ")
    return tail if head else message

"""Harnesses: the frontmatter fields each agent harness reads, and what it does with the ones it does not.

The Agent Skills specification defines six fields. Each harness reads some of them and adds its own: Claude Code
reads `disable-model-invocation`, `when_to_use`, `argument-hint` and more; Codex reads `metadata.short-description`
and keeps its invocation policy in a separate `agents/openai.yaml`; Gemini CLI reads only `name` and `description`.
A field one harness defines is, to the spec's reference validator, a field outside the spec; moving it under
`metadata` would hide it from the harness that reads it at the top level, and so turn the feature off.

This module holds the tables (`RULES`: per harness, its fields with their expected types and values, and how it
treats `name` and `description`) and `field_problems`, which checks a parsed frontmatter's fields against one
harness's table; `frontmatter_problems` checks a whole frontmatter as one harness reads it, `name` and
`description` included. The spec's own rules (name format, description length, metadata as text) are
`course_utils.skills.spec`'s; `skills.validate_frontmatter(..., harness=…)` picks between the two.

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
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from course_utils.skills.spec import MAX_DESCRIPTION, Diagnostic, name_problem, reporter, shown, spec_problems

Harness = Literal["spec", "claude-code", "codex", "gemini-cli"]
HARNESSES: tuple[Harness, ...] = ("spec", "claude-code", "codex", "gemini-cli")
DEFAULT_HARNESS: Harness = "spec"
LISTING_ENTRY_CHARS = 1_536
"""Claude Code lists at most this many characters of a skill's `description` and `when_to_use` together."""
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

    `name` and `description` are left to `frontmatter_problems` (or the spec's rules); so are the spec's own fields
    under the spec.
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


def as_diagnostics(problems: list[Problem], path: Path) -> list[Diagnostic]:
    """`problems` as diagnostics on `path`, each message ending with its fix."""
    return [Diagnostic(path, p.field, f"{p.message}: {p.fix}", p.severity, p.fix) for p in problems]


def unknown_field_diagnostics(data: Mapping[Any, Any], path: Path, strict: bool) -> list[Diagnostic]:
    """The fields the spec does not define: errors when `strict`, else warnings (the lessons' loader ignores them)."""
    problems = []
    for key in data:
        if key in SPEC_FIELDS:
            continue
        problem = unknown_field_problem(key, "spec")
        if strict:
            problems.append(Diagnostic(path, problem.field, f"{problem.message}: {problem.fix}", "error", problem.fix))
        else:
            problems.append(Diagnostic(path, problem.field, f"{problem.message}; ignored here, an error for `python -m "
                                       f"course_utils validate`: {problem.fix}", "warning", problem.fix))
    return problems


def frontmatter_problems(data: Mapping[Any, Any], path: Path, folder_name: str | None,
                         harness: str) -> list[Diagnostic]:
    """The frontmatter checked as `harness` reads it: the spec's rules under "spec"; under another harness, the
    spec's name and description rules only where it applies them, its own fields' values, and a warning (never an
    error) for a field it does not read."""
    rule = rules(harness)
    if rule.harness == "spec":
        return spec_problems(data, path, folder_name) + as_diagnostics(field_problems(data, "spec"), path)
    problems: list[Diagnostic] = []
    _check_name(data.get("name"), folder_name, rule, reporter(path, problems))
    _check_description(data, rule, reporter(path, problems))
    if rule.harness == "codex" and data.get("metadata") is not None and not isinstance(data["metadata"], dict):
        reporter(path, problems)("metadata", f"must be a mapping, got {type(data['metadata']).__name__}: Codex "
                                             "refuses the skill: write it as `metadata: {short-description: …}`")
    return problems + as_diagnostics(field_problems(data, rule.harness), path)


def _check_name(name: Any, folder_name: str | None, rule: HarnessRules, report: Any) -> None:
    """The name's problems as a harness reads it: the spec's format only where it applies it."""
    if name is None:
        if rule.name_required:
            report("name", "missing: add `name: your-skill-name` to the frontmatter")
    elif not isinstance(name, str):
        report("name", f"must be a string, got {type(name).__name__} {shown(name)}: quote it")
    elif rule.name_format and (problem := name_problem(name, None)):
        report("name", problem)
    elif rule.name_max is not None and len(" ".join(name.split())) > rule.name_max:
        report("name", f"is {len(name)} characters; {rule.label} refuses a name over {rule.name_max}: shorten it")
    elif rule.name_format and folder_name is not None and unicodedata.normalize("NFKC", name) != \
            unicodedata.normalize("NFKC", folder_name):
        report("name", f"{shown(name)} differs from its folder name {shown(folder_name)}: {rule.label} uses the "
                       "name, the spec wants the two equal: rename one of them", "warning")


def _check_description(data: Mapping[Any, Any], rule: HarnessRules, report: Any) -> None:
    """The description's problems as a harness reads it (with Claude Code, its listing entry's length too)."""
    description, label = data.get("description"), rule.label
    text = " ".join(description.split()) if isinstance(description, str) else ""
    if description is None:
        if rule.description_required:
            report("description", "missing: add a description saying what the skill does and when to use it")
        else:
            report("description", f"missing: {label} uses the body's first paragraph: add a description saying "
                                  "what the skill does and when to use it", "warning")
    elif not isinstance(description, str):
        report("description", f"must be a string, got {type(description).__name__}: quote it")
    elif not description.strip():
        report("description", "is empty: say what the skill does and when to use it",
               "error" if rule.harness == "codex" else "warning")
    elif rule.description_max is not None and len(text) > rule.description_max:
        report("description", f"is {len(text)} characters; {label} refuses a skill whose description is over "
                             f"{rule.description_max:,}: shorten it")
    elif len(description) > MAX_DESCRIPTION:
        report("description", f"is {len(description)} characters, over the spec's {MAX_DESCRIPTION:,}: {label} "
                              "loads it, Codex and the spec's validator refuse it: shorten it", "warning")
    if rule.harness == "claude-code" and isinstance(description, str):
        extra = data.get("when_to_use")
        listed = len(description.strip()) + (len(extra.strip()) + 1 if isinstance(extra, str) else 0)
        if listed > LISTING_ENTRY_CHARS:
            report("description", f"with when_to_use is {listed:,} characters; Claude Code's listing cuts each "
                                  f"entry at {LISTING_ENTRY_CHARS:,}: put the key use case first", "warning")

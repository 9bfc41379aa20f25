"""The Agent Skills specification's rules for a frontmatter, as lesson 01 builds them, and the diagnostic a
broken rule gives.

`spec_problems` checks `name` (1-64 lower-case letters, digits and single hyphens, equal to the folder's name),
`description` (1-1024 characters) and the optional fields (`compatibility`, `metadata`, `license`,
`allowed-tools`) as the reference validator `skills-ref` does. What a harness reads differently is
`course_utils.skills.harnesses`'.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from course_utils.skills.text import shorten

NAME_PATTERN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
r"""Letters and digits of any script (`[^\W_]`: what `str.isalnum` accepts), joined by single hyphens. A name
is checked after NFKC normalisation, and must also be lower case (see `name_problem`)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a skill file, with enough context for a person to fix it."""

    path: Path
    field: str | None
    message: str
    severity: Literal["error", "warning"] = "error"
    fix: str | None = None
    """How to fix it, when the message ends with a fix (its last clause)."""
    line: int | None = None
    """The file's line the problem is on, when the parser says (a YAML error); else None."""

    def __str__(self) -> str:
        where = f" [{self.field}]" if self.field else ""
        return f"{self.path}: {self.severity}{where}: {self.message}"


def shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters, for messages about values of any size."""
    if isinstance(value, (list, dict)):
        return f"[{len(value)} items]" if isinstance(value, list) else f"{{{len(value)} keys}}"
    return shorten(repr(value), limit, flat=False)


def name_problem(name: str, folder_name: str | None) -> str | None:
    """What is wrong with a skill's `name`, or None, by the rules of the reference validator (`skills-ref`).

    The name and the folder name are compared after NFKC normalisation (`cafe` + a combining accent
    equals `café`). Letters of any script are allowed when they are lower case or have no case (`技能`).
    """
    normal = unicodedata.normalize("NFKC", name)
    if not 1 <= len(normal) <= MAX_NAME:
        return f"must be 1-{MAX_NAME} characters, got {len(normal)}"
    if normal != normal.lower():
        return f"{shown(name)} has upper-case letters: write it in lower case, and its folder name too"
    if not NAME_PATTERN.fullmatch(normal):
        bad = "".join(sorted({c for c in normal if not (c.isalnum() or c == "-")}))
        what = (f"holds {shown(bad)}" if bad else "starts or ends with a hyphen" if normal[0] == "-" or
                normal[-1] == "-" else "has two hyphens in a row")
        return f"{shown(name)} {what}: use only letters, digits and single hyphens between them"
    if folder_name is not None and normal != unicodedata.normalize("NFKC", folder_name):
        return f"{shown(name)} must equal its folder name {shown(folder_name)}: rename one of them"
    return None


FIX_VERBS = ("add", "quote", "rename", "remove", "use", "write", "say", "give", "shorten", "move", "keep", "put")


def fix_in(message: str) -> str | None:
    """The fix a message ends with: its first clause after ": " that starts with a fix verb, or None."""
    start = message.find(": ")
    while start != -1:
        tail = message[start + 2:]
        if tail.split(" ", 1)[0].lower().strip("`") in FIX_VERBS:
            return tail
        start = message.find(": ", start + 2)
    return None


Report = Callable[..., None]
"""Adds one diagnostic: `report(field, message, severity="error")`."""


def reporter(path: Path, problems: list[Diagnostic]) -> Report:
    """A `Report` that appends to `problems`, each diagnostic on `path` with the fix its message ends with."""
    def report(name: str | None, message: str, severity: Literal["error", "warning"] = "error") -> None:
        problems.append(Diagnostic(path, name, message, severity, fix_in(message)))

    return report


def spec_problems(data: Mapping[Any, Any], path: Path, folder_name: str | None) -> list[Diagnostic]:
    """The frontmatter's problems by the spec's rules for its six fields (not the fields it does not define)."""
    problems: list[Diagnostic] = []
    report = reporter(path, problems)
    name = data.get("name")
    if name is None:
        report("name", "missing: add `name: your-skill-name` to the frontmatter")
    elif not isinstance(name, str):
        report("name", f"must be a string, got {type(name).__name__} {shown(name)}: quote it")
    elif problem := name_problem(name, folder_name):
        report("name", problem)
    description = data.get("description")
    if description is None:
        report("description", "missing: add a description saying what the skill does and when to use it")
    elif not isinstance(description, str):
        report("description", f"must be a string, got {type(description).__name__}: quote it")
    elif not description.strip():
        report("description", "is empty: say what the skill does and when to use it")
    elif len(description) > MAX_DESCRIPTION:
        report("description", f"is {len(description)} characters; the limit is {MAX_DESCRIPTION}")
    _check_optional_fields(data, report)
    return problems


def _check_optional_fields(data: Mapping[Any, Any], report: Report) -> None:
    """The spec's rules for its optional fields: `compatibility`, `metadata`, `license`, `allowed-tools`."""
    compatibility = data.get("compatibility")
    if compatibility is not None and not isinstance(compatibility, str):
        report("compatibility", f"must be a string, got {type(compatibility).__name__}: quote it")
    elif compatibility is not None and len(compatibility) > MAX_COMPATIBILITY:
        report("compatibility", f"is {len(compatibility)} characters; the limit is {MAX_COMPATIBILITY}")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        report("metadata", f"must be a mapping of keys to text, got {type(metadata).__name__}: e.g. metadata: "
                          "{author: you}")
    elif metadata is not None:  # numbers, booleans and dates were read as the text written (see parse_skill)
        bad = next(((k, v) for k, v in metadata.items() if not (isinstance(k, str) and isinstance(v, str))), None)
        if bad:
            report("metadata", f"{shown(bad[0])}: {shown(bad[1])} is not text: give each key one value written "
                              "as text, e.g. tags: \"a, b\"")
    for key in ("license", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            report(key, "must be a string")

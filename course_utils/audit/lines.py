"""Where in a SKILL.md a finding is: the line of the frontmatter field it is about, for SARIF and GitHub annotations.

The validator reports fields, not lines (YAML errors aside), so `locate` reads each file a finding names once and
finds the field's line in its frontmatter: a top-level `key:` line, or for `metadata.key` the `key:` line
indented under `metadata:`. A finding about the whole file, or about a field the file does not have (a missing
`description`), is on line 1, where the frontmatter opens.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path

from course_utils.audit.checks import shown_path
from course_utils.audit.report import Finding
from course_utils.skills.skill import SkillLoader

_KEY = re.compile(r"""^(?P<indent>[ \t]*)(?P<key>"[^"]*"|'[^']*'|[^\s#'"{\[\-?:][^:#]*?)[ \t]*:(?:[ \t]+|$)"""
                  r"(?P<value>[^#]*)")
_DELIMITER = re.compile(r"^---[ \t]*$")


def field_lines(text: str) -> dict[str, int]:
    """The 1-based line of each frontmatter key in `text` (a SKILL.md): top-level keys by name, keys nested one
    level under a top-level key with no value on its line as `parent.key`. Empty when the text has no frontmatter.
    A line-based reading, not a YAML parse: it is only asked where a field the validator named is."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or not _DELIMITER.match(lines[0]):
        return {}
    found: dict[str, int] = {}
    parent = None
    for number, line in enumerate(lines[1:], 2):
        if _DELIMITER.match(line):
            break
        match = _KEY.match(line)
        if not match:
            continue
        key = match["key"].strip("\"'")
        if not match["indent"]:
            parent = key if not match["value"].strip() else None  # only a block mapping has nested keys
            found.setdefault(key, number)
        elif parent is not None:
            found.setdefault(f"{parent}.{key}", number)
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def locate(findings: Iterable[Finding], root: Path, loader: SkillLoader) -> list[Finding]:
    """Each finding with its file relative to `root` (a skill's own file for a finding about a loaded skill) and
    its line: the one it carries (a YAML error's), else its field's, else 1. Findings without a file keep no line.

    Each file is read once, whatever the number of findings in it.
    """
    cache: dict[Path, dict[str, int]] = {}
    located = []
    for finding in findings:
        file = finding.file
        skill = loader.skills.get(finding.skill) if finding.skill else None
        if file is not None and skill is not None:
            file = shown_path(skill.path, root)
        if file is None:
            located.append(finding)
            continue
        line = finding.line
        if line is None and finding.field:
            path = Path(root) / file
            if path not in cache:
                cache[path] = field_lines(_read(path))
            line = cache[path].get(finding.field, 1)
        located.append(dataclasses.replace(finding, file=file, line=line or 1))
    return located


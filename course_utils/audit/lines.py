"""Where in a SKILL.md a finding is: the line of the frontmatter field it is about, for SARIF and GitHub annotations.

The validator reports fields, not lines (YAML errors aside), so `locate` reads each file a finding names once and
finds the field's line in its frontmatter: a top-level `key:` line, or for `metadata.key` the `key:` line
indented under `metadata:`. A finding about the whole file, or about a field the file does not have (a missing
`description`), is on line 1, where the frontmatter opens.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from collections.abc import Iterable
from pathlib import Path

from course_utils.audit.checks import shown_path
from course_utils.audit.report import Finding
from course_utils.skills.skill import SKILL_FILES, SkillLoader

_KEY = re.compile(r"""^(?P<indent>[ \t]*)(?P<key>"[^"]*"|'[^']*'|[^\s#'"{\[\-?:][^:#]*?)[ \t]*:(?:[ \t]+|$)"""
                  r"(?P<value>[^#]*)")
_DELIMITER = re.compile(r"^---[ \t]*$")


@dataclass(frozen=True)
class Span:
    """Where a frontmatter field is written: its 1-based line, the column its key starts on and the column just past
    the line's last character (1-based, as SARIF counts them)."""

    line: int
    column: int
    end_column: int


def field_spans(text: str) -> dict[str, Span]:
    """Where each frontmatter key of `text` (a SKILL.md) is written: top-level keys by name, keys nested one level
    under a top-level key with no value on its line as `parent.key`. Empty when the text has no frontmatter.
    A line-based reading, not a YAML parse: it is only asked where a field the validator named is."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or not _DELIMITER.match(lines[0]):
        return {}
    found: dict[str, Span] = {}
    parent = None
    for number, line in enumerate(lines[1:], 2):
        if _DELIMITER.match(line):
            break
        match = _KEY.match(line)
        if not match:
            continue
        key = match["key"].strip("\"'")
        span = Span(number, len(match["indent"]) + 1, len(line.rstrip()) + 1)
        if not match["indent"]:
            parent = key if not match["value"].strip() else None  # only a block mapping has nested keys
            found.setdefault(key, span)
        elif parent is not None:
            found.setdefault(f"{parent}.{key}", span)
    return found


def field_lines(text: str) -> dict[str, int]:
    """The 1-based line of each frontmatter key in `text` (see `field_spans`)."""
    return {key: span.line for key, span in field_spans(text).items()}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def inside(file: str, skill_file: str) -> bool:
    """Whether `file` is a bundled file of the skill whose SKILL.md is `skill_file` (both as the report shows them)."""
    return Path(file).name not in SKILL_FILES and Path(skill_file).parent in Path(file).parents


def locate(findings: Iterable[Finding], root: Path, loader: SkillLoader) -> list[Finding]:
    """Each finding with its file relative to `root` (a skill's own file for a finding about a loaded skill, unless
    it is about one of the skill's bundled files) and
    its line: the one it carries (a YAML error's), else its field's (with the columns of its key and line), else 1.
    Findings without a file keep no line.

    Each file is read once, whatever the number of findings in it.
    """
    cache: dict[Path, dict[str, Span]] = {}
    located = []
    for finding in findings:
        file = finding.file
        skill = loader.skills.get(finding.skill) if finding.skill else None
        if file is not None and skill is not None and not inside(file, shown_path(skill.path, root)):
            file = shown_path(skill.path, root)
        if file is None:
            located.append(finding)
            continue
        line, column, end = finding.line, finding.column, finding.end_column
        if line is None and finding.field:
            path = Path(root) / file
            if path not in cache:
                cache[path] = field_spans(_read(path))
            span = cache[path].get(finding.field)
            line, column, end = (span.line, span.column, span.end_column) if span else (1, None, None)
        located.append(dataclasses.replace(finding, file=file, line=line or 1, column=column, end_column=end))
    return located


"""Suppressed findings: a rule turned off for one skill in its frontmatter, or for paths in `[tool.skill-audit]`.

In a SKILL.md's frontmatter, `metadata: {skill-audit-ignore: "SK101,SK004"}` or a YAML comment
`# skill-audit: ignore SK101` turns those rules (codes or prefixes) off for that file; in pyproject.toml,
`per-path-ignores = {"skills/legacy/*" = ["SK101"]}` turns them off for the files a glob matches (relative to the
pyproject.toml's folder; a glob matches a file or one of its folders). A suppressed finding stays in the report,
marked with the directive that suppressed it, and is never counted in the exit status. A directive that names no
rule is itself a finding (SK013).
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

import yaml

from course_utils.audit.config import Settings
from course_utils.audit.lines import field_spans
from course_utils.audit.report import Finding
from course_utils.audit.rules import RULES, matches
from course_utils.skills import safeyaml
from course_utils.skills.skill import split_frontmatter

IGNORE_KEY = "skill-audit-ignore"
"""The `metadata` key whose value lists the codes a skill turns off."""
_COMMENT = re.compile(r"#\s*skill-audit:\s*ignore\b(?P<codes>[^#\n]*)", re.IGNORECASE)
_MARK = "skill-audit"
"""Text a file holds when it may carry a directive: files without it are not parsed."""


@dataclass(frozen=True)
class Directive:
    """Codes (or prefixes) turned off, how (said as the report says it), and the line it is on (None: pyproject)."""

    codes: tuple[str, ...]
    how: str
    line: int | None = None


def split_codes(text: str) -> tuple[str, ...]:
    """The codes of a directive's text: separated by commas or spaces, upper-cased."""
    return tuple(code.upper() for code in re.split(r"[\s,]+", text.strip()) if code)


def frontmatter_directives(text: str) -> list[Directive]:
    """The directives in the frontmatter of a SKILL.md's `text`: its `metadata.skill-audit-ignore` and its
    `# skill-audit: ignore` comments. None when the frontmatter cannot be split; the comments only when it is
    not valid YAML."""
    try:
        front, _ = split_frontmatter(text.lstrip("\ufeff").replace("\r\n", "\n"))
    except ValueError:
        return []
    found = [Directive(split_codes(m["codes"]), f"frontmatter comment on line {number}", number)
             for number, line in enumerate(front.splitlines(), 2) if (m := _COMMENT.search(line))]
    try:
        data = safeyaml.load(front, text_under=("metadata",))
    except (yaml.YAMLError, safeyaml.YamlRefused):
        return found
    metadata = data.get("metadata") if isinstance(data, dict) else None
    if isinstance(metadata, dict) and isinstance(metadata.get(IGNORE_KEY), str):
        span = field_spans(text).get(f"metadata.{IGNORE_KEY}") or field_spans(text).get("metadata")
        found.append(Directive(split_codes(metadata[IGNORE_KEY]), f"frontmatter metadata.{IGNORE_KEY}",
                               span.line if span else None))
    return found


def _read(path: Path) -> str:
    if path.name.lower() != "skill.md":
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def skill_file_of(path: Path) -> Path:
    """The SKILL.md whose directives apply to `path`: itself, or for a bundled file its skill's, the nearest above."""
    if path.name.lower() == "skill.md":
        return path
    return next((folder / "SKILL.md" for folder in path.parents if (folder / "SKILL.md").is_file()), path)


def path_directives(file: Path, settings: Settings) -> list[Directive]:
    """The `per-path-ignores` entries whose glob matches `file` or one of its folders, relative to the folder of
    the pyproject.toml they come from."""
    if not settings.per_path_ignores or settings.source is None:
        return []
    project = os.path.dirname(os.path.abspath(settings.source))
    relative = Path(os.path.relpath(os.path.abspath(file), project)).as_posix()
    candidates = [relative, *(p.as_posix() for p in Path(relative).parents if p.as_posix() != ".")]
    return [Directive(codes, f"per-path-ignores {glob!r} in {settings.source}")
            for glob, codes in settings.per_path_ignores if any(fnmatchcase(c, glob) for c in candidates)]


def unknown_code_findings(directives: Sequence[Directive], file: str, skill: str | None) -> list[Finding]:
    """SK013 for each code of a frontmatter directive that no rule starts with."""
    rule = RULES["SK013"]
    return [Finding("SK013", rule.severity, f"{d.how} names {code!r}, which is no rule's code: nothing is "
                                            "suppressed by it", rule.fix, "validation", file, file=file, skill=skill,
                    line=d.line or 1)
            for d in directives if d.line is not None for code in d.codes
            if not any(c.startswith(code) for c in RULES)]


def apply(findings: Sequence[Finding], root: Path, settings: Settings) -> tuple[list[Finding], list[Finding]]:
    """The findings to count (with an SK013 for each directive naming no rule) and those a directive suppresses,
    each marked with the directive's `how`. Each file is read once, and parsed only when it mentions skill-audit."""
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    directives: dict[str, list[Directive]] = {}
    for finding in findings:
        if finding.file is None:
            kept.append(finding)
            continue
        if finding.file not in directives:
            path = Path(root) / finding.file
            text = _read(skill_file_of(path))
            own = frontmatter_directives(text) if _MARK in text else []
            directives[finding.file] = own + path_directives(path, settings)
            kept += unknown_code_findings(own, finding.file, finding.skill)
        hit = next((d for d in directives[finding.file] if matches(finding.code, list(d.codes))), None)
        if hit is None:
            kept.append(finding)
        else:
            suppressed.append(dataclasses.replace(finding, suppressed=hit.how))
    return kept, suppressed

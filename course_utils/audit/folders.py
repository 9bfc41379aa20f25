"""Where the skills of the audited paths are: every SKILL.md under them, grouped by the folder a harness loads.

A path may be one skill folder, a skills folder (`~/.claude/skills`), or a repository holding skills folders at
any depth (`.claude/skills`, `.codex/skills`, `plugins/*/skills`, nested catalogs). Each folder that holds a skill
folder is read as a harness reads a skills folder (`skills.discover`); the skills of every folder form one
catalog, and a name that two files give is a finding: the first is kept, the others are shadowed.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from course_utils.skills.skill import SKILL_FILES, Diagnostic, Skill, discover, read_skill_folder, skill_file

PRUNED = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"})
"""Folders never searched for skills: version control, dependencies and caches hold no skill of the repository."""

ORDER = "here, the first of the paths as given, then of their folders in sorted order"
SHADOW_RULES = {
    "claude-code": f"Claude Code loads one skill per name (enterprise over personal over project; {ORDER})",
    "gemini-cli": f"Gemini CLI loads one skill per name (workspace over user over extension; {ORDER})",
}
DEFAULT_SHADOW_RULE = f"one skill per name is loaded ({ORDER})"


@dataclass(frozen=True)
class SkillsFolder:
    """One folder a harness would load (a skills folder, or one skill folder given on its own), as shown in the
    report (relative to the audited base), and how many valid skills it gave."""

    path: str
    skills: int


@dataclass(frozen=True)
class Collection:
    """The skills of the audited paths in load order, every problem the validator found, the folders they came
    from, and the base the report's files are shown relative to."""

    skills: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...]
    folders: tuple[SkillsFolder, ...]
    base: Path


def skill_folders(path: Path) -> Iterator[Path]:
    """Every folder under `path` (itself included) that holds a SKILL.md, in sorted order; a skill folder's own
    subfolders are not searched (a template bundled with a skill is not a skill a harness loads)."""
    for current, dirs, files in os.walk(path):
        if any(name in files for name in SKILL_FILES):
            dirs.clear()
            yield Path(current)
            continue
        dirs[:] = sorted(d for d in dirs if d not in PRUNED)


def skills_folders(path: Path) -> list[Path]:
    """The folders a harness would load under `path`: `path` itself when it is one skill folder, else the parent
    of each skill folder found, in the order they are first met."""
    if skill_file(path).is_file():
        return [path]
    seen: dict[Path, None] = {}
    for folder in skill_folders(path):
        seen.setdefault(folder.parent, None)
    return list(seen)


def has_skill(paths: Sequence[Path]) -> bool:
    """Whether any SKILL.md lies under `paths`."""
    return any(next(skill_folders(Path(p)), None) is not None for p in paths)


def base_of(paths: Sequence[Path]) -> Path:
    """The folder the report's files are shown relative to: the one path, or the paths' deepest common folder."""
    if len(paths) == 1:
        return Path(paths[0])
    try:
        return Path(os.path.commonpath([str(p) for p in paths]))
    except ValueError:  # relative and absolute paths mixed
        return Path(os.path.commonpath([str(Path(p).absolute()) for p in paths]))


def _read(folder: Path, harness: str | None, ancestors: set[Path]) -> tuple[list[Skill], list[Diagnostic]]:
    """One skills folder (or one skill folder) read as `harness` reads it; a subfolder without SKILL.md that
    holds skills deeper is not reported as "not a skill": it is where the others were found."""
    if skill_file(folder).is_file():
        skill, diagnostics = read_skill_folder(folder, strict=True, harness=harness)
        return [skill] if skill else [], diagnostics
    skills, diagnostics = discover(folder, strict=True, harness=harness)
    kept = [d for d in diagnostics if not (d.path in ancestors and "not a skill" in d.message)]
    return skills, kept


def collect(paths: Sequence[Path], harness: str | None = None) -> Collection:
    """Every skill under `paths` as `harness` reads them (the Agent Skills spec's when None), and every problem.

    A path with no SKILL.md at all is read as a skills folder, so that the validator says it holds none."""
    base = base_of(paths)
    skills: list[Skill] = []
    diagnostics: list[Diagnostic] = []
    folders: list[SkillsFolder] = []
    for path in map(Path, paths):
        groups = skills_folders(path) or [path]
        ancestors = {parent for group in groups for parent in (group, *group.parents)}
        for group in groups:
            found, problems = _read(group, harness, ancestors)
            skills += found
            diagnostics += problems
            folders.append(SkillsFolder(_shown(group, base), len(found)))
    return Collection(tuple(skills), tuple(diagnostics), tuple(folders), base)


def _shown(path: Path, base: Path) -> str:
    """`path` relative to `base`, `.` for the base itself, else as given."""
    try:
        return str(Path(path).relative_to(base))
    except ValueError:
        return str(path)


def shadowed(skills: Sequence[Skill], harness: str | None) -> list[tuple[Skill, Skill, str]]:
    """Each skill whose name an earlier skill already gave: (kept, shadowed, the harness's rule that says so)."""
    rule = SHADOW_RULES.get(harness or "", DEFAULT_SHADOW_RULE)
    first: dict[str, Skill] = {}
    found = []
    for skill in skills:
        kept = first.setdefault(skill.name, skill)
        if kept is not skill:
            found.append((kept, skill, rule))
    return found

"""`audit --fix`: the safe fixes, planned from a report's findings, shown as a unified diff or written atomically.

Safe means the skill says the same words afterwards: CRLF line endings become LF, a byte-order mark goes, a
frontmatter value YAML reads as another type (`description: yes`, a number, a date) is quoted so that it reads as
the text written, and a folder is renamed to its skill's `name`. A fix is planned only where a finding of the report
asks for it, so a suppressed or ignored finding is not fixed; the words of a description are never changed. Each
file is written to a temporary file beside it, then moved over it; a file that cannot be written is named and left
as it was, and the others are written.
"""
from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from course_utils.audit.lines import field_spans
from course_utils.audit.report import AuditReport, Finding
from course_utils.skills import safeyaml
from course_utils.skills.skill import split_frontmatter
from course_utils.skills.spec import name_problem

_PLAIN = re.compile(r"^(?P<key>[^\s#:][^:#]*?)(?P<sep>[ \t]*:[ \t]+)(?P<value>[^\s\"'\[{|>&*!%@`#][^#]*?)"
                    r"(?P<tail>[ \t]+#.*)?$")
"""A top-level `key: value` line whose value is a plain scalar on one line: not quoted, no collection, no block."""
BOM = "\ufeff"


@dataclass(frozen=True)
class FileFix:
    """One file's fixes: its text before and after, and what changed, in words."""

    path: Path
    before: str
    after: str
    changes: tuple[str, ...]


@dataclass(frozen=True)
class Rename:
    """A skill folder renamed to its skill's name."""

    folder: Path
    target: Path


@dataclass(frozen=True)
class Plan:
    """Every fix a report's findings ask for, and those that cannot be made safely (with why)."""

    files: tuple[FileFix, ...]
    renames: tuple[Rename, ...]
    skipped: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.files or self.renames)


def wants(findings: Sequence[Finding]) -> tuple[bool, bool, set[str], bool]:
    """What a file's findings ask to fix: LF line endings, no byte-order mark, the fields to quote, the folder."""
    crlf = any(f.code == "SK009" and "CRLF" in f.message for f in findings)
    bom = any(f.code in ("SK001", "SK009") and "byte-order mark" in f.message for f in findings)
    quote = {f.field for f in findings if f.field and "." not in f.field and f.message.endswith("quote it")}
    rename = any(f.code == "SK002" and "folder name" in f.message and "rename one of them" in f.message
                 for f in findings)
    return crlf, bom, quote, rename


def quoted(text: str, key: str) -> str | None:
    """`text` with the top-level field `key`'s plain value quoted, or None when that cannot be done safely: the
    value is not a plain value on the key's line, or the quoted text would not read back as the value written."""
    span = field_spans(text).get(key)
    lines = text.split("\n")
    if span is None or (match := _PLAIN.match(lines[span.line - 1].rstrip("\r"))) is None:
        return None
    value = match["value"]
    ending = "\r" if lines[span.line - 1].endswith("\r") else ""
    lines[span.line - 1] = f"{match['key']}{match['sep']}{json.dumps(value, ensure_ascii=False)}{match['tail'] or ''}"
    lines[span.line - 1] += ending
    fixed = "\n".join(lines)
    return fixed if frontmatter(fixed).get(key) == value else None


def frontmatter(text: str) -> dict:
    """The frontmatter of a SKILL.md's text as a mapping; empty when it cannot be read."""
    try:
        data = safeyaml.load(split_frontmatter(text.lstrip(BOM).replace("\r\n", "\n"))[0], text_under=("metadata",))
    except (ValueError, yaml.YAMLError, safeyaml.YamlRefused):
        return {}
    return data if isinstance(data, dict) else {}


def text_fix(path: Path, findings: Sequence[Finding]) -> tuple[FileFix | None, str | None]:
    """The fixes of one SKILL.md its findings ask for, and the reason one of them cannot be made (or None)."""
    crlf, bom, quote, _ = wants(findings)
    try:
        before = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return None, f"{path}: cannot be read as UTF-8 ({err}): not fixed"
    after, changes, skipped = before, [], None
    if bom and after.startswith(BOM):
        after, changes = after[1:], [*changes, "byte-order mark removed"]
    if crlf and "\r\n" in after:
        after, changes = after.replace("\r\n", "\n"), [*changes, "line endings CRLF -> LF"]
    for key in sorted(quote):
        if (fixed := quoted(after, key)) is None:
            skipped = f"{path}: {key}'s value cannot be quoted safely (it is not a plain value on one line)"
        else:
            after, changes = fixed, [*changes, f"{key} quoted"]
    return (FileFix(path, before, after, tuple(changes)) if changes else None), skipped


def rename_of(path: Path, text: str, roots: Sequence[Path]) -> tuple[Rename | None, str | None]:
    """The rename that gives a skill's folder its `name`, or why it cannot be made."""
    folder, name = path.parent, frontmatter(text).get("name")
    if not isinstance(name, str) or name_problem(name, None) is not None:
        return None, f"{folder}: its name is not a valid folder name: not renamed"
    target = folder.parent / name
    if any(folder.absolute() == Path(root).absolute() for root in roots):
        return None, f"{folder}: the folder given to audit is not renamed; rename it to {name}"
    if target.exists():
        return None, f"{folder}: cannot be renamed to {name}: {target} exists"
    return Rename(folder, target), None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def plan(report: AuditReport, roots: Sequence[Path]) -> Plan:
    """The fixes the report's findings ask for (`roots`: the audited paths, never renamed)."""
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.file is not None:
            by_file.setdefault(finding.file, []).append(finding)
    files, renames, skipped = [], [], []
    for file, findings in sorted(by_file.items()):
        crlf, bom, quote, rename = wants(findings)
        if not (crlf or bom or quote or rename):
            continue
        path = Path(report.folder) / file
        fix, why = text_fix(path, findings) if crlf or bom or quote else (None, None)
        files += [fix] if fix else []
        if rename:
            move, why_not = rename_of(path, fix.after if fix else _text(path), roots)
            renames += [move] if move else []
            why = why or why_not
        skipped += [why] if why else []
    return Plan(tuple(files), tuple(renames), tuple(skipped))


def diff(fixes: Plan) -> str:
    """The plan as a unified diff (line endings and the byte-order mark named above a file's diff, since a diff
    cannot show them) and one `rename FROM -> TO` line per folder."""
    out: list[str] = []
    for fix in fixes.files:
        out.append(f"fix {fix.path}: {', '.join(fix.changes)}")
        before, after = (t.lstrip(BOM).replace("\r\n", "\n").splitlines(keepends=True) for t in (fix.before, fix.after))
        out += [line.rstrip("\n") for line in difflib.unified_diff(before, after, str(fix.path), str(fix.path))]
    out += [f"rename {r.folder} -> {r.target}" for r in fixes.renames]
    return "\n".join(out)


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, with its permissions, then move it over `path`. OSError
    (the temporary file removed) when that cannot be done, or when `path` is read-only."""
    if not os.access(path, os.W_OK):
        raise PermissionError(f"{path} is read-only")
    mode = stat.S_IMODE(path.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def apply(fixes: Plan) -> tuple[list[str], list[str]]:
    """Make the plan's fixes: the files first, then the renames. Returns what was done and what could not be, each a
    line naming the file or folder."""
    done, failed = [], []
    for fix in fixes.files:
        try:
            write_atomic(fix.path, fix.after)
            done.append(f"fixed {fix.path}: {', '.join(fix.changes)}")
        except OSError as err:
            failed.append(f"{fix.path}: cannot be written ({err.strerror or err}): left as it was")
    for rename in fixes.renames:
        try:
            rename.folder.rename(rename.target)
            done.append(f"renamed {rename.folder} -> {rename.target}")
        except OSError as err:
            failed.append(f"{rename.folder}: cannot be renamed to {rename.target.name} ({err.strerror or err})")
    return done, failed

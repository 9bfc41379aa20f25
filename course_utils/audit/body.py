"""The rules on a skill's body and its folder's files (SK6xx): references that lead nowhere or more than one level
deep, a body longer than a harness reads well, bundled files the body never mentions, and side effects left open to
the model.

A reference is a Markdown link to a relative path, or a bare path under `scripts/`, `references/` or `assets/` (the
spec's folders), read outside fenced code blocks: a fence holds code, whose paths are the user's project's. A mention
is laxer: a file's path, its name, its stem or its folder written anywhere in the text, code included (`mentions`).
"""
from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote

from course_utils.audit.checks import shown_path
from course_utils.audit.report import Finding
from course_utils.audit.rules import RULES
from course_utils.skills.skill import Skill, SkillLoader
from course_utils.skills.tokens import CHARS_PER_TOKEN, estimate_tokens

BODY_LINES = 500
"""Anthropic's skill authoring best practices: "Keep SKILL.md body under 500 lines"."""
BODY_TOKENS = 5_000
"""The Agent Skills specification: instructions "< 5000 tokens recommended"."""
HARNESS_FILES = frozenset({"agents/openai.yaml"})
"""Files of a skill folder that a harness reads, not the model: Codex's interface and policy metadata."""
TEXT_SUFFIXES = frozenset({".md", ".txt", ".py", ".sh", ".js", ".ts", ".json", ".yaml", ".yml", ".toml", ".html"})
"""Bundled files whose own mentions count (a script that reads an asset mentions it)."""
FOR_PEOPLE = ("LICENSE", "LICENCE", "README", "CHANGELOG")
"""Files of a skill folder written for people who browse it, not for the model (upper-cased name prefixes)."""
MAX_READ = 1_000_000
"""Bytes of a bundled file read for its mentions; a larger file is data, not instructions."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_BARE = re.compile(r"(?<![\w./-])(?:\./)?((?:scripts|references|assets)/[\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]+)(?![\w/-])")
_EXAMPLE = re.compile(r"\be\.g\.|\bfor (?:example|instance)\b|\bexamples?\W{0,3}:|\bwould\b", re.IGNORECASE)
"""A line that shows what a skill could hold ("Examples: `references/finance.md` for …"): its bare paths are not
references of this skill."""
_NOT_A_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|#|/|~)|[{}<>$*\s]")
_VERBS = r"deploy|publish|release|ship|send|post|push|delete|destroy|drop"
_PURPOSE = re.compile(rf"^\W*((?:{_VERBS})(?:e?s)?)\b", re.IGNORECASE)
"""A description whose first word is a side effect ("Deploy applications to Vercel", "Publishes the package")."""
_COMMAND = re.compile(r"\b(?:git push|git commit|(?:npm|yarn|pnpm|cargo) publish|twine upload|gh release create"
                      r"|gh pr merge|docker push|kubectl (?:apply|delete)|helm (?:install|upgrade|uninstall)"
                      r"|terraform (?:apply|destroy)|(?:vercel|netlify|fly|flyctl|firebase|wrangler) deploy"
                      r"|vercel --prod|rm -rf|drop (?:table|database)|aws s3 rm)\b"
                      r"|\bcurl\b[^\n]*\s-X\s*(?:POST|PUT|PATCH|DELETE)\b", re.IGNORECASE)
"""A command that changes something outside the conversation: pushes, publishes, deploys, deletes, posts."""


@dataclass(frozen=True)
class Reference:
    """A path a text points to: as written (anchor and query dropped), its 1-based line, whether it is a link, and
    the 1-based columns of the path as written (its first character, and just past its last)."""

    target: str
    line: int
    link: bool
    column: int = 1
    end_column: int = 1


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of `text` outside fenced code blocks, with their 1-based numbers. As in CommonMark, a fence closes
    on a line of the same character, at least as long, with nothing after it (a ```` ```markdown ```` line opens)."""
    fence = ""
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if not fence:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
            else:
                yield number, line
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                and not match.group(2).strip():
            fence = ""


def references(text: str) -> list[Reference]:
    """Every relative path `text` points to outside code: Markdown links (not in a code span) and bare paths under
    the spec's folders (not in a code span that shows a link's syntax, nor on a line giving examples); URLs,
    anchors, absolute paths and placeholders are not paths of the folder."""
    found = []
    for number, line in prose_lines(text):
        for match in _LINK.finditer(_CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)):
            target = unquote(match.group(1).split("#", 1)[0].split("?", 1)[0])
            if target and not _NOT_A_PATH.search(match.group(1)):
                found.append(Reference(target, number, True, match.start(1) + 1, match.end(1) + 1))
        shown = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)) if "](" in m.group(0) else m.group(0), line)
        linked = {r.target for r in found if r.line == number}
        if not _EXAMPLE.search(line):
            found += [Reference(m.group(1), number, False, m.start(1) + 1, m.end(1) + 1)
                      for m in _BARE.finditer(shown) if m.group(1) not in linked]
    return found


def bundled_files(folder: Path, skill_file: Path) -> list[str]:
    """The files of a skill folder the model may be pointed to, as relative POSIX paths: not its `skill_file`, a
    file for people (`FOR_PEOPLE`), a hidden file or folder, a package's `__init__.py`, or one only the harness
    reads."""
    found: list[str] = []
    if [entry.name for entry in os.scandir(folder)] == [skill_file.name]:
        return found
    for base, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "__pycache__")
        for name in sorted(files):
            relative = (Path(base) / name).relative_to(folder).as_posix()
            if (name.startswith(".") or relative == skill_file.name or name.upper().startswith(FOR_PEOPLE)
                    or relative in HARNESS_FILES or name.endswith(".pyc") or name == "__init__.py"):
                continue
            found.append(relative)
    return found


def mentions(text: str, relative: str) -> bool:
    """Whether `text` names the bundled file `relative`: its path or its file name as a word, its stem when it reads
    as a name (`async-parallel` for `rules/async-parallel.md`, or in backticks), a Python module's dotted path
    (`core.easing` for `core/easing.py`), or one of its folders as a folder
    (`canvas-fonts/`, `./canvas-fonts`, `` `canvas-fonts` ``; `references/a.md` does not name `references/b.md`)."""
    parts = relative.split("/")
    stem = Path(parts[-1]).stem
    words = [relative, parts[-1]] + ([stem] if re.search(r"[-_]", stem) and len(stem) > 3 else [])
    if relative.endswith(".py") and len(parts) > 1:  # a module's dotted path: `from core.easing import …`
        words.append(".".join([*parts[:-1], stem]))
    if any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) for name in words) or f"`{stem}`" in text:
        return True
    for folder in ("/".join(parts[:i]) for i in range(1, len(parts))):
        name = re.escape(folder)
        if re.search(rf"(?<![\w./-])(?:{name}/|\./{name}|`{name}/?`)(?![\w/-]|\.\w)", text):
            return True
    return False


def _read(path: Path) -> str:
    try:
        if path.suffix.lower() not in TEXT_SUFFIXES or path.stat().st_size > MAX_READ:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def body_start(skill: Skill) -> int:
    """The line of SKILL.md on which the body's first line is (1 when it cannot be found)."""
    text = _read(skill.path) if skill.body.strip() else ""
    position = text.find(skill.body) if text else -1
    return text.count("\n", 0, position) + 1 if position >= 0 else 1


@dataclass(frozen=True)
class Where:
    """Where findings about one skill go: its file as the report shows it (relative to `root`), and the line its
    body starts on; both are worked out only for a skill that has a finding."""

    skill: Skill
    root: Path

    @cached_property
    def file(self) -> str:
        return shown_path(self.skill.path, self.root)

    @cached_property
    def start(self) -> int:
        return body_start(self.skill)

    @cached_property
    def files(self) -> list[str]:
        return bundled_files(self.skill.path.parent, self.skill.path)

    def finding_in(self, path: Path, message: str, ref: Reference) -> Finding:
        """An SK601 finding about this skill on `ref`'s line of its bundled file `path`."""
        return Finding("SK601", RULES["SK601"].severity, message, RULES["SK601"].fix, "body",
                       f"{self.skill.name} (SK601)", file=shown_path(path, self.root), skill=self.skill.name,
                       line=ref.line, column=ref.column, end_column=ref.end_column)

    def finding(self, code: str, message: str, line: int | None = None, field: str | None = None,
                ref: Reference | None = None) -> Finding:
        """A finding of rule `code` about this skill, on `line` of its body (1-based), at the columns of `ref` when
        given, or on its `field`."""
        at = self.start + line - 1 if line is not None else None
        return Finding(code, RULES[code].severity, message, RULES[code].fix, "body", f"{self.skill.name} ({code})",
                       file=self.file, skill=self.skill.name, line=at, field=field,
                       column=ref.column if ref else None, end_column=ref.end_column if ref else None)


def reference_findings(where: Where) -> list[Finding]:
    """SK601 for each reference of the body to a path that does not exist; SK603 for each file of the folder reached
    only through another Markdown file the body refers to (SKILL.md → a.md → b.md)."""
    found: list[Finding] = []
    direct: dict[Path, Reference] = {}
    refs = references(where.skill.body)
    folder = where.skill.path.parent.resolve() if refs else where.skill.path.parent
    for ref in refs:
        path = (folder / ref.target).resolve()
        if path.exists():
            direct.setdefault(path, ref)
            continue
        outside = "" if path.is_relative_to(folder) else ", outside the skill's folder"
        found.append(where.finding("SK601", f"{where.skill.name}'s SKILL.md refers to {ref.target}, which does not "
                                            f"exist{outside}", ref.line, ref=ref))
    nested: set[Path] = {where.skill.path.resolve()}
    for path, ref in direct.items():
        if path.suffix.lower() != ".md" or not path.is_file():
            continue
        for inner in references(_read(path)):
            target = resolve(inner.target, path.parent, folder)
            if (target is None or target.suffix.lower() != ".md" or not target.is_file() or target in direct
                    or target in nested or not target.is_relative_to(folder)):
                continue
            relative = target.relative_to(folder).as_posix()
            nested.add(target)
            if not mentions(where.skill.body, relative):
                found.append(where.finding("SK603", f"{where.skill.name}'s SKILL.md reaches {relative} only through "
                                                    f"{ref.target}: two levels deep", ref.line, ref=ref))
    return found


def resolve(target: str, base: Path, root: Path) -> Path | None:
    """The file a reference written in a file of folder `base` leads to: relative to `base`, else to the skill's
    `root` (the spec has a skill's files refer to each other from its root); None when neither exists."""
    return next((path for path in ((base / target).resolve(), (root / target).resolve()) if path.exists()), None)


def bundled_link_findings(where: Where) -> list[Finding]:
    """SK601 for each Markdown link, in a bundled Markdown file the body names, to a path that exists neither
    beside that file nor from the skill's root: the model, sent to that file, follows the link to nothing."""
    found: list[Finding] = []
    folder = where.skill.path.parent
    for relative in where.files:
        if not relative.lower().endswith(".md") or not mentions(where.skill.body, relative):
            continue
        path = folder / relative
        for ref in references(_read(path)):
            if ref.link and resolve(ref.target, path.parent, folder) is None:
                found.append(where.finding_in(path, f"{where.skill.name}'s {relative} links to {ref.target}, which "
                                                    "exists neither beside it nor from the skill's folder", ref))
    return found


def size_findings(where: Where) -> list[Finding]:
    """SK602 when the body is over `BODY_LINES` lines or about `BODY_TOKENS` tokens (`tokens.estimate_tokens`)."""
    body = where.skill.body.strip("\n")
    lines, tokens = len(body.splitlines()), estimate_tokens(body)
    over = [f"{lines:,} lines (best practices: under {BODY_LINES})"] if lines > BODY_LINES else []
    if tokens > BODY_TOKENS:
        over.append(f"about {tokens:,} tokens (estimate: {CHARS_PER_TOKEN:g} characters per token; the spec "
                    f"recommends under {BODY_TOKENS:,})")
    return [where.finding("SK602", f"{where.skill.name}'s body is {' and '.join(over)}", 1)] if over else []


def _lost_folder(file: str, files: list[str], lost: list[str]) -> str:
    """The shallowest folder holding `file` none of whose files is named (`scripts/office/schemas/`), else `file`."""
    parts = file.split("/")
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth]) + "/"
        if all(f in lost for f in files if f.startswith(folder)):
            return folder
    return file


def names_neighbour(text: str, named: str, other: str) -> bool:
    """Whether `text`, the text of the bundled file `named` (in a subfolder), names the bundled file `other` under
    its folder or that folder's parent (never the skill's root) as code does: by its path from there, by its folder's
    name as a word not followed by a dot (`from validators import …` for `validators/`, `parent.parent / "schemas"`
    for a sibling `schemas/`; `office.soffice` names one module, not `office/`), or a file's stem (`easing`)."""
    folder = posixpath.dirname(named)
    for base in (b for b in (folder, posixpath.dirname(folder)) if b and other.startswith(b + "/")):
        relative = other[len(base) + 1:]
        if "/" in relative:  # a folder by its name, not as a dotted path to one of its modules (office.soffice)
            word = rf"(?<![\w-]){re.escape(relative.split('/', 1)[0])}(?![\w.-])"
        else:
            word = rf"(?<![\w-]){re.escape(Path(relative).stem)}(?![\w-])"
        if mentions(text, relative) or re.search(word, text):
            return True
    return False


def reached(folder: Path, body: str, files: list[str]) -> set[str]:
    """The bundled files the body names, and those the files so reached name in turn (`mentions`, and
    `names_neighbour` for a file's own folder), until no file is added."""
    named = {f for f in files if mentions(body, f)}
    waiting = sorted(named)
    while waiting:
        current = waiting.pop()
        text = _read(folder / current)
        for other in files if text else ():
            if other not in named and (mentions(text, other) or names_neighbour(text, current, other)):
                named.add(other)
                waiting.append(other)
    return named


def unmentioned_findings(where: Where) -> list[Finding]:
    """SK604 for each bundled file that neither the body nor a file reached from it names (`reached`): the model
    never learns of it. A top folder none of whose files is named is one finding, with its count."""
    files = where.files
    named = reached(where.skill.path.parent, where.skill.body, files)
    lost = [f for f in files if f not in named]
    shown: dict[str, int] = {}
    for file in lost:
        shown[_lost_folder(file, files, lost)] = shown.get(_lost_folder(file, files, lost), 0) + 1
    return [where.finding("SK604", f"{where.skill.name}'s folder holds {key}"
                                   + (f" ({count:,} files)" if count > 1 else "")
                                   + ", which its SKILL.md never mentions") for key, count in shown.items()]


def side_effect_findings(where: Where, harness: str) -> list[Finding]:
    """SK605 under Claude Code when the description starts with a side effect (deploy, publish, send, push, delete),
    the body runs a command that has one (`_COMMAND`), and `disable-model-invocation: true` is not set."""
    skill = where.skill
    if harness != "claude-code" or skill.extra.get("disable-model-invocation") is True:
        return []
    purpose = _PURPOSE.search(skill.description)
    command = next(((n, m.group(0)) for n, line in enumerate(skill.body.splitlines(), 1)
                    if (m := _COMMAND.search(line))), None)
    if purpose is None or command is None:
        return []
    return [where.finding("SK605", f"{skill.name}'s description starts with {purpose.group(1)!r} and its body runs "
                                   f"`{command[1]}` (line {where.start + command[0] - 1}), yet the model may start "
                                   "it on its own", field="description")]


def body_findings(loader: SkillLoader, root: Path, harness: str) -> list[Finding]:
    """Every SK6xx finding on the skills of `loader`, each on its file relative to `root`."""
    found = []
    for skill in loader.skills.values():
        where = Where(skill, root)
        found += (reference_findings(where) + bundled_link_findings(where) + size_findings(where)
                  + unmentioned_findings(where) + side_effect_findings(where, harness))
    return found

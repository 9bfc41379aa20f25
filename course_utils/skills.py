"""Skill files: parse `SKILL.md`, validate it against the Agent Skills rules, load a catalog.

Built step by step in `notebooks/01_skill_files.ipynb` (parsing, validation) and
`notebooks/02_catalog_prompt.ipynb` (catalog, system instruction, the load tool).

A skill is a folder holding a `SKILL.md`: YAML frontmatter between two `---` lines
(`name`, `description`, optional fields), then a Markdown body of instructions.
"""
from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from google.genai import types

from course_utils import safeyaml

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FILE_BYTES = 1_000_000
"""A SKILL.md larger than this is refused unread: a skill is instructions, not a data dump."""
MAX_FRONTMATTER_CHARS = 64_000
"""The frontmatter's fields fit in ~2,000 characters; long text belongs in the body."""
KNOWN_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
_DELIMITER = re.compile(r"^---[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a skill file, with enough context for a person to fix it."""

    path: Path
    field: str | None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f" [{self.field}]" if self.field else ""
        return f"{self.path}: {self.severity}{where}: {self.message}"


@dataclass(frozen=True)
class Skill:
    """A parsed skill: the two fields every catalog needs, its body, and the rest of its frontmatter."""

    name: str
    description: str
    body: str
    path: Path
    extra: Mapping[str, Any] = field(default_factory=dict)


class SkillError(ValueError):
    """A skill file that cannot be used; carries the diagnostics that say why."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


def split_frontmatter(text: str) -> tuple[str, str]:
    """Return (frontmatter, body) of a SKILL.md text whose first line is `---`.

    The frontmatter ends at the next line that is exactly `---`; any later `---` belongs to the body.
    Raises ValueError when the opening or the closing delimiter is missing.
    """
    if not _DELIMITER.match(text):
        raise ValueError("the file must start with a '---' line that opens the YAML frontmatter")
    opening = _DELIMITER.match(text)
    closing = _DELIMITER.search(text, opening.end())
    if closing is None:
        raise ValueError("the frontmatter opened by '---' on line 1 has no closing '---' line")
    front = text[opening.end() : closing.start()].strip("\n")
    return front, text[closing.end() :].lstrip("\n").rstrip()


def shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters, for messages about values of any size."""
    if isinstance(value, (list, dict)):
        return f"[{len(value)} items]" if isinstance(value, list) else f"{{{len(value)} keys}}"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_frontmatter(data: Mapping[Any, Any], path: Path, folder_name: str | None) -> list[Diagnostic]:
    """Check frontmatter fields against the Agent Skills rules; unknown fields are warnings."""
    problems: list[Diagnostic] = []

    def error(name: str, message: str) -> None:
        problems.append(Diagnostic(path, name, message))

    name = data.get("name")
    if name is None:
        error("name", "missing: add `name: your-skill-name` to the frontmatter")
    elif not isinstance(name, str):
        error("name", f"must be a string, got {type(name).__name__} {shown(name)}: quote it")
    elif not 1 <= len(name) <= MAX_NAME:
        error("name", f"must be 1-{MAX_NAME} characters, got {len(name)}")
    elif not NAME_PATTERN.fullmatch(name):
        error("name", f"{shown(name)} must use only a-z, 0-9 and single hyphens, not at the start or end")
    elif folder_name is not None and name != folder_name:
        error("name", f"{shown(name)} must equal its folder name {shown(folder_name)}: rename one of them")

    description = data.get("description")
    if description is None:
        error("description", "missing: add a description saying what the skill does and when to use it")
    elif not isinstance(description, str):
        error("description", f"must be a string, got {type(description).__name__}: quote it")
    elif not description.strip():
        error("description", "is empty: say what the skill does and when to use it")
    elif len(description) > MAX_DESCRIPTION:
        error("description", f"is {len(description)} characters; the limit is {MAX_DESCRIPTION}")

    compatibility = data.get("compatibility")
    if compatibility is not None and not (isinstance(compatibility, str) and len(compatibility) <= MAX_COMPATIBILITY):
        error("compatibility", f"must be a string of at most {MAX_COMPATIBILITY} characters")
    metadata = data.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        error("metadata", "must map strings to strings: quote numbers and dates, e.g. version: \"1.0\"")
    for key in ("license", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            error(key, "must be a string")
    for key in data:
        if key not in KNOWN_FIELDS:
            problems.append(Diagnostic(path, str(key)[:60], "unknown field (ignored)", "warning"))
    return problems


def parse_skill(text: str, path: Path, folder_name: str | None = None) -> tuple[Skill | None, list[Diagnostic]]:
    """Parse and validate the text of a SKILL.md. Returns the skill (None if invalid) and all diagnostics.

    Never raises on bad text: whatever is wrong comes back as a diagnostic naming `path`.
    """
    diagnostics: list[Diagnostic] = []
    if len(text) > MAX_FILE_BYTES:
        return None, [Diagnostic(path, None, f"is {len(text):,} characters; the limit is {MAX_FILE_BYTES:,}")]
    if text.startswith("\ufeff"):
        text = text[1:]
        diagnostics.append(Diagnostic(path, None, "starts with a byte-order mark (removed)", "warning"))
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
        diagnostics.append(Diagnostic(path, None, "uses CRLF line endings (read as LF)", "warning"))
    try:
        front, body = split_frontmatter(text)
    except ValueError as err:
        return None, [*diagnostics, Diagnostic(path, None, str(err))]
    if len(front) > MAX_FRONTMATTER_CHARS:
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter is {len(front):,} characters; the limit is "
                                                           f"{MAX_FRONTMATTER_CHARS:,}: move long text to the body")]
    try:
        data = safeyaml.load(front)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (frontmatter line {where.line + 1})" if where else ""
        reason = getattr(err, "problem", None) or str(err).splitlines()[0]
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter is not valid YAML{line}: {reason}")]
    except safeyaml.YamlRefused as err:
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter refused: {err}")]
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter must be a mapping of fields, got {kind}")]
    diagnostics += validate_frontmatter(data, path, folder_name)
    if any(d.severity == "error" for d in diagnostics):
        return None, diagnostics
    extra = {k: v for k, v in data.items() if k not in ("name", "description")}
    return Skill(data["name"], data["description"].strip(), body, path, extra), diagnostics


def read_skill(path: Path) -> tuple[Skill | None, list[Diagnostic]]:
    """Read one SKILL.md from disk; unreadable or non-UTF-8 files become diagnostics, never exceptions."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, [Diagnostic(path, None, f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")]
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        return None, [Diagnostic(path, None, f"not UTF-8 text (byte {err.start}): save the file as UTF-8")]
    except OSError as err:
        return None, [Diagnostic(path, None, f"cannot be read: {err.strerror or err}")]
    return parse_skill(text, path, path.parent.name)


def _inside(path: Path, root: Path) -> bool:
    """True when `path`, with every symlink and `..` resolved, lies inside `root`."""
    return path.resolve().is_relative_to(root.resolve())


def discover(root: Path) -> tuple[list[Skill], list[Diagnostic]]:
    """Read every `<root>/<folder>/SKILL.md`, refusing anything that resolves outside `root`.

    Folder names that differ only by case or Unicode normalisation (`café` written as NFC and as
    NFD) get a diagnostic naming both files.
    """
    root = Path(root)
    if not root.is_dir():
        return [], [Diagnostic(root, None, "is not a directory of skills")]
    skills: list[Skill] = []
    diagnostics: list[Diagnostic] = []
    first_of: dict[str, Path] = {}  # a folder name folded for case and Unicode form -> the first such folder
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError as err:
        return [], [Diagnostic(root, None, f"cannot be listed: {err.strerror or err}")]
    for folder in folders:
        file = folder / SKILL_FILE
        first = first_of.setdefault(unicodedata.normalize("NFKC", folder.name).casefold(), folder)
        if first is not folder:
            diagnostics.append(Diagnostic(file, "name", (
                f"folder name {ascii(folder.name)} differs from {ascii(first.name)} ({first / SKILL_FILE}) only by "
                "case or Unicode normalisation: they look alike, and macOS or Windows may treat them as one folder; "
                "rename one of them")))
        if not _inside(folder, root) or (file.exists() and not _inside(file, root)):
            diagnostics.append(Diagnostic(file, None, "resolves outside the skills root (symlink or ..): refused"))
        elif not file.is_file():
            diagnostics.append(Diagnostic(folder, None, f"has no {SKILL_FILE}: not a skill", "warning"))
        else:
            skill, found = read_skill(file)
            diagnostics += found
            if skill is not None:
                skills.append(skill)
    if not skills and not any(d.severity == "error" for d in diagnostics):
        diagnostics.append(Diagnostic(root, None, f"holds no skill folder with a {SKILL_FILE}", "warning"))
    return skills, diagnostics


SYSTEM_TEMPLATE = """{preamble}

<available-skills>
When the user's request matches one of these skills, call {function} with its name before you answer,
then follow the instructions it returns. If no skill matches, do not call {function}: answer directly.
{catalog}
</available-skills>"""


class SkillLoader:
    """A catalog of skills: the lines the model sees, the load tool, and the bodies behind it."""

    def __init__(self, skills: Mapping[str, Skill] | Iterable[Skill], diagnostics: Iterable[Diagnostic] = ()):
        items = skills.values() if isinstance(skills, Mapping) else skills
        self.skills: dict[str, Skill] = {}
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        for skill in items:
            if skill.name in self.skills:
                first = self.skills[skill.name].path
                self.diagnostics.append(
                    Diagnostic(skill.path, "name", f"duplicate of {first}: the first one is kept")
                )
            else:
                self.skills[skill.name] = skill

    @classmethod
    def from_root(cls, root: str | Path) -> SkillLoader:
        """Load every valid skill under `root`; problems are kept in `.diagnostics`."""
        skills, diagnostics = discover(Path(root))
        return cls(skills, diagnostics)

    @property
    def names(self) -> list[str]:
        return list(self.skills)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def subset(self, names: Iterable[str]) -> SkillLoader:
        """A loader reduced to `names`, in that order (e.g. the top k by similarity)."""
        return SkillLoader({n: self.skills[n] for n in names})

    def catalog(self) -> str:
        """One line per skill: its name and description, never its body."""
        return "\n".join(f"- {s.name}: {s.description}" for s in self.skills.values())

    def system_instruction(self, preamble: str = "You are a helpful assistant.", function: str = "load_skill") -> str:
        """The system instruction that carries the catalog and says how to use the load tool."""
        return SYSTEM_TEMPLATE.format(preamble=preamble, function=function, catalog=self.catalog())

    def function_declaration(self, function: str = "load_skill") -> types.FunctionDeclaration:
        """The tool that loads a skill, its `name` parameter an enum of the catalog's names."""
        return types.FunctionDeclaration(
            name=function,
            description="Load a skill's full instructions by name. The skills are listed in <available-skills>.",
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={
                    "name": types.Schema(type=types.Type.STRING, enum=self.names, description="The skill's name.")
                },
                required=["name"],
            ),
        )

    def tool(self, function: str = "load_skill") -> types.Tool:
        """The load tool wrapped as a `types.Tool`, ready for `GenerateContentConfig(tools=[…])`."""
        return types.Tool(function_declarations=[self.function_declaration(function)])

    def load_skill(self, name: str) -> str:
        """The body quoted as `<skill name="…" source="…">…</skill>`, or an error naming the available skills.

        Only the catalog's names are served: a path, or anything else, is an unknown skill. A `</skill`
        inside the body is escaped, so a body cannot close its quote and speak outside it.
        """
        skill = self.skills.get(name) if isinstance(name, str) else None
        if skill is None:
            label = str(name) if len(str(name)) <= 60 else str(name)[:59] + "…"
            return f'Error: unknown skill "{label}". Available skills: {", ".join(self.names)}.'
        source = html.escape("/".join(skill.path.parts[-3:]))
        body = re.sub(r"</(skill)", r"&lt;/\1", skill.body, flags=re.IGNORECASE)
        return f'<skill name="{skill.name}" source="{source}">\n{body}\n</skill>'

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
from typing import Any

import yaml
from google.genai import types

from course_utils.skills import harnesses
from course_utils.skills import safeyaml
from course_utils.skills.spec import Diagnostic, spec_problems
from course_utils.skills.text import shorten

SKILL_FILE = "SKILL.md"
SKILL_FILES = (SKILL_FILE, "skill.md")
"""The names a skill's file may have, preferred first: the reference validator (`skills-ref`) reads `skill.md`
when there is no `SKILL.md`."""
MAX_FILE_BYTES = 1_000_000
"""A SKILL.md larger than this is refused unread: a skill is instructions, not a data dump."""
MAX_FRONTMATTER_CHARS = 64_000
"""The frontmatter's fields fit in ~2,000 characters; long text belongs in the body."""
_DELIMITER = re.compile(r"^---[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Skill:
    """A parsed skill: the two fields every catalog needs, its body, and the rest of its frontmatter."""

    name: str
    description: str
    body: str
    path: Path
    extra: Mapping[str, Any] = field(default_factory=dict)


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


def validate_frontmatter(
    data: Mapping[Any, Any], path: Path, folder_name: str | None, strict: bool = False, harness: str | None = None
) -> list[Diagnostic]:
    """Check frontmatter fields against the Agent Skills rules (`spec.spec_problems`), or as `harness` reads them.

    Without `harness`: a field the spec does not define is an error when `strict` (as `python -m course_utils
    validate` and the reference validator report it), else a warning and ignored (as the lessons' loader reads).
    With `harness` (one of `harnesses.HARNESSES`), the frontmatter is checked as that harness reads it
    (`harnesses.frontmatter_problems`; "spec" is the strict check). Each diagnostic carries its `fix`.
    """
    if harness is not None:
        return harnesses.frontmatter_problems(data, path, folder_name, harness)
    return spec_problems(data, path, folder_name) + harnesses.unknown_field_diagnostics(data, path, strict)


def parse_skill(
    text: str, path: Path, folder_name: str | None = None, strict: bool = False, harness: str | None = None
) -> tuple[Skill | None, list[Diagnostic]]:
    """Parse and validate the text of a SKILL.md. Returns the skill (None if invalid) and all diagnostics.

    Never raises on bad text: whatever is wrong comes back as a diagnostic naming `path`. Metadata values
    that YAML would read as numbers, booleans or dates are kept as the text written (`version: 1.10` is
    "1.10"), as the reference validator reads them; the skill's name is kept NFKC-normalised. `strict`, `harness`:
    see `validate_frontmatter`; a harness that reads a skill without `name` names it after its folder, and Claude
    Code reads a missing description as the body's first paragraph.
    """
    diagnostics: list[Diagnostic] = []
    if len(text) > MAX_FILE_BYTES:
        return None, [Diagnostic(path, None, f"is {len(text):,} characters; the limit is {MAX_FILE_BYTES:,}")]
    if text.startswith("\ufeff") and harness == "spec":  # skills-ref reads the mark as text before the '---'
        return None, [Diagnostic(path, None, "starts with a byte-order mark: the reference validator (skills-ref) "
                                             "then finds no opening '---' and rejects the file")]
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
        data = safeyaml.load(front, text_under=("metadata",))
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (frontmatter line {where.line + 1})" if where else ""
        reason = getattr(err, "problem", None) or str(err).splitlines()[0]
        first = 1 + text.count("\n", 0, text.find(front, 3)) if front else 2  # the frontmatter's first line
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter is not valid YAML{line}: {reason}",
                                               line=first + where.line if where else None)]
    except safeyaml.YamlRefused as err:
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter refused: {err}")]
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        return None, [*diagnostics, Diagnostic(path, None, f"frontmatter must be a mapping of fields, got {kind}")]
    diagnostics += validate_frontmatter(data, path, folder_name, strict, harness)
    if any(d.severity == "error" for d in diagnostics):
        return None, diagnostics
    extra = {k: v for k, v in data.items() if k not in ("name", "description")}
    name = unicodedata.normalize("NFKC", data.get("name") or folder_name or path.parent.name)
    description = data.get("description")
    if not isinstance(description, str):
        description = body.split("\n\n", 1)[0] if harness == "claude-code" else ""
    return Skill(name, description.strip(), body, path, extra), diagnostics


def read_skill(path: Path, strict: bool = False, harness: str | None = None) -> tuple[Skill | None, list[Diagnostic]]:
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
    return parse_skill(text, path, path.parent.name, strict, harness)


def _inside(path: Path, root: Path) -> bool:
    """True when `path`, with every symlink and `..` resolved, lies inside `root`."""
    return path.resolve().is_relative_to(root.resolve())


def skill_file(folder: Path) -> Path:
    """The folder's `SKILL.md`, else its `skill.md` if that exists (see `SKILL_FILES`)."""
    return next((folder / name for name in SKILL_FILES if (folder / name).exists()), folder / SKILL_FILE)


def read_skill_folder(folder: Path, strict: bool = False, harness: str | None = None
                      ) -> tuple[Skill | None, list[Diagnostic]]:
    """Read one skill folder given on its own (`validate ./my-skill`); its file must not resolve outside it."""
    file = skill_file(folder)
    if not _inside(file, folder):
        return None, [Diagnostic(file, None, "resolves outside the skill folder (symlink or ..): refused")]
    return read_skill(file, strict, harness)


def discover(root: Path, strict: bool = False, harness: str | None = None) -> tuple[list[Skill], list[Diagnostic]]:
    """Read every `<root>/<folder>/SKILL.md` (or `skill.md`), refusing anything that resolves outside `root`.

    A folder whose name differs from an earlier one's only by case or Unicode normalisation (`café`
    written as NFC and as NFD, `strasse` and `straße`) gets an error naming both files, and of such
    look-alike folders only the first valid skill is loaded. `strict`, `harness`: see `validate_frontmatter`.
    """
    root = Path(root)
    if not root.is_dir():
        return [], [Diagnostic(root, None, "is not a directory of skills")]
    skills: list[Skill] = []
    diagnostics: list[Diagnostic] = []
    first_of: dict[str, Path] = {}  # a folder name folded for case and Unicode form -> the first such file
    kept: set[str] = set()  # the folded names that already gave a skill
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError as err:
        return [], [Diagnostic(root, None, f"cannot be listed: {err.strerror or err}")]
    for folder in folders:
        file = skill_file(folder)
        folded = unicodedata.normalize("NFKC", folder.name).casefold()
        first = first_of.setdefault(folded, file)
        if first is not file:
            diagnostics.append(Diagnostic(file, "name", (
                f"folder name {ascii(folder.name)} differs from {ascii(first.parent.name)} ({first}) only by case "
                "or Unicode normalisation: they look alike, and macOS or Windows may treat them as one folder; "
                "only the first valid one is loaded: rename one of them")))
        if not _inside(folder, root) or (file.exists() and not _inside(file, root)):
            diagnostics.append(Diagnostic(file, None, "resolves outside the skills root (symlink or ..): refused"))
        elif not file.is_file():
            diagnostics.append(Diagnostic(folder, None, f"has no {SKILL_FILE} (nor skill.md): not a skill", "warning"))
        else:
            skill, found = read_skill(file, strict, harness)
            diagnostics += found
            if skill is not None and folded not in kept:
                kept.add(folded)
                skills.append(skill)
    if not skills and not any(d.severity == "error" for d in diagnostics):
        diagnostics.append(Diagnostic(root, None, f"holds no skill folder with a {SKILL_FILE}", "warning"))
    return skills, diagnostics


def catalog_line(name: str, description: str) -> str:
    """One skill's line in a catalog: `- name: description`, or `- name` alone when the description is empty.

    The one place the line's format lives: `SkillLoader.catalog` writes it, and `course_utils.scale.listing`
    measures and cuts it (a harness short of room lists some skills by name only).
    """
    return f"- {name}: {description}" if description else f"- {name}"


LOAD_RULE = """When the user's request matches one of these skills, call {function} with its name before you answer,
then follow the instructions it returns. If no skill matches, {decline}."""
"""How the model is asked to use the load tool: the catalog's system instruction holds it, and so does the hybrid's
(`selection.SHORTLIST_INSTRUCTION`), whose catalog is in the user turn."""

SYSTEM_TEMPLATE = """{preamble}

<available-skills>
""" + LOAD_RULE + """
{catalog}
</available-skills>"""

DECLINE = {False: "do not call {function}: answer directly",
           True: 'call {function} with "{none}", then answer directly'}
"""What the catalog asks when no skill matches: answer without the load tool, or load the name `none` (see
`function_declaration`)."""


def load_declaration(function: str, about: str, names: list[str] | None = None) -> types.FunctionDeclaration:
    """The declaration of a tool that loads a skill by `name`: `about` describes the parameter, `names` (when given)
    is its enum."""
    return types.FunctionDeclaration(
        name=function,
        description="Load a skill's full instructions by name. The skills are listed in <available-skills>.",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={"name": types.Schema(type=types.Type.STRING, enum=names, description=about)},
            required=["name"],
        ),
    )


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
    def from_root(cls, root: str | Path, strict: bool = False, harness: str | None = None) -> SkillLoader:
        """Load every valid skill under `root`; problems are kept in `.diagnostics`. `strict`, `harness`: see
        `discover`."""
        skills, diagnostics = discover(Path(root), strict, harness)
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
        """One line per skill: its name and description, never its body (`catalog_line`)."""
        return "\n".join(catalog_line(s.name, s.description) for s in self.skills.values())

    def system_instruction(self, preamble: str = "You are a helpful assistant.", function: str = "load_skill",
                           none: str | None = None) -> str:
        """The system instruction that carries the catalog and says how to use the load tool (with `none`: to
        call it with that name when no skill matches)."""
        decline = DECLINE[none is not None].format(function=function, none=none)
        return SYSTEM_TEMPLATE.format(preamble=preamble, function=function, decline=decline, catalog=self.catalog())

    def function_declaration(self, function: str = "load_skill", none: str | None = None) -> types.FunctionDeclaration:
        """The tool that loads a skill, its `name` parameter an enum of the catalog's names (and `none`, if given:
        the name that means "no skill")."""
        names, about = (self.names, "The skill's name.") if none is None else (
            [*self.names, none], f'The skill\'s name, or "{none}" when no skill matches.')
        return load_declaration(function, about, names)

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
            label = shorten(str(name), 60, flat=False)
            return f'Error: unknown skill "{label}". Available skills: {", ".join(self.names)}.'
        source = html.escape("/".join(skill.path.parts[-3:]))
        body = re.sub(r"</(skill)", r"&lt;/\1", skill.body, flags=re.IGNORECASE)
        return f'<skill name="{skill.name}" source="{source}">\n{body}\n</skill>'

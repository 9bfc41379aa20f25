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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from google.genai import types

from course_utils.skills import harnesses
from course_utils.skills import safeyaml
from course_utils.skills.text import shorten

SKILL_FILE = "SKILL.md"
SKILL_FILES = (SKILL_FILE, "skill.md")
"""The names a skill's file may have, preferred first: the reference validator (`skills-ref`) reads `skill.md`
when there is no `SKILL.md`."""
NAME_PATTERN = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
r"""Letters and digits of any script (`[^\W_]`: what `str.isalnum` accepts), joined by single hyphens. A name
is checked after NFKC normalisation, and must also be lower case (see `name_problem`)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FILE_BYTES = 1_000_000
"""A SKILL.md larger than this is refused unread: a skill is instructions, not a data dump."""
MAX_FRONTMATTER_CHARS = 64_000
"""The frontmatter's fields fit in ~2,000 characters; long text belongs in the body."""
KNOWN_FIELDS = frozenset(harnesses.SPEC_FIELDS)
LISTING_ENTRY_CHARS = 1_536
"""Claude Code lists at most this many characters of a skill's `description` and `when_to_use` together."""
_DELIMITER = re.compile(r"^---[ \t]*$", re.MULTILINE)


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


def validate_frontmatter(
    data: Mapping[Any, Any], path: Path, folder_name: str | None, strict: bool = False, harness: str | None = None
) -> list[Diagnostic]:
    """Check frontmatter fields against the Agent Skills rules, or as `harness` reads them.

    Without `harness`: a field the spec does not define is an error when `strict` (as `python -m course_utils
    validate` and the reference validator report it), else a warning and ignored (as the lessons' loader reads).
    A field that a harness defines (`disable-model-invocation` is Claude Code's) is named as that harness's, and
    its fix never moves it under `metadata`, where that harness would not read it.

    With `harness` (one of `harnesses.HARNESSES`), the frontmatter is checked as that harness reads it
    (`harnesses.RULES`): "spec" is the strict check; "claude-code", "codex" and "gemini-cli" apply the spec's name
    and description rules only where the harness does, check the harness's own fields' values, and warn (never
    err) about fields it does not read. Each diagnostic carries its `fix`.
    """
    rule = None if harness is None else harnesses.rules(harness)
    spec = rule is None or rule.harness == "spec"
    strict = strict or spec and rule is not None
    label = "the spec" if rule is None else rule.label
    problems: list[Diagnostic] = []

    def report(name: str | None, message: str, severity: Literal["error", "warning"] = "error") -> None:
        problems.append(Diagnostic(path, name, message, severity, fix_in(message)))

    _check_name(data.get("name"), folder_name, rule, label, report)
    _check_description(data, rule, label, report)
    if spec:
        problems += _spec_field_problems(data, path)
    elif rule.harness == "codex" and data.get("metadata") is not None and not isinstance(data["metadata"], dict):
        report("metadata", f"must be a mapping, got {type(data['metadata']).__name__}: Codex refuses the skill: "
                           "write it as `metadata: {short-description: …}`")
    if rule is not None:
        return problems + [Diagnostic(path, p.field, f"{p.message}: {p.fix}", p.severity, p.fix)
                           for p in harnesses.field_problems(data, rule.harness)]
    return problems + _unknown_field_problems(data, path, strict)


Report = Callable[..., None]
"""Adds one diagnostic: `report(field, message, severity="error")`."""


def _check_name(name: Any, folder_name: str | None, rule: harnesses.HarnessRules | None, label: str,
                report: Report) -> None:
    """The name's problems, as the spec (no `rule`, or the spec's) or a harness reads it."""
    spec = rule is None or rule.harness == "spec"
    if name is None:
        if rule is None or rule.name_required:
            report("name", "missing: add `name: your-skill-name` to the frontmatter")
    elif not isinstance(name, str):
        report("name", f"must be a string, got {type(name).__name__} {shown(name)}: quote it")
    elif spec:
        if problem := name_problem(name, folder_name):
            report("name", problem)
    elif rule.name_format and (problem := name_problem(name, None)):
        report("name", problem)
    elif rule.name_max is not None and len(" ".join(name.split())) > rule.name_max:
        report("name", f"is {len(name)} characters; {label} refuses a name over {rule.name_max}: shorten it")
    elif rule.name_format and folder_name is not None and unicodedata.normalize("NFKC", name) != \
            unicodedata.normalize("NFKC", folder_name):
        report("name", f"{shown(name)} differs from its folder name {shown(folder_name)}: {label} uses the name, "
                       "the spec wants the two equal: rename one of them", "warning")


def _check_description(data: Mapping[Any, Any], rule: harnesses.HarnessRules | None, label: str,
                       report: Report) -> None:
    """The description's problems (with Claude Code, its listing entry's length too)."""
    spec = rule is None or rule.harness == "spec"
    description = data.get("description")
    text = " ".join(description.split()) if isinstance(description, str) else ""
    if description is None:
        if spec or rule.description_required:
            report("description", "missing: add a description saying what the skill does and when to use it")
        else:
            report("description", f"missing: {label} uses the body's first paragraph: add a description saying "
                                  "what the skill does and when to use it", "warning")
    elif not isinstance(description, str):
        report("description", f"must be a string, got {type(description).__name__}: quote it")
    elif not description.strip():
        report("description", "is empty: say what the skill does and when to use it",
               "error" if spec or rule.harness == "codex" else "warning")
    elif spec and len(description) > MAX_DESCRIPTION:
        report("description", f"is {len(description)} characters; the limit is {MAX_DESCRIPTION}")
    elif not spec and rule.description_max is not None and len(text) > rule.description_max:
        report("description", f"is {len(text)} characters; {label} refuses a skill whose description is over "
                             f"{rule.description_max:,}: shorten it")
    elif not spec and len(description) > MAX_DESCRIPTION:
        report("description", f"is {len(description)} characters, over the spec's {MAX_DESCRIPTION:,}: {label} "
                              "loads it, Codex and the spec's validator refuse it: shorten it", "warning")
    if rule is not None and rule.harness == "claude-code" and isinstance(description, str):
        extra = data.get("when_to_use")
        listed = len(description.strip()) + (len(extra.strip()) + 1 if isinstance(extra, str) else 0)
        if listed > LISTING_ENTRY_CHARS:
            report("description", f"with when_to_use is {listed:,} characters; Claude Code's listing cuts each "
                                  f"entry at {LISTING_ENTRY_CHARS:,}: put the key use case first", "warning")


def _unknown_field_problems(data: Mapping[Any, Any], path: Path, strict: bool) -> list[Diagnostic]:
    """The fields the spec does not define: errors when `strict`, else warnings (the lessons' loader ignores them)."""
    problems = []
    for key in data:
        if key in KNOWN_FIELDS:
            continue
        problem = harnesses.unknown_field_problem(key, "spec")
        if strict:
            problems.append(Diagnostic(path, problem.field, f"{problem.message}: {problem.fix}", "error", problem.fix))
        else:
            problems.append(Diagnostic(path, problem.field, f"{problem.message}; ignored here, an error for `python -m "
                                       f"course_utils validate`: {problem.fix}", "warning", problem.fix))
    return problems


def _spec_field_problems(data: Mapping[Any, Any], path: Path) -> list[Diagnostic]:
    """The spec's rules for its optional fields: `compatibility`, `metadata`, `license`, `allowed-tools`."""
    problems: list[Diagnostic] = []

    def error(name: str, message: str) -> None:
        problems.append(Diagnostic(path, name, message, "error", fix_in(message)))

    compatibility = data.get("compatibility")
    if compatibility is not None and not isinstance(compatibility, str):
        error("compatibility", f"must be a string, got {type(compatibility).__name__}: quote it")
    elif compatibility is not None and len(compatibility) > MAX_COMPATIBILITY:
        error("compatibility", f"is {len(compatibility)} characters; the limit is {MAX_COMPATIBILITY}")
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        error("metadata", f"must be a mapping of keys to text, got {type(metadata).__name__}: e.g. metadata: "
                          "{author: you}")
    elif metadata is not None:  # numbers, booleans and dates were read as the text written (see parse_skill)
        bad = next(((k, v) for k, v in metadata.items() if not (isinstance(k, str) and isinstance(v, str))), None)
        if bad:
            error("metadata", f"{shown(bad[0])}: {shown(bad[1])} is not text: give each key one value written "
                              "as text, e.g. tags: \"a, b\"")
    for key in ("license", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            error(key, "must be a string")
    return problems


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

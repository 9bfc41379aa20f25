"""`python -m course_utils validate` gives the verdict of the Agent Skills reference validator (issue #18).

The reference is `skills-ref` (agentskills/agentskills, commit 69ef37e), whose two test files hold 36
tests: 21 in `skills-ref/tests/test_validator.py`, 15 in `skills-ref/tests/test_parser.py`. Each is
recreated below as a skill folder (or a path) handed to our `validate`, beside the verdict the reference
asserts. The cases are the reference's facts; the code and layout are ours. The parser's tests check
functions we do not have (`parse_frontmatter`, `find_skill_md`, `read_properties`); their cases are run
through `validate` all the same, and what they read back is checked on the loaded skill.

Where the spec is ambiguous, and which way we go
------------------------------------------------
- **Names.** The spec says a name holds "unicode lowercase alphanumeric characters (`a-z`, `0-9`)":
  "unicode" and "lowercase" allow `мой-навык` or `技能`, the parenthesis allows only ASCII. We follow
  the reference, as the tools built on it do: after NFKC normalisation a name may hold letters
  and digits of any script (what `str.isalnum` accepts) that are lower case or have no case, joined by
  single hyphens; and it must equal its folder name after the same normalisation.
- **Metadata values.** The spec asks for a map of strings to strings; an unquoted `version: 1.0` is a
  float to YAML. The reference reads it as the text "1.0", and so do we: numbers, booleans and dates
  are kept as written (`1.10` stays "1.10").
- **Fields outside the spec.** The spec lists six fields and puts "properties not defined by the Agent
  Skills spec" under `metadata`, without saying what a reader does with other fields; the reference
  rejects them. `validate` reports them as errors, while the lessons' loader (`SkillLoader`) stays
  lenient: it warns, says that `validate` rejects them, and ignores them.

Outside the 36 cases we differ on purpose. The reference parses with strictyaml, which reads every
scalar as text and refuses YAML's flow style. So it accepts `name: 42` in a folder `42` (we ask for
quotes), refuses `metadata: {version: 1.0}` (we accept it: flow style is YAML), and turns a block list
under `metadata` into the text `"['a', 'b']"` and an empty value into "" (we refuse both, naming the key).
It also strips spaces around a quoted name, which we refuse.
"""
from __future__ import annotations

import subprocess
import sys
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from course_utils.skills.skill import SkillLoader
from course_utils.cli.main import main


def front(*lines: str, body: str = "Body") -> str:
    """A SKILL.md text: frontmatter `lines` between two `---` lines, then `body`."""
    return "---\n" + "".join(f"{line}\n" for line in lines) + f"---\n{body}\n"


NAME, DESCRIPTION = "name: my-skill", "description: A test skill"


@dataclass(frozen=True)
class Case:
    """One reference test, recreated: what is on disk, the reference's verdict, and what we must say."""

    reference: str  # the reference's file and test, e.g. "test_validator.py::test_valid_skill"
    says: str  # the reference's verdict, as its test asserts it
    valid: bool  # does `validate` accept it (exit status 0)?
    folder: str = "my-skill"  # the skill folder under the root validated
    files: Mapping[str, str] = field(default_factory=dict)  # file name in the folder -> text
    error: tuple[str | None, str] | None = None  # an invalid case: the field our error names, a part of its line
    reads: Mapping[str, Any] = field(default_factory=dict)  # a valid case: what the loaded skill holds
    root: str = "folder"  # "folder": a root holding `folder`; "missing": no such path; "file": a file


V, P = "test_validator.py::", "test_parser.py::"
CASES = [
    # ------------------------------------------------------------- test_validator.py: validate(skill_dir)
    Case(V + "test_valid_skill", "valid", True, files={"SKILL.md": front(NAME, DESCRIPTION, body="# My Skill")}),
    Case(V + "test_nonexistent_path", "error: does not exist", False, root="missing",
         error=(None, "error: is not a directory of skills")),
    Case(V + "test_not_a_directory", "error: not a directory", False, root="file",
         error=(None, "error: is not a directory of skills")),
    Case(V + "test_missing_skill_md", "error: missing SKILL.md", False, error=(None, "warning: has no SKILL.md")),
    Case(V + "test_invalid_name_uppercase", "error: lowercase", False, folder="MySkill",
         files={"SKILL.md": front("name: MySkill", DESCRIPTION)}, error=("name", "has upper-case letters")),
    Case(V + "test_name_too_long", "error: exceeds character limit", False, folder="a" * 70,
         files={"SKILL.md": front("name: " + "a" * 70, DESCRIPTION)}, error=("name", "must be 1-64 characters")),
    Case(V + "test_name_leading_hyphen", "error: starts with a hyphen", False, folder="-my-skill",
         files={"SKILL.md": front("name: -my-skill", DESCRIPTION)}, error=("name", "starts or ends with a hyphen")),
    Case(V + "test_name_consecutive_hyphens", "error: consecutive hyphens", False, folder="my--skill",
         files={"SKILL.md": front("name: my--skill", DESCRIPTION)}, error=("name", "has two hyphens in a row")),
    Case(V + "test_name_invalid_characters", "error: invalid characters", False, folder="my_skill",
         files={"SKILL.md": front("name: my_skill", DESCRIPTION)}, error=("name", "holds '_'")),
    Case(V + "test_name_directory_mismatch", "error: must match directory", False, folder="wrong-name",
         files={"SKILL.md": front("name: correct-name", DESCRIPTION)}, error=("name", "must equal its folder name")),
    Case(V + "test_unexpected_fields", "error: unexpected fields", False,
         files={"SKILL.md": front(NAME, DESCRIPTION, "unknown_field: should not be here")},
         error=("unknown_field", "not a field of the Agent Skills spec")),
    Case(V + "test_valid_with_all_fields", "valid", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "license: MIT", "metadata:", "  author: Test")},
         reads={"license": "MIT", "metadata": {"author": "Test"}}),
    Case(V + "test_allowed_tools_accepted", "valid", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "allowed-tools: Bash(jq:*) Bash(git:*)")}),
    Case(V + "test_i18n_chinese_name", "valid", True, folder="技能",
         files={"SKILL.md": front("name: 技能", "description: A skill with Chinese name")}, reads={"name": "技能"}),
    Case(V + "test_i18n_russian_name_with_hyphens", "valid", True, folder="мой-навык",
         files={"SKILL.md": front("name: мой-навык", "description: A skill with Russian name")}),
    Case(V + "test_i18n_russian_lowercase_valid", "valid", True, folder="навык",
         files={"SKILL.md": front("name: навык", "description: A skill with Russian lowercase name")}),
    Case(V + "test_i18n_russian_uppercase_rejected", "error: lowercase", False, folder="НАВЫК",
         files={"SKILL.md": front("name: НАВЫК", "description: A skill with Russian uppercase name")},
         error=("name", "has upper-case letters")),
    Case(V + "test_description_too_long", "error: exceeds 1024", False,
         files={"SKILL.md": front(NAME, "description: " + "x" * 1100)}, error=("description", "the limit is 1024")),
    Case(V + "test_valid_compatibility", "valid", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "compatibility: Requires Python 3.11+")}),
    Case(V + "test_compatibility_too_long", "error: exceeds 500", False,
         files={"SKILL.md": front(NAME, DESCRIPTION, "compatibility: " + "x" * 550)},
         error=("compatibility", "the limit is 500")),
    Case(V + "test_nfkc_normalization", "valid", True, folder="caf\u00e9",  # folder precomposed, name decomposed
         files={"SKILL.md": front("name: cafe\u0301", DESCRIPTION)}, reads={"name": "caf\u00e9"}),
    # ------------------------------------------------------------- test_parser.py: parse, find, read
    Case(P + "test_valid_frontmatter", "parsed: name, description, body", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, body="# My Skill\n\nInstructions here.")},
         reads={"name": "my-skill", "description": "A test skill", "body": "# My Skill\n\nInstructions here."}),
    Case(P + "test_missing_frontmatter", "ParseError: must start with frontmatter", False,
         files={"SKILL.md": "# No frontmatter here"}, error=(None, "error: the file must start with a '---' line")),
    Case(P + "test_unclosed_frontmatter", "ParseError: not properly closed", False,
         files={"SKILL.md": f"---\n{NAME}\n{DESCRIPTION}\n"},
         error=(None, "error: the frontmatter opened by '---' on line 1 has no closing '---' line")),
    Case(P + "test_invalid_yaml", "ParseError: invalid YAML", False,
         files={"SKILL.md": front("name: [invalid", "description: broken", body="Body here")},
         error=(None, "error: frontmatter is not valid YAML")),
    Case(P + "test_non_dict_frontmatter", "ParseError: must be a mapping", False,
         files={"SKILL.md": front("- just", "- a", "- list")},
         error=(None, "error: frontmatter must be a mapping of fields")),
    Case(P + "test_read_valid_skill", "read: name, description, license", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "license: MIT", body="# My Skill")},
         reads={"name": "my-skill", "description": "A test skill", "license": "MIT"}),
    Case(P + "test_read_with_metadata", "read: metadata version 1.0 as the text '1.0'", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "metadata:", "  author: Test Author", "  version: 1.0")},
         reads={"metadata": {"author": "Test Author", "version": "1.0"}}),
    Case(P + "test_missing_skill_md", "ParseError: SKILL.md not found", False,
         error=(None, "warning: has no SKILL.md")),
    Case(P + "test_missing_name", "ValidationError: missing name", False,
         files={"SKILL.md": front(DESCRIPTION)}, error=("name", "missing")),
    Case(P + "test_missing_description", "ValidationError: missing description", False,
         files={"SKILL.md": front(NAME)}, error=("description", "missing")),
    Case(P + "test_find_skill_md_prefers_uppercase", "finds SKILL.md over skill.md", True,
         files={"SKILL.md": front(NAME, "description: From SKILL.md"), "skill.md": "lowercase, not a skill"},
         reads={"file": "SKILL.md", "description": "From SKILL.md"}),
    Case(P + "test_find_skill_md_accepts_lowercase", "finds skill.md", True,
         files={"skill.md": front(NAME, DESCRIPTION)}, reads={"file": "skill.md"}),
    Case(P + "test_find_skill_md_returns_none_when_missing", "finds nothing", False,
         error=(None, "warning: has no SKILL.md")),
    Case(P + "test_read_properties_with_lowercase_skill_md", "read from skill.md: name, description", True,
         files={"skill.md": front(NAME, DESCRIPTION, body="# My Skill")},
         reads={"file": "skill.md", "name": "my-skill", "description": "A test skill"}),
    Case(P + "test_read_with_allowed_tools", "read: allowed-tools as written", True,
         files={"SKILL.md": front(NAME, DESCRIPTION, "allowed-tools: Bash(jq:*) Bash(git:*)")},
         reads={"allowed-tools": "Bash(jq:*) Bash(git:*)"}),
]


def lay_out(case: Case, tmp_path: Path) -> Path:
    """Write the case to disk; returns the path handed to `validate`."""
    root = tmp_path / "skills"
    if case.root == "missing":
        return root
    if case.root == "file":
        root.write_text("test")
        return root
    folder = root / case.folder
    folder.mkdir(parents=True)
    for name, text in case.files.items():
        (folder / name).write_text(text, encoding="utf-8")
    if len(list(folder.iterdir())) < len(case.files):
        pytest.skip("this file system does not tell SKILL.md from skill.md")
    return root


def test_every_reference_test_is_recreated_once():
    names = [c.reference for c in CASES]
    assert len(names) == len(set(names)) == 36
    assert sum(n.startswith(V) for n in names) == 21 and sum(n.startswith(P) for n in names) == 15


@pytest.mark.parametrize("case", CASES, ids=[c.reference.split("::")[1] for c in CASES])
def test_validate_gives_the_reference_verdict(case, tmp_path, capsys):
    root = lay_out(case, tmp_path)
    status = main(["validate", str(root)])
    printed = capsys.readouterr().out.splitlines()
    assert (status == 0) == case.valid, printed
    if case.valid:
        assert printed == [f"1 valid, 0 invalid, 0 warning(s) in {root}"]
        skill = next(iter(SkillLoader.from_root(root, strict=True).skills.values()))
        facts = {"name": skill.name, "description": skill.description, "body": skill.body,
                 "file": skill.path.name, **skill.extra}
        assert {k: facts[k] for k in case.reads} == dict(case.reads)
    else:
        field_, fragment = case.error  # for a file-level problem, the fragment starts with its severity
        said = f": error [{field_}]: " if field_ else ": "
        # one line names the file (or folder), the field and the problem
        assert any(line.startswith(str(root)) and said in line and fragment in line for line in printed), printed


@pytest.mark.parametrize("case", [c for c in CASES if c.root not in ("missing", "file")],
                         ids=[c.reference.split("::")[1] for c in CASES if c.root not in ("missing", "file")])
def test_validating_the_skill_folder_itself_gives_the_same_verdict(case, tmp_path, capsys):
    """The spec's own example validates one folder (`skills-ref validate ./my-skill`): so does ours."""
    folder = lay_out(case, tmp_path) / case.folder
    status = main(["validate", str(folder)])
    printed = capsys.readouterr().out.splitlines()
    assert (status == 0) == case.valid, printed
    if case.valid:
        assert printed == [f"1 valid, 0 invalid, 0 warning(s) in {folder}"]


def test_a_single_folder_whose_skill_md_escapes_it_is_refused(tmp_path, capsys):
    outside = tmp_path / "elsewhere.md"
    outside.write_text(front(NAME, DESCRIPTION), encoding="utf-8")
    folder = tmp_path / "my-skill"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(outside)
    assert main(["validate", str(folder)]) == 1
    assert "resolves outside the skill folder" in capsys.readouterr().out


# ----------------------------------------------------------------- the command, in its own process


def run_validate(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course_utils", "validate", str(root)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("reference", [V + "test_i18n_russian_name_with_hyphens", P + "test_read_with_metadata",
                                       V + "test_unexpected_fields", V + "test_i18n_russian_uppercase_rejected"])
def test_the_command_prints_the_verdict(reference, tmp_path):
    case = next(c for c in CASES if c.reference == reference)
    root = lay_out(case, tmp_path)
    result = run_validate(root)
    assert result.returncode == (0 if case.valid else 1), result.stdout + result.stderr
    summary = "1 valid, 0 invalid" if case.valid else "0 valid, 1 invalid"
    assert result.stdout.splitlines()[-1].startswith(summary), result.stdout
    if not case.valid:
        file = root / case.folder / "SKILL.md"
        assert f"{file}: error [{case.error[0]}]: " in result.stdout, result.stdout


# ----------------------------------------------------------------- what the new rules keep


def write(root: Path, folder: str, text: str) -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "SKILL.md").write_text(text, encoding="utf-8")
    return root / folder / "SKILL.md"


def test_the_loader_warns_about_a_field_outside_the_spec_and_says_validate_rejects_it(tmp_path):
    file = write(tmp_path, "my-skill", front(NAME, DESCRIPTION, "owner: someone"))
    lenient, strict = SkillLoader.from_root(tmp_path), SkillLoader.from_root(tmp_path, strict=True)
    assert lenient.names == ["my-skill"] and lenient.skills["my-skill"].extra["owner"] == "someone"
    [warning] = lenient.diagnostics
    assert (warning.path, warning.field, warning.severity) == (file, "owner", "warning")
    assert "not a field of the Agent Skills spec" in warning.message
    assert "an error for `python -m course_utils validate`" in warning.message
    assert strict.names == [] and [(d.field, d.severity) for d in strict.diagnostics] == [("owner", "error")]


@pytest.mark.parametrize("written, read", [("1.0", "1.0"), ("1.10", "1.10"), ("true", "true"), ("0x1F", "0x1F"),
                                           ("2024-01-01", "2024-01-01"), ("'quoted'", "quoted")])
def test_metadata_numbers_booleans_and_dates_are_read_as_written(tmp_path, written, read):
    write(tmp_path, "my-skill", front(NAME, DESCRIPTION, f"metadata: {{version: {written}}}"))
    assert SkillLoader.from_root(tmp_path, strict=True).skills["my-skill"].extra["metadata"] == {"version": read}


@pytest.mark.parametrize("value, shown", [("[a, b]", "[2 items]"), ("{a: b}", "{1 keys}"), ("", "None")])
def test_metadata_lists_mappings_and_empty_values_are_still_refused(tmp_path, value, shown):
    file = write(tmp_path, "my-skill", front(NAME, DESCRIPTION, "metadata:", f"  tags: {value}"))
    loader = SkillLoader.from_root(tmp_path, strict=True)
    assert loader.names == [] and [str(d) for d in loader.errors] == [
        f"{file}: error [metadata]: 'tags': {shown} is not text: give each key one value written as text, "
        'e.g. tags: "a, b"']


def test_an_alias_into_metadata_does_not_change_the_value_elsewhere(tmp_path):
    write(tmp_path, "my-skill", front(NAME, DESCRIPTION, "compatibility: &v 12", "metadata: {version: *v}"))
    loader = SkillLoader.from_root(tmp_path, strict=True)
    assert loader.names == [] and [d.field for d in loader.errors] == ["compatibility"]  # 12 is still a number there


@pytest.mark.parametrize("first, second", [("strasse", "straße"), ("pdf-tools", "ｐｄｆ-tools"),
                                           ("café", unicodedata.normalize("NFD", "café"))])
def test_look_alike_folders_that_are_both_valid_load_only_once(tmp_path, first, second):
    files = [write(tmp_path, name, front(f"name: {name}", DESCRIPTION)) for name in (first, second)]
    loader = SkillLoader.from_root(tmp_path)
    assert len(loader.skills) == 1
    later = max(files, key=str)  # folders are read in sorted order
    assert any(d.path == later and "only by case or Unicode normalisation" in d.message for d in loader.errors)

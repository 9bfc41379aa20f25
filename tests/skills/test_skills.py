"""SKILL.md parsing, validation, the loader's root confinement, the catalog and the load tool."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.skill import SkillLoader, parse_skill, split_frontmatter
from helpers.paths import FIXTURES

MIXED = FIXTURES / "skills_mixed"

# Each broken fixture and the field its error names (None: a file-level problem).
BROKEN = {
    "Upper_Case": "name",
    "bad-yaml": None,
    "empty-description": "description",
    "list-frontmatter": None,
    "long-description": "description",
    "metadata-list": "metadata",
    "missing-description": "description",
    "name-mismatch": "name",
    "no-closing": None,
    "no-frontmatter": None,
    "not-utf8": None,
    "number-name": "name",
}


def write_skill(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder / "SKILL.md"


def valid_text(name: str, description: str = "Does a thing. Use when testing.", body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


@pytest.fixture(scope="module")
def mixed() -> SkillLoader:
    return SkillLoader.from_root(MIXED)


@pytest.mark.parametrize("folder, field", BROKEN.items())
def test_each_broken_fixture_is_refused_with_its_path_and_field(mixed, folder, field):
    errors = [d for d in mixed.errors if d.path.parent.name == folder]
    assert len(errors) == 1, errors
    assert errors[0].path == MIXED / folder / "SKILL.md"
    assert errors[0].field == field
    assert str(errors[0]).startswith(str(MIXED / folder / "SKILL.md"))
    assert folder not in mixed.skills


def test_valid_fixtures_load_and_warnings_do_not_block(mixed):
    assert sorted(mixed.skills) == ["block-scalar", "bom-crlf", "unknown-field"]
    warnings = {(d.path.parent.name, d.field) for d in mixed.diagnostics if d.severity == "warning"}
    assert ("unknown-field", "owner") in warnings
    assert any(d.path == MIXED / "empty-folder" and "no SKILL.md" in d.message for d in mixed.diagnostics)
    assert [d.message for d in mixed.diagnostics if d.path.parent.name == "bom-crlf"] == [
        "starts with a byte-order mark (removed)",
        "uses CRLF line endings (read as LF)",
    ]


def test_block_scalar_quoted_colon_and_dashes_in_body(mixed):
    skill = mixed.skills["block-scalar"]
    assert skill.description == "Folded description: with a colon, over two lines. Use when testing block scalars."
    assert skill.extra["metadata"] == {"note": "quoted: colon"}
    assert skill.body == "# Body\n\nA rule below.\n\n---\n\nStill the body."


def test_bom_and_crlf_are_normalised(mixed):
    skill = mixed.skills["bom-crlf"]
    assert skill.name == "bom-crlf"
    assert skill.body == "Body line."


@pytest.mark.parametrize(
    "name, ok",
    [("a", True), ("pdf-tools", True), ("a1-b2-c3", True), ("x" * 64, True), ("x" * 65, False),
     ("-lead", False), ("trail-", False), ("dou--ble", False), ("Caps", False), ("under_score", False),
     ("", False), ("spa ce", False), ("émoji", True), ("ÉMOJI", False), ("技能", True), ("мой-навык", True),
     ("навык-2", True), ("x😀", False)],
)
def test_name_rules(tmp_path, name, ok):
    folder = name or "empty"
    text = f"---\nname: '{name}'\ndescription: Does a thing.\n---\nBody.\n"
    skill, diagnostics = parse_skill(text, tmp_path / folder / "SKILL.md", folder)
    assert (skill is not None) == ok, diagnostics


def test_compatibility_limit(tmp_path):
    ok = "---\nname: c\ndescription: d\ncompatibility: " + "y" * 500 + "\n---\n"
    too_long = ok.replace("y" * 500, "y" * 501)
    assert parse_skill(ok, tmp_path / "c" / "SKILL.md", "c")[0] is not None
    assert parse_skill(too_long, tmp_path / "c" / "SKILL.md", "c")[0] is None


def test_description_limit(tmp_path):
    path = tmp_path / "d" / "SKILL.md"
    assert parse_skill(valid_text("d", "z" * 1024), path, "d")[0] is not None
    assert parse_skill(valid_text("d", "z" * 1025), path, "d")[0] is None


def test_split_frontmatter_keeps_later_dashes_in_body():
    front, body = split_frontmatter("---\nname: a\n---\nintro\n---\nmore\n")
    assert front == "name: a"
    assert body == "intro\n---\nmore"


def test_symlinked_folder_leaving_the_root_is_refused(tmp_path):
    outside = write_skill(tmp_path / "outside" / "secret", valid_text("secret"))
    root = tmp_path / "root"
    write_skill(root / "inside", valid_text("inside"))
    (root / "secret").symlink_to(outside.parent, target_is_directory=True)
    loader = SkillLoader.from_root(root)
    assert loader.names == ["inside"]
    assert any("outside the skills root" in d.message and d.path.parent.name == "secret" for d in loader.errors)


def test_symlinked_skill_file_leaving_the_root_is_refused(tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text(valid_text("linked"))
    (tmp_path / "root" / "linked").mkdir(parents=True)
    (tmp_path / "root" / "linked" / "SKILL.md").symlink_to(outside)
    loader = SkillLoader.from_root(tmp_path / "root")
    assert loader.skills == {}
    assert "outside the skills root" in loader.errors[0].message


def test_dotdot_root_resolves_and_stays_confined(tmp_path):
    write_skill(tmp_path / "root" / "one", valid_text("one"))
    loader = SkillLoader.from_root(tmp_path / "root" / "one" / "..")
    assert loader.names == ["one"]


def test_missing_root_is_a_diagnostic_not_a_crash(tmp_path):
    loader = SkillLoader.from_root(tmp_path / "nope")
    assert loader.skills == {}
    assert "not a directory" in loader.errors[0].message


def test_duplicate_names_keep_the_first(tmp_path):
    a = write_skill(tmp_path / "a" / "same", valid_text("same", body="first"))
    b = write_skill(tmp_path / "b" / "same", valid_text("same", body="second"))
    skills = [parse_skill(p.read_text(), p, "same")[0] for p in (a, b)]
    loader = SkillLoader(skills)
    assert loader.skills["same"].body == "first"
    assert "duplicate" in loader.errors[0].message


def test_catalog_instruction_tool_and_load(tmp_path):
    for name in ("alpha", "beta"):
        write_skill(tmp_path / name, valid_text(name, f"The {name} skill. Use when {name}.", f"Do {name}."))
    loader = SkillLoader.from_root(tmp_path)
    assert loader.catalog() == "- alpha: The alpha skill. Use when alpha.\n- beta: The beta skill. Use when beta."
    instruction = loader.system_instruction(function="activate_skill")
    assert loader.catalog() in instruction and "call activate_skill" in instruction
    declaration = loader.function_declaration("activate_skill")
    assert declaration.name == "activate_skill"
    assert declaration.parameters.properties["name"].enum == ["alpha", "beta"]
    assert declaration.parameters.required == ["name"]
    assert loader.load_skill("beta") == (f'<skill name="beta" source="{tmp_path.name}/beta/SKILL.md">\n'
                                         'Do beta.\n</skill>')
    assert loader.load_skill("gamma") == 'Error: unknown skill "gamma". Available skills: alpha, beta.'
    assert loader.subset(["beta"]).names == ["beta"]


@pytest.mark.parametrize("catalog", ["workplace", "bakery"])
def test_every_shipped_skill_validates(catalog):
    loader = SkillLoader.from_root(SKILLS_DIR / catalog)
    assert loader.diagnostics == []
    assert len(loader.skills) >= (12 if catalog == "workplace" else 4)


names = st.from_regex(r"[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,4}", fullmatch=True)
descriptions = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=1024
).filter(lambda s: s.strip() == s and s)
bodies = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300).map(
    lambda s: s.replace("\r", "").strip()
)


@given(name=names, description=descriptions, body=bodies)
def test_written_out_and_parsed_back_unchanged(name, description, body):
    """A valid name, description and body, dumped as YAML frontmatter, parse back exactly."""
    front = yaml.safe_dump({"name": name, "description": description}, allow_unicode=True, width=80)
    text = f"---\n{front}---\n{body}\n"
    skill, diagnostics = parse_skill(text, Path(name) / "SKILL.md", name)
    assert skill is not None, diagnostics
    assert (skill.name, skill.description, skill.body) == (name, description.strip(), body.lstrip("\n"))


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "x" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes(data)
    from course_utils.skills.skill import read_skill

    skill, diagnostics = read_skill(path)
    assert skill is not None or any(d.severity == "error" for d in diagnostics)

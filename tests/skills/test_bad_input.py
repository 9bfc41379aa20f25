"""Bad input, tried systematically: frontmatter, skill folders and query sets.

Every outcome must be a result or a diagnostic naming the file — never an uncaught exception, a hang,
or code run from the file. Property tests (hypothesis) cover arbitrary text, bytes, YAML fragments and
folder trees; the named cases pin the limits: huge files, deep nesting, tags, alias bombs, duplicate
names and names that differ only by case or Unicode normalisation.
"""
from __future__ import annotations

import tempfile
import time
import unicodedata
from functools import partial
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_utils.skills import safeyaml
from course_utils.skills.queries import QuerySetError, load_queries
from course_utils.skills.skill import (
    MAX_FILE_BYTES, MAX_FRONTMATTER_CHARS, SkillLoader, parse_skill, read_skill,
)

FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
PATH = Path("root/x/SKILL.md")


def check_outcome(skill, diagnostics, path: Path) -> None:
    """A skill, or at least one error; every diagnostic names `path`."""
    assert skill is not None or any(d.severity == "error" for d in diagnostics)
    assert all(d.path == path and str(d).startswith(str(path)) for d in diagnostics)
    assert all("\n" not in d.message and len(d.message) < 400 for d in diagnostics)


def bomb(levels: int, width: int) -> str:
    """Nested anchors and aliases: `width ** levels` values once expanded ("billion laughs")."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines)


def skill_text(front: str, body: str = "Body.") -> str:
    return f"---\n{front}\n---\n{body}\n"


# ----------------------------------------------------------------- frontmatter, property-based

YAML_PIECES = st.sampled_from([
    "name: x", "description: d", "\n", "  ", "- ", ": ", "[", "]", "{", "}", ",", "&a ", "*a", "&b ", "*b",
    "<<: *a", "? ", "!!python/object/apply:os.system ['true']", "!!python/name:os.system", "!!binary aGk=",
    "!!set {a}", "!custom x", "'quoted: x'", '"\\u00e9"', "|\n  block", ">-\n  folded", "---", "...", "#c",
    "%YAML 1.1", "\t", "\ufeff", "\x00", "caf\u00e9", "cafe\u0301", "2024-01-01", "1e400", "~", "null",
])


@given(st.text(max_size=2000))
def test_any_text_gives_a_skill_or_a_diagnostic(text):
    check_outcome(*parse_skill(text, PATH, "x"), PATH)


@given(st.lists(YAML_PIECES, max_size=40).map("".join), st.text(max_size=200))
def test_yaml_fragments_give_a_skill_or_a_diagnostic(front, body):
    check_outcome(*parse_skill(skill_text(front, body), PATH, "x"), PATH)


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.sampled_from(["name", "description", "license", "compatibility", "metadata",
                                        "allowed-tools", "other"]), yaml_values))
def test_any_yaml_values_in_any_field_give_a_skill_or_a_diagnostic(fields):
    front = yaml.safe_dump(fields, allow_unicode=True)
    check_outcome(*parse_skill(skill_text(front), PATH, "x"), PATH)


# ----------------------------------------------------------------- frontmatter, the limits


@pytest.mark.parametrize("tag", ["!!python/object/apply:os.system", "!!python/object/new:os.system",
                                 "!!python/name:os.system"])
def test_python_tags_are_refused_and_never_run(tmp_path, tag):
    marker = tmp_path / "ran"
    text = skill_text(f"name: x\ndescription: {tag} ['touch {marker}']")
    skill, diagnostics = parse_skill(text, PATH, "x")
    assert skill is None and not marker.exists()
    assert "frontmatter is not valid YAML (frontmatter line 2): could not determine a constructor for the tag" in \
        diagnostics[0].message


@pytest.mark.parametrize("field", ["name", "other"])
@pytest.mark.parametrize("levels, width", [(9, 9), (12, 10), (30, 2)])
def test_alias_bombs_are_refused_fast(field, levels, width):
    text = skill_text(f"{bomb(levels, width)}\nname: x\ndescription: d\n{field}: *a{levels - 1}")
    start = time.perf_counter()
    skill, diagnostics = parse_skill(text, PATH, "x")
    assert time.perf_counter() - start < 1
    assert skill is None
    assert diagnostics[-1].message.startswith("frontmatter refused: expands to more than 100,000 values once its "
                                              "aliases (*name) are followed")


def test_a_few_aliases_are_fine():
    skill, diagnostics = parse_skill(skill_text("name: x\ndescription: &d Does x.\nlicense: *d"), PATH, "x")
    assert skill is not None and skill.extra["license"] == "Does x."


def test_an_alias_inside_its_own_anchor_is_refused():
    skill, diagnostics = parse_skill(skill_text("name: x\ndescription: d\nloop: &l [1, *l]"), PATH, "x")
    assert skill is None and "an alias refers to the value that contains it (line 3)" in diagnostics[0].message


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}"), ("- ", "")])
@pytest.mark.parametrize("depth", [33, 200, 5000])
def test_deep_nesting_is_a_diagnostic(opening, closing, depth):
    if opening == "- ":  # block sequences nest by indentation: 150 levels already take 22,000 characters
        depth = min(depth, 150)
        value = "\n" + "".join(f"{'  ' * (i + 1)}- " + ("\n" if i < depth - 1 else "v\n") for i in range(depth))
    else:
        value = opening * depth + "1" + closing * depth
    skill, diagnostics = parse_skill(skill_text(f"name: x\ndescription: d\nother: {value}"), PATH, "x")
    assert skill is None
    assert diagnostics[-1].message.startswith("frontmatter refused: nested more than 32 levels deep")


def test_nesting_within_the_limit_is_read():
    skill, _ = parse_skill(skill_text("name: x\ndescription: d\nother: " + "[" * 20 + "]" * 20), PATH, "x")
    assert skill is not None


def test_a_20_mb_skill_file_is_refused_unread(tmp_path):
    path = tmp_path / "huge" / "SKILL.md"
    path.parent.mkdir()
    with path.open("wb") as f:
        f.write(skill_text("name: huge\ndescription: d").encode())
        f.truncate(20_000_000)
    start = time.perf_counter()
    skill, diagnostics = read_skill(path)
    assert time.perf_counter() - start < 0.5
    assert skill is None and [str(d) for d in diagnostics] == [
        f"{path}: error: file is 20,000,000 bytes; the limit is {MAX_FILE_BYTES:,}"]


def test_huge_text_and_huge_frontmatter_are_refused():
    skill, diagnostics = parse_skill("x" * 20_000_000, PATH, "x")
    assert skill is None and diagnostics[0].message == f"is 20,000,000 characters; the limit is {MAX_FILE_BYTES:,}"
    text = skill_text(f"name: x\ndescription: d\nother: {'y' * 100_000}")
    skill, diagnostics = parse_skill(text, PATH, "x")
    assert skill is None and diagnostics[0].message == (
        f"frontmatter is 100,030 characters; the limit is {MAX_FRONTMATTER_CHARS:,}: move long text to the body")


def test_a_huge_value_in_an_error_is_shown_short():
    skill, diagnostics = parse_skill(skill_text(f"name: [{', '.join(['a'] * 5000)}]\ndescription: d"), PATH, "x")
    assert skill is None and diagnostics[0].message == "must be a string, got list [5000 items]: quote it"


# ----------------------------------------------------------------- skill folders


def write(root: Path, folder: str, data: bytes | str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


folder_names = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
                       min_size=1, max_size=30).filter(lambda n: n not in (".", "..") and len(n.encode()) < 200)
contents = st.one_of(
    st.binary(max_size=500),
    st.builds(lambda name, desc: skill_text(f"name: {name}\ndescription: {desc}"), folder_names, st.text(max_size=50)),
)


@FAST
@given(st.lists(st.tuples(folder_names, contents), max_size=6))
def test_any_folder_tree_gives_skills_or_diagnostics(tree):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for folder, data in tree:
            write(root, folder, data)
        loader = SkillLoader.from_root(root)
        for name, skill in loader.skills.items():  # a skill is named after its folder, NFKC-normalised
            assert skill.path.parent.parent == root and unicodedata.normalize("NFKC", skill.path.parent.name) == name
        for d in loader.diagnostics:
            assert d.path == root or d.path.is_relative_to(root), d
        nfkc = partial(unicodedata.normalize, "NFKC")  # a folder `²` holds the skill `2`, as skills-ref reads it
        written = {nfkc(folder) for folder, _ in tree if not folder.startswith(".")}
        named = {nfkc(d.path.parent.name) for d in loader.diagnostics} | {nfkc(d.path.name) for d in loader.diagnostics}
        assert written <= set(loader.skills) | named  # every folder is a skill or is named in a diagnostic


VALID = "name: {0}\ndescription: Does {0}."


@pytest.mark.parametrize("first, second", [
    ("café", unicodedata.normalize("NFD", "café")),  # the same name, NFC and NFD
    ("pdf-tools", "PDF-Tools"),
    ("pdf-tools", "ｐｄｆ-tools"),  # full-width letters: NFKC folds them
])
def test_names_differing_only_by_case_or_normalisation_name_both_files(tmp_path, first, second):
    a = write(tmp_path, first, skill_text(VALID.format(first)))
    b = write(tmp_path, second, skill_text(VALID.format(second)))
    loader = SkillLoader.from_root(tmp_path)
    clash = [d for d in loader.errors if "only by case or Unicode normalisation" in d.message]
    assert len(clash) == 1
    later, earlier = (b, a) if str(a) < str(b) else (a, b)
    assert clash[0].path == later and str(earlier) in clash[0].message
    assert ascii(earlier.parent.name) in clash[0].message and ascii(later.parent.name) in clash[0].message


@given(st.from_regex(r"[a-z]{1,8}(-[a-z]{1,8}){0,2}", fullmatch=True), st.data())
@FAST
def test_any_case_variant_of_a_name_is_reported(name, data):
    variant = "".join(c.upper() if data.draw(st.booleans()) else c for c in name)
    if variant == name:
        variant = name.upper()
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp), name, skill_text(VALID.format(name)))
        write(Path(tmp), variant, skill_text(VALID.format(variant)))
        loader = SkillLoader.from_root(Path(tmp))
        assert loader.names == [name]
        assert any("only by case or Unicode normalisation" in d.message for d in loader.errors)


def test_duplicate_names_across_folders_name_both_files(tmp_path):
    a = write(tmp_path / "team-a", "same", skill_text(VALID.format("same"), "first"))
    b = write(tmp_path / "team-b", "same", skill_text(VALID.format("same"), "second"))
    skills = [*SkillLoader.from_root(tmp_path / "team-a").skills.values(),
              *SkillLoader.from_root(tmp_path / "team-b").skills.values()]
    loader = SkillLoader(skills)
    assert loader.skills["same"].body == "first"
    assert [str(d) for d in loader.errors] == [f"{b}: error [name]: duplicate of {a}: the first one is kept"]


def test_an_unlistable_root_is_a_diagnostic(tmp_path, monkeypatch):
    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", refuse)  # as root, chmod cannot make a folder unreadable
    loader = SkillLoader.from_root(tmp_path)
    assert loader.skills == {}
    assert [str(d) for d in loader.errors] == [f"{tmp_path}: error: cannot be listed: Permission denied"]


# ----------------------------------------------------------------- query sets


def check_queries(path: Path, names=None) -> None:
    """load_queries gives a list, or a QuerySetError whose message starts with the path."""
    try:
        queries = load_queries(path, names)
    except QuerySetError as err:
        assert str(err).startswith(f"{path}: ") and "\n" not in str(err)
    else:
        assert isinstance(queries, list) and queries


@FAST
@given(st.binary(max_size=2000))
def test_any_bytes_as_a_query_set(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.yaml"
        path.write_bytes(data)
        check_queries(path)


query_items = st.dictionaries(st.sampled_from(["query", "expected", "kind", "lang", "extra"]),
                              yaml_values | st.sampled_from(["positive", "near-miss", "off-topic", "a", "en"]))


@FAST
@given(st.one_of(st.lists(query_items, max_size=5), yaml_values), st.booleans())
def test_any_yaml_as_a_query_set(data, with_names):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        check_queries(path, ["a", "b"] if with_names else None)


@FAST
@given(st.lists(YAML_PIECES, max_size=40).map("".join))
def test_yaml_fragments_as_a_query_set(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        check_queries(path)


def test_query_set_alias_bomb_is_refused_fast(tmp_path):
    lines = ["- &a0 {query: lol, expected: null, kind: off-topic, lang: en}"]
    lines += [f"- &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    path = tmp_path / "queries.yaml"
    path.write_text("\n".join(lines))
    start = time.perf_counter()
    with pytest.raises(QuerySetError, match="refused: expands to more than 100,000 values"):
        load_queries(path)
    assert time.perf_counter() - start < 1


def test_huge_query_set_is_refused_unread(tmp_path):
    path = tmp_path / "queries.yaml"
    with path.open("wb") as f:
        f.truncate(20_000_000)
    with pytest.raises(QuerySetError, match=r"is 20,000,000 bytes; the limit is 2,000,000"):
        load_queries(path)


def test_a_huge_value_in_a_query_set_error_is_shown_short(tmp_path):
    path = tmp_path / "queries.yaml"
    path.write_text(f"- query: hi\n  expected: null\n  kind: {'k' * 10_000}\n  lang: en\n")
    with pytest.raises(QuerySetError) as caught:
        load_queries(path)
    assert len(str(caught.value)) < len(str(path)) + 150


def test_safeyaml_matches_safe_load_on_the_shipped_files():
    from course_utils.skills.paths import DATA_DIR, SKILLS_DIR

    for path in [*DATA_DIR.glob("*.yaml"), *SKILLS_DIR.glob("*/*/SKILL.md")]:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":
            text = text.split("---")[1]
        assert safeyaml.load(text) == yaml.safe_load(text), path

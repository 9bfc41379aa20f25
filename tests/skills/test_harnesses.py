"""Harness-aware validation (`skills.harnesses`, `skills.skill.validate_frontmatter(..., harness=…)`): each harness's
own fields are checked against its table, fields it does not read are warnings, and no fix ever moves a harness's
field under `metadata`. The fixture `claude_code_skills` holds real-looking Claude Code skills."""
from __future__ import annotations

from pathlib import Path

import pytest

from course_utils.skills.harnesses import DEFAULT_HARNESS, HARNESSES, RULES, owners, rules
from course_utils.skills.skill import SkillLoader, discover, parse_skill, validate_frontmatter
from helpers.paths import FIXTURES

CLAUDE_SKILLS = FIXTURES / "claude_code_skills"
HERE = Path("x/SKILL.md")


def check(data: dict, harness: str | None, folder: str | None = None):
    return validate_frontmatter(data, HERE, folder or data.get("name"), harness=harness)


def by_field(diagnostics):
    return {d.field: d for d in diagnostics}


def test_the_harnesses_and_the_default_are_named():
    assert HARNESSES == ("spec", "claude-code", "codex", "gemini-cli") and DEFAULT_HARNESS == "spec"
    assert set(RULES) == set(HARNESSES)
    assert all(rule.source for rule in RULES.values())
    assert owners("disable-model-invocation") == owners("argument-hint") == ["Claude Code"]
    assert owners("description") == [] and owners("nothing") == []
    with pytest.raises(ValueError, match="unknown harness 'cursor'"):
        rules("cursor")


def test_real_claude_code_skills_validate_clean_under_claude_code():
    skills, diagnostics = discover(CLAUDE_SKILLS, harness="claude-code")
    assert diagnostics == []
    assert sorted(s.name for s in skills) == ["deploy", "explain-code", "fix-issue"]
    deploy = next(s for s in skills if s.name == "deploy")
    assert deploy.extra["disable-model-invocation"] is True and deploy.extra["argument-hint"] == "[environment]"


def test_the_same_skills_fail_the_spec_and_no_fix_moves_a_field_under_metadata():
    skills, diagnostics = discover(CLAUDE_SKILLS, harness="spec")
    assert skills == []  # every one carries a field outside the spec
    errors = {(d.path.parent.name, d.field) for d in diagnostics if d.severity == "error"}
    assert {("deploy", "disable-model-invocation"), ("deploy", "argument-hint"), ("deploy", "context"),
            ("deploy", "allowed-tools"), ("fix-issue", "when_to_use"), ("fix-issue", "model"),
            ("explain-code", "user-invocable"), ("explain-code", "paths")} <= errors
    for d in diagnostics:
        if d.field != "allowed-tools":  # the spec's own field, a list where the spec wants text
            assert "Claude Code" in d.message and d.fix.startswith("keep it")
            assert "do not move it under metadata" in d.fix
    # the lenient loader and `validate` (no harness) name the harness too
    strict = discover(CLAUDE_SKILLS, strict=True)[1]
    assert all("move it under metadata" not in (d.fix or "").replace("do not move it under metadata", "")
               for d in strict)


@pytest.mark.parametrize("harness", ["codex", "gemini-cli"])
def test_other_harnesses_load_them_with_warnings_only(harness):
    loader = SkillLoader.from_root(CLAUDE_SKILLS, harness=harness)
    assert sorted(loader.names) == ["deploy", "explain-code", "fix-issue"]
    assert loader.errors == [] and loader.diagnostics
    assert all(d.severity == "warning" and "Claude Code" in d.message for d in loader.diagnostics)


def test_codex_points_to_its_own_switch_for_disable_model_invocation():
    found = by_field(check({"name": "deploy", "description": "Deploys.", "disable-model-invocation": True}, "codex"))
    assert found["disable-model-invocation"].severity == "warning"
    assert "allow_implicit_invocation: false" in found["disable-model-invocation"].fix


@pytest.mark.parametrize("field, value, expected", [
    ("disable-model-invocation", "yes", "must be true or false"),
    ("user-invocable", 1, "must be true or false"),
    ("effort", "extreme", "must be one of low, medium, high, xhigh, max"),
    ("context", "subagent", "must be one of fork"),
    ("allowed-tools", {"Bash": 1}, "must be text or a list of text"),
    ("hooks", "pre", "must be a mapping"),
])
def test_claude_code_checks_its_own_fields_values(field, value, expected):
    found = by_field(check({"name": "a", "description": "Does a.", field: value}, "claude-code"))
    assert found[field].severity == "error" and expected in found[field].message


def test_fields_a_harness_does_not_read_are_warnings_there_and_errors_for_the_spec():
    data = {"name": "a", "description": "Does a.", "colour": "blue"}
    assert by_field(check(data, "claude-code"))["colour"].severity == "warning"
    assert by_field(check(data, "spec"))["colour"].severity == "error"
    assert "move it under metadata" in by_field(check(data, "spec"))["colour"].fix  # nobody's field: data may go there


def test_a_misspelt_harness_field_is_named():
    found = by_field(check({"name": "a", "description": "Does a.", "disable_model_invocation": True}, "claude-code"))
    assert found["disable_model_invocation"].fix == "rename it to `disable-model-invocation`"


def test_a_harness_field_under_metadata_is_said_to_have_no_effect():
    data = {"name": "a", "description": "Does a.", "metadata": {"disable-model-invocation": "true"}}
    for harness in HARNESSES:
        found = by_field(check(data, harness))
        assert found["metadata.disable-model-invocation"].severity == "warning", harness
        assert "no effect" in found["metadata.disable-model-invocation"].message


def test_name_and_description_follow_each_harness():
    no_name = {"description": "Does a."}
    assert by_field(check(no_name, "spec", "a"))["name"].severity == "error"
    assert check(no_name, "claude-code", "a") == check(no_name, "codex", "a") == []  # the folder's name is used
    assert by_field(check(no_name, "gemini-cli", "a"))["name"].severity == "error"  # Gemini CLI skips the skill
    no_description = {"name": "a"}
    assert by_field(check(no_description, "claude-code"))["description"].severity == "warning"
    for harness in ("spec", "codex", "gemini-cli"):
        assert by_field(check(no_description, harness))["description"].severity == "error", harness
    long = {"name": "a", "description": "d" * 1_025}
    assert by_field(check(long, "spec"))["description"].severity == "error"
    assert by_field(check(long, "codex"))["description"].severity == "error"
    assert by_field(check(long, "claude-code"))["description"].severity == "warning"
    assert by_field(check(long, "gemini-cli"))["description"].severity == "warning"  # it loads; others refuse
    assert check({"name": "a", "description": "d" * 1_024}, "codex") == []
    assert by_field(check({"name": "n" * 65, "description": "d"}, "codex"))["name"].severity == "error"
    assert by_field(check({"name": "Upper", "description": "d"}, "claude-code"))["name"].severity == "error"
    assert check({"name": "Upper", "description": "d"}, "codex") == []  # Codex checks only the length


def test_claude_code_warns_when_the_listing_would_cut_the_entry():
    data = {"name": "a", "description": "d" * 1_000, "when_to_use": "w" * 535}
    assert check(data, "claude-code") == []  # 1,000 + 1 + 535 = 1,536
    data["when_to_use"] += "w"
    assert "cuts each entry at 1,536" in by_field(check(data, "claude-code"))["description"].message


def test_claude_code_reads_a_missing_description_from_the_body():
    text = "---\nname: notes\n---\nSummarise meeting notes.\n\nMore detail.\n"
    skill, diagnostics = parse_skill(text, Path("notes/SKILL.md"), "notes", harness="claude-code")
    assert skill.description == "Summarise meeting notes." and [d.severity for d in diagnostics] == ["warning"]
    skill, _ = parse_skill("---\ndescription: Does a.\n---\nBody.\n", Path("a/SKILL.md"), "a", harness="codex")
    assert skill.name == "a"


def test_without_a_harness_the_old_verdicts_stand():
    data = {"name": "a", "description": "Does a.", "argument-hint": "[x]"}
    assert [d.severity for d in validate_frontmatter(data, HERE, "a")] == ["warning"]
    assert [d.severity for d in validate_frontmatter(data, HERE, "a", strict=True)] == ["error"]
    assert validate_frontmatter(data, HERE, "a", strict=True) == validate_frontmatter(data, HERE, "a", harness="spec")

"""Suppression: in the frontmatter (`metadata.skill-audit-ignore`, a `# skill-audit: ignore` comment) and per path in
`[tool.skill-audit]`; a suppressed finding is counted apart, never in the exit status, and never dropped."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_utils.audit import Settings, render, run_audit
from course_utils.audit.config import ConfigError, load_settings
from course_utils.cli.main import main
from helpers.paths import FIXTURES

NO_WHEN = "Fills PDF forms from a table of values."
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"


def write_skill(folder: Path, extra: str = "", description: str = NO_WHEN) -> Path:
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {folder.name}\ndescription: {description}\n{extra}---\nFill it.\n", encoding="utf-8")
    return path


def audit(root: Path, **settings) -> object:
    report, _ = run_audit(root, Settings(pairs="none", progress=False, **settings))
    return report


@pytest.mark.parametrize("extra", ['metadata: {skill-audit-ignore: "SK101,SK102"}\n',
                                   "metadata:\n  author: me\n  skill-audit-ignore: SK1\n",
                                   "# skill-audit: ignore SK101, SK102\n",
                                   "license: MIT  # skill-audit: ignore SK1\n"])
def test_a_frontmatter_directive_suppresses_its_codes_in_its_file_only(tmp_path, extra):
    write_skill(tmp_path / "quiet", extra)
    write_skill(tmp_path / "loud")
    report = audit(tmp_path)
    assert sorted((f.code, f.file) for f in report.findings) == [("SK101", "loud/SKILL.md"), ("SK102", "loud/SKILL.md")]
    assert sorted((f.code, f.file) for f in report.suppressed) == [("SK101", "quiet/SKILL.md"),
                                                                    ("SK102", "quiet/SKILL.md")]
    assert all(f.suppressed.startswith("frontmatter") for f in report.suppressed)


def test_suppressed_findings_are_not_counted_but_said(tmp_path, capsys):
    write_skill(tmp_path / "quiet", "# skill-audit: ignore SK101\n")
    assert main(["audit", str(tmp_path), "--pairs", "none", "--fail-on", "warning"]) == 0
    out = capsys.readouterr().out
    assert "0 error(s), 0 warning(s); 1 suppressed;" in out.splitlines()[0]
    assert "Suppressed, not counted: 1 finding(s) (SK101 ×1; 1 by frontmatter)" in out
    assert main(["audit", str(tmp_path), "--pairs", "none", "--fail-on", "info", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)  # SK102 (info) is not suppressed
    assert [f["code"] for f in data["suppressed"]] == ["SK101"]
    assert [f["code"] for f in data["findings"]] == ["SK102"]


def test_sarif_carries_a_suppressed_finding_with_its_suppression(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    write_skill(tmp_path / "quiet", "# skill-audit: ignore SK101\n")
    log = json.loads(render(audit(tmp_path), "sarif"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    results = log["runs"][0]["results"]
    [suppressed] = [r for r in results if r["ruleId"] == "SK101"]
    assert suppressed["suppressions"] == [{"kind": "inSource", "justification": "frontmatter comment on line 4"}]
    assert "suppressions" not in next(r for r in results if r["ruleId"] == "SK102")
    assert "SK101" not in render(audit(tmp_path), "github")


def test_a_directive_naming_no_rule_is_a_finding(tmp_path):
    write_skill(tmp_path / "typo", "# skill-audit: ignore SK1O1\n")
    report = audit(tmp_path)
    [typo] = [f for f in report.findings if f.code == "SK013"]
    assert typo.line == 4 and "'SK1O1'" in typo.message and not report.suppressed


def test_per_path_ignores_suppress_under_their_glob(tmp_path, capsys):
    write_skill(tmp_path / "skills" / "legacy" / "old")
    write_skill(tmp_path / "skills" / "current" / "new")
    (tmp_path / "pyproject.toml").write_text('[tool.skill-audit]\nper-path-ignores = {"skills/legacy/*" = ["SK101"]}\n',
                                             encoding="utf-8")
    settings = load_settings(tmp_path / "skills")
    assert settings.per_path_ignores == (("skills/legacy/*", ("SK101",)),)
    report, _ = run_audit(tmp_path / "skills", Settings(pairs="none", progress=False).override(
        per_path_ignores=settings.per_path_ignores, source=settings.source))
    assert [(f.code, f.file) for f in report.suppressed] == [("SK101", "legacy/old/SKILL.md")]
    assert report.suppressed[0].suppressed.startswith("per-path-ignores 'skills/legacy/*' in ")
    assert ("SK101", "current/new/SKILL.md") in [(f.code, f.file) for f in report.findings]
    assert main(["audit", str(tmp_path / "skills"), "--pairs", "none", "--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert [r["suppressions"][0]["kind"] for r in sarif if "suppressions" in r] == ["external"]


@pytest.mark.parametrize("value, problem", [('["SK101"]', "must map globs to lists of codes"),
                                            ('{"a/*" = "SK101"}', "must map globs to lists of codes"),
                                            ('{"a/*" = ["SK999"]}', "'SK999' matches no rule")])
def test_bad_per_path_ignores_name_the_file(tmp_path, value, problem):
    (tmp_path / "pyproject.toml").write_text(f"[tool.skill-audit]\nper-path-ignores = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=problem) as error:
        load_settings(tmp_path)
    assert str(tmp_path / "pyproject.toml") in str(error.value)

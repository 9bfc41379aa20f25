"""`skill-audit`: the audit under a name of its own, with the options of `python -m course_utils audit`."""
from __future__ import annotations

import tomllib

import pytest

from course_utils.cli import audit as audit_cli
from course_utils.cli.main import build_parser
from course_utils.skills.paths import REPO_ROOT


def options(parser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def test_skill_audit_is_a_console_script_with_the_audit_command_s_options():
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["skill-audit"] == "course_utils.cli.audit:main"
    subcommands = next(a for a in build_parser()._actions if a.dest == "command")
    parser = audit_cli.argparse.ArgumentParser()
    audit_cli.add_arguments(parser)
    assert options(parser) == options(subcommands.choices["audit"]) >= {"--fix", "--dry-run", "--explain"}


def test_skill_audit_runs_the_audit(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        audit_cli.main(["--help"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("usage: skill-audit ")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "SKILL.md").write_text("---\nname: a\ndescription: Does a. Use when asked. Not for b.\n---\n",
                                             encoding="utf-8")
    assert audit_cli.main([str(tmp_path), "--pairs", "none"]) == 0
    assert capsys.readouterr().out.startswith(f"Audit of {tmp_path}: 1 valid skill(s)")
    assert audit_cli.main(["--explain", "SK101"]) == 0


def test_the_actions_example_and_the_hook_run_skill_audit():
    manual = (REPO_ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    assert "- run: skill-audit skills --pairs lexical --format sarif --output audit.sarif" in manual
    assert "entry: skill-audit" in (REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")

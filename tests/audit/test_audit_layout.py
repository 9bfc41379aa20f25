"""The audit on any layout: several paths, skills found at any depth, a duplicate name reported, and a path
with no skill refused; with the command line's output bugs (the doubled root, a closed pipe)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from course_utils.audit import Settings, render, run_audit
from course_utils.cli.main import main


def write_skill(folder: Path, name: str | None = None) -> Path:
    """A valid skill in `folder`, named after it unless `name` says otherwise."""
    folder.mkdir(parents=True)
    name = name or folder.name
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Does {name}. Use when asked. Not for others.\n---\nBody.\n",
                    encoding="utf-8")
    return path


def test_a_duplicate_name_is_an_error_naming_the_kept_and_the_shadowed_file(tmp_path, capsys):
    write_skill(tmp_path / "a", "same")
    write_skill(tmp_path / "b", "same")
    report, _ = run_audit(tmp_path, Settings(pairs="none", progress=False))
    [shadow] = [f for f in report.findings if f.code == "SK010"]
    assert shadow.severity == "error" and shadow.file == "b/SKILL.md" and shadow.line == 2
    assert "b/SKILL.md is shadowed by a/SKILL.md" in shadow.message and "Claude Code" in shadow.message
    assert shadow in report.summary
    assert main(["audit", str(tmp_path), "--pairs", "none"]) == 1
    assert "1 error(s)" in capsys.readouterr().out


def test_several_paths_are_one_catalog_and_their_duplicates_are_found(tmp_path):
    write_skill(tmp_path / "team-a" / "same")
    write_skill(tmp_path / "team-b" / "same")
    write_skill(tmp_path / "team-b" / "other")
    report, _ = run_audit([tmp_path / "team-a", tmp_path / "team-b"], Settings(pairs="none", progress=False))
    assert report.skills == 2 and Path(report.folder) == tmp_path
    [shadow] = [f for f in report.findings if f.code == "SK010"]
    assert shadow.file == "team-b/same/SKILL.md" and "team-a/same/SKILL.md" in shadow.message
    assert [(f.path, f.skills) for f in report.folders] == [("team-a", 1), ("team-b", 2)]


def test_a_repository_is_searched_for_every_skills_folder(tmp_path):
    for folder in (".claude/skills/alpha", ".codex/skills/beta", "plugins/p1/skills/gamma",
                   "plugins/p2/skills/delta", "catalog/writing/epsilon"):
        write_skill(tmp_path / folder)
    write_skill(tmp_path / "catalog/writing/epsilon/templates/not-loaded")  # a skill's own file, not a skill
    write_skill(tmp_path / "node_modules/pkg/skills/not-ours")
    (tmp_path / "docs").mkdir()
    report, _ = run_audit(tmp_path, Settings(pairs="none", progress=False))
    assert report.skills == 5
    assert [f.message for f in report.findings] == [  # the bundled template is a file the body never names
        "epsilon's folder holds templates/, which its SKILL.md never mentions"]
    assert [f.path for f in report.folders] == [".claude/skills", ".codex/skills", "catalog/writing",
                                                "plugins/p1/skills", "plugins/p2/skills"]
    assert "Skills folders: .claude/skills (1)," in render(report, "text")


def test_a_path_with_no_skill_cannot_run(tmp_path, capsys):
    write_skill(tmp_path / "skills" / "alpha")
    (tmp_path / "empty" / "folder").mkdir(parents=True)
    for paths in ([tmp_path / "empty"], [tmp_path / "skills", tmp_path / "empty"]):
        assert main(["audit", *map(str, paths), "--pairs", "none"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "no SKILL.md under" in err and "empty" in err


def test_a_finding_about_the_folder_itself_names_it_once(tmp_path):
    (tmp_path / "empty").mkdir()
    report, _ = run_audit(tmp_path / "empty", Settings(pairs="none", progress=False))
    assert [f.file for f in report.findings] == [None]
    for format in ("text", "github", "sarif"):
        assert "empty/empty" not in render(report, format)


def test_a_closed_pipe_ends_the_output_without_a_traceback():
    command = f"{sys.executable} -m course_utils audit --explain SK001 | head -1"
    done = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
    assert done.stdout.startswith("SK001") and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_fix_first_ranks_by_severity_then_count_with_repeats_merged(tmp_path):
    for i in range(4):
        (tmp_path / f"s{i}").mkdir()
        (tmp_path / f"s{i}" / "SKILL.md").write_text(
            f"---\nname: s{i}\ndescription: Does s{i}. Use when asked. Not for others.\nbogus: 1\n---\nBody.\n",
            encoding="utf-8")  # SK004 error in each
    (tmp_path / "s0" / "SKILL.md").write_text(
        "---\nname: S0\ndescription: Does s0. Use when asked. Not for others.\nbogus: 1\n---\nBody.\n",
        encoding="utf-8")  # SK002 error too
    write_skill(tmp_path / "plain").write_text("---\nname: plain\ndescription: Does plain.\n---\nBody.\n",
                                                encoding="utf-8")  # SK101 warning, SK102 info
    report, _ = run_audit(tmp_path, Settings(harness="spec", pairs="none", progress=False))
    assert [(f.code, f.count) for f in report.summary] == [("SK004", 4), ("SK002", 1), ("SK101", 1),
                                                           ("SK102", 1)]
    assert "1. SK004 ×4 " in render(report, "text")


def test_should_be_used_when_says_when():
    from course_utils.audit.checks import when_check
    from course_utils.skills.skill import Skill

    skill = Skill("pdf", "Reads PDF files. This skill should be used when working with PDF forms.", "", Path("x"), {})
    assert when_check(skill).says_when


def test_a_byte_order_mark_under_the_spec_is_rejected_as_skills_ref_rejects_it(tmp_path):
    path = write_skill(tmp_path / "bom")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    spec, _ = run_audit(tmp_path, Settings(harness="spec", pairs="none", progress=False))
    assert [(f.code, f.severity) for f in spec.findings] == [("SK001", "error")] and spec.skills == 0
    claude, _ = run_audit(tmp_path, Settings(harness="claude-code", pairs="none", progress=False))
    assert [(f.code, f.severity) for f in claude.findings] == [("SK009", "info")] and claude.skills == 1


def test_the_page_says_a_listing_in_characters_once(tmp_path):
    from course_utils.audit import render_html

    write_skill(tmp_path / "alpha")
    report, _ = run_audit(tmp_path, Settings(pairs="none", progress=False))
    page = render_html(report)
    used = f"{report.listing.used:,} characters"
    assert f"takes {used}, about" in page and f"{used}, {used}" not in page

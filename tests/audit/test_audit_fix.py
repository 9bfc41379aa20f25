"""`audit --fix` and `--fix --dry-run`: the safe fixes only (line endings, byte-order mark, a value YAML reads as
another type quoted, a folder renamed to its skill's name), the audit run again on what is left, writes atomic, a
file that cannot be written named and the others written."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from course_utils.audit import Settings, run_audit
from course_utils.audit import fix as audit_fix
from course_utils.cli.main import main

WORDS = "Fills PDF forms. Use when asked to fill one. Not for Word."


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def messy(root: Path) -> dict[str, Path]:
    """Four skills, each with one safe fix to make, and one clean skill."""
    return {
        "crlf": write(root / "crlf" / "SKILL.md", f"---\r\nname: crlf\r\ndescription: {WORDS}\r\n---\r\nBody.\r\n"),
        "bom": write(root / "bom" / "SKILL.md", f"\ufeff---\nname: bom\ndescription: {WORDS}\n---\nBody.\n"),
        "typed": write(root / "typed" / "SKILL.md",
                       "---\nname: typed\ndescription: yes  # a boolean to YAML\ncompatibility: 2024-01-01\n---\n"
                       "Body.\n"),
        "moved": write(root / "old-name" / "SKILL.md", f"---\nname: new-name\ndescription: {WORDS}\n---\nBody.\n"),
        "clean": write(root / "clean" / "SKILL.md", f"---\nname: clean\ndescription: {WORDS}\n---\nBody.\n"),
    }


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path, capsys):
    messy(tmp_path)
    before = snapshot(tmp_path)
    assert main(["audit", str(tmp_path), "--pairs", "none", "--harness", "spec", "--fix", "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert snapshot(tmp_path) == before
    assert f"fix {tmp_path}/crlf/SKILL.md: line endings CRLF -> LF" in out
    assert f"fix {tmp_path}/bom/SKILL.md: byte-order mark removed" in out
    assert f"fix {tmp_path}/typed/SKILL.md: compatibility quoted, description quoted" in out
    assert ('-description: yes  # a boolean to YAML\n-compatibility: 2024-01-01\n'
            '+description: "yes"  # a boolean to YAML\n+compatibility: "2024-01-01"\n') in out
    assert f"--- {tmp_path}/typed/SKILL.md\n+++ {tmp_path}/typed/SKILL.md\n@@ -1,6 +1,6 @@" in out
    assert f"rename {tmp_path}/old-name -> {tmp_path}/new-name" in out
    assert "clean" not in out


def test_fix_makes_the_safe_fixes_and_audits_what_is_left(tmp_path, capsys):
    files = messy(tmp_path)
    assert main(["audit", str(tmp_path), "--pairs", "none", "--harness", "spec", "--fix", "--fail-on", "info"]) == 1
    captured = capsys.readouterr()
    assert files["crlf"].read_bytes() == f"---\nname: crlf\ndescription: {WORDS}\n---\nBody.\n".encode()
    assert files["bom"].read_bytes().startswith(b"---\nname: bom")
    assert 'description: "yes"  # a boolean to YAML\ncompatibility: "2024-01-01"\n' in files["typed"].read_text()
    assert not files["moved"].exists() and (tmp_path / "new-name" / "SKILL.md").is_file()
    assert f"renamed {tmp_path}/old-name -> {tmp_path}/new-name" in captured.err
    # what is left: "yes" says neither when nor "not for": the words are the author's, not the fix's
    report, _ = run_audit(tmp_path, Settings(pairs="none", progress=False, harness="spec"))
    assert sorted({(f.code, f.file) for f in report.findings}) == [("SK101", "typed/SKILL.md"),
                                                                    ("SK102", "typed/SKILL.md")]
    assert "5 valid skill(s), 0 invalid file(s); 0 error(s), 1 warning(s)" in captured.out
    assert main(["audit", str(tmp_path), "--pairs", "none", "--harness", "spec", "--fix", "--dry-run"]) == 0
    assert "Nothing to fix." in capsys.readouterr().out


def test_fix_never_changes_a_description_s_words_nor_a_suppressed_finding(tmp_path, capsys):
    vague = write(tmp_path / "vague" / "SKILL.md", "---\nname: vague\ndescription: Helps.\n---\nBody.\n")
    kept = write(tmp_path / "kept" / "SKILL.md",
                 "---\r\nname: kept\r\ndescription: 1.5  # skill-audit: ignore SK003\r\n---\r\nBody.\r\n")
    before = kept.read_bytes()
    main(["audit", str(tmp_path), "--pairs", "none", "--fix", "--select", "SK1,SK003"])
    assert vague.read_text() == "---\nname: vague\ndescription: Helps.\n---\nBody.\n"
    assert kept.read_bytes() == before  # SK009 is not selected, SK003 is suppressed


def test_a_value_that_is_not_a_plain_one_is_not_quoted(tmp_path, capsys):
    path = write(tmp_path / "listed" / "SKILL.md", "---\nname: listed\ndescription: [Fills, forms]\n---\nBody.\n")
    assert main(["audit", str(tmp_path), "--pairs", "none", "--fix", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert f"not fixed: {path}: description's value cannot be quoted safely" in err


def test_a_file_that_cannot_be_written_is_named_and_the_others_are_fixed(tmp_path, monkeypatch, capsys):
    files = messy(tmp_path)
    before = files["bom"].read_bytes()
    replace = os.replace

    def refuse_bom(source, target):
        if Path(target) == files["bom"]:
            raise OSError(28, "No space left on device")
        replace(source, target)

    monkeypatch.setattr(audit_fix.os, "replace", refuse_bom)
    assert main(["audit", str(tmp_path), "--pairs", "none", "--harness", "spec", "--fix"]) == 1
    err = capsys.readouterr().err
    assert f"audit: {files['bom']}: cannot be written (No space left on device): left as it was" in err
    assert files["bom"].read_bytes() == before
    assert not list(files["bom"].parent.glob(".SKILL.md.*.tmp"))  # the temporary file is removed
    assert not files["crlf"].read_bytes().count(b"\r")


def test_a_read_only_file_is_not_replaced(tmp_path, monkeypatch):
    path = write(tmp_path / "SKILL.md", "---\r\nname: x\r\n---\r\n")
    monkeypatch.setattr(audit_fix.os, "access", lambda p, mode: Path(p) != path)
    with pytest.raises(PermissionError, match="is read-only"):
        audit_fix.write_atomic(path, "---\nname: x\n---\n")
    assert path.read_bytes() == b"---\r\nname: x\r\n---\r\n"


def test_a_rename_onto_an_existing_folder_is_refused(tmp_path, capsys):
    write(tmp_path / "old-name" / "SKILL.md", f"---\nname: taken\ndescription: {WORDS}\n---\nBody.\n")
    write(tmp_path / "taken" / "SKILL.md", f"---\nname: taken\ndescription: {WORDS}\n---\nBody.\n")
    main(["audit", str(tmp_path), "--pairs", "none", "--harness", "spec", "--fix"])
    assert f"not fixed: {tmp_path}/old-name: cannot be renamed to taken: {tmp_path}/taken exists" in \
        capsys.readouterr().err
    assert (tmp_path / "old-name").is_dir()


def test_a_finding_no_fix_is_for_says_nothing(tmp_path, capsys):
    write(tmp_path / "ok" / "SKILL.md", f"---\nname: ok\ndescription: {WORDS}\n---\n")
    (tmp_path / "latin" / "SKILL.md").parent.mkdir()
    (tmp_path / "latin" / "SKILL.md").write_bytes("---\nname: latin\ndescription: Caf\u00e9.\n---\n".encode("latin-1"))
    (tmp_path / "empty").mkdir()
    assert main(["audit", str(tmp_path), "--pairs", "none", "--fix", "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "Nothing to fix." and captured.err == ""


def test_dry_run_needs_fix(tmp_path, capsys):
    write(tmp_path / "a" / "SKILL.md", f"---\nname: a\ndescription: {WORDS}\n---\n")
    assert main(["audit", str(tmp_path), "--dry-run"]) == 2
    assert "--dry-run shows what --fix would change" in capsys.readouterr().err

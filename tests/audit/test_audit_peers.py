"""What agnix 0.59.3 finds in bodies and bundled files that the audit missed (docs/lab/audit.md, the peer
comparison): a chain through a reference file that links by the skill's root, a broken link inside a bundled
Markdown file the body names, and bundled files reached only through code (imports, a folder's name, a dotted
module path), which are not unmentioned."""
from __future__ import annotations

from pathlib import Path

from course_utils.audit import Settings, run_audit
from course_utils.audit.body import mentions, reached


def skill(folder: Path, body: str, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: Does it. Use when asked. Not for "
                                     f"others.\n---\n{body}", encoding="utf-8")
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return folder


def findings(root: Path, code: str) -> list:
    report, _ = run_audit(root, Settings(pairs="none", progress=False, select=("SK6",)))
    return [f for f in report.findings if f.code == code]


def test_a_reference_linking_by_the_skill_s_root_makes_a_chain(tmp_path):
    skill(tmp_path / "pkg", "Detail lives in `references/details.md`.\n",
          {"references/details.md": "See [advanced](references/advanced.md).\n", "references/advanced.md": "Deep.\n"})
    [chain] = findings(tmp_path, "SK603")
    assert chain.message == "pkg's SKILL.md reaches references/advanced.md only through references/details.md: " \
                            "two levels deep"
    assert findings(tmp_path, "SK601") == []  # the link resolves from the skill's root


def test_a_broken_link_in_a_bundled_file_the_body_names_is_on_that_file_s_line(tmp_path):
    skill(tmp_path / "react", "The complete guide: `AGENTS.md`.\n",
          {"AGENTS.md": "# Guide\n\nSee [Defer](./async-defer-await.md) and [Ok](rules/ok.md).\n",
           "rules/ok.md": "Fine.\n", "rules/async-defer-await.md": "Here, not beside AGENTS.md.\n",
           "unnamed.md": "[gone](gone.md)\n"})
    [broken] = findings(tmp_path, "SK601")
    assert (broken.file, broken.line, broken.column) == ("react/AGENTS.md", 3, len("See [Defer](") + 1)
    assert broken.message == ("react's AGENTS.md links to ./async-defer-await.md, which exists neither beside it "
                              "nor from the skill's folder")


def test_files_reached_through_code_are_not_unmentioned(tmp_path):
    files = {"scripts/office/validate.py": "from validators import Schema\n",
             "scripts/office/validators/base.py": 'SCHEMAS = Path(__file__).parent.parent / "schemas"\n',
             "scripts/office/schemas/a.xsd": "<xs/>", "scripts/office/schemas/b.xsd": "<xs/>",
             "core/easing.py": "def interpolate(): ...\n", "notes/todo.md": "Nothing names me.\n",
             "scripts/recalc.py": "from office.soffice import env\n", "scripts/office/soffice.py": "env = 1\n",
             "scripts/office/pack.py": "import zipfile\n"}
    folder = skill(tmp_path / "docx", "Run `python scripts/office/validate.py`, then `scripts/recalc.py`.\n"
                                      "```python\nfrom core.easing import interpolate\n```\n", files)
    unnamed = {"notes/todo.md", "scripts/office/pack.py"}  # office.soffice names one module, not office/
    assert reached(folder, (folder / "SKILL.md").read_text(), sorted(files)) == set(files) - unnamed
    assert sorted(f.message for f in findings(tmp_path, "SK604")) == [
        "docx's folder holds notes/, which its SKILL.md never mentions",
        "docx's folder holds scripts/office/pack.py, which its SKILL.md never mentions"]
    assert mentions("from core.easing import x", "core/easing.py") and not mentions("easing", "core/easing.py")

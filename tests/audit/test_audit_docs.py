"""The audit's manual is docs/audit.md, one row per rule under its anchor; the README keeps one paragraph, a link,
and fewer than 200 lines."""
from __future__ import annotations

import re

from course_utils.audit import RULES
from course_utils.skills.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
MANUAL = REPO_ROOT / "docs" / "audit.md"


def test_the_manual_has_a_row_per_rule_under_its_anchor():
    rows = {m[1]: m[0] for m in re.finditer(r'^\| <a id="(sk\d{3})"></a>`SK\d{3}` \| .*$', MANUAL.read_text(),
                                            re.MULTILINE)}
    assert sorted(rows) == sorted(code.lower() for code in RULES)
    for code, rule in RULES.items():
        summary, fix = (text.replace("|", "\\|") for text in (rule.summary, rule.fix))
        assert rows[code.lower()].endswith(f"| {rule.name} | {rule.severity} | {summary} | {fix} |")
    for anchor in ("gate", "changed", "query-formats", "settings", "fix", "suppression", "ci", "faults"):
        assert f'<a id="{anchor}"></a>' in MANUAL.read_text()


def test_the_readme_keeps_one_paragraph_on_the_audit_and_a_link():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    assert readme.count("[docs/audit.md](docs/audit.md)") == 1
    assert "[tool.skill-audit]\n" not in readme and "upload-sarif" not in readme

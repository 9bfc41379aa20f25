"""The skills-folder audit, as a library (lesson 12: `run_audit`, `render_text`, `render_html`, and `checks`'
`WHEN_RULE`, `when_check`, `figures`' `pairs_figure`): `run_audit` gives a typed `AuditReport`, which `render` writes
as text, JSON, SARIF or GitHub annotations and `render_html` as one page. The rules are in `rules.RULES`.

`python -m course_utils audit` is the command line over this package (`course_utils/cli/audit.py`).
"""
from course_utils.audit.config import Settings
from course_utils.audit.report import AuditReport, Finding
from course_utils.audit.render import render, render_html, render_text
from course_utils.audit.rules import RULES, Rule
from course_utils.audit.run import fails, run_audit

__all__ = ["AuditReport", "Finding", "RULES", "Rule", "Settings", "fails", "render", "render_html", "render_text",
           "run_audit"]

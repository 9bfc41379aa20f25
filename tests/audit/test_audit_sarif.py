"""SARIF as code scanning and editors read it: each rule with a `helpUri` into docs/audit.md (whose anchor exists)
and a `fullDescription`, each result with its columns; still valid SARIF 2.1.0. And the pairs chart's cut-off."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from course_utils.audit import RULES, Settings, render, run_audit
from course_utils.audit.figures import draw_pairs
from course_utils.audit.report import STANDS_OUT_Z
from course_utils.skills.paths import REPO_ROOT
from helpers.paths import FIXTURES

SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"
MANUAL = REPO_ROOT / "docs" / "audit.md"


def messy(root: Path) -> Path:
    """A folder whose findings are on fields (SK004, SK101) and on a body reference (SK601)."""
    (root / "pdf").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fills PDF forms.\nversion: 1\n---\n"
        "Intro.\nRead [the fields](references/fields.md) first.\n", encoding="utf-8")
    return root


def sarif(root: Path) -> dict:
    report, _ = run_audit(root, Settings(pairs="none", progress=False))
    return json.loads(render(report, "sarif"))


def test_each_rule_has_a_help_uri_whose_anchor_is_in_the_manual_and_a_full_description(tmp_path):
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', MANUAL.read_text(encoding="utf-8")))
    assert {code.lower() for code in RULES} <= anchors
    rules = sarif(messy(tmp_path))["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"SK004", "SK101", "SK601"}
    for rule in rules:
        assert rule["helpUri"] == f"docs/audit.md#{rule['id'].lower()}"
        assert rule["fullDescription"]["text"].startswith(RULES[rule["id"]].summary)
        assert RULES[rule["id"]].rationale in rule["fullDescription"]["text"]
        assert RULES[rule["id"]].source in rule["help"]["text"]


def test_results_carry_columns_and_validate_against_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    log = sarif(messy(tmp_path))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    regions = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"] for r in log["runs"][0]["results"]}
    assert regions["SK004"] == {"startLine": 4, "startColumn": 1, "endColumn": len("version: 1") + 1}
    assert regions["SK101"] == {"startLine": 3, "startColumn": 1, "endColumn": len("description: Fills PDF forms.") + 1}
    start = len("Read [the fields](") + 1
    assert regions["SK601"] == {"startLine": 7, "startColumn": start,
                                "endColumn": start + len("references/fields.md")}


def test_the_pairs_chart_draws_the_cut_off_it_says_pairs_stand_out_above():
    from course_utils.audit.pairs import lexical_pairs
    from course_utils.skills.paths import SKILLS_DIR
    from course_utils.skills.skill import SkillLoader

    signal = lexical_pairs(SkillLoader.from_root(SKILLS_DIR / "workplace"))
    ax = Figure().subplots()
    draw_pairs(ax, signal)
    lines = {line.get_label(): line.get_xdata()[0] for line in ax.lines}
    [label] = [name for name in lines if name.startswith("stands out above")]
    assert lines[label] == pytest.approx(signal.mean + STANDS_OUT_Z * signal.std)
    assert f"(mean + {STANDS_OUT_Z:g} sd)" in label
    assert any(name.startswith("mean of all pairs") for name in lines)
    assert ax.get_xlim()[1] >= signal.cutoff

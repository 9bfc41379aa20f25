"""The rules on a skill's body and its folder's files (SK601-SK605) and a harness's own rules on the name and the
description (SK011, SK012): each on a small skill where it fires and where it must not, then on the real
collections the repository holds, and in every output format."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_utils.audit import Settings, render, run_audit
from course_utils.audit.body import mentions, prose_lines, references
from course_utils.audit.render import render_html
from course_utils.cli.main import main
from course_utils.skills.paths import REPO_ROOT
from helpers.paths import FIXTURES

ROOT = REPO_ROOT
WSHOBSON, MATTPOCOCK, WORKPLACE = (ROOT / "skills" / n for n in ("wshobson", "mattpocock", "workplace"))
VERCEL = FIXTURES / "vercel_skills"
CLAUDE_SKILLS = FIXTURES / "claude_code_skills"
BODY_RULES = ("SK6", "SK011", "SK012")


def skill(folder: Path, body: str = "Body.\n", description: str = "Does {name}. Use when asked. Not for others.",
          extra: str = "", files: dict[str, str] | None = None) -> Path:
    """A skill named after `folder`, with `body`, its `description`, more frontmatter lines and bundled `files`."""
    folder.mkdir(parents=True)
    frontmatter = f"name: {folder.name}\ndescription: {description.replace('{name}', folder.name)}\n{extra}"
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    for relative, text in (files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return folder


def found(path: Path | list[Path], code: str, harness: str = "claude-code") -> list:
    """The findings of rule `code` on `path`."""
    report, _ = run_audit(path, Settings(pairs="none", progress=False, harness=harness, select=BODY_RULES))
    return [f for f in report.findings if f.code == code]


# ---------------------------------------------------------------------------------------------- SK601


def test_sk601_a_missing_link_or_bare_path_is_found_on_its_line(tmp_path):
    skill(tmp_path / "s", "Intro.\n\nRead [the guide](references/guide.md).\nRun `scripts/missing.py`.\n")
    shown = found(tmp_path, "SK601")
    assert [(f.line, f.file) for f in shown] == [(7, "s/SKILL.md"), (8, "s/SKILL.md")]
    assert "references/guide.md, which does not exist" in shown[0].message


def test_sk601_urls_anchors_fenced_code_examples_and_present_files_are_not_references(tmp_path):
    body = ("See [docs](https://example.com/x.md), [below](#usage), [abs](/etc/x.md), [guide](references/guide.md),\n"
            "and [a slug](references/{slug}.md).\n\n```python\nopen('scripts/in_code.py')\n```\n"
            "````markdown\n```markdown\n[inner](references/in-template.md)\n```\n````\n"
            "Write links as `[text](references/filename.md)`.\n"
            "- **Examples**: `references/finance.md` for financial schemas\n")
    skill(tmp_path / "s", body, files={"references/guide.md": "Guide."})
    assert found(tmp_path, "SK601") == []


def test_sk601_a_link_out_of_the_folder_says_so(tmp_path):
    skill(tmp_path / "s", "See [the other](../other/SKILL.md).\n")
    [finding] = found(tmp_path, "SK601")
    assert finding.message.endswith("which does not exist, outside the skill's folder")


def test_a_fence_closes_only_on_a_bare_fence_as_long_as_it_opened():
    text = "a\n```markdown\nb\n```js\nc\n```\nd\n~~~~\ne\n~~~\nf\n~~~~\ng\n"
    assert [line for _, line in prose_lines(text)] == ["a", "d", "g"]
    assert [r.target for r in references("x\n```\n[y](y.md)\n```\n[z](z.md)\n")] == ["z.md"]


def test_sk601_fires_on_wshobson_and_not_on_workplace():
    shown = found(WSHOBSON, "SK601")
    assert ("github-actions-templates/SKILL.md", 67) in [(f.file, f.line) for f in shown]
    assert any("assets/test-workflow.yml" in f.message for f in shown)
    assert found(WORKPLACE, "SK601") == []


# ---------------------------------------------------------------------------------------------- SK602


def test_sk602_a_body_over_500_lines_or_5000_tokens(tmp_path):
    skill(tmp_path / "long", "line\n" * 501)
    skill(tmp_path / "dense", ("word " * 4_100 + "\n") * 1)
    skill(tmp_path / "fine", "line\n" * 500)
    shown = {f.skill: f.message for f in found(tmp_path, "SK602")}
    assert set(shown) == {"long", "dense"}
    assert "501 lines (best practices: under 500)" in shown["long"]
    assert "about 5,125 tokens" in shown["dense"]


def test_sk602_fires_on_wshobson_and_not_on_mattpocock():
    shown = {f.skill: f.message for f in found(WSHOBSON, "SK602")}
    assert "805 lines" in shown["dotnet-backend-patterns"]
    assert found(MATTPOCOCK, "SK602") == []


# ---------------------------------------------------------------------------------------------- SK603


def test_sk603_a_file_reached_only_through_another(tmp_path):
    files = {"a.md": "Then read [b](b.md) and [back](SKILL.md).", "b.md": "Deep.", "c.md": "See [d](d.md).",
             "d.md": "Named."}
    skill(tmp_path / "s", "Read [a](a.md).\nRead [c](c.md), then d.md.\n", files=files)
    [finding] = found(tmp_path, "SK603")
    assert finding.message == "s's SKILL.md reaches b.md only through a.md: two levels deep" and finding.line == 5


def test_sk603_a_script_named_by_a_reference_is_not_a_chain(tmp_path):
    skill(tmp_path / "s", "Read [a](a.md).\n", files={"a.md": "Run `scripts/go.py`.", "scripts/go.py": "print(1)"})
    assert found(tmp_path, "SK603") == []


def test_sk603_fires_on_wshobson_s_chains_through_details_md_and_not_on_mattpocock_nor_workplace():
    # a references/details.md linking a sibling by its path from the skill's root (test_audit_peers.py)
    assert {f.skill for f in found(WSHOBSON, "SK603")} == {
        "context-driven-development", "godot-gdscript-patterns", "k8s-manifest-generator", "nodejs-backend-patterns",
        "openapi-spec-generation", "python-packaging", "python-performance-optimization", "tailwind-design-system"}
    assert found([MATTPOCOCK, WORKPLACE], "SK603") == []


# ---------------------------------------------------------------------------------------------- SK604


def test_sk604_a_bundled_file_nothing_names(tmp_path):
    files = {"references/used.md": "Load `assets/data.csv`.", "assets/data.csv": "a,b", "notes.md": "x",
             "fonts/a.ttf": "", "fonts/b.ttf": "", "LICENSE.txt": "MIT", "README.md": "Hi", ".hidden": "",
             "agents/openai.yaml": "interface: {}", "scripts/__init__.py": "", "rules/async-parallel.md": "x"}
    skill(tmp_path / "s", "Read references/used.md. Rules: `async-parallel`. Run `scripts/`.\n", files=files)
    assert sorted(f.message for f in found(tmp_path, "SK604")) == [
        "s's folder holds fonts/ (2 files), which its SKILL.md never mentions",
        "s's folder holds notes.md, which its SKILL.md never mentions"]


def test_a_folder_named_in_a_longer_path_does_not_name_its_other_files():
    assert mentions("Read `references/a.md`.", "references/a.md")
    assert not mentions("Read `references/a.md`.", "references/b.md")
    assert mentions("Search the `./canvas-fonts` directory.", "canvas-fonts/Lora.ttf")
    assert not mentions("See the details below.", "references/details.md")


def test_sk604_fires_on_wshobson_and_mattpocock_and_not_on_workplace():
    assert "interaction-design's folder holds references/ (3 files), which its SKILL.md never mentions" in [
        f.message for f in found(WSHOBSON, "SK604")]
    assert [f.message for f in found(MATTPOCOCK, "SK604")] == [
        "teach's folder holds GLOSSARY-FORMAT.md, which its SKILL.md never mentions"]
    assert found(WORKPLACE, "SK604") == []


# ---------------------------------------------------------------------------------------------- SK605


DEPLOY_BODY = "Build, then:\n\n```bash\nvercel deploy --prod\n```\n"


def test_sk605_a_deploy_skill_open_to_the_model(tmp_path):
    skill(tmp_path / "ship", DEPLOY_BODY, description="Deploys the app to Vercel. Use when asked to ship.")
    [finding] = found(tmp_path, "SK605")
    assert finding.field == "description" and finding.line == 3 and "`vercel deploy`" in finding.message


@pytest.mark.parametrize("description, extra, harness", [
    ("Deploys the app to Vercel. Use when asked to ship.", "disable-model-invocation: true\n", "claude-code"),
    ("Deploys the app to Vercel. Use when asked to ship.", "", "codex"),
    ("Messaging norms. Use when deciding whether to send a message or a broadcast.", "", "claude-code"),
])
def test_sk605_not_when_only_the_user_starts_it_or_the_description_does_not_say_so(tmp_path, description, extra,
                                                                                     harness):
    skill(tmp_path / "ship", DEPLOY_BODY, description=description, extra=extra)
    assert found(tmp_path, "SK605", harness) == []


def test_sk605_fires_on_vercels_deploy_skill_and_not_on_claude_codes_example_nor_wshobson():
    assert [f.skill for f in found(VERCEL, "SK605")] == ["deploy-to-vercel"]
    assert found(CLAUDE_SKILLS, "SK605") == []  # Claude Code's deploy example sets disable-model-invocation
    assert found(WSHOBSON, "SK605") == []


# ---------------------------------------------------------------------------------------------- SK011, SK012


def test_sk011_a_reserved_word_in_the_name_under_claude_code_only(tmp_path):
    skill(tmp_path / "claude-helper")
    skill(tmp_path / "helper")
    assert [f.skill for f in found(tmp_path, "SK011")] == ["claude-helper"]
    assert found(tmp_path, "SK011", "spec") == []


def test_sk011_fires_on_mattpocock_and_not_on_workplace():
    assert [f.skill for f in found(MATTPOCOCK, "SK011")] == ["claude-handoff", "git-guardrails-claude-code"]
    assert found(WORKPLACE, "SK011") == []


def test_sk012_a_tag_in_the_description_not_a_comparison_or_braces(tmp_path):
    skill(tmp_path / "tagged", description="Use when asked. <example>hi</example>")
    skill(tmp_path / "plain", description="Use when a < b and c > d, or for {slug}. Not for others.")
    [finding] = found(tmp_path, "SK012")
    assert finding.skill == "tagged" and "'<example>'" in finding.message and finding.line == 3


def test_sk012_fires_on_vercels_view_transitions_and_not_on_wshobson():
    assert ["'<ViewTransition>'" in f.message for f in found(VERCEL, "SK012")] == [True]
    assert found(WSHOBSON, "SK012") == []


# ---------------------------------------------------------------------------------------------- every format


def test_the_body_rules_reach_every_format_and_explain(tmp_path, capsys):
    skill(tmp_path / "s", "Read [x](references/x.md).\n")
    report, _ = run_audit(tmp_path, Settings(pairs="none", progress=False))
    text = render(report, "text")
    assert "s/SKILL.md:5: SK601 [warning]" in text
    assert "Body and bundled files: 1 finding(s) on 1 skill(s) (SK601 reference-missing ×1)" in text
    sarif = json.loads(render(report, "sarif"))["runs"][0]
    assert [r["id"] for r in sarif["tool"]["driver"]["rules"]] == ["SK601"]
    assert sarif["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert "title=SK601 reference-missing" in render(report, "github")
    page = render_html(report)
    assert '<section id="body"><h2>Body and bundled files</h2>' in page and "references/x.md, which does" in page
    for code in ("SK601", "SK602", "SK603", "SK604", "SK605", "SK011", "SK012"):
        assert main(["audit", "--explain", code]) == 0
        assert code in capsys.readouterr().out

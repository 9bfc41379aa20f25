"""Each rule's `--explain` examples: the audit fires the rule on its failing folder and not on its passing one; the
rules without examples are those a folder alone cannot show, and `--explain` says why."""
from __future__ import annotations

from pathlib import Path

import pytest

from course_utils.audit import RULES, Settings, run_audit
from course_utils.audit.rules import Example
from course_utils.cli.main import main

WITH_EXAMPLES = [code for code, rule in RULES.items() if rule.failing is not None]


def write(example: Example, root: Path) -> Path:
    """The example's files under `root`, in the example's encoding."""
    for relative, text in example.files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode(example.encoding))
    return root


def codes(example: Example, root: Path, client=None) -> set[str]:
    """The codes the audit finds on `example`, with the embedding pairs only when a client is given."""
    settings = Settings(harness=example.harness, context_tokens=example.context_tokens, progress=False,
                        pairs="both" if client is not None else "lexical")
    report, _ = run_audit(write(example, root), settings, client)
    return {f.code for f in report.findings}


@pytest.mark.parametrize("code", [c for c in WITH_EXAMPLES if c != "SK301"])
def test_the_failing_example_fires_the_rule_and_the_passing_one_does_not(code, tmp_path):
    rule = RULES[code]
    assert code in codes(rule.failing, tmp_path / "failing")
    assert code not in codes(rule.passing, tmp_path / "passing")


def test_the_embedding_pair_example_fires_with_the_encoder(tmp_path, local_client):
    rule = RULES["SK301"]
    assert "SK301" in codes(rule.failing, tmp_path / "failing", local_client)
    assert "SK301" not in codes(rule.passing, tmp_path / "passing", local_client)


def test_only_the_rules_a_folder_cannot_show_have_no_example(capsys):
    assert sorted(set(RULES) - set(WITH_EXAMPLES)) == ["SK007", "SK401", "SK402", "SK403", "SK501"]
    assert all(rule.source for rule in RULES.values())
    assert main(["audit", "--explain", "SK401"]) == 0
    assert "No example: the rule needs a query file" in capsys.readouterr().out


def test_explain_prints_the_source_and_both_examples(capsys):
    assert main(["audit", "--explain", "sk602"]) == 0
    out = capsys.readouterr().out
    assert "Source: Anthropic's skill authoring best practices" in out
    assert out.index("Fails:") < out.index("Passes:")
    assert "    … (493 more lines)" in out  # a long example is cut: 505 lines, 12 shown

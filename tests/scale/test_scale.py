"""Synthetic catalogs and the decision rule (lesson 10)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from course_utils.skills.paths import SKILLS_DIR
from course_utils.scale.decision import (
    CATALOG_TOKEN_BUDGET,
    RECALL_TARGET,
    catalog_budget,
    context_window,
    decision_rule,
    rule_selector,
)
from course_utils.selection.pick import Decision
from course_utils.evaluation.stats import Rate
from course_utils.scale.synthetic import COMBINATIONS, render_skill_md, synthetic_skills, with_distractors
from course_utils.skills.skill import SkillLoader, parse_skill
from course_utils.skills.spec import MAX_DESCRIPTION
from course_utils.skills.tokens import estimate_tokens


def test_the_templates_make_ten_thousand_distinct_valid_skills():
    skills = synthetic_skills(COMBINATIONS)
    assert COMBINATIONS == 10_000
    assert len({s.name for s in skills}) == COMBINATIONS
    assert max(len(s.description) for s in skills) <= MAX_DESCRIPTION


@pytest.mark.parametrize("index", [0, 1, 4_999, 9_999])
def test_a_synthetic_skill_survives_the_real_parser_and_says_it_is_synthetic(index):
    skill = synthetic_skills(COMBINATIONS)[index]
    parsed, diagnostics = parse_skill(render_skill_md(skill), skill.path, skill.name)
    assert diagnostics == []
    assert (parsed.name, parsed.description) == (skill.name, skill.description)
    assert parsed.extra["metadata"] == {"synthetic": "true"}
    assert skill.path.parts[0] == "synthetic"
    assert "Use when" in skill.description and "Not for" in skill.description


def test_smaller_catalogs_are_prefixes_of_larger_ones_and_the_seed_changes_them():
    assert synthetic_skills(100) == synthetic_skills(1_000)[:100]
    assert [s.name for s in synthetic_skills(50, seed=1)] != [s.name for s in synthetic_skills(50, seed=0)]


def test_a_count_beyond_the_templates_is_refused_with_the_limit():
    with pytest.raises(ValueError, match="10,000"):
        synthetic_skills(COMBINATIONS + 1)


def test_distractors_keep_the_real_skills_first_and_whole():
    real = SkillLoader.from_root(SKILLS_DIR / "workplace")
    mixed = with_distractors(real, 100)
    assert mixed.names[: len(real.names)] == real.names
    assert len(mixed.names) == len(real.names) + 100


def test_synthetic_catalog_tokens_grow_linearly_like_real_ones():
    per_skill = [estimate_tokens(SkillLoader(synthetic_skills(n)).catalog()) / n for n in (100, 1_000)]
    real = SkillLoader.from_root(SKILLS_DIR / "workplace")
    real_per_skill = estimate_tokens(real.catalog()) / len(real.names)
    assert per_skill[1] == pytest.approx(per_skill[0], rel=0.05)
    assert 0.5 * real_per_skill < per_skill[0] < 1.5 * real_per_skill


def test_the_rule_lets_the_model_read_a_small_catalog_and_shortlists_a_large_one():
    assert decision_rule(CATALOG_TOKEN_BUDGET).name == "model"
    large = decision_rule(CATALOG_TOKEN_BUDGET + 1, k=10)
    assert large.name == "hybrid top 10"
    assert "10,001" in large.reason


def test_the_budget_is_the_course_budget_or_half_the_window_when_that_is_less():
    assert catalog_budget(1_048_576) == CATALOG_TOKEN_BUDGET
    assert catalog_budget(8_192) == 4_096


def test_the_context_window_of_the_local_model_is_the_one_its_file_runs_with(monkeypatch):
    from course_utils.backend.client import local_backend
    from course_utils.backend.local import model_file

    asked = []
    monkeypatch.setattr(model_file, "load_model", lambda choice: asked.append(choice) or SimpleNamespace(context=2048))

    class Local:
        course_backend = local_backend("/models/tiny.gguf")

    assert context_window(Local()) == 2048 and asked == ["/models/tiny.gguf"]


def test_a_measured_recall_chooses_the_smallest_k_that_reaches_the_target_within_the_budget():
    recall = {1: Rate.of(14, 24), 3: Rate.of(20, 24), 10: Rate.of(23, 24), 40: Rate.of(24, 24)}
    rule = decision_rule(20_000, 4_000, recall=recall, skill_tokens=100)
    assert (rule.name, rule.k, rule.advice) == ("hybrid top 10", 10, "")
    assert "23 of 24 positives" in rule.reason


def test_when_recall_falls_the_rule_keeps_the_longest_shortlist_the_budget_holds_and_says_what_to_try():
    recall = {1: Rate.of(5, 24), 10: Rate.of(12, 24), 30: Rate.of(15, 24), 60: Rate.of(22, 24)}
    rule = decision_rule(900_000, 4_000, recall=recall, skill_tokens=100)  # the budget holds 40 skills
    assert (rule.name, rule.k) == ("hybrid top 30", 30)
    assert "15 of 24" in rule.reason and f"{RECALL_TARGET:.0%}" in rule.reason
    for remedy in ("another encoder", "the body as well as the description", "larger context window"):
        assert remedy in rule.advice
    assert "a larger k" not in rule.advice  # recall was measured past what the budget holds
    short = decision_rule(900_000, 4_000, recall={1: Rate.of(5, 24), 10: Rate.of(12, 24)}, skill_tokens=100)
    assert "a larger k (the budget holds 40 skills" in short.advice


class _NoModel:
    """Fails the test if anything reaches a model: explicit activation must not ask one."""

    def __getattr__(self, name):
        raise AssertionError(f"the client was used ({name}) for an explicit /name")


def test_the_rule_selector_honours_an_explicit_name_without_asking_any_model():
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    select = rule_selector(_NoModel(), loader)
    assert select("/csv-data-profiler please look at this file") == Decision("csv-data-profiler")

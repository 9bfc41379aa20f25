"""The shortlist's signals: BM25 over a skill's whole SKILL.md, and the fused ranking. No model here."""
from __future__ import annotations

import numpy as np
import pytest

from course_utils.selection.lexical import Bm25Index, skill_text, words
from course_utils.selection.shortlist import Shortlist, model_invocable, standardised
from course_utils.skills.skill import SkillLoader


def test_bm25_counts_rare_words_most_and_ignores_common_ones():
    index = Bm25Index(["helm charts for kubernetes", "kubernetes security policies", "python type hints"])
    assert index.scores("helm").argmax() == 0 and index.scores("helm")[1:].tolist() == [0.0, 0.0]
    kubernetes, helm = index.scores("kubernetes")[0], index.scores("helm")[0]
    assert 0 < kubernetes < helm  # in two documents of three: a smaller weight
    assert index.scores("the and for").tolist() == [0.0, 0.0, 0.0] and words("The Helm, 2 charts") == ["helm", "charts"]


def test_standardised_scores_and_a_flat_row():
    assert standardised(np.array([1.0, 2.0, 3.0])).tolist() == pytest.approx([-1.2247, 0.0, 1.2247], abs=1e-4)
    assert standardised(np.array([0.5, 0.5])).tolist() == [0.0, 0.0]


@pytest.fixture
def loader(tmp_path) -> SkillLoader:
    skills = {"charts": ("Packages apps.", "Use Helm to template charts.", ""),
              "policies": ("Secures clusters.", "Write network policies.", ""),
              "deploy": ("Ships releases.", "Runs the deploy.", "disable-model-invocation: true\n")}
    for name, (description, body, extra) in skills.items():
        (tmp_path / name).mkdir()
        text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"
        (tmp_path / name / "SKILL.md").write_text(text)
    return SkillLoader.from_root(tmp_path)


def test_a_skill_kept_from_the_model_is_no_candidate(loader):
    assert model_invocable(loader).names == ["charts", "policies"]


def test_the_body_s_words_rank_a_skill_its_description_does_not_name(loader):
    skills = model_invocable(loader).skills.values()
    lexical = Bm25Index([skill_text(s) for s in skills]).scores
    flat = lambda query: np.array([0.3, 0.3])  # noqa: E731  (an encoder that ranks the two alike)
    assert [name for name, _ in Shortlist(["charts", "policies"], [flat, lexical]).top("a helm question", 2)] \
        == ["charts", "policies"]
    leaning = lambda query: np.array([0.1, 0.9])  # noqa: E731
    assert Shortlist(["charts", "policies"], [leaning, leaning, lexical]).top("a helm question", 1)[0][0] == "policies"

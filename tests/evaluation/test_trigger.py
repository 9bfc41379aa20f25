"""The trigger evaluation shared by eval-trigger and audit (course_utils/evaluation/trigger.py): what its report says
about how decisions were made. Embeddings from the local encoder, decisions from a scripted model."""
from __future__ import annotations

import pytest
from helpers.hybrid_fakes import scripted_client

from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.trigger import build_selectors
from course_utils.skills.paths import SKILLS_DIR

WORKPLACE = SKILLS_DIR / "workplace"


@pytest.mark.parametrize("names, threshold, k", [
    (["similarity"], True, False), (["hybrid"], False, True), (["model", "similarity", "hybrid"], True, True),
    (["model"], False, False)])
def test_the_report_names_the_threshold_only_when_similarity_decides(local_client, names, threshold, k):
    chosen = build_selectors(scripted_client(local_client), SkillLoader.from_root(WORKPLACE), names, k=4)
    described = chosen.describe()
    assert ("threshold" in described, "k" in described) == (threshold, k)
    assert list(chosen.selectors) == names
    assert described["runs"] == 1 and described["decoding"] == "greedy"  # the local backend decodes greedily

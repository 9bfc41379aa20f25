"""The "What we found" sentences: computed from the numbers, the verdict from the interval alone."""
from __future__ import annotations

import pytest

from course_utils.findings import Claim, claim_finding, rate_finding
from course_utils.stats import Rate

SKIPS = Claim("small models sometimes answer without loading the skill", "source lesson 2", at_least=0.01)


def test_a_rate_finding_names_the_model_the_counts_and_the_interval():
    sentence = rate_finding("the right skill loaded", Rate.of(18, 24), "Qwen-test")
    assert sentence.startswith("On Qwen-test, the right skill loaded: 18 of 24 runs, 75% (95 % CI ")
    assert "gave no runs" in rate_finding("x", Rate.of(0, 0), "m")


@pytest.mark.parametrize("rate, verdict", [
    (Rate.of(10, 40), "agrees with"),          # interval well above 0.01
    (Rate.of(0, 400), "disagrees with"),       # interval wholly below 0.01
    (Rate.of(0, 10), "does not settle"),       # 0/10: the interval reaches above 0.01
    (Rate.of(0, 0), "does not settle"),
])
def test_the_verdict_depends_on_where_the_interval_lies(rate, verdict):
    assert SKIPS.verdict(rate) == verdict
    assert claim_finding(SKIPS, rate).startswith(f"This run {verdict} the claim")


def test_an_upper_bound_claim_is_judged_the_other_way():
    rare = Claim("rarely wrong", "s", at_most=0.2)
    assert rare.verdict(Rate.of(1, 100)) == "agrees with"
    assert rare.verdict(Rate.of(60, 100)) == "disagrees with"
    assert "at most 0.20" in claim_finding(rare, Rate.of(1, 100))


def test_a_claim_has_exactly_one_bound():
    with pytest.raises(ValueError, match="one side"):
        Claim("q", "s")
    with pytest.raises(ValueError, match="one side"):
        Claim("q", "s", at_least=0.1, at_most=0.9)

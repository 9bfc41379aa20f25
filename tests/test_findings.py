"""The "What we found" sentences: computed from the numbers, the verdict from the interval alone."""
from __future__ import annotations

import pytest

from course_utils.findings import Claim, claim_finding, rate_finding
from course_utils.stats import Rate

SKIPS = Claim("small models sometimes answer without loading the skill", "source lesson 2", above=0.0)


def test_a_rate_finding_names_the_model_the_counts_and_the_interval():
    sentence = rate_finding("the right skill loaded", Rate.of(18, 24), "Qwen-test")
    assert sentence.startswith("On Qwen-test, the right skill loaded: 18 of 24 runs, 75.0% (95 % CI 55.1%–88.0%)")
    assert "gave no runs" in rate_finding("x", Rate.of(0, 0), "m")


@pytest.mark.parametrize("rate, verdict", [
    (Rate.of(1, 40), "agrees with"),           # one skip: "sometimes" holds, the interval is above 0
    (Rate.of(0, 400), "does not settle"),      # none seen: a rare skip is not ruled out
    (Rate.of(0, 0), "does not settle"),
])
def test_the_verdict_depends_on_where_the_interval_lies(rate, verdict):
    assert SKIPS.verdict(rate) == verdict
    assert claim_finding(SKIPS, rate).startswith(f"This run {verdict} the claim")


def test_an_upper_bound_claim_is_judged_the_other_way():
    rare = Claim("rarely wrong", "s", below=0.2)
    assert rare.verdict(Rate.of(1, 100)) == "agrees with"
    assert rare.verdict(Rate.of(60, 100)) == "disagrees with"
    assert rare.verdict(Rate.of(2, 10)) == "does not settle"
    assert "below 20.0%" in claim_finding(rare, Rate.of(1, 100))
    assert Claim("most", "s", above=0.5).verdict(Rate.of(10, 100)) == "disagrees with"


def test_a_claim_has_exactly_one_bound():
    with pytest.raises(ValueError, match="one side"):
        Claim("q", "s")
    with pytest.raises(ValueError, match="one side"):
        Claim("q", "s", above=0.1, below=0.9)

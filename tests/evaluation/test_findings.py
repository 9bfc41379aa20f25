"""The "What we found" sentences: computed from the numbers; a claim about this set decided by its count, a claim
about a rate by its interval against a bound the lesson's sample can reach both ways. Fast: no model, no kernel."""
from __future__ import annotations

import ast
import re

import nbformat
import pytest

from course_utils.evaluation import claims
from course_utils.evaluation.bakery_eval import MEASURED_DIR, load_requests, read_record
from course_utils.evaluation.findings import (AGREES, DISAGREES, TOO_FEW, CountClaim, RateClaim, claim_finding,
                                              rate_finding)
from course_utils.skills.paths import DATA_DIR, NOTEBOOKS_DIR
from course_utils.skills.queries import load_queries
from course_utils.evaluation.stats import Rate, wilson_at
from course_utils.evaluation.who_picks import read_record as read_who_picks

BOTH = {AGREES, DISAGREES}


def test_a_rate_finding_names_the_model_the_counts_and_the_interval():
    sentence = rate_finding("the right skill loaded", Rate.of(18, 24), "Qwen-test")
    assert sentence.startswith("On Qwen-test, the right skill loaded: 18 of 24 runs, 75.0% (95 % CI 55.1%–88.0%)")
    assert "gave no runs" in rate_finding("x", Rate.of(0, 0), "m")


# ---------------------------------------------------------------- claims about this set: the count decides


ALL = CountClaim("ranks the positives perfectly", "s", "all", of="positives", did="rank first",
                 holds="it ranks them all", fails="it misses some")


@pytest.mark.parametrize("holds_when, k, n, verdict", [
    ("all", 24, 24, AGREES), ("all", 23, 24, DISAGREES),
    ("none", 0, 6, AGREES), ("none", 1, 6, DISAGREES),
    ("some", 1, 400, AGREES), ("some", 0, 400, DISAGREES),  # "sometimes", on this run: 0 of 400 says no
    ("not all", 29, 30, AGREES), ("not all", 30, 30, DISAGREES),
    ("most", 2, 3, AGREES), ("most", 1, 2, DISAGREES), ("most", 0, 0, DISAGREES),
])
def test_a_count_claim_is_decided_by_the_count_exactly(holds_when, k, n, verdict):
    claim = CountClaim("q", "s", holds_when)
    assert claim.verdict(Rate.of(k, n)) == verdict
    assert claim_finding(claim, Rate.of(k, n)).startswith(f"This run {verdict} the claim")


def test_a_count_claim_reaches_both_verdicts_on_any_set_and_never_leaves_it_open():
    for holds_when in ("all", "none", "some", "not all", "most"):
        for n in range(1, 40):
            assert CountClaim("q", "s", holds_when).verdicts_at(n) == BOTH


def test_a_count_finding_ends_with_a_plain_sentence_from_the_numbers():
    found = claim_finding(ALL, Rate.of(23, 24), "Qwen-test")
    assert "it holds when all 24 positives rank first." in found
    assert found.endswith("On Qwen-test, it misses some: 23 of 24 positives rank first.")
    assert claim_finding(ALL, Rate.of(24, 24), "m").endswith("On m, it ranks them all: 24 of 24 positives rank first.")


def test_a_count_finding_on_nothing_says_so():
    found = claim_finding(CountClaim("fixes more than it breaks", "s", "most", of="changed decisions",
                                     did="are fixes", fails="it fixes nothing"), Rate.of(0, 0), "m")
    assert "this run has no changed decisions to count." in found
    assert found.endswith("On m, it fixes nothing: there are no changed decisions.")


def test_an_unknown_quantifier_is_refused():
    with pytest.raises(ValueError, match="holds_when"):
        CountClaim("q", "s", "nearly all")


# ---------------------------------------------------------------- claims about a rate: the interval decides


DECLINE = RateClaim("knows how to decline", "s", above=0.5, of="queries needing no skill", did="are declined",
                    holds="'none' works", fails="'none' does not work")


@pytest.mark.parametrize("rate, verdict", [
    (Rate.of(6, 6), AGREES), (Rate.of(0, 6), DISAGREES), (Rate.of(1, 6), TOO_FEW), (Rate.of(0, 0), TOO_FEW),
])
def test_a_rate_claim_is_decided_by_where_the_interval_lies(rate, verdict):
    assert DECLINE.verdict(rate) == verdict
    assert claim_finding(DECLINE, rate).startswith(f"This run {verdict} the claim")


def test_an_upper_bound_claim_is_judged_the_other_way():
    rare = RateClaim("rarely wrong", "s", below=0.2)
    assert rare.verdict(Rate.of(1, 100)) == AGREES
    assert rare.verdict(Rate.of(60, 100)) == DISAGREES
    assert rare.verdict(Rate.of(2, 10)) == TOO_FEW
    assert "below 20.0%" in claim_finding(rare, Rate.of(1, 100))
    assert RateClaim("most", "s", above=0.5).verdict(Rate.of(10, 100)) == DISAGREES


@pytest.mark.parametrize("bounds", [{}, {"above": 0.1, "below": 0.9}, {"above": 0.0}, {"below": 1.0},
                                    {"above": 1.0}])
def test_a_rate_claim_has_one_bound_strictly_between_0_and_1(bounds):
    with pytest.raises(ValueError, match="one side|strictly between"):
        RateClaim("q", "s", **bounds)


def test_an_undecided_finding_says_how_many_queries_would_decide_at_the_rate_observed():
    rate = Rate.of(1, 6)
    needed = DECLINE.needed(rate)
    assert needed is not None and needed > 6
    assert wilson_at(1 / 6, needed)[1] <= 0.5 < wilson_at(1 / 6, needed - 1)[1]  # the fewest that decide
    found = claim_finding(DECLINE, rate, "Qwen-test")
    assert f"at the observed 16.7%, {needed:,} queries needing no skill would decide it (this run has 6)" in found
    assert "does not settle" not in found
    assert found.endswith("On Qwen-test, 'none' does not work in this run, too few queries needing no skill to say "
                          "it of the model: 1 of 6 queries needing no skill are declined.")
    assert DECLINE.needed(Rate.of(3, 6)) is None  # on the bound: no number of queries at that rate decides
    assert "sits on the bound" in claim_finding(DECLINE, Rate.of(3, 6))
    assert claim_finding(DECLINE, Rate.of(0, 6), "m").endswith("On m, 'none' does not work: 0 of 6 queries needing "
                                                               "no skill are declined.")


def test_the_smallest_sample_that_can_decide_a_rate_claim():
    assert DECLINE.smallest_deciding_n() == 4  # 4/4 gives an interval from 0.51
    assert RateClaim("q", "s", above=0.9).smallest_deciding_n() == 35
    assert RateClaim("q", "s", above=0.9).verdicts_at(24) == {DISAGREES, TOO_FEW}  # 24/24 gives 0.86-1: never agrees


# ---------------------------------------------------------------- every lesson's claim, at that lesson's n


def _queries(name: str, lang: str | None = None):
    return [q for q in load_queries(DATA_DIR / name) if lang is None or q.lang == lang]


def _positives(name: str, lang: str | None = None) -> int:
    return sum(q.expected is not None for q in _queries(name, lang))


def _nones(name: str, lang: str | None = None) -> int:
    return sum(q.expected is None for q in _queries(name, lang))


def _skill_runs() -> int:
    """Lesson 04: the record's on-demand runs of requests that need a skill."""
    needs = {r.id for r in load_requests() if r.skill}
    _, recorded = read_record(MEASURED_DIR / "test_fresh.json")
    return sum(c.mode == "on-demand" and c.request in needs for c in recorded)


def _samples() -> dict[tuple[str, str], list[int]]:
    """The sizes each lesson's claim is judged on: (lesson, claim's name) → every n the lesson can pass."""
    separable = range(_nones("trigger_eval.yaml"), _nones("trigger_eval.yaml") + _positives("trigger_eval.yaml") + 1)
    return {
        ("04", "SKIPS_THE_SKILL"): [_skill_runs()],
        ("06", "DECLINES"): [_nones("trigger_eval.yaml")],
        ("07", "RANKS_PERFECTLY"): [_positives("trigger_eval.yaml"), _positives("trigger_eval_fr.yaml")],
        ("07", "NONE_OVERLAP"): [_nones("trigger_eval.yaml"), _nones("trigger_eval_fr.yaml")],
        ("08", "RANKS_PERFECTLY"): [_positives("trigger_eval.yaml")],
        ("08", "NO_SEPARATING_THRESHOLD"): list(separable),  # the nones and the positives ranked right
        ("09", "DECLINES"): [_nones("hybrid_grading.yaml", "en")],
        ("10", "PRESELECT_TOP10"): [_positives("trigger_eval.yaml", "en")],
        ("11", "FIXES_A_FALSE_TRIGGER"): list(range(1, _nones("helpdesk_near_misses.yaml") + 1)),
        ("12", "RANKS_PERFECTLY"): [_positives("dev/trigger_dev.yaml")],
        ("13", "DECLINES"): [_nones(f"{name}_test.yaml") for name in ("workplace", "mattpocock", "wshobson")],
        ("13", "MODEL_OVER_SIMILARITY"): [_discordant(name) for name in ("workplace", "mattpocock", "wshobson")],
    }


def _discordant(catalog: str) -> int:
    """Lesson 13: the test queries of a who-picks record on which the model alone and similarity alone differ."""
    record = read_who_picks(DATA_DIR / "measured" / "who_picks" / f"{catalog}_test.json")
    model, similar = (record.outcomes[name] for name in ("model", "similarity"))
    return sum((a.verdict == "correct") != (b.verdict == "correct") for a, b in zip(model, similar))


def _name(claim) -> str:
    return next(name for name, value in vars(claims).items() if value is claim)


def test_every_lesson_claim_has_its_sample_sizes():
    listed = {(lesson, _name(claim)) for lesson, found in claims.LESSON_CLAIMS.items() for claim in found}
    assert listed == set(_samples())


@pytest.mark.parametrize("lesson, name", sorted(_samples()))
def test_every_lesson_claim_can_come_out_either_way_at_its_n(lesson, name):
    claim = getattr(claims, name)
    for n in _samples()[(lesson, name)]:
        reached = claim.verdicts_at(n)
        assert BOTH <= reached, (f"lesson {lesson}: {name} ({claim.kind} claim) reaches only {sorted(reached)} on "
                                 f"{n} items")
        for verdict in BOTH:  # the counts that give each verdict, and the sentence they print
            k = next(k for k in range(n + 1) if claim.verdict(Rate.of(k, n)) == verdict)
            assert claim_finding(claim, Rate.of(k, n), "m").startswith(f"This run {verdict} the claim")


def _code(lesson: str) -> str:
    path = next(NOTEBOOKS_DIR.glob(f"{lesson}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    lines = [line for c in cells if c.cell_type == "code" for line in c.source.splitlines()]
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))  # magics apart


@pytest.mark.parametrize("lesson", sorted(claims.LESSON_CLAIMS))
def test_a_lesson_checks_the_registered_claims_and_writes_none_of_its_own(lesson):
    code = _code(lesson)
    assert not re.search(r"\b(?:Count|Rate)?Claim\(", code), f"lesson {lesson} writes a claim: put it in claims.py"
    imported = {alias.name for node in ast.walk(ast.parse(code)) if isinstance(node, ast.ImportFrom)
                and node.module == "course_utils.evaluation.claims" for alias in node.names}
    assert imported == {_name(claim) for claim in claims.LESSON_CLAIMS[lesson]}
    for name in imported:
        assert re.search(rf"claim_finding\({name}\b", code), f"lesson {lesson} imports {name} and never judges it"


def test_the_unmeasuring_lessons_check_no_claim():
    for path in NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"):
        if path.name[:2] not in claims.LESSON_CLAIMS:
            assert "claim_finding" not in _code(path.name[:2]), f"{path.name}: add its claims to LESSON_CLAIMS"

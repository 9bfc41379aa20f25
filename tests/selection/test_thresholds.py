"""Threshold counts (hand-checked), the overlap where no threshold works, fitting where a perfect threshold exists
and where none does."""
import pytest

from course_utils.selection.thresholds import (
    PerSkill, ScoredQuery, best_threshold, candidate_thresholds, count_outcomes, cross_validate, fit_global,
    fit_per_skill, overlap, scored_queries, split,
)

# Four must-trigger queries and two none-queries; the top skill of the third positive is wrong.
HAND = [
    ScoredQuery("a", "a", 0.80),
    ScoredQuery("a", "a", 0.62),
    ScoredQuery("b", "a", 0.70),
    ScoredQuery("b", "b", 0.55),
    ScoredQuery(None, "a", 0.66),
    ScoredQuery(None, "b", 0.40),
]


@pytest.mark.parametrize(
    "threshold, expected",
    [
        # (correct, false triggers, misses, wrong skill), worked out by hand from HAND
        (0.0, (3, 2, 0, 1)),   # everything fires: both none-queries false-trigger, the b query picks a
        (0.5, (4, 1, 0, 1)),   # the 0.40 none-query stays silent: correct
        (0.6, (3, 1, 1, 1)),   # 0.55 (b) is now a miss; 0.40 correct
        (0.65, (2, 1, 2, 1)),  # 0.62 (a) missed too; 0.66 still fires
        (0.7, (3, 0, 2, 1)),   # 0.66 silent now, 0.70 still fires on the wrong skill
        (0.9, (2, 0, 4, 0)),   # nothing fires: the two none-queries are right, the four others missed
    ],
)
def test_counts_by_hand(threshold, expected):
    counts = count_outcomes(HAND, threshold)
    assert (counts.correct, counts.false_triggers, counts.misses, counts.wrong_skill) == expected
    assert counts.total == 6
    assert counts.accuracy == pytest.approx(expected[0] / 6)


def test_candidates_are_midpoints_and_ends():
    assert candidate_thresholds([0.2, 0.4, 0.4, 0.8]).round(4).tolist() == [0.199, 0.3, 0.6, 0.801]


def test_perfect_separation_is_found():
    queries = [ScoredQuery("a", "a", s) for s in (0.7, 0.75, 0.9)] + [ScoredQuery(None, "a", s) for s in (0.3, 0.5)]
    threshold, accuracy = best_threshold(queries)
    assert accuracy == 1.0
    assert 0.5 < threshold < 0.7


def test_no_threshold_separates_overlapping_groups():
    # Lowest positive 0.593 is below the highest none-query 0.676, as in the original lesson's Gemini run.
    queries = ([ScoredQuery("a", "a", s) for s in (0.593, 0.70, 0.80)]
               + [ScoredQuery(None, "a", s) for s in (0.676, 0.3)])
    threshold, accuracy = best_threshold(queries)
    assert accuracy == pytest.approx(4 / 5)
    assert count_outcomes(queries, threshold).correct == 4


def test_per_skill_thresholds_beat_a_global_one_when_skills_differ():
    # Skill a's matches score high, skill b's low; one none-query near each.
    queries = [ScoredQuery("a", "a", 0.9), ScoredQuery(None, "a", 0.7),
               ScoredQuery("b", "b", 0.6), ScoredQuery(None, "b", 0.4)]
    assert best_threshold(queries)[1] == 0.75
    per_skill = fit_per_skill(queries)
    assert count_outcomes(queries, per_skill).accuracy == 1.0
    assert 0.7 < per_skill.for_skill("a") < 0.9 and 0.4 < per_skill.for_skill("b") < 0.6
    assert per_skill.for_skill("unseen") == per_skill.default


def test_split_is_stratified_and_fixed():
    queries = [ScoredQuery("a", "a", i / 100) for i in range(20)] + [ScoredQuery(None, "a", i / 100) for i in range(10)]
    train, test = split(queries, 0.6, seed=3)
    assert (len(train), len(test)) == (18, 12)
    assert sum(q.expected is None for q in train) == 6
    assert split(queries, 0.6, seed=3) == (train, test)


def test_cross_validation_is_perfect_only_when_separable():
    separable = ([ScoredQuery("a", "a", 0.6 + i / 100) for i in range(10)]
                 + [ScoredQuery(None, "a", 0.2 + i / 100) for i in range(5)])
    assert cross_validate(separable, fit_global) == 1.0
    overlapping = ([ScoredQuery("a", "a", 0.5 + i / 20) for i in range(10)]
                   + [ScoredQuery(None, "a", 0.55 + i / 10) for i in range(5)])
    assert cross_validate(overlapping, fit_global) < 1.0
    assert isinstance(fit_per_skill(overlapping), PerSkill)


def test_scored_queries_and_overlap():
    import numpy as np

    from course_utils.skills.queries import LabelledQuery

    queries = [LabelledQuery("q1", "a", "positive", "en"), LabelledQuery("q2", "b", "positive", "en"),
               LabelledQuery("q3", None, "near-miss", "en")]
    scores = np.array([[0.9, 0.1], [0.7, 0.6], [0.2, 0.65]])
    scored = scored_queries(queries, scores, ["a", "b"])
    assert scored == [ScoredQuery("a", "a", 0.9), ScoredQuery("b", "a", 0.7), ScoredQuery(None, "b", 0.65)]
    # q2 is ranked wrong, so the lowest *right* positive is q1's 0.9; the none-query's top is 0.65.
    found = overlap(scored)
    assert (found.lowest_right, found.highest_none, found.ranking_errors) == (0.9, 0.65, 1)
    assert found.interval is None and found.threshold == pytest.approx(0.775)


def test_separable_groups_get_the_middle_of_the_gap():
    found = overlap([ScoredQuery("a", "a", s) for s in (0.7, 0.9)] + [ScoredQuery(None, "b", s) for s in (0.3, 0.5)])
    assert found.interval is None and (found.right_inside, found.nones_inside) == (0, 0)
    assert found.threshold == pytest.approx(0.6)
    assert count_outcomes([ScoredQuery("a", "a", 0.7), ScoredQuery(None, "b", 0.5)], found.threshold).accuracy == 1.0
    assert found.verdict() == ("threshold 0.600 separates these 4 queries: the 2 must-trigger queries ranked right "
                               "fire, the 2 must-not-trigger queries stay silent")


def test_overlap_counts_the_queries_inside_the_interval():
    # The original lesson's Gemini figures: lowest right positive 0.593, highest none-query 0.676.
    queries = [ScoredQuery("a", "a", s) for s in (0.593, 0.65, 0.70, 0.80)] + \
              [ScoredQuery(None, "a", s) for s in (0.3, 0.60, 0.676)]
    found = overlap(queries)
    assert found.interval == (0.593, 0.676)
    assert (found.right_inside, found.nones_inside) == (2, 2)  # 0.593, 0.65 | 0.60, 0.676
    assert found.threshold is None
    assert found.verdict() == ("no threshold separates these 7 queries: 2 of 4 must-trigger queries ranked right and "
                               "2 of 3 must-not-trigger queries score inside the overlap [0.593, 0.676]")
    assert best_threshold(queries)[1] < 1.0


def test_equal_scores_overlap():
    found = overlap([ScoredQuery("a", "a", 0.6), ScoredQuery(None, "a", 0.6)])
    assert found.interval == (0.6, 0.6) and (found.right_inside, found.nones_inside) == (1, 1)


def test_ranking_errors_are_counted_apart_from_the_overlap():
    # A wrong top-1 skill scoring anywhere (here below every none-query) creates no overlap.
    queries = [ScoredQuery("a", "a", 0.8), ScoredQuery("b", "a", 0.9), ScoredQuery("b", "a", 0.2),
               ScoredQuery(None, "b", 0.5)]
    found = overlap(queries)
    assert (found.right, found.nones, found.wrong_top) == ((0.8,), (0.5,), (0.9, 0.2))
    assert found.interval is None and found.threshold == pytest.approx(0.65)
    assert found.verdict().endswith("; apart from them, 2 ranking errors (must-trigger queries whose top-1 skill "
                                    "is wrong), which no threshold makes right")
    # They are wrong at every threshold: the best accuracy is everything else.
    assert best_threshold(queries)[1] == pytest.approx(2 / 4)
    assert count_outcomes(queries, found.threshold).correct == 2


@pytest.mark.parametrize("queries, threshold", [
    ([], None),
    ([ScoredQuery("b", "a", 0.9)], None),                       # only a ranking error: nothing to separate
    ([ScoredQuery("a", "a", 0.7), ScoredQuery("a", "a", 0.9)], 0.699),  # no none-query: fire on all
    ([ScoredQuery(None, "a", 0.4)], 0.401),                      # no must-trigger query: stay silent
])
def test_empty_groups(queries, threshold):
    found = overlap(queries)
    assert found.interval is None and (found.right_inside, found.nones_inside) == (0, 0)
    assert found.threshold == (None if threshold is None else pytest.approx(threshold))
    if threshold is None:
        assert found.verdict().startswith("no threshold to choose")
    else:
        assert found.verdict().startswith(f"threshold {threshold:.3f} separates these {len(queries)} queries")
        assert count_outcomes(queries, found.threshold).accuracy == 1.0


def test_one_verdict_for_a_decision_serves_reports_and_thresholds():
    from course_utils.skills.queries import verdict

    assert [verdict(e, c) for e, c in [("a", "a"), (None, None), (None, "a"), ("a", None), ("a", "b")]] == \
        ["correct", "correct", "false trigger", "miss", "wrong skill"]

"""Metrics on hand-computed cases, with scripted selectors: no model, no embeddings."""
from __future__ import annotations

from collections.abc import Iterable

import pytest

from course_utils.evaluation import comparison_table, evaluate, majority, run_selector, shorten
from course_utils.queries import LabelledQuery
from course_utils.selection import Decision, Selector


def q(text: str, expected: str | None) -> LabelledQuery:
    return LabelledQuery(text, expected, "positive" if expected else "near-miss", "en")


def scripted(answers: dict[str, Decision | Exception | Iterable[Decision]]) -> Selector:
    """A selector that returns prepared decisions (a list: one per run, in order) or raises."""
    queues = {k: iter(v) if isinstance(v, list) else v for k, v in answers.items()}

    def select(query: str) -> Decision:
        answer = queues[query]
        answer = next(answer) if not isinstance(answer, (Decision, Exception)) else answer
        if isinstance(answer, Exception):
            raise answer
        return answer

    return select


MIXED = [q("q1", "a"), q("q2", "b"), q("q3", "a"), q("n1", None), q("n2", None)]
MIXED_ANSWERS = {
    "q1": Decision("a", 100, 1.0),  # correct
    "q2": Decision(None, 200, 2.0),  # miss
    "q3": Decision("b", 300, 3.0),  # wrong skill
    "n1": Decision("a", 400, 4.0),  # false trigger
    "n2": Decision(None, 1000, 5.0),  # correct abstention
}


def test_mixed_set_by_hand():
    report = evaluate("scripted", run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False))
    assert (report.correct, report.false_triggers, report.misses, report.wrong_skill, report.errors) == (2, 1, 1, 1, 0)
    assert report.accuracy == pytest.approx(2 / 5)
    assert report.positive_accuracy == pytest.approx(1 / 3) and report.positives_correct == 1
    assert report.none_accuracy == pytest.approx(1 / 2) and report.nones_correct == 1
    assert report.precision == pytest.approx(1 / 3)  # three triggers (q1, q3, n1), one right
    assert report.recall == pytest.approx(1 / 3)
    assert report.mean_prompt_tokens == pytest.approx(400) and report.median_prompt_tokens == 300
    assert report.seconds_per_decision == pytest.approx(3.0)
    assert report.ranked_first is None and report.min_positive_score is None
    assert report.mistake_lines() == [
        'scripted: expected b -> got None : "q2"',
        'scripted: expected a -> got b : "q3"',
        'scripted: expected None -> got a : "n1"',
    ]


def test_all_none_set():
    queries = [q("n1", None), q("n2", None), q("n3", None)]
    answers = {"n1": Decision(None), "n2": Decision("a"), "n3": Decision(None)}
    report = evaluate("s", run_selector(scripted(answers), queries, progress=False))
    assert report.accuracy == pytest.approx(2 / 3) and report.none_accuracy == pytest.approx(2 / 3)
    assert report.positives == 0 and report.positive_accuracy is None and report.recall is None
    assert report.precision == 0.0 and report.false_triggers == 1
    assert "must trigger n/a (0 queries)" in report.summary()


def test_all_none_set_without_triggers_has_no_precision():
    queries = [q("n1", None), q("n2", None)]
    report = evaluate("s", run_selector(scripted({"n1": Decision(None), "n2": Decision(None)}), queries, progress=False))
    assert report.accuracy == 1.0 and report.precision is None
    assert "precision n/a" in report.summary()


def test_all_positive_set():
    queries = [q("p1", "a"), q("p2", "b")]
    report = evaluate("s", run_selector(scripted({"p1": Decision("a"), "p2": Decision("b")}), queries, progress=False))
    assert (report.accuracy, report.positive_accuracy, report.precision, report.recall) == (1.0, 1.0, 1.0, 1.0)
    assert report.nones == 0 and report.none_accuracy is None and report.mistakes == []


def test_a_failing_decision_is_recorded_not_raised():
    queries = [q("p1", "a"), q("p2", "b"), q("n1", None)]
    answers = {"p1": Decision("a"), "p2": RuntimeError("429 RESOURCE_EXHAUSTED"), "n1": Decision(None)}
    report = evaluate("s", run_selector(scripted(answers), queries, progress=False))
    assert (report.correct, report.errors, report.misses) == (2, 1, 0)
    assert report.accuracy == pytest.approx(2 / 3)  # an error is never correct
    assert report.recall == pytest.approx(1 / 2)
    assert report.error_reasons == [{"query": "p2", "error": "RuntimeError: 429 RESOURCE_EXHAUSTED"}]
    assert "s: error on 1 query: RuntimeError: 429 RESOURCE_EXHAUSTED" in report.summary()


@pytest.mark.parametrize(
    "skills, chosen",
    [(["a", "a", None], "a"), (["a", None, None], None), (["a", None], "a"), ([None, None], None),
     (["a", "b", "a"], "a"), ([], None)],
)
def test_majority_needs_half_the_runs(skills, chosen):
    assert majority(skills) == chosen


def test_runs_count_a_trigger_when_it_wins_half():
    queries = [q("p1", "a"), q("n1", None)]
    answers = {"p1": [Decision("a"), Decision(None), Decision("a")],
               "n1": [Decision("a"), Decision(None), Decision(None)]}
    outcomes = run_selector(scripted(answers), queries, runs=3, progress=False)
    assert [o.chosen for o in outcomes] == ["a", None]
    report = evaluate("s", outcomes)
    assert report.accuracy == 1.0 and report.runs == 3


def test_one_failed_run_out_of_three_still_decides():
    answers = {"p1": [Decision("a"), RuntimeError("boom"), Decision("a")]}
    (outcome,) = run_selector(scripted(answers), [q("p1", "a")], runs=3, progress=False)
    assert outcome.verdict == "correct" and outcome.error is None


def test_score_extremes_use_correct_positives_and_none_queries():
    queries = [q("p1", "a"), q("p2", "a"), q("p3", "b"), q("n1", None), q("n2", None)]
    answers = {
        "p1": Decision("a", score=0.6, top_k=(("a", 0.6), ("b", 0.2))),
        "p2": Decision(None, score=0.4, top_k=(("a", 0.4), ("b", 0.3))),  # ranked right, under threshold
        "p3": Decision("a", score=0.9, top_k=(("a", 0.9), ("b", 0.8))),  # ranked wrong: not counted
        "n1": Decision("a", score=0.7, top_k=(("a", 0.7),)),
        "n2": Decision(None, score=0.3, top_k=(("b", 0.3),)),
    }
    report = evaluate("similarity", run_selector(scripted(answers), queries, progress=False))
    assert report.ranked_first == 2
    assert report.min_positive_score == pytest.approx(0.4)
    assert report.max_none_score == pytest.approx(0.7)
    assert "scores: min positive 0.400 | max none 0.700 | nearest skill right on 2/3 positives" in report.summary()


def test_json_keys_and_table():
    report = evaluate("scripted", run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False))
    data = report.to_dict()
    for key in ["accuracy", "positive_accuracy", "none_accuracy", "false_triggers", "misses", "wrong_skill",
                "mean_prompt_tokens", "seconds_per_decision", "mistakes", "precision", "recall",
                "min_positive_score", "max_none_score"]:
        assert key in data
    assert data["mistakes"][0] == {"expected": "b", "got": None, "kind": "positive", "query": "q2"}
    table = comparison_table([report, report])
    assert table.splitlines()[1].split() == ["accuracy", "0.400", "0.400"]


def test_long_queries_are_shortened_on_one_line():
    assert shorten("a\nb") == "a b"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"

"""Metrics on hand-computed cases, with scripted selectors: no model, no embeddings."""
from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from course_utils.evaluation.outcomes import comparison_table, evaluate, majority, paired_comparison, run_selector
from course_utils.skills.queries import LabelledQuery
from course_utils.selection.pick import Decision, Selector
from course_utils.skills.text import shorten


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
    outcomes = run_selector(scripted({"n1": Decision(None), "n2": Decision(None)}), queries, progress=False)
    report = evaluate("s", outcomes)
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
    "answers, chosen",
    [(["a", "a", None], "a"), (["a", None, None], None), (["a", "b", "a"], "a"), (["a", "a", "b", None], "a"),
     (["a", None], None), (["a", "b"], None), (["a", "b", None], None), (["a", "a", None, None], None),
     ([None, None], None), (["a"], "a"), ([], None)],
)
def test_majority_is_the_most_frequent_answer_and_a_tie_decides_none(answers, chosen):
    assert majority(answers) == chosen


def test_runs_decide_by_majority_and_measure_agreement():
    queries = [q("p1", "a"), q("p2", "b"), q("n1", None), q("n2", None)]
    answers = {"p1": [Decision("a"), Decision(None), Decision("a")],
               "p2": [Decision("b"), Decision("a"), Decision(None)],  # three answers, one each: no skill
               "n1": [Decision("a"), Decision(None), Decision(None)],
               "n2": [Decision(None), Decision(None), Decision(None)]}
    outcomes = run_selector(scripted(answers), queries, runs=3, progress=False)
    assert [o.chosen for o in outcomes] == ["a", None, None, None]
    assert [o.agreement for o in outcomes] == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1.0])
    report = evaluate("s", outcomes)
    assert (report.correct, report.misses, report.runs) == (3, 1, 3)
    assert report.mean_agreement == pytest.approx((2 / 3 + 1 / 3 + 2 / 3 + 1) / 4)
    assert report.disagreeing_queries == 3 and report.failed_runs == 0
    assert ("   3 runs per query; the decision is the most frequent answer of the runs that succeeded "
            "(no skill is an answer; a tie decides no skill)") in report.summary()
    assert ("agreeing with the decision: 0.67 on average; runs disagreed on 3/4 queries; 0 failed runs"
            in report.summary())


def test_one_run_measures_no_agreement():
    report = evaluate("s", run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False))
    assert report.mean_agreement is None and report.disagreeing_queries is None
    assert [r["agreement"] for r in report.records] == [1.0] * 5
    assert "runs per query" not in report.summary()


def test_failed_runs_leave_the_vote_and_a_query_without_answer_is_an_error():
    queries = [q("p1", "a"), q("p2", "b"), q("p3", "a")]
    answers = {"p1": [Decision("a"), RuntimeError("boom"), Decision("a")],
               "p2": [Decision("b"), RuntimeError("boom"), Decision(None)],  # one each among the two that answered
               "p3": [RuntimeError("boom"), Decision(None, error="malformed call"), RuntimeError("boom")]}
    outcomes = run_selector(scripted(answers), queries, runs=3, progress=False)
    assert [o.verdict for o in outcomes] == ["correct", "miss", "error"]
    assert [o.agreement for o in outcomes] == [1.0, 0.5, None]
    assert outcomes[2].error == "RuntimeError: boom"
    report = evaluate("s", outcomes)
    assert (report.failed_runs, report.errors, report.disagreeing_queries) == (5, 1, 1)
    assert report.mean_agreement == pytest.approx(0.75)  # the query without an answer has no agreement
    assert "5 failed runs left out of the vote" in report.summary()


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
                "min_positive_score", "max_none_score", "records"]:
        assert key in data
    assert data["mistakes"][0] == {"expected": "b", "got": None, "kind": "positive", "query": "q2"}
    json.dumps(data)  # plain JSON types only
    table = comparison_table([report, report]).splitlines()
    assert table[1].split() == ["accuracy", "0.400", "[0.12,", "0.77]", "0.400", "[0.12,", "0.77]"]
    assert table[6].split() == ["false", "triggers", "1", "1"]


def test_every_rate_has_its_wilson_interval():
    report = evaluate("scripted", run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False))
    assert report.accuracy_ci == pytest.approx([0.1176, 0.7693], abs=1e-4)  # 2/5
    assert report.positive_accuracy_ci == pytest.approx([0.0615, 0.7923], abs=1e-4)  # 1/3
    assert report.none_accuracy_ci == pytest.approx([0.0945, 0.9055], abs=1e-4)  # 1/2
    assert report.precision_ci == report.recall_ci == report.positive_accuracy_ci  # 1/3 each
    assert report.summary().splitlines()[:3] == [
        "scripted: accuracy 0.400 (2/5, 95% CI 0.12–0.77)",
        "          must trigger 0.333 (1/3, 95% CI 0.06–0.79) | must not 0.500 (1/2, 95% CI 0.09–0.91)",
        "          precision 0.333 (1/3, 95% CI 0.06–0.79) | recall 0.333 (1/3, 95% CI 0.06–0.79)",
    ]


def test_a_rate_without_data_has_no_interval():
    report = evaluate("s", run_selector(scripted({"n1": Decision(None)}), [q("n1", None)], progress=False))
    assert report.positive_accuracy is None and report.positive_accuracy_ci is None
    assert report.precision_ci is None and report.none_accuracy_ci == pytest.approx([0.2065, 1.0], abs=1e-4)
    assert "precision n/a (0 triggers)" in report.summary()
    assert comparison_table([report]).splitlines()[2].split() == ["must", "trigger", "n/a"]


def test_records_keep_every_query_and_every_run():
    queries = [q("p1", "a"), q("n1", None)]
    answers = {"p1": [Decision("a", 100, 1.0, score=0.8, top_k=(("a", 0.8), ("b", 0.5))), RuntimeError("boom"),
                      Decision("b", 300, 3.0, score=0.6, top_k=(("b", 0.6),))],
               "n1": [Decision(None, 10, 0.5)] * 3}
    records = evaluate("s", run_selector(scripted(answers), queries, runs=3, progress=False)).records
    assert records[0] == {
        "query": "p1", "expected": "a", "kind": "positive", "lang": "en", "decided": None, "verdict": "miss",
        "runs": ["a", None, "b"], "errors": [None, "RuntimeError: boom", None], "agreement": 0.0,
        "prompt_tokens": 200.0, "seconds": 2.0, "score": pytest.approx(0.7), "top_k": [["a", 0.8], ["b", 0.5]],
    }
    assert records[1] == {
        "query": "n1", "expected": None, "kind": "near-miss", "lang": "en", "decided": None, "verdict": "correct",
        "runs": [None, None, None], "errors": [None, None, None], "agreement": 1.0,
        "prompt_tokens": 10.0, "seconds": 0.5, "score": None, "top_k": None,
    }


def test_paired_comparison_counts_discordant_queries():
    a = run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False)  # right on q1 and n2
    b = run_selector(scripted({**MIXED_ANSWERS, "q1": Decision(None), "q2": Decision("b"), "q3": Decision("a")}),
                     list(reversed(MIXED)), progress=False)  # right on q2, q3 and n2; another order
    comparison = paired_comparison("A", a, "B", b)
    assert (comparison.queries, comparison.both_right, comparison.only_a_right, comparison.only_b_right,
            comparison.both_wrong) == (5, 1, 1, 2, 1)
    assert comparison.p_value == 1.0
    assert comparison.discordant == [
        {"query": "q1", "expected": "a", "decided": {"A": "a", "B": None}, "right": "A"},
        {"query": "q2", "expected": "b", "decided": {"A": None, "B": "b"}, "right": "B"},
        {"query": "q3", "expected": "a", "decided": {"A": "b", "B": "a"}, "right": "B"},
    ]
    assert comparison.verdict() == (
        "3 discordant queries (A right on 1, B right on 2): exact McNemar p = 1.000 — no evidence of a difference "
        "on these 5 queries (the rule used here: a difference is a finding only at p < 0.05)")
    assert comparison.summary().splitlines()[2] == '  A right: expected a; A -> a, B -> None : "q1"'
    assert comparison.to_dict()["verdict"] == comparison.verdict()


def test_paired_comparison_names_a_finding_only_under_005():
    queries = [q(f"p{i}", "a") for i in range(12)]
    right = run_selector(scripted({x.query: Decision("a") for x in queries}), queries, progress=False)
    wrong = run_selector(scripted({x.query: Decision(None) for x in queries}), queries, progress=False)
    seven = paired_comparison("good", right[:7], "bad", wrong[:7])
    assert seven.p_value == pytest.approx(2 / 2**7)
    assert seven.verdict() == ("7 discordant queries (good right on 7, bad right on 0): exact McNemar p = 0.016 "
                               "— good was right more often: a finding by the rule used here (p < 0.05), "
                               "about these 7 queries")
    five = paired_comparison("bad", wrong[:5], "good", right[:5])
    assert five.p_value == 0.0625 and "p = 0.062 — no evidence of a difference on these 5 queries" in five.verdict()
    assert "exact McNemar p < 0.001 — good was right more often" in paired_comparison(
        "good", right, "bad", wrong).verdict()


def test_paired_comparison_needs_the_same_queries():
    a = run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False)
    with pytest.raises(ValueError, match="same queries"):
        paired_comparison("A", a, "B", a[:4])
    with pytest.raises(ValueError, match="same queries"):
        paired_comparison("A", a + a[:1], "B", a + a[:1])
    with pytest.raises(ValueError, match="different names"):
        paired_comparison("A", a, "A", a)


def test_long_queries_are_shortened_on_one_line():
    assert shorten("a\nb") == "a b"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"


def test_rate_bars_draw_each_rate_with_its_interval():
    from matplotlib.container import BarContainer
    from matplotlib.figure import Figure

    from course_utils.evaluation.plots import rate_bars

    full = evaluate("model", run_selector(scripted(MIXED_ANSWERS), MIXED, progress=False))
    nones = evaluate("similarity", run_selector(scripted({"n1": Decision(None)}), [q("n1", None)], progress=False))
    ax = rate_bars(Figure().subplots(), [full, nones])
    model_bars, similarity_bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [b.get_height() for b in model_bars] == pytest.approx([2 / 5, 1 / 3, 1 / 2])
    whiskers = model_bars.errorbar.lines[2][0].get_segments()
    assert [y for w in whiskers for _, y in w] == pytest.approx(
        [*full.accuracy_ci, *full.positive_accuracy_ci, *full.none_accuracy_ci])
    assert [b.get_height() for b in similarity_bars] == [1.0, 1.0]  # no must-trigger query: no bar
    assert [t.get_text() for t in ax.texts] == ["2/5", "1/3", "1/2", "1/1", "n/a", "1/1"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["model", "similarity"]


def test_a_report_reads_back_from_its_dict():
    """Lesson 06 reads recorded reports (data/measured/) back with `Report.from_dict`."""
    import json

    from course_utils.evaluation.outcomes import Report
    from course_utils.skills.paths import DATA_DIR

    for file in sorted((DATA_DIR / "measured" / "abstention_dev").glob("*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))["report"]
        report = Report.from_dict(data)
        assert report.to_dict() == data, file.name
        assert report.queries == 90 and len(report.records) == 90


def test_an_outcome_reads_back_from_its_record():
    """`Outcome.from_record` inverts `Outcome.record`: runs, errors and the decision; one run's cost exactly."""
    from course_utils.evaluation.outcomes import Outcome

    queries = [q("p1", "pdf"), q("n1", None), q("p2", "csv")]
    answers = {"p1": Decision("pdf", 100, 0.5), "n1": Decision("pdf", 90, 0.25),
               "p2": Decision(None, 0, 0.0, error="timeout")}
    outcomes = run_selector(scripted(answers), queries, runs=1, progress=False)
    back = [Outcome.from_record(o.record()) for o in outcomes]
    assert [b.record() for b in back] == [o.record() for o in outcomes]
    assert [b.verdict for b in back] == ["correct", "false trigger", "error"]
    assert evaluate("s", back).to_dict() == evaluate("s", outcomes).to_dict()


def test_lesson_06s_recorded_abstention_run_is_of_its_queries_and_adds_up():
    """Lesson 06 reads the recommended technique's run on its 30 queries when the backend is the model that made
    it: the record must hold those queries, in order, with their labels, and its counts must follow from its
    per-query records."""
    import json

    from course_utils.selection.abstain import RECOMMENDED
    from course_utils.evaluation.outcomes import Outcome, Report
    from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
    from course_utils.skills.queries import load_queries
    from course_utils.skills.skill import SkillLoader

    record = json.loads((DATA_DIR / "measured" / "abstention_lesson" / f"{RECOMMENDED}.json").read_text("utf-8"))
    assert record["queries"] == ["data/trigger_eval.yaml"]
    queries = load_queries(DATA_DIR / "trigger_eval.yaml", SkillLoader.from_root(SKILLS_DIR / "workplace").names)
    outcomes = [Outcome.from_record(r) for r in record["report"]["records"]]
    assert [o.query for o in outcomes] == queries
    recomputed = evaluate(record["report"]["selector"], outcomes).to_dict()
    assert {k: v for k, v in recomputed.items() if k != "seconds_per_decision"} == {
        k: v for k, v in Report.from_dict(record["report"]).to_dict().items() if k != "seconds_per_decision"}


@pytest.mark.model
def test_lesson_06s_recorded_abstention_run_is_what_the_local_model_decides_today(local_client):
    """The record stands in for 30 live decisions only while the code and the model would repeat it: three of its
    queries (one of each kind), asked again, get the recorded decisions and prompt sizes."""
    import json

    from course_utils.selection.abstain import RECOMMENDED, recommended
    from course_utils.backend.client import backend_of
    from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
    from course_utils.skills.skill import SkillLoader

    record = json.loads((DATA_DIR / "measured" / "abstention_lesson" / f"{RECOMMENDED}.json").read_text("utf-8"))
    assert record["generation_model"] == backend_of(local_client).generation_label()
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    rows = {r["kind"]: r for r in record["report"]["records"]}  # the last query of each kind
    for row in rows.values():
        decision = recommended(local_client, workplace, row["query"])
        assert (decision.skill, decision.prompt_tokens) == (row["runs"][0], row["prompt_tokens"]), row["query"]

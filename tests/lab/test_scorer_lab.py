"""The lab's `scorer-dev` record: resumed pairs, and the dev table read from it. No model here."""
from __future__ import annotations

from scripts.lab.scorer import known_pairs
from scripts.lab.scorer_report import report, with_gold
from course_utils.skills.paths import REPO_ROOT


def line(query, expected, p_yes, file="data/dev/workplace_dev.yaml", catalog="workplace"):
    top = [["expense-report-checker", 2.0], ["hr-policy-qa", 1.0], ["it-helpdesk-triage", 0.5]]
    return {"catalog": catalog, "file": file, "query": query, "expected": expected, "lang": "en", "top": top,
            "p_yes": p_yes, "tok_each": [150, 150, 150], "fresh": 3, "seconds": 3.0,
            "sim_top": ["expense-report-checker", 0.3], "sim_threshold": 0.25}


def test_a_scored_pair_is_read_back_not_asked_again():
    assert known_pairs([line("q", None, [0.8, 0.2, 0.1])])[("q", "hr-policy-qa")] == (0.2, 150)


def test_a_request_for_a_skill_kept_from_the_model_expects_none():
    kept = line("q", "grill-me", [0.1, 0.1, 0.1], catalog="mattpocock")
    kept["top"] = [["tdd", 1.0], ["to-prd", 0.5], ["triage", 0.1]]
    assert with_gold([kept])[0]["gold"] is None


def test_the_table_counts_each_decision_against_similarity():
    lines = [line(f"pick {i}", "expense-report-checker", [0.9, 0.2, 0.1]) for i in range(6)]
    lines += [line(f"none {i}", None, [0.3, 0.2, 0.1]) for i in range(6)]
    table = report(lines)
    assert "### workplace: 12 queries; the expected skill in the top 3 for 6 of 6 positives" in table
    assert "| similarity (default threshold) | 6/12 (0.50, 0.25–0.75) | 6/6" in table  # picks every none too
    default = "| scorer, nothing fitted: the most probable at P(yes) ≥ 0.5, leading the others by +0 |"
    assert f"{default} 12/12 (1.00, 0.76–1.00) |" in table
    assert "+6 −0, p = 0.0312" in table


def dev_record() -> list[dict]:
    import json

    record = REPO_ROOT / "docs" / "lab" / "records" / "scorer_dev.jsonl"
    lines = with_gold([json.loads(text) for text in record.read_text(encoding="utf-8").splitlines()])
    assert {line["catalog"] for line in lines} == {"workplace", "mattpocock", "wshobson"}
    return lines


def test_the_course_rule_is_the_one_its_dev_record_fits():
    from scripts.lab.rules import COURSE_RULE, fit_on_dev
    from scripts.lab.scorer_report import scores

    assert fit_on_dev([(scores(line), line["gold"]) for line in dev_record()]) == COURSE_RULE


def test_the_course_decision_is_the_one_its_dev_record_fits():
    from course_utils.evaluation.scoring import fit_decider
    from course_utils.selection.scorer import COURSE_DECIDER
    from scripts.lab.scorer_report import scores

    lines = dev_record()
    fitted = fit_decider([(scores(x), [fused for _, fused in x["top"]], x["gold"]) for x in lines])
    assert fitted == COURSE_DECIDER

"""Lesson 13's records and command: the record is complete, and re-running its choices on the local model gives
its decisions again."""
from __future__ import annotations

import json

import pytest

from course_utils.skills.paths import DATA_DIR, REPO_ROOT, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.trigger import build_selectors, run_selectors
from course_utils.evaluation.outcomes import Report
from course_utils.evaluation.selectors import REGISTRY, compared
from course_utils.evaluation.who_picks import course_finding, read_record

RECORDS = DATA_DIR / "measured" / "who_picks"
TEST_SETS = {"workplace": "workplace_test.yaml", "mattpocock": "mattpocock_test.yaml", "wshobson": "wshobson_test.yaml"}
RUN = [*compared(), "scored"]
"""The selectors of each test record: lesson 13's compared ones and the scorer (fitted on --dev)."""


@pytest.mark.parametrize("catalog", sorted(TEST_SETS))
def test_each_record_holds_every_selector_on_every_test_query(catalog):
    record = read_record(RECORDS / f"{catalog}_test.json")
    no_dev = json.loads((RECORDS / f"{catalog}_test_no_dev.json").read_text(encoding="utf-8"))["selectors"]
    queries = load_queries(DATA_DIR / TEST_SETS[catalog])
    assert list(record.reports) == RUN and list(no_dev) == ["scored"]
    for report in [*record.reports.values(), Report.from_dict(no_dev["scored"])]:
        assert [r["query"] for r in report.records] == [q.query for q in queries]
        assert report.errors == len(report.error_reasons)  # a failed decision is kept with its reason
    assert record.best() in REGISTRY and record.data["answer"][-1].startswith("So on this model")
    dev = read_record(RECORDS / f"{catalog}_dev.json")
    assert dev.choices.gate == record.choices.gate and dev.choices.k == record.choices.k


def test_who_picks_without_test_queries_is_bad_input(monkeypatch, capsys):
    """In-process (`main`, what `python -m course_utils` calls): the refusal's exit code and message are the
    handler's; an interpreter of its own added only its start-up."""
    from course_utils.cli.main import main

    monkeypatch.chdir(REPO_ROOT)
    try:
        code = main(["who-picks", str(SKILLS_DIR / "workplace"), "--dev", "data/dev/workplace_dev.yaml"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2 and "give --queries" in capsys.readouterr().err


@pytest.mark.model
def test_the_record_s_choices_give_its_decisions_again_on_the_local_model(local_client):
    """RERUN's promise, on a sample of the workplace record (every 24th query, both kinds): the same choices on
    the same model decide every selector's queries as the record did; the scorer with the course's decision (the
    record without --dev: refitting on dev would score 144 more queries)."""
    record = read_record(RECORDS / "workplace_test.json")
    no_dev = json.loads((RECORDS / "workplace_test_no_dev.json").read_text(encoding="utf-8"))["selectors"]
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    sample = load_queries(DATA_DIR / TEST_SETS["workplace"], loader.names)[::24]
    assert {q.expected is None for q in sample} == {True, False}
    chosen = build_selectors(local_client, loader, [*compared(), "scored"], k=record.choices.k,
                             threshold=record.choices.threshold, gate=record.choices.gate)
    again = run_selectors(chosen, sample)
    reports = {**record.reports, "scored": Report.from_dict(no_dev["scored"])}
    for name, outcomes in again.outcomes.items():
        recorded = {r["query"]: r["decided"] for r in reports[name].records}
        assert [o.chosen for o in outcomes] == [recorded[o.query.query] for o in outcomes], name


def test_the_readme_states_what_the_records_find():
    """The README's paragraph on what the course finds is the one `course_finding` computes from the records."""
    records = {name: read_record(RECORDS / f"{name}_test.json") for name in TEST_SETS}
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    assert " ".join(course_finding(records).split()) in readme

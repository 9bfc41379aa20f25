"""`python -m course_utils eval-trigger` on the tiny fixture catalog, offline: the runs that write a report in a
subprocess, as a learner runs the command; the refusals in-process (`main`), where only the handler's exit code
and its one stderr line are checked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from course_utils.skills.queries import load_queries
from course_utils.selection.pick import Decision
from course_utils.evaluation.stats import mcnemar_exact, wilson_interval
from helpers.paths import FIXTURES

CATALOG, QUERIES = FIXTURES / "tiny_catalog", FIXTURES / "tiny_queries.yaml"


def eval_trigger(tmp_path: Path, *args: str, trust: bool = True) -> subprocess.CompletedProcess:
    """Run eval-trigger; `trust` opts in to the fixture catalog, which is outside skills/."""
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env["COURSE_CACHE_DIR"] = str(tmp_path / "cache")
    trusting = ["--allow-untrusted-skills"] if trust else []
    return subprocess.run([sys.executable, "-m", "course_utils", "eval-trigger", *trusting, *args],
                          capture_output=True, text=True, env=env, timeout=300)


def eval_trigger_in_process(monkeypatch, capsys, tmp_path: Path, *args: str,
                            trust: bool = True) -> subprocess.CompletedProcess:
    """`eval_trigger` through `course_utils.cli.main.main` (what `python -m course_utils` calls): the same exit code
    (argparse's SystemExit included) and output, without a new interpreter; an uncaught exception fails the test."""
    from course_utils.cli.main import main

    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    trusting = ["--allow-untrusted-skills"] if trust else []
    capsys.readouterr()
    try:
        code = main(["eval-trigger", *trusting, *args])
    except SystemExit as exit_:
        code = exit_.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


def test_similarity_offline_writes_json_and_histogram(tmp_path):
    result = eval_trigger(tmp_path, "--skills", str(CATALOG), "--queries", str(QUERIES), "--selectors", "similarity",
                          "--backend", "local", "--threshold", "0.2", "--k", "2",
                          "--json", str(tmp_path / "out" / "report.json"), "--plot", str(tmp_path / "hist.png"))
    assert result.returncode == 0, result.stderr
    assert "similarity: accuracy" in result.stdout and "scores: min positive" in result.stdout
    assert "similarity" in result.stderr  # the progress bar
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["backend"] == "local" and data["threshold"] == 0.2
    report = data["selectors"]["similarity"]
    for key in ["accuracy", "positive_accuracy", "none_accuracy", "false_triggers", "misses", "wrong_skill",
                "mean_prompt_tokens", "seconds_per_decision", "mistakes", "min_positive_score", "max_none_score"]:
        assert key in report
    assert report["queries"] == 5 and report["positives"] == 3
    assert report["accuracy_ci"] == pytest.approx(wilson_interval(report["correct"], 5))
    assert [r["query"] for r in report["records"]] == [q.query for q in load_queries(QUERIES)]
    for record in report["records"]:
        assert record["runs"] == [record["decided"]] and record["errors"] == [None] and record["agreement"] == 1.0
        assert len(record["top_k"]) == 2 and record["score"] == record["top_k"][0][1]
        mistake = {"expected": record["expected"], "got": record["decided"], "kind": record["kind"],
                   "query": record["query"]}
        assert record["verdict"] == "correct" or mistake in report["mistakes"]
    assert data["comparisons"] == []  # one selector: nothing to pair
    png = (tmp_path / "hist.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 1000


MODEL_RUNS = {  # a scripted model, three runs per query: the skill of each run, or an exception
    "How many vacation days do I have left this year?": ["leave-balance-calculator"] * 3,
    "Is sales.csv clean? I think some rows are duplicated.": ["csv-data-profiler", RuntimeError("boom"), None],
    "Here are my notes from today's sync. Who agreed to do what?": ["meeting-notes-summarizer"] * 2 + [None],
    "Book 3 days of leave for me in the HR tool.": ["leave-balance-calculator", None, None],
    "Will it rain in Lyon tomorrow?": [None] * 3,
}


def scripted_pick_by_model(client, loader, query: str, temperature: float | None = None) -> Decision:
    """A stand-in for `pick_by_model` that plays `MODEL_RUNS` in order, with no model behind it."""
    scripted_pick_by_model.temperatures.add(temperature)
    answer = MODEL_RUNS[query][scripted_pick_by_model.calls[query]]
    scripted_pick_by_model.calls[query] += 1
    if isinstance(answer, Exception):
        raise answer
    return Decision(answer, prompt_tokens=500, seconds=0.25)


def test_two_selectors_write_records_and_a_paired_comparison(tmp_path, monkeypatch, capsys):
    """In-process, the model scripted and similarity real (local embeddings): the JSON keeps every run
    and compares the two selectors query by query."""
    from course_utils.selection import pick as selection
    from course_utils.cli.main import SAMPLING_TEMPERATURE, main

    scripted_pick_by_model.calls = Counter()
    scripted_pick_by_model.temperatures = set()
    monkeypatch.setattr(selection, "pick_by_model", scripted_pick_by_model)
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["eval-trigger", "--allow-untrusted-skills", "--skills", str(CATALOG), "--queries", str(QUERIES),
                 "--selectors", "model,similarity", "--backend", "local", "--runs", "3", "--threshold", "0.2",
                 "--json", str(tmp_path / "report.json")])
    assert code == 0  # a failed run is not a failed decision: every query was decided
    data = json.loads((tmp_path / "report.json").read_text())
    # several local runs sample at a stated temperature (greedy runs would all agree), and labels name what ran
    assert scripted_pick_by_model.temperatures == {SAMPLING_TEMPERATURE}
    assert (data["runs"], data["decoding"]) == (3, f"temperature {SAMPLING_TEMPERATURE}")
    assert data["generation_model"].startswith("Qwen2.5-Coder-") and data["generation_model"].endswith("(local)")
    assert data["embedding_model"] == "multilingual USE v3 (local)"
    model, similarity = data["selectors"]["model"], data["selectors"]["similarity"]
    assert [r["decided"] for r in model["records"]] == [
        "leave-balance-calculator", None, "meeting-notes-summarizer", None, None]  # csv: a 1-1 tie decides none
    assert model["records"][1]["runs"] == ["csv-data-profiler", None, None]
    assert model["records"][1]["errors"] == [None, "RuntimeError: boom", None]
    assert [r["agreement"] for r in model["records"]] == pytest.approx([1, 0.5, 2 / 3, 2 / 3, 1])
    assert (model["correct"], model["misses"], model["failed_runs"], model["disagreeing_queries"]) == (4, 1, 1, 3)
    assert model["accuracy_ci"] == pytest.approx([0.3755, 0.9638], abs=1e-4)  # Wilson, 4/5
    assert model["records"][0]["prompt_tokens"] == 500 and model["records"][0]["seconds"] == 0.25

    (comparison,) = data["comparisons"]
    right = [(m["verdict"] == "correct", s["verdict"] == "correct")
             for m, s in zip(model["records"], similarity["records"])]
    assert (comparison["a"], comparison["b"], comparison["queries"]) == ("model", "similarity", 5)
    assert [comparison[k] for k in ("both_right", "only_a_right", "only_b_right", "both_wrong")] == [
        right.count((True, True)), right.count((True, False)), right.count((False, True)), right.count((False, False))]
    assert comparison["p_value"] == mcnemar_exact(comparison["only_a_right"], comparison["only_b_right"])
    assert [d["query"] for d in comparison["discordant"]] == [
        m["query"] for m, (a, b) in zip(model["records"], right) if a != b]
    out = capsys.readouterr().out
    assert "model vs similarity on 5 queries: both right" in out and comparison["verdict"] in out
    assert "3 runs per query; the decision is the most frequent answer" in out


@pytest.mark.model
def test_hybrid_offline_writes_its_report(tmp_path):
    """A trigger and a near miss of the fixture's five: every hybrid prompt is computed cold, and two show the
    report."""
    trigger, _, _, near_miss, _ = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
    queries = tmp_path / "two.yaml"
    queries.write_text(yaml.safe_dump([trigger, near_miss]), encoding="utf-8")
    result = eval_trigger(tmp_path, "--skills", str(CATALOG), "--queries", str(queries), "--selectors", "hybrid",
                          "--backend", "local", "--k", "3", "--json", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stderr
    assert "hybrid: accuracy" in result.stdout
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["k"] == 3 and "threshold" not in data  # similarity only shortlists: no threshold is used
    report = data["selectors"]["hybrid"]
    assert report["queries"] == 2 and report["errors"] == 0
    assert report["mean_prompt_tokens"] > 100 and report["seconds_per_decision"] > 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--skills", "no/such/dir"], "no valid skill in no/such/dir"),
        (["--queries", str(CATALOG / "csv-data-profiler" / "SKILL.md")], "not valid YAML"),
        (["--queries", "missing.yaml"], "cannot be read"),
        (["--selectors", "oracle"], "unknown selector oracle"),
        (["--selectors", "model", "--plot", "x.png"], "--plot draws the similarity scores"),
        (["--runs", "0"], "--runs and --k must be at least 1"),
        (["--selectors", "gated"], "the gated hybrid fits its gate on development queries: give --dev FILE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, message):
    base = {"--skills": str(CATALOG), "--queries": str(QUERIES)}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    result = eval_trigger_in_process(monkeypatch, capsys, tmp_path, *[x for pair in base.items() for x in pair])
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_expected_skill_outside_the_catalog_is_bad_input(tmp_path, monkeypatch, capsys):
    queries = tmp_path / "q.yaml"
    queries.write_text("- query: hi\n  expected: okr-drafter\n  kind: positive\n  lang: en\n")
    result = eval_trigger_in_process(monkeypatch, capsys, tmp_path, "--skills", str(CATALOG), "--queries",
                                     str(queries), "--selectors", "similarity")
    assert result.returncode == 2 and "'okr-drafter' is not in the catalog" in result.stderr


def test_skills_outside_the_trusted_roots_need_the_opt_in(tmp_path, monkeypatch, capsys):
    result = eval_trigger_in_process(monkeypatch, capsys, tmp_path, "--skills", str(CATALOG), "--queries",
                                     str(QUERIES), trust=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"{CATALOG} is not inside a trusted skills root" in result.stderr
    assert "--allow-untrusted-skills" in result.stderr


def test_model_abstain_runs_the_recommended_selector_by_name(tmp_path, monkeypatch):
    """`--selectors model-abstain` calls `abstain.recommended`, which runs the technique named by RECOMMENDED."""
    from course_utils.selection import abstain
    from course_utils.cli.main import main

    asked = []

    def declines(client, loader, query, temperature=None):
        asked.append(query)
        return Decision(None, 321, 0.5)

    monkeypatch.setitem(abstain.TECHNIQUES, abstain.RECOMMENDED, declines)
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    code = main(["eval-trigger", "--allow-untrusted-skills", "--skills", str(CATALOG), "--queries", str(QUERIES),
                 "--selectors", "model-abstain", "--backend", "local", "--json", str(tmp_path / "report.json")])
    assert code == 0 and asked == [q.query for q in load_queries(QUERIES)]
    report = json.loads((tmp_path / "report.json").read_text())["selectors"]["model-abstain"]
    assert report["mean_prompt_tokens"] == 321 and all(r["decided"] is None for r in report["records"])

"""`python -m course_utils eval-trigger` on the tiny fixture catalog, in a subprocess, offline."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CATALOG, QUERIES = FIXTURES / "tiny_catalog", FIXTURES / "tiny_queries.yaml"


def eval_trigger(tmp_path: Path, *args: str, trust: bool = True) -> subprocess.CompletedProcess:
    """Run eval-trigger; `trust` opts in to the fixture catalog, which is outside skills/."""
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env["COURSE_CACHE_DIR"] = str(tmp_path / "cache")
    trusting = ["--allow-untrusted-skills"] if trust else []
    return subprocess.run([sys.executable, "-m", "course_utils", "eval-trigger", *trusting, *args],
                          capture_output=True, text=True, env=env, timeout=300)


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
    png = (tmp_path / "hist.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 1000


@pytest.mark.model
def test_hybrid_offline_writes_its_report(tmp_path):
    result = eval_trigger(tmp_path, "--skills", str(CATALOG), "--queries", str(QUERIES), "--selectors", "hybrid",
                          "--backend", "local", "--k", "3", "--json", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stderr
    assert "hybrid: accuracy" in result.stdout
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["k"] == 3 and "threshold" not in data  # similarity only shortlists: no threshold is used
    report = data["selectors"]["hybrid"]
    assert report["queries"] == 5 and report["errors"] == 0
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
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    base = {"--skills": str(CATALOG), "--queries": str(QUERIES)}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    result = eval_trigger(tmp_path, *[x for pair in base.items() for x in pair])
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_expected_skill_outside_the_catalog_is_bad_input(tmp_path):
    queries = tmp_path / "q.yaml"
    queries.write_text("- query: hi\n  expected: okr-drafter\n  kind: positive\n  lang: en\n")
    result = eval_trigger(tmp_path, "--skills", str(CATALOG), "--queries", str(queries), "--selectors", "similarity")
    assert result.returncode == 2 and "'okr-drafter' is not in the catalog" in result.stderr


def test_skills_outside_the_trusted_roots_need_the_opt_in(tmp_path):
    result = eval_trigger(tmp_path, "--skills", str(CATALOG), "--queries", str(QUERIES), trust=False)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"{CATALOG} is not inside a trusted skills root" in result.stderr
    assert "--allow-untrusted-skills" in result.stderr

"""Many decisions at once (`evaluation.run_selector(concurrency=N)`, `--concurrency N`): records stay in query
order whatever order the answers come in, a server that dies mid-run loses no record, and the in-process model is
kept at one decision at a time.
"""
from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

from helpers.openai_fakes import chat_server, content

from course_utils.evaluation.outcomes import run_selector
from scripts.lab.cli import main as lab
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import LabelledQuery, load_queries
from course_utils.selection.pick import Decision
from course_utils.skills.skill import SkillLoader
from course_utils.cli.main import main

QUERIES = DATA_DIR / "dev" / "trigger_dev.yaml"


def test_outcomes_keep_query_and_run_order_whatever_order_the_answers_come_in():
    queries = [LabelledQuery(f"q{i}", None, "off-topic", "en") for i in range(12)]
    runs: dict[str, int] = {}
    lock = threading.Lock()
    finished: list[str] = []

    def slow(query: str) -> Decision:
        with lock:
            runs[query] = run = runs.get(query, 0) + 1
        time.sleep(random.Random(f"{query}/{run}").uniform(0, 0.05))
        finished.append(query)
        if query == "q3" and run == 2:
            raise RuntimeError("boom")
        return Decision(f"{query}-run{run}")

    outcomes = run_selector(slow, queries, runs=2, progress=False, concurrency=4)
    assert [o.query for o in outcomes] == queries
    assert [[d.skill for d in o.decisions] for o in outcomes][:3] == [["q0-run1", "q0-run2"], ["q1-run1", "q1-run2"],
                                                                      ["q2-run1", "q2-run2"]]
    assert [d.error for d in outcomes[3].decisions] == [None, "RuntimeError: boom"]
    assert finished != sorted(finished, key=lambda q: int(q[1:]))  # the answers did come out of order


def test_the_local_backend_refuses_more_than_one_decision_at_once(capsys):
    code = main(["eval-trigger", "--backend", "local", "--queries", str(QUERIES), "--concurrency", "2"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "eval-trigger: error: --concurrency 2 needs a server (--backend openai with COURSE_OPENAI_BASE_URL, or "
        "gemini): this backend answers one decision at a time in this process.")
    assert main(["audit", str(SKILLS_DIR / "workplace"), "--queries", str(QUERIES), "--backend", "local",
                 "--concurrency", "2"]) == 2
    assert "--concurrency 2 needs a server" in capsys.readouterr().err
    assert lab(["measure", "abstention", "model", "--backend", "local", "--concurrency", "3"]) == 2
    assert "measure abstention: refused: --concurrency 3 needs a server" in capsys.readouterr().err



def test_a_server_answers_decisions_at_once_and_one_that_dies_mid_run_loses_no_record(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("COURSE_OPENAI_DECISION", "schema")
    with chat_server(monkeypatch) as server:
        expected: dict[str, str | None] = {}

        def answer(request: dict) -> tuple[int, dict]:
            if len(server.requests) == 24:  # the server dies: it stops listening after this answer
                threading.Thread(target=lambda: (server.shutdown(), server.server_close())).start()
            skill = expected[request["messages"][-1]["content"]] or "none"
            return 200, content(json.dumps({"name": "activate_skill", "arguments": {"name": skill}})
                                if skill != "none" else '{"text":"no skill"}')

        server.answer_for, server.delay = answer, 0.05
        queries = load_queries(QUERIES, SkillLoader.from_root(SKILLS_DIR / "workplace").names)
        expected.update({q.query: q.expected for q in queries})
        report = tmp_path / "report.json"
        code = main(["eval-trigger", "--backend", "openai", "--queries", str(QUERIES), "--selectors", "model",
                     "--concurrency", "4", "--json", str(report)])
    assert code == 1 and server.most_at_once == 4
    records = json.loads(report.read_text())["selectors"]["model"]["records"]
    assert [r["query"] for r in records] == [q.query for q in queries]  # every query, in query order
    answered = [r for r in records if r["verdict"] != "error"]
    assert len(answered) >= 20 and all(r["verdict"] == "correct" for r in answered)
    failed = [r for r in records if r["verdict"] == "error"]
    assert failed and all(r["errors"][0].startswith("503 UNREACHABLE: No server answers at") for r in failed)

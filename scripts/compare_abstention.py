"""Compare the abstaining selectors of `course_utils.abstain` on the development queries, and record them.

    .venv/bin/python scripts/compare_abstention.py model none-option reason-then-none gate examples agreement-3

Runs each named technique (and `model`, the seed's `pick_by_model`) on data/dev/ (45 English + 45 French
queries, the workplace catalog) on the backend `make_client()` picks, and writes one Report per technique
(`Report.to_dict()`, every query's record included) to data/measured/abstention_dev/<technique>.json, with
the backend and the date. Lesson 06 reads these files; `RECOMMENDED` in course_utils/abstain.py was chosen
from them by the rule written in its docstring. The test sets are never used here.
"""
from __future__ import annotations

import datetime
import json
import sys

from course_utils.abstain import TECHNIQUES
from course_utils.backend.client import backend_of, make_client
from course_utils.evaluation import comparison_table, evaluate, run_selector
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader

OUT = DATA_DIR / "measured" / "abstention_dev"


def main(names: list[str]) -> None:
    client = make_client()
    backend = backend_of(client)
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q for file in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / file, workplace.names)]
    techniques = {"model": pick_by_model, **TECHNIQUES}
    OUT.mkdir(parents=True, exist_ok=True)
    reports = []
    for name in names:
        technique = techniques[name]
        report = evaluate(name, run_selector(lambda q: technique(client, workplace, q), queries, name=name))
        reports.append(report)
        payload = {"recorded": datetime.date.today().isoformat(), "backend": backend.name,
                   "generation_model": backend.generation_label(), "decoding": "the selector's own (greedy locally)",
                   "queries": ["data/dev/trigger_dev.yaml", "data/dev/trigger_dev_fr.yaml"], "report": report.to_dict()}
        (OUT / f"{name}.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    print(comparison_table(reports))


if __name__ == "__main__":
    main(sys.argv[1:] or ["model", *TECHNIQUES])

"""Does decoding only a selection's choices (backend/local/app.py, `complete`) change any decision? And what does it save?

Runs every development query (data/dev/, EN + FR) through `pick_by_model` twice on the local backend, greedy:
all of them with every answer decoded token by token (the selection path switched off), then all of them
as the backend now decodes it. Each pass runs the queries in the same order from the same cached catalog
prefix, so each decision computes its own query in both passes, as a query set is evaluated. Prints how many decisions and token counts agree and the seconds of
each path, and writes every pair to data/measured/selection_fast_path.json.

    .venv/bin/python scripts/check_selection_fast_path.py
"""
from __future__ import annotations

import json
import platform
import statistics
import sys
from datetime import date

from tqdm.auto import tqdm

from course_utils.backend.client import backend_of, make_client
from course_utils.backend.local import app
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader
from course_utils.tools.bench import machine

OUT = DATA_DIR / "measured" / "selection_fast_path.json"


def main() -> int:
    client = make_client("local")
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q for name in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / name, workplace.names)]
    selectors = {"model": pick_by_model}
    enabled = app.SELECTION_MIN_TOKENS
    rows = []
    for name, select in selectors.items():
        select(client, workplace, queries[0].query)  # the catalog prefix computed once, outside the timings
        app.SELECTION_MIN_TOKENS = 10**9  # every answer decoded token by token, as before
        before = [select(client, workplace, q.query) for q in tqdm(queries, desc=f"{name}, one step")]
        app.SELECTION_MIN_TOKENS = enabled
        after = [select(client, workplace, q.query) for q in tqdm(queries, desc=f"{name}, two steps")]
        rows += [{"selector": name, "query": q.query, "before": b.skill, "after": a.skill,
                  "prompt_tokens": [b.prompt_tokens, a.prompt_tokens], "seconds": [round(b.seconds, 3), round(a.seconds, 3)]}
                 for q, b, a in zip(queries, before, after)]
    same = sum(r["before"] == r["after"] for r in rows)
    same_tokens = sum(r["prompt_tokens"][0] == r["prompt_tokens"][1] for r in rows)
    calls = [r for r in rows if r["after"] is not None]
    summary = {
        "date": date.today().isoformat(), "machine": machine(), "model": backend_of(client).generation_model,
        "decisions": len(rows), "same_decision": same, "same_prompt_tokens": same_tokens,
        "median_s_before": round(statistics.median(r["seconds"][0] for r in rows), 3),
        "median_s_after": round(statistics.median(r["seconds"][1] for r in rows), 3),
        "median_s_before_calls": round(statistics.median(r["seconds"][0] for r in calls), 3) if calls else None,
        "median_s_after_calls": round(statistics.median(r["seconds"][1] for r in calls), 3) if calls else None,
        "total_s_before": round(sum(r["seconds"][0] for r in rows), 1),
        "total_s_after": round(sum(r["seconds"][1] for r in rows), 1),
        "python": platform.python_version(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"written to {OUT}")
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

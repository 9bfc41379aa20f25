"""Does decoding only a selection's choices change any decision, and what does it save? Measured on the dev queries.

    .venv/bin/python scripts/check_selection_decode.py [--queries N]

Runs lesson 06's selector (`pick_by_model`, workplace catalog, `activate_skill`, greedy) on the development
queries (data/dev/, English then French) twice on the local backend: first with every answer decoded token by
token (the ordinary path: `selection_of` switched off), then as the backend decodes it (`selection_decode`). Each
path runs over all the queries in turn, so neither finds the other's query already computed; both share the
catalog prefix, computed (or restored) before the first timed decision. Writes
data/measured/selection_decode.json (every pair: skill, prompt and answer tokens, seconds) and prints the summary.
The test sets are not used.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import time

from tqdm.auto import tqdm

import course_utils.backend.local.app as app
from course_utils.backend.client import backend_of, make_client
from course_utils.bakery_eval import MEASURED_DIR
from course_utils.paths import DATA_DIR, REPO_ROOT, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader
from course_utils.tools.bench import machine

OUT = MEASURED_DIR.parent / "selection_decode.json"


def run_path(client, loader, queries: list[str], name: str) -> list[dict]:
    """Every query's decision on the current path, timed."""
    rows = []
    for query in tqdm(queries, desc=name, unit="decision"):
        start = time.perf_counter()
        decision = pick_by_model(client, loader, query)
        seconds = time.perf_counter() - start
        usage = decision.raw.usage_metadata
        rows.append({"skill": decision.skill, "prompt_tokens": usage.prompt_token_count,
                     "answer_tokens": usage.candidates_token_count, "seconds": round(seconds, 3)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, help="only the first N development queries")
    args = parser.parse_args()
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q.query for name in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / name, loader.names)][:args.queries]
    client = make_client("local", verbose=False)
    pick_by_model(client, loader, "Hello")  # the catalog computed or restored, untimed
    selection_of = app.selection_of
    app.selection_of = lambda offered, allow_text: None
    try:
        ordinary = run_path(client, loader, queries, "every token decoded")
    finally:
        app.selection_of = selection_of
    given = run_path(client, loader, queries, "only the choices decoded")
    same = [a == {**b, "seconds": a["seconds"]} for a, b in zip(ordinary, given)]
    same_skill = [a["skill"] == b["skill"] for a, b in zip(ordinary, given)]
    summary = {
        "queries": len(queries), "same_decision": sum(same_skill), "same_decision_and_tokens": sum(same),
        "ordinary_p50_s": round(statistics.median(r["seconds"] for r in ordinary), 3),
        "given_p50_s": round(statistics.median(r["seconds"] for r in given), 3),
        "ordinary_total_s": round(sum(r["seconds"] for r in ordinary), 1),
        "given_total_s": round(sum(r["seconds"] for r in given), 1),
    }
    record = {"llm": backend_of(client).generation_label(), "machine": machine(),
              "date": datetime.date.today().isoformat(), "summary": summary,
              "pairs": [{"query": q, "ordinary": a, "given": b} for q, a, b in zip(queries, ordinary, given)]}
    OUT.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    for q, a, b in zip(queries, ordinary, given):
        if a["skill"] != b["skill"]:
            print(f"  changed: {q[:60]!r}: {a['skill']} -> {b['skill']}")
    print(f"wrote {OUT.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()

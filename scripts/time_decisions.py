"""A fresh process's greedy decisions on a sample of the development queries: what two checkouts are compared on.

    PYTHONPATH=<checkout> .venv/bin/python scripts/time_decisions.py [--every N]

Loads the model, restores (or computes) the workplace catalog with one decision, timed apart, then makes lesson 06's
decision (`pick_by_model`) on every Nth development query (data/dev/, English then French; default every 5th,
18 queries) and prints the median and total seconds and each decision. Time the whole process from outside, each
checkout in turn, to compare two versions of the backend on one machine. The test sets are not used.
It also runs checkouts from before the backend moved to `course_utils.backend` (issue #16's layout, 2026-11-30).
"""
from __future__ import annotations

import argparse
import statistics
import time

try:  # a checkout from before issue #16's layout first: the editable install would resolve course_utils.backend
    from course_utils.client import make_client
except ImportError:
    from course_utils.backend.client import make_client
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=5, help="every Nth development query (default 5)")
    args = parser.parse_args()
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q for name in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / name, loader.names)][::args.every]
    client = make_client("local", verbose=False)
    start = time.perf_counter()
    pick_by_model(client, loader, "Hello")  # the catalog restored or computed
    print(f"first decision (model loaded, catalog restored or computed): {time.perf_counter() - start:.1f} s")
    decisions = [pick_by_model(client, loader, q.query) for q in queries]
    seconds = [d.seconds for d in decisions]
    print(f"{len(queries)} decisions: median {statistics.median(seconds):.3f} s, total {sum(seconds):.1f} s")
    for query, decision in zip(queries, decisions):
        print(f"  {query.kind:9} {str(decision.skill):30} {decision.seconds:5.2f} s  {query.query[:60]}")


if __name__ == "__main__":
    main()

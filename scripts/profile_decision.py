"""Where a warm local decision's time goes: llama.cpp's own timings for each request a decision makes.

    .venv/bin/python scripts/profile_decision.py [--queries N]

Restores (or computes) the workplace catalog with one untimed decision, then makes lesson 06's decision
(`pick_by_model`) on the first N English development queries and prints, per decision, each llama.cpp request:
the tokens it computed in a batch and in how many ms, the tokens it decoded and in how many ms. The test sets
are not used.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from course_utils.backend.client import make_client
from course_utils.backend.local.llm import LocalLLM
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader

requests: list[dict[str, Any]] = []


def timed(complete):
    """`LocalLLM._complete`, recording llama.cpp's timings of each request."""
    def wrapper(self: LocalLLM, request: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        response = complete(self, request)
        timings = response.get("timings") or {}
        requests.append({"batch": timings.get("prompt_n", 0), "batch_ms": timings.get("prompt_ms", 0.0),
                         "decoded": timings.get("predicted_n", 0), "decoded_ms": timings.get("predicted_ms", 0.0),
                         "wall_ms": 1000 * (time.perf_counter() - start)})
        return response
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=6, help="the first N English development queries (default 6)")
    args = parser.parse_args()
    LocalLLM._complete = timed(LocalLLM._complete)
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = load_queries(DATA_DIR / "dev" / "trigger_dev.yaml", loader.names)[:args.queries]
    client = make_client("local", verbose=False)
    pick_by_model(client, loader, "Hello")  # the catalog restored or computed, untimed
    for query in queries:
        requests.clear()
        decision = pick_by_model(client, loader, query.query)
        print(f"{decision.seconds:5.2f} s  {str(decision.skill):26} {query.query[:50]!r}")
        for r in requests:
            print(f"         {r['batch']:4} tokens in a batch {r['batch_ms']:7.0f} ms | {r['decoded']:2} decoded "
                  f"{r['decoded_ms']:5.0f} ms | request {r['wall_ms']:6.0f} ms")


if __name__ == "__main__":
    main()

"""Does cutting a local answer at its decision point change the model's probability of declining? Measured on one set.

    .venv/bin/python scripts/check_decision_point.py [--queries data/trigger_eval.yaml]

Lesson 08 reads the probability of declining at the answer's second token (`course_utils.confidence`), and
`decline_probabilities` stops the local answer there (`DECISION_POINT_TOKENS`). This asks every query of the set
twice in one process on the local backend, first with the whole answer decoded, then cut at the decision point,
and prints how many probabilities are identical and the seconds each way. No threshold or wording is chosen here.
"""
from __future__ import annotations

import argparse
import time

from tqdm.auto import tqdm

from course_utils.backend.client import make_client
from course_utils.confidence import DECISION_POINT_TOKENS, TOP_CANDIDATES, decline_probability
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import pick_by_model
from course_utils.skills import SkillLoader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", default=str(DATA_DIR / "trigger_eval.yaml"))
    args = parser.parse_args()
    loader = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q.query for q in load_queries(args.queries, loader.names)]
    client = make_client("local", verbose=False)
    pick_by_model(client, loader, "Hello")  # the catalog computed or restored, untimed
    probabilities, seconds = {}, {}
    for cap, name in ((None, "whole answer"), (DECISION_POINT_TOKENS, "cut at the decision point")):
        start = time.perf_counter()
        probabilities[name] = [decline_probability(pick_by_model(client, loader, q, max_output_tokens=cap,
                                                                 logprobs=TOP_CANDIDATES).raw)
                               for q in tqdm(queries, desc=name)]
        seconds[name] = time.perf_counter() - start
    whole, cut = probabilities.values()
    print(f"{sum(a == b for a, b in zip(whole, cut))} of {len(queries)} probabilities identical "
          f"({sum(p is None for p in cut)} without a decision point)")
    for name, value in seconds.items():
        print(f"{name}: {value:.1f} s")


if __name__ == "__main__":
    main()

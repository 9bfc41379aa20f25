"""Measure the bakery agent on the requests of data/bakery_requests.yaml, and record every run's checklist.

    .venv/bin/python scripts/measure_bakery.py dev  --label active-results
    .venv/bin/python scripts/measure_bakery.py test --modes all,on-demand,filesystem --samples 3

Runs each request of the split through each mode of `build_harness` (the loop with `refuse_repeats=True` and
`stop_at_tools=ANSWERING_TOOLS`, as lesson 04 runs it) on the backend `make_client()` picks: once greedily (`--samples 0`), or `--samples N`
times at `--temperature` (run k of a request seeded with `run_seed(request, k)`, k = 1…N). Writes
data/measured/bakery/<split>_<label>.json (the backend, the date, the settings and every checklist) and prints the
summary. Lesson 04 reads test.json, a record of the first test split (its requests are dev requests now).
Harness changes are compared on `dev`. The `test` split is run once, with the finished harness: the script refuses
to run it when a record of any of its requests exists, and the look goes in docs/lab/test-sets.md.
"""
from __future__ import annotations

import argparse
import datetime
import json

from tqdm.auto import tqdm

from course_utils.agent import build_harness
from course_utils.backend.client import backend_of, make_client
from course_utils.bakery import ANSWERING_TOOLS, ASSISTANT_PREAMBLE, NONE_CHOICE, bakery_tools
from course_utils.bakery_eval import (MAX_OUTPUT_TOKENS, MAX_TURNS, MEASURED_DIR, SEEDING, load_requests, read_record,
                                     run_all, summarize)
from course_utils.paths import SKILLS_DIR
from course_utils.skills import SkillLoader

OUT = MEASURED_DIR


def refuse_a_second_look(requests: list) -> None:
    """Exit with a message when a record already holds a run of one of these test requests."""
    ids = {r.id for r in requests}
    for path in sorted(OUT.glob("*.json")):
        if ids & {c.request for c in read_record(path)[1]}:
            raise SystemExit(f"{path} already holds runs of the test split: a test split is run once. "
                             "Compare harness changes on dev; write a fresh test split for another look.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split", choices=["dev", "test"])
    parser.add_argument("--modes", default="on-demand")
    parser.add_argument("--samples", type=int, default=0, help="sampled runs per request (0: one greedy run)")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    name = f"{args.split}_{args.label}.json" if args.label else f"{args.split}.json"
    if (OUT / name).exists():
        raise SystemExit(f"{OUT / name} exists: a record is never overwritten; give a new --label.")
    requests = load_requests(split=args.split)
    if args.split == "test":
        refuse_a_second_look(requests)
    client = make_client()
    bakery = SkillLoader.from_root(SKILLS_DIR / "bakery")
    harnesses = {m: build_harness(m, bakery, ASSISTANT_PREAMBLE, *bakery_tools(), none_choice=NONE_CHOICE)
                 for m in args.modes.split(",")}
    seeds = list(range(1, args.samples + 1)) or [None]
    checklists = run_all(harnesses, client, requests, seeds=seeds,
                         temperature=args.temperature, progress=lambda jobs: tqdm(jobs, desc="runs"),
                         max_turns=MAX_TURNS, max_output_tokens=MAX_OUTPUT_TOKENS, refuse_repeats=True,
                         stop_at_tools=ANSWERING_TOOLS)
    OUT.mkdir(parents=True, exist_ok=True)
    backend = backend_of(client)
    record = {"backend": backend.name, "model": backend.generation_label(), "date": datetime.date.today().isoformat(), "split": args.split,
              "seeds": seeds, "seeding": SEEDING if args.samples else None,
              "temperature": args.temperature if args.samples else None,
              "max_turns": MAX_TURNS, "max_output_tokens": MAX_OUTPUT_TOKENS, "stop_at_tools": list(ANSWERING_TOOLS),
              "none_choice": NONE_CHOICE,
              "checklists": [c.to_dict() for c in checklists]}
    (OUT / name).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for row in summarize(checklists):
        print({k: (v.format("runs") if hasattr(v, "format") and not isinstance(v, str) else v) for k, v in row.items()})
    for c in checklists:
        print(f"{c.mode:11} {c.request:24} skills={c.skills} cal={c.calendar_right} "
              f"facts={sum(c.facts.values())}/{len(c.facts)} err={c.error} | {c.answer[:160]!r}")


if __name__ == "__main__":
    main()

"""`scorer-dev`: the scoring selector on the three catalogs' development sets, one JSON line per query.

Each line holds the fused shortlist (k = 3) with its scores, each shortlisted skill's P(yes) and prompt tokens, the
similarity selector's nearest skill and threshold, and the seconds the decision took. A run resumes: queries already
in the record are skipped, and a (query, skill) pair already scored is read back, not asked again (greedy decoding
gives the same probability). `--report` prints the dev table from the record: every rule of the grid and the
logistic decision, with intervals and exact McNemar tests against similarity and lesson 13's five selectors.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RECORD = REPO / "docs" / "lab" / "records" / "scorer_dev.jsonl"
DEV_SETS = {"wshobson": ["data/dev/wshobson_dev.yaml"],
            "mattpocock": ["data/dev/mattpocock_dev.yaml", "data/dev/mattpocock_dev_2.yaml"],
            "workplace": ["data/dev/workplace_dev_2.yaml", "data/dev/workplace_dev.yaml"]}
K = 3


def read_record(path: Path) -> list[dict[str, Any]]:
    """The record's lines, in order (none when it does not exist)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def known_pairs(lines: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[float | None, int]]:
    """(query, skill) → (P(yes), prompt tokens) of every pair the record scored."""
    return {(line["query"], name): (p, tokens) for line in lines
            for (name, _), p, tokens in zip(line["top"], line["p_yes"], line["tok_each"])}


def run_catalog(client: Any, catalog: str, out: Any, known: dict, done: set[str]) -> None:
    """Every dev query of `catalog` not yet in the record, appended to `out`."""
    from tqdm.auto import tqdm

    from course_utils.selection.pick import SimilaritySelector
    from course_utils.selection.scorer import score_skill
    from course_utils.selection.shortlist import Shortlist, model_invocable
    from course_utils.skills.queries import load_queries
    from course_utils.skills.skill import SkillLoader

    loader = model_invocable(SkillLoader.from_root(REPO / "skills" / catalog))
    shortlist, similarity = Shortlist.of(client, loader), SimilaritySelector(client, loader)
    queries = [(f, q) for f in DEV_SETS[catalog] for q in load_queries(REPO / f) if q.query not in done]
    for file, query in tqdm(queries, desc=catalog, unit="query"):
        start, fresh = time.perf_counter(), 0
        top = shortlist.top(query.query, K)
        for name, _ in top:
            if (query.query, name) not in known:
                score = score_skill(client, loader.skills[name], query.query)
                known[(query.query, name)], fresh = (score.probability, score.prompt_tokens), fresh + 1
        nearest = similarity.top(similarity.scores([query.query])[0], 1)[0]
        line = {"catalog": catalog, "file": file, "query": query.query, "expected": query.expected,
                "lang": query.lang, "top": top, "p_yes": [known[(query.query, n)][0] for n, _ in top],
                "tok_each": [known[(query.query, n)][1] for n, _ in top], "fresh": fresh,
                "seconds": time.perf_counter() - start, "sim_top": nearest, "sim_threshold": similarity.threshold}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()


def recall_table(client: Any) -> str:
    """Recall at 1, 3 and 5 of the expected skill among each catalog's dev positives: USE alone, and fused."""
    from course_utils.selection.shortlist import Shortlist
    from course_utils.skills.queries import load_queries
    from course_utils.skills.skill import SkillLoader

    rows = ["| catalog | positives | USE alone @1 / @3 / @5 | fused @1 / @3 / @5 |", "|---|---|---|---|"]
    for catalog, files in DEV_SETS.items():
        loader = SkillLoader.from_root(REPO / "skills" / catalog)
        fused = Shortlist.of(client, loader)
        use = Shortlist(fused.names, fused.signals[:1])  # the course's encoder alone
        queries = [q for f in files for q in load_queries(REPO / f) if q.expected in fused.names]
        cells = []
        for shortlist in (use, fused):
            tops = [[name for name, _ in shortlist.top(q.query, 5)] for q in queries]
            cells.append(" / ".join(f"{sum(q.expected in t[:k] for q, t in zip(queries, tops)) / len(queries):.2f}"
                                    for k in (1, 3, 5)))
        rows.append(f"| {catalog} | {len(queries)} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    """`scorer-dev`: run what the record lacks, or print its report."""
    if args.recall:
        from course_utils.backend.client import make_client

        print(recall_table(make_client(args.backend)))
        return 0
    if args.report:
        from scripts.lab.scorer_report import report

        print(report(read_record(args.record)))
        return 0
    if args.reliability:
        from scripts.lab.reliability import figure

        print(figure(read_record(args.record), args.reliability))
        return 0
    from course_utils.backend.client import make_client

    unknown = sorted(set(args.catalogs) - set(DEV_SETS))
    if unknown:
        print(f"error: no dev sets for {', '.join(unknown)}: the catalogs are {', '.join(DEV_SETS)}")
        return 2
    lines = read_record(args.record)
    known, done = known_pairs(lines), {line["query"] for line in lines}
    client = make_client(args.backend)
    args.record.parent.mkdir(parents=True, exist_ok=True)
    with args.record.open("a", encoding="utf-8") as out:
        for catalog in args.catalogs or DEV_SETS:
            run_catalog(client, catalog, out, known, done)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `scorer-dev` subcommand."""
    command = subparsers.add_parser("scorer-dev", help="the scoring selector on the development sets (a record "
                                                       "of every shortlist's P(yes)), or --report its dev table")
    command.add_argument("catalogs", nargs="*", metavar="CATALOG", help=f"of {', '.join(DEV_SETS)} (default all)")
    command.add_argument("--record", type=Path, default=RECORD, help=f"default {RECORD.relative_to(REPO)}")
    command.add_argument("--backend", default="local", help="default local")
    command.add_argument("--report", action="store_true", help="print the dev table from the record")
    command.add_argument("--reliability", type=Path, metavar="PNG", help="draw the decision's reliability figure")
    command.add_argument("--recall", action="store_true", help="print the shortlist's recall on the dev positives")
    command.set_defaults(func=run)

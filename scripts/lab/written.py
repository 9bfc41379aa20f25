"""`scorer-written`: the scorer's rule fitted on requests the model writes, with no labelled query.

For each catalog the model writes requests for (a sample of) its skills (`scripts.lab.written_requests`, kept in
`docs/lab/records/requests/`); each is scored with the catalog whole and without its skill, one JSON line per request
in `docs/lab/records/scorer_written.jsonl` (resumable). `--report` fits the rule on each catalog's written requests
and judges it on that catalog's dev queries (`scorer-dev`'s record), beside similarity, the rule fitted on the two
other catalogs' dev queries, and the rule fitted on the catalog's own dev queries.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from scripts.lab.scorer import DEV_SETS, RECORD, REPO, read_record

WRITTEN_RECORD = REPO / "docs" / "lab" / "records" / "scorer_written.jsonl"
REQUESTS = REPO / "docs" / "lab" / "records" / "requests"


def pairs(scores: list[Any]) -> dict[str, Any]:
    return {"top": [s.skill for s in scores], "p_yes": [s.probability for s in scores],
            "tokens": [s.prompt_tokens for s in scores]}


def run_catalog(client: Any, catalog: str, out: Any, done: set[str]) -> None:
    """Write (or read back) `catalog`'s requests, and score each one not yet in the record."""
    from tqdm.auto import tqdm

    from scripts.lab.written_requests import prepare, with_and_without
    from course_utils.selection.scorer import ScoringSelector
    from course_utils.selection.shortlist import model_invocable
    from course_utils.skills.skill import SkillLoader

    loader = model_invocable(SkillLoader.from_root(REPO / "skills" / catalog))
    written = prepare(client, loader, REQUESTS)
    for name, problem in written.failed.items():
        print(f"{catalog}: no request written for {name}: {problem}")
    selector = ScoringSelector(client, loader)
    for query in tqdm([q for q in written.labelled() if q.query not in done], desc=catalog, unit="request"):
        whole, without = with_and_without(selector, query.query, query.expected)
        line = {"catalog": catalog, "skill": query.expected, "query": query.query, "lang": query.lang,
                "fused": selector.shortlist.top(query.query, selector.k + 1), "whole": pairs(whole),
                "without": pairs(without)}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()


def as_dev_lines(line: dict[str, Any]) -> list[dict[str, Any]]:
    """A written request's two examples in `scorer-dev`'s line shape: with its skill (expected) and without (none)."""
    fused = dict(map(tuple, line["fused"]))
    return [{"top": [[n, fused[n]] for n in part["top"]], "p_yes": part["p_yes"], "tok_each": part["tokens"],
             "gold": gold} for part, gold in ((line["whole"], line["skill"]), (line["without"], None))]


def report(written: list[dict[str, Any]], dev: list[dict[str, Any]]) -> str:
    """Per catalog: the rule fitted on its written requests, judged on its dev queries, beside the others."""
    from course_utils.selection.scorer import Score
    from scripts.lab.rules import Rule, fit_on_dev
    from scripts.lab.scorer_report import cell, logistic_transfer, row, rule_cv, scores, similarity, with_gold

    def scored(part: dict[str, Any]) -> list[Score]:
        return [Score(n, p, t) for n, p, t in zip(part["top"], part["p_yes"], part["tokens"])]

    dev = with_gold(dev)
    out = ["| rows | right | must trigger | must not | vs similarity (exact McNemar) |", "|---|---|---|---|---|"]
    for catalog in sorted({x["catalog"] for x in written}):
        lines = [x for x in written if x["catalog"] == catalog]
        examples = [(scored(x["whole"]), x["skill"]) for x in lines] + [(scored(x["without"]), None) for x in lines]
        rule: Rule = fit_on_dev(examples)
        right = [rule.decide(s) == e for s, e in examples]
        mine, others = [x for x in dev if x["catalog"] == catalog], [x for x in dev if x["catalog"] != catalog]
        transfer = fit_on_dev([(scores(x), x["gold"]) for x in others])
        base = [similarity(x) == x["gold"] for x in mine]
        out += [f"| **{catalog}**: {len(lines)} written requests, the rule fitted on them right on "
                f"{cell(right)} of its own examples: {rule} | | | | |",
                row(f"{catalog} dev: similarity", mine, [similarity(x) for x in mine], base),
                row(f"{catalog} dev: the rule fitted on written requests", mine,
                    [rule.decide(scores(x)) for x in mine], base),
                row(f"{catalog} dev: the rule fitted on the other catalogs' dev ({transfer})", mine,
                    [transfer.decide(scores(x)) for x in mine], base),
                row(f"{catalog} dev: the rule fitted on its own dev (5-fold CV)", mine, rule_cv(mine), base)]
        examples_as_lines = [x for line in lines for x in as_dev_lines(line)]
        picks, ece = logistic_transfer(examples_as_lines, mine, cosine=False)
        out.append(row(f"{catalog} dev: logistic over 5 features fitted on written requests (ECE {ece:.3f})", mine,
                       picks, base))
        picks, ece = logistic_transfer(others, mine, cosine=False)
        out.append(row(f"{catalog} dev: logistic over 5 features fitted on the other catalogs' dev (ECE {ece:.3f})",
                       mine, picks, base))
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """`scorer-written`: score what the record lacks, or print its report."""
    if args.report:
        print(report(read_record(args.record), read_record(RECORD)))
        return 0
    from course_utils.backend.client import make_client

    unknown = sorted(set(args.catalogs) - set(DEV_SETS))
    if unknown:
        print(f"error: no such catalog {', '.join(unknown)}: the catalogs are {', '.join(DEV_SETS)}")
        return 2
    done = {line["query"] for line in read_record(args.record)}
    client = make_client(args.backend)
    args.record.parent.mkdir(parents=True, exist_ok=True)
    with args.record.open("a", encoding="utf-8") as out:
        for catalog in args.catalogs or DEV_SETS:
            run_catalog(client, catalog, out, done)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `scorer-written` subcommand."""
    command = subparsers.add_parser("scorer-written", help="the scorer's rule fitted on requests the model writes "
                                                           "(a record), or --report it judged on the dev sets")
    command.add_argument("catalogs", nargs="*", metavar="CATALOG", help=f"of {', '.join(DEV_SETS)} (default all)")
    command.add_argument("--record", type=Path, default=WRITTEN_RECORD,
                         help=f"default {WRITTEN_RECORD.relative_to(REPO)}")
    command.add_argument("--backend", default="local", help="default local")
    command.add_argument("--report", action="store_true", help="print the table from the records")
    command.set_defaults(func=run)

"""`scorer-options`: the shortlist offered as numbered options with a "none" option, read in one forward pass.

The same fused shortlist as `scorer-dev` (its record's `top`, k = 3), written as options 1 to k and 0 for "none of
these"; the model answers one token, and its log-probabilities over the option labels give every candidate and
"none" a probability. One call a query, where `scorer-dev` asks one per shortlisted skill. One JSON line per dev
query in `docs/lab/records/scorer_options.jsonl` (resumable); `--report` fits and judges rules on it.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

from scripts.lab.scorer import RECORD, REPO, read_record

OPTIONS_RECORD = REPO / "docs" / "lab" / "records" / "scorer_options.jsonl"
INSTRUCTION = ("You route a user's request to at most one skill. A skill fits only when its description covers what "
               "the user asks for. If none of the skills fits, the answer is 0. Answer with one digit: the number of "
               "the skill that fits, or 0.")


def options_instruction(skills: list[Any]) -> str:
    """The system instruction: the task, then the options, 0 last."""
    lines = [f"{i}. {s.name}: {s.description}" for i, s in enumerate(skills, 1)]
    return "\n".join([INSTRUCTION, "", "Skills:", *lines, "0. none of these skills fits the request"])


def option_probabilities(response: Any, count: int) -> list[float] | None:
    """P(0), P(1) … P(count) renormalised over the option labels at the first token; None without log-probs."""
    candidate = response.candidates[0] if response.candidates else None
    result = candidate.logprobs_result if candidate is not None else None
    if result is None or not result.top_candidates:
        return None
    mass = [0.0] * (count + 1)
    for option in result.top_candidates[0].candidates or []:
        token = (option.token or "").strip()
        if token.isdigit() and int(token) <= count and option.log_probability is not None:
            mass[int(token)] += math.exp(option.log_probability)
    total = sum(mass)
    return [m / total for m in mass] if total else None


def ask(client: Any, skills: list[Any], query: str) -> tuple[list[float] | None, int]:
    """One call: the options' probabilities (none first) and the prompt tokens."""
    from google.genai import types

    from course_utils.backend.client import GENERATION_MODEL
    from course_utils.selection.scorer import TOP_CANDIDATES

    config = types.GenerateContentConfig(system_instruction=options_instruction(skills), max_output_tokens=1,
                                         temperature=0, response_logprobs=True, logprobs=TOP_CANDIDATES)
    turn = types.Content(role="user", parts=[types.Part(text=f"Request: {query}\n\nWhich skill number fits, or 0?")])
    response = client.models.generate_content(model=GENERATION_MODEL, contents=[turn], config=config)
    usage = response.usage_metadata
    return option_probabilities(response, len(skills)), (usage and usage.prompt_token_count) or 0


def auc(positives: list[float], negatives: list[float]) -> float:
    """The probability that a positive outscores a negative (ties count half): the ROC AUC."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positives for n in negatives]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def split(values: list[float], gold: list[str | None]) -> tuple[list[float], list[float]]:
    """The values of the queries that need a skill, and of those that need none."""
    return [v for v, g in zip(values, gold) if g], [v for v, g in zip(values, gold) if not g]


def catalog_row(catalog: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """One catalog's row: AUCs, the plain rule and COURSE_RULE right, tokens and seconds a query."""
    from scripts.lab.rules import COURSE_RULE
    from scripts.lab.scorer_report import cell, scores

    gold = [d["gold"] for _, d in pairs]
    none_auc = auc(*split([1 - o["p"][0] for o, _ in pairs], gold))
    scorer_auc = auc(*split([max(d["p_yes"]) for _, d in pairs], gold))
    plain = [None if max(o["p"]) == o["p"][0] else o["top"][o["p"].index(max(o["p"][1:])) - 1] for o, _ in pairs]
    rule = [COURSE_RULE.decide(scores(d)) for _, d in pairs]
    n = len(pairs)
    cost = (f"{sum(o['tokens'] for o, _ in pairs) / n:.0f} tok, {sum(o['seconds'] for o, _ in pairs) / n:.1f} s / "
            f"{sum(sum(d['tok_each']) for _, d in pairs) / n:.0f} tok, {sum(d['seconds'] for _, d in pairs) / n:.1f} s")
    return (f"| {catalog} | {n} ({sum(g is not None for g in gold)} need a skill) | {none_auc:.2f} / "
            f"{scorer_auc:.2f} | {cell([p == g for p, g in zip(plain, gold)])} | "
            f"{cell([r == g for r, g in zip(rule, gold)])} | {cost} |")


def report(options: list[dict[str, Any]], dev: list[dict[str, Any]]) -> str:
    """Per catalog, on the queries both records hold: how well 1 − P(none), and the scorer's best P(yes), separate
    positives from "none" requests (AUC); the plain rule (the most probable label, 0 for none) against the scorer's
    COURSE_RULE; and each one's prompt tokens and seconds a query (options / scorer)."""
    from scripts.lab.scorer_report import with_gold

    by_query = {(x["file"], x["query"]): x for x in with_gold(dev)}
    rows = ["| catalog | queries | AUC: 1 − P(none) / the scorer's best P(yes) | options, plain rule: right | "
            "scorer, COURSE_RULE: right | cost a query: options / scorer |", "|---|---|---|---|---|---|"]
    for catalog in [*dict.fromkeys(o["catalog"] for o in options), "all"]:
        rows.append(catalog_row(catalog, [(o, by_query[(o["file"], o["query"])]) for o in options
                                          if o["p"] and catalog in ("all", o["catalog"])]))
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    """`scorer-options`: every scorer-dev line not yet asked, or `--report`."""
    if args.report:
        print(report(read_record(OPTIONS_RECORD), read_record(RECORD)))
        return 0
    from tqdm.auto import tqdm

    from course_utils.backend.client import make_client
    from course_utils.skills.skill import SkillLoader

    client, loaders = make_client("local"), {}
    done = {(x["file"], x["query"]) for x in read_record(OPTIONS_RECORD)}
    lines = [x for x in read_record(RECORD) if not args.catalogs or x["catalog"] in args.catalogs]
    if args.per_catalog:
        lines = [x for c in dict.fromkeys(x["catalog"] for x in lines)
                 for x in [y for y in lines if y["catalog"] == c][:args.per_catalog]]
    todo = [x for x in lines if (x["file"], x["query"]) not in done]
    with OPTIONS_RECORD.open("a", encoding="utf-8") as out:
        for line in tqdm(todo, desc="options", unit="query"):
            loader = loaders.setdefault(line["catalog"], SkillLoader.from_root(REPO / "skills" / line["catalog"]))
            start = time.perf_counter()
            p, tokens = ask(client, [loader.skills[n] for n, _ in line["top"]], line["query"])
            out.write(json.dumps({"catalog": line["catalog"], "file": line["file"], "query": line["query"],
                                  "top": [n for n, _ in line["top"]], "p": p, "tokens": tokens,
                                  "seconds": time.perf_counter() - start}, ensure_ascii=False) + "\n")
            out.flush()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `scorer-options` subcommand."""
    command = subparsers.add_parser("scorer-options", help="the shortlist as numbered options with 'none', one "
                                                           "forward pass a query, or --report its dev table")
    command.add_argument("catalogs", nargs="*", metavar="CATALOG", help="default all of scorer-dev's record")
    command.add_argument("--per-catalog", type=int, metavar="N", help="the first N lines of each catalog only")
    command.add_argument("--report", action="store_true", help="print the dev table from the record")
    command.set_defaults(func=run)

"""`python -m course_utils who-picks SKILLS --dev DEV --queries TEST --json RECORD`: lesson 13's comparison.

Every choice (threshold, k, the gate) is made on DEV first (`trigger.choose_on_dev`); then TEST runs once through
the selectors of lesson 13's comparison (`selectors.compared`, or `--selectors`), and the record holds the choices
with their development reports, every test decision, the paired tests and the computed answer. `--dev-only` stops
after the choices; `--from-dev RECORD` takes them from an earlier record instead of making them again.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from course_utils.cli.options import Refused, add_backend, bad_input, parse_selectors, refuse, start_backend, starting
from course_utils.evaluation.selectors import compared, help_text
from course_utils.evaluation.trigger import (DevChoices, Options, SelectorSet, build_selectors, choose_on_dev,
                                             run_selectors)
from course_utils.skills.paths import SKILLS_DIR
from course_utils.skills.queries import LabelledQuery
from course_utils.skills.skill import SkillLoader


def _write(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"Record written to {path}")


def _read_inputs(args: argparse.Namespace) -> tuple[SkillLoader, list[LabelledQuery], list[LabelledQuery] | None]:
    """The skills, the development queries and the test queries (None with --dev-only); `Refused` if one is bad."""
    from course_utils.loop.agent import UntrustedSkillRoot, load_trusted_skills
    from course_utils.skills.queries import QuerySetError, load_queries

    try:
        loader = load_trusted_skills(args.skills, allow_untrusted=args.allow_untrusted_skills)
        dev = load_queries(args.dev, loader.names)
        test = None if args.dev_only else load_queries(args.queries, loader.names)
    except (UntrustedSkillRoot, QuerySetError) as err:
        raise bad_input(str(err)) from err
    if not loader.skills:
        raise bad_input(f"no valid skill in {args.skills}")
    return loader, dev, test


def _choices(args: argparse.Namespace, client: Any, loader: SkillLoader, dev: list[LabelledQuery],
             chosen: SelectorSet) -> DevChoices:
    """The choices from --from-dev's record, or made on the development queries; printed with their reports."""
    if args.from_dev:
        choices = DevChoices.from_dict(json.loads(args.from_dev.read_text(encoding="utf-8"))["dev_choices"])
    else:
        print(f"Choosing on {len(dev)} development queries ({args.dev}) with {chosen.generation_model}")
        choices = choose_on_dev(client, loader, dev, similarity=chosen.similarity)
    print(f"On dev: threshold {choices.threshold:.3f} (similarity {choices.similarity.correct}/"
          f"{choices.similarity.queries}); k = {choices.k} (" +
          ", ".join(f"k={k}: {r.correct}/{r.queries}" for k, r in choices.hybrids.items()) +
          f"); gate: {choices.gate.describe()} (gated {choices.gated.correct}/{choices.gated.queries})")
    return choices


def who_picks(args: argparse.Namespace) -> int:
    """Choose on DEV, run TEST once, print the table and the answer; exit 1 if a decision failed or the backend
    cannot start, 2 on bad input."""
    from course_utils.evaluation.outcomes import comparison_table
    from course_utils.evaluation.who_picks import answer

    try:
        loader, dev, test = _read_inputs(args)
        client = start_backend(args)
        with starting(args.backend):
            chosen = build_selectors(client, loader, ["similarity"])
    except Refused as refused:
        return refused.exit("who-picks")
    catalog = f"{args.skills.name} ({len(loader.skills)} skills)"
    head = {"catalog": catalog, "skills": str(args.skills), "dev": str(args.dev), "backend": chosen.backend,
            "generation_model": chosen.generation_model, "embedding_model": chosen.embedding_model}
    choices = _choices(args, client, loader, dev, chosen)
    if args.dev_only:
        if args.json:
            _write(args.json, {**head, "dev_choices": choices.to_dict()})
        return 0
    names = parse_selectors(args.selectors, dev=True, default=compared())
    selectors = build_selectors(client, loader, names, Options(k=choices.k, threshold=choices.threshold,
                                                               gate=choices.gate, dev=tuple(dev)))
    print(f"Running {len(test)} test queries ({args.queries}) once through {', '.join(names)}")
    run = run_selectors(selectors, test)
    reports = {r.selector: r for r in run.reports}
    print(comparison_table(run.reports))
    for comparison in run.comparisons:
        print(comparison.summary())
    sentences = answer(run.outcomes, reports, chosen.generation_model, catalog)
    print("\n" + "\n".join(sentences))
    if args.json:
        _write(args.json, {**head, "queries": str(args.queries), **selectors.describe(),
                           "dev_choices": choices.to_dict(),
                           "selectors": {name: r.to_dict() for name, r in reports.items()},
                           "comparisons": [c.to_dict() for c in run.comparisons], "answer": sentences})
    return 1 if any(r.errors for r in run.reports) else 0


def register(sub: argparse._SubParsersAction) -> None:
    command = sub.add_parser("who-picks", help="lesson 13: choose on dev queries, then run every selector once "
                                               "on test queries and say who should pick")
    command.add_argument("skills", type=Path, nargs="?", default=SKILLS_DIR / "workplace", metavar="SKILLS_DIR")
    command.add_argument("--dev", type=Path, required=True, metavar="FILE",
                         help="development queries: the threshold, k and the gate are chosen on them")
    command.add_argument("--queries", type=Path, metavar="FILE", help="test queries, run once (not with --dev-only)")
    command.add_argument("--dev-only", action="store_true", help="make the choices on --dev and stop")
    command.add_argument("--selectors", default="", metavar="NAMES",
                         help=f"the selectors run on --queries (default: lesson 13's {', '.join(compared())}); "
                              + help_text())
    command.add_argument("--from-dev", type=Path, metavar="RECORD",
                         help="take the choices from an earlier record instead of making them again")
    add_backend(command)
    command.add_argument("--allow-untrusted-skills", action="store_true",
                         help="load SKILLS_DIR from outside the repository's skills/ folder (review them first)")
    command.add_argument("--json", type=Path, metavar="PATH", help="write the record as JSON")
    command.set_defaults(func=lambda args: who_picks(args) if args.dev_only or args.queries
                         else refuse("who-picks", "give --queries (the test queries) or --dev-only"))

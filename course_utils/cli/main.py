"""The command line: `python -m course_utils COMMAND …` runs what the notebooks run, headless."""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.skill import SkillLoader, read_skill_folder, skill_file
from course_utils.skills.tokens import estimate_tokens

from course_utils.cli.options import (Refused, add_backend, add_concurrency, bad_input, parse_selectors, start_backend,
                                      starting)
from course_utils.evaluation import selectors
from course_utils.evaluation.trigger import (K_CANDIDATES, SAMPLING_TEMPERATURE, Options, SelectorSet, TriggerRun,
                                             build_selectors, choose_on_dev, chosen_on_dev, histogram_figure,
                                             run_selectors)
from course_utils.skills.queries import LabelledQuery


def validate(args: argparse.Namespace) -> int:
    """Print every problem with its file path and a summary; exit 1 if any skill is invalid.

    Strict, as the reference validator `skills-ref` is: a field the spec does not define is an error here,
    though the lessons' loader only warns about it.
    """
    folder = Path(args.dir)
    if skill_file(folder).is_file():  # one skill folder, as in the spec's `skills-ref validate ./my-skill`
        skill, diagnostics = read_skill_folder(folder, strict=True)
        valid = [skill] if skill else []
    else:
        loader = SkillLoader.from_root(folder, strict=True)
        valid, diagnostics = list(loader.skills.values()), loader.diagnostics
    for diagnostic in diagnostics:
        print(diagnostic)
    invalid = len({d.path for d in diagnostics if d.severity == "error"})
    warnings = sum(d.severity == "warning" for d in diagnostics)
    print(f"{len(valid)} valid, {invalid} invalid, {warnings} warning(s) in {args.dir}")
    return 1 if invalid or not valid else 0


def catalog(args: argparse.Namespace) -> int:
    """Print the catalog the model would see and its token estimate."""
    loader = SkillLoader.from_root(args.dir)
    for diagnostic in loader.errors:
        print(diagnostic, file=sys.stderr)
    text = loader.catalog()
    print(text)
    bodies = sum(estimate_tokens(s.body) for s in loader.skills.values())
    print(
        f"\n{len(loader.skills)} skills; catalog ≈ {estimate_tokens(text):,} tokens, "
        f"all bodies ≈ {bodies:,} tokens (estimate: 4 characters per token)"
    )
    return 1 if loader.errors else 0


def run_notebooks(args: argparse.Namespace) -> int:
    """Execute every lesson headless into the output folder; exit 1 if any lesson failed."""
    from course_utils.cli.notebooks import run_all

    return 1 if run_all(args.folder, args.out) else 0


def _read_inputs(args: argparse.Namespace) -> tuple[list[str], SkillLoader, list[LabelledQuery], list[LabelledQuery]]:
    """`eval-trigger`'s selectors, skills, queries and development queries, each checked; `Refused` if one is bad."""
    from course_utils.loop.agent import UntrustedSkillRoot, load_trusted_skills
    from course_utils.skills.queries import QuerySetError, load_queries

    names = parse_selectors(args.selectors, dev=args.dev is not None)
    if args.plot and "similarity" not in names:
        raise bad_input("--plot draws the similarity scores: add similarity to --selectors")
    if (args.runs is not None and args.runs < 1) or (args.k is not None and args.k < 1):
        raise bad_input("--runs and --k must be at least 1")
    try:
        with warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always")
            loader = load_trusted_skills(args.skills, allow_untrusted=args.allow_untrusted_skills)
        for note in notes:  # the opt-in's warning, as one line
            print(f"eval-trigger: note: {note.message}")
        if not loader.skills:
            reason = f" ({loader.diagnostics[0]})" if loader.diagnostics else ""
            raise bad_input(f"no valid skill in {args.skills}{reason}")
        queries = load_queries(args.queries, loader.names)
        dev = load_queries(args.dev, loader.names) if args.dev is not None else []
    except (UntrustedSkillRoot, QuerySetError) as err:
        raise bad_input(str(err)) from err
    return names, loader, queries, dev


def _options(client: Any, loader: SkillLoader, args: argparse.Namespace, dev: list[LabelledQuery]) -> Options:
    """The evaluation's options from the command line; with --dev, the threshold (unless --threshold), k (unless
    --k) and the gate chosen on the development queries first."""
    options = Options(k=args.k or 3, threshold=args.threshold, runs=args.runs, temperature=args.temperature)
    if not dev:
        return options
    print(f"Choosing the threshold, k and the gate on {args.dev}")
    choices = choose_on_dev(client, loader, dev, ks=K_CANDIDATES if args.k is None else (args.k,))
    print(f"On {args.dev}: threshold {choices.threshold:.3f}, k = {choices.k}, gate: {choices.gate.describe()}")
    return chosen_on_dev(options, choices, dev)


def _write_outputs(args: argparse.Namespace, chosen: SelectorSet, run: TriggerRun) -> None:
    """The reports as JSON (--json) and similarity's histogram (--plot)."""
    if args.json:
        payload = {**chosen.describe(), "skills": str(args.skills), "queries": str(args.queries),
                   "selectors": {r.selector: r.to_dict() for r in run.reports},
                   "comparisons": [c.to_dict() for c in run.comparisons]}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"JSON written to {args.json}")
    if args.plot:
        figure = histogram_figure(run.outcomes["similarity"], chosen.similarity.threshold,
                                  f"Top-1 cosine scores, {args.queries.name} ({chosen.embedding_model})")
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(args.plot, dpi=110, bbox_inches="tight")
        print(f"Histogram written to {args.plot}")


def eval_trigger(args: argparse.Namespace) -> int:
    """Run selectors over a labelled query set on the first turn only; print, save JSON and a histogram.

    The JSON holds each selector's report with every query's record, and a paired comparison of each
    pair of selectors.

    Exit 0 when every decision was made, 1 when some failed (the report says why) or the backend cannot start,
    2 on bad input.
    """
    from course_utils.evaluation.outcomes import comparison_table

    try:
        names, loader, queries, dev = _read_inputs(args)
        client = start_backend(args)
        with starting(args.backend):  # embedding the catalog is the backend's first work
            chosen = build_selectors(client, loader, names, _options(client, loader, args, dev))
    except Refused as refused:
        return refused.exit("eval-trigger")
    print(f"{len(queries)} queries from {args.queries}, {len(loader.skills)} skills from {args.skills}\n"
          f"backend {chosen.backend}: decisions by {chosen.generation_model}, {chosen.runs} run(s) per query, "
          f"{chosen.decoding}; similarity by {chosen.embedding_model}")
    run = run_selectors(chosen, queries, on_report=lambda report: print(report.summary(), end="\n\n", flush=True),
                        concurrency=args.concurrency)
    if len(run.reports) > 1:
        print(comparison_table(run.reports))
    for comparison in run.comparisons:
        print(f"\n{comparison.summary()}")
    _write_outputs(args, chosen, run)
    return 1 if any(r.errors for r in run.reports) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_utils", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, help_text in [
        ("validate", validate, "check a skill folder, or every skill folder under DIR, against the Agent Skills rules"),
        ("catalog", catalog, "print the catalog of the skills under DIR and its token estimate"),
    ]:
        command = sub.add_parser(name, help=help_text)
        command.add_argument("dir", type=Path, metavar="DIR")
        command.set_defaults(func=func)
    command = sub.add_parser("run-notebooks", help="execute every lesson headless, saving the executed copies")
    command.add_argument("folder", type=Path, nargs="?", default=Path("notebooks"))
    command.add_argument("--out", type=Path, default=Path("build/notebooks"))
    command.set_defaults(func=run_notebooks)
    command = sub.add_parser("eval-trigger",
                             help="measure who picks the skill on a labelled query set (first turn only)")
    command.add_argument("--skills", type=Path, default=SKILLS_DIR / "workplace", metavar="DIR",
                         help="the skill catalog (default: skills/workplace)")
    command.add_argument("--allow-untrusted-skills", action="store_true",
                         help="load --skills from outside the repository's skills/ folder (review them first: "
                              "their descriptions go into the model's instructions)")
    command.add_argument("--queries", type=Path, default=DATA_DIR / "trigger_eval.yaml", metavar="FILE",
                         help="the labelled query set (default: data/trigger_eval.yaml)")
    command.add_argument("--selectors", default=",".join(selectors.DEFAULT),
                         help=f"{selectors.help_text()}; default {','.join(selectors.DEFAULT)}")
    command.add_argument("--threshold", type=float,
                         help="similarity's cosine threshold (default: the backend's, fitted on data/dev for the "
                              "local encoder)")
    command.add_argument("--k", type=int,
                         help="how many nearest skills similarity reports and hybrid shows the model (default 3, "
                              "or chosen on --dev)")
    command.add_argument("--dev", type=Path, metavar="FILE",
                         help="development queries: the threshold (unless --threshold), k (unless --k) and the gated "
                              "hybrid's gate are chosen on them first (lesson 13)")
    command.add_argument("--runs", type=int,
                         help="runs per query for the model-based selectors (default: 3 on Gemini, else 1)")
    command.add_argument("--temperature", type=float,
                         help=f"sampling temperature of the model-based selectors (default: greedy for one run, "
                              f"{SAMPLING_TEMPERATURE} for several runs, Gemini's default on Gemini)")
    add_backend(command)
    add_concurrency(command)
    command.add_argument("--json", type=Path, metavar="PATH", help="write the reports as JSON")
    command.add_argument("--plot", type=Path, metavar="PATH",
                         help="save the histogram of similarity's top-1 scores (PNG)")
    command.set_defaults(func=eval_trigger)
    from course_utils.cli import audit, models, who_picks

    models.register(sub)
    audit.register(sub)
    who_picks.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)

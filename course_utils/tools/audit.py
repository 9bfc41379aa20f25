"""`python -m course_utils audit SKILLS_DIR`: the course's measurements pointed at a skills folder of your own.

Read-only on the folder. In order: validation (the reference validator's verdicts, each with its fix), the
listing a harness would cut, descriptions that say what but not when, the pairs most likely to be confused,
and with `--queries` the course's trigger evaluation; then the five most useful fixes, each pointing at its
evidence. The report is one dict (`--json`) and one self-contained HTML page (`--html`, `audit_html.py`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from course_utils.evaluation import Report
from course_utils.queries import LabelledQuery, QuerySetError, load_queries
from course_utils.skills import SkillLoader, discover, read_skill_folder, skill_file
from course_utils.tools.audit_checks import HARNESSES, listing_section, validation_rows, when_section
from course_utils.tools.audit_pairs import pairs_section
from course_utils.tools.audit_summary import top_fixes
from course_utils.tools.trigger import (
    SELECTORS,
    WITHOUT_DEV,
    build_selectors,
    choices_from_dev,
    histogram_figure,
    run_selectors,
)

RATE_COLUMNS = (("accuracy", "accuracy"), ("positive_accuracy", "must trigger"), ("none_accuracy", "must not"))


@dataclass
class Audit:
    """The report as data (`data`, what `--json` writes) and its figures as PNG bytes, by name."""

    data: dict[str, Any]
    figures: dict[str, bytes] = field(default_factory=dict)


def read_folder(root: Path) -> tuple[SkillLoader, list[dict[str, Any]]]:
    """The skills that pass the reference validator's rules, and every problem found, each with its fix.

    `root` holds skill folders, or is one skill folder (as `validate ./my-skill` takes it).
    """
    if skill_file(root).is_file():
        skill, diagnostics = read_skill_folder(root, strict=True)
        return SkillLoader([skill] if skill else []), validation_rows(diagnostics, root)
    skills, diagnostics = discover(root, strict=True)
    return SkillLoader(skills), validation_rows(diagnostics, root)


def split_queries(queries: list[LabelledQuery], names: set[str]) -> tuple[list[LabelledQuery], list[dict[str, Any]]]:
    """The queries whose expected skill is in the catalog (or none), and the others, named with their item."""
    kept, unknown = [], []
    for number, query in enumerate(queries, 1):
        if query.expected is None or query.expected in names:
            kept.append(query)
        else:
            unknown.append({"item": number, "query": query.query, "expected": query.expected})
    return kept, unknown


def confusions(report: Report) -> list[dict[str, Any]]:
    """Which skill fired instead, most frequent first: expected (None: no skill) -> decided, with the count."""
    counts = Counter((m["expected"], m["got"]) for m in report.mistakes)
    return [{"expected": e, "got": g, "count": n} for (e, g), n in sorted(counts.items(), key=lambda c: -c[1])]


def trigger_section(client: Any, loader: SkillLoader, queries: list[LabelledQuery], selectors: list[str],
                    k: int, dev_file: Path | None = None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The course's trigger evaluation on the audited catalog: rates with intervals, cost, confusions, histogram.
    With `dev_file`, the threshold, k and the gated hybrid's gate are chosen on its queries first (lesson 13)."""
    threshold, gate = None, None
    if dev_file is not None:
        choices = choices_from_dev(client, loader, dev_file, progress=False)
        k, threshold, gate = choices.k, choices.threshold, choices.gate
    chosen = build_selectors(client, loader, selectors, k=k, threshold=threshold, gate=gate)
    run = run_selectors(chosen, queries)
    rows = []
    for report in run.reports:
        rates = {key: {"label": label, "value": rate.value, "interval": rate.interval, "successes": rate.successes,
                       "n": rate.n} for key, label in RATE_COLUMNS for rate in [report.rate(key)]}
        rows.append({"selector": report.selector, "rates": rates, "mean_prompt_tokens": report.mean_prompt_tokens,
                     "seconds_per_decision": report.seconds_per_decision, "errors": report.errors,
                     "confusions": confusions(report), "report": report.to_dict()})
    figures = {}
    if chosen.similarity is not None and "similarity" in run.outcomes:
        from course_utils.tools.audit_figures import png  # matplotlib: only when there is a figure to draw


        figures["histogram"] = png(histogram_figure(run.outcomes["similarity"], chosen.similarity.threshold,
                                                    f"Top-1 cosine scores ({chosen.embedding_model})"))
    return {**chosen.describe(), "queries": len(queries), "selectors": rows,
            "comparisons": [c.to_dict() for c in run.comparisons]}, figures


def run_audit(root: Path, *, queries_file: Path | None = None, harness: str = "claude-code",
              context_tokens: int | None = None, selectors: list[str] | None = None, k: int = 3,
              backend: str = "auto", client: Any = None, progress: bool = True, dev_file: Path | None = None) -> Audit:
    """Audit the skills under `root`; `client` (else `make_client(backend)`) embeds and, with queries, decides.
    Without `selectors`, every selector runs: the gated hybrid only with `dev_file` (its gate is fitted there)."""
    started = time.perf_counter()
    if client is None:  # the encoder, and with queries the model; files load on first use
        from course_utils.backend.client import make_client

        client = make_client(backend)
    steps = ["read and validate", "listing", "when", "pairs"] + (["trigger evaluation"] if queries_file else [])
    bar = tqdm(total=len(steps), desc="audit", unit="step", disable=not progress)
    data: dict[str, Any] = {"folder": str(root), "harness": harness}
    figures: dict[str, bytes] = {}

    bar.set_postfix_str(steps[0])
    loader, problems = read_folder(root)
    data["skills"] = len(loader.skills)
    data["validation"] = {"valid": len(loader.skills), "problems": problems,
                          "invalid_files": len({p["file"] for p in problems if p["severity"] == "error"})}
    bar.update()
    bar.set_postfix_str(steps[1])
    data["listing"] = listing_section(loader, HARNESSES[harness], context_tokens)
    bar.update()
    bar.set_postfix_str(steps[2])
    data["when"] = when_section(loader)
    bar.update()
    bar.set_postfix_str(steps[3])
    data["pairs"] = pairs_section(client, loader, progress=progress) if len(loader.skills) >= 2 else None
    bar.update()
    if queries_file:
        bar.set_postfix_str(steps[4])
        data["trigger"] = {"file": str(queries_file), "unknown": [], "error": None}
        try:
            kept, unknown = split_queries(load_queries(queries_file), set(loader.names))
        except QuerySetError as err:
            kept, unknown, data["trigger"]["error"] = [], [], str(err)
        data["trigger"]["unknown"] = unknown
        if kept and loader.skills:
            names = selectors or list(SELECTORS if dev_file else WITHOUT_DEV)
            section, figures = trigger_section(client, loader, kept, names, k, dev_file)
            data["trigger"].update(section)
        elif not data["trigger"]["error"]:
            data["trigger"]["error"] = "no query to evaluate: " + ("no valid skill" if not loader.skills else
                                                                   "every query names a skill not in the folder")
        bar.update()
    bar.close()
    data["summary"] = top_fixes(data)
    data["seconds"] = time.perf_counter() - started
    return Audit(data, figures)


def summary_text(data: dict[str, Any]) -> str:
    """The summary as plain text: the five fixes, each with where its evidence is."""
    lines = [f"Audit of {data['folder']}: {data['skills']:,} valid skill(s), "
             f"{data['validation']['invalid_files']} invalid file(s), {data['seconds']:.1f} s"]
    if not data["summary"]:
        lines.append("No fix to suggest: every check passed.")
    lines += [f"{i}. {fix['fix']} (evidence: {fix['evidence']})" for i, fix in enumerate(data["summary"], 1)]
    return "\n".join(lines)


def audit(args: argparse.Namespace) -> int:
    """The `audit` command: print the summary, write the JSON and HTML reports; exit 2 on a bad folder."""
    from course_utils.tools.audit_html import render_html

    if not args.dir.is_dir():
        print(f"audit: error: {args.dir} is not a folder: give the folder that holds your skill folders "
              "(for Claude Code, ~/.claude/skills)", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.selectors.split(",") if n.strip()]
    if unknown := [n for n in names if n not in SELECTORS]:
        print(f"audit: error: unknown selector {', '.join(unknown)}: choose among {', '.join(SELECTORS)}",
              file=sys.stderr)
        return 2
    if "gated" in names and args.dev is None:
        print("audit: error: the gated hybrid fits its gate on development queries: give --dev FILE", file=sys.stderr)
        return 2
    from course_utils.backend.client import make_client

    try:
        client = make_client(args.backend)
    except Exception as err:  # no key, no model file, server down: one line that says what to do
        print(f"audit: cannot start the {args.backend} backend: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    result = run_audit(args.dir, queries_file=args.queries, harness=args.harness, context_tokens=args.context_tokens,
                       selectors=names, k=args.k, client=client, dev_file=args.dev)
    print(summary_text(result.data))
    for path, text in ((args.json, lambda: json.dumps(result.data, indent=2, ensure_ascii=False)),
                       (args.html, lambda: render_html(result))):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(), encoding="utf-8")
            print(f"written: {path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `audit` command to the command line."""
    command = sub.add_parser("audit", help="audit a skills folder: validation, listing cut, when-clauses, "
                                           "confusable pairs, and with --queries the trigger evaluation")
    command.add_argument("dir", type=Path, metavar="SKILLS_DIR", help="the folder that holds the skill folders")
    command.add_argument("--queries", type=Path, metavar="FILE",
                         help="a labelled query set in the course's format (data/trigger_eval.yaml)")
    command.add_argument("--harness", choices=tuple(HARNESSES), default="claude-code",
                         help="whose listing budget to apply (default claude-code)")
    command.add_argument("--context-tokens", type=int, metavar="N",
                         help="the model's context window, if not the harness's usual one")
    command.add_argument("--dev", type=Path, metavar="FILE",
                         help="development queries: the threshold, k and the gated hybrid's gate are chosen on them, "
                              "and the gated hybrid joins the selectors")
    command.add_argument("--selectors", default="",
                         help=f"with --queries: comma-separated among {', '.join(SELECTORS)} "
                              "(default: all; gated needs --dev)")
    command.add_argument("--k", type=int, default=3,
                         help="the hybrid's shortlist size (default 3; chosen on --dev when given)")
    command.add_argument("--backend", choices=("auto", "local", "gemini", "openai"), default="auto")
    command.add_argument("--html", type=Path, metavar="REPORT.html", help="write the report as one HTML page")
    command.add_argument("--json", type=Path, metavar="REPORT.json", help="write the report as JSON")
    command.set_defaults(func=audit)


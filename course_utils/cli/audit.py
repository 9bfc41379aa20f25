"""`skill-audit PATH…` (or `python -m course_utils audit PATH…`): the command line over `course_utils.audit`.

Exit status: 0 when no finding is at or above `--fail-on` (default error), 1 when one is, 2 when the audit
could not run (a folder that is not one, no SKILL.md under any path, a query file that cannot be read, a
backend that cannot start, bad settings). With `--fix`, the status of the audit run again after the fixes, and 1
when a fix could not be written; with `--fix --dry-run`, 1 when there is something to fix. `--explain CODE` prints a
rule. Settings come from
`[tool.skill-audit]` in the nearest pyproject.toml; the command line overrides them.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from course_utils.audit.config import PAIRS, ConfigError, Settings, check, load_settings
from course_utils.audit.fix import apply as apply_fixes
from course_utils.audit.fix import diff, plan
from course_utils.audit.folders import has_skill
from course_utils.audit.render import FORMATS, render, render_html, render_json
from course_utils.audit.report import AuditReport
from course_utils.audit.rules import RULES, SEVERITIES, rule
from course_utils.audit.run import changed_skills, fails, needs_client, run_audit
from course_utils.cli.options import (Refused, add_backend, add_concurrency, bad_input, parse_selectors, refuse,
                                      start_backend)
from course_utils.evaluation import selectors
from course_utils.skills.harnesses import HARNESSES
from course_utils.skills.queries import QuerySetError


def _print(text: str) -> None:
    """`text` on stdout; a reader that closed the pipe (`| head -1`) ends the output, with no traceback."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more reaches the closed pipe


def _codes(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(c.strip().upper() for c in text.split(",") if c.strip())


def _paths_problem(paths: list[Path]) -> str | None:
    """Why the audit cannot run on `paths` (one that is not a folder, or no SKILL.md under any), or None."""
    for path in paths:
        if not path.is_dir():
            return (f"{path} is not a folder: give the folder that holds your skill folders "
                    "(for Claude Code, ~/.claude/skills)")
    if empty := next((path for path in paths if not has_skill([path])), None):
        return (f"no SKILL.md under {empty}: give the folder that holds your skill folders "
                "(for Claude Code, ~/.claude/skills), or a repository that holds them")
    return None


def _explain(code: str) -> int:
    """`--explain CODE`: the rule, or a refusal naming the known codes."""
    try:
        _print(rule(code).explain())
    except KeyError as err:
        return refuse("audit", err.args[0])
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    """The project's settings (`[tool.skill-audit]`) with what the command line names over them; `Refused` when the
    paths, the settings or the selectors cannot be used."""
    if not args.dir:
        raise bad_input("give the folder that holds your skill folders (for Claude Code, ~/.claude/skills)")
    if problem := _paths_problem(args.dir):
        raise bad_input(problem)
    try:
        settings = load_settings(args.dir[0], args.config).override(
            select=_codes(args.select), ignore=_codes(args.ignore), fail_on=args.fail_on, harness=args.harness,
            pairs=args.pairs, min_accuracy=args.min_accuracy, context_tokens=args.context_tokens,
            queries=args.queries, query_skill=args.skill, dev=args.dev, k=args.k, concurrency=args.concurrency,
            progress=args.format == "text" and sys.stderr.isatty())
        check(settings, "the command line")
    except ConfigError as err:
        raise bad_input(str(err)) from err
    if settings.harness not in HARNESSES:
        raise bad_input(f"unknown harness {settings.harness!r}: choose among {', '.join(HARNESSES)}")
    if args.min_accuracy is not None and args.queries is None:  # a min-accuracy in pyproject.toml waits for queries
        raise bad_input("--min-accuracy gates the trigger evaluation: give --queries FILE")
    dev = args.dev is not None
    return settings.override(selectors=tuple(parse_selectors(args.selectors, dev, selectors.available(dev))),
                             only=_changed(args))


def _changed(args: argparse.Namespace) -> frozenset[str] | None:
    """With --changed, the skill folders a change touched under any path (None without it)."""
    if not args.changed:
        return None
    try:
        return frozenset().union(*(changed_skills(path, args.since) for path in args.dir))
    except (RuntimeError, OSError) as err:
        raise bad_input(str(err)) from err


def _write(args: argparse.Namespace, report: AuditReport, figures: dict[str, bytes]) -> None:
    """The --format output on stdout or in --output, and the --json and --html reports."""
    output = render(report, args.format)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(output + "\n", encoding="utf-8")
    else:
        _print(output)
    for path, text in ((args.json, lambda: render_json(report)), (args.html, lambda: render_html(report, figures))):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(), encoding="utf-8")
            print(f"written: {path}", file=sys.stderr)


def _fix(args: argparse.Namespace, report: AuditReport, settings: Settings, client: object
         ) -> tuple[AuditReport, dict[str, bytes], bool] | int:
    """`--fix`: the safe fixes the report asks for, then the audit again on what is left, and whether a fix could not
    be written; with `--dry-run` the fixes' diff on stdout instead, and the exit status (1 when there is one)."""
    fixes = plan(report, args.dir)
    for line in fixes.skipped:
        print(f"audit: not fixed: {line}", file=sys.stderr)
    if args.dry_run:
        _print(diff(fixes) if fixes else "Nothing to fix.")
        return 1 if fixes else 0
    done, failed = apply_fixes(fixes)
    for line in [*done, *(f"audit: {line}" for line in failed)]:
        print(line, file=sys.stderr)
    report, figures = run_audit(args.dir if len(args.dir) > 1 else args.dir[0], settings, client)
    return report, figures, bool(failed)


def audit(args: argparse.Namespace) -> int:
    """The `audit` command: see the module docstring for its exit status."""
    if args.explain:
        return _explain(args.explain)
    if args.dry_run and not args.fix:
        return refuse("audit", "--dry-run shows what --fix would change: give --fix --dry-run")
    try:
        settings = _settings(args)
        # stdout stays machine-readable: the backend speaks only with the text format
        client = start_backend(args, 2, verbose=args.format == "text") if needs_client(settings) else None
        report, figures = run_audit(args.dir if len(args.dir) > 1 else args.dir[0], settings, client)
        unwritten = False
        if args.fix:
            fixed = _fix(args, report, settings, client)
            if isinstance(fixed, int):
                return fixed
            report, figures, unwritten = fixed
    except QuerySetError as err:
        return refuse("audit", str(err))
    except Refused as refused:
        return refused.exit("audit")
    _write(args, report, figures)
    return 1 if unwritten or fails(report, settings.fail_on) else 0


HELP = ("audit a skills folder: validation, listing cut, when-clauses, confusable pairs, and with --queries the "
        "trigger evaluation; rule codes, SARIF, exit 0/1/2")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `audit` command to the command line."""
    add_arguments(sub.add_parser("audit", help=HELP))


def main(argv: Sequence[str] | None = None) -> int:
    """`skill-audit PATH…`: the `audit` command under a name of its own, with the same options."""
    parser = argparse.ArgumentParser(prog="skill-audit", description=HELP[0].upper() + HELP[1:] + ".")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return args.func(args)


def add_arguments(command: argparse.ArgumentParser) -> None:
    """The `audit` command's arguments and options on `command`, which then runs `audit`."""
    command.add_argument("dir", type=Path, metavar="PATH", nargs="*",
                         help="folders to audit: a skills folder, one skill folder, or a repository, searched for "
                              "every SKILL.md (.claude/skills, plugins/*/skills, nested catalogs)")
    command.add_argument("--explain", metavar="CODE", help=f"print one rule and exit ({', '.join(RULES)})")
    command.add_argument("--fix", action="store_true",
                         help="make the safe fixes (CRLF to LF, no byte-order mark, a value YAML reads as another "
                              "type quoted, a folder renamed to its skill's name), then audit what is left")
    command.add_argument("--dry-run", action="store_true",
                         help="with --fix: print the fixes as a unified diff and write nothing (exit 1 if any)")
    command.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report (SK1,SK201)")
    command.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes not to report")
    command.add_argument("--fail-on", choices=SEVERITIES,
                         help="exit 1 when a finding is at least this severe (default error)")
    command.add_argument("--format", choices=FORMATS, default="text",
                         help="what to print: text, json, sarif (2.1.0) or github (workflow annotations)")
    command.add_argument("--output", type=Path, metavar="FILE", help="write the --format output here, not stdout")
    command.add_argument("--config", type=Path, metavar="PYPROJECT",
                         help="read [tool.skill-audit] from this file (default: the nearest pyproject.toml)")
    command.add_argument("--pairs", choices=PAIRS,
                         help="confusable pairs by lexical (BM25, no model), embedding, both, or none "
                              "(default embedding)")
    command.add_argument("--queries", type=Path, metavar="FILE",
                         help="labelled queries: the course's YAML, skill-creator's eval set, or skill-reach's set")
    command.add_argument("--skill", metavar="NAME", help="the skill a skill-creator eval set is for")
    command.add_argument("--min-accuracy", type=float, metavar="P",
                         help="with --queries: fail (SK501) when a selector's accuracy's 95 %% Wilson lower bound "
                              "is below P")
    command.add_argument("--changed", action="store_true",
                         help="audit only the skills changed since --since, and the queries that name them")
    command.add_argument("--since", default="HEAD", metavar="REF", help="the git revision --changed compares with")
    command.add_argument("--harness", choices=HARNESSES,
                         help="read and list the skills as this harness does (default claude-code); spec validates "
                              "by the Agent Skills spec alone and simulates no listing")
    command.add_argument("--context-tokens", type=int, metavar="N",
                         help="the model's context window, if not the harness's usual one")
    command.add_argument("--dev", type=Path, metavar="FILE",
                         help="development queries: the threshold, k and the gated hybrid's gate are chosen on them, "
                              "and the gated hybrid joins the selectors")
    command.add_argument("--selectors", default="",
                         help=f"with --queries: {selectors.help_text()}; default: every one that can run (gated "
                              "and the like need --dev)")
    command.add_argument("--k", type=int, default=3,
                         help="the hybrid's shortlist size (default 3; chosen on --dev when given)")
    add_backend(command)
    add_concurrency(command)
    command.add_argument("--html", type=Path, metavar="REPORT.html", help="write the report as one HTML page")
    command.add_argument("--json", type=Path, metavar="REPORT.json", help="write the report as JSON")
    command.set_defaults(func=audit)

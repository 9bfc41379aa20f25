"""The command line: `python -m course_utils COMMAND …` runs what the notebooks run, headless."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from course_utils.skills import SkillLoader
from course_utils.tokens import estimate_tokens


def validate(args: argparse.Namespace) -> int:
    """Print every problem with its file path and a summary; exit 1 if any skill is invalid."""
    loader = SkillLoader.from_root(args.dir)
    for diagnostic in loader.diagnostics:
        print(diagnostic)
    invalid = len({d.path for d in loader.errors})
    warnings = sum(d.severity == "warning" for d in loader.diagnostics)
    print(f"{len(loader.skills)} valid, {invalid} invalid, {warnings} warning(s) in {args.dir}")
    return 1 if invalid or not loader.skills else 0


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
    from course_utils.notebooks import run_all

    return 1 if run_all(args.folder, args.out) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_utils", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, help_text in [
        ("validate", validate, "check every SKILL.md under DIR against the Agent Skills rules"),
        ("catalog", catalog, "print the catalog of the skills under DIR and its token estimate"),
    ]:
        command = sub.add_parser(name, help=help_text)
        command.add_argument("dir", type=Path, metavar="DIR")
        command.set_defaults(func=func)
    command = sub.add_parser("run-notebooks", help="execute every lesson headless, saving the executed copies")
    command.add_argument("folder", type=Path, nargs="?", default=Path("notebooks"))
    command.add_argument("--out", type=Path, default=Path("build/notebooks"))
    command.set_defaults(func=run_notebooks)
    from course_utils.local.commands import register

    register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)

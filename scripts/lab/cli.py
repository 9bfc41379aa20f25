"""The lab's command line: `python -m scripts.lab COMMAND …` runs the development commands.

`bench` times the local backend, `fuzz` fuzzes the readers of files people hand us, `measure` makes the records
the lessons read (`data/measured/`) and the development records the lab notes cite (`docs/lab/records/`).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence

PROG = "python -m scripts.lab"


def build_parser() -> argparse.ArgumentParser:
    from scripts.lab import bench, fuzz, measure, options, scorer, written

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    bench.register(sub)
    fuzz.register(sub)
    measure.register(sub)
    options.register(sub)
    scorer.register(sub)
    written.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)

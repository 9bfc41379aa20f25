"""Command-line options that several commands share."""
from __future__ import annotations

import argparse


def add_concurrency(command: argparse.ArgumentParser) -> None:
    """The --concurrency option of the commands that run decisions."""
    command.add_argument("--concurrency", type=int, default=1, metavar="N",
                         help="decisions asked at once, for a server backend (openai, gemini); records stay in query "
                              "order (default 1; the local backend answers one at a time)")

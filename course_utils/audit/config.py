"""Per-project settings: `[tool.skill-audit]` in the nearest `pyproject.toml`, read with tomllib.

    [tool.skill-audit]
    select = ["SK0", "SK1", "SK2", "SK3"]   # codes or prefixes; default: every rule
    ignore = ["SK102"]
    fail-on = "warning"                     # info | warning | error (default error)
    harness = "codex"
    pairs = "lexical"                       # lexical | embedding | both
    min-accuracy = 0.8
    per-path-ignores = {"skills/legacy/*" = ["SK101"]}   # globs relative to this file's folder

The command line overrides each setting it names. A finding `per-path-ignores` matches is suppressed, not
dropped (`audit.suppress`).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from course_utils.audit.rules import RULES, SEVERITIES

PAIRS = ("lexical", "embedding", "both", "none")


class ConfigError(ValueError):
    """Settings that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    """How one audit runs: the rules, the failing severity, the harness, the pairs signal and the gate (what
    `[tool.skill-audit]` may set), then what only a run gives: the context window, the query file (and the skill a
    skill-creator eval set is for), the development queries, the selectors (empty: every one that can run), the
    hybrid's k, the skills `--changed` touched (None: all), decisions asked at once, and whether to show progress.
    `per_path_ignores`: (glob, codes) pairs, the globs relative to the folder of `source`, the pyproject.toml."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    harness: str = "claude-code"
    pairs: str = "embedding"
    min_accuracy: float | None = None
    per_path_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str | None = None
    context_tokens: int | None = None
    queries: Path | None = None
    query_skill: str | None = None
    dev: Path | None = None
    selectors: tuple[str, ...] = ()
    k: int = 3
    only: frozenset[str] | None = None
    concurrency: int = 1
    progress: bool = True

    def override(self, **values: Any) -> Settings:
        """These settings with every value that is not None replaced."""
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or above it."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / "pyproject.toml"
    return None


def load_settings(start: Path | None = None, path: Path | None = None) -> Settings:
    """The `[tool.skill-audit]` table of `path`, or of the nearest pyproject.toml from `start`; defaults if none."""
    path = path or (find_pyproject(start) if start is not None else None)
    if path is None:
        return Settings()
    try:
        table = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("tool", {}).get("skill-audit", {})
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read as TOML: {err}") from None
    if not table:
        return Settings()
    known = {"select", "ignore", "fail-on", "harness", "pairs", "min-accuracy", "per-path-ignores"}
    if unknown := sorted(set(table) - known):
        raise ConfigError(f"{path}: [tool.skill-audit] has unknown key(s) {', '.join(unknown)}: "
                          f"the keys are {', '.join(sorted(known))}")
    settings = Settings(select=tuple(table.get("select", ())), ignore=tuple(table.get("ignore", ())),
                        fail_on=table.get("fail-on", "error"), harness=table.get("harness", "claude-code"),
                        pairs=table.get("pairs", "embedding"), min_accuracy=table.get("min-accuracy"),
                        per_path_ignores=per_path_ignores(table.get("per-path-ignores", {}), path), source=str(path))
    check(settings, str(path))
    return settings


def per_path_ignores(table: Any, path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`per-path-ignores` as (glob, codes) pairs; ConfigError unless it maps each glob to a list of codes."""
    if not isinstance(table, dict) or not all(
            isinstance(codes, list) and all(isinstance(c, str) for c in codes) for codes in table.values()):
        raise ConfigError(f"{path}: per-path-ignores must map globs to lists of codes, e.g. "
                          '{"skills/legacy/*" = ["SK101"]}')
    return tuple((str(glob), tuple(codes)) for glob, codes in table.items())


def check(settings: Settings, where: str) -> None:
    """ConfigError for a code no rule starts with, an unknown severity or pairs signal, an accuracy outside 0..1."""
    for code in (*settings.select, *settings.ignore, *(c for _, codes in settings.per_path_ignores for c in codes)):
        if not any(c.startswith(code.upper()) for c in RULES):
            raise ConfigError(f"{where}: {code!r} matches no rule: the rules are {', '.join(RULES)}")
    if settings.fail_on not in SEVERITIES:
        raise ConfigError(f"{where}: fail-on {settings.fail_on!r} must be one of {', '.join(SEVERITIES)}")
    if settings.pairs not in PAIRS:
        raise ConfigError(f"{where}: pairs {settings.pairs!r} must be one of {', '.join(PAIRS)}")
    if settings.min_accuracy is not None and not 0 <= settings.min_accuracy <= 1:
        raise ConfigError(f"{where}: min-accuracy must be between 0 and 1")

"""Labelled query sets: which skill each query must trigger, or none.

Format (a YAML list, as in `data/dev/`):

    - query: "How many vacation days do I have left this year?"
      expected: leave-balance-calculator   # or null: no skill must trigger
      kind: positive                        # positive | near-miss | off-topic
      lang: en
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from course_utils.skills import safeyaml
from course_utils.skills.spec import shown

KINDS = ("positive", "near-miss", "off-topic")
MAX_FILE_BYTES = 2_000_000
"""A query set larger than this is refused unread (the shipped ones are ~5 KB)."""


@dataclass(frozen=True)
class LabelledQuery:
    query: str
    expected: str | None
    kind: str
    lang: str


def verdict(expected: str | None, chosen: str | None) -> str:
    """One decision judged against its label: correct, false trigger (a skill where none was expected),
    miss (none where one was expected) or wrong skill. The one definition `evaluation` and `thresholds` use."""
    if chosen == expected:
        return "correct"
    if expected is None:
        return "false trigger"
    return "miss" if chosen is None else "wrong skill"


class QuerySetError(ValueError):
    """A query set that does not follow the format; the message names the file and the item."""


def _item(raw: object, where: str, known: set[str] | None) -> LabelledQuery:
    if not isinstance(raw, dict):
        raise QuerySetError(f"{where}: must be a mapping with query, expected, kind, lang")
    missing = {"query", "expected", "kind", "lang"} - raw.keys()
    if missing:
        raise QuerySetError(f"{where}: missing {', '.join(sorted(missing))}")
    query, expected, kind, lang = raw["query"], raw["expected"], raw["kind"], raw["lang"]
    if not isinstance(query, str) or not query.strip():
        raise QuerySetError(f"{where}: query must be a non-empty string")
    if kind not in KINDS:
        raise QuerySetError(f"{where}: kind {shown(kind)} must be one of {', '.join(KINDS)}")
    if not isinstance(lang, str):
        raise QuerySetError(f"{where}: lang must be a string such as en or fr")
    if expected is not None and not isinstance(expected, str):
        raise QuerySetError(f"{where}: expected must be a skill name or null")
    if (expected is None) != (kind != "positive"):
        wanted = "a skill name" if kind == "positive" else "null"
        raise QuerySetError(f"{where}: a {kind} query must have expected: {wanted}")
    if known is not None and expected is not None and expected not in known:
        raise QuerySetError(
            f"{where}: expected skill {shown(expected)} is not in the catalog (known: {', '.join(sorted(known))})"
        )
    return LabelledQuery(query.strip(), expected, kind, lang)


def read_query_text(path: Path) -> str:
    """The text of a query file, refused (QuerySetError naming the file) when too large or unreadable."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise QuerySetError(f"{path}: is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise QuerySetError(f"{path}: cannot be read: {err}") from None


def queries_from_data(data: object, path: Path, skill_names: Iterable[str] | None = None) -> list[LabelledQuery]:
    """Check parsed query data in the course's format; with `skill_names`, every expected skill must be one of them."""
    if not isinstance(data, list) or not data:
        raise QuerySetError(f"{path}: must be a non-empty YAML list of queries")
    known = set(skill_names) if skill_names is not None else None
    return [_item(raw, f"{path}: item {i}", known) for i, raw in enumerate(data, 1)]


def load_queries(path: str | Path, skill_names: Iterable[str] | None = None) -> list[LabelledQuery]:
    """Read and check a query set; with `skill_names`, every expected skill must be one of them.

    Raises QuerySetError, its message starting with the file's path, for anything else.
    """
    path = Path(path)
    text = read_query_text(path)
    try:
        data = safeyaml.load(text)
    except yaml.YAMLError as err:
        raise QuerySetError(f"{path}: not valid YAML: {str(err).splitlines()[0]}") from None
    except safeyaml.YamlRefused as err:
        raise QuerySetError(f"{path}: refused: {err}") from None
    return queries_from_data(data, path, skill_names)

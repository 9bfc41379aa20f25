"""Query files in three formats, read into the course's `LabelledQuery`.

- the course's (`course_utils.skills.queries`): a YAML list of `query`, `expected` (a skill or null), `kind`, `lang`;
- skill-creator's trigger eval set (anthropics/skills, `skills/skill-creator/scripts/run_eval.py`): a JSON
  list of `{"query": …, "should_trigger": true|false}` for ONE skill, named by `skill` (or, when the file lies
  inside a skill's folder, that skill);
- skill-reach's query set (google/skill-reach, `src/reach/queries.py` and `src/reach/models.py`): a mapping
  with `queries`, each with `text` (or `query`), `expected_skill` (a skill or null), optional `kind`
  (`implicit`, `contextual`, `neighbor_negative`, `out_of_scope`) and `acceptable_skills` (neutral skills:
  a decision naming one is not counted as a confusion).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from course_utils.skills import safeyaml
from course_utils.skills.queries import LabelledQuery, QuerySetError, queries_from_data, read_query_text

FORMATS = ("course", "skill-creator", "skill-reach")


@dataclass(frozen=True)
class QueryFile:
    """The queries of a file, its format, and each query's neutral skills (skill-reach's `acceptable_skills`)."""

    format: str
    queries: tuple[LabelledQuery, ...]
    acceptable: tuple[tuple[str, ...], ...]


def _read(path: Path) -> object:
    text = read_query_text(path)
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else safeyaml.load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise QuerySetError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                            f"{str(err).splitlines()[0]}") from None
    except safeyaml.YamlRefused as err:
        raise QuerySetError(f"{path}: refused: {err}") from None


def detect(data: object) -> str:
    """The format of parsed query data: skill-reach (a mapping with `queries`), skill-creator (items with
    `should_trigger`) or the course's."""
    if isinstance(data, dict) and "queries" in data:
        return "skill-reach"
    if isinstance(data, list) and data and all(isinstance(i, dict) and "should_trigger" in i for i in data):
        return "skill-creator"
    return "course"


def owning_skill(path: Path, names: set[str]) -> str | None:
    """The skill whose folder holds `path` (skill-creator keeps evals beside the skill), if any."""
    return next((parent.name for parent in Path(path).resolve().parents if parent.name in names), None)


def load_query_file(path: str | Path, names: set[str] | None = None, skill: str | None = None) -> QueryFile:
    """Read a query file in any of `FORMATS`; QuerySetError names the file and the item for anything wrong."""
    path = Path(path)
    data = _read(path)
    kind = detect(data)
    if kind == "course":
        queries = queries_from_data(data, path)
        return QueryFile(kind, tuple(queries), tuple(() for _ in queries))
    if kind == "skill-creator":
        target = skill or owning_skill(path, names or set())
        if target is None:
            raise QuerySetError(f"{path}: a skill-creator eval set is for one skill: name it with --skill NAME "
                                "(or keep the file inside that skill's folder)")
        queries = []
        for i, item in enumerate(data, 1):
            text, trigger = item.get("query"), item.get("should_trigger")
            if not isinstance(text, str) or not text.strip() or not isinstance(trigger, bool):
                raise QuerySetError(f"{path}: item {i}: needs query (text) and should_trigger (true or false)")
            queries.append(LabelledQuery(text.strip(), target if trigger else None,
                                         "positive" if trigger else "near-miss", "und"))
        return QueryFile(kind, tuple(queries), tuple(() for _ in queries))
    items = data["queries"]
    if not isinstance(items, list) or not items:
        raise QuerySetError(f"{path}: queries must be a non-empty list")
    queries, acceptable = [], []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise QuerySetError(f"{path}: item {i}: must be a mapping with text and expected_skill")
        text, expected = item.get("text", item.get("query")), item.get("expected_skill")
        if not isinstance(text, str) or not text.strip():
            raise QuerySetError(f"{path}: item {i}: text must be a non-empty string")
        if expected is not None and not isinstance(expected, str):
            raise QuerySetError(f"{path}: item {i}: expected_skill must be a skill name or null")
        neutral = item.get("acceptable_skills") or []
        if not isinstance(neutral, list) or not all(isinstance(n, str) for n in neutral):
            raise QuerySetError(f"{path}: item {i}: acceptable_skills must be a list of skill names")
        off = item.get("kind") == "out_of_scope" or expected is None
        queries.append(LabelledQuery(text.strip(), expected, "off-topic" if off else "positive", "und"))
        acceptable.append(tuple(neutral))
    return QueryFile(kind, tuple(queries), tuple(acceptable))

"""Requests the model writes for a catalog's skills, to try fitting the scorer's rule where nobody labelled any.

For each skill the model writes a few requests from the skill's description, greedily, so a rerun writes the same
ones. Each request is a positive for its skill. The same request asked of the catalog without that skill is a
near-miss: it sits in the domain of the skills next to it, and none of them serves it. The scorer's rule is fitted
on both kinds (`fit_written`). On the course's three catalogs that rule came out stricter than the one fitted on
the other catalogs' labelled dev queries (`docs/lab/scorer.md`), so the package ships the latter.

The requests are saved once per catalog and model, in a file named by the hash of what the writer read (every
name and description, the prompt, the model): a changed catalog is written again, an unchanged one never is.
Nothing is written into the skills folder.
"""
from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google import genai
from google.genai import errors, types
from tqdm.auto import tqdm

from course_utils.backend.client import GENERATION_MODEL
from course_utils.selection.scorer import Score, ScoringSelector, score_skill
from course_utils.skills.queries import LabelledQuery
from course_utils.skills.skill import Skill, SkillLoader
from scripts.lab.rules import Rule, fit_on_dev

WRITER_PROMPT = ("Tool description: {description}\n\nWrite {count} different messages a user could send to an AI "
                 "assistant that this tool handles. Each message is one sentence describing the user's own concrete "
                 "situation. {languages} One message per line, numbered 1 to {count}.")
"""What the writer is asked for each skill: only the description, as the model sees the skill in a listing."""

LANGUAGES = "Write the first one in English and the second one in French."
REQUESTS_PER_SKILL = 2
MAX_SKILLS = 48
"""A large catalog is fitted on a sample of its skills, chosen by name so it repeats: about a hundred requests
are enough to place a threshold, and writing is what preparing a catalog costs."""

NUMBERED = re.compile(r"^\s*\d+\s*[.):-]\s*(.+?)\s*$")
FORMAT = 1


def parse_numbered(text: str) -> list[str]:
    """The numbered lines of the writer's answer, numbers, quotes and markup stripped."""
    found = (NUMBERED.match(line) for line in text.splitlines())
    return [m.group(1).strip('"*“”« »') for m in found if m and len(m.group(1).split()) >= 3]


def write_requests(client: genai.Client, skill: Skill, count: int = REQUESTS_PER_SKILL,
                   model: str = GENERATION_MODEL) -> list[str]:
    """`count` requests for `skill`, written greedily by `model`; ValueError when the answer holds none."""
    prompt = WRITER_PROMPT.format(description=skill.description, count=count, languages=LANGUAGES if count == 2 else "")
    config = types.GenerateContentConfig(temperature=0, max_output_tokens=60 * count)
    response = client.models.generate_content(model=model, contents=prompt, config=config)
    written = parse_numbered(response.text or "")[:count]
    if not written:
        raise ValueError(f"the model's answer held no numbered request: {(response.text or '')[:80]!r}")
    return written


def sampled(names: Sequence[str], limit: int = MAX_SKILLS) -> list[str]:
    """At most `limit` of `names`, the same ones every time (ordered by a hash of the name)."""
    if len(names) <= limit:
        return list(names)
    return sorted(names, key=lambda name: zlib.crc32(name.encode("utf-8")))[:limit]


def catalog_key(loader: SkillLoader, model: str, count: int) -> str:
    """The hex sha256 of what the writer reads and how: every name and description, the prompt and the model."""
    digest = hashlib.sha256(f"requests {FORMAT}\0{model}\0{count}\0{WRITER_PROMPT}\0{LANGUAGES}\0".encode())
    for name in sorted(loader.names):
        digest.update(f"{name}\0{loader.skills[name].description}\0".encode())
    return digest.hexdigest()


@dataclass
class WrittenRequests:
    """The requests written for one catalog: skill -> requests, and the skills whose requests could not be written."""

    key: str
    model: str
    requests: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    def labelled(self) -> list[LabelledQuery]:
        """Every written request as a labelled query expecting its skill (its language the one asked for)."""
        return [LabelledQuery(q, name, "written", ("en", "fr")[i] if i < 2 else "")
                for name, written in self.requests.items() for i, q in enumerate(written)]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"format": FORMAT, "key": self.key, "model": self.model, "requests": self.requests,
                  "failed": self.failed}
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path, key: str) -> WrittenRequests | None:
        """The record at `path` if it was written for `key`, else None (missing, unreadable, another catalog)."""
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("key") != key or record.get("format") != FORMAT:
            return None
        return cls(key, record["model"], record["requests"], record.get("failed", {}))


def prepare(client: genai.Client, loader: SkillLoader, folder: Path, model: str = GENERATION_MODEL,
            count: int = REQUESTS_PER_SKILL) -> WrittenRequests:
    """The catalog's written requests: read back when its record exists, else written (a progress bar, one skill
    at a time) and saved. A skill whose requests cannot be written is named in `failed`; the rest go on."""
    key = catalog_key(loader, model, count)
    path = folder / f"{key[:24]}.json"
    known = WrittenRequests.load(path, key)
    if known is not None:
        return known
    written = WrittenRequests(key, model)
    for name in tqdm(sampled(loader.names), desc="writing example requests", unit="skill", leave=False):
        try:
            written.requests[name] = write_requests(client, loader.skills[name], count, model)
        except (ValueError, errors.APIError) as problem:
            written.failed[name] = str(problem)
    written.save(path)
    return written


def with_and_without(selector: ScoringSelector, query: str, skill: str) -> tuple[list[Score], list[Score]]:
    """The shortlist's scores for `query` with the catalog whole, and without `skill`: k + 1 skills ranked once,
    each asked once."""
    names = [name for name, _ in selector.shortlist.top(query, selector.k + 1)]
    whole, without = names[:selector.k], [name for name in names if name != skill][:selector.k]
    asked = {name: score_skill(selector.client, selector.loader.skills[name], query, selector.model)
             for name in dict.fromkeys(whole + without)}
    return [asked[n] for n in whole], [asked[n] for n in without]


def fit_written(selector: ScoringSelector, written: WrittenRequests) -> Rule:
    """Fit a rule (`rules.Rule`) with no labelled query: each request the model wrote for a skill is asked of the
    catalog (expecting that skill) and of the catalog without it (expecting none, a near-miss of its neighbours)."""
    scored: list[tuple[list[Score], str | None]] = []
    for query in tqdm(written.labelled(), desc="scoring written requests", unit="request", leave=False):
        whole, without = with_and_without(selector, query.query, query.expected)
        scored += [(whole, query.expected), (without, None)]
    return fit_on_dev(scored)

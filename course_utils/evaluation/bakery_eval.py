"""The bakery agent measured on many requests: each run checked against its skill's rules, by code.

Lesson 04 runs the cake request once in each mode; one run is one sample. Here every request of
`data/bakery_requests.yaml` (its expected outcome written before it was run) goes through each skill
mode (`all`, `on-demand`, `filesystem`), several times with sampling, and each run gets a checklist read
from its events and its answer: the right skill loaded (or none), no skill loaded twice, the calendar
checked on the right line and day, and each fact the answer must state. `summarize` turns the
checklists into one row per mode, every rate with its Wilson interval.
"""
from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from course_utils.selection.abstain import NONE
from course_utils.loop.agent import AgentResult, Harness, MaxTurnsExceeded, RunOptions
from course_utils.loop.bakery import allergy_line, cake_quote, resolve_day
from course_utils.skills.paths import DATA_DIR
from course_utils.evaluation.stats import Rate
from course_utils.loop.tool_policy import Policy

REQUESTS_FILE = DATA_DIR / "bakery_requests.yaml"
MEASURED_DIR = DATA_DIR / "measured" / "bakery"
MAX_TURNS = 6
MAX_OUTPUT_TOKENS = 300
"""The run options of every measured run, and of the live runs of lessons 03 and 04."""


_SENTENCE_BREAK = re.compile(r"\n+|(?<=[.!?])\s+")


@dataclass(frozen=True)
class Fact:
    """What an answer must state: `says` searched case-insensitively; with `about`, both in one sentence (so the
    figure is stated for the thing asked, not for something else the answer mentions). `never`: the answer must
    not state it (a wrong line, a wrong promise)."""

    says: str
    about: str | None = None
    never: bool = False

    @classmethod
    def read(cls, raw: Any) -> Fact:
        """A fact as the request file writes it: a regex, `{says, about}` or `{never}`."""
        if isinstance(raw, str):
            return cls(raw)
        if isinstance(raw, dict) and set(raw) <= {"says", "about"} and "says" in raw:
            return cls(str(raw["says"]), None if raw.get("about") is None else str(raw["about"]))
        if isinstance(raw, dict) and set(raw) == {"never"}:
            return cls(str(raw["never"]), never=True)
        raise ValueError(f"a fact is a regex, {{says, about}} or {{never}}, not {raw!r}")

    def patterns(self) -> list[str]:
        return [self.says] if self.about is None else [self.says, self.about]

    def holds(self, answer: str) -> bool:
        """Whether `answer` states this fact (or, for `never`, does not state it)."""
        sentences = _SENTENCE_BREAK.split(answer) if self.about else [answer]
        found = any(all(re.search(p, s, re.IGNORECASE) for p in self.patterns()) for s in sentences)
        return found != self.never


@dataclass(frozen=True)
class BakeryRequest:
    """One customer request and the outcome it must have (see the file's header). `former_split`: the split a
    request was in before (a test request that guided the harness became a dev request)."""

    id: str
    split: str
    lang: str
    text: str
    skill: str | None
    calendar: tuple[tuple[str, str], ...] | None
    facts: dict[str, Fact] = field(default_factory=dict)
    former_split: str | None = None


def load_requests(path: str | Path = REQUESTS_FILE, split: str | None = None) -> list[BakeryRequest]:
    """The requests of the file (only `split`'s when given); ValueError names a malformed entry."""
    requests = []
    for index, raw in enumerate(yaml.safe_load(Path(path).read_text(encoding="utf-8"))["requests"]):
        try:
            calendar = None if raw["calendar"] is None else tuple((str(d), str(line)) for d, line in raw["calendar"])
            facts = {str(name): Fact.read(fact) for name, fact in (raw.get("facts") or {}).items()}
            request = BakeryRequest(raw["id"], raw["split"], raw["lang"], raw["text"], raw["skill"], calendar, facts,
                                    raw.get("former_split"))
            for fact in facts.values():
                for pattern in fact.patterns():
                    re.compile(pattern)
        except (KeyError, TypeError, ValueError, re.error) as err:
            raise ValueError(f"{path}: request #{index + 1} ({raw.get('id', '?')}): {err}") from None
        if split is None or request.split == split:
            requests.append(request)
    return requests


def skills_loaded(result: AgentResult) -> list[str]:
    """The skills a run read, in order, one entry per call: `load_skill` names (not "none") and `read_file` SKILL.md
    folders."""
    names = []
    for tool, arguments in result.tool_calls:
        if tool == "load_skill" and arguments.get("name") != NONE:
            names.append(str(arguments.get("name")))
        elif tool == "read_file" and str(arguments.get("path", "")).lower().endswith("skill.md"):
            names.append(Path(str(arguments["path"])).parent.name)
    return names


def calendar_checked(result: AgentResult, expected: Iterable[tuple[str, str]]) -> bool:
    """Whether one `check_calendar` call, or one order sent to the cake skill's script (`cake_quote`, which checks the
    calendar itself), asked for one of the expected (day, line) pairs (weekday names resolved)."""
    wanted = {(day, line) for day, line in expected}
    orders = [args if "line" in args else {**args, "line": allergy_line(bool(args.get("nut_allergy")))}
              for args in result.calls("cake_quote")]  # older records' orders name the line themselves
    for arguments in [*result.calls("check_calendar"), *orders]:
        try:
            day = resolve_day(str(arguments.get("day", ""))).isoformat()
        except ValueError:
            continue
        if (day, str(arguments.get("line", "")).strip().lower()) in wanted:
            return True
    return False


@dataclass
class Checklist:
    """What one run did, checked against its request's expected outcome. None: the check does not apply."""

    request: str
    mode: str
    sample: int
    skills: list[str]
    right_skill: bool | None
    loaded_twice: bool
    calendar_right: bool | None
    facts: dict[str, bool]
    answered: bool
    model_calls: int
    prompt_tokens: int
    seconds: float
    answer: str
    error: str | None = None
    calls: list[str] = field(default_factory=list)  # every tool call, as `tool(arguments)`; older records lack it

    def calls_of(self, tool: str) -> list[dict[str, Any]]:
        """The arguments of every recorded call to `tool`, in order."""
        opening = f"{tool}("
        return [json.loads(call[len(opening):-1]) for call in self.calls if call.startswith(opening)]

    def outcome(self) -> tuple:
        """What two runs must share to agree: skills read, the checks' verdicts and whether it answered."""
        return (tuple(self.skills), self.right_skill, self.calendar_right, tuple(sorted(self.facts.items())),
                self.answered)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_run(request: BakeryRequest, mode: str, result: AgentResult, *, sample: int = 0,
              seconds: float = 0.0, error: str | None = None) -> Checklist:
    """The checklist of one run (a run stopped by max_turns is checked as it stands, with no answer)."""
    loaded = skills_loaded(result)
    expected = [request.skill] if request.skill else []
    right_skill = None if mode == "all" else list(dict.fromkeys(loaded)) == expected
    calendar = None if request.calendar is None else calendar_checked(result, request.calendar)
    facts = {name: fact.holds(result.answer) for name, fact in request.facts.items()}
    return Checklist(request.id, mode, sample, loaded, right_skill, len(loaded) != len(set(loaded)), calendar, facts,
                     bool(result.answer.strip()), result.turns, result.total_prompt_tokens, round(seconds, 2),
                     result.answer, error,
                     [f"{tool}({json.dumps(args, ensure_ascii=False)})" for tool, args in result.tool_calls])


def read_record(path: str | Path) -> tuple[dict[str, Any], list[Checklist]]:
    """A record written by `python -m scripts.lab measure bakery`: (its settings, its checklists)."""
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    return {k: v for k, v in record.items() if k != "checklists"}, [Checklist(**c) for c in record["checklists"]]


def recheck_facts(checklists: Sequence[Checklist], requests: Sequence[BakeryRequest]) -> list[Checklist]:
    """The checklists with every fact checked again on the recorded answer, against the facts the request file
    states now (a record keeps the verdicts of the facts as they were written when it ran)."""
    facts = {r.id: r.facts for r in requests}
    return [replace(c, facts={name: fact.holds(c.answer) for name, fact in facts[c.request].items()})
            for c in checklists]


def run_checked(harness: Harness, client: Any, request: BakeryRequest, *, sample: int = 0,
                policies: Sequence[Policy] = (), options: RunOptions = RunOptions()) -> Checklist:
    """Run one request through one harness and check it. A run that hits max_turns is checked, not dropped."""
    start = time.perf_counter()
    try:
        result, error = harness.run(client, request.text, policies=policies, options=options), None
    except MaxTurnsExceeded as err:
        result, error = err.result, f"MaxTurnsExceeded after {err.max_turns} model calls"
    return check_run(request, harness.mode, result, sample=sample, seconds=time.perf_counter() - start, error=error)


SEEDING = "per request"  # how run_all seeds sampled runs; records made before it have no "seeding" (shared seeds)


def run_seed(request_id: str, seed: int) -> int:
    """The model's seed for run `seed` of one request: a hash of both, so that no two requests share their random
    draws (with one seed for every request's run k, a draw that tipped one request toward a text answer tipped
    them all), while every harness still gets the same seed for the same (request, run)."""
    return zlib.crc32(f"{request_id}/{seed}".encode()) & 0x7FFFFFFF


def run_all(harnesses: dict[str, Harness], client: Any, requests: Sequence[BakeryRequest], *,
            seeds: Sequence[int | None] = (None,), temperature: float | None = None,
            progress: Callable[[Iterable], Iterable] = iter, policies: Sequence[Policy] = (),
            options: RunOptions = RunOptions()) -> list[Checklist]:
    """Every request through every harness, once per seed (sampled with `run_seed`; None: greedy). Runs are
    grouped by mode (one system prompt at a time: the local backend keeps one prompt prefix cached)."""
    jobs = [(mode, request, sample, seed) for mode in harnesses for request in requests
            for sample, seed in enumerate(seeds)]
    return [run_checked(harnesses[mode], client, request, sample=sample, policies=policies,
                        options=replace(options, seed=None if seed is None else run_seed(request.id, seed),
                                        temperature=temperature if seed is not None else None))
            for mode, request, sample, seed in progress(jobs)]


def _rate(values: Iterable[bool | None]) -> Rate:
    counted = [v for v in values if v is not None]
    return Rate.of(sum(counted), len(counted))


def agreement(checklists: Sequence[Checklist]) -> Rate:
    """Of the (request, mode) pairs run more than once, the share whose runs all had the same outcome."""
    groups: dict[tuple[str, str], list[tuple]] = {}
    for c in checklists:
        groups.setdefault((c.request, c.mode), []).append(c.outcome())
    repeated = [outcomes for outcomes in groups.values() if len(outcomes) > 1]
    return Rate.of(sum(len(set(outcomes)) == 1 for outcomes in repeated), len(repeated))


def summarize(checklists: Sequence[Checklist]) -> list[dict[str, Any]]:
    """One row per mode: the rates (each a `Rate`, counted over runs), mean prompt tokens and model calls."""
    rows = []
    for mode in dict.fromkeys(c.mode for c in checklists):
        runs = [c for c in checklists if c.mode == mode]
        rows.append({
            "mode": mode,
            "runs": len(runs),
            "right skill": _rate(c.right_skill for c in runs),
            "no skill twice": _rate(not c.loaded_twice for c in runs),
            "calendar right": _rate(c.calendar_right for c in runs),
            "facts": _rate(v for c in runs for v in c.facts.values()),
            "answered": _rate(c.answered for c in runs),
            "agreement": agreement(runs),
            "model calls": sum(c.model_calls for c in runs) / len(runs),
            "prompt tokens": sum(c.prompt_tokens for c in runs) / len(runs),
        })
    return rows


def answered_by_cake_script(checklist: Checklist) -> bool:
    """Whether the run's answer is the cake skill's script's reply to its last order: that order sent to the script
    again gives the answer word for word (the script is a function of the order and the course's fixed today)."""
    orders = checklist.calls_of("cake_quote")
    return bool(orders) and checklist.answer == cake_quote(**orders[-1])


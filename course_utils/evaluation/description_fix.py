"""Editing one skill's description against its false triggers: the candidates, the dev choice, the held-out check.

Built for `notebooks/11_in_production.ipynb`; `python -m scripts.lab measure description-fix dev|held-out` makes
the records it reads (data/measured/description_fix/). A *false trigger of the target* is a query that needs no
skill, or another skill, and is sent to `TARGET`; a *lost true trigger* is a query expecting `TARGET` that the
original description sends there and the edit does not. The rule (`choose`): the fewest false triggers of the
target on development queries, ties to the fewer lost true triggers, then to the shorter description. When the
chosen candidate has no fewer false triggers than the original, no candidate fixed one on dev (`fixes_any`), and
the held-out check still runs. Neither the development queries the candidates run on (`candidate_queries`) nor the
held-out near-misses hold a positive of the target, so lost true triggers count only where a positive is run (the
tie-break; `tally` counts them), and what an edit loses is not measured here.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.skills.paths import DATA_DIR
from course_utils.evaluation.stats import SIGNIFICANCE, format_p, mcnemar_exact

TARGET = "it-helpdesk-triage"
RECORD_DIR = DATA_DIR / "measured" / "description_fix"
DEV_FILES = ("dev/helpdesk_boundary.yaml", "dev/helpdesk_boundary_2.yaml", "dev/trigger_dev_fr.yaml")
SHOWN = ("Réserve la salle Everest",)
"""Queries of the general dev files that lesson 11 shows as false triggers of the target (its other ones are in the
boundary files)."""
HELD_OUT_FILE = "helpdesk_near_misses.yaml"

_OLD_NOT_FOR = "Not for writing post-incident reviews; it cannot reset passwords or change accounts itself."
CANDIDATES = {
    "use only when broken": (
        "Triages an IT problem reported by an employee: classifies it (access, hardware, network, software, "
        "security), sets a priority, walks through safe first-line checks and drafts a ticket for the right support "
        "queue. Use only when an employee's own laptop, phone, account or business app is broken or not working "
        "right now, and nothing else. Not for writing post-incident reviews; it cannot reset passwords or change "
        "accounts itself."),
    "not-for names the other desks": (
        "Triages an IT problem reported by an employee: classifies it (access, hardware, network, software, "
        "security), sets a priority, walks through safe first-line checks and drafts a ticket for the right support "
        "queue. Use when something on a laptop, phone, account or business app is broken or not working. Not for "
        "room or meeting bookings (use the calendar), broken building equipment such as lifts, lights or coffee "
        "machines (facilities), buying advice, or writing code; not for post-incident reviews."),
}
"""The candidate descriptions of `TARGET`, written from the original's false triggers on the development queries
(docs/lab/lesson11-description-fix.md lists them and says why each candidate reads as it does)."""


@dataclass(frozen=True)
class Decided:
    """One query's decision as a record keeps it."""

    query: str
    expected: str | None
    lang: str
    decided: str | None

    @property
    def false_trigger(self) -> bool:
        """Sent to the target while it needs no skill or another one."""
        return self.decided == TARGET and self.expected != TARGET

    @property
    def true_trigger(self) -> bool:
        return self.decided == TARGET and self.expected == TARGET


def decided(outcomes: Sequence[Any]) -> list[Decided]:
    """`evaluation.Outcome`s as the records keep them."""
    return [Decided(o.query.query, o.query.expected, o.query.lang, o.chosen) for o in outcomes]


@dataclass(frozen=True)
class Tally:
    """A candidate against the original on the same queries (those both ran on)."""

    name: str
    characters: int
    false_triggers: int
    original_false_triggers: int
    fixed: int
    made: int
    lost_true_triggers: int
    moved: int

    @property
    def p_value(self) -> float:
        """Exact McNemar on false-trigger status: fixed against made."""
        return mcnemar_exact(self.fixed, self.made)


def tally(name: str, description: str, original: Sequence[Decided], candidate: Sequence[Decided]) -> Tally:
    """Count the candidate's false triggers of the target and what changed from the original, query by query."""
    by_text = {d.query: d for d in original}
    pairs = [(by_text[d.query], d) for d in candidate]
    return Tally(name, len(description), sum(c.false_trigger for _, c in pairs), sum(o.false_trigger for o, _ in pairs),
                 fixed=sum(o.false_trigger and not c.false_trigger for o, c in pairs),
                 made=sum(c.false_trigger and not o.false_trigger for o, c in pairs),
                 lost_true_triggers=sum(o.true_trigger and not c.true_trigger for o, c in pairs),
                 moved=sum(o.decided != c.decided for o, c in pairs))


def choose(tallies: Sequence[Tally]) -> Tally:
    """The fewest false triggers of the target, then the fewer lost true triggers, then the shorter description."""
    return min(tallies, key=lambda t: (t.false_triggers, t.lost_true_triggers, t.characters))


def fixes_any(chosen: Tally) -> bool:
    """Whether the chosen candidate has fewer false triggers of the target than the original on the same queries."""
    return chosen.false_triggers < chosen.original_false_triggers


def dev_queries(skill_names: Sequence[str]) -> list[Any]:
    """The development queries every description runs on: the boundary files' queries that do not expect the target
    (where its false triggers are), and the false triggers lesson 11 shows from the general files (`SHOWN`). The
    target's positives are not run: at a local model's seconds per decision they would cost as much again."""
    from course_utils.skills.queries import load_queries

    picked = []
    for name in DEV_FILES:
        for q in load_queries(DATA_DIR / name, skill_names):
            if (q.expected != TARGET and "boundary" in name) or q.query.startswith(SHOWN):
                picked.append(q)
    return picked


def candidate_queries(queries: Sequence[Any]) -> list[Any]:
    """The development queries a candidate runs on: those needing no skill (the original runs on the boundary's
    neighbours too, to show where its own false triggers are not; a candidate's false triggers there go uncounted)."""
    return [q for q in queries if q.expected is None]


def edited_catalog(root: Path, description: str, dest: Path) -> Path:
    """A copy of the catalog at `root` in `dest` with only the target's description replaced; returns `dest`."""
    shutil.copytree(root, dest, dirs_exist_ok=True)
    skill_file = dest / TARGET / "SKILL.md"
    text = (root / TARGET / "SKILL.md").read_text(encoding="utf-8")
    start = text.index('description: "') + len('description: "')
    end = text.index('"\n', start)
    skill_file.write_text(text[:start] + description.replace('"', '\\"') + text[end:], encoding="utf-8")
    return dest


def write_record(path: Path, meta: Mapping[str, Any], runs: Mapping[str, Sequence[Decided]]) -> None:
    payload = {**meta, "runs": {name: [vars(d) for d in rows] for name, rows in runs.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_record(path: Path) -> tuple[dict[str, Any], dict[str, list[Decided]]]:
    """(the record's settings, {description name: its decisions})."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    runs = {name: [Decided(**row) for row in rows] for name, rows in data.pop("runs").items()}
    return data, runs


def discordant_needed(fixed: int, made: int, limit: int = 1_000_000) -> int | None:
    """The fewest discordant queries (fixed + made) at this run's split on which the exact McNemar test would find
    the edit better (p < SIGNIFICANCE); None when the split does not favour the edit."""
    if fixed <= made:
        return None
    share = fixed / (fixed + made)
    return next((m for m in range(1, limit + 1)
                 if mcnemar_exact(round(m * share), m - round(m * share)) < SIGNIFICANCE), None)


def paired_sentence(fixed: int, made: int, queries: int) -> str:
    """The paired test on false-trigger status in words, and, when it cannot tell, how many queries would."""
    p_value = mcnemar_exact(fixed, made)
    opening = (f"Paired, on these {queries} queries: the edit fixes {fixed} false trigger{'s' * (fixed != 1)} of the "
               f"original and makes {made}, exact McNemar p {format_p(p_value)}")
    if p_value < SIGNIFICANCE:
        better = "the edit" if fixed > made else "the original"
        return f"{opening}: {better} makes fewer false triggers, a finding by the rule used here (p < {SIGNIFICANCE})."
    needed = discordant_needed(fixed, made)
    if needed is None:
        return (f"{opening}: no difference by the rule used here (p < {SIGNIFICANCE}), and at this split no number "
                "of queries would show the edit better.")
    total = -(-needed * queries // (fixed + made))
    return (f"{opening}: no difference by the rule used here (p < {SIGNIFICANCE}); at this split, {needed} queries "
            f"on which the two differ would decide it, about {total:,} queries like these.")

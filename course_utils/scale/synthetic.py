"""Synthetic skills, to grow a catalog from 10 to 10,000 skills.

Used in `notebooks/10_at_scale.ipynb`. The synthetic skills are generated from
templates (domain × artifact × action), are labelled as synthetic in their metadata and their path,
and read like the real ones: what the skill does, "Use when …", "Not for …". Their only purpose is
to measure how cost and ranking behave when a catalog holds 10 to 10,000 skills.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from pathlib import Path

from course_utils.skills.skill import Skill, SkillLoader

SYNTHETIC_ROOT = Path("synthetic")
"""The pretend folder synthetic skills live in (they are never written to disk)."""

DOMAINS = (
    "accounting", "logistics", "procurement", "payroll", "recruiting", "legal", "marketing", "sales",
    "support", "security", "facilities", "treasury", "compliance", "research", "clinical", "warehouse",
    "fleet", "energy", "insurance", "claims", "lending", "retail", "hotel", "airline", "shipping",
    "construction", "pharmacy", "school", "university", "library", "museum", "newsroom", "studio",
    "restaurant", "farm", "brewery", "garage", "dental", "veterinary", "municipal",
)
ARTIFACTS = (
    ("budget", "budgets"), ("contract", "contracts"), ("report", "reports"), ("schedule", "schedules"),
    ("invoice", "invoices"), ("checklist", "checklists"), ("forecast", "forecasts"), ("policy", "policies"),
    ("ticket", "tickets"), ("manifest", "manifests"), ("roster", "rosters"), ("audit-log", "audit logs"),
    ("inventory", "inventories"), ("proposal", "proposals"), ("timesheet", "timesheets"),
    ("risk-register", "risk registers"), ("order", "orders"), ("newsletter", "newsletters"),
    ("survey", "surveys"), ("dashboard", "dashboards"), ("permit", "permits"), ("quote", "quotes"),
    ("handbook", "handbooks"), ("incident-log", "incident logs"), ("price-list", "price lists"),
)


@dataclass(frozen=True)
class Action:
    """One kind of job a synthetic skill does to an artifact."""

    suffix: str
    does: str
    details: tuple[str, ...]
    use_when: str
    not_for: str


ACTIONS = (
    Action("checker", "Checks {domain} {plural} against the team's written rules",
           ("missing fields", "totals that do not add up", "dates out of range", "approvals not yet given",
            "values outside the allowed limits", "duplicates"),
           "someone wants a {singular} reviewed for problems before it goes out",
           "writing a new {singular} from scratch, nor for changing records in a business system"),
    Action("writer", "Drafts {domain} {plural} from notes the user provides",
           ("a clear structure", "plain wording", "the mandatory sections", "a short summary first",
            "named owners and dates", "a list of open questions"),
           "someone needs a first draft of a {singular} they will edit",
           "checking an existing {singular}, nor for sending or publishing it"),
    Action("summarizer", "Summarizes long {domain} {plural} into a few lines",
           ("the decisions taken", "figures that changed", "risks raised", "deadlines", "who must act next",
            "what is still undecided"),
           "someone has a long {singular} and needs the gist quickly",
           "rewriting the {singular} in full, nor for translating it"),
    Action("comparer", "Compares two versions of {domain} {plural} side by side",
           ("added and removed lines", "changed amounts", "moved deadlines", "new obligations",
            "wording that changes the meaning", "sections that disappeared"),
           "someone receives a revised {singular} and wants to know what changed",
           "judging whether the changes are acceptable, nor for merging the versions"),
    Action("translator", "Translates {domain} {plural} between English, French, German and Spanish",
           ("terminology kept consistent", "numbers and dates unchanged", "the layout preserved",
            "a glossary of the terms used", "notes where a term has no equivalent", "the original tone"),
           "someone must share a {singular} with a team that reads another language",
           "summarizing or shortening the {singular}, nor for legal certification of translations"),
    Action("planner", "Plans the work needed to prepare {domain} {plural}",
           ("the steps in order", "who does each step", "the time each step takes", "dependencies",
            "the review points", "a realistic deadline"),
           "someone has to deliver a {singular} and wants a step-by-step plan",
           "doing the work itself, nor for booking meetings in a calendar"),
    Action("explainer", "Explains {domain} {plural} to people who are new to them",
           ("what each section means", "the jargon in plain words", "why the numbers matter",
            "common mistakes", "an annotated example", "where to find the source data"),
           "someone new to the team does not understand a {singular} they were sent",
           "changing the {singular}, nor for giving legal or financial advice"),
    Action("exporter", "Turns {domain} {plural} into clean spreadsheet tables",
           ("one row per item", "typed columns", "consistent units", "totals per group", "flagged gaps",
            "a notes column for anything unclear"),
           "someone needs the content of a {singular} in a spreadsheet for further analysis",
           "producing charts or dashboards, nor for importing data into a database"),
    Action("estimator", "Estimates the cost and effort behind {domain} {plural}",
           ("a range rather than one figure", "the assumptions made", "the main cost drivers",
            "what would change the estimate", "a comparison with past cases", "a confidence level"),
           "someone must give a rough figure for a {singular} before the details are known",
           "final pricing or binding quotes, nor for approving spending"),
    Action("archiver", "Prepares {domain} {plural} for archiving under the retention rules",
           ("the retention period that applies", "the file name convention", "personal data to remove",
            "the index entry", "the access level", "the disposal date"),
           "someone closes a file and must archive a {singular} correctly",
           "searching the archive, nor for deleting records before their disposal date"),
)

COMBINATIONS = len(DOMAINS) * len(ARTIFACTS) * len(ACTIONS)
"""How many distinct synthetic skills the templates can make (10,000)."""


def _describe(domain: str, singular: str, plural: str, action: Action, rng: random.Random) -> str:
    details = rng.sample(action.details, 4)
    words = {"domain": domain, "singular": f"{domain} {singular}", "plural": plural}
    return (
        f"{action.does.format(**words)}: {', '.join(details[:3])} and {details[3]}. "
        f"Use when {action.use_when.format(**words)}. Not for {action.not_for.format(**words)}."
    )


def synthetic_skills(count: int, seed: int = 0) -> list[Skill]:
    """`count` synthetic skills, the same ones for the same seed; a smaller count is a prefix of a larger.

    Each is marked `metadata: {synthetic: "true"}` and lives under the pretend folder `synthetic/`.
    """
    if not 0 <= count <= COMBINATIONS:
        raise ValueError(f"count must be between 0 and {COMBINATIONS:,} (the templates' combinations), got {count:,}")
    order = list(itertools.product(DOMAINS, ARTIFACTS, ACTIONS))
    random.Random(seed).shuffle(order)
    skills = []
    for index, (domain, (slug, plural), action) in enumerate(order[:count]):
        name = f"{domain}-{slug}-{action.suffix}"
        singular = slug.replace("-", " ")
        description = _describe(domain, singular, plural, action, random.Random(f"{seed}-{index}"))
        body = f"# {name}\n\nSynthetic skill generated for the scale measurements of lesson 10. No instructions."
        skills.append(Skill(name, description, body, SYNTHETIC_ROOT / name / "SKILL.md",
                            {"metadata": {"synthetic": "true"}}))
    return skills


def render_skill_md(skill: Skill) -> str:
    """The `SKILL.md` text of a skill, as it would be written to disk (used to validate synthetic ones)."""
    description = skill.description.replace('"', '\\"')
    return f'---\nname: {skill.name}\ndescription: "{description}"\nmetadata:\n  synthetic: "true"\n---\n{skill.body}\n'


def with_distractors(loader: SkillLoader, count: int, seed: int = 0) -> SkillLoader:
    """`loader`'s skills plus `count` synthetic ones (the real skills come first)."""
    real = list(loader.skills.values())
    taken = set(loader.skills)
    extra = [s for s in synthetic_skills(count, seed) if s.name not in taken]
    return SkillLoader(real + extra)

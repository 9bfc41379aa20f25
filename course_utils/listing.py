"""Listing budgets: the catalog a real harness gives the model once its skills outgrow the room it allows them.

A harness does not send a catalog of any size whole. It keeps the skill listing within a budget of
characters computed from the model's context window, and when the listing does not fit, descriptions give
way first: cut short, or dropped so that only the skill's name is left. `render_listing` renders a catalog
under such a budget, with the course's own catalog lines (`skills.catalog_line`), so the text it returns is
what the course's model would read; `Listing.loader()` turns it back into a `SkillLoader` for
`selection.pick_by_model`. `survival` counts, for catalogs of 10 to 10,000 synthetic skills plus the real
ones (`scale.with_distractors`), how many descriptions survive whole, cut, or not at all.

The two presets follow what public sources say each harness does (see their docstrings); where the sources
stop, the choice made here is said as a choice. Budgets are counted in characters of the listing text,
its lines joined by newlines.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from course_utils import safeyaml
from course_utils.paths import SKILLS_DIR
from course_utils.scale import with_distractors
from course_utils.skills import Skill, SkillLoader, catalog_line

Fate = Literal["whole", "cut", "name", "dropped"]
FATES: tuple[Fate, ...] = ("whole", "cut", "name", "dropped")
"""What can become of a skill in a listing: its description whole, its description cut short, its name
alone, or nothing at all (not listed, so the model cannot call it)."""


@dataclass(frozen=True)
class ListingBudget:
    """How a harness sizes its skill listing and what gives way when the listing does not fit.

    - the budget in characters: `context_fraction` × the context window in tokens × `chars_per_token`,
      rounded down (at least 1), at most `max_chars` if given; `unknown_context_chars` when the context
      window is not known;
    - `entry_chars`: each description cut to this many characters before anything else (None: no cut);
    - `overflow`, when the whole listing is over budget: "whole-or-name" keeps, in listing order, each
      description whole while it fits, and lists every skill after the first that does not fit by its name
      alone; "share" cuts every description to an equal share of the room the names leave (a short one
      keeps its unused share for the others);
    - `names_over_budget`, when even the names alone are over budget: "keep" lists every name anyway (the
      listing is then over its budget), "drop" lists names in order while they fit and drops the rest;
    - `sort_by_name`: list the skills by name rather than in the catalog's order.
    """

    name: str
    context_fraction: float
    chars_per_token: float = 4.0
    unknown_context_chars: int = 8_000
    max_chars: int | None = None
    entry_chars: int | None = None
    overflow: Literal["whole-or-name", "share"] = "whole-or-name"
    names_over_budget: Literal["keep", "drop"] = "keep"
    sort_by_name: bool = False

    def chars(self, context_tokens: int | None) -> int:
        """The listing's budget in characters for a context window of `context_tokens` (None: unknown)."""
        if context_tokens is None:
            return self.unknown_context_chars
        budget = max(1, math.floor(context_tokens * self.context_fraction * self.chars_per_token))
        return budget if self.max_chars is None else min(budget, self.max_chars)


CLAUDE_CODE = ListingBudget("Claude Code", context_fraction=0.01, entry_chars=1_536,
                            overflow="whole-or-name", names_over_budget="keep")
"""Claude Code: 1 % of the context window at 4 characters a token (8,000 characters at 200,000 tokens),
each entry's description cut at 1,536 characters, then descriptions dropped down to names only.

Sources, read for this course in 2026-12:
- Claude Code's documentation, https://code.claude.com/docs/en/skills, section "Skill descriptions are cut
  short", as quoted on 2026-09-07 in https://github.com/wei18/apple-dev-skills/pull/52 and on 2026-08-31 in
  https://github.com/melodic-software/claude-code-plugins/issues/3505: "The listing always contains every
  skill name, but if you have many skills, Claude Code shortens descriptions to fit the listing's character
  budget … The budget scales at 1% of the model's context window"; "the combined `description` and
  `when_to_use` text is truncated at 1,536 characters in the skill listing"; "When the listing overflows,
  Claude Code drops descriptions starting with the skills you invoke least".
- The formula as read from the shipped program, `budget = max(1, floor((contextTokens ?? 200000) × 4 ×
  fraction))`, fraction 0.01 by default (setting `skillListingBudgetFraction`), per-entry cap 1,536
  (`skillListingMaxDescChars`), the environment variable `SLASH_COMMAND_TOOL_CHAR_BUDGET` overriding it:
  https://github.com/melodic-software/claude-code-plugins/issues/1271 (comment of 2026-07-25, v2.1.220);
  "there is no Math.min", and over budget each skill keeps its whole description or is listed as a bare
  `- name`, ranked by use: https://github.com/martinholovsky/SOTA-skills/pull/349 (2026-09-11, v2.1.268).

Choices made here where those sources stop (unverified): no skill has been used in a simulation, so the
catalog's own order ranks them (real skills first, as `scale.with_distractors` puts them); the first
description that does not fit ends the whole descriptions, as "everything past the cutoff renders as a bare
name" (https://github.com/JuliusBrussee/caveman/pull/898, 2026-08-23) says; the names count against the
budget before any description does; a cut description gets no ellipsis. An unknown context counts as
200,000 tokens, hence 8,000 characters. Skills carry no `when_to_use` here: only the description is listed.
"""

CODEX = ListingBudget("Codex", context_fraction=0.02, overflow="share", names_over_budget="drop",
                      sort_by_name=True)
"""OpenAI Codex: 2 % of the context window (counted in tokens of about 4 bytes), or 8,000 characters when the
context window is not known; over budget every description is cut to an equal share, and when even the
names do not fit, all descriptions go and the skills that do not fit are left out.

Source: `codex-rs/core-skills/src/render.rs` in https://github.com/openai/codex (the stored version at commit
0899b7c42bf1, read for this course in 2026-12), from https://github.com/openai/codex/pull/18298 "Budget skill
metadata and surface trimming as a warning" (merged 2026-04-18): `SKILL_METADATA_CONTEXT_WINDOW_PERCENT = 2`,
`DEFAULT_SKILL_METADATA_CHAR_BUDGET = 8_000` (used only without a context window: the 2 % is not capped by
it), three stages: the whole listing if it fits; else, if every skill's line without its description fits,
the room left is shared out one character at a time across the descriptions; else every description is
removed and lines are kept in order while they fit. Skills are ordered by scope, then by name. A Codex log
quoted in https://github.com/openai/codex/issues/24299 (Codex v0.133.0, undated) shows `budget_limit=5440`,
2 % of a 272,000-token window.

Approximations: Codex counts each line as ⌈bytes/4⌉ tokens; here the budget is 4 characters a token, counted
in characters, so an ASCII listing may hold up to 3 characters a line more than Codex's own. Codex's lines
also carry the skill file's path, which the course's lines do not (its load tool takes a name). Codex refuses
descriptions over 1,024 characters when it loads a skill (as the course's loader does), so it needs no
per-entry cut.
"""

GEMINI_CLI = ListingBudget("Gemini CLI", context_fraction=1.0, overflow="whole-or-name", names_over_budget="keep")
"""Gemini CLI: every skill listed with its whole description, with no budget of its own; the only limit
here is the context window itself.

Source: `renderAgentSkills` in `packages/core/src/prompts/snippets.ts` of https://github.com/google-gemini/gemini-cli
(the stored version at commit 00408aea4b19, read for this course in 2026-12): one `<skill>` element per skill
with its name, description and location, inside `<available_skills>`, with no cut and no count limit.
Approximation: the budget counts the course's catalog lines, not Gemini CLI's XML, which adds each skill's
location and some 60 characters of tags.
"""

PRESETS = (CLAUDE_CODE, CODEX)
"""The two harnesses that cut their listing, as lesson 10 compares them."""


@dataclass(frozen=True)
class Listing:
    """A catalog as a harness lists it: the skills it lists (descriptions as shown) and what became of each."""

    budget: ListingBudget
    context_tokens: int | None
    budget_chars: int
    entries: tuple[Skill, ...]
    """The listed skills in listing order, each `description` as listed ("" when its name stands alone)."""
    fates: dict[str, Fate]
    """Every skill of the catalog, in the catalog's order, with what became of it."""

    @property
    def text(self) -> str:
        """The catalog text the model reads: the catalog of `loader()`, one `skills.catalog_line` per listed skill."""
        return self.loader().catalog()

    @property
    def counts(self) -> dict[Fate, int]:
        """How many skills had each fate (every fate present, zero included)."""
        found = Counter(self.fates.values())
        return {fate: found[fate] for fate in FATES}

    @property
    def over_budget(self) -> bool:
        """True when the text is longer than the budget (only when names are kept whatever they cost)."""
        return len(self.text) > self.budget_chars

    def loader(self) -> SkillLoader:
        """A `SkillLoader` of the listed skills whose `catalog()` is this listing's text.

        Give it to `selection.pick_by_model`: the model reads the listing and may call the load tool with
        any listed name (the declaration's enum), and with no dropped one. Bodies are the skills' own.
        """
        return SkillLoader(self.entries)


def _line_cost(name: str, description: str) -> int:
    """Characters a listed line takes, with the newline that separates it from the next."""
    return len(catalog_line(name, description)) + 1


def _share(names: Sequence[str], descriptions: Sequence[str], room: int) -> list[int]:
    """How many characters of each description fit in `room` once the names are paid for (Codex's stage 2).

    One character at a time, round after round, in listing order; the first character of a description
    also pays for the ": " it brings. A description that is used up leaves its share to the others.
    """
    given = [0] * len(names)
    room -= sum(_line_cost(n, "") for n in names)
    waiting = [i for i, d in enumerate(descriptions) if d]
    while waiting:
        grew, still = False, []
        for i in waiting:
            step = 3 if given[i] == 0 else 1
            if step <= room:
                given[i], room, grew = given[i] + 1, room - step, True
            if given[i] < len(descriptions[i]):
                still.append(i)
        if not grew:
            break
        waiting = still
    return given


def render_listing(skills: SkillLoader | Iterable[Skill], budget: ListingBudget,
                   context_tokens: int | None) -> Listing:
    """`skills` listed under `budget` for a model whose context window is `context_tokens` tokens.

    In order: each description is cut at `budget.entry_chars`; if the whole listing fits the budget, it is
    listed so; else `budget.overflow` says how descriptions give way, and `budget.names_over_budget` what
    happens when even the names do not fit (see `ListingBudget`). The listing never exceeds the budget,
    except with `names_over_budget="keep"` when the names alone exceed it: every name is listed then.
    """
    catalog = list(skills.skills.values() if isinstance(skills, SkillLoader) else skills)
    order = sorted(catalog, key=lambda s: s.name) if budget.sort_by_name else catalog
    limit = budget.chars(context_tokens)
    room = limit + 1  # the last line has no newline after it
    cut_at = budget.entry_chars
    wanted = [s.description if cut_at is None else s.description[:cut_at] for s in order]
    names = [s.name for s in order]
    full = sum(_line_cost(n, d) for n, d in zip(names, wanted))
    bare = sum(_line_cost(n, "") for n in names)
    shown: list[str | None] = []  # per skill in `order`: the description listed, "" for the name alone, None dropped
    if full <= room:
        shown = list(wanted)
    elif bare > room and budget.names_over_budget == "drop":
        used = 0
        for n in names:
            fits = used + _line_cost(n, "") <= room
            if fits:
                used += _line_cost(n, "")
            shown.append("" if fits else None)
    elif bare > room or budget.overflow == "whole-or-name":
        used, open_ = bare, bare <= room  # the names are paid first; no description at all if they overflow
        for n, d in zip(names, wanted):
            extra = _line_cost(n, d) - _line_cost(n, "")
            open_ = open_ and used + extra <= room  # closed for good at the first one that does not fit
            if open_:
                used += extra
            shown.append(d if open_ else "")
    else:
        shown = [d[:k] for d, k in zip(wanted, _share(names, wanted, room))]

    def fate(skill: Skill, text: str | None) -> Fate:
        if text is None:
            return "dropped"
        if not text:
            return "name"
        return "whole" if text == skill.description else "cut"

    by_name = {s.name: fate(s, text) for s, text in zip(order, shown)}
    entries = tuple(dataclasses.replace(s, description=text) for s, text in zip(order, shown) if text is not None)
    return Listing(budget, context_tokens, limit, entries, {s.name: by_name[s.name] for s in catalog})


SIZES = (10, 100, 1_000, 10_000)
"""The synthetic catalogs of lesson 10 (the real skills come on top)."""


def survival(sizes: Sequence[int] = SIZES, budget: ListingBudget = CLAUDE_CODE, context_tokens: int | None = 200_000,
             real: SkillLoader | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """For each size, the real skills plus that many synthetic ones listed under `budget`: one row each.

    `real` defaults to the workplace catalog. A row holds the preset, the context window, the synthetic and
    total skill counts, the budget and the listing's length in characters, the count of each fate
    (`whole`, `cut`, `name`, `dropped`) and its share of the catalog (`whole_share`, …).
    """
    real = SkillLoader.from_root(SKILLS_DIR / "workplace") if real is None else real
    rows = []
    for size in sizes:
        catalog = with_distractors(real, size, seed)
        listing = render_listing(catalog, budget, context_tokens)
        total = len(catalog.names)
        counts = listing.counts
        rows.append({"budget": budget.name, "context_tokens": context_tokens, "synthetic": size, "skills": total,
                     "budget_chars": listing.budget_chars, "listing_chars": len(listing.text), **counts,
                     **{f"{fate}_share": counts[fate] / total for fate in FATES}})
    return rows


# ------------------------------------------------------------------ each harness's own listing

Seen = Literal["whole", "cut", "name", "removed", "omitted"]
SEEN: tuple[Seen, ...] = ("whole", "cut", "name", "removed", "omitted")
"""What the model sees of a skill in a harness's own listing: its description whole, cut to some characters, its
name alone, nothing because the skill asked not to be chosen by the model (`removed`), or nothing because it did
not fit (`omitted`)."""

CLAUDE_CODE_SOURCE = ("https://code.claude.com/docs/en/skills (\"Skill descriptions are cut short\"); "
                      "https://github.com/anthropics/claude-code/issues/12782; "
                      "https://github.com/anthropics/claude-code/issues/64606")
CODEX_SOURCE = ("openai/codex codex-rs/core-skills/src/render.rs at 0899b7c42bf11847f78710966b362f756337c17d "
                "(render_skill_lines_from_lines, render_lines_with_description_budget)")


@dataclass(frozen=True)
class SkillView:
    """One skill as a harness lists it: what the model sees (`seen`), how many characters of its description
    (`chars`), why, and its line (None when it is not listed)."""

    name: str
    seen: Seen
    chars: int
    reason: str
    line: str | None


@dataclass(frozen=True)
class HarnessListing:
    """A catalog as one harness builds its skill listing: the budget and its unit, the order it assumed, and what
    the model sees of each skill."""

    harness: str
    context_tokens: int | None
    budget: int
    unit: Literal["characters", "tokens"]
    used: int
    order: str
    """The order that decided who gives way first, said in words (e.g. that no usage was known)."""
    views: dict[str, SkillView]
    """Every skill of the catalog, in the catalog's order."""
    lines: tuple[str, ...]
    """The listing's lines in the harness's order."""
    source: str

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def counts(self) -> dict[Seen, int]:
        """How many skills the model sees each way (every kind present, zero included)."""
        found = Counter(v.seen for v in self.views.values())
        return {seen: found[seen] for seen in SEEN}


def usage_score(count: int, days_since_last_use: float) -> float:
    """Claude Code's rank of a skill by use: `count × max(0.5 ** (days / 7), 0.1)` (a never-used skill scores 0).

    As read from the shipped program in https://github.com/martinholovsky/SOTA-skills/pull/349.
    """
    return count * max(0.5 ** (days_since_last_use / 7), 0.1)


def _flag(skill: Skill, key: str) -> bool:
    return skill.extra.get(key) is True


def claude_code_listing(skills: SkillLoader | Iterable[Skill], context_tokens: int | None = 200_000,
                        usage: Mapping[str, float] | None = None, fraction: float = 0.01,
                        entry_chars: int = 1_536) -> HarnessListing:
    """The skill listing Claude Code builds for `skills` and a context window of `context_tokens` tokens.

    - A skill with `disable-model-invocation: true` is `removed`: the model is not shown it.
    - Each entry is the description, with `when_to_use` after it (joined by a space), cut at `entry_chars`
      (1,536, setting `skillListingMaxDescChars`): a longer one is `cut`.
    - The budget is `max(1, floor((context_tokens or 200,000) × 4 × fraction))` characters (8,000 at 200,000
      tokens with the default 1 %), counted on lines `- name: description` joined by newlines.
    - Every name is listed, whatever it costs. If the whole listing is over budget, the skills ranked by `usage`
      (higher first: `usage_score`; ties and unknown skills keep the catalog's order) keep their entry while it
      fits, the names paid first; from the first entry that does not fit on, skills are listed by `name` alone.
      Without `usage` the ranking is the catalog's order, which `order` states.

    Sources: Claude Code's documentation (the budget "scales at 1% of the model's context window", entries are
    "capped at 1,536 characters", "drops descriptions starting with the skills you invoke least", names are
    always kept) and https://github.com/anthropics/claude-code/issues/64606 (`budget = contextWindow × 4 ×
    skillListingBudgetFraction`, 8,000 characters at 200k) and /issues/12782 (skills beyond the budget).
    Where they stop: the join of `when_to_use`, the line format and the stop at the first misfit are this
    module's reading (see `docs/lab/audit.md`).
    """
    catalog = list(skills.skills.values() if isinstance(skills, SkillLoader) else skills)
    budget = max(1, math.floor((200_000 if context_tokens is None else context_tokens) * 4 * fraction))
    views: dict[str, SkillView] = {}
    listed = [s for s in catalog if not _flag(s, "disable-model-invocation")]
    entry: dict[str, str] = {}
    for s in listed:
        entry[s.name] = _entry_full(s)[:entry_chars]
    lines = {s.name: catalog_line(s.name, entry[s.name]) for s in listed}
    whole_cost = len("\n".join(lines.values()))
    if usage is None:
        order = "no usage known: the catalog's order, as in a fresh session"
        ranked = listed
    else:
        order = "by usage, most used first (ties and skills with no usage in the catalog's order)"
        ranked = sorted(listed, key=lambda s: -usage.get(s.name, 0.0))
    keep = {s.name for s in listed}
    if whole_cost > budget:
        used = len("\n".join(catalog_line(s.name, "") for s in listed))
        keep = set()
        for s in ranked:
            extra_cost = len(lines[s.name]) - len(catalog_line(s.name, ""))
            if used + extra_cost > budget:
                break
            used += extra_cost
            keep.add(s.name)
    shown = [catalog_line(s.name, entry[s.name] if s.name in keep else "") for s in listed]
    for s in catalog:
        if _flag(s, "disable-model-invocation"):
            views[s.name] = SkillView(s.name, "removed", 0, "disable-model-invocation: true", None)
            continue
        text = entry[s.name] if s.name in keep else ""
        line = catalog_line(s.name, text)
        if s.name not in keep:
            views[s.name] = SkillView(s.name, "name", 0, f"over the {budget:,}-character budget: name only", line)
        elif len(text) < len(entry[s.name]) or len(entry[s.name]) < len(_entry_full(s)):
            views[s.name] = SkillView(s.name, "cut", len(text), f"entry cut at {entry_chars:,} characters", line)
        else:
            views[s.name] = SkillView(s.name, "whole", len(text), "fits", line)
    return HarnessListing("claude-code", context_tokens, budget, "characters", len("\n".join(shown)), order, views,
                          tuple(shown), CLAUDE_CODE_SOURCE)


def _entry_full(skill: Skill) -> str:
    extra = skill.extra.get("when_to_use")
    return f"{skill.description} {extra.strip()}".strip() if isinstance(extra, str) and extra.strip() \
        else skill.description


def _single_line(text: str) -> str:
    return " ".join(text.split())


def listed_entry(harness: str, skill: Skill) -> str:
    """The text `harness` lists for `skill` when nothing is cut: Claude Code's description with `when_to_use` after
    it, Codex's description as one line, Gemini CLI's description."""
    if harness == "claude-code":
        return _entry_full(skill)
    if harness == "codex":
        return _single_line(skill.description)
    return skill.description


def codex_listing(skills: SkillLoader | Iterable[Skill], context_tokens: int | None = 272_000,
                  paths: Mapping[str, str] | None = None,
                  implicit: Mapping[str, bool] | None = None, budget: int | None = None) -> HarnessListing:
    """The skill listing Codex builds for `skills` and a context window of `context_tokens` tokens (None: unknown).

    - A skill whose `agents/openai.yaml` says `policy: {allow_implicit_invocation: false}` (or `implicit[name]` is
      False) is `removed`: Codex leaves it out of the model-visible list.
    - Lines are `- name: description (file: path)`, without a description `- name: (file: path)`, sorted by name
      (then path; every skill here has one scope); `paths` gives each skill's path, by default its `SKILL.md` as
      loaded. Descriptions are read as one line (whitespace collapsed).
    - The budget is 2 % of the window in tokens (`max(1, window × 2 // 100)`), a line costing ⌈bytes of the line
      and its newline / 4⌉; without a window, 8,000 characters of lines and newlines. `budget` replaces that
      number, in the same unit.
    - If every whole line fits, every description is `whole`. Else, if every line without its description fits,
      the room left is handed out one character at a time, round after round across the skills in listing order;
      a character whose cost (the line's new token count minus its old one, or 1 character) does not fit the room
      left is skipped for that skill this round; it stops when a round adds nothing. A description ends `whole`,
      `cut` to N characters, or at 0 characters (`name`). Else every description is removed and lines are kept in
      order while they fit, an oversized one skipped (`omitted`) and the scan carried on.

    Source: `codex-rs/core-skills/src/render.rs` of https://github.com/openai/codex at commit
    0899b7c42bf11847f78710966b362f756337c17d (`default_skill_metadata_budget`, `render_skill_lines_from_lines`,
    `render_lines_with_description_budget`, `render_minimum_skill_lines_until_budget`) and `approx_token_count`
    (`codex-rs/utils/string/src/truncate.rs`). Not modelled: when descriptions are cut or skills left out, Codex
    also tries replacing each skill root by a short alias (`r0/…`, with a table of roots) and keeps whichever
    render lists more.
    """
    catalog = list(skills.skills.values() if isinstance(skills, SkillLoader) else skills)
    allowed = {s.name: (implicit or {}).get(s.name, _implicit_allowed(s)) for s in catalog}
    order = sorted((s for s in catalog if allowed[s.name]), key=lambda s: (s.name, str(s.path)))
    path_of = {s.name: (paths or {}).get(s.name, s.path.as_posix()) for s in catalog}
    description = {s.name: _single_line(s.description) for s in order}
    tokens = context_tokens is not None and context_tokens > 0
    if budget is None:
        budget = max(1, context_tokens * 2 // 100) if tokens else 8_000

    def cost(text: str) -> int:  # a line and its newline
        return -(-len((text + "\n").encode()) // 4) if tokens else len(text) + 1

    def line(s: Skill, k: int) -> str:
        d = description[s.name][:k]
        return f"- {s.name}: {d} (file: {path_of[s.name]})" if d else f"- {s.name}: (file: {path_of[s.name]})"

    full = [len(description[s.name]) for s in order]
    minimum = [cost(line(s, 0)) for s in order]
    given: list[int | None]
    if sum(cost(line(s, n)) for s, n in zip(order, full)) <= budget:
        given, reason = list(full), "fits"
    elif sum(minimum) <= budget:
        given, reason = _round_robin(order, description, minimum, budget - sum(minimum), tokens, line), "shared"
    else:
        given, used = [], 0
        for c in minimum:
            fits = used + c <= budget
            used += c if fits else 0
            given.append(0 if fits else None)
        reason = "names"
    lines = tuple(line(s, k) for s, k in zip(order, given) if k is not None)
    unit = "tokens" if tokens else "characters"
    views: dict[str, SkillView] = {}
    by_name = dict(zip((s.name for s in order), given))
    for s in catalog:
        if not allowed[s.name]:
            views[s.name] = SkillView(s.name, "removed", 0, "policy.allow_implicit_invocation: false", None)
            continue
        k, n = by_name[s.name], len(description[s.name])
        if k is None:
            views[s.name] = SkillView(s.name, "omitted", 0, f"even its line without description exceeds the "
                                      f"{budget:,} {unit} left", None)
        elif reason == "names":
            views[s.name] = SkillView(s.name, "name", 0, f"the names alone exceed {budget:,} {unit}: every "
                                      "description removed", line(s, 0))
        elif k == n:
            views[s.name] = SkillView(s.name, "whole", k, "fits" if reason == "fits" else
                                      "its whole description fitted its share", line(s, k))
        else:
            views[s.name] = SkillView(s.name, "cut" if k else "name", k, f"cut to {k} of {n} characters, the "
                                      f"{budget:,} {unit} shared one character at a time", line(s, k))
    used = sum(cost(x) for x in lines)
    return HarnessListing("codex", context_tokens, budget, unit, used, "by name (Codex's own order; usage plays no "
                          "part)", views, lines, CODEX_SOURCE)


def _round_robin(order: Sequence[Skill], description: Mapping[str, str], minimum: Sequence[int], room: int,
                 tokens: bool, line: Any) -> list[int | None]:
    """Codex's `render_lines_with_description_budget`: one character per skill per round while its cost fits."""
    given = [0] * len(order)
    current = [0] * len(order)
    sizes = [len(description[s.name]) for s in order]
    base_bytes = [len(line(s, 0).encode()) + 1 for s in order]
    prefix_bytes = [[0, *itertools.accumulate(len(ch.encode()) for ch in description[s.name])] for s in order]
    while True:
        changed = False
        for i in range(len(order)):
            if given[i] >= sizes[i]:
                continue
            k = given[i] + 1
            if tokens:  # the line with k characters is `base + k's bytes + 1` (the space before "(file:")
                nxt = -(-(base_bytes[i] + prefix_bytes[i][k] + 1) // 4) - minimum[i]
            else:
                nxt = k + 1
            delta = nxt - current[i]
            if delta <= room:
                given[i], current[i], room, changed = k, nxt, room - delta, True
        if not changed:
            return list(given)


def _implicit_allowed(skill: Skill) -> bool:
    """False when the skill's `agents/openai.yaml` says `policy: {allow_implicit_invocation: false}`."""
    file = skill.path.parent / "agents" / "openai.yaml"
    try:
        data = safeyaml.load(file.read_text(encoding="utf-8")) if file.is_file() else None
    except (OSError, ValueError, yaml.YAMLError, safeyaml.YamlRefused):
        return True
    policy = data.get("policy") if isinstance(data, dict) else None
    return not (isinstance(policy, dict) and policy.get("allow_implicit_invocation") is False)


def gemini_cli_listing(skills: SkillLoader | Iterable[Skill], context_tokens: int | None = None) -> HarnessListing:
    """Gemini CLI's listing: every skill with its whole description and location, no budget of its own.

    Source: `renderAgentSkills` in `packages/core/src/prompts/snippets.ts` of
    https://github.com/google-gemini/gemini-cli (one `<skill>` element per skill, no cut, no count limit).
    """
    catalog = list(skills.skills.values() if isinstance(skills, SkillLoader) else skills)
    lines = tuple(f"<skill><name>{s.name}</name><description>{s.description}</description>"
                  f"<location>{s.path.as_posix()}</location></skill>" for s in catalog)
    views = {s.name: SkillView(s.name, "whole", len(s.description), "Gemini CLI lists every description whole",
                               line) for s, line in zip(catalog, lines)}
    return HarnessListing("gemini-cli", context_tokens, 0, "characters", len("\n".join(lines)),
                          "the catalog's order", views, lines,
                          "google-gemini/gemini-cli packages/core/src/prompts/snippets.ts (renderAgentSkills)")


def harness_listing(harness: str, skills: SkillLoader | Iterable[Skill], context_tokens: int | None,
                    usage: Mapping[str, float] | None = None) -> HarnessListing:
    """The listing `harness` ("claude-code", "codex", "gemini-cli") builds; the spec sets no listing rule."""
    if harness == "claude-code":
        return claude_code_listing(skills, context_tokens, usage)
    if harness == "codex":
        return codex_listing(skills, context_tokens)
    if harness == "gemini-cli":
        return gemini_cli_listing(skills, context_tokens)
    raise ValueError(f"no listing rule for {harness!r}: use claude-code, codex or gemini-cli")


HARNESS_LABELS = {"claude-code": "Claude Code", "codex": "Codex", "gemini-cli": "Gemini CLI"}


def harness_survival(sizes: Sequence[int] = SIZES, harness: str = "claude-code", context_tokens: int | None = 200_000,
                     real: SkillLoader | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """For each size, the real skills plus that many synthetic ones listed by `harness_listing`: one row each.

    A row holds the harness's label, the context window, the synthetic and total skill counts, the budget with its
    unit, how much of it the listing uses, the count of each way the model sees a skill (`SEEN`) and its share
    (`whole_share`, …). `real` defaults to the workplace catalog.
    """
    real = SkillLoader.from_root(SKILLS_DIR / "workplace") if real is None else real
    rows = []
    for size in sizes:
        catalog = with_distractors(real, size, seed)
        listing = harness_listing(harness, catalog, context_tokens)
        total, counts = len(catalog.names), listing.counts
        rows.append({"harness": HARNESS_LABELS[harness], "context_tokens": context_tokens, "synthetic": size,
                     "skills": total, "budget": listing.budget, "unit": listing.unit, "used": listing.used,
                     **counts, **{f"{seen}_share": counts[seen] / total for seen in SEEN}})
    return rows

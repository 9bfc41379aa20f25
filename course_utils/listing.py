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
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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

"""Skill listings: the catalog each real harness gives the model once its skills outgrow the room it allows them.

A harness does not send a catalog of any size whole. Claude Code and Codex keep the skill listing within a budget
computed from the model's context window, and when the listing does not fit, descriptions give way first: cut
short, or gone so that only the skill's name is left; Codex then leaves skills out. Each harness's own rule is
one function (`claude_code_listing`, `codex_listing`, `gemini_cli_listing`, dispatched by `harness_listing`), which
says, per skill, what the model sees (`SEEN`) and why, the budget in the harness's own unit, and which order
decided who gives way (stated in words when no usage is known). `HarnessListing.loader` turns a listing back into
a `SkillLoader` for `selection.pick_by_model`; `harness_survival` counts, for catalogs of 10 to 10,000 synthetic
skills plus the real ones (`synthetic.with_distractors`), how the model sees them.

Each function's docstring gives its sources; where they stop, the choice made here is said as a choice (and
`docs/lab/audit.md` keeps how they were read).
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import yaml

from course_utils.skills import safeyaml
from course_utils.skills.paths import SKILLS_DIR
from course_utils.scale.synthetic import with_distractors
from course_utils.skills.skill import Skill, SkillLoader, catalog_line

SIZES = (10, 100, 1_000, 10_000)
"""The synthetic catalogs of lesson 10 (the real skills come on top)."""


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

    def loader(self, skills: SkillLoader) -> SkillLoader:
        """A `SkillLoader` of the listed skills of `skills` (the catalog this listing was built from), in the
        catalog's order, each description what the listing shows of its entry ("" for a name alone).

        Give it to `selection.pick_by_model`: the model reads the course's catalog lines of what this listing
        shows, and may call the load tool with any listed name and no other. For Claude Code that catalog is the
        listing's text; Codex's and Gemini CLI's lines also carry each skill's path, which the course's lines do not.
        Bodies are the skills' own.
        """
        return SkillLoader([replace(s, description=listed_entry(self.harness, s)[:self.views[s.name].chars])
                            for s in skills.skills.values() if self.views[s.name].line is not None])


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
    keep = {s.name for s in listed} if whole_cost <= budget else _kept_within(listed, ranked, lines, budget)
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


def _kept_within(listed: Sequence[Skill], ranked: Sequence[Skill], lines: Mapping[str, str], budget: int) -> set[str]:
    """The skills that keep their entry in a listing over `budget`: every name paid first, then each skill in
    `ranked` order while its entry fits, stopping at the first that does not."""
    used = len("\n".join(catalog_line(s.name, "") for s in listed))
    keep = set()
    for s in ranked:
        extra_cost = len(lines[s.name]) - len(catalog_line(s.name, ""))
        if used + extra_cost > budget:
            break
        used += extra_cost
        keep.add(s.name)
    return keep


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
        given, reason = _names_within(minimum, budget), "names"
    lines = tuple(line(s, k) for s, k in zip(order, given) if k is not None)
    unit = "tokens" if tokens else "characters"
    by_name = dict(zip((s.name for s in order), given))
    views = {s.name: _codex_view(s.name, allowed[s.name], by_name.get(s.name), len(description.get(s.name, "")),
                                 reason, f"{budget:,} {unit}", lambda k, s=s: line(s, k)) for s in catalog}
    used = sum(cost(x) for x in lines)
    return HarnessListing("codex", context_tokens, budget, unit, used, "by name (Codex's own order; usage plays no "
                          "part)", views, lines, CODEX_SOURCE)


def _names_within(minimum: Sequence[int], budget: int) -> list[int | None]:
    """Each line without its description, kept (0) in order while it fits, an oversized one skipped (None)."""
    given: list[int | None] = []
    used = 0
    for c in minimum:
        fits = used + c <= budget
        used += c if fits else 0
        given.append(0 if fits else None)
    return given


def _codex_view(name: str, allowed: bool, k: int | None, n: int, reason: str, room: str,
                line: Callable[[int], str]) -> SkillView:
    """What Codex shows of one skill given `k` of its `n` description characters (None: omitted), `room` the
    budget in words, `line(k)` its line."""
    if not allowed:
        return SkillView(name, "removed", 0, "policy.allow_implicit_invocation: false", None)
    if k is None:
        return SkillView(name, "omitted", 0, f"even its line without description exceeds the {room} left", None)
    if reason == "names":
        return SkillView(name, "name", 0, f"the names alone exceed {room}: every description removed", line(0))
    if k == n:
        return SkillView(name, "whole", k, "fits" if reason == "fits" else "its whole description fitted its share",
                         line(k))
    return SkillView(name, "cut" if k else "name", k, f"cut to {k} of {n} characters, the {room} shared one "
                     "character at a time", line(k))


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

"""Listing budgets (`course_utils.listing`): the presets' arithmetic, the three ways a listing gives way, and the
loader a listing hands to `pick_by_model`. No model: the decisions come from the fake client of the hybrid tests."""
from __future__ import annotations

from pathlib import Path

import pytest
from hybrid_fakes import fake_client
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils.listing import CLAUDE_CODE, CODEX, FATES, PRESETS, ListingBudget, render_listing, survival
from course_utils.paths import SKILLS_DIR
from course_utils.scale import with_distractors
from course_utils.selection import ACTIVATE, pick_by_model
from course_utils.skills import Skill, SkillLoader, catalog_line

WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace")


def skill(name: str, description: str) -> Skill:
    return Skill(name, description, f"# {name}\n\nThe body of {name}.", Path("test") / name / "SKILL.md")


def names_only(skills) -> str:
    return "\n".join(catalog_line(s.name, "") for s in skills)


@pytest.mark.parametrize("budget, context, chars", [
    (CLAUDE_CODE, 200_000, 8_000),  # "about 8,000 characters at 200k tokens"
    (CLAUDE_CODE, 1_000_000, 40_000),  # no cap: 1 % of 1M tokens at 4 characters a token
    (CLAUDE_CODE, None, 8_000),  # an unknown window counts as 200,000 tokens
    (CLAUDE_CODE, 8_192, 327),  # the local model's window
    (CODEX, 200_000, 16_000),  # 2 % = 4,000 tokens
    (CODEX, 272_000, 21_760),  # the 5,440-token budget of openai/codex#24299
    (CODEX, None, 8_000),  # the fallback only without a window
    (CLAUDE_CODE, 1, 1),  # never less than one character
    (ListingBudget("capped", 0.5, max_chars=100), 10_000, 100),
])
def test_budgets_compute_as_documented(budget, context, chars):
    assert budget.chars(context) == chars


def test_presets_are_the_two_harnesses():
    assert [b.name for b in PRESETS] == ["Claude Code", "Codex"]
    assert CLAUDE_CODE.entry_chars == 1_536 and CODEX.entry_chars is None


@pytest.mark.parametrize("budget", PRESETS)
def test_a_small_catalog_fits_whole(budget):
    listing = render_listing(WORKPLACE, budget, 200_000)
    assert listing.counts == {"whole": 14, "cut": 0, "name": 0, "dropped": 0}
    assert listing.text.splitlines() == [f"- {s.name}: {s.description}" for s in listing.entries]  # the catalog's lines
    assert sorted(listing.text.splitlines()) == sorted(WORKPLACE.catalog().splitlines())


def test_a_large_catalog_falls_back_to_names():
    catalog = with_distractors(WORKPLACE, 1_000)
    claude = render_listing(catalog, CLAUDE_CODE, 200_000)
    assert claude.counts == {"whole": 0, "cut": 0, "name": 1_014, "dropped": 0}
    assert claude.text == names_only(catalog.skills.values())  # every name, though over budget (the docs' "always")
    assert claude.over_budget
    codex = render_listing(catalog, CODEX, 200_000)
    assert codex.counts["whole"] == codex.counts["cut"] == 0 and codex.counts["dropped"] > 0
    assert len(codex.text) <= codex.budget_chars and not codex.over_budget


def test_claude_code_keeps_whole_descriptions_in_order_then_names():
    catalog = with_distractors(WORKPLACE, 100)
    listing = render_listing(catalog, CLAUDE_CODE, 200_000)
    fates = list(listing.fates.values())
    assert fates == sorted(fates, key=["whole", "name"].index)  # whole ones first, then names only
    assert [s.name for s in listing.entries] == catalog.names
    assert len(listing.text) <= 8_000


def test_the_first_description_that_does_not_fit_ends_the_whole_ones():
    a, b, c = skill("aa", "x" * 10), skill("bb", "y" * 50), skill("cc", "z")
    bare = len(names_only([a, b, c]))
    budget = ListingBudget("test", 1.0, chars_per_token=1.0)
    listing = render_listing([a, b, c], budget, bare + 12 + 3)  # room for a's description and c's, not b's
    assert listing.fates == {"aa": "whole", "bb": "name", "cc": "name"}


@pytest.mark.parametrize("length, fate", [(1_535, "whole"), (1_536, "whole"), (1_537, "cut"), (5_000, "cut")])
def test_the_per_entry_cut_is_exactly_the_limit(length, fate):
    listing = render_listing([skill("long", "d" * length)], CLAUDE_CODE, 1_000_000)
    assert listing.fates == {"long": fate}
    assert listing.entries[0].description == "d" * min(length, 1_536)
    assert listing.text == f"- long: {'d' * min(length, 1_536)}"


def test_codex_shares_the_room_equally():
    alpha, beta = skill("alpha-skill", "abcdef"), skill("beta-skill", "uvwxyz")
    room = len(names_only([alpha, beta])) + 2 * len(": ab")  # each line gets ": " and two characters
    listing = render_listing([beta, alpha], ListingBudget("share", 1.0, chars_per_token=1.0, overflow="share",
                                                          names_over_budget="drop", sort_by_name=True), room)
    assert listing.text == "- alpha-skill: ab\n- beta-skill: uv"
    assert list(listing.fates) == ["beta-skill", "alpha-skill"]  # the catalog's order; the listing's is by name
    assert listing.counts["cut"] == 2


def test_codex_gives_a_short_descriptions_unused_share_to_the_others():
    short, long = skill("short-skill", "x"), skill("long-skill", "abcdefghi")
    room = len(names_only([short, long])) + 3 + 3 + 5
    share = ListingBudget("share", 1.0, chars_per_token=1.0, overflow="share", names_over_budget="drop")
    listing = render_listing([short, long], share, room)
    assert [s.description for s in listing.entries] == ["x", "abcdef"]
    assert listing.fates == {"short-skill": "whole", "long-skill": "cut"}


def test_codex_drops_what_does_not_fit_and_keeps_scanning():
    long_name, short = skill("a-" + "very-" * 20 + "long-name", "d"), skill("b", "d")
    listing = render_listing([long_name, short], CODEX, None)  # 8,000 characters: both fit whole
    assert listing.counts["whole"] == 2
    tight = ListingBudget("tight", 1.0, chars_per_token=1.0, overflow="share", names_over_budget="drop")
    listing = render_listing([long_name, short], tight, len("- b"))
    assert listing.fates == {long_name.name: "dropped", "b": "name"}
    assert listing.text == "- b"


def test_the_listing_loader_offers_exactly_the_listed_names():
    catalog = with_distractors(WORKPLACE, 100)
    listing = render_listing(catalog, CODEX, 8_192)  # most skills dropped, the rest names only
    assert listing.counts["dropped"] > 0
    listed = [s.name for s in listing.entries]
    client = fake_client()
    decision = pick_by_model(client, listing.loader(), "How many vacation days do I have left?")
    config = client.models.requests[0]
    offered = config.tools[0].function_declarations[0].parameters.properties["name"].enum
    assert offered == listed
    assert listing.text in config.system_instruction and f"call {ACTIVATE}" in config.system_instruction
    assert decision.skill == listed[0] and decision.error is None
    assert listing.loader().load_skill(listed[0]).endswith("</skill>")
    dropped = next(n for n, fate in listing.fates.items() if fate == "dropped")
    assert listing.loader().load_skill(dropped).startswith("Error: unknown skill")


def test_survival_rows_add_up():
    rows = survival((10, 100), CLAUDE_CODE, 200_000, real=WORKPLACE)
    assert [r["skills"] for r in rows] == [24, 114]
    for row in rows:
        assert sum(row[f] for f in FATES) == row["skills"]
        assert sum(row[f"{f}_share"] for f in FATES) == pytest.approx(1.0)
        assert row["budget_chars"] == 8_000 and row["listing_chars"] <= 8_000


budgets = st.builds(
    ListingBudget, name=st.just("random"), context_fraction=st.floats(0.001, 1.0),
    chars_per_token=st.sampled_from([1.0, 4.0]), entry_chars=st.one_of(st.none(), st.integers(1, 300)),
    overflow=st.sampled_from(["whole-or-name", "share"]), names_over_budget=st.sampled_from(["keep", "drop"]),
    sort_by_name=st.booleans())
catalogs = st.lists(st.tuples(st.from_regex(r"[a-z]{1,12}", fullmatch=True),
                              st.text("abc de", min_size=1, max_size=400)),
                    max_size=25, unique_by=lambda pair: pair[0])


@settings(max_examples=150, deadline=None)
@given(catalogs, budgets, st.one_of(st.none(), st.integers(1, 20_000)))
def test_any_listing_keeps_its_budget_and_its_counts(pairs, budget, context):
    skills = [skill(name, description) for name, description in pairs]
    listing = render_listing(skills, budget, context)
    assert sum(listing.counts.values()) == len(skills)
    assert list(listing.fates) == [s.name for s in skills]
    if len(listing.text) > listing.budget_chars:  # only every name kept whatever it costs
        assert budget.names_over_budget == "keep" and listing.text == names_only(listing.entries)
        assert len(names_only(skills)) > listing.budget_chars
    original = {s.name: s.description for s in skills}
    for entry in listing.entries:
        assert original[entry.name].startswith(entry.description)
        assert budget.entry_chars is None or len(entry.description) <= budget.entry_chars
    assert len(listing.entries) == len(skills) - listing.counts["dropped"]

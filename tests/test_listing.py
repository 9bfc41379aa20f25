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
from course_utils.synthetic import with_distractors
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


# ------------------------------------------------------------------ each harness's own listing, computed by hand

from course_utils.listing import (  # noqa: E402
    SEEN,
    claude_code_listing,
    codex_listing,
    harness_listing,
    usage_score,
)

CLAUDE_FIXTURE = Path(__file__).parent / "fixtures" / "claude_code_skills"


def cc(name: str, description: str, **extra) -> Skill:
    return Skill(name, description, "Body.", Path("/s") / name / "SKILL.md", extra)


def views(listing) -> dict[str, tuple[str, int]]:
    return {name: (v.seen, v.chars) for name, v in listing.views.items()}


def test_claude_code_budget_is_one_percent_at_four_characters_a_token():
    assert claude_code_listing([], 200_000).budget == 8_000
    assert claude_code_listing([], None).budget == 8_000  # an unknown window counts as 200,000 tokens
    assert claude_code_listing([], 1_000_000).budget == 40_000
    assert claude_code_listing([], 2_500).budget == 100


def test_claude_code_by_hand_catalog_order_without_usage():
    # budget 100; names "- a", "- b", "- c" joined: 11 characters; ": " + 40 adds 42, ": " + 10 adds 12.
    # whole: 11 + 42 + 42 + 12 = 107 > 100. In catalog order: a -> 53, b -> 95, c -> 107 > 100: c by name.
    skills = [cc("a", "x" * 40), cc("b", "y" * 40), cc("c", "z" * 10)]
    listing = claude_code_listing(skills, 2_500)
    assert views(listing) == {"a": ("whole", 40), "b": ("whole", 40), "c": ("name", 0)}
    assert listing.text == f"- a: {'x' * 40}\n- b: {'y' * 40}\n- c" and listing.used == 95
    assert listing.order.startswith("no usage known")
    assert "name only" in listing.views["c"].reason


def test_claude_code_by_hand_the_least_used_lose_their_descriptions_first():
    # ranked c (5), b (1), a (0): c -> 11 + 12 = 23, b -> 65, a -> 107 > 100: a by name; lines keep catalog order.
    skills = [cc("a", "x" * 40), cc("b", "y" * 40), cc("c", "z" * 10)]
    listing = claude_code_listing(skills, 2_500, usage={"c": 5.0, "b": 1.0})
    assert views(listing) == {"a": ("name", 0), "b": ("whole", 40), "c": ("whole", 10)}
    assert listing.text == f"- a\n- b: {'y' * 40}\n- c: {'z' * 10}" and listing.order.startswith("by usage")
    assert usage_score(4, 7) == 2.0 and usage_score(4, 70) == pytest.approx(0.4) and usage_score(0, 0) == 0


def test_claude_code_by_hand_the_first_misfit_ends_the_descriptions():
    # a -> 53; b (": " + 90) would reach 145 > 100; c (": " + 5) would fit at 60 but comes after the cut-off.
    listing = claude_code_listing([cc("a", "x" * 40), cc("b", "y" * 90), cc("c", "z" * 5)], 2_500)
    assert views(listing) == {"a": ("whole", 40), "b": ("name", 0), "c": ("name", 0)}


def test_claude_code_by_hand_entries_removals_and_names_over_budget():
    long = cc("long", "d" * 1_500, when_to_use="w" * 100)  # 1,500 + " " + 100 = 1,601 -> cut at 1,536
    hidden = cc("deploy", "Deploys.", **{"disable-model-invocation": True})
    listing = claude_code_listing([long, hidden], 1_000_000)
    assert views(listing) == {"long": ("cut", 1_536), "deploy": ("removed", 0)}
    assert listing.views["deploy"].line is None and listing.views["deploy"].reason == "disable-model-invocation: true"
    assert listing.text == "- long: " + "d" * 1_500 + " " + "w" * 35
    tiny = claude_code_listing([cc("alpha", "x"), cc("beta", "y")], 100)  # budget 4: the names (15) exceed it
    assert tiny.text == "- alpha\n- beta" and tiny.counts["name"] == 2 and tiny.used > tiny.budget


def test_claude_code_listing_of_the_fixture_removes_the_user_only_skill():
    listing = harness_listing("claude-code", SkillLoader.from_root(CLAUDE_FIXTURE, harness="claude-code"), 200_000)
    assert listing.counts == {"whole": 2, "cut": 0, "name": 0, "removed": 1, "omitted": 0}
    assert listing.views["deploy"].seen == "removed"
    assert "Use when the user says" in listing.views["fix-issue"].line  # when_to_use follows the description


def test_codex_budget_is_two_percent_of_the_window_in_tokens():
    assert (codex_listing([], 272_000).budget, codex_listing([], 272_000).unit) == (5_440, "tokens")
    assert codex_listing([], 200_000).budget == 4_000 and codex_listing([], 99).budget == 1
    assert (codex_listing([], None).budget, codex_listing([], None).unit) == (8_000, "characters")


def two_codex(description: str = "abcdefgh") -> list[Skill]:
    return [cc("bb", description), cc("aa", description)]


PATHS = {"aa": "p", "bb": "p"}


def test_codex_by_hand_characters_shared_round_robin():
    # codex-rs render.rs's own case: lines without descriptions cost m; budget m + 6 characters; the first
    # character of a description costs 2 (with its space), each next one 1: "ab" and "uv" (3 each).
    alpha, beta = cc("alpha-skill", "abcdef"), cc("beta-skill", "uvwxyz")
    m = len("- alpha-skill: (file: /s/alpha-skill/SKILL.md)\n- beta-skill: (file: /s/beta-skill/SKILL.md)\n")
    listing = codex_listing([beta, alpha], None, budget=m + 6)
    assert listing.lines == ("- alpha-skill: ab (file: /s/alpha-skill/SKILL.md)",
                             "- beta-skill: uv (file: /s/beta-skill/SKILL.md)")
    assert views(listing) == {"beta-skill": ("cut", 2), "alpha-skill": ("cut", 2)}


def test_codex_by_hand_a_short_description_leaves_its_share_to_the_others():
    short, long = cc("short-skill", "x"), cc("long-skill", "abcdefghi")
    m = len("- short-skill: (file: /s/short-skill/SKILL.md)\n- long-skill: (file: /s/long-skill/SKILL.md)\n")
    listing = codex_listing([short, long], None, budget=m + 11)  # x takes 2, abcdefgh takes 2 + 7 = 9
    assert views(listing) == {"short-skill": ("whole", 1), "long-skill": ("cut", 8)}


@pytest.mark.parametrize("budget, expected", [
    # "- aa: (file: p)" + newline: 16 bytes = 4 tokens; whole "- aa: abcdefgh (file: p)" + newline: 25 bytes = 7.
    (14, {"aa": ("whole", 8), "bb": ("whole", 8)}),  # 7 + 7 fits
    # room 10 - 8 = 2 tokens. A line with k characters has 16 + k + 1 bytes: k = 1..3 cost 5 tokens (+1),
    # k = 4..7 cost 6 (+2). Round 1: aa +1, bb +1 (room 0); rounds 2-3 add k = 2, 3 for free; k = 4 needs 1.
    (10, {"aa": ("cut", 3), "bb": ("cut", 3)}),
    # room 1: aa takes it in round 1, bb cannot; aa then grows free to 3 characters, bb stays at 0.
    (9, {"aa": ("cut", 3), "bb": ("name", 0)}),
    (8, {"aa": ("name", 0), "bb": ("name", 0)}),  # room 0: nothing but free characters, and the first is not free
    # names alone 8 > 7: every description removed; aa (first by name) costs 4 and fits, bb would reach 8.
    (7, {"aa": ("name", 0), "bb": ("omitted", 0)}),
])
def test_codex_by_hand_tokens(budget, expected):
    listing = codex_listing(two_codex(), 272_000, paths=PATHS, budget=budget)
    assert views(listing) == {"bb": expected["bb"], "aa": expected["aa"]}
    assert listing.used <= budget and listing.unit == "tokens"
    assert listing.lines[0].startswith("- aa:")  # listed by name


def test_codex_keeps_scanning_after_an_oversized_line_and_honours_its_policy(tmp_path):
    big = cc("a-" + "long-" * 20 + "name", "d")
    small = cc("b", "d")
    listing = codex_listing([big, small], None, paths={big.name: "p", "b": "p"}, budget=len("- b: (file: p)\n"))
    assert views(listing) == {big.name: ("omitted", 0), "b": ("name", 0)}
    folder = tmp_path / "ship"
    (folder / "agents").mkdir(parents=True)
    (folder / "agents" / "openai.yaml").write_text("policy:\n  allow_implicit_invocation: false\n")
    ship = Skill("ship", "Ships.", "Body.", folder / "SKILL.md")
    listing = codex_listing([ship, small], 272_000)
    assert listing.views["ship"].seen == "removed" and len(listing.lines) == 1


def test_harness_listing_names_every_rule_and_refuses_the_spec():
    skills = [cc("a", "x")]
    assert harness_listing("gemini-cli", skills, None).counts["whole"] == 1
    assert set(harness_listing("codex", skills, 272_000).counts) == set(SEEN)
    with pytest.raises(ValueError, match="no listing rule for 'spec'"):
        harness_listing("spec", skills, 200_000)


@settings(max_examples=100, deadline=None)
@given(catalogs, st.integers(1, 400), st.booleans())
def test_any_codex_listing_keeps_its_budget(pairs, budget, tokens):
    skills = [skill(name, description) for name, description in pairs]
    listing = codex_listing(skills, 272_000 if tokens else None, budget=budget)
    assert listing.used <= budget
    assert sum(listing.counts.values()) == len(skills)
    for s in skills:
        view = listing.views[s.name]
        assert (view.line is None) == (view.seen in ("removed", "omitted"))
        assert view.chars <= len(" ".join(s.description.split()))


def test_harness_survival_rows_add_up():
    from course_utils.listing import harness_survival
    for harness in ("claude-code", "codex"):
        rows = harness_survival((10, 1_000), harness, 200_000, real=WORKPLACE)
        assert [r["skills"] for r in rows] == [24, 1_014]
        for row in rows:
            assert sum(row[s] for s in SEEN) == row["skills"]
            assert sum(row[f"{s}_share"] for s in SEEN) == pytest.approx(1.0)
    codex = harness_survival((1_000,), "codex", 200_000, real=WORKPLACE)[0]
    assert codex["budget"] == 4_000 and codex["unit"] == "tokens" and codex["omitted"] > 0 and codex["used"] <= 4_000

"""Each harness's listing (`scale.listing`): the budgets' arithmetic, hand-computed cases from each algorithm's
source, and the loader a listing hands to `pick_by_model`. No model: the decisions come from the fake client of the
hybrid tests."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers.hybrid_fakes import fake_client
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils.scale.listing import (
    SEEN,
    claude_code_listing,
    codex_listing,
    harness_listing,
    usage_score,
)
from course_utils.skills.paths import SKILLS_DIR
from course_utils.scale.synthetic import with_distractors
from course_utils.selection.pick import ACTIVATE, pick_by_model
from course_utils.skills.skill import Skill, SkillLoader, catalog_line
from helpers.paths import FIXTURES

WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace")


def skill(name: str, description: str) -> Skill:
    return Skill(name, description, f"# {name}\n\nThe body of {name}.", Path("test") / name / "SKILL.md")


def names_only(skills) -> str:
    return "\n".join(catalog_line(s.name, "") for s in skills)


def test_a_small_catalog_fits_whole():
    listing = claude_code_listing(WORKPLACE, 200_000)
    assert listing.counts == {"whole": 14, "cut": 0, "name": 0, "removed": 0, "omitted": 0}
    assert listing.text == WORKPLACE.catalog()  # the catalog's own lines, in its order


def test_a_large_catalog_falls_back_to_names():
    catalog = with_distractors(WORKPLACE, 1_000)
    claude = claude_code_listing(catalog, 200_000)
    assert claude.counts == {"whole": 0, "cut": 0, "name": 1_014, "removed": 0, "omitted": 0}
    assert claude.text == names_only(catalog.skills.values())  # every name, though over budget (the docs' "always")
    assert claude.used > claude.budget


def test_claude_code_keeps_whole_descriptions_in_order_then_names():
    catalog = with_distractors(WORKPLACE, 100)
    listing = claude_code_listing(catalog, 200_000)
    seen = [v.seen for v in listing.views.values()]
    assert seen == sorted(seen, key=["whole", "name"].index)  # whole ones first, then names only
    assert list(listing.views) == catalog.names and listing.used <= 8_000


@pytest.mark.parametrize("length, seen", [(1_535, "whole"), (1_536, "whole"), (1_537, "cut"), (5_000, "cut")])
def test_the_per_entry_cut_is_exactly_the_limit(length, seen):
    listing = claude_code_listing([skill("long", "d" * length)], 1_000_000)
    assert (listing.views["long"].seen, listing.views["long"].chars) == (seen, min(length, 1_536))
    assert listing.text == f"- long: {'d' * min(length, 1_536)}"


def test_the_listing_loader_offers_exactly_the_listed_names():
    catalog = with_distractors(WORKPLACE, 100)
    listing = codex_listing(catalog, 8_192)  # a budget of 163 tokens: most skills left out, the rest names only
    assert listing.counts["omitted"] > 0 and listing.counts["name"] > 0
    loader = listing.loader(catalog)
    listed = [name for name, v in listing.views.items() if v.line is not None]
    client = fake_client()
    decision = pick_by_model(client, loader, "How many vacation days do I have left?")
    config = client.models.requests[0]
    offered = config.tools[0].function_declarations[0].parameters.properties["name"].enum
    assert offered == listed == loader.names
    assert names_only(loader.skills.values()) in config.system_instruction
    assert f"call {ACTIVATE}" in config.system_instruction
    assert decision.skill == listed[0] and decision.error is None
    assert loader.load_skill(listed[0]).endswith("</skill>")
    omitted = next(n for n, v in listing.views.items() if v.seen == "omitted")
    assert loader.load_skill(omitted).startswith("Error: unknown skill")


def test_the_claude_code_loader_reads_the_listing_text():
    catalog = with_distractors(WORKPLACE, 100)
    listing = claude_code_listing(catalog, 200_000)
    assert listing.loader(catalog).catalog() == listing.text


catalogs = st.lists(st.tuples(st.from_regex(r"[a-z]{1,12}", fullmatch=True),
                              st.text("abc de", min_size=1, max_size=400)),
                    max_size=25, unique_by=lambda pair: pair[0])


@settings(max_examples=150, deadline=None)
@given(catalogs, st.one_of(st.none(), st.integers(1, 20_000)))
def test_any_claude_code_listing_keeps_its_budget_and_its_counts(pairs, context):
    skills = [skill(name, description) for name, description in pairs]
    listing = claude_code_listing(skills, context)
    assert sum(listing.counts.values()) == len(skills) and list(listing.views) == [s.name for s in skills]
    assert listing.used == len(listing.text)
    if listing.used > listing.budget:  # only when the names alone are over budget: every name kept
        assert listing.text == names_only(skills) and len(names_only(skills)) > listing.budget
    for s, line in zip(skills, listing.lines):
        assert catalog_line(s.name, s.description).startswith(line)


# ------------------------------------------------------------------ each harness's own listing, computed by hand

CLAUDE_FIXTURE = FIXTURES / "claude_code_skills"


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
    from course_utils.scale.listing import harness_survival
    for harness in ("claude-code", "codex"):
        rows = harness_survival((10, 1_000), harness, 200_000, real=WORKPLACE)
        assert [r["skills"] for r in rows] == [24, 1_014]
        for row in rows:
            assert sum(row[s] for s in SEEN) == row["skills"]
            assert sum(row[f"{s}_share"] for s in SEEN) == pytest.approx(1.0)
    codex = harness_survival((1_000,), "codex", 200_000, real=WORKPLACE)[0]
    assert codex["budget"] == 4_000 and codex["unit"] == "tokens" and codex["omitted"] > 0 and codex["used"] <= 4_000


def test_lesson_10s_recorded_decisions_are_of_its_listing_and_queries():
    """Lesson 10 reads its 30 decisions on Claude Code's listing of 114 skills from a record when its backend made
    them on the same prompt: the record names the listing's system instruction by its SHA-256, which must be the
    listing this code builds, and holds the lesson's queries in order; its counts follow from its records."""
    import json

    from course_utils.evaluation.outcomes import Outcome, Report, evaluate
    from course_utils.skills.paths import DATA_DIR
    from course_utils.skills.queries import load_queries
    from scripts.lab.measure import LISTING_DIR, LISTING_FILE, crowded_listing

    record = json.loads((LISTING_DIR / LISTING_FILE).read_text(encoding="utf-8"))
    listed, digest = crowded_listing()
    assert len(listed.names) == 114
    assert record["system_instruction_sha256"] == digest, "the listing changed: run measure listing-decisions again"
    outcomes = [Outcome.from_record(r) for r in record["report"]["records"]]
    assert [o.query for o in outcomes] == load_queries(DATA_DIR / "trigger_eval.yaml", listed.names)
    ignore = {"seconds_per_decision"}
    assert ({k: v for k, v in evaluate("listing", outcomes).to_dict().items() if k not in ignore}
            == {k: v for k, v in Report.from_dict(record["report"]).to_dict().items() if k not in ignore})

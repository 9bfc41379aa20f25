"""Lesson 11's description edit: the false-trigger counts, the choice rule, the paired sentence and the records.
Fast: no model, no kernel."""
from __future__ import annotations

from course_utils.evaluation import description_fix as fix
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.stats import SIGNIFICANCE, mcnemar_exact

T = fix.TARGET


def _d(query, expected, decided):
    return fix.Decided(query, expected, "en", decided)


def test_a_false_trigger_of_the_target_needs_no_skill_or_another_one():
    assert _d("a", None, T).false_trigger and _d("b", "x", T).false_trigger
    assert not _d("c", T, T).false_trigger and not _d("d", None, "x").false_trigger


def test_tally_counts_what_the_edit_fixes_makes_and_loses():
    original = [_d("a", None, T), _d("b", None, None), _d("c", T, T), _d("d", "x", T)]
    edited = [_d("a", None, None), _d("b", None, T), _d("c", T, None), _d("d", "x", T)]
    t = fix.tally("e", "text", original, edited)
    counts = (t.false_triggers, t.original_false_triggers, t.fixed, t.made, t.lost_true_triggers, t.moved)
    assert counts == (2, 2, 1, 1, 1, 3)


def test_the_rule_takes_the_fewest_false_triggers_then_fewer_lost_then_shorter():
    a, b, c = (fix.Tally("a", 300, 2, 3, 1, 0, 1, 2), fix.Tally("b", 200, 2, 3, 1, 0, 0, 2),
               fix.Tally("c", 100, 3, 3, 0, 0, 0, 0))
    assert fix.choose([a, b, c]).name == "b"
    assert fix.choose([a, fix.Tally("d", 250, 2, 3, 1, 0, 1, 2)]).name == "d"
    assert fix.fixes_any(b) and not fix.fixes_any(c)


def test_the_paired_sentence_comes_out_both_ways_and_says_how_many_would_decide():
    assert "the edit makes fewer false triggers, a finding" in fix.paired_sentence(6, 0, 12)
    undecided = fix.paired_sentence(2, 0, 12)
    needed = fix.discordant_needed(2, 0)
    assert f"{needed} queries on which the two differ would decide it" in undecided
    assert mcnemar_exact(needed, 0) < SIGNIFICANCE <= mcnemar_exact(needed - 1, 0)
    assert "no number of queries would show the edit better" in fix.paired_sentence(0, 0, 12)
    assert "no number" in fix.paired_sentence(1, 2, 12)


def test_the_candidates_edit_only_the_target_description(tmp_path):
    root = SKILLS_DIR / "workplace"
    for name, description in fix.CANDIDATES.items():
        loader = SkillLoader.from_root(fix.edited_catalog(root, description, tmp_path / name.replace(" ", "-")))
        original = SkillLoader.from_root(root)
        assert loader.skills[T].description == description
        assert all(loader.skills[s].description == original.skills[s].description for s in original.names if s != T)


def test_the_held_out_file_holds_near_misses_only_and_the_dev_queries_none_of_its_queries():
    names = SkillLoader.from_root(SKILLS_DIR / "workplace").names
    held = load_queries(DATA_DIR / fix.HELD_OUT_FILE, names)
    assert held and all(q.expected is None for q in held)
    assert not {q.query for q in held} & {q.query for q in fix.dev_queries(names)}


def test_the_records_hold_the_choice_the_rule_makes_from_the_dev_record():
    _, dev = fix.read_record(fix.RECORD_DIR / "dev.json")
    meta, held = fix.read_record(fix.RECORD_DIR / "held_out.json")
    chosen = fix.choose([fix.tally(n, fix.CANDIDATES[n], dev["original"], dev[n]) for n in fix.CANDIDATES])
    assert meta["chosen"] == chosen.name and set(held) == {"original", chosen.name}
    assert meta["candidates"] == fix.CANDIDATES
    assert [d.query for d in held["original"]] == [q.query for q in load_queries(DATA_DIR / fix.HELD_OUT_FILE)]

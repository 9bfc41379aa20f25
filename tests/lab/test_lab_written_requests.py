"""Requests the model writes for a catalog: parsed, saved by the catalog's hash, read back, a failure named, and the
scorer's rule fitted on them with no labelled query. No model here."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from google.genai import types

from scripts.lab import written_requests as requests
from scripts.lab.written_requests import (WrittenRequests, fit_written, parse_numbered, prepare, sampled,
                                        with_and_without)
from course_utils.selection.scorer import ScoringSelector
from course_utils.skills.skill import SkillLoader

SKILLS = {"alpha": "Writes alpha reports.", "beta": "Checks beta invoices.", "gamma": "Plans gamma trips."}


class Writer:
    """Answers a writing prompt with numbered requests naming the skill's description, or junk for `mute`."""

    def __init__(self, mute: str = "") -> None:
        self.mute, self.prompts = mute, []

    def generate_content(self, model: str, contents: str, config: types.GenerateContentConfig):
        self.prompts.append(contents)
        text = "Sure!" if self.mute and self.mute in contents else (
            f"1. Please help, {contents.splitlines()[0]}\n2) « Aidez-moi avec ceci, merci beaucoup »\n"
            "3. extra line here")
        return types.GenerateContentResponse(candidates=[types.Candidate(
            content=types.Content(role="model", parts=[types.Part.from_text(text=text)]))])


@pytest.fixture
def loader(tmp_path) -> SkillLoader:
    root = tmp_path / "skills"
    for name, description in SKILLS.items():
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    return SkillLoader.from_root(root)


def test_numbered_lines_are_read_and_the_rest_dropped():
    text = "Here you go:\n1. I need my **expense** report checked.\n2) \"Vérifie ma note de frais\"\n3. ok\n- four"
    assert parse_numbered(text) == ["I need my **expense** report checked.", "Vérifie ma note de frais"]


def test_a_large_catalog_is_sampled_the_same_way_every_time():
    names = [f"skill-{i}" for i in range(100)]
    assert sampled(names, 10) == sampled(list(reversed(names)), 10) and len(set(sampled(names, 10))) == 10
    assert sampled(names[:5], 10) == names[:5]


def test_requests_are_written_once_saved_by_hash_and_read_back(loader, tmp_path):
    writer = Writer()
    written = prepare(SimpleNamespace(models=writer), loader, tmp_path / "requests")
    assert set(written.requests) == set(SKILLS) and all(len(r) == 2 for r in written.requests.values())
    assert [q.lang for q in written.labelled()][:2] == ["en", "fr"]
    again = prepare(SimpleNamespace(models=Writer()), loader, tmp_path / "requests")
    assert again.requests == written.requests and len(writer.prompts) == 3
    assert len(list((tmp_path / "requests").glob("*.json"))) == 1


def test_nothing_is_written_into_the_skills_folder(loader, tmp_path):
    root = loader.skills["alpha"].path.parent.parent
    before = sorted(root.rglob("*"))
    prepare(SimpleNamespace(models=Writer()), loader, tmp_path / "requests")
    assert sorted(root.rglob("*")) == before


def test_a_changed_description_is_written_again(loader, tmp_path):
    prepare(SimpleNamespace(models=Writer()), loader, tmp_path / "requests")
    path = loader.skills["beta"].path
    path.write_text(path.read_text().replace("Checks beta invoices.", "Matches beta invoices to orders."))
    writer = Writer()
    written = prepare(SimpleNamespace(models=writer), SkillLoader.from_root(path.parent.parent), tmp_path / "requests")
    assert len(writer.prompts) == 3 and "Matches beta invoices" in written.requests["beta"][0]


def test_a_skill_whose_requests_cannot_be_written_is_named_and_the_rest_go_on(loader, tmp_path):
    written = prepare(SimpleNamespace(models=Writer(mute="Plans gamma")), loader, tmp_path / "requests")
    assert set(written.requests) == {"alpha", "beta"}
    assert "no numbered request" in written.failed["gamma"] and "Sure!" in written.failed["gamma"]


def test_a_record_of_another_catalog_or_a_broken_file_is_not_read(tmp_path):
    path = tmp_path / "r.json"
    WrittenRequests("key-a", "m", {"alpha": ["x y z"]}).save(path)
    assert WrittenRequests.load(path, "key-a").requests == {"alpha": ["x y z"]}
    assert WrittenRequests.load(path, "key-b") is None
    path.write_text("{broken")
    assert WrittenRequests.load(path, "key-a") is None


class Shortlist:
    """Ranks the skills in SKILLS order, whatever the query."""

    names = list(SKILLS)

    def top(self, query, k):
        return [(name, 1.0 - i / 10) for i, name in enumerate(SKILLS)][:k]


class Scorer:
    """P(yes) 0.9 for the skill a request was written for, 0.55 for any other; counts what it is asked."""

    def __init__(self) -> None:
        self.asked = []

    def generate_content(self, model: str, contents: list, config: types.GenerateContentConfig):
        skill = config.system_instruction.split("Skill: ")[1].split("\n")[0]
        query = contents[0].parts[0].text
        self.asked.append((skill, query))
        p = 0.9 if f"for {skill}" in query else 0.55
        logprobs = types.LogprobsResult(top_candidates=[types.LogprobsResultTopCandidates(candidates=[
            types.LogprobsResultCandidate(token=t, log_probability=math.log(v))
            for t, v in (("yes", p), ("no", 1 - p))])])
        return types.GenerateContentResponse(candidates=[types.Candidate(
            content=types.Content(role="model", parts=[types.Part.from_text(text="yes")]), logprobs_result=logprobs)])


def test_the_rule_fitted_on_written_requests_separates_them_from_their_near_misses(loader):
    scorer = Scorer()
    pick = ScoringSelector(SimpleNamespace(models=scorer), loader, Shortlist(), k=2)
    written = WrittenRequests("k", "m", {"alpha": ["a request for alpha"], "beta": ["a request for beta"]})
    rule = fit_written(pick, written)
    assert rule.threshold > 0.55
    assert rule.decide(pick.shortlisted("a request for alpha")[0]) == "alpha"
    assert rule.decide(with_and_without(pick, "a request for alpha", "alpha")[1]) is None
    assert len(scorer.asked) == 3 + 3 + 2 + 3  # k + 1 skills once per written request, then the two checks


def test_a_written_request_whose_skill_is_not_shortlisted_asks_its_shortlist_once(loader):
    scorer = Scorer()
    pick = ScoringSelector(SimpleNamespace(models=scorer), loader, Shortlist(), k=1)
    whole, without = with_and_without(pick, "a request for gamma", "gamma")
    assert [s.skill for s in whole] == [s.skill for s in without] == ["alpha"] and len(scorer.asked) == 1


def test_the_writer_is_asked_for_the_description_only(loader):
    writer = Writer()
    requests.write_requests(SimpleNamespace(models=writer), loader.skills["alpha"])
    assert "Writes alpha reports." in writer.prompts[0] and "Body." not in writer.prompts[0]

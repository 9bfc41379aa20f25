"""`python -m scripts.lab measure …` on the scripted stand-in: each command runs on one or two items into a
temporary folder and writes the record the lessons read, with its fields. Fast: no model file is opened.

The bakery command's two refusals are tested too: a record is never overwritten, and the test split is not run
when a record already holds a run of one of its requests.
"""
from __future__ import annotations

import json

import httpx

from course_utils.evaluation.bakery_eval import Checklist, load_requests, read_record
from scripts.lab import LAB_RECORDS, measure
from scripts.lab.cli import build_parser
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.lessons.scripted import ScriptedBackend
from course_utils.skills.skill import SkillLoader

BAKERY = SkillLoader.from_root(SKILLS_DIR / "bakery")
WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace")


def stand_in(loader: SkillLoader, texts: list[str], backend: type[ScriptedBackend] = ScriptedBackend):
    """A scripted client that answers every prompt in words (it declines to call anything)."""
    return backend(list(loader.skills.values()), {t: [0.0] * len(loader.skills) for t in texts},
                   lambda query, offered, functions: None).client()


def dev_requests(n: int) -> list:
    return load_requests(split="dev")[:n]


def dev_queries(n: int) -> list[str]:
    return [q.query for name in measure.DEV_QUERY_FILES
            for q in load_queries(DATA_DIR / "dev" / name, WORKPLACE.names)[:n]]


def test_the_commands_are_registered():
    parser = build_parser()
    for argv in (["measure", "bakery", "dev"], ["measure", "abstention", "model"], ["measure", "native-format"]):
        assert parser.parse_args(argv).func


def commands(parser) -> set[str]:
    """The subcommands a command line's parser offers."""
    return {name for action in parser._subparsers._group_actions for name in action.choices}


def test_the_development_commands_are_the_labs_not_the_learners():
    """`python -m course_utils --help` lists the learner's commands; bench, fuzz, measure, the scorer's: the lab's."""
    from course_utils.cli.main import build_parser as learner

    assert commands(learner()) == {"validate", "catalog", "run-notebooks", "eval-trigger", "models", "audit",
                                   "who-picks"}
    assert commands(build_parser()) == {"bench", "fuzz", "measure", "scorer-dev", "scorer-options",
                                           "scorer-written"}


def test_measure_bakery_sends_dev_records_to_the_lab_and_test_records_to_the_lessons():
    assert measure.BAKERY_DIR == DATA_DIR / "measured" / "bakery"  # lesson 04 reads the test split's record
    assert measure.BAKERY_DEV_DIR == LAB_RECORDS / "bakery"
    assert measure.NATIVE_FORMAT_DIR == LAB_RECORDS


def test_measure_bakery_writes_a_record(tmp_path, capsys):
    client = stand_in(BAKERY, [r.text for r in dev_requests(2)])
    code = measure.main(["bakery", "dev", "--limit", "2", "--modes", "on-demand,all", "--label", "smoke",
                         "--out", str(tmp_path)], client=client)
    assert code == 0
    path = tmp_path / "dev_smoke.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert set(record) == {"backend", "model", "date", "split", "seeds", "seeding", "temperature", "max_turns",
                           "max_output_tokens", "stop_at_tools", "none_choice", "tool_policy", "checklists"}
    assert (record["backend"], record["split"], record["seeds"], record["tool_policy"]) == ("scripted", "dev", [None],
                                                                                           "one-step-at-a-time")
    settings, checklists = read_record(path)  # what lesson 04 reads
    assert [(c.mode, c.request) for c in checklists] == [(m, r.id) for m in ("on-demand", "all")
                                                          for r in dev_requests(2)]
    assert "mode" in capsys.readouterr().out  # the summary


def test_measure_bakery_samples_with_the_tool_policy(tmp_path):
    client = stand_in(BAKERY, [r.text for r in dev_requests(1)])
    assert measure.main(["bakery", "dev", "--limit", "1", "--samples", "2", "--temperature", "0.3",
                         "--tool-policy", "one-step-at-a-time", "--out", str(tmp_path)], client=client) == 0
    record = json.loads((tmp_path / "dev.json").read_text(encoding="utf-8"))
    assert (record["seeds"], record["temperature"], record["seeding"], record["tool_policy"]) == (
        [1, 2], 0.3, "per request", "one-step-at-a-time")
    assert len(record["checklists"]) == 2


def test_measure_bakery_never_overwrites_a_record(tmp_path, capsys):
    (tmp_path / "dev_smoke.json").write_text("{}", encoding="utf-8")
    code = measure.main(["bakery", "dev", "--limit", "1", "--label", "smoke", "--out", str(tmp_path)],
                        client=stand_in(BAKERY, []))
    assert code == 2
    assert "never overwritten" in capsys.readouterr().err
    assert (tmp_path / "dev_smoke.json").read_text(encoding="utf-8") == "{}"


def test_measure_bakery_refuses_a_second_look_at_the_test_split(tmp_path, capsys):
    test_request = load_requests(split="test")[0]
    earlier = Checklist(request=test_request.id, mode="on-demand", sample=0, skills=[], right_skill=False,
                        loaded_twice=False, calendar_right=None, facts={}, answered=False, model_calls=1,
                        prompt_tokens=0, seconds=0.0, answer="")
    record = {"split": "test", "checklists": [earlier.to_dict()]}
    (tmp_path / "test_earlier.json").write_text(json.dumps(record), encoding="utf-8")
    code = measure.main(["bakery", "test", "--label", "again", "--out", str(tmp_path)],
                        client=stand_in(BAKERY, [test_request.text]))
    assert code == 2
    assert "a test split is run once" in capsys.readouterr().err
    assert not (tmp_path / "test_again.json").exists()


def test_measure_abstention_writes_a_report_per_technique(tmp_path, capsys):
    client = stand_in(WORKPLACE, dev_queries(1))
    code = measure.main(["abstention", "model", "none-option", "--limit", "1", "--out", str(tmp_path)],
                        client=client)
    assert code == 0
    for name in ("model", "none-option"):
        payload = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert set(payload) == {"recorded", "backend", "generation_model", "decoding", "queries", "report"}
        assert payload["queries"] == ["data/dev/trigger_dev.yaml", "data/dev/trigger_dev_fr.yaml"]
        assert payload["report"]["selector"] == name and payload["report"]["queries"] == 2
    assert "none-option" in capsys.readouterr().out  # the comparison table


def test_measure_abstention_refuses_an_unknown_technique(tmp_path, capsys):
    assert measure.main(["abstention", "telepathy", "--out", str(tmp_path)], client=stand_in(WORKPLACE, [])) == 2
    assert "unknown technique telepathy" in capsys.readouterr().err


class WithCandidates(ScriptedBackend):
    """The stand-in, also answering the first token's top candidates (as the local backend does on request)."""

    def handle(self, request: httpx.Request) -> httpx.Response:
        response = super().handle(request)
        body = response.json()
        for candidate in body.get("candidates", []):
            candidate["logprobsResult"] = {"topCandidates": [{"candidates": [
                {"token": "{", "logProbability": -0.1}, {"token": measure.TOOL_CALL, "logProbability": -2.5}]}]}
        return httpx.Response(response.status_code, json=body)


def test_measure_native_format_writes_its_record(tmp_path, capsys):
    texts = dev_queries(1) + [r.text for r in dev_requests(1)]
    client = stand_in(WORKPLACE, texts, WithCandidates)
    assert measure.main(["native-format", "--limit", "1", "--out", str(tmp_path)], client=client) == 0
    record = json.loads((tmp_path / measure.NATIVE_FORMAT_FILE).read_text(encoding="utf-8"))
    assert set(record) == {"recorded", "backend", "model", "candidates", "summary", "selection", "bakery"}
    assert record["summary"]["prompts"] == 3 and record["summary"]["tool_call_in_top_20"] == 3
    assert [len(record["selection"]), len(record["bakery"])] == [2, 1]
    assert record["selection"][0]["tool_call_rank"] == 2 and record["summary"]["top_1"] == ["{"]
    import course_utils.backend.local.app as app

    assert app.tools_prompt is not measure.qwen_tools_prompt  # the backend's own wording is back

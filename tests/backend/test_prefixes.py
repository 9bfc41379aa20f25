"""Saved prompt prefixes (`course_utils.backend.local.prefixes`), and when `LocalLLM` saves and restores them.

Model-free: `LocalLLM`'s llama.cpp calls are replaced by fakes that record what would be computed, saved
and restored. `tests/backend/test_determinism.py` checks with the real model that a restored prefix decodes
exactly as a computed one.
"""
from __future__ import annotations

import os
import time

import pytest

from course_utils.backend.local import prefixes
from course_utils.backend.local.llm import LLMError, LocalLLM, Refused
from course_utils.backend.local.prefixes import PrefixFolder, prefix_dir, prefix_name
from helpers.chat_models import SENTINEL, qwen_model
from helpers.chat_models import render_qwen

SYSTEM = "You pick skills.\n\n" + "- a-skill: does a thing\n" * 120  # longer than MIN_PREFIX_CHARS


class FakeServer:
    """llama.cpp replaced: `computed` lists the prompts computed, `slots` the save/restore calls."""

    build = "test-build"

    def __init__(self, folder: PrefixFolder | None, refuse_restore: bool) -> None:
        self.folder, self.refuse_restore = folder, refuse_restore
        self.computed: list[str] = []
        self.slots: list[tuple[str, str]] = []

    def complete(self, request: dict) -> dict:
        self.computed.append(request["prompt"])
        return {"choices": [{"text": ""}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}

    def slot(self, action: str, filename: str) -> None:
        self.slots.append((action, filename))
        if action == "save":
            (self.folder.folder / filename).write_bytes(b"kv of " + filename.encode())
        elif self.refuse_restore == "unreachable":
            raise LLMError("llama.cpp's loopback listener at 'http://127.0.0.1:1' did not answer POST /slots/0")
        elif self.refuse_restore:
            raise Refused("llama.cpp refused POST /slots/0?action=restore: 400 invalid slot save file")


class FakeServerLLM(LocalLLM):
    """A LocalLLM talking to a `FakeServer`; `computed` and `slots` are the server's."""

    def __init__(self, folder: PrefixFolder | None, refuse_restore: bool = False) -> None:
        super().__init__(qwen_model(), FakeServer(folder, refuse_restore), folder)
        self.computed, self.slots = self.server.computed, self.server.slots

    def ask(self, query: str, system: str = SYSTEM) -> list[str]:
        """Prefill one decision's prompt; returns its checkpoint prefixes."""
        prompt = self.model.template.prompt([{"role": "system", "content": system}, {"role": "user", "content": query}])
        self._prefill(prompt, SENTINEL)
        self._dirty = True  # the answer
        return [prompt.text[:cut] for cut in prompt.cuts]


def system_computed(llm: FakeServerLLM) -> bool:
    """Some piece of the system message was computed (not restored)."""
    return any("<|im_start|>user" not in prompt and prompt != SENTINEL for prompt in llm.computed)


def saved_files(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_prefix_is_saved_the_first_time_a_process_computes_it_and_restored_by_the_next(tmp_path):
    first = FakeServerLLM(PrefixFolder(tmp_path))
    first.ask("draft my OKRs")
    assert system_computed(first)
    assert [action for action, _ in first.slots] == ["save"]  # asked once is enough: the next process restores it
    name = first.slots[0][1].rsplit(".", 2)[0]  # saved as <name>.<pid>.part, then renamed
    first.computed.clear()
    first.ask("profile this CSV")
    assert first.slots[1:] == [("restore", name)]  # written once; the cut after the catalog is a restore
    assert first.computed == [render_qwen([{"role": "system", "content": SYSTEM},
                                             {"role": "user", "content": "profile this CSV"}])[0].removesuffix(
        "<|im_start|>assistant\n") + SENTINEL]  # no sentinel computed to cut the last answer off: only the query
    assert saved_files(tmp_path) == [name, f"{name}.json"]

    fresh = FakeServerLLM(PrefixFolder(tmp_path))
    fresh.ask("what is the capital of Australia?")
    assert fresh.slots == [("restore", name)]
    assert not system_computed(fresh)  # only the query's pieces were computed
    assert all("<|im_start|>user" in prompt for prompt in fresh.computed)


def test_a_damaged_file_is_deleted_and_the_prefix_computed(tmp_path):
    first = FakeServerLLM(PrefixFolder(tmp_path))
    first.ask("one")  # saved
    name = next(p.name for p in tmp_path.glob("*.kv"))
    (tmp_path / name).write_bytes(b"cut sho")  # does not match its record

    fresh = FakeServerLLM(PrefixFolder(tmp_path))
    fresh.ask("three")
    assert [action for action, _ in fresh.slots] == ["save"]  # never handed to llama.cpp: computed, saved anew
    assert system_computed(fresh) and saved_files(tmp_path) == [name, f"{name}.json"]
    assert (tmp_path / name).read_bytes() != b"cut sho"


def test_a_file_llama_cpp_refuses_is_deleted_and_the_cache_emptied_before_computing(tmp_path):
    first = FakeServerLLM(PrefixFolder(tmp_path))
    first.ask("one")  # saved
    fresh = FakeServerLLM(PrefixFolder(tmp_path), refuse_restore=True)
    with pytest.warns(UserWarning, match="deleted and is computed instead: .*invalid slot save file"):
        fresh.ask("three")
    assert [action for action, _ in fresh.slots] == ["restore", "save"]  # refused, deleted, computed, saved anew
    assert fresh.computed[0] == SENTINEL  # whatever the failed restore left is emptied first
    assert system_computed(fresh)


def test_an_unreachable_listener_is_raised_and_the_saved_file_kept(tmp_path):
    FakeServerLLM(PrefixFolder(tmp_path)).ask("one")  # saved
    saved = saved_files(tmp_path)
    with pytest.raises(LLMError, match="did not answer"):
        FakeServerLLM(PrefixFolder(tmp_path), refuse_restore="unreachable").ask("two")
    assert saved_files(tmp_path) == saved


def test_after_a_refused_restore_every_piece_is_computed_from_an_empty_cache(tmp_path):
    """Even when the cache held the same system message: what a refused restore leaves is unknown."""
    llm = FakeServerLLM(PrefixFolder(tmp_path), refuse_restore=True)
    llm.ask("q")  # computed and saved
    llm.computed.clear()
    with pytest.warns(UserWarning, match="invalid slot save file"):
        checkpoints = llm.ask("c")  # the cut after the system message is a restore: refused
    assert [action for action, _ in llm.slots] == ["save", "restore", "save"]  # deleted, computed, saved anew
    assert llm.computed == [SENTINEL] + [checkpoint + SENTINEL for checkpoint in checkpoints]


def test_a_short_system_message_is_never_saved(tmp_path):
    llm = FakeServerLLM(PrefixFolder(tmp_path))
    for query in ("one", "two", "three"):
        llm._prefill(llm.model.template.prompt([{"role": "system", "content": "Be brief."},
                                                {"role": "user", "content": query}]), SENTINEL)
        llm._dirty = True
    assert llm.slots == [] and saved_files(tmp_path) == []


def test_the_folder_keeps_the_most_recently_used_files_within_its_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(prefixes, "KEEP_BYTES", 100)
    folder = PrefixFolder(tmp_path)
    names = [prefix_name("sha", "build", 8192, [f"catalog {i}"]) for i in range(6)]
    for name in names:
        part = folder.temporary(name)
        (tmp_path / part).write_bytes(b"x" * 30)
        folder.publish(part, name)
        assert folder.has(names[0])  # used again after each save: kept
    assert sorted(p.name for p in tmp_path.glob("*.kv")) == sorted([names[0], names[-1], names[-2]])  # 90 of 100 bytes
    assert not list(tmp_path.glob("*.part*"))
    (tmp_path / "big.part").write_bytes(b"x" * 500)
    folder.publish("big.part", "big.kv")  # over the budget alone: still kept, the others go
    assert [p.name for p in tmp_path.glob("*.kv")] == ["big.kv"]


def test_a_saved_file_is_hashed_once_while_it_is_the_same_file(tmp_path, monkeypatch):
    """A cut after the catalog restores it at every decision: the 40 MB file is not hashed each time."""
    folder = PrefixFolder(tmp_path)
    part = folder.temporary("a.kv")
    (tmp_path / part).write_bytes(b"x" * 30)
    folder.publish(part, "a.kv")
    hashed, fingerprint = [], prefixes._fingerprint
    monkeypatch.setattr(prefixes, "_fingerprint", lambda path: hashed.append(path.name) or fingerprint(path))
    assert folder.has("a.kv") and folder.has("a.kv") and hashed == ["a.kv"]
    (tmp_path / "other").write_bytes(b"y" * 30)
    os.replace(tmp_path / "other", tmp_path / "a.kv")  # another file in its place, same size
    assert not folder.has("a.kv") and hashed == ["a.kv", "a.kv"]  # hashed again: it does not match the record
    assert saved_files(tmp_path) == []


def test_publishing_removes_the_part_files_of_saves_that_never_finished(tmp_path):
    folder = PrefixFolder(tmp_path)
    stale, fresh = tmp_path / "old.kv.123.part", tmp_path / "new.kv.456.part"
    for path in (stale, fresh, tmp_path / "old.kv.123.part.json"):
        path.write_bytes(b"x" * 10)
    hours_ago = time.time() - prefixes.STALE_PART_SECONDS - 60
    os.utime(stale, (hours_ago, hours_ago))
    os.utime(tmp_path / "old.kv.123.part.json", (hours_ago, hours_ago))
    part = folder.temporary("a.kv")
    (tmp_path / part).write_bytes(b"x" * 30)
    folder.publish(part, "a.kv")
    # a live save is left alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.kv", "a.kv.json", "new.kv.456.part"]


def test_the_name_depends_on_model_build_context_and_every_piece():
    base = prefix_name("sha", "build", 8192, ["a", "ab"])
    assert base.endswith(prefixes.SUFFIX) and "/" not in base
    assert len({base, prefix_name("sha2", "build", 8192, ["a", "ab"]), prefix_name("sha", "build2", 8192, ["a", "ab"]),
                prefix_name("sha", "build", 4096, ["a", "ab"]), prefix_name("sha", "build", 8192, ["ab"])}) == 5


@pytest.mark.parametrize(("value", "expected"), [("off", None), ("/somewhere/else", "/somewhere/else")])
def test_the_folder_is_set_or_turned_off_by_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv(prefixes.PREFIX_DIR_ENV, value)
    assert (None if prefix_dir() is None else str(prefix_dir())) == expected
    monkeypatch.delenv(prefixes.PREFIX_DIR_ENV)
    assert prefix_dir() == prefixes.DEFAULT_PREFIX_DIR

"""The embedding cache under faults: truncated or corrupted files, another model's file, and two
processes (real ones, via multiprocessing) writing one cache at once."""
from __future__ import annotations

import json
import multiprocessing
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from course_utils.selection.embeddings.cache import EmbeddingCache, text_key
from course_utils.selection.faults import EmbeddingError


def embedder(size: int = 2, calls: list | None = None):
    """A deterministic embedder: [len(text), 1, 0, …] of `size`; each call's texts go to `calls`."""
    def compute(texts: list[str]) -> np.ndarray:
        if calls is not None:
            calls.append(list(texts))
        return np.array([[len(t), 1.0] + [0.0] * (size - 2) for t in texts])

    return compute


def test_a_truncated_cache_is_rebuilt_with_a_warning(tmp_path):
    EmbeddingCache("local", "m", tmp_path).embed(["alpha", "beta"], embedder())
    path = EmbeddingCache("local", "m", tmp_path).path
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    calls = []
    with pytest.warns(UserWarning, match=r"embedding cache unreadable \(JSONDecodeError: .*\); rebuilding it"):
        cache = EmbeddingCache("local", "m", tmp_path)
    np.testing.assert_array_equal(cache.embed(["alpha"], embedder(calls=calls)), [[5, 1]])
    assert calls == [["alpha"]]
    assert json.loads(path.read_text())["vectors"] == {text_key("alpha"): [5.0, 1.0]}


@pytest.mark.parametrize("content, reason", [
    (b"\x00\xff garbage", "unreadable"),
    (b'{"a": [1.0]}', "unreadable (not a mapping of text hashes to vectors in this version's format)"),
    (b'{"format": 2, "backend": "local", "model": "m", "dimension": 2, "vectors": {"k": [1.0, "x"]}}',
     "unreadable (a vector is not a list of 2 numbers)"),
    (b'{"format": 2, "backend": "local", "model": "m", "dimension": 2, "vectors": {"k": [1.0]}}',
     "unreadable (a vector is not a list of 2 numbers)"),
])
def test_a_corrupted_cache_is_rebuilt_with_a_warning(tmp_path, content, reason):
    path = EmbeddingCache("local", "m", tmp_path).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    with pytest.warns(UserWarning, match=rf"{path}: embedding cache {re.escape(reason)}"):
        cache = EmbeddingCache("local", "m", tmp_path)
    assert cache.vectors == {}
    cache.embed(["a"], embedder())
    assert json.loads(path.read_text())["vectors"] == {text_key("a"): [1.0, 1.0]}


def test_a_file_written_by_another_model_is_rebuilt(tmp_path):
    other = EmbeddingCache("local", "multilingual-e5-small", tmp_path)
    other.embed(["a"], embedder(3))
    mine = EmbeddingCache("local", "gemini-embedding-2", tmp_path).path
    shutil.copy(other.path, mine)  # say, a cache folder copied by hand
    with pytest.warns(UserWarning, match=r"written by another model \(local/multilingual-e5-small, not "
                                         r"local/gemini-embedding-2\); rebuilding it"):
        assert EmbeddingCache("local", "gemini-embedding-2", tmp_path).vectors == {}


def test_vectors_of_another_size_mean_another_model_and_a_rebuild(tmp_path):
    """The same model name now gives vectors of another size (e.g. the local encoder was changed)."""
    EmbeddingCache("local", "m", tmp_path).embed(["a", "bb"], embedder(2))
    calls = []
    cache = EmbeddingCache("local", "m", tmp_path)
    with pytest.warns(UserWarning, match="holds vectors of size 2 but the model now gives 4: it was written by "
                                         "another model; rebuilding it"):
        vectors = cache.embed(["a", "bb", "ccc"], embedder(4, calls))
    assert calls == [["ccc"], ["a", "bb"]]  # the new text, then the ones cached at the old size
    assert vectors.shape == (3, 4)
    saved = json.loads(cache.path.read_text())
    assert saved["dimension"] == 4 and len(saved["vectors"]) == 3


@pytest.mark.parametrize("bad, message", [
    (lambda texts: np.ones((len(texts) - 1, 2)), "the embedder returned 1 vector(s) for 2 text(s)"),
    (lambda texts: np.ones(len(texts)), "the embedder gave an array of shape (2,), not one row per text"),
    (lambda texts: np.full((len(texts), 2), np.nan), "the embedder returned a vector with NaN or infinite values"),
])
def test_bad_vectors_never_enter_the_cache(tmp_path, bad, message):
    cache = EmbeddingCache("local", "m", tmp_path)
    with pytest.raises(EmbeddingError, match=re.escape(message)):
        cache.embed(["a", "bb"], bad)
    assert cache.vectors == {} and not cache.path.exists()


# ----------------------------------------------------------------- two processes at once

ROUNDS, SHARED = 25, ["shared one", "shared two"]


def worker(folder: str, worker_id: int) -> None:
    """Embed new texts round after round, each round through a freshly opened cache; any warning fails."""
    warnings.simplefilter("error")  # a torn file would show up as an "unreadable" warning
    for round_ in range(ROUNDS):
        cache = EmbeddingCache("local", "m", Path(folder))
        vectors = cache.embed([f"worker {worker_id} round {round_}", *SHARED], embedder())
        assert vectors.shape == (3, 2)


def test_processes_writing_one_cache_at_once_lose_nothing(tmp_path):
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=worker, args=(str(tmp_path), i)) for i in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    saved = json.loads(EmbeddingCache("local", "m", tmp_path).path.read_text())
    expected = {f"worker {i} round {r}" for i in range(3) for r in range(ROUNDS)} | set(SHARED)
    assert set(saved["vectors"]) == {text_key(t) for t in expected}  # no process lost another's vectors
    assert all(saved["vectors"][text_key(t)] == [len(t), 1.0] for t in expected)
    assert not list(tmp_path.glob("*.tmp"))

"""Similarity at scale (lesson 10): unit-vector matrix, partial-sort top k, the on-disk index. No model."""
from __future__ import annotations

import hashlib
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from course_utils.backend.client import local_backend
from course_utils.skills.paths import SKILLS_DIR
from course_utils.selection.embeddings import IndexCache, cosine_matrix, cosine_scores, top_k, unit_rows
from course_utils.selection.embeddings.index import INDEX_KEEP, index_key
from course_utils.scale.decision import IndexedSelector
from course_utils.scale.synthetic import synthetic_skills, with_distractors
from course_utils.selection.pick import SimilaritySelector
from course_utils.skills.skill import SkillLoader

# ----------------------------------------------------------------- top k by partial sort


@pytest.mark.parametrize("seed", range(20))
def test_top_k_is_the_head_of_a_full_stable_argsort_on_random_scores(seed):
    rng = np.random.default_rng(seed)
    row = rng.standard_normal(int(rng.integers(1, 12_000))).astype(np.float32)
    for k in (1, 3, 10, 100, row.shape[0] - 1, row.shape[0], row.shape[0] + 5):
        assert np.array_equal(top_k(row, k), np.argsort(-row, kind="stable")[:k]), k


@pytest.mark.parametrize("seed", range(10))
def test_top_k_orders_ties_as_the_full_sort_does_even_across_the_kth_place(seed):
    rng = np.random.default_rng(seed)
    row = rng.integers(0, 6, size=500).astype(np.float32) / 5  # many equal scores
    for k in (1, 2, 7, 10, 99, 250):
        assert np.array_equal(top_k(row, k), np.argsort(-row, kind="stable")[:k]), k


def test_top_k_of_nothing_is_empty():
    assert top_k(np.array([0.3, 0.1]), 0).tolist() == []
    assert top_k(np.zeros(0, dtype=np.float32), 5).tolist() == []


def test_unit_rows_are_one_contiguous_float32_matrix_and_score_as_cosine_matrix_does():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 64))
    vectors[7] = 0
    unit = unit_rows(vectors)
    assert unit.dtype == np.float32 and unit.flags.c_contiguous
    norms = np.linalg.norm(unit, axis=1)
    assert np.allclose(np.delete(norms, 7), 1, atol=1e-6) and norms[7] == 0
    queries = rng.standard_normal((4, 64)).astype(np.float32)
    raw = vectors.astype(np.float32)
    with threadpool_limits(1):  # the same BLAS path on both sides: the same bits
        assert np.array_equal(cosine_scores(unit, queries), cosine_matrix(queries, raw))
        assert np.array_equal(cosine_scores(unit[:100], queries), cosine_matrix(queries, raw[:100]))


def test_on_a_large_matrix_the_scores_agree_to_rounding_and_the_top_10_exactly():
    rng = np.random.default_rng(1)
    raw = rng.standard_normal((10_014, 512), dtype=np.float32)
    unit = unit_rows(raw)
    for vector in rng.standard_normal((20, 1, 512), dtype=np.float32):
        new, old = cosine_scores(unit, vector)[0], cosine_matrix(vector, raw)[0]
        assert np.allclose(new, old, rtol=0, atol=1e-6)
        assert np.array_equal(top_k(new, 10), np.argsort(-old, kind="stable")[:10])


# ----------------------------------------------------------------- the on-disk index


def _vectors(texts, dimension=32):
    """A fixed vector per text (from its hash), like an embedding model without the model."""
    return np.array([np.random.default_rng(list(hashlib.sha256(t.encode()).digest()[:8])).standard_normal(dimension)
                     for t in texts], dtype=np.float32)


class Counting:
    """An embedder that counts the texts it is asked for."""

    def __init__(self, dimension=32):
        self.calls, self.dimension = [], dimension

    def __call__(self, texts):
        self.calls.append(len(texts))
        return _vectors(texts, self.dimension)


TEXTS = [f"title: skill-{i} | text: does thing {i}" for i in range(200)]


def test_the_index_is_computed_once_then_read_from_disk(tmp_path):
    compute = Counting()
    first = IndexCache("local", "m", tmp_path).matrix(TEXTS, compute)
    again = IndexCache("local", "m", tmp_path)
    second = again.matrix(TEXTS, compute)
    assert compute.calls == [len(TEXTS)]
    assert again.hit is True
    assert np.array_equal(first, second) and np.array_equal(first, unit_rows(_vectors(TEXTS)))
    assert second.dtype == np.float32 and second.flags.c_contiguous
    assert [p.parent.name for p in tmp_path.rglob("*.npz")] == ["indexes"]


@pytest.mark.parametrize("change", ["edited", "added", "removed", "reordered", "other model", "other backend"])
def test_changed_texts_or_another_model_miss_the_index(tmp_path, change):
    compute = Counting()
    IndexCache("local", "m", tmp_path).matrix(TEXTS, compute)
    texts, backend, model = list(TEXTS), "local", "m"
    if change == "edited":
        texts[50] += " and more"
    elif change == "added":
        texts.append("title: new | text: new")
    elif change == "removed":
        texts.pop()
    elif change == "reordered":
        texts[0], texts[1] = texts[1], texts[0]
    elif change == "other model":
        model = "other"
    else:
        backend = "gemini"
    cache = IndexCache(backend, model, tmp_path)
    matrix = cache.matrix(texts, compute)
    assert cache.hit is False and compute.calls == [len(TEXTS), len(texts)]
    assert np.array_equal(matrix, unit_rows(_vectors(texts)))
    assert index_key(backend, model, texts) != index_key("local", "m", TEXTS)


def _damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "bit flipped":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:])
    elif how == "not unit rows":
        np.savez(path, matrix=np.full((len(TEXTS), 32), 3, dtype=np.float32),
                 key=np.array(index_key("local", "m", TEXTS)))
    elif how == "wrong shape":
        np.savez(path, matrix=np.ones((3, 32), dtype=np.float32), key=np.array(index_key("local", "m", TEXTS)))
    elif how == "float64":
        np.savez(path, matrix=unit_rows(_vectors(TEXTS)).astype(np.float64),
                 key=np.array(index_key("local", "m", TEXTS)))
    elif how == "another key":
        np.savez(path, matrix=unit_rows(_vectors(TEXTS)), key=np.array("0" * 64))
    elif how == "pickled object":
        np.savez(path, matrix=np.array([{"x": 1}], dtype=object), key=np.array(index_key("local", "m", TEXTS)))


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "bit flipped", "not unit rows", "wrong shape",
                                 "float64", "another key", "pickled object"])
def test_a_damaged_index_file_is_recomputed_with_a_warning_and_no_crash(tmp_path, how):
    compute = Counting()
    cache = IndexCache("local", "m", tmp_path)
    expected = cache.matrix(TEXTS, compute)
    path = cache.path(index_key("local", "m", TEXTS))
    _damage(path, how)
    with pytest.warns(UserWarning, match=r"index cache unreadable .*; rebuilding it"):
        again = IndexCache("local", "m", tmp_path)
        matrix = again.matrix(TEXTS, compute)
    assert again.hit is False and compute.calls == [len(TEXTS)] * 2
    assert np.array_equal(matrix, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        healed = IndexCache("local", "m", tmp_path)
        assert np.array_equal(healed.matrix(TEXTS, compute), expected) and healed.hit


def test_an_unwritable_cache_folder_warns_and_still_gives_the_matrix(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="cannot be saved"):
        matrix = IndexCache("local", "m", blocker).matrix(TEXTS, Counting())
    assert np.array_equal(matrix, unit_rows(_vectors(TEXTS)))


def test_each_model_keeps_only_its_most_recently_used_indexes(tmp_path):
    compute = Counting()
    for n in range(INDEX_KEEP + 2):
        IndexCache("local", "m", tmp_path).matrix(TEXTS[: 10 + n], compute)
    IndexCache("local", "other", tmp_path).matrix(TEXTS, compute)
    files = list((tmp_path / "indexes").glob("*.npz"))
    assert sum(p.name.startswith("local--m--") for p in files) == INDEX_KEEP
    assert sum(p.name.startswith("local--other--") for p in files) == 1
    assert not list((tmp_path / "indexes").glob("*.tmp"))


# ----------------------------------------------------------------- the selector lesson 10 builds


class FakeEmbeddings:
    """`client.models.embed_content` with a fixed vector per text; counts the texts embedded."""

    def __init__(self):
        self.texts = 0

    def embed_content(self, *, model, contents, config=None):
        texts = [c.parts[0].text for c in contents]
        self.texts += len(texts)
        return SimpleNamespace(embeddings=[SimpleNamespace(values=v.tolist()) for v in _vectors(texts, 48)])


def fake_client():
    return SimpleNamespace(models=FakeEmbeddings(), course_backend=local_backend("qwen2.5-coder-1.5b"))


QUERIES = ["my laptop will not start", "draft the quarterly budget", "translate this contract to French",
           "how many vacation days do I have left", "summarize the incident log"]


def test_the_indexed_selector_scores_and_ranks_as_the_similarity_selector(tmp_path):
    client = fake_client()
    loader = with_distractors(SkillLoader.from_root(SKILLS_DIR / "workplace"), 500)
    plain = SimilaritySelector(client, loader, cache=False, k=10)
    indexed = IndexedSelector(client, loader, k=10, folder=tmp_path)
    assert indexed.matrix.dtype == np.float32 and indexed.matrix.flags.c_contiguous
    assert indexed.names == plain.names and indexed.threshold == plain.threshold
    with threadpool_limits(1):
        assert np.array_equal(indexed.scores(QUERIES), plain.scores(QUERIES))
        for query, row in zip(QUERIES, plain.scores(QUERIES)):
            assert indexed.top(row) == plain.top(row) and indexed.top(row, 1) == plain.top(row, 1)
            assert indexed(query).top_k == plain(query).top_k and indexed(query).skill == plain(query).skill


def test_the_indexed_selector_reads_the_index_from_disk_on_the_next_run(tmp_path):
    loader = SkillLoader(synthetic_skills(300))
    first = IndexedSelector(fake_client(), loader, folder=tmp_path)
    client = fake_client()
    second = IndexedSelector(client, loader, folder=tmp_path)
    assert (first.from_disk, second.from_disk) == (False, True)
    assert client.models.texts == 0 and np.array_equal(first.matrix, second.matrix)
    uncached = IndexedSelector(client, loader, cache=False)
    assert not uncached.from_disk and client.models.texts == 300
    assert np.array_equal(uncached.matrix, first.matrix)


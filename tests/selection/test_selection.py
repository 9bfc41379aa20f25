"""Selectors: explicit activation, the first-turn model decision, similarity, and the embedding cache."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
from google.genai import types

from course_utils.selection.embeddings import EmbeddingCache, cosine_matrix, embed_texts
from course_utils.selection.embeddings.cache import text_key
from course_utils.lessons.scripted import SCRIPTED_FACTS, ScriptedBackend
from course_utils.selection.pick import (
    ACTIVATE,
    Decision,
    SimilaritySelector,
    explicit_skill,
    pick_by_model,
    with_explicit,
)
from course_utils.skills.skill import SkillLoader
from helpers.paths import FIXTURES

TINY = SkillLoader.from_root(FIXTURES / "tiny_catalog")


# ----------------------------------------------------------------- explicit activation


@pytest.mark.parametrize(
    "message, skill",
    [
        ("/csv-data-profiler sales.csv please", "csv-data-profiler"),
        ("Use @meeting-notes-summarizer on this: …", "meeting-notes-summarizer"),
        ("@john can you run /leave-balance-calculator for me?", "leave-balance-calculator"),
    ],
)
def test_explicit_mention_selects_the_skill(message, skill):
    assert explicit_skill(TINY, message) == Decision(skill)


@pytest.mark.parametrize("message", ["How many days are left?", "Check /etc/hosts and and/or mail me@corp.com"])
def test_no_mention_means_no_explicit_decision(message):
    assert explicit_skill(TINY, message) is None


def test_unknown_name_gets_close_names():
    decision = explicit_skill(TINY, "/csv-profiler on sales.csv")
    assert decision.skill is None
    assert decision.error.startswith('Unknown skill "/csv-profiler". Did you mean /csv-data-profiler?')
    assert decision.error.endswith("Available: csv-data-profiler, leave-balance-calculator, meeting-notes-summarizer.")


def test_with_explicit_skips_the_inner_selector():
    calls = []

    def inner(query: str) -> Decision:
        calls.append(query)
        return Decision(None)

    select = with_explicit(TINY, inner)
    assert select("/csv-data-profiler now").skill == "csv-data-profiler" and calls == []
    assert select("anything else").skill is None and calls == ["anything else"]


# ----------------------------------------------------------------- the model, first turn only


class FakeModels:
    """Records the request and answers with a prepared generateContent response."""

    def __init__(self, parts: list[dict]):
        self.parts, self.requests = parts, []

    def generate_content(self, **request):
        self.requests.append(request)
        return types.GenerateContentResponse.model_validate({
            "candidates": [{"content": {"role": "model", "parts": self.parts}}],
            "usage_metadata": {"prompt_token_count": 321},
        })


@pytest.mark.parametrize(
    "parts, skill, error",
    [
        ([{"function_call": {"name": ACTIVATE, "args": {"name": "csv-data-profiler"}}}], "csv-data-profiler", None),
        ([{"text": "I cannot book leave."}], None, None),
        # not a declared tool: no decision, and the report says so
        # (tests/backend/test_faults.py has the other malformed answers)
        ([{"function_call": {"name": "book_leave", "args": {}}}], None,
         "the model called book_leave, which was not declared (declared: activate_skill)"),
    ],
)
def test_pick_by_model_reads_the_first_turn(parts, skill, error):
    client = SimpleNamespace(models=FakeModels(parts))
    decision = pick_by_model(client, TINY, "sales.csv ok?", model="m", max_output_tokens=64)
    assert (decision.skill, decision.prompt_tokens, decision.error) == (skill, 321, error)
    (request,) = client.models.requests
    config = request["config"]
    assert config.automatic_function_calling.disable is True
    assert config.tools == [TINY.tool(ACTIVATE)]
    assert config.system_instruction == TINY.system_instruction(function=ACTIVATE)
    assert request["contents"] == "sales.csv ok?" and request["model"] == "m"


@pytest.mark.model
def test_pick_by_model_on_the_local_backend(local_client):
    decision = pick_by_model(local_client, TINY, "How many vacation days do I have left this year?")
    assert decision.skill == "leave-balance-calculator"
    assert decision.prompt_tokens > 100 and decision.seconds > 0 and decision.raw is not None


# ----------------------------------------------------------------- similarity


@pytest.fixture(scope="module")
def local_client():
    from course_utils.backend.client import make_client

    return make_client("local", verbose=False)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def count_embed_calls(client, monkeypatch) -> list[int]:
    """Wrap `client.models.embed_content`; the list gets the number of contents of each call."""
    calls: list[int] = []
    original = client.models.embed_content

    def counting(**kwargs):
        calls.append(len(kwargs["contents"]))
        return original(**kwargs)

    monkeypatch.setattr(client.models, "embed_content", counting)
    return calls


def test_cosine_matrix_matches_the_formula():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 8)), rng.normal(size=(3, 8))
    expected = [[x @ y / np.linalg.norm(x) / np.linalg.norm(y) for y in b] for x in a]
    np.testing.assert_allclose(cosine_matrix(a, b), expected, rtol=1e-6)


def test_a_selector_on_the_scripted_stand_in_takes_its_default_threshold():
    """The stand-in (course_utils.lessons.scripted) has a default threshold as the real backends do, so a lesson's
    `SimilaritySelector(client, loader)` runs on it as written, with the script's cosines."""
    rows = {"Renew it please.": [0.55, 0.3, 0.1], "Hello there.": [0.45, 0.2, 0.1]}
    backend = ScriptedBackend(list(TINY.skills.values()), rows, lambda query, offered, functions: None)
    selector = SimilaritySelector(backend.client(), TINY, cache=False)
    assert selector.threshold == SCRIPTED_FACTS.threshold == 0.5
    np.testing.assert_allclose(selector.scores(list(rows)), list(rows.values()), atol=1e-9)
    assert selector("Renew it please.").skill == TINY.names[0] and selector("Hello there.").skill is None


def test_one_vector_per_text(local_client):
    texts = ["a cat", "a dog", "a tax return"]
    assert embed_texts(local_client, texts).shape[0] == 3
    merged = local_client.models.embed_content(model="gemini-embedding-2", contents=texts)
    assert len(merged.embeddings) == 1  # the pitfall embed_texts avoids


def test_similarity_on_the_tiny_catalog(local_client, cache_dir):
    selector = SimilaritySelector(local_client, TINY, threshold=-1.0, k=2)
    queries = ["How many vacation days do I have left this year?", "Is sales.csv clean? Some rows look duplicated.",
               "Here are my notes from today's sync. Who agreed to do what?"]
    scores = selector.scores(queries)
    assert scores.shape == (3, 3)
    assert [selector.names[i] for i in scores.argmax(axis=1)] == [
        "leave-balance-calculator", "csv-data-profiler", "meeting-notes-summarizer"]
    decision = selector(queries[1])
    assert decision.skill == "csv-data-profiler" and len(decision.top_k) == 2
    assert decision.score == decision.top_k[0][1] >= decision.top_k[1][1]
    assert decision.prompt_tokens > 0
    assert selector.pick(scores[1], threshold=1.01) is None


def test_rerun_costs_no_embedding_call(local_client, cache_dir, monkeypatch):
    SimilaritySelector(local_client, TINY)("How many vacation days are left?")
    calls = count_embed_calls(local_client, monkeypatch)
    again = SimilaritySelector(local_client, TINY)
    again("How many vacation days are left?")
    assert calls == []


def test_changed_description_is_embedded_again(local_client, cache_dir, monkeypatch):
    SimilaritySelector(local_client, TINY)
    calls = count_embed_calls(local_client, monkeypatch)
    skill = TINY.skills["csv-data-profiler"]
    changed = SkillLoader([*(s for s in TINY.skills.values() if s is not skill),
                           dataclasses.replace(skill, description=skill.description + " Also Excel files.")])
    SimilaritySelector(local_client, changed)
    assert calls == [1]


# ----------------------------------------------------------------- the cache itself


class CountingEmbedder:
    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])


def test_cache_embeds_only_what_it_lacks(tmp_path):
    compute = CountingEmbedder()
    first = EmbeddingCache("local", "m", tmp_path).embed(["a", "bb", "a"], compute)
    assert compute.calls == [["a", "bb"]]
    np.testing.assert_array_equal(first, [[1, 1], [2, 1], [1, 1]])
    again = EmbeddingCache("local", "m", tmp_path).embed(["bb", "ccc"], compute)
    assert compute.calls[1:] == [["ccc"]]
    np.testing.assert_array_equal(again, [[2, 1], [3, 1]])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local--m.json", "local--m.json.lock"]  # no .tmp left


def test_cache_is_keyed_by_backend_and_model(tmp_path):
    compute = CountingEmbedder()
    EmbeddingCache("local", "m", tmp_path).embed(["a"], compute)
    EmbeddingCache("gemini", "m", tmp_path).embed(["a"], compute)
    EmbeddingCache("local", "models/other", tmp_path).embed(["a"], compute)
    assert len(compute.calls) == 3


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"k": "text"}', '{"a": [1.0], "b": [1.0, 2.0]}'])
def test_corrupt_cache_warns_and_rebuilds(tmp_path, content):
    cache = EmbeddingCache("local", "m", tmp_path)
    cache.path.write_text(content)
    compute = CountingEmbedder()
    with pytest.warns(UserWarning, match="embedding cache unreadable"):
        rebuilt = EmbeddingCache("local", "m", tmp_path)
    rebuilt.embed(["a"], compute)
    assert compute.calls == [["a"]]
    assert json.loads(cache.path.read_text()) == {"format": 2, "backend": "local", "model": "m", "dimension": 2,
                                                  "vectors": {text_key("a"): [1.0, 1.0]}}

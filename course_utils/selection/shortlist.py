"""The shortlist: every skill ranked for a request by two encoders and BM25, their scores fused.

Each signal's scores are standardised across the catalog for the request (how far above the catalog's mean a
skill stands, in standard deviations), then added. Encoders read meaning, BM25 reads words; where one misses,
the other often ranks the skill near the top, so the fused ranking keeps the right skill in a short list more
often than any signal alone.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from google import genai

from course_utils.backend.client import EMBEDDING_MODEL, embedding_backend
from course_utils.selection.lexical import Bm25Index, skill_text
from course_utils.selection.pick import SimilaritySelector
from course_utils.skills.skill import SkillLoader

SECOND_ENCODER = "multilingual-e5-small"
"""The second encoder the local backend ships; Gemini and a server's own embedding model have one."""


def default_encoders(client: genai.Client) -> tuple[str, ...]:
    """The course's encoder, and E5 where the local encoders embed."""
    return (EMBEDDING_MODEL, SECOND_ENCODER) if embedding_backend(client) == "local" else (EMBEDDING_MODEL,)


def model_invocable(loader: SkillLoader) -> SkillLoader:
    """The skills a harness lets the model choose: not those with `disable-model-invocation: true` (only the user
    invokes them, by name)."""
    return loader.subset(n for n, s in loader.skills.items() if s.extra.get("disable-model-invocation") is not True)


def standardised(row: np.ndarray) -> np.ndarray:
    """Scores as standard deviations from their mean (all zero when they do not vary)."""
    spread = float(row.std())
    return (row - row.mean()) / spread if spread > 0 else np.zeros_like(row)


Signal = Callable[[str], np.ndarray]
"""One score per skill for a request."""


class Shortlist:
    """Rank skills for a request by the sum of each signal's standardised scores (`names` in signal order)."""

    def __init__(self, names: Sequence[str], signals: Sequence[Signal]) -> None:
        self.names, self.signals = list(names), list(signals)

    @classmethod
    def of(cls, client: genai.Client, loader: SkillLoader, encoders: Sequence[str] | None = None) -> Shortlist:
        """The course's shortlist of `loader`'s model-invocable skills: each encoder's cosine (descriptions
        embedded once, cached) and BM25 over each skill's whole SKILL.md."""
        loader = model_invocable(loader)
        models = default_encoders(client) if encoders is None else tuple(encoders)
        similarities = [SimilaritySelector(client, loader, model=m, threshold=0.0) for m in models]
        lexical = Bm25Index([skill_text(s) for s in loader.skills.values()])
        return cls(loader.names, [*(partial(_row, sim) for sim in similarities), lexical.scores])

    def scores(self, query: str) -> np.ndarray:
        """The fused score of every skill, in `names` order."""
        return np.sum([standardised(np.asarray(signal(query), dtype=np.float64)) for signal in self.signals], axis=0)

    def top(self, query: str, k: int) -> list[tuple[str, float]]:
        """The `k` best skills and their fused scores, best first (ties: catalog order)."""
        row = self.scores(query)
        return [(self.names[i], float(row[i])) for i in np.argsort(-row, kind="stable")[:k]]


def _row(similarity: SimilaritySelector, query: str) -> np.ndarray:
    return similarity.scores([query])[0]

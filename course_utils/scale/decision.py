"""Choosing at scale: similarity over 10,000 skills, and the decision rule (who picks, given what the catalog
costs against the model's context window and how often a top-k shortlist keeps the expected skill).

Used in `notebooks/10_at_scale.ipynb`, on catalogs grown with `course_utils.scale.synthetic`. Similarity at scale
(`IndexedSelector`) ranks on the index of `selection.embeddings`: one matrix of unit vectors, a partial sort
for the top k, the matrix kept on disk between runs.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from google import genai

from course_utils.backend.client import EMBEDDING_MODEL, GENERATION_MODEL, backend_of, embedding_backend
from course_utils.selection.embeddings import IndexCache, cosine_scores, embed_texts, top_k, unit_rows
from course_utils.selection.faults import EmbeddingError
from course_utils.selection.pick import (
    default_threshold,
    Selector,
    SimilaritySelector,
    document_text,
    hybrid_selector,
    pick_by_model,
    query_text,
    with_explicit,
)
from course_utils.skills.skill import SkillLoader
from course_utils.evaluation.stats import Rate
from course_utils.skills.tokens import estimate_tokens

CATALOG_TOKEN_BUDGET = 10_000
"""Below this many catalog tokens the model reads the whole catalog (the low end of the 10–20k rule)."""
PRESELECT_K = 10
"""How many skills similarity keeps for the model once a catalog is too large to send whole, when no shortlist
recall has been measured (with a measured recall, `decision_rule` chooses k)."""
CATALOG_WINDOW_SHARE = 0.5
"""The largest share of the model's context window the catalog may take: the rest is the conversation's (the
instruction, the query, a loaded body, tool results and the answer)."""
RECALL_TARGET = 0.9
"""The shortlist recall the rule asks of a top-k shortlist: at least this share of the labelled positives keep
their expected skill among the k (a skill left out of the shortlist cannot be chosen)."""

# ----------------------------------------------------------------- similarity at scale


class IndexedSelector(SimilaritySelector):
    """A `SimilaritySelector` for large catalogs: the same scores and ranking, prepared for speed.

    - `matrix` holds the descriptions' *unit* vectors, one contiguous float32 row per skill, so a
      query's cosines are one matrix-vector product (no catalog-sized normalisation per query);
    - `top` keeps the k best by a partial sort (`top_k`), not a sort of the whole catalog;
    - with `cache=True` the matrix is read from the on-disk `IndexCache` when the same backend and
      model indexed the same descriptions before (`from_disk` says which happened).

    Queries are embedded afresh each time (the per-text `EmbeddingCache` is not used).
    """

    def __init__(self, client: genai.Client, loader: SkillLoader, model: str = EMBEDDING_MODEL,
                 threshold: float | None = None, k: int = PRESELECT_K, cache: bool = True,
                 folder: Path | None = None):
        backend = embedding_backend(client)
        self.client, self.model, self.k, self.cache = client, model, k, None
        self.threshold = default_threshold(client) if threshold is None else threshold
        self.names = loader.names
        texts = [document_text(s) for s in loader.skills.values()]
        compute = lambda missing: embed_texts(client, missing, model)  # noqa: E731
        index = IndexCache(backend, model, folder) if cache else None
        self.matrix = index.matrix(texts, compute) if index and texts else unit_rows(compute(texts))
        self.from_disk = bool(index and index.hit)

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """The query × skill cosine matrix, skills in `self.names` order (as `SimilaritySelector.scores`)."""
        vectors = self.embed([query_text(q) for q in queries])
        if self.matrix.size and vectors.shape[1] != self.matrix.shape[1]:
            raise EmbeddingError(f"{self.model} gave query vectors of size {vectors.shape[1]} but the index "
                                 f"has size {self.matrix.shape[1]}: the embedding model changed; build the index again")
        return cosine_scores(self.matrix, vectors)

    def top(self, row: np.ndarray, k: int | None = None) -> list[tuple[str, float]]:
        """The `k` nearest skills of one score row, nearest first (a partial sort)."""
        return [(self.names[i], float(row[i])) for i in top_k(row, self.k if k is None else k)]


# ----------------------------------------------------------------- the decision rule


def context_window(client: genai.Client, model: str = GENERATION_MODEL) -> int:
    """The context window, in tokens, of the model that answers `model` on this client: the one its backend knows
    (`Backend.context_window`: the local llama.cpp server's context, the one an OpenAI-compatible server is said to
    have), else the input token limit the model's API reports for it (Gemini)."""
    window = backend_of(client).context_window()
    if window is not None:
        return window
    limit = client.models.get(model=model).input_token_limit
    if not limit:
        raise ValueError(f"{model} reports no input token limit: pass the context window yourself")
    return int(limit)


def catalog_budget(window: int, budget: int = CATALOG_TOKEN_BUDGET, share: float = CATALOG_WINDOW_SHARE) -> int:
    """The catalog tokens a model with a context window of `window` tokens can afford: the course's `budget`, or
    `share` of the window when that is less (a catalog must leave the conversation room)."""
    return min(budget, int(window * share))


@dataclass(frozen=True)
class Strategy:
    """How to pick a skill for a catalog of a given size, and why; `advice` says what to do when the shortlist's
    measured recall falls short of the target (empty otherwise)."""

    name: str
    reason: str
    k: int | None = None
    advice: str = ""


def decision_rule(catalog_tokens: int, budget: int = CATALOG_TOKEN_BUDGET, k: int = PRESELECT_K, *,
                  recall: Mapping[int, Rate] | None = None, skill_tokens: float | None = None,
                  target: float = RECALL_TARGET) -> Strategy:
    """The course's rule: the model reads the whole catalog while it fits the budget, else a top-k shortlist.

    Without `recall`, the shortlist keeps `k` skills. With `recall` (the measured shortlist recall for each k, on
    this catalog and encoder), k is the smallest whose recall reaches `target`, among the shortlists the budget
    holds (`skill_tokens` catalog tokens a skill, when given). When none reaches it, the rule keeps the longest
    shortlist the budget holds and says what to try: a larger k where the budget allows it, another encoder,
    embedding the body as well as the description, or a model with a larger context window.

    It answers what fits the context window, not which selector is right more often: lesson 13's record measures
    that, and lesson 10 reads it. `rule_selector` honours an explicit `/skill-name` first.
    Use `catalog_budget` for the budget of a given context window.
    """
    if catalog_tokens <= budget:
        return Strategy("model", f"the catalog ({catalog_tokens:,} tokens) fits the {budget:,}-token budget: "
                                 "the model can read every description")
    over = f"the catalog ({catalog_tokens:,} tokens) exceeds the {budget:,}-token budget"
    if not recall:
        return Strategy(f"hybrid top {k}", f"{over}: similarity keeps {k} skills, the model decides among them", k)
    room = int(budget // skill_tokens) if skill_tokens else max(recall)
    held = {size: rate for size, rate in sorted(recall.items()) if size <= room}
    if not held:
        raise ValueError(f"no measured k fits the budget (it holds {room} skills); measure recall at smaller k")
    reaching = [size for size, rate in held.items() if rate.value >= target]
    chosen = reaching[0] if reaching else max(held)
    rate = held[chosen]
    measured = (f"the expected skill is in the top {chosen} for {rate.successes} of {rate.n} positives "
                f"({rate.value:.0%}, 95 % CI {rate.low:.0%}–{rate.high:.0%})")
    if reaching:
        return Strategy(f"hybrid top {chosen}", f"{over}; {measured}, at least the {target:.0%} asked: similarity "
                                                f"keeps {chosen} skills, the model decides among them", chosen)
    tries = ([f"a larger k (the budget holds {room} skills; recall was measured up to {max(recall)})"]
             if max(recall) < room else [])
    tries += ["another encoder", "retrieval on the body as well as the description",
              "a model with a larger context window, whose budget holds a longer shortlist"]
    return Strategy(f"hybrid top {chosen}", f"{over}; the longest shortlist the budget holds falls short of the "
                                            f"{target:.0%} recall asked: {measured}", chosen,
                    "Recall falls: try " + ", ".join(tries[:-1]) + f", or {tries[-1]}.")


def rule_selector(client: genai.Client, loader: SkillLoader, selector: SimilaritySelector | None = None,
                  budget: int = CATALOG_TOKEN_BUDGET, k: int = PRESELECT_K) -> Selector:
    """The decision rule as a selector: explicit `/name` first, then the model or the hybrid by catalog size."""
    strategy = decision_rule(estimate_tokens(loader.catalog()), budget, k)
    if strategy.name == "model":
        return with_explicit(loader, lambda query: pick_by_model(client, loader, query))
    return with_explicit(loader, hybrid_selector(client, loader, selector, k=k))

"""Catalogs at scale: synthetic skills, what a catalog costs as it grows, similarity over 10,000 skills, and the
decision rule.

Used in `notebooks/10_at_scale.ipynb`. The synthetic skills are generated from
templates (domain × artifact × action), are labelled as synthetic in their metadata and their path,
and read like the real ones: what the skill does, "Use when …", "Not for …". Their only purpose is
to measure how cost and ranking behave when a catalog holds 10 to 10,000 skills.

Similarity at scale (`IndexedSelector`): the descriptions' unit vectors sit in one contiguous float32
matrix, normalised once, so a query's cosines are one matrix-vector product; the top k come from a
partial sort (`top_k`); and the whole matrix is kept on disk between runs (`IndexCache`), keyed by the
backend, the embedding model and the exact texts.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import random
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from google import genai

from course_utils.backend.client import EMBEDDING_MODEL, GENERATION_MODEL, backend_of, embedding_backend
from course_utils.cache import cache_dir, locked
from course_utils.faults import EmbeddingError
from course_utils.selection import (
    default_threshold,
    Selector,
    SimilaritySelector,
    document_text,
    embed_texts,
    hybrid_selector,
    pick_by_model,
    query_text,
    with_explicit,
)
from course_utils.skills import Skill, SkillLoader
from course_utils.stats import Rate
from course_utils.tokens import estimate_tokens

SYNTHETIC_ROOT = Path("synthetic")
"""The pretend folder synthetic skills live in (they are never written to disk)."""
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

DOMAINS = (
    "accounting", "logistics", "procurement", "payroll", "recruiting", "legal", "marketing", "sales",
    "support", "security", "facilities", "treasury", "compliance", "research", "clinical", "warehouse",
    "fleet", "energy", "insurance", "claims", "lending", "retail", "hotel", "airline", "shipping",
    "construction", "pharmacy", "school", "university", "library", "museum", "newsroom", "studio",
    "restaurant", "farm", "brewery", "garage", "dental", "veterinary", "municipal",
)
ARTIFACTS = (
    ("budget", "budgets"), ("contract", "contracts"), ("report", "reports"), ("schedule", "schedules"),
    ("invoice", "invoices"), ("checklist", "checklists"), ("forecast", "forecasts"), ("policy", "policies"),
    ("ticket", "tickets"), ("manifest", "manifests"), ("roster", "rosters"), ("audit-log", "audit logs"),
    ("inventory", "inventories"), ("proposal", "proposals"), ("timesheet", "timesheets"),
    ("risk-register", "risk registers"), ("order", "orders"), ("newsletter", "newsletters"),
    ("survey", "surveys"), ("dashboard", "dashboards"), ("permit", "permits"), ("quote", "quotes"),
    ("handbook", "handbooks"), ("incident-log", "incident logs"), ("price-list", "price lists"),
)


@dataclass(frozen=True)
class Action:
    """One kind of job a synthetic skill does to an artifact."""

    suffix: str
    does: str
    details: tuple[str, ...]
    use_when: str
    not_for: str


ACTIONS = (
    Action("checker", "Checks {domain} {plural} against the team's written rules",
           ("missing fields", "totals that do not add up", "dates out of range", "approvals not yet given",
            "values outside the allowed limits", "duplicates"),
           "someone wants a {singular} reviewed for problems before it goes out",
           "writing a new {singular} from scratch, nor for changing records in a business system"),
    Action("writer", "Drafts {domain} {plural} from notes the user provides",
           ("a clear structure", "plain wording", "the mandatory sections", "a short summary first",
            "named owners and dates", "a list of open questions"),
           "someone needs a first draft of a {singular} they will edit",
           "checking an existing {singular}, nor for sending or publishing it"),
    Action("summarizer", "Summarizes long {domain} {plural} into a few lines",
           ("the decisions taken", "figures that changed", "risks raised", "deadlines", "who must act next",
            "what is still undecided"),
           "someone has a long {singular} and needs the gist quickly",
           "rewriting the {singular} in full, nor for translating it"),
    Action("comparer", "Compares two versions of {domain} {plural} side by side",
           ("added and removed lines", "changed amounts", "moved deadlines", "new obligations",
            "wording that changes the meaning", "sections that disappeared"),
           "someone receives a revised {singular} and wants to know what changed",
           "judging whether the changes are acceptable, nor for merging the versions"),
    Action("translator", "Translates {domain} {plural} between English, French, German and Spanish",
           ("terminology kept consistent", "numbers and dates unchanged", "the layout preserved",
            "a glossary of the terms used", "notes where a term has no equivalent", "the original tone"),
           "someone must share a {singular} with a team that reads another language",
           "summarizing or shortening the {singular}, nor for legal certification of translations"),
    Action("planner", "Plans the work needed to prepare {domain} {plural}",
           ("the steps in order", "who does each step", "the time each step takes", "dependencies",
            "the review points", "a realistic deadline"),
           "someone has to deliver a {singular} and wants a step-by-step plan",
           "doing the work itself, nor for booking meetings in a calendar"),
    Action("explainer", "Explains {domain} {plural} to people who are new to them",
           ("what each section means", "the jargon in plain words", "why the numbers matter",
            "common mistakes", "an annotated example", "where to find the source data"),
           "someone new to the team does not understand a {singular} they were sent",
           "changing the {singular}, nor for giving legal or financial advice"),
    Action("exporter", "Turns {domain} {plural} into clean spreadsheet tables",
           ("one row per item", "typed columns", "consistent units", "totals per group", "flagged gaps",
            "a notes column for anything unclear"),
           "someone needs the content of a {singular} in a spreadsheet for further analysis",
           "producing charts or dashboards, nor for importing data into a database"),
    Action("estimator", "Estimates the cost and effort behind {domain} {plural}",
           ("a range rather than one figure", "the assumptions made", "the main cost drivers",
            "what would change the estimate", "a comparison with past cases", "a confidence level"),
           "someone must give a rough figure for a {singular} before the details are known",
           "final pricing or binding quotes, nor for approving spending"),
    Action("archiver", "Prepares {domain} {plural} for archiving under the retention rules",
           ("the retention period that applies", "the file name convention", "personal data to remove",
            "the index entry", "the access level", "the disposal date"),
           "someone closes a file and must archive a {singular} correctly",
           "searching the archive, nor for deleting records before their disposal date"),
)

COMBINATIONS = len(DOMAINS) * len(ARTIFACTS) * len(ACTIONS)
"""How many distinct synthetic skills the templates can make (10,000)."""


def _describe(domain: str, singular: str, plural: str, action: Action, rng: random.Random) -> str:
    details = rng.sample(action.details, 4)
    words = {"domain": domain, "singular": f"{domain} {singular}", "plural": plural}
    return (
        f"{action.does.format(**words)}: {', '.join(details[:3])} and {details[3]}. "
        f"Use when {action.use_when.format(**words)}. Not for {action.not_for.format(**words)}."
    )


def synthetic_skills(count: int, seed: int = 0) -> list[Skill]:
    """`count` synthetic skills, the same ones for the same seed; a smaller count is a prefix of a larger.

    Each is marked `metadata: {synthetic: "true"}` and lives under the pretend folder `synthetic/`.
    """
    if not 0 <= count <= COMBINATIONS:
        raise ValueError(f"count must be between 0 and {COMBINATIONS:,} (the templates' combinations), got {count:,}")
    order = list(itertools.product(DOMAINS, ARTIFACTS, ACTIONS))
    random.Random(seed).shuffle(order)
    skills = []
    for index, (domain, (slug, plural), action) in enumerate(order[:count]):
        name = f"{domain}-{slug}-{action.suffix}"
        singular = slug.replace("-", " ")
        description = _describe(domain, singular, plural, action, random.Random(f"{seed}-{index}"))
        body = f"# {name}\n\nSynthetic skill generated for the scale measurements of lesson 10. No instructions."
        skills.append(Skill(name, description, body, SYNTHETIC_ROOT / name / "SKILL.md",
                            {"metadata": {"synthetic": "true"}}))
    return skills


def render_skill_md(skill: Skill) -> str:
    """The `SKILL.md` text of a skill, as it would be written to disk (used to validate synthetic ones)."""
    description = skill.description.replace('"', '\\"')
    return f'---\nname: {skill.name}\ndescription: "{description}"\nmetadata:\n  synthetic: "true"\n---\n{skill.body}\n'


def with_distractors(loader: SkillLoader, count: int, seed: int = 0) -> SkillLoader:
    """`loader`'s skills plus `count` synthetic ones (the real skills come first)."""
    real = list(loader.skills.values())
    taken = set(loader.skills)
    extra = [s for s in synthetic_skills(count, seed) if s.name not in taken]
    return SkillLoader(real + extra)


# ----------------------------------------------------------------- similarity at scale


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` scaled to unit length, as one C-contiguous float32 matrix (a zero row stays zero).

    The same arithmetic as `selection.cosine_matrix`, done once: the cosine of a unit query with every
    row is then one matrix-vector product, and the scores are the ones `cosine_matrix` gives.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"expected one vector per row, got an array of shape {matrix.shape}")
    return np.ascontiguousarray(matrix / np.linalg.norm(matrix, axis=1, keepdims=True).clip(min=1e-12))


@functools.cache
def _blas() -> Any:
    """A threadpoolctl controller of the BLAS numpy uses, or None without threadpoolctl (the `local` extra)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController().select(user_api="blas")


def cosine_scores(unit_matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Cosine of each of `vectors` with each row of `unit_matrix` (rows already unit): (len(vectors), rows).

    The product runs on one BLAS thread. It reads the whole matrix once per query, so it is bound by
    memory, not arithmetic: a second thread helps a little when the other core is idle and slows the product
    several times over when that core is busy, as it is while a lesson or the model runs.
    """
    queries = unit_rows(vectors)
    blas = _blas()
    with blas.limit(limits=1) if blas is not None else contextlib.nullcontext():
        return queries @ unit_matrix.T


def top_k(row: np.ndarray, k: int) -> np.ndarray:
    """Indices of the `k` largest scores of `row`, largest first: `np.argsort(-row, kind="stable")[:k]`.

    A partial sort: `np.argpartition` finds the k largest in linear time, and only those are sorted.
    Ties come out as the stable full sort orders them (lower index first), including a tie across the
    k-th place: every score equal to the k-th is a candidate, and the candidates are sorted stably.
    Scores are finite (`faults.check_vectors` refuses NaN vectors).
    """
    row = np.asarray(row)
    k = min(max(k, 0), row.shape[0])
    if k == 0:
        return np.zeros(0, dtype=np.intp)
    if k == row.shape[0]:
        return np.argsort(-row, kind="stable")
    kth = row[np.argpartition(-row, k - 1)[k - 1]]
    candidates = np.flatnonzero(row >= kth)  # the k largest and any tied with the k-th, in index order
    return candidates[np.argsort(-row[candidates], kind="stable")[:k]]


INDEX_FORMAT = 1
INDEX_KEEP = 3
"""How many index files each backend and model keeps (the most recently used ones)."""


def index_key(backend: str, model: str, texts: Sequence[str]) -> str:
    """The hex sha256 that names one index: the format, backend, model and every text, in order."""
    digest = hashlib.sha256(f"index {INDEX_FORMAT}\0{backend}\0{model}\0{len(texts)}\0".encode())
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    return digest.hexdigest()


class IndexCache:
    """Whole catalogs' unit-vector matrices on disk, one `.npz` file per backend, model and list of texts.

    The files live in `indexes/` under the embedding cache folder (`cache.cache_dir()`). A changed,
    added or reordered text gives another key, so another file: the matrix is computed again. A file
    that cannot be read, or holds anything but the expected matrix, is reported with a warning and
    rebuilt. The per-text `EmbeddingCache` is not used for these vectors: ten thousand more vectors would
    make its JSON file about five times larger and some fifty times slower to read, in every lesson that
    opens it, than one binary matrix (docs/lab/docstring-history.md).
    """

    def __init__(self, backend: str, model: str, folder: Path | None = None):
        self.backend, self.model = backend, model
        self.folder = Path(folder or cache_dir()) / "indexes"
        self.slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{backend}--{model}")
        self.hit: bool | None = None
        """After `matrix`: True if it was read from disk, False if it was computed."""

    def path(self, key: str) -> Path:
        return self.folder / f"{self.slug}--{key[:32]}.npz"

    def _warn(self, path: Path, message: str) -> None:
        warnings.warn(f"{path}: index cache {message}", stacklevel=4)

    def _load(self, path: Path, key: str, rows: int) -> tuple[np.ndarray | None, str | None]:
        """The stored matrix and, if the file cannot be used, why (the matrix is then None)."""
        if not path.exists():
            return None, None
        try:
            with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as data:  # closed on any error
                stored_key, matrix = str(data["key"]), data["matrix"]
        except Exception as err:  # noqa: BLE001 - a damaged file can fail in many ways; it is only a cache
            return None, f"unreadable ({type(err).__name__}: {err})"
        if stored_key != key:
            return None, "unreadable (it was written for other texts)"
        if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != rows or not matrix.shape[1]:
            return None, f"unreadable (a {matrix.dtype} array of shape {matrix.shape}, not {rows} float32 rows)"
        norms = np.linalg.norm(matrix, axis=1)
        if not np.isfinite(norms).all() or not (np.isclose(norms, 1, atol=1e-3) | (norms == 0)).all():
            return None, "unreadable (its rows are not unit vectors)"
        return np.ascontiguousarray(matrix), None

    def _save(self, path: Path, key: str, matrix: np.ndarray) -> None:
        """Write atomically, then drop this backend and model's least recently used files beyond INDEX_KEEP."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with locked(path):
                with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as tmp:
                    np.savez(tmp, matrix=matrix, key=np.array(key))
                    tmp.flush()
                    os.fsync(tmp.fileno())
                os.replace(tmp.name, path)
            older = sorted(self.folder.glob(f"{self.slug}--*.npz"), key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in older[INDEX_KEEP:]:
                stale.unlink(missing_ok=True)
                stale.with_name(stale.name + ".lock").unlink(missing_ok=True)
        except OSError as err:
            self._warn(path, f"cannot be saved ({err})")

    def matrix(self, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The unit rows of `compute(texts)`, read from disk when these exact texts were indexed before."""
        key = index_key(self.backend, self.model, texts)
        path = self.path(key)
        found, problem = self._load(path, key, len(texts))
        self.hit = found is not None
        if found is not None:
            with contextlib.suppress(OSError):
                os.utime(path)  # most recently used
            return found
        if problem:
            self._warn(path, f"{problem}; rebuilding it")
        matrix = unit_rows(compute(list(texts)))
        if matrix.shape[0] != len(texts):
            raise EmbeddingError(f"{self.model} gave {matrix.shape[0]} vectors for {len(texts)} texts")
        self._save(path, key, matrix)
        return matrix


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

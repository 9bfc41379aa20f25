"""The pairs of skills most likely to be confused, by two signals: lexical (BM25) and embedding (cosine).

Lexical: each description is scored as a query against every other with BM25 (the two directions
averaged), on the words that appear in at least two descriptions (a word in one description cannot join a
pair). It needs no model and runs in a pre-commit hook. Embedding: the descriptions are embedded as
similarity embeds them (`selection.document_text`). Either way every pair is scored in blocks (ten thousand
skills make fifty million pairs, never held at once), and the closest pairs are kept with the mean and
spread of all pairs, so a pair can be said to stand out. Only the skills of the kept embedding pairs have
their bodies embedded: the body cosine says whether, once loaded, the instructions would tell the two apart.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from course_utils.audit.checks import shown_path
from course_utils.audit.report import STANDS_OUT_Z, Finding, Pair, PairSignal
from course_utils.audit.rules import RULES
from course_utils.backend.client import EMBEDDING_MODEL, backend_of, embedding_backend
from course_utils.selection.embeddings import EMBED_BATCH, IndexCache, embed_texts, top_k, unit_rows
from course_utils.selection.pick import document_text
from course_utils.skills.skill import SkillLoader

TOP_PAIRS = 10
BLOCK = 1024
RULE = (f"Cosine between the embedded descriptions (as similarity embeds them) of every pair of skills; the "
        f"{TOP_PAIRS} closest are shown. A pair stands out when its cosine is at least {STANDS_OUT_Z:g} standard "
        "deviations above the mean of all pairs. The body cosine compares the two instructions: lower than "
        "the description cosine means the bodies would tell the skills apart once loaded, but the choice is "
        "made on the descriptions. Among n pairs no z exceeds √(n−1): with four skills or fewer (six pairs) no "
        "pair can stand out by this rule, so read the cosines themselves.")
"""The rule the report states with the pairs."""


def embed_with_progress(client: Any, texts: Sequence[str], desc: str, progress: bool = True) -> np.ndarray:
    """`embed_texts` batch by batch, with a progress bar."""
    parts = []
    with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress) as bar:
        for start in range(0, len(texts), EMBED_BATCH):
            batch = list(texts[start:start + EMBED_BATCH])
            parts.append(embed_texts(client, batch))
            bar.update(len(batch))
    return np.vstack(parts) if parts else np.zeros((0, 1), dtype=np.float32)


def closest_pairs(units: np.ndarray, top: int = TOP_PAIRS) -> tuple[list[tuple[int, int, float]], float, float]:
    """The `top` pairs (i < j) of highest cosine among unit rows, highest first, and the mean and standard
    deviation of the cosines of all pairs."""
    return top_pairs(units.shape[0], lambda start, stop: units[start:stop] @ units.T, top)


def top_pairs(n: int, block_scores: Callable[[int, int], np.ndarray],
              top: int = TOP_PAIRS) -> tuple[list[tuple[int, int, float]], float, float]:
    """The `top` pairs (i < j) of highest score, highest first, and the mean and standard deviation of all
    pairs' scores; `block_scores(start, stop)` gives the scores of rows start..stop against every row."""
    best: list[tuple[float, int, int]] = []
    total = total_sq = 0.0
    count = 0
    for start in range(0, n, BLOCK):
        block = np.asarray(block_scores(start, min(start + BLOCK, n)))  # rows start.., every column
        rows = np.arange(block.shape[0])[:, None] + start
        upper = np.arange(n)[None, :] > rows  # each pair once, never a skill with itself
        values = block[upper]
        total += float(values.sum(dtype=np.float64))
        total_sq += float(np.square(values, dtype=np.float64).sum())
        count += values.size
        if values.size:
            keep = min(top, values.size)
            flat = np.flatnonzero(upper)
            chosen = flat[top_k(values, keep)]
            best += [(float(block.flat[f]), int(f // n) + start, int(f % n)) for f in chosen]
            best = sorted(best, key=lambda b: (-b[0], b[1], b[2]))[:top]
    mean = total / count if count else math.nan
    spread = math.sqrt(max(total_sq / count - mean * mean, 0.0)) if count else math.nan
    return [(i, j, score) for score, i, j in best], mean, spread


def embedding_pairs(client: Any, loader: SkillLoader, top: int = TOP_PAIRS, progress: bool = True) -> PairSignal:
    """The closest description pairs by cosine, each with its body cosine and whether it stands out."""
    skills = list(loader.skills.values())
    label = backend_of(client).embedding_label()
    cache = IndexCache(embedding_backend(client), EMBEDDING_MODEL)
    descriptions = cache.matrix([document_text(s) for s in skills],
                                lambda texts: embed_with_progress(client, texts, "descriptions", progress))
    found, mean, spread = closest_pairs(descriptions, top)
    involved = sorted({i for pair in found for i in pair[:2]})
    texts = [skills[i].body or skills[i].description for i in involved]
    bodies = unit_rows(embed_with_progress(client, texts, "bodies", progress)) if texts else None
    body_row = {index: bodies[row] for row, index in enumerate(involved)}
    pairs = tuple(_pair("embedding", skills[i], skills[j], score, mean, spread, float(body_row[i] @ body_row[j]))
                  for i, j, score in found)
    return PairSignal("embedding", label, pairs, len(skills) * (len(skills) - 1) // 2, mean, spread, RULE)


def _pair(signal: str, a: Any, b: Any, score: float, mean: float, spread: float,
          body: float | None = None) -> Pair:
    z = (score - mean) / spread if spread > 0 else 0.0
    return Pair(signal, a.name, b.name, score, z, z >= STANDS_OUT_Z, a.description, b.description, body)


WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
STOPWORDS = frozenset(
    "the and for with this that use when from into your you are not can its any all has have was were will "
    "des les une pour dans par sur est pas que qui aux ses son sans".split())
BM25_K1, BM25_B = 1.2, 0.75
"""BM25's usual constants (Robertson and Zaragoza, 2009)."""
LEXICAL_RULE = (f"BM25 between every pair of descriptions: each is scored as a query against the other (k1 = "
                f"{BM25_K1}, b = {BM25_B}, words of two letters or more, common words left out), the two directions "
                f"averaged. The {TOP_PAIRS} highest are shown; a pair stands out at {STANDS_OUT_Z:g} standard "
                "deviations above the mean of all pairs. It reads words, not meaning: paraphrases escape it.")


def words(text: str) -> list[str]:
    """The words BM25 counts: letters only, lower case, two or more, common words left out."""
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


def bm25_matrices(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(presence, weights): rows are texts, columns the words found in at least two texts. `presence` is 1
    where the text holds the word (the text as a query), `weights` its BM25 term weight (the text as a
    document); `presence[i] @ weights[j]` is the BM25 score of text i as a query against text j."""
    counted = [Counter(words(t)) for t in texts]
    df = Counter(w for c in counted for w in c)
    vocabulary = {w: k for k, w in enumerate(sorted(w for w, n in df.items() if n >= 2))}
    n = len(texts)
    presence = np.zeros((n, len(vocabulary)), dtype=np.float32)
    weights = np.zeros_like(presence)
    lengths = np.array([sum(c.values()) for c in counted], dtype=np.float32)
    average = float(lengths.mean()) if n and lengths.mean() > 0 else 1.0
    idf = np.array([math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in vocabulary], dtype=np.float32)
    for row, counts in enumerate(counted):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[row] / average)
        for word, tf in counts.items():
            if (col := vocabulary.get(word)) is not None:
                presence[row, col] = 1.0
                weights[row, col] = idf[col] * tf * (BM25_K1 + 1) / (tf + norm)
    return presence, weights


def lexical_pairs(loader: SkillLoader, top: int = TOP_PAIRS) -> PairSignal:
    """The closest description pairs by BM25 (see `LEXICAL_RULE`): no model, no encoder."""
    skills = list(loader.skills.values())
    presence, weights = bm25_matrices([s.description for s in skills])
    found, mean, spread = top_pairs(
        len(skills), lambda start, stop: (presence[start:stop] @ weights.T + weights[start:stop] @ presence.T) / 2,
        top)
    pairs = tuple(_pair("lexical", skills[i], skills[j], score, mean, spread) for i, j, score in found)
    return PairSignal("lexical", "BM25", pairs, len(skills) * (len(skills) - 1) // 2, mean, spread, LEXICAL_RULE)


def pair_findings(signal: PairSignal, loader: SkillLoader) -> list[Finding]:
    """SK301 (embedding) or SK302 (lexical) for each pair that stands out, reported on both skills' files."""
    code = "SK301" if signal.signal == "embedding" else "SK302"
    what = "cosine" if signal.signal == "embedding" else "BM25 score"
    found = []
    for p in signal.pairs:
        if not p.stands_out:
            continue
        path = loader.skills[p.a].path
        found.append(Finding(code, RULES[code].severity,
                             f"{p.a} and {p.b}: their descriptions' {what} {p.score:.2f} stands out ({p.z:.1f} "
                             f"standard deviations above the folder's mean)", RULES[code].fix, "pairs",
                             f"{p.a} / {p.b}", file=shown_path(path, path.parent.parent), skill=p.a, weight=p.z,
                             other=p.b, field="description"))
    return found

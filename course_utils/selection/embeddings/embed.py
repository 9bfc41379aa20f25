"""Texts to vectors, one request per batch, and the cosine of every pair of rows.

Built in `notebooks/07_embeddings.ipynb`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from google import genai
from google.genai import types

from course_utils.backend.client import EMBEDDING_MODEL
from course_utils.selection.faults import check_vectors

EMBED_BATCH = 100
"""The most texts one `batchEmbedContents` request carries on Gemini."""


def embed_texts(client: genai.Client, texts: Sequence[str], model: str = EMBEDDING_MODEL) -> np.ndarray:
    """One vector per text, as an (N, D) array.

    Each text goes in its own `types.Content`: given a list of plain strings, the SDK puts them in
    ONE Content for gemini-embedding-2, and one aggregated vector comes back.
    EmbeddingError (a ValueError) when the backend does not give one finite vector of one size per text.
    """
    vectors: list[list[float]] = []
    for start in range(0, len(texts), EMBED_BATCH):
        batch = texts[start : start + EMBED_BATCH]
        contents = [types.Content(parts=[types.Part(text=t)]) for t in batch]
        response = client.models.embed_content(model=model, contents=contents)
        values = [embedding.values for embedding in response.embeddings or []]
        vectors += check_vectors(values, len(batch), model).tolist()
    return check_vectors(vectors, len(texts), model)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of `a` with every row of `b`: an (len(a), len(b)) array."""
    a = a / np.linalg.norm(a, axis=1, keepdims=True).clip(min=1e-12)
    b = b / np.linalg.norm(b, axis=1, keepdims=True).clip(min=1e-12)
    return a @ b.T

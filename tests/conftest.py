"""Shared fixtures: a network guard, the local client, Chromium; tests marked `model` skip without files."""

from __future__ import annotations

import os
import socket

import pytest

from course_utils.backend.local.model_file import model_choice
from course_utils.backend.provision.models import FETCH_COMMAND, MODELS, status
from helpers.browser import chromium  # noqa: F401 - a fixture: the browser tests' check that Chromium is there


_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_CONNECT, _CONNECT_EX, _CREATE_CONNECTION = socket.socket.connect, socket.socket.connect_ex, socket.create_connection


def _guarded(original, address_at: int):
    def guard(*args, **kwargs):
        address = args[address_at]
        if isinstance(address, tuple) and address[0] in _LOOPBACK:
            return original(*args, **kwargs)
        raise OSError("network access is blocked in this test (no_network fixture)")
    return guard


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any attempt to open a network connection. Loopback stays open: the local model's llama.cpp server
    listens there (tokens counted, prompt prefixes saved and restored)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded(_CONNECT, 1))
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded(_CONNECT_EX, 1))
    monkeypatch.setattr(socket, "create_connection", _guarded(_CREATE_CONNECTION, 0))


@pytest.fixture(scope="session")
def local_client():
    """One local genai.Client for the session (models load on first use, once)."""
    from course_utils.backend.client import make_client

    return make_client("local", verbose=False)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip tests marked `model` when the local LLM file is not there — never in CI, where
    `make test` has fetched it: a missing model there must fail, not pass quietly."""
    if item.get_closest_marker("model") is None or os.environ.get("CI"):
        return
    choice = model_choice()
    if choice not in MODELS:
        return  # a GGUF path: the tests' own error says when it is missing
    model = status(choice)
    if not model.verified:
        pytest.skip(f"needs the local model file {model.path}: run `{FETCH_COMMAND}` "
                    "(make setup does)")


@pytest.fixture
def tree(tmp_path):
    """A skills root with one skill, and files beside it that read_file must never reach: (tmp_path, root)."""
    root = tmp_path / "skills"
    (root / "cake").mkdir(parents=True)
    (root / "cake" / "SKILL.md").write_text("---\nname: cake\ndescription: d\n---\nBody.\n")
    (tmp_path / "secret.txt").write_text("the key")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "SKILL.md").write_text("outside body")
    return tmp_path, root

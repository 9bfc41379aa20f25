"""The fuzz command's wiring, for a few seconds per target (the 5-minute runs are `make fuzz`), and its
seeds through every target without atheris."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from scripts.lab.fuzz import TARGET_NAMES, make_target, write_seeds

# CI installs the fuzz extra (make test): there, a missing atheris must fail, not skip quietly.
needs_atheris = pytest.mark.skipif(
    importlib.util.find_spec("atheris") is None and not os.environ.get("CI"),
    reason="atheris is not installed: pip install -e '.[fuzz]' (make test and make fuzz install it)")


def fuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scripts.lab", "fuzz", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_every_seed_gives_a_documented_outcome(tmp_path, name):
    count = write_seeds(name, tmp_path / "seeds")
    assert count >= 5
    target = make_target(name, tmp_path / "work")
    (tmp_path / "work").mkdir()
    for seed in sorted((tmp_path / "seeds").iterdir()):
        target(seed.read_bytes())  # raises on a finding


@needs_atheris
def test_each_target_runs_for_two_seconds_without_a_finding(tmp_path):
    result = fuzz("all", "--seconds", "2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == list(TARGET_NAMES)
    for line in lines:
        match = re.fullmatch(r"[a-z-]+: 2 s, ([\d,]+) executions, no finding", line)
        assert match and int(match[1].replace(",", "")) > 10, line


@needs_atheris
def test_a_finding_is_reported_and_saved_and_can_be_replayed(tmp_path):
    result = fuzz("canary", "--seconds", "20", "--out", str(tmp_path))
    assert result.returncode == 1
    saved = re.search(r"canary: FINDING after \d+ executions: the input is saved in (\S+); replay it with "
                      r"`python -m scripts\.lab fuzz canary --reproduce \1`; the log is \S+canary\.log",
                      result.stdout)
    assert saved, result.stdout
    replay = fuzz("canary", "--reproduce", saved[1])
    assert replay.returncode == 1 and "Finding: the canary target fails on every input" in replay.stderr
    assert fuzz("frontmatter", "--reproduce", saved[1]).returncode == 0


def test_without_atheris_the_command_says_how_to_install_it(monkeypatch, capsys):
    from scripts.lab import fuzz as command
    from scripts.lab.cli import build_parser

    monkeypatch.setitem(sys.modules, "atheris", None)  # import atheris now raises ImportError
    args = build_parser().parse_args(["fuzz", "all", "--seconds", "1"])
    assert command.fuzz(args) == 2
    assert "atheris is not installed: run `pip install -e '.[fuzz]'`" in capsys.readouterr().err

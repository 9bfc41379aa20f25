"""Boundaries inside the package, read from the source (no import, no model): a backend builds on the shared
backend modules, never on another backend; no module reaches for another's private names; the local backend
stays small; and outside `course_utils/backend/` nothing branches on a backend's name (a backend's facts say
what differs, `backend.facts`)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from course_utils.skills.paths import REPO_ROOT
from helpers.imports import PACKAGE, imported, module_name

BACKEND = PACKAGE / "backend"
BACKENDS = {"local": "course_utils.backend.local", "openai": "course_utils.backend.openai_compatible"}
"""Each in-process backend and the module or package that is it."""
LOCAL_LINES = 1300
NAMES = "(?:local|gemini|openai|scripted)"
NAME_BRANCH = re.compile(
    rf"""(\.name|backend_name\([^)]*\)|\bbackend)\s*(==|!=|\bin\b|\bnot in\b)\s*[("']*{NAMES}['"]"""
    rf"""|['"]{NAMES}['"]\s*(==|!=)\s*\w*\.?name\b"""
    rf"""|\{{\s*['"]{NAMES}['"]\s*:""")
"""A test of a backend's name (`backend.name == "local"`, `backend_name(client) != "gemini"`, `backend in
("openai", …`), or a table keyed by it (`{"local": 32, …}`)."""


def private_imports(path: Path) -> list[str]:
    """'line: name from module' for each name starting with `_` that `path` imports from a course_utils module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("course_utils")):
            found += [f"{node.lineno}: {alias.name} from {node.module}" for alias in node.names
                      if alias.name.startswith("_")]
    return found


def owner(module: str) -> str | None:
    """The backend whose module `module` is, if any."""
    return next((name for name, root in BACKENDS.items() if module == root or module.startswith(root + ".")), None)


def cross_backend_imports() -> list[str]:
    """'path:line: module imports target' for each import of one backend's module by another backend's."""
    found = []
    for path in sorted(BACKEND.rglob("*.py")):
        source = owner(module_name(path))
        for line, target in imported(path):
            if source and owner(target) not in (None, source):
                found.append(f"{path.relative_to(REPO_ROOT)}:{line}: {module_name(path)} imports {target}")
    return found


def code_lines() -> list[tuple[str, str]]:
    """(where, line) for every line of the package outside `backend/` and of every lesson's code cells."""
    lines = [(f"{path.relative_to(REPO_ROOT)}:{n}", text) for path in sorted(PACKAGE.rglob("*.py"))
             if BACKEND not in path.parents for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    for notebook in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        lines += [(f"{notebook.relative_to(REPO_ROOT)} cell {i}", text) for i, cell in enumerate(cells)
                  if cell["cell_type"] == "code" for text in "".join(cell["source"]).splitlines()]
    return lines


def name_branches() -> list[str]:
    """Every line outside `backend/` (lessons' code cells included) that tests a backend's name."""
    return [f"{where}: {text.strip()}" for where, text in code_lines() if NAME_BRANCH.search(text)]


def test_no_module_imports_a_private_name_of_another():
    assert [f"{path.relative_to(REPO_ROOT)}:{found}" for path in sorted(PACKAGE.rglob("*.py"))
            for found in private_imports(path)] == []


def test_the_private_import_reader_sees_one(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from os import _exit\nfrom course_utils.backend.content import text_of, _hidden\n"
                     "from .wire import _ROUTE\n")
    assert private_imports(probe) == ["2: _hidden from course_utils.backend.content", "3: _ROUTE from wire"]


def test_no_backend_imports_another_backend():
    assert cross_backend_imports() == []
    assert owner("course_utils.backend.local.app") == "local"
    assert owner("course_utils.backend.content") is None


def test_the_local_backend_stays_under_its_line_budget():
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in (BACKEND / "local").glob("*.py"))
    assert lines < LOCAL_LINES, f"course_utils/backend/local/*.py holds {lines} lines, over {LOCAL_LINES}"


def test_nothing_outside_the_backend_branches_on_a_backends_name():
    found = name_branches()
    assert found == []


def test_the_name_branch_pattern_sees_each_form():
    branches = ['max_output_tokens=32 if backend.name == "local" else None',
                "cap = 2 if backend_name(client) == 'local' else None",
                'if backend != "gemini":', 'runs = 3 if "gemini" == backend.name else 1',
                'if backend.name in ("openai", "local"):', 'DECISION_TOKENS = {"local": 32, "openai": 256}']
    choices = ['choices=("auto", "local", "gemini", "openai")', 'make_client("local", verbose=False)',
               'print("backend:", backend.name)', 'SimpleNamespace(name="local")']
    assert [bool(NAME_BRANCH.search(text)) for text in branches + choices] == [True] * 6 + [False] * 4

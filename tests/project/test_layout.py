"""The package's layers, read from the source with `ast` (no import, no model).

The package's parts follow the course's arc, and each part is one layer. From the bottom up: the backend
(`course_utils/backend/`: `make_client` and what answers its requests), the skill files and their catalog
(`skills/`), who picks (`selection/`), the tool loop (`loop/`), the measurements (`evaluation/`), choosing at scale
(`scale/`), the audit (`audit/`), the lessons' own helpers (`lessons/`), the learner's command line (`cli/` and
`course_utils/__main__.py`). A module may import its own part and the parts below it, never one above. Every import
counts, wherever it is written (a function's body too). The lab's development commands live outside the package
(`scripts/lab/`), and nothing in the package imports them or the tests.

`docs/architecture.md`, the design map, names every module of the package and only modules that exist.

Beside the package, `data/measured/` holds only the records a lesson, a module or a test reads: each is named by
one of them (its path, or its folder with its name or a pattern). The lab's development records live in
`docs/lab/records/`.
"""
from __future__ import annotations

import ast
import fnmatch
import json
import re
import sys
from pathlib import Path

import pytest

from course_utils.skills.paths import REPO_ROOT
import helpers.imports
from helpers.imports import PACKAGE, imported, module_name

LAYERS = ("backend", "skills", "selection", "loop", "evaluation", "scale", "audit", "lessons", "cli")
"""The parts, from the bottom up: a module may import only from its own part and the parts before it."""


def layer(module: str) -> str:
    """The layer of a module of the package: the part (sub-package) its file is in; `__main__` is the command line."""
    parts = module.split(".")
    return "cli" if parts[1:] == ["__main__"] else parts[1]


def upward_imports() -> list[str]:
    """Every import of a module from a higher layer, as 'path:line: module (layer) imports target (layer)'."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        for line, target in imported(path):
            if target == "course_utils":
                continue  # the package itself: its __init__ holds only a docstring
            if LAYERS.index(layer(target)) > LAYERS.index(layer(source)):
                problems.append(f"{path.relative_to(REPO_ROOT)}:{line}: {source} ({layer(source)}) imports "
                                f"{target} ({layer(target)}), a higher layer")
    return problems


def test_the_layers_are_where_the_files_are():
    assert layer("course_utils.backend.client") == layer("course_utils.backend.local.app") == "backend"
    assert layer("course_utils.skills.skill") == layer("course_utils.skills") == "skills"
    assert layer("course_utils.selection.embeddings.index") == "selection"
    assert layer("course_utils.lessons.exercises.judge") == "lessons"
    assert layer("course_utils.cli.main") == layer("course_utils.__main__") == "cli"


def test_the_package_holds_only_its_parts():
    """`ls course_utils`: the package's `__init__.py` and `__main__.py`, and one folder per part, each a package."""
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", "__main__.py", *LAYERS}
    assert all((PACKAGE / part / "__init__.py").is_file() for part in LAYERS)


def test_the_package_imports_neither_the_lab_nor_the_tests():
    found = [f"{path.relative_to(REPO_ROOT)}: {name}" for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Import | ast.ImportFrom)
             for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
             if name.split(".")[0] in ("scripts", "tests")]
    assert not found, "the package imports the lab or the tests:\n" + "\n".join(found)


def test_the_import_reader_sees_every_form_of_import(tmp_path, monkeypatch):
    """Absolute, from-imports of a module, relative, and imports inside a function."""
    monkeypatch.setattr(helpers.imports, "REPO_ROOT", tmp_path)
    backend = tmp_path / "course_utils" / "backend"
    backend.mkdir(parents=True)
    for name in ("__init__.py", "backend/__init__.py", "skills.py", "cli.py"):
        (tmp_path / "course_utils" / name).write_text("")
    (backend / "client.py").write_text(
        "import course_utils.skills\nfrom course_utils import cli\nfrom .. import skills\n"
        "from ..skills import Skill\ndef f():\n    from course_utils.backend import client\n")
    assert imported(backend / "client.py") == [
        (1, "course_utils.skills"), (2, "course_utils.cli"), (3, "course_utils.skills"),
        (4, "course_utils.skills"), (6, "course_utils.backend.client")]


def test_no_module_imports_from_a_higher_layer():
    problems = upward_imports()
    assert not problems, f"imports that go up a layer ({' < '.join(LAYERS)}):\n" + "\n".join(problems)


def test_every_layer_has_its_modules():
    """The rule is not vacuous: each part holds modules, and each part above the skill files builds on one below."""
    modules = [module_name(p) for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE]
    assert {layer(m) for m in modules} == set(LAYERS)
    for part in LAYERS[2:]:  # the skill files build on nothing of the package but themselves
        below = {layer(t) for p in (PACKAGE / part).rglob("*.py") for _, t in imported(p) if t != "course_utils"}
        assert below & set(LAYERS[:LAYERS.index(part)]), f"{part}/ imports no part below it"


def import_graph() -> dict[str, set[str]]:
    """Each module of the package -> the package modules it imports (a `TYPE_CHECKING` import counts too)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        graph[source] = {target for _, target in imported(path) if target not in ("course_utils", source)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_type_checking_import(tmp_path, monkeypatch):
    monkeypatch.setattr(helpers.imports, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "course_utils")
    (tmp_path / "course_utils").mkdir()
    (tmp_path / "course_utils" / "__init__.py").write_text("")
    (tmp_path / "course_utils" / "a.py").write_text("from course_utils import b\n")
    (tmp_path / "course_utils" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from course_utils.a import A\n")
    (tmp_path / "course_utils" / "c.py").write_text("from course_utils import a\n")
    assert cycles(import_graph()) == [["course_utils.a", "course_utils.b"]]


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "modules that import each other (TYPE_CHECKING imports count):\n" + "\n".join(map(str, found))


# ---------------------------------------------------------------- data/measured/ holds what lessons and tests read

MEASURED = REPO_ROOT / "data" / "measured"
NOT_READERS = ("tests/project/test_layout.py", "tests/lab/test_test_sets_ledger.py",
               "tests/evaluation/test_bakery_eval.py")
"""Sources that name records without reading them for a lesson: this file, the ledger's test and the bakery records'
split check go through every record of a folder to check the records themselves (the lab, which writes them, is
outside the package, in `scripts/lab/`)."""
JOINED = re.compile(r"""["']\s*/\s*f?["']""")
"""`"measured" / "bakery"` and `"abstention_lesson" / f"{X}.json"`, as one path."""


def normalized(text: str) -> str:
    """Source text with `DATA_DIR / "x"` and `"a" / "b"` written as the paths they join."""
    return JOINED.sub("/", re.sub(r"""\bDATA_DIR\s*/\s*["']""", '"data/', text))


def source_text(path: Path) -> str:
    """A Python file's text, or every cell's source of a notebook."""
    if path.suffix == ".ipynb":
        return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"])
    return path.read_text(encoding="utf-8")


def readers() -> dict[str, str]:
    """Each lesson, module of the package and test that may read a record, as its normalized text."""
    paths = [*sorted((REPO_ROOT / "notebooks").glob("*.ipynb")), *sorted(PACKAGE.rglob("*.py")),
             *sorted((REPO_ROOT / "tests").rglob("*.py"))]
    found = {str(p.relative_to(REPO_ROOT)): normalized(source_text(p)) for p in paths}
    return {name: text for name, text in found.items() if not name.startswith(NOT_READERS)}


FOLDER = r'"data/measured/([\w-]+)"'


def folder_constants() -> dict[str, str]:
    """The package's names for folders of data/measured/: `MEASURED_DIR` -> `bakery`."""
    return {name: folder for path in sorted(PACKAGE.rglob("*.py"))
            for name, folder in re.findall(rf"^([A-Z][A-Z_]*) = {FOLDER}$", normalized(path.read_text("utf-8")),
                                           re.MULTILINE)}


def named_files(text: str, constants: dict[str, str]) -> set[tuple[str, str]]:
    """(folder, file name or pattern) for each record a reader's text names under data/measured/ (folder '' for
    the top level): by its path; by a glob of its folder; by its name or an f-string joined to a name for its
    folder (a package constant, or a variable of the reader's own). A pattern's `{…}` reads as `*`."""
    aliases = dict(constants)
    aliases |= {name: folder for name, folder in re.findall(rf"\b(\w+) = {FOLDER}", text)}
    for name, folder in list(aliases.items()):  # `records = fix.RECORD_DIR`
        aliases |= {alias: folder for alias in re.findall(rf"^\s*(\w+) = (?:\w+\.)?{name}$", text, re.MULTILINE)}
    found = set(re.findall(r"measured/([\w-]+)/([^\"'/\s]+)", text))
    found |= {("", name) for name in re.findall(r"measured/([^\"'/\s]+\.json)", text)}
    found |= set(re.findall(rf"{FOLDER}\)?\s*\.r?glob\([\"']([^\"']+)", text))
    for name, folder in aliases.items():
        found |= {(folder, file) for file in re.findall(rf"\b{name}\)?\s*(?:/\s*f?|\.r?glob\()[\"']([^\"']+)[\"']",
                                                        text)}
    return {(folder, re.sub(r"\{[^}]*\}", "*", file)) for folder, file in found}


def unread_records(records: list[str], sources: dict[str, str], constants: dict[str, str]) -> list[str]:
    """The records (paths under data/measured/) that no source names."""
    named = set().union(*(named_files(text, constants) for text in sources.values()))
    return [record for record in records
            if not any(folder == record.rpartition("/")[0] and fnmatch.fnmatchcase(record.rpartition("/")[2], file)
                       for folder, file in named)]


def test_the_record_reader_finds_paths_folders_and_patterns():
    constants = {"MEASURED_DIR": "bakery"}
    sources = {"lesson": normalized('RECORDS = DATA_DIR / "measured" / "who_picks"\nRECORDS / f"{name}_dev.json"'),
               "test": normalized('read(MEASURED_DIR / "test_fresh.json"); DATA_DIR / "measured" / "top.json"'),
               "glob": normalized('(DATA_DIR / "measured" / "models").glob("bench_*.json"); open(f"{x}.json")'),
               "path": normalized('REPO_ROOT / "data" / "measured" / "abstention" / f"{BEST}.json"')}
    assert unread_records(["who_picks/a_dev.json", "who_picks/a.json", "bakery/test_fresh.json", "bakery/dev_1.json",
                           "top.json", "other.json", "models/bench_x.json", "models/dev_x.json", "abstention/b.json"],
                          sources, constants) == ["who_picks/a.json", "bakery/dev_1.json", "other.json",
                                                  "models/dev_x.json"]


def test_data_measured_holds_only_records_a_lesson_or_a_test_reads():
    """A record no lesson, module or test names belongs beside the lab notes that cite it, in docs/lab/records/."""
    records = [str(p.relative_to(MEASURED)) for p in sorted(MEASURED.rglob("*")) if p.is_file()]
    assert records, "data/measured/ holds the records the lessons read"
    unread = unread_records(records, readers(), folder_constants())
    assert not unread, ("records in data/measured/ that no lesson, module or test reads (move them to "
                        "docs/lab/records/ with the page that cites them):\n" + "\n".join(unread))


# ---------------------------------------------------------------- the design map names every module

ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
MAP_HEADER = ["part", "module", "lessons", "what it owns"]


def mapped_modules(text: str) -> list[str]:
    """The module cells (paths under course_utils/) of the map's table, in order."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if [c.strip() for c in line.strip("|").split("|")] == MAP_HEADER)
    found = []
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cell = line.strip("|").split("|")[1].strip()
        assert re.fullmatch(r"`[\w/]+\.py`", cell), f"{ARCHITECTURE.name}: not one module in backticks: {line!r}"
        found.append(cell.strip("`"))
    return found


def test_the_design_map_names_every_module_once_and_only_modules_that_exist():
    mapped = mapped_modules(ARCHITECTURE.read_text(encoding="utf-8"))
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    missing, extra = sorted(modules - set(mapped)), sorted(set(mapped) - modules)
    assert not missing, f"modules {ARCHITECTURE.name} does not name: {missing}"
    assert not extra, f"{ARCHITECTURE.name} names modules that do not exist: {extra}"
    assert len(mapped) == len(set(mapped)), "a module named twice"


def test_the_design_map_check_sees_a_missing_and_an_extra_module():
    text = (f"| {' | '.join(MAP_HEADER)} |\n|---|---|---|---|\n| skills | `skills/skill.py` | 01 | skills |\n"
            "| scale | `gone.py` | — | x |\n")
    assert mapped_modules(text) == ["skills/skill.py", "gone.py"]
    with pytest.raises(AssertionError, match="not one module"):
        mapped_modules(text + "| audit | `a.py`, `b.py` | 12 | two |\n")


def test_tests_sit_by_layer_and_share_only_helpers():
    """Each test file sits in a folder named for what it tests, and a test imports no other test module: what
    several share is in `tests/helpers/`."""
    tests = REPO_ROOT / "tests"
    folders = {*LAYERS, "lab", "project", "helpers", "fixtures", "__pycache__"}
    assert sorted(p.name for p in tests.glob("test_*.py")) == []
    assert sorted(p.name for p in tests.iterdir() if p.is_dir() and p.name not in folders) == []
    crossing = [f"{path.relative_to(tests)}:{node.lineno}" for path in sorted(tests.rglob("test_*.py"))
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom | ast.Import)
                for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
                if name.split(".")[-1].startswith("test_")]
    assert crossing == []

"""The package's modules and their imports, read from the source with `ast` (no import)."""
from __future__ import annotations

import ast
from pathlib import Path

from course_utils.skills.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "course_utils"


def module_name(path: Path) -> str:
    """`course_utils/backend/client.py` -> `course_utils.backend.client` (a package is its `__init__`)."""
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether `name` is a module or a package of course_utils."""
    path = REPO_ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every course_utils module that `path` imports, relative imports resolved."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if is_module(full) else base))
    return [(line, name) for line, name in found if name == "course_utils" or name.startswith("course_utils.")]

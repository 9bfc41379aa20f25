"""No function of the package over 60 lines or over 8 parameters, read with `ast` (a long function or a long
argument list is a sign that a value or a helper is missing)."""
from __future__ import annotations

import ast

from course_utils.skills.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "course_utils"
MAX_LINES = 60
MAX_PARAMETERS = 8


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Every parameter, self and *args/**kwargs included."""
    args = node.args
    return (len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs) + (args.vararg is not None)
            + (args.kwarg is not None))


def offenders() -> dict[str, str]:
    """'path:function' -> what is too big, for every function of the package over a limit."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines, count = node.end_lineno - node.lineno + 1, parameters(node)
            if lines > MAX_LINES or count > MAX_PARAMETERS:
                found[f"{path.relative_to(REPO_ROOT)}:{node.name}"] = f"{lines} lines, {count} parameters"
    return found


def test_no_function_is_over_60_lines_or_8_parameters():
    found = offenders()
    assert not found, "\n".join(f"{name}: {why}" for name, why in found.items())


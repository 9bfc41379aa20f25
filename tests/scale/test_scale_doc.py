"""docs/scale.md quotes scripts/scale_figures.py's output, computed from the recorded token counts."""
from __future__ import annotations

import importlib.util
import sys

from course_utils.skills.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "scale_figures.py"
DOC = REPO_ROOT / "docs" / "scale.md"


def figures() -> str:
    spec = importlib.util.spec_from_file_location("scale_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return "\n".join(module.lines(module.json.loads(module.RECORD.read_text(encoding="utf-8"))))


def test_the_scale_page_quotes_the_scripts_figures_line_for_line():
    assert figures() in DOC.read_text(encoding="utf-8"), (
        "docs/scale.md's figures differ from `python scripts/scale_figures.py`: paste its output into the page")


def test_the_figures_say_the_whole_catalog_does_not_fit_and_the_shortlists_do():
    rows = [line for line in figures().splitlines() if line.startswith("| full catalog") or line.startswith("| hybrid")]
    fits = {row.split(" | ")[0].lstrip("| "): row.split(" | ")[2] for row in rows[:3]}
    assert fits == {"full catalog (10,000 skills)": "no", "hybrid k=3": "yes", "hybrid k=10": "yes"}

"""Every lesson is stored without outputs and executes headless, top to bottom."""
import nbformat
import pytest

from course_utils.notebooks import execute_notebook
from course_utils.paths import BUILD_DIR, NOTEBOOKS_DIR

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def test_the_course_has_its_nine_lessons_each_ending_with_a_checklist():
    assert [p.name[:2] for p in LESSONS] == [f"{n:02d}" for n in range(9)]
    for path in LESSONS:
        last = nbformat.read(path, as_version=4).cells[-1]
        assert last.cell_type == "markdown" and "## I can now" in last.source, f"{path.name}: end with an 'I can now' list"
        assert last.source.count("- [ ]") >= 3, f"{path.name}: the checklist needs at least three items"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: clear the outputs"


@pytest.mark.notebook
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_executes_headless(path):
    notebook = execute_notebook(path, BUILD_DIR / "test-notebooks")
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []

"""Every lesson is stored without outputs and executes headless, top to bottom."""
import nbformat
import pytest

from course_utils.notebooks import execute_notebook
from course_utils.paths import BUILD_DIR, NOTEBOOKS_DIR

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def test_the_course_has_lessons():
    assert [p.name[:2] for p in LESSONS][:3] == ["00", "01", "02"]


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

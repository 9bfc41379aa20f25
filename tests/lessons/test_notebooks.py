"""Every lesson is stored without outputs, executes headless, top to bottom, and titles its figures with what ran."""
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_utils.skills.paths import BUILD_DIR, NOTEBOOKS_DIR

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
LESSON_TIMEOUT = 1500
"""Seconds one lesson may take here: the limit turns a hang into a failure that names the lesson (the cell budget
is `test_lesson_shape.py`'s)."""


def test_the_course_has_fourteen_titled_lessons_each_ending_with_a_checklist_and_references():
    assert [p.name[:2] for p in LESSONS] == [f"{n:02d}" for n in range(14)]
    for path in LESSONS:
        cells = nbformat.read(path, as_version=4).cells
        assert cells[0].cell_type == "markdown" and cells[0].source.startswith(f"# {path.name[:2]} · "), \
            f"{path.name}: start with a title cell '# {path.name[:2]} · …'"
        last = cells[-2] if cells[-1].source.startswith("## References") else cells[-1]
        assert last.cell_type == "markdown" and "## I can now" in last.source, \
            f"{path.name}: end with an 'I can now' list (then, optionally, '## References')"
        assert last.source.count("- [ ]") >= 3, f"{path.name}: the checklist needs at least three items"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: clear the outputs"


def runs_in_browser(path: Path, session: pytest.Session) -> bool:
    """Whether a browser test of this session runs `path` top to bottom in JupyterLab (lessons/test_browser.py)."""
    from helpers.browser import browser_available

    return browser_available() and any(marker.args == (path.name,) for item in session.items
                                       for marker in item.iter_markers("lesson"))


@pytest.mark.notebook
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_executes_headless(path, request):
    """Each lesson runs in its own Python process, as `make course` runs it, unless this session's browser
    test runs it (its run fails on any traceback, as this one does): each lesson is executed once per suite.

    In the same process as the rest of the suite, the widget cell of lesson 08 (then numbered 06) twice waited
    forever for a reply the kernel had sent (kernel and client both idle); a process per lesson keeps the other tests'
    state out, and the timeout turns any hang into a failure that names the lesson.
    """
    if runs_in_browser(path, request.session):
        pytest.skip(f"{path.name} runs top to bottom in JupyterLab in tests/lessons/test_browser.py")
    out = BUILD_DIR / "test-notebooks"
    script = "import sys; from pathlib import Path; from course_utils.cli.notebooks import execute_notebook; " \
             "execute_notebook(Path(sys.argv[1]), Path(sys.argv[2]))"
    try:
        run = subprocess.run([sys.executable, "-c", script, str(path), str(out)], capture_output=True, text=True,
                             timeout=LESSON_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name} did not finish in {LESSON_TIMEOUT} s")
    assert run.returncode == 0, f"{path.name} failed:\n{run.stderr[-3000:]}"
    notebook = nbformat.read(out / path.name, as_version=4)
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


TITLE_CALL = re.compile(r"set_title\(|suptitle\(|threshold_figure\(|ThresholdExplorer\(")
MODEL_NAME = re.compile(r"EMBEDDING_MODEL|GENERATION_MODEL|\.model\b|gemini-")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_figure_titles_name_what_ran(path):
    """A title built from a requested model name (`gemini-embedding-2`, `EMBEDDING_MODEL`, `selector.model`)
    would put a Gemini name on a local result: titles use `backend_of(client)` labels, or say 'cited'."""
    notebook = nbformat.read(path, as_version=4)
    bad = [line.strip() for cell in notebook.cells if cell.cell_type == "code" for line in cell.source.splitlines()
           if TITLE_CALL.search(line) and MODEL_NAME.search(line) and "cited" not in line]
    assert bad == [], f"{path.name}: label the figure with backend_of(client).generation_label()/embedding_label():\n" \
                      + "\n".join(bad)

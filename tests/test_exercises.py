"""The lesson 07 checker: each kind of wrong answer gets its plain-words explanation, and it never raises.

The learner functions below are fakes of what learners write; the client and the selector are fakes
too (no model, see `hybrid_fakes.py`).
"""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from hybrid_fakes import FakeSelector, fake_client

from course_utils.exercises import CHECK_QUERIES, RecordingClient, check_hybrid, inspect_request
from course_utils.notebooks import execute_notebook
from course_utils.paths import BUILD_DIR, NOTEBOOKS_DIR
from course_utils.selection import ACTIVATE, Decision, pick_by_model, pick_hybrid
from course_utils.skills import SkillLoader

FIXTURES = Path(__file__).parent / "fixtures"
TINY = SkillLoader.from_root(FIXTURES / "tiny_catalog")
WORKPLACE = SkillLoader.from_root(Path(__file__).parents[1] / "skills" / "workplace")
LESSON = NOTEBOOKS_DIR / "07_hybrid_exercise.ipynb"


# ----------------------------------------------------------------- fake learner functions


def stub_raises(client, loader, selector, query, k=3):
    # YOUR CODE HERE
    raise NotImplementedError


def stub_returns(client, loader, selector, query, k=3):
    # YOUR CODE HERE
    return NotImplemented


def crashes(client, loader, selector, query, k=3):
    row = selector.scores([query])[0]
    top = selector.top(row, k)
    return pick_by_model(client, loader.subset(top), query)  # pairs, not names: KeyError


def returns_a_tuple(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], k)]
    decision = pick_by_model(client, loader.subset(top), query)
    return decision.skill, decision.prompt_tokens


def forgets_return(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], k)]
    pick_by_model(client, loader.subset(top), query)


def full_catalog(client, loader, selector, query, k=3):
    selector.top(selector.scores([query])[0], k)
    return pick_by_model(client, loader, query)


def fixed_three(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], 3)]
    return pick_by_model(client, loader.subset(top), query)


def outside_top_k(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], k)]
    decision = pick_by_model(client, loader.subset(top), query)
    return Decision(loader.names[0], decision.prompt_tokens)  # the first catalog name: ranked last


def no_model(client, loader, selector, query, k=3):
    return Decision(selector.top(selector.scores([query])[0], 1)[0][0], 1)


def no_tokens(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], k)]
    return Decision(pick_by_model(client, loader.subset(top), query).skill)


def correct(client, loader, selector, query, k=3):
    top = [name for name, _ in selector.top(selector.scores([query])[0], k)]
    return pick_by_model(client, loader.subset(top), query)


def check(function, loader=WORKPLACE, **kwargs):
    return check_hybrid(function, fake_client(), loader, FakeSelector(loader), verbose=False, **kwargs)


# ----------------------------------------------------------------- one plain-words message per mistake


@pytest.mark.parametrize("function", [stub_raises, stub_returns])
def test_not_implemented_yet(function):
    result = check(function)
    assert (result.passed, result.problem) == (False, "not implemented")
    assert "not implemented yet" in str(result) and "# YOUR CODE HERE" in str(result)


def test_a_crash_names_the_exception_and_the_line():
    result = check(crashes)
    assert (result.passed, result.problem) == (False, "crash")
    text = str(result)
    assert f"crashed on the query {CHECK_QUERIES[0]!r} (k=3)" in text
    assert "KeyError: ('" in text  # the exception type and message
    assert "Your line: return pick_by_model(client, loader.subset(top), query)" in text  # the learner's line
    assert "(crashes, line" in text
    assert "It finally broke in" in text and "course_utils/skills.py" in text  # and where it ended


@pytest.mark.parametrize("function, extra", [(returns_a_tuple, "returned a tuple: ("),
                                             (forgets_return, "Did you forget `return`?")])
def test_wrong_return_type(function, extra):
    result = check(function)
    assert (result.passed, result.problem) == (False, "return type")
    assert "Expected a Decision" in str(result) and ".skill" in str(result) and extra in str(result)


def test_the_full_catalog_sent_to_the_model():
    result = check(full_catalog)
    assert (result.passed, result.problem) == (False, "too many skills")
    text = str(result)
    assert "sent the model the full catalog (14 skills), not the top 3" in text
    top3 = ", ".join(list(reversed(WORKPLACE.names))[:3])
    assert f"The top 3 by similarity were: {top3}." in text and "loader.subset(names)" in text


def test_a_fixed_k_is_caught_by_the_second_query():
    result = check(fixed_three)
    assert (result.passed, result.problem) == (False, "too many skills")
    assert f"On the query {CHECK_QUERIES[1]!r} with k=2" in str(result)
    assert "Use the k your function receives (here 2)" in str(result)


def test_a_name_outside_the_top_k():
    result = check(outside_top_k)
    assert (result.passed, result.problem) == (False, "outside the top k")
    text = str(result)
    top3 = ", ".join(list(reversed(WORKPLACE.names))[:3])
    assert f"On the query {CHECK_QUERIES[0]!r} with k=3" in text
    assert f"returned {WORKPLACE.names[0]!r}, which is not in the top 3" in text
    assert f"The top 3 by similarity were: {top3}." in text


def test_no_model_call():
    result = check(no_model)
    assert (result.passed, result.problem) == (False, "no model call")
    assert "never asked the model" in str(result)


def test_zero_prompt_tokens():
    result = check(no_tokens)
    assert (result.passed, result.problem) == (False, "no prompt tokens")


@pytest.mark.parametrize("loader", [WORKPLACE, TINY], ids=["workplace", "tiny"])
def test_a_correct_function_passes(loader):
    result = check(correct, loader)
    assert result.passed and result.problem is None
    assert str(result).startswith("Passed: on 2 queries")


def test_the_reference_solution_passes():
    assert check(pick_hybrid).passed


def test_the_checker_prints_and_never_raises(capsys):
    def explodes(*args, **kwargs):
        raise SystemError("boom")

    result = check_hybrid(explodes, fake_client(), TINY, FakeSelector(TINY))
    assert not result.passed and "SystemError: boom" in capsys.readouterr().out

    class BrokenSelector(FakeSelector):
        def scores(self, queries):
            raise RuntimeError("no embeddings")

    result = check_hybrid(correct, fake_client(), TINY, BrokenSelector(TINY), verbose=False)
    assert result.problem == "checker" and "could not rank the skills" in str(result)


def test_the_proxy_reads_what_the_model_was_offered():
    client = RecordingClient(fake_client())
    pick_by_model(client, TINY.subset(["csv-data-profiler"]), "sales.csv ok?")
    (call,) = client.models.calls
    assert call.declared == ["csv-data-profiler"] and call.catalog == ["csv-data-profiler"]
    assert client.course_backend.name == "local"  # everything else is the real client's
    as_dict = inspect_request({"system_instruction": TINY.system_instruction(function=ACTIVATE)})
    assert as_dict.catalog == TINY.names and as_dict.declared == []


# ----------------------------------------------------------------- the lesson, solved


@pytest.mark.notebook
@pytest.mark.model
@pytest.mark.timeout(3600)  # ~100 local decisions: about 10 minutes on a quiet 2-core machine, 30 on a busy one
def test_the_lesson_runs_with_the_solution_shown(monkeypatch):
    """With COURSE_SHOW_SOLUTION=1 the kernel (which inherits os.environ) imports the reference
    solution, the check passes, and the measurement runs: its table is printed. The executed copy
    is kept in build/test-notebooks/solved/ for reading the numbers."""
    monkeypatch.setenv("COURSE_SHOW_SOLUTION", "1")
    notebook = execute_notebook(LESSON, BUILD_DIR / "test-notebooks" / "solved")
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "def pick_hybrid(" in text  # the solution was printed
    assert "Passed: on 2 queries" in text
    assert "Solve the exercise first" not in text
    assert "mean prompt tokens" in text and "hybrid k=3" in text and "model alone" in text  # the table
    assert "k sweep" in text


def test_the_lesson_is_stored_with_the_stub():
    notebook = nbformat.read(LESSON, as_version=4)
    sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert any("# YOUR CODE HERE" in s and "def pick_hybrid(" in s for s in sources)
    assert any('os.environ.get("COURSE_SHOW_SOLUTION") == "1"' in s for s in sources)
    assert json.dumps(notebook).count("check_hybrid(") >= 1

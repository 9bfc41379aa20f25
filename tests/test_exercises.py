"""The lesson 09 checker judges behaviour: every wrong solution in the corpus gets its own plain sentence,
every right one passes whatever its style — on the scripted stand-in, and on the local model."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from hybrid_solutions import (
    RIGHT, WORKPLACE, WRONG, choose_k_largest, choose_k_right, choose_k_top1, mentions_after_the_model, mentions_right,
    mentions_slash_only, skip_ignores_margin, skip_never, skip_right,
)
from lesson09_stand_in import BANNER, GRADING, implied_check_lines, implied_outcomes

from course_utils.backend.client import EMBEDDING_MODEL, GEMINI, KEY_VARIABLES, backend_of
from course_utils.evaluation import comparison_table, evaluate, paired_comparison
from course_utils.exercises import (
    CHECK_CASES, CHECK_SKILLS, HYBRID_HINTS, RecordingClient, called_skill, check_choose_k, check_confident_skip,
    check_explicit, check_hybrid, hint, scripted_world,
)
from course_utils.paths import BUILD_DIR, NOTEBOOKS_DIR
from course_utils.scripted import SCRIPTED
from course_utils.selection import SimilaritySelector, pick_by_model
from course_utils.tools.notebooks import execute_notebook

LESSON = NOTEBOOKS_DIR / "09_hybrid_exercise.ipynb"


def on_the_stand_in(function):
    """The check with the stand-in as the notebook's backend too (its real-backend part then runs on it)."""
    _, client, loader, selector = scripted_world()
    return check_hybrid(function, client, loader, selector, verbose=False)


@pytest.mark.parametrize("function, problem, message", WRONG, ids=[f.__name__ for f, _, _ in WRONG])
def test_each_wrong_solution_gets_its_message(function, problem, message):
    result = on_the_stand_in(function)
    assert (result.passed, result.problem) == (False, problem), str(result)
    assert str(result).startswith("Not yet. ") and message in str(result)


@pytest.mark.parametrize("function", RIGHT, ids=lambda f: f.__name__)
def test_each_right_solution_passes(function):
    result = on_the_stand_in(function)
    assert result.passed and result.problem is None, str(result)
    assert str(result).startswith("Passed on the scripted stand-in: 4 decisions")


def test_the_stand_in_exercises_what_matters():
    """Every k from 1 to 4; the model calls a skill that is not the nearest; it declines; the top k are neither
    the catalog's first k, nor its last, nor the alphabetical first."""
    assert sorted(case.k for case in CHECK_CASES) == [1, 2, 3, 4]
    assert any(case.model_picks is None for case in CHECK_CASES)
    assert any(case.model_picks not in (None, 1) for case in CHECK_CASES)
    names = [s.name for s in CHECK_SKILLS]
    for case in CHECK_CASES:
        if case.k > 1:
            assert set(case.top()) not in ({*names[:case.k]}, {*names[-case.k:]}, {*sorted(names)[:case.k]})


def test_a_crash_names_the_exception_and_the_learners_line():
    from hybrid_solutions import crashes

    text = str(on_the_stand_in(crashes))
    assert f"crashed on the query {CHECK_CASES[0].query!r} (k=3)" in text and "KeyError" in text
    assert "Your line: return pick_by_model(client, loader.subset(top), query)" in text
    assert "It finally broke in" in text and "course_utils/skills.py" in text


def test_the_checker_prints_and_never_raises(capsys):
    def explodes(*args, **kwargs):
        raise SystemError("boom")

    _, client, loader, selector = scripted_world()
    result = check_hybrid(explodes, client, loader, selector)
    assert not result.passed and "SystemError: boom" in capsys.readouterr().out

    class BrokenSelector:
        names = loader.names

        def scores(self, queries):
            raise RuntimeError("no embeddings")

    result = check_hybrid(RIGHT[0], client, loader, BrokenSelector(), verbose=False)
    assert not result.passed and "no embeddings" in str(result)


def test_hints_unlock_one_step_at_a_time(capsys):
    for n in range(1, len(HYBRID_HINTS) + 1):
        hint(n)
        out = capsys.readouterr().out
        assert out.startswith(f"Hint {n} of {len(HYBRID_HINTS)}") and "def pick_hybrid" not in out
    hint(99)
    assert "hint(1) to hint(5)" in capsys.readouterr().out


def test_the_recording_client_keeps_requests_and_answers():
    _, client, loader, _ = scripted_world()
    proxy = RecordingClient(client)
    pick_by_model(proxy, loader.subset(["book-renewal", "room-booking"]), "renew please")
    (call,) = proxy.models.calls
    assert call.offered(loader.names) == ["book-renewal", "room-booking"]
    assert called_skill(call.response, ["book-renewal"]) is None  # the stand-in declines unscripted queries
    assert proxy.course_backend.name == "scripted"  # everything else is the real client's


def test_the_stand_in_names_its_own_models():
    """What the stand-in decided and embedded is never labelled with a Gemini model's name."""
    _, client, _, _ = scripted_world()
    backend = backend_of(client)
    assert backend.generation_label() == SCRIPTED.generation_model == "scripted stand-in model"
    assert backend.embedding_label() == backend.embedding_label("any-model") == "scripted stand-in encoder"
    assert GEMINI.embedding_label() == EMBEDDING_MODEL and GEMINI.embedding_label("any-model") == "any-model"


@pytest.mark.model
@pytest.mark.timeout(1200)
def test_the_corpus_on_the_local_model(local_client):
    """The real-backend half of the check, on the local model: the reference solution passes (its real decisions
    made by the model), and a wrong one is told the same thing there (the stand-in half passes it on to the real
    half only when it is right). The other right solutions differ from the reference in style only; each passes
    both halves on the stand-in (test_each_right_solution_passes), so they are not run on the model again."""
    selector = SimilaritySelector(local_client, WORKPLACE)
    reference = RIGHT[0]
    assert reference.__name__ == "pick_hybrid"
    result = check_hybrid(reference, local_client, WORKPLACE, selector, verbose=False)
    assert result.passed, f"{reference.__name__}: {result}"
    assert "Passed on Qwen2.5-Coder" in str(result)
    for function, problem, _ in WRONG:
        result = check_hybrid(function, local_client, WORKPLACE, selector, verbose=False)
        assert (result.passed, result.problem) == (False, problem), f"{function.__name__}: {result}"


# ----------------------------------------------------------------- the lesson, solved


@pytest.mark.notebook
def test_the_lesson_runs_with_the_solution_shown(monkeypatch, tmp_path):
    """With COURSE_SHOW_SOLUTION=1 the kernel (which inherits os.environ) imports the reference solution, prints it,
    the check passes on the stand-in and on the notebook's own backend, and the grade is printed, with no grading
    query shown. The notebook's backend is the scripted stand-in of tests/lesson09_stand_in.py, in seconds: an
    IPython startup file (IPYTHONDIR is inherited too) makes `make_client` return it before the first cell runs,
    and the lesson is left as a learner runs it. The grade printed is the one its plans imply, computed here.
    The real model's side is test_the_corpus_on_the_local_model: real decisions through check_hybrid.
    The executed copy is kept in build/test-notebooks/solved/ (its figure in figures/ there)."""
    out = BUILD_DIR / "test-notebooks" / "solved"
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-scripted.py").write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"import lesson09_stand_in\nlesson09_stand_in.install({str(out / 'figures')!r})\n", encoding="utf-8")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("COURSE_SHOW_SOLUTION", "1")
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "embeddings"))  # the stand-in's vectors stay out of the cache
    monkeypatch.setenv("COURSE_MODELS_DIR", str(tmp_path / "no-models"))  # had the startup file failed: no local model
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)  # ... and no Gemini
    notebook = execute_notebook(LESSON, out)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    shown = "\n".join([text, *(o.get("data", {}).get("text/plain", "") for o in outputs)])
    label = SCRIPTED.generation_label()  # the notebook's backend: what the check's real half says it passed on
    assert BANNER in text and f"decisions by {label}, shortlists by {SCRIPTED.embedding_label()}" in text
    assert "def pick_hybrid(" in text  # the solution was printed
    assert "Passed on the scripted stand-in: 4 decisions" in text and f"Passed on {label}: 2 decisions." in text
    assert all(line in text for line in implied_check_lines(label)), text
    assert "Solve the exercise first" not in text
    assert "24 grading queries" in text and "your hybrid k=3" in text and "model alone" in text
    implied = implied_outcomes()
    reports = [evaluate(name, outcomes) for name, outcomes in implied.items()]
    assert 0 < min(r.correct for r in reports) <= max(r.correct for r in reports) < len(GRADING)  # no trivial grade
    table = comparison_table(reports).splitlines()
    assert table[-2].startswith("mean prompt tokens") and table[-1].startswith("seconds per decision")
    for line in table[:-2]:  # each rate with its interval, and the counts; tokens and seconds are the run's own
        assert line in text, f"{line!r} is not in the printed grade:\n{text}"
    for other in ("model alone", "model-abstain", "similarity alone"):
        verdict = paired_comparison("your hybrid k=3", implied["your hybrid k=3"], other, implied[other]).verdict()
        assert "exact McNemar p" in verdict and verdict in text
    changed = sum(a.chosen != b.chosen for a, b in zip(implied["model alone"], implied["your hybrid k=3"]))
    assert f"{changed} of {len(GRADING)} decisions differ between the model alone and your hybrid" in text
    assert not any(q.query in shown for q in GRADING)  # graded, never shown


def test_the_lesson_is_stored_with_the_stub():
    notebook = nbformat.read(LESSON, as_version=4)
    sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert any("# YOUR CODE HERE" in s and "def pick_hybrid(" in s for s in sources)
    for stretch in ("def choose_k(", "def pick_hybrid_or_skip(", "def pick_with_mentions("):
        assert any("# YOUR CODE HERE" in s and stretch in s for s in sources), stretch
    assert any('os.environ.get("COURSE_SHOW_SOLUTION") == "1"' in s for s in sources)
    assert json.dumps(notebook).count("check_hybrid(") >= 1


# ----------------------------------------------------------------- the stretch tasks


@pytest.mark.parametrize("check, function, problem", [
    (check_choose_k, choose_k_right, None),
    (check_choose_k, choose_k_largest, "k too large"),
    (check_choose_k, choose_k_top1, "k too small"),
    (check_confident_skip, skip_right, None),
    (check_confident_skip, skip_ignores_margin, "no model call"),
    (check_confident_skip, skip_never, "asked the model"),
    (check_explicit, mentions_right, None),
    (check_explicit, mentions_after_the_model, "mention"),
    (check_explicit, mentions_slash_only, "mention"),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_each_stretch_check_tells_right_from_wrong(check, function, problem):
    result = check(function, verbose=False)
    assert (result.passed, result.problem) == (problem is None, problem), str(result)
    assert str(result).startswith("Passed" if problem is None else "Not yet. ")

"""The lesson 09 checker judges behaviour: every wrong solution in the corpus gets its own plain sentence,
every right one passes whatever its style — on the scripted stand-in, and on the local model."""
from __future__ import annotations

import json

import nbformat
import pytest

from helpers.hybrid_solutions import (
    RIGHT, WORKPLACE, WRONG, choose_k_largest, choose_k_right, choose_k_top1, mentions_after_the_model, mentions_right,
    mentions_slash_only, reset, skip_ignores_margin, skip_never, skip_right,
)
from helpers.lesson09_stand_in import BANNER, GRADING, implied_check_lines, implied_outcomes, stand_in

from course_utils.backend.client import EMBEDDING_MODEL, GEMINI, KEY_VARIABLES, backend_of
from course_utils.evaluation.outcomes import Outcome, comparison_table, evaluate, paired_comparison
from course_utils.selection.embeddings.cache import CACHE_ENV
from course_utils.lessons.exercises import (
    check_choose_k, check_confident_skip, check_explicit, check_hybrid, grading_feedback, hint, passing_check,
)
from course_utils.lessons.exercises.feedback import GradedMiss
from course_utils.lessons.exercises.hints import HINT_LAYOUT, HYBRID_HINTS
from course_utils.lessons.exercises.judge import Watch
from course_utils.lessons.exercises.learner import RecordingClient, called_skill
from course_utils.lessons.exercises.world import BRANCH, CHECK_CASES, CHECK_SKILLS, branch_catalog, scripted_world
from course_utils.skills.paths import BUILD_DIR, NOTEBOOKS_DIR
from course_utils.skills.queries import LabelledQuery
from course_utils.lessons.scripted import EMBED_DELAYS, SCRIPTED
from course_utils.selection.pick import (
    Decision, SimilaritySelector, pick_by_model, pick_hybrid, shortlist_instruction, shortlist_tool,
)
from course_utils.cli.notebooks import execute_notebook
from helpers.paths import TESTS_DIR

LESSON = NOTEBOOKS_DIR / "09_hybrid_exercise.ipynb"


@pytest.fixture(autouse=True)
def afresh(monkeypatch, tmp_path):
    """Each test starts with solutions that remember nothing and an empty embedding cache of its own."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "embeddings"))
    reset()


def on_the_stand_in(function):
    """The check with the stand-in as the notebook's backend too (its real-backend part then runs on it).
    The course's own pick_hybrid is checked as the lesson checks it when the solution is shown."""
    _, client, loader, selector = scripted_world()
    return check_hybrid(function, client, loader, selector, verbose=False, reference=function in RIGHT[:1])


@pytest.mark.parametrize("function, problem, message", WRONG, ids=[f.__name__ for f, _, _ in WRONG])
def test_each_wrong_solution_gets_its_message(function, problem, message):
    result = on_the_stand_in(function) if function is not pick_hybrid else check_hybrid(
        function, *scripted_world()[1:], verbose=False)  # not told that it is the reference
    assert (result.passed, result.problem) == (False, problem), str(result)
    assert str(result).startswith("Not yet. ") and message in str(result), str(result)


def test_each_wrong_solution_has_a_message_of_its_own():
    messages = [message for _, _, message in WRONG if message != "not implemented yet"]
    assert len(messages) == len(set(messages))


@pytest.mark.parametrize("function", RIGHT, ids=lambda f: f.__name__)
def test_each_right_solution_passes(function):
    result = on_the_stand_in(function)
    assert result.passed and result.problem is None, str(result)
    assert str(result).startswith(f"Passed on the scripted stand-in: {len(CHECK_CASES)} decisions on two catalogs")
    assert "stand-in, k=0: ValueError" in str(result)


def test_the_reference_is_the_first_right_solution_and_raises_at_k_zero():
    assert RIGHT[0] is pick_hybrid
    _, client, loader, selector = scripted_world()
    with pytest.raises(ValueError, match="k must be at least 1"):
        pick_hybrid(client, loader, selector, CHECK_CASES[0].query, k=0)


def test_the_stand_in_exercises_what_matters():
    """k from 1 to 4 on the library; the whole branch catalog at its size and past it; a query asked again with another
    k and on the other catalog; a tie for the k-th place; the model calls a skill that is not the nearest; it declines;
    the top k are neither the catalog's first k, nor its last, nor the alphabetical first."""
    library = [case for case in CHECK_CASES if not case.branch]
    branch = [case for case in CHECK_CASES if case.branch]
    assert {1, 2, 3, 4} <= {case.k for case in library}
    assert {len(BRANCH), len(BRANCH) + 2} <= {case.k for case in branch}
    asked = {}
    for case in CHECK_CASES:
        asked.setdefault(case.query, set()).add((case.k, case.branch))
    assert any(len({k for k, _ in ways}) > 1 and len({b for _, b in ways}) > 1 for ways in asked.values())
    assert any(case.tied() for case in CHECK_CASES)
    assert any(case.model_picks is None for case in CHECK_CASES)
    assert any(case.model_picks not in (None, 1) for case in CHECK_CASES)
    for case in CHECK_CASES:
        names = case.catalog()
        if 1 < case.k < len(names):
            assert set(case.top()) not in ({*names[:case.k]}, {*names[-case.k:]}, {*sorted(names)[:case.k]})
    shortlists = {}
    for case in CHECK_CASES:  # one query's cases differ in their shortlists, so the stand-in knows which is asked
        assert frozenset(case.top()) not in shortlists.setdefault(case.query, set())
        shortlists[case.query].add(frozenset(case.top()))


def test_the_stand_in_model_decides_on_any_right_shortlist():
    """At a tie, either tied skill makes a right shortlist, and the model decides the same on both."""
    (case,) = [case for case in CHECK_CASES if case.tied()]
    backend, client, loader, _ = scripted_world()
    first, second = case.tied()
    for kept in (first, second):
        shortlist = [n for n in case.top() if n not in case.tied()] + [kept]
        assert case.is_shortlist(shortlist)
        decision = pick_by_model(client, loader.subset(shortlist), case.query)
        assert decision.skill == case.model_choice() and backend.exchanges[-1].offered == sorted(
            shortlist, key=case.names().index)


def test_the_stand_in_embedding_time_varies_and_is_recorded():
    backend, client, loader, selector = scripted_world()
    branch_loader, branch_selector = branch_catalog(client, loader)
    assert branch_selector.names == list(BRANCH) == branch_loader.names
    for case in CHECK_CASES[:4]:
        selector.scores([case.query])
    requests = backend.embedded()
    assert [len(r.texts) for r in requests] == [len(CHECK_SKILLS), len(BRANCH), 1, 1, 1, 1]
    assert len(set(EMBED_DELAYS)) > 3
    for request, delay in zip(requests, EMBED_DELAYS):
        assert delay <= request.seconds < delay + 0.05
    assert backend.embeddings == len(requests)


def test_the_watch_restores_the_profile_hook_it_found():
    import sys

    def mine(frame, event, arg):
        return None

    sys.setprofile(mine)
    try:
        with Watch() as watch:
            _ = pick_hybrid.__code__  # reading it runs nothing
        assert sys.getprofile() is mine and watch.ran == set()
    finally:
        sys.setprofile(None)


def test_a_crash_names_the_exception_and_the_learners_line():
    from helpers.hybrid_solutions import crashes

    text = str(on_the_stand_in(crashes))
    assert f"crashed on the query {CHECK_CASES[0].query!r} (k=3)" in text and "KeyError" in text
    assert "Your line: return pick_by_model(client, loader.subset(top), query)" in text
    assert "It finally broke in" in text and "course_utils/skills/skill.py" in text


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

    result = check_hybrid(RIGHT[0], client, loader, BrokenSelector(), verbose=False, reference=True)
    assert not result.passed and "no embeddings" in str(result)


def test_hints_unlock_one_step_at_a_time(capsys):
    for n in range(1, len(HYBRID_HINTS) + 1):
        hint(n)
        out = capsys.readouterr().out
        assert out.startswith(f"Hint {n} of {len(HYBRID_HINTS)}") and "def pick_hybrid" not in out
    hint(99)
    assert "hint(1) to hint(5)" in capsys.readouterr().out


def test_the_hints_teach_the_layout_the_reference_uses():
    """Hint 3 names the parts the reference builds its request from, and says where the shortlist goes and that the
    tool has no enum; hint 2 names the reference's stable sort. `right_by_the_hints`, written from the hints alone,
    passes the check (test_each_right_solution_passes)."""
    import inspect

    from helpers.hybrid_solutions import right_by_the_hints

    assert right_by_the_hints in RIGHT
    source = inspect.getsource(pick_hybrid)
    layout = HYBRID_HINTS[2]
    for part in HINT_LAYOUT:
        assert f"{part}(" in source and f"`{part}(" in layout, part
    assert "no enum" in layout and "user turn" in layout and "system_instruction(function" not in layout
    tool = json.dumps(shortlist_tool().model_dump(mode="json", exclude_none=True))
    assert '"enum"' not in tool  # the reference's tool: no enum of names, as the hint says
    assert not any(s.name in shortlist_instruction() for s in CHECK_SKILLS)  # its instruction names no skill
    assert 'kind="stable"' in source and "kind='stable'" in HYBRID_HINTS[1] and "listed first" in HYBRID_HINTS[1]
    assert "contents=[that user turn]" in HYBRID_HINTS[3]


def test_the_passing_check_is_what_the_checker_prints_for_the_reference(capsys):
    """The report a learner sees for a passing function on the stand-in, computed by checking the reference there:
    one line per scripted case, offered exactly the case's k nearest (the reference keeps catalog order at a tie)
    and returning the scripted model's choice, and no line of code."""
    result = passing_check()
    printed = capsys.readouterr().out
    assert result.passed and printed.strip() == str(result)
    again = check_hybrid(pick_hybrid, *scripted_world()[1:], verbose=False, real=False, reference=True)
    assert result.messages == again.messages
    lines = str(result).splitlines()
    assert lines[0].startswith(f"Passed on the scripted stand-in: {len(CHECK_CASES)} decisions")
    assert "Passed on" not in lines[0][len("Passed on the scripted stand-in"):]  # the stand-in half only
    names = [s.name for s in CHECK_SKILLS]
    for case, line in zip(CHECK_CASES, lines[1:], strict=False):
        offered = ", ".join(n for n in names if n in case.top())
        choice = case.model_choice()
        called = "declined" if choice is None else f"called {choice}"
        tie = f" ({' and '.join(case.tied())} tie for place {case.k})" if case.tied() else ""
        assert line.startswith(f"  stand-in, k={case.k}{', branch' if case.branch else ''}: offered {offered}{tie}; "
                               f"the model {called}; you returned {choice}"), line
    assert sum(" tie for place " in line for line in lines) == 1
    assert lines[-1].startswith("  stand-in, k=0: ValueError") and len(lines) == len(CHECK_CASES) + 2
    assert "def " not in printed and "argsort" not in printed and "shortlist_turn" not in printed


class FixedScores:
    """A similarity selector over fixed cosines, one row per query: what grading_feedback reads ranks from."""

    names = ["a", "b", "c", "d"]
    rows = {"tie at the top": [0.5, 0.5, 0.1, 0.0], "out of the shortlist": [0.9, 0.8, 0.7, 0.6]}

    def scores(self, queries):
        import numpy as np

        return np.array([self.rows.get(q, [0.4, 0.3, 0.2, 0.1]) for q in queries])


def _outcome(query, expected, *answers, error=None):
    kind = "positive" if expected else "negative"
    decisions = tuple(Decision(a) for a in answers) + ((Decision(None, error=error),) if error else ())
    return Outcome(LabelledQuery(query, expected, kind, "en"), decisions)


def test_grading_feedback_lists_exactly_the_wrong_queries():
    """Right answers stay out; a wrong skill, a miss whose skill the shortlist left out, a false trigger on a query
    that expects none, runs that tie (two answers, one each: the majority rule decides none), and an error are listed,
    in order, with what was expected, what was picked and where the expected skill ranks by cosine (tied cosines
    share a place)."""
    outcomes = [
        _outcome("right", "a", "a"),
        _outcome("tie at the top", "b", "a"),  # b ties a at the top: rank 1, and the hybrid picked a
        _outcome("right none", None, None),
        _outcome("out of the shortlist", "d", None),  # d ranks 4th: a k=3 shortlist left it out
        _outcome("false trigger", None, "c"),
        _outcome("runs tie", "a", "a", "b"),  # one run each: no majority, so none
        _outcome("majority right", "a", "a", "a", None),
        _outcome("failed", "c", error="timeout"),
    ]
    feedback = grading_feedback("your hybrid k=3", outcomes, FixedScores(), k=3)
    assert feedback.queries == len(outcomes)
    assert feedback.misses == (
        GradedMiss("tie at the top", "positive", "b", "a", "wrong skill", rank=1),
        GradedMiss("out of the shortlist", "positive", "d", None, "miss", rank=4),
        GradedMiss("false trigger", "negative", None, "c", "false trigger"),
        GradedMiss("runs tie", "positive", "a", None, "miss", runs=("a", "b"), rank=1),
        GradedMiss("failed", "positive", "c", None, "error", error="timeout", rank=3),
    )
    table = str(feedback).splitlines()
    assert table[0] == "your hybrid k=3: wrong on 5 of 8 graded queries"
    assert table[1].split() == ["expected", "picked", "verdict", "rank", "query"]
    assert [line.split()[:3] for line in table[2:4]] == [["b", "a", "wrong"], ["d", "none", "miss"]]
    assert table[3].split()[3:6] == ["4", "(>", "k)"] and table[3].endswith('"out of the shortlist"')
    assert table[4].split()[:5] == ["none", "c", "false", "trigger", "-"]
    assert "none (runs: a, b)" in table[5] and "no answer (error)" in table[6]
    assert table[-1].startswith("rank: the expected skill's place by cosine")
    assert not any('"right' in line or "majority right" in line for line in table)
    assert str(grading_feedback("x", outcomes[:1])) == "x: right on all 1 graded queries."
    assert all(m.rank is None for m in grading_feedback("x", outcomes).misses)  # no selector, no rank


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
    result = check_hybrid(reference, local_client, WORKPLACE, selector, verbose=False, reference=True)
    assert result.passed, f"{reference.__name__}: {result}"
    assert "Passed on Qwen2.5-Coder" in str(result)
    for function, problem, _ in WRONG:
        reset()
        result = check_hybrid(function, local_client, WORKPLACE, selector, verbose=False)
        assert (result.passed, result.problem) == (False, problem), f"{function.__name__}: {result}"


# ----------------------------------------------------------------- the lesson, solved


@pytest.mark.notebook
def test_the_lesson_runs_with_the_solution_shown(monkeypatch, tmp_path):
    """With COURSE_SHOW_SOLUTION=1 the kernel (which inherits os.environ) imports the reference solution, prints it,
    the check passes on the stand-in and on the notebook's own backend, what passing looks like is printed, the
    grade is printed, and the feedback shows the grading queries the tested hybrid gets wrong, and no other. The
    notebook's backend is the scripted stand-in of helpers/lesson09_stand_in.py, in seconds: an IPython startup file
    (IPYTHONDIR is inherited too) makes `make_client` return it before the first cell runs, and the lesson is left
    as a learner runs it. The grade printed is the one its plans imply, computed here. The real model's side is
    test_the_corpus_on_the_local_model: real decisions through check_hybrid. The executed copy is kept in
    build/test-notebooks/solved/ (its figure in figures/ there)."""
    out = BUILD_DIR / "test-notebooks" / "solved"
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-scripted.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS_DIR)!r})\n"
        f"from helpers import lesson09_stand_in\nlesson09_stand_in.install({str(out / 'figures')!r})\n",
        encoding="utf-8")
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
    assert f"Passed on the scripted stand-in: {len(CHECK_CASES)} decisions" in text
    assert f"Passed on {label}: 2 decisions." in text
    assert all(line in text for line in implied_check_lines(label)), text
    assert "Solve the exercise first" not in text
    graded = [q for q in GRADING if q.lang == "en"]
    assert f"{len(graded)} grading queries" in text and "tested hybrid k=3" in text and "model alone" in text
    assert "your hybrid k=3" not in text  # the solution shown is the tested hybrid: graded once, not twice
    implied = implied_outcomes()
    reports = [evaluate(name, outcomes) for name, outcomes in implied.items()]
    assert 0 < min(r.correct for r in reports) <= max(r.correct for r in reports) < len(graded)  # no trivial grade
    table = comparison_table(reports).splitlines()
    assert table[-2].startswith("mean prompt tokens") and table[-1].startswith("seconds per decision")
    for line in table[:-2]:  # each rate with its interval, and the counts; tokens and seconds are the run's own
        assert line in text, f"{line!r} is not in the printed grade:\n{text}"
    for other in ("model alone", "similarity alone"):
        verdict = paired_comparison("tested hybrid k=3", implied["tested hybrid k=3"], other, implied[other]).verdict()
        assert "exact McNemar p" in verdict and verdict in text
    assert str(passing_check(verbose=False)) in text  # what passing looks like, computed in the lesson
    planned = SimilaritySelector(stand_in().client(), WORKPLACE, cache=False)  # the plans' cosines, ranked here
    feedback = grading_feedback("tested hybrid k=3", implied["tested hybrid k=3"], planned, k=3)
    assert 0 < len(feedback.misses) < len(graded) and str(feedback) in text, text
    assert {q.query for q in GRADING if q.query in shown} == {m.query for m in feedback.misses}  # only the misses


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

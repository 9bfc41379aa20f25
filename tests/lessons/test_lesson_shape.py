"""Every lesson has the course's shape and stays within its budgets. No kernel.

Budgets: at most 35 cells, 1,000 words of prose (the References cell apart; fenced code is not prose), no
Markdown cell over 1,200 characters, no code cell over 30 lines. Shape: a title, then the idea in one sentence
(`**The idea:**`), the time it takes (`**Time:**`) and what the learner will do (`**You will**`); a lesson that
measures has a "What we found" section whose sentences come from code; then the checklist and the references.
No history: lessons never mention harness rows, records as a diary, issue numbers, commit hashes, machines or
run dates (the development history lives in docs/lab/); nor do the docstrings and comments of course_utils/,
which are also kept from dates, bare commit hashes, machine descriptions and "the seed" (citations of outside
sources apart: a paragraph with a link, or one that starts with "Source" or "Reference").
"""
from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from course_utils.skills.paths import NOTEBOOKS_DIR, REPO_ROOT

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))

MAX_CELLS = 35
MAX_WORDS = 1000
MAX_MARKDOWN_CHARS = 1200
MAX_CODE_LINES = 30
FENCED = re.compile(r"```.*?```", re.S)
HISTORY = {  # pattern: what it gives away
    r"\b(?:harness )?rows? \d+\b": "a harness row of the development diary",
    r"\b(?:issue|pull request|PR) #?\d+\b(?!.*github\.com)": "an issue number (the course's own tracker)",
    r"\b[0-9a-f]{7,40}\b(?=.*\bcommit\b)|\bcommit [0-9a-f]{7,40}\b": "a commit hash",
    r"\b(?:Xeon|EPYC|Ryzen|Core i[3579])\b": "a machine",
    r"\b(?:the (?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) record)\b": "a record of the diary",
    r"\b(?:[Ww]e|I) (?:tried|tuned|first tried)\b": "what was tried before",
}
PACKAGE_HISTORY = {  # on top of HISTORY, in the package's docstrings and comments
    r"\b20\d\d-[01]\d(?:-[0-3]\d)?\b": "a date",
    r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b": "a bare commit hash",
    r"\b(?:\d+|one|two|four|eight)[- ]core\b|\bthe machine that\b|\b(?:this|that|my|our) machine\b|\bvCPUs?\b":
        "a machine",
    r"\b[Tt]he seed(?:'s)?\b(?!\s+(?:corpus|inputs?)\b)": "the seed (the course's origin)",
    r"\bharness rows?\b|\b[Tt]he issue(?:'s)?\b": "the development diary",
}
DATA_DATES = {"course_utils/loop/bakery.py"}
"""Modules whose dates are data: the bakery's synthetic calendar and its examples."""
PACKAGE = REPO_ROOT / "course_utils"
READING_WORDS, READING_CODE, RUNNING = 150, 12, 3
"""A careful learner's pace (see `learner_minutes`): words of prose a minute, lines of code a minute, and the minutes
a lesson's run and its outputs take to watch."""
MEASURING = {"04", "06", "07", "08", "09", "10", "11", "12", "13"}
"""The lessons that measure something and so end their measurement with a "What we found" section."""


def prose_words(cells: list) -> int:
    """Words of Markdown prose, fenced code apart, the References cell apart."""
    return sum(len(re.findall(r"\S*\w\S*", FENCED.sub(" ", c.source))) for c in cells
               if c.cell_type == "markdown" and not c.source.startswith("## References"))


def history_mentions(text: str, patterns: dict[str, str] = HISTORY) -> list[str]:
    """Each history pattern found in a text (references and links apart), with what it gives away."""
    return [f"{why}: {m.group(0)!r}" for pattern, why in patterns.items() for m in re.finditer(pattern, text)]


def docstrings_and_comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment and each docstring paragraph of a module (module, class, function and
    attribute docstrings), citations apart: a paragraph with a link, or one starting with Source(s)/Reference(s)."""
    found = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            line = node.lineno
            for paragraph in re.split(r"\n\s*\n", node.value.value):
                if "://" not in paragraph and not re.match(r"\s*(?:Sources?|References?)\b", paragraph):
                    found.append((line, paragraph))
                line += paragraph.count("\n") + 2
    return found


def package_history(path: Path, source: str) -> list[str]:
    """The history mentions in a module's docstrings and comments."""
    patterns = {**HISTORY, **PACKAGE_HISTORY}
    if str(path.relative_to(REPO_ROOT)) in DATA_DATES:
        patterns = {p: why for p, why in patterns.items() if why != "a date"}
    return [f"{path.relative_to(REPO_ROOT)} near line {line}: {hit}" for line, text in docstrings_and_comments(source)
            for hit in history_mentions(text, patterns)]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_stays_within_its_budgets(path):
    cells = nbformat.read(path, as_version=4).cells
    problems = []
    if len(cells) > MAX_CELLS:
        problems.append(f"{len(cells)} cells (at most {MAX_CELLS})")
    if (words := prose_words(cells)) > MAX_WORDS:
        problems.append(f"{words} words of prose (at most {MAX_WORDS}, references apart)")
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and not cell.source.startswith("## References") \
                and len(cell.source) > MAX_MARKDOWN_CHARS:
            problems.append(f"cell {i}: {len(cell.source)} characters of Markdown (at most {MAX_MARKDOWN_CHARS})")
        if cell.cell_type == "code" and len(cell.source.splitlines()) > MAX_CODE_LINES:
            problems.append(f"cell {i}: {len(cell.source.splitlines())} lines of code (at most {MAX_CODE_LINES})")
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_opens_with_its_idea_its_time_and_what_you_will_do(path):
    opening = nbformat.read(path, as_version=4).cells[0].source
    for mark in ("**The idea:**", "**Time:**", "**You will**"):
        assert mark in opening, f"{path.name}: the first cell says {mark} …"


def learner_minutes(cells: list) -> int:
    """A careful learner's time to read and run a lesson: its prose at READING_WORDS a minute, its code at
    READING_CODE lines a minute, plus RUNNING minutes to run the cells and look at what they print, rounded up to
    5 minutes. Exercises are stated on top of it."""
    code = sum(1 for c in cells if c.cell_type == "code" for line in c.source.splitlines() if line.strip())
    minutes = prose_words(cells) / READING_WORDS + code / READING_CODE + RUNNING
    return 5 * math.ceil(minutes / 5)


def stated_minutes(opening: str) -> int:
    """The minutes of the lesson's `**Time:** N minutes to read and run` line."""
    found = re.search(r"\*\*Time:\*\* (\d+) minutes to read and run\b", opening)
    assert found, f"the first cell says **Time:** N minutes to read and run: {opening[:300]!r}"
    return int(found.group(1))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_states_a_careful_learners_time(path):
    cells = nbformat.read(path, as_version=4).cells
    stated, estimate = stated_minutes(cells[0].source), learner_minutes(cells)
    assert abs(stated - estimate) <= 5, (f"{path.name} says {stated} minutes to read and run; its {prose_words(cells)} "
                                         f"words and its code read at the course's pace take about {estimate}")


def test_the_readme_gives_each_lesson_its_stated_time():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    for path in LESSONS:
        row = re.search(rf"^\| `{path.stem}` \|.*\| (\d+) min[^|]*\|[^|]*\|$", readme, re.M)
        assert row, f"README's course map has no row for {path.stem} ending with its learner's time"
        assert int(row.group(1)) == stated_minutes(nbformat.read(path, as_version=4).cells[0].source), path.stem
    total = sum(stated_minutes(nbformat.read(path, as_version=4).cells[0].source) for path in LESSONS)
    assert f"about {round(total / 60)} hours for the course" in readme, f"the lessons add up to {total} minutes"


@pytest.mark.parametrize("path", [p for p in LESSONS if p.name[:2] in MEASURING], ids=lambda p: p.stem)
def test_a_lesson_that_measures_says_what_it_found_from_code(path):
    cells = nbformat.read(path, as_version=4).cells
    heading = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and "## What we found" in c.source]
    assert heading, f"{path.name}: a lesson that measures has a '## What we found' section"
    following = cells[heading[0] + 1:]
    assert following and following[0].cell_type == "code", \
        f"{path.name}: the sentences of 'What we found' are printed by the code cell right after its heading"


@pytest.mark.parametrize("path", [*LESSONS, REPO_ROOT / "README.md"], ids=lambda p: p.stem)
def test_no_history_in_the_course(path):
    if path.suffix == ".ipynb":
        texts = [c.source for c in nbformat.read(path, as_version=4).cells if not c.source.startswith("## References")]
    else:
        texts = [re.sub(r"\[[^\]]*\]\(docs/lab/[^)]*\)", " ", path.read_text(encoding="utf-8"))]
    found = [hit for text in texts for hit in history_mentions(text)]
    assert not found, f"{path.name}: development history belongs in docs/lab/: " + "; ".join(found)


def test_no_history_in_the_package_docstrings_and_comments():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in package_history(path, path.read_text("utf-8"))]
    assert not found, "development history belongs in docs/lab/ (docstring-history.md):\n" + "\n".join(found)


@pytest.mark.parametrize("source, caught", [
    ('"""Fitted on dev: 0.156 (2026-11-30)."""', True),
    ('X = 1  # since 4121e7a the cache is keyed by text', True),
    ('"""Four threads oversubscribe a 2-core machine."""', True),
    ('def f():\n    """The seed\'s selector, with examples."""', True),
    ('"""Every harness row gets the same seed."""', True),
    ('"""From the issue\'s figure."""', True),
    ('"""The seed corpus is the shipped skills; `seed` makes a sample repeatable."""', False),
    ('"""Source: https://github.com/openai/codex (the stored version at commit 0899b7c42bf1, read in 2026-12)."""',
     False),
    ('"""Sources, read for this course in 2026-12:\n- the documentation."""', False),
    ('"""Nothing leaves the machine; 1.5x the plain selector\'s tokens."""', False),
    ('x = "2026-11-30"  # a string that is no docstring is data', False),
])
def test_the_package_history_detector(source, caught):
    assert bool(package_history(PACKAGE / "example.py", source)) == caught


@pytest.mark.parametrize("text, caught", [
    ("Row 23 came from the fifth record.", True),
    ("This was fixed in commit 4121e7a.", True),
    ("On the AMD EPYC it took longer.", True),
    ("We tried three wordings first.", True),
    ("Each row of the table is one skill.", False),
    ("The third query asks about leave.", False),
])
def test_the_history_detector(text, caught):
    assert bool(history_mentions(text)) == caught


"""Lesson prose states only what its notebook computes (issue #13, item 7). Fast: no model, no kernel.

A lesson's Markdown is read by someone whose run differs from the author's: another backend (Gemini or
the local models), another machine, another day. A number that a run *measures* is therefore printed by
code (a formatted `IPython.display.Markdown` is fine), never typed into the prose. This test reads every
Markdown cell of every lesson, sentence by sentence, and fails on a **run figure** that is neither cited
nor a definition.

A *run figure* is any of these in a Markdown cell, outside code (fenced blocks, `inline code` and $maths$
are not prose):

- a decimal number standing alone: `0.767`, `1.06`, `0.593` (not inside a name such as `Qwen2.5` or `1.5B`);
- a fraction or a count out of a total: `22/30`, `7 of 12`;
- a percentage: `77 %`, `93%`;
- a token count: `1,400 prompt tokens`, `25 tokens`;
- a duration: `1.06 s`, `650 ms`, `3 seconds`, `2 minutes`, `under a minute`;
- an approximate number: `about 25`, `around 1,400`, `roughly 3`, `≈ 340`, `~2`;
- a speed-up: `20×`;
- a narrated decision: a past-tense decision verb (sent, went to, routed, picked, chose, called,
  triggered, activated, fired) in the same sentence as a shipped skill's name in backticks, e.g.
  "the French evaluation sent *"Mon portable…"* to `incident-postmortem-writer`".

A run figure is allowed in two cases only:

1. **Cited**: the same sentence carries a citation of the one form the course uses,
   `(cited: SOURCE, YYYY-MM-DD)`, where SOURCE says who measured it and on what, e.g.
   "(cited: original lesson, Gemini `gemini-embedding-2`, 2026-10-15)". This is how the seed lesson's
   Gemini figures stay in the prose.
2. **A definition or a constant**, not a measurement: one of the short `DEFINITIONS` patterns below, each
   with its reason (a spec limit, the output cap, the decision rule's budget, a split fraction, a
   section number …). Add a pattern only for a number that no run can change.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course_utils.paths import NOTEBOOKS_DIR, SKILLS_DIR
from course_utils.selection import LOCAL_DECISION_TOKENS

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
SKILL_NAMES = sorted({p.parent.name for p in SKILLS_DIR.glob("*/*/SKILL.md")})

NUMBER = r"\d[\d,]*(?:\.\d+)?"
RUN_FIGURES = {
    "decimal": r"(?<![\w.\-])\d+\.\d+(?!\w|\.\d)",
    "fraction": rf"(?<![\w/])\d+\s?/\s?\d+(?![\w/])|\b\d+ (?:out )?of (?:the |these |its )?\d[\d,]*\b",
    "percentage": rf"{NUMBER}\s?(?:%|per ?cent\b)",
    "tokens": rf"{NUMBER}\s+(?:prompt |output |input )?tokens?\b",
    "duration": rf"{NUMBER}\s?(?:ms|s|sec|seconds?|milliseconds?|minutes?|min|hours?)\b"
                r"|\b(?:under|in|about|over|less than|more than) (?:a|one) (?:second|minute|hour)\b",
    "approximate": r"(?:\babout|\baround|\broughly|\bnearly|\balmost|\bapproximately|≈|~)\s*\d[\d,]*(?:\.\d+)?",
    "speed-up": rf"{NUMBER}\s?×(?!\s*\d)",
    "decision": r"\b(?:sent|went to|routed|picked|chose|called|triggered|activated|fired)\b.*`(?:"
                + "|".join(map(re.escape, SKILL_NAMES)) + r")`"
                r"|`(?:" + "|".join(map(re.escape, SKILL_NAMES)) + r")`.*\b(?:was (?:sent|picked|chosen|called|"
                r"triggered|activated)|went to|fired)\b",
}
CITATION = re.compile(r"\(cited: [^()]+?, \d{4}-\d{2}-\d{2}\)")
DEFINITIONS = {  # pattern: why it is no measurement. Removed from a sentence before the figures are looked for.
    r"\b95\s?%": "the confidence level of every interval (course_utils.stats)",
    r"p < 0\.05": "the rule for calling a difference a finding (stats.SIGNIFICANCE)",
    r"\b(?:60|40)\s?%": "lesson 08's train/test split fractions (thresholds.split)",
    r"(?:about |≈ ?)?10,000(?: to |–)20,000 tokens|≈ ?10,000 tokens|100–200 tokens|about 100 skills":
        "the decision rule's budget (scale.decision_rule)",
    rf"\b{LOCAL_DECISION_TOKENS} tokens": "the local decision's output cap (selection.LOCAL_DECISION_TOKENS)",
    r"\b8,192 tokens": "the local model's context window (local.llm.CONTEXT_TOKENS)",
    r"\b\d+ of (?:the )?(?:30|45|90)\b(?= (?:queries|English|French))": "a query set's size and make-up",
    r"(?:section |lesson |§ ?|^#+ )\d+(?:\.\d+)+": "a section number",
}
FENCED = re.compile(r"```.*?```", re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MATHS = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z*_\"'(`|\-])|\n+")


def sentences(markdown: str) -> list[str]:
    """The prose of a Markdown cell, one sentence (or table row, or list item) per entry, code removed."""
    prose = MATHS.sub(" ", FENCED.sub(" ", markdown))
    return [s.strip() for s in SENTENCE_END.split(prose) if s.strip()]


def run_figures(sentence: str) -> list[tuple[str, str]]:
    """The uncited run figures of one sentence, as (kind, text); empty when there is none or it is cited."""
    if CITATION.search(sentence):
        return []
    found = []
    decision = re.search(RUN_FIGURES["decision"], sentence)
    if decision:
        found.append(("decision", decision.group(0)))
    text = INLINE_CODE.sub(" ", MATHS.sub(" ", sentence))
    for pattern in DEFINITIONS:
        text = re.sub(pattern, " ", text, flags=re.I | re.M)
    for kind, pattern in RUN_FIGURES.items():
        if kind != "decision":
            found += [(kind, m.group(0)) for m in re.finditer(pattern, text)]
    return found


def lesson_offences(path: Path) -> list[str]:
    notebook = nbformat.read(path, as_version=4)
    offences = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        for sentence in sentences(cell.source):
            for kind, figure in run_figures(sentence):
                offences.append(f"cell {index}: {kind} {figure!r} in: {sentence[:160]!r}")
    return offences


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_prose_carries_no_uncited_run_figure(path):
    offences = lesson_offences(path)
    assert not offences, (
        f"{path.name}: run figures in the prose. Print them from code, or cite them as "
        f"'(cited: SOURCE, YYYY-MM-DD)' in the same sentence:\n  " + "\n  ".join(offences))


@pytest.mark.parametrize("sentence", [
    "In lesson 06 that came to about 1,400 prompt tokens per decision on the local model.",
    "A call to `activate_skill` takes about 25; a text answer means no skill.",
    "The French evaluation sent *\"Mon portable ne se connecte plus au wifi\"* to `incident-postmortem-writer`.",
    "The model scored 22/30 with the Not-for lines.",
    "It got 7 of 12 right.",
    "The hybrid reached 0.800 against 0.767.",
    "Each warm decision costs 1.06 s on this machine.",
    "Accuracy rose to 83 %.",
    "A decision takes 650 ms.",
    "It was 20× slower.",
    "The index builds in under a minute on this CPU.",
    "The original lesson measured 1,632 prompt tokens on Gemini (2026-10-15).",
])
def test_the_detector_catches_run_figures(sentence):
    assert run_figures(sentence), sentence


@pytest.mark.parametrize("sentence", [
    "The original lesson measured a mean of **1,632 prompt tokens** per decision on Gemini "
    "(cited: original lesson, Gemini `gemini-2.5-flash`, 2026-10-15).",
    f"On the local backend the answer is capped at {LOCAL_DECISION_TOKENS} tokens.",
    "Every rate carries a 95 % interval; a difference is a finding only at p < 0.05.",
    "Fit on a fixed, stratified 60 % of the queries and score on the other 40 %.",
    "Let the model decide while the catalog fits: on the order of 10,000 to 20,000 tokens, 100–200 tokens each.",
    "The context window of the local model (8,192 tokens, prompt and answer together).",
    "Qwen2.5-Coder-1.5B-Instruct answers for `gemini-2.5-flash`.",
    "Section 5.5 asks the model again.",
    "Measure it on 30 labelled queries: 24 must trigger one skill, 6 must trigger none.",
    "The cell below prints which skill the model called for each query.",
    "`with_explicit` puts the check in front of any selector, so `/okr-drafter` activates it without a model.",
    "Cosine is $u \\cdot v / (0.5 \\lVert u \\rVert)$ for unit vectors.",
])
def test_the_detector_lets_citations_and_definitions_through(sentence):
    assert run_figures(sentence) == [], sentence

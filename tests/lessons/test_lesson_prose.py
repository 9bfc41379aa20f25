"""Lesson prose states only what its notebook computes. Fast: no model, no kernel.

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

The same figures written out in words are run figures too (`WORD_FIGURES`): a count or an outcome the
prose narrates in words instead of digits, such as "six times", "none of the orders", "all twelve
queries", "never declined", "every order named the regular line". These patterns look for a number word
or a quantifier *tied to* what a run counts (runs, queries, records, orders, times, decisions, answers,
requests, calls …) or to the past-tense verb of a run's outcome (declined, called, answered, named, chose,
picked, triggered …), so that teaching prose passes: "one idea per lesson", "each skill has a folder",
"a model call", "the two commands", "every skill's description", "the catalog is paid on every request",
"run the cell twice". Each pattern carries its reason below. The word figures are looked for in
README.md's prose too (outside fenced code blocks), whose soft-wrapped lines are joined first.

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

from course_utils.backend.facts import LOCAL_DECISION_TOKENS
from course_utils.skills.paths import NOTEBOOKS_DIR, REPO_ROOT, SKILLS_DIR

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
README = REPO_ROOT / "README.md"
SKILL_NAMES = sorted({p.parent.name for p in SKILLS_DIR.glob("*/*/SKILL.md")})

NUMBER = r"\d[\d,]*(?:\.\d+)?"
RUN_FIGURES = {
    "decimal": r"(?<![\w.\-])\d+\.\d+(?!\w|\.\d)",
    "fraction": r"(?<![\w/])\d+\s?/\s?\d+(?![\w/])|\b\d+ (?:out )?of (?:the |these |its )?\d[\d,]*\b",
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
# Numbers and counts written out in words. Case-insensitive; looked for in the same text as RUN_FIGURES
# (inline code, maths and DEFINITIONS removed). Each pattern ties a number word or a quantifier to what a
# run counts or to the verb of a run's outcome; a bare number word ("one line per skill", "the two
# commands") or a bare quantifier ("each skill has a folder", "every skill's description") is no figure.
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_TEENS = "ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
NUMBER_WORD = (rf"(?:(?:{_TENS})(?:[- ](?:{_UNITS}))?|{_TEENS}|(?:{_UNITS})"
               r"|(?:a |one )?(?:dozen|hundred|thousand))\b")
SEVERAL = rf"(?!one\b){NUMBER_WORD}"  # above one: "one" is mostly an article ("one line per skill")
COUNTED = (r"(?:runs?|quer(?:y|ies)|records?|orders?|decisions?|answers?|requests?|calls?|replies|reply"
           r"|samples?|trials?|attempts?|prompts?)\b")  # what a run counts
# The verbs a run's outcome is narrated with, in the past tense ("the model declined"). After a determiner
# the participle is an adjective ("a loaded body", "the chosen skill"), and after is/are/be a present
# passive ("a skill that is never loaded"): both describe the mechanism and are left alone.
OUTCOME = (r"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bits )(?<!\bthis )(?<!\bthat )(?<!\beach )(?<!\bevery )"
           r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )(?<!\bget )(?<!\bgets )"
           r"(?:declined|abstained|called|answered|named|chose|chosen|picked|selected|triggered|false-triggered"
           r"|fired|activated|loaded|skipped|refused|missed|failed|succeeded|agreed|disagreed|flipped"
           r"|matched|landed|followed|ignored|sent|routed|went|stated|copied|returned|scored|reached)\b")
# ... of which these take no object, so "never declined" is an outcome as it stands; the others need one
# ("never loaded the skill"), since "keep a skill always loaded" is a state
INTRANSITIVE = (r"(?:declined|abstained|answered|triggered|false-triggered|fired|failed|succeeded|agreed"
                r"|disagreed|flipped|landed|went)\b")
_OBJECT = r"\s+(?:the|a|an|it|its|any|one|that|this|them|none|no)\b"
_WORD = r"[^\s.;:,()]+"  # one word of the same clause
_CLAUSE_WORD = rf"(?!(?:which|whose|where|when|that|if)\b){_WORD}"  # no relative clause begins
_DET = r"(?:(?:the|its|these|those|their|our|your|all)\s+)?"
_PREP = r"(?:for|with|of|from|in|on|about|at|to|among)"  # "every order for a guest with a nut allergy"
_AUX = r"(?:\s+(?:was|were|had|have|has|did|all|both|then|again|still|also|too|never|always|not|\w+ly))*"
WORD_FIGURES = {  # kind: (pattern, why it is a run figure)
    "frequency": (
        rf"\b{SEVERAL} times\b(?! (?:the|as|a|an|its|their|that)\b)|\b(?:twice|thrice)\b(?! (?:the|as)\b| in a row\b)",
        "how often something happened (\"measured six times\", \"called the script twice\"); a multiplier "
        "(\"one and a half times the tokens\", \"twice as long\") and a rule (\"failed twice in a row\") are "
        "no count of what happened"),
    "fraction": (
        rf"\b{NUMBER_WORD} out of {_DET}{NUMBER_WORD}|\b{SEVERAL} (?:of|in) {NUMBER_WORD}(?! (?:of|in)\b)"
        rf"|\b{NUMBER_WORD} per ?cent\b",
        "a count out of a total in words (\"nine out of twelve\", \"seven in eight\"), or a percentage"),
    "share": (
        r"(?<!more than )(?<!less than )(?<!at least )(?<!at most )"
        r"\b(?:none|half|most|many|few|several|both|neither|either"
        rf"|the majority|a majority|a minority|a third|two thirds|a quarter)\s+of\s+{_DET}"
        rf"(?:{_WORD}\s+){{0,2}}?{COUNTED}",
        "a share of what a run counts (\"none of the orders\", \"half of the runs\", \"most of the queries\", "
        "\"both of its runs\"); \"more than half of the queries\" is a rule's bound, not a result"),
    "total": (
        rf"\ball (?:the |of the )?{SEVERAL}\s+(?:{_WORD}\s+)?{COUNTED}|(?<!\bthe )\bmost {COUNTED}"
        rf"|\bhalf the (?:{_WORD}\s+)?{COUNTED}",
        "a total or a share stated as the result (\"all twelve queries\", \"most queries\", \"half the runs\"); "
        "\"the most correct decisions\" is a superlative in a rule, \"all queries\" a definition"),
    "quantified outcome": (
        rf"\b(?:every|each|all|no|both|neither|either|{NUMBER_WORD}|many|few|several)\s+(?:{_CLAUSE_WORD}\s+){{0,3}}?"
        rf"{COUNTED}(?:\s+{_PREP}\s+(?:{_WORD}\s+){{0,5}}?{_WORD})?{_AUX}\s+{OUTCOME}(?! by\b)",
        "a counted subject and the outcome it had: \"every order for a guest with a nut allergy named the "
        "regular line\", \"no run declined\", \"nine queries triggered it\"; \"every request pays for\" is the "
        "present of a mechanism, and \"every query scored by a fit\" a passive that says how, not what came out"),
    "outcome over a count": (
        rf"\b{OUTCOME}[^.;:]{{0,80}}?\b(?:in|on|for|across|over|at)\s+(?:every|each|all|both|none"
        rf"|half|most|{SEVERAL})(?:\s+of)?\s+{_DET}(?:{_WORD}\s+){{0,2}}?{COUNTED}",
        "an outcome narrated over a count: \"named the regular line in every run\", \"declined on none of the "
        "queries\", \"called the tool in all twelve requests\""),
    "always or never": (
        rf"\b(?:never|always|not once|every time|each time|without exception)\s+(?:{_WORD}\s+)?"
        rf"(?:{INTRANSITIVE}|{OUTCOME}(?={_OBJECT}))"
        rf"|(?:(?<=\bwas )|(?<=\bwere ))(?:never|always)\s+{OUTCOME}"
        rf"|\b{OUTCOME}[^.;:,]{{0,60}}?\b(?:every time|each time|every single time|without exception"
        rf"|not once)\b",
        "an outcome's frequency as always or never, in the past tense of a run (\"never declined\", \"was "
        "never chosen\", \"answered in text every time\"); \"a request that never names it\" is the present "
        "of a mechanism"),
    "duration": (
        rf"\b{NUMBER_WORD}\s+(?:milliseconds|seconds|minutes|hours)\b",
        "how long a run took, spelt out (\"forty seconds\", \"two minutes\"): the machine's figure"),
}
# A match is left alone when the words just before it make it a definition or a protocol, not a report.
WORD_EXCEPTIONS = {
    "frequency": (r"(?:\b(?:runs|writes|asks|repeats|samples|tries)"
                  r"|\b(?:you|we|to) (?:run|write|ask|repeat|sample|try)"
                  r"|(?:^|[:;—(])\W*(?:run|write|ask|repeat|sample|try)"
                  r"|\b(?:whether|if|unless|not))\b(?:\s+[^\s.;:,]+){0,4}\s*$",
                  "a protocol in the present, an instruction or a condition (\"each query runs three times\", "
                  "\"you write a parser three times\", \"run the cell twice\", \"whether one was read twice\", "
                  "\"a selection not accepted twice\"); \"were run ten times\" reports"),
    "quantified outcome": (r"\b(?:which|whose|where|when|if|unless|whether)\s+(?:[^\s.;:,]+\s+){0,2}$",
                           "a relative, conditional or indirect clause (\"a query on which no run gave a decision\", "
                           "\"whose last two calls failed\", \"whether each run followed the skill\") defines"),
    "outcome over a count": (r"\b(?:which|whose|what|how|where|when|if|unless|whether)\s+(?:[^\s.;:,]+\s+){0,3}$",
                             "an indirect question or a relative clause (\"prints which skill the model called for "
                             "each query\") says what the code shows, not what it showed"),
}
WORD_PATTERNS = {kind: re.compile(pattern, re.I) for kind, (pattern, _) in WORD_FIGURES.items()}
WORD_GUARDS = {kind: re.compile(pattern, re.I) for kind, (pattern, _) in WORD_EXCEPTIONS.items()}
CITATION = re.compile(r"\(cited: [^()]+?, \d{4}-\d{2}-\d{2}\)")
DEFINITIONS = {  # pattern: why it is no measurement. Removed from a sentence before the figures are looked for.
    r"\b95\s?%": "the confidence level of every interval (course_utils.evaluation.stats)",
    r"p < 0\.05": "the rule for calling a difference a finding (stats.SIGNIFICANCE)",
    r"\b(?:60|40)\s?%": "lesson 08's train/test split fractions (thresholds.split)",
    r"(?:about |≈ ?)?10,000(?: to |–)20,000 tokens|≈ ?10,000 tokens|100–200 tokens|about 100 skills":
        "the decision rule's budget (scale.decision_rule)",
    rf"\b{LOCAL_DECISION_TOKENS} tokens": "the local decision's output cap (backend.facts.LOCAL_DECISION_TOKENS)",
    r"\b8,192 tokens": "the local model's context window (local.llm.CONTEXT_TOKENS)",
    r"\b\d+ of (?:the )?(?:30|45|90)\b(?= (?:queries|English|French))": "a query set's size and make-up",
    r"(?:section |lesson |§ ?|^#+ )\d+(?:\.\d+)+": "a section number",
    r"^\*\*Time:\*\*[^.]*": "the time a lesson states at its top, to read and run it (docs/lab/course-times.md "
                              "holds the measured run times)",
}
FENCED = re.compile(r"```.*?```", re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MATHS = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z*_\"'(`|\-])|\n+")


def sentences(markdown: str) -> list[str]:
    """The prose of a Markdown cell, one sentence (or table row, or list item) per entry, code removed."""
    prose = MATHS.sub(" ", FENCED.sub(" ", markdown))
    return [s.strip() for s in SENTENCE_END.split(prose) if s.strip()]


def readme_sentences(markdown: str) -> list[str]:
    """README.md's prose, one sentence (or table row, or list item) per entry, fenced code removed.

    README wraps its paragraphs and list items over several lines: a line that starts no table row,
    list item or heading continues the one before it, so a sentence is read whole.
    """
    entries: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", FENCED.sub("\n\n", markdown)):
        blocks: list[str] = []
        for line in paragraph.splitlines():
            starts_block = re.match(r"\s*(?:\||[-*+] |\d+\. |#)", line)
            if not blocks or starts_block or blocks[-1].lstrip().startswith("|"):
                blocks.append(line.strip())
            else:
                blocks[-1] += " " + line.strip()
        for block in blocks:
            entries += sentences(block)
    return entries


def run_figures(sentence: str, digits: bool = True) -> list[tuple[str, str]]:
    """The uncited run figures of one sentence, as (kind, text); empty when there is none or it is cited.

    `digits=False` looks for the figures written in words only (`WORD_FIGURES`).
    """
    if CITATION.search(sentence):
        return []
    found = []
    decision = re.search(RUN_FIGURES["decision"], sentence)
    if digits and decision:
        found.append(("decision", decision.group(0)))
    text = INLINE_CODE.sub(" ", MATHS.sub(" ", sentence))
    for pattern in DEFINITIONS:
        text = re.sub(pattern, " ", text, flags=re.I | re.M)
    for kind, pattern in RUN_FIGURES.items():
        if digits and kind != "decision":
            found += [(kind, m.group(0)) for m in re.finditer(pattern, text)]
    for kind, pattern in WORD_PATTERNS.items():
        guard = WORD_GUARDS.get(kind)
        found += [(f"{kind} (words)", m.group(0)) for m in pattern.finditer(text)
                  if not (guard and guard.search(text[:m.start()]))]
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


def readme_offences(path: Path = README) -> list[str]:
    """README.md's word figures. Its digits are records of dated measurements and are not looked for here."""
    return [f"{kind} {figure!r} in: {sentence[:160]!r}"
            for sentence in readme_sentences(path.read_text(encoding="utf-8"))
            for kind, figure in run_figures(sentence, digits=False)]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_prose_carries_no_uncited_run_figure(path):
    offences = lesson_offences(path)
    assert not offences, (
        f"{path.name}: run figures in the prose. Print them from code, or cite them as "
        f"'(cited: SOURCE, YYYY-MM-DD)' in the same sentence:\n  " + "\n  ".join(offences))


def test_readme_prose_carries_no_uncited_count_in_words():
    offences = readme_offences()
    assert not offences, (
        "README.md: counts or outcomes written out in words. State what the code does, or cite the "
        "measurement as '(cited: SOURCE, YYYY-MM-DD)' in the same sentence:\n  " + "\n  ".join(offences))


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


@pytest.mark.parametrize("sentence", [
    "The test requests were measured six times in the course's history.",
    "The first eleven requests were run ten times.",
    "A request's two runs agreed seven times in eight.",
    "The model called `load_skill` twice on the cake request.",
    "The test requests were measured twice in this course's history, not once.",
    "The eight later requests were written afterwards, run six times with no choice made on them.",
    "In the seventh record, every on-demand order for a guest with a nut allergy named the regular line.",
    "The model named the regular line in every run.",
    "None of the orders went to the nut-free line.",
    "All twelve queries triggered a skill.",
    "Half of the runs answered in text.",
    "Most of the queries landed on their nearest skill.",
    "Each of the twelve queries named a skill.",
    "No run declined the cake order.",
    "Nine queries triggered `hr-policy-qa`.",
    "Nine out of twelve requests stated every fact.",
    "Similarity finds the right skill for most queries.",
    "The small model never declined.",
    "The leave request was never chosen.",
    "It answered in text every time.",
    "The whole lesson ran in forty seconds.",
])
def test_the_detector_catches_counts_written_in_words(sentence):
    assert run_figures(sentence, digits=False), sentence
    assert run_figures(sentence), sentence


@pytest.mark.parametrize("sentence", [
    "One idea per lesson.",
    "Each skill has a folder with a `SKILL.md` inside.",
    "A model call costs tokens; the two commands set up the course and run its tests.",
    "The catalog carries every skill's description, and it is paid on every request.",
    "On Gemini, which samples, each decision is one sample: run the cell twice before reading much into a single row.",
    "The checklist says whether one skill was read twice.",
    "It runs it twice over: on a scripted stand-in, then on this notebook's backend.",
    "Then a selection not accepted twice, and a function withdrawn after its call failed twice in a row.",
    "A cold decision takes twice as long as a warm one, so time both.",
    "In this lesson you write a skill parser three times: a regex, YAML, and the tested version.",
    "On Gemini each model query runs three times.",
    "A query on which no run gave a decision goes to a fifth bucket, error.",
    "A function whose last two calls failed is withdrawn for one turn.",
    "Here you measure whether each run followed the skill.",
    "So a loaded body is paid for again on every later call, in prompt tokens.",
    "Keep a skill that nearly every request needs always loaded.",
    "A skill that is never loaded costs nothing but its catalog line.",
    "Cross-validation deals the queries into five folds, every query scored by a fit that never saw it.",
    "The rule keeps techniques within one and a half times the seed selector's prompt tokens.",
    "An edit that does so wins more than half of the held-out queries that only one description gets right.",
    "Each of the three modes has its own harness; each of these requests continues the cache the previous one left.",
    "The cell below lists every query whose decision changed when the boundary sentences went away.",
    "**Accuracy** is the correct queries over all queries; the most correct decisions win.",
    "A request that never names it relies on the model guessing from the name.",
    "A system instruction that never says \"answer directly\" invites a model to load *something* every time.",
    "The failures are the model's most likely answers; the decision is the most frequent answer of the runs.",
    "A small local model's results are its own, never passed off as Gemini's.",
    "The seed's agreement selector makes three sampled runs, a skill only if all three name it.",
])
def test_the_detector_lets_teaching_prose_in_words_through(sentence):
    assert run_figures(sentence) == [], sentence


def test_readme_sentences_join_wrapped_lines_and_skip_code():
    readme = ("The course runs offline. The model declined\nsix times on\nthe French set.\n\n"
              "```bash\nmake course  # runs every lesson six times\n```\n\n"
              "- a list item\n  wrapped onto a second line\n\n| a | b |\n|---|---|\n| one | two |\n")
    entries = readme_sentences(readme)
    assert "The model declined six times on the French set." in entries
    assert "- a list item wrapped onto a second line" in entries
    assert "| one | two |" in entries
    assert not any("make course" in entry for entry in entries)
    assert [figure for entry in entries for _, figure in run_figures(entry, digits=False)] == ["six times"]

"""The course states no selection rule as its own that its numbers do not support. Fast: no model, no kernel.

The source lesson's decision rule — the model decides, similarity only shortlists, « N'utilisez jamais la
similarité seule pour décider qu'un skill doit être activé » — is a claim about a large model. A lesson may quote
it and check it against its run; the rule a lesson gives is printed by code from that run. This test reads every
lesson (Markdown cells, and the strings and comments of code cells), README.md, and the docstrings of
`course_utils`, and fails on that rule stated in the course's own voice:
"never similarity alone", "never use (or let) similarity alone …", "similarity alone never decides", "similarity
only shortlists", "use similarity to rank, not to activate", "not to decide alone", "only the model decides", and
the French « similarité seule ».

The convention for quoting the source: a phrasing is allowed only inside a quotation attributed to the source,
that is

1. inside French quotation marks « … » (the course quotes its French source lesson that way, and only it), or in
   the translation in parentheses right after them, or
2. inside "…" or “…” in a sentence that names the source (the word "source"), or
3. the quote of a `Claim(...)` in a code cell (its first argument, or `quote=`): a claim is the source's words
   checked against the run by construction (`course_utils.evaluation.findings`).
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from course_utils.skills.paths import NOTEBOOKS_DIR, REPO_ROOT

LESSONS = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
README = REPO_ROOT / "README.md"
PACKAGE = sorted((REPO_ROOT / "course_utils").rglob("*.py"))

_SIM = r"(?:embedding |cosine )?similarity"
_NEAR = r"[^.;:!?\n]{0,40}?"  # a few words of the same clause
_VERB = r"(?:decide|activate|trigger|pick|choose|fire)"
RULES = {  # pattern: the rule it states
    rf"\bnever (?:(?:use|let|trust|rely on|leave it to) )?(?:the )?{_SIM} alone\b"
    rf"|\b{_SIM} alone (?:must |should |may |can |is )?never\b":
        "never similarity alone",
    rf"\bnot\b{_NEAR}\b{_SIM} alone\b{_NEAR}\b{_VERB}":
        "not similarity alone to decide",
    rf"\b{_SIM} (?:only|merely|just|must only|should only|may only) (?:shortlists?|ranks?|finds?|proposes?|suggests?"
    r"|preselects?|narrows?)\b":
        "similarity only shortlists",
    rf"\b(?:use|let) {_SIM}\b{_NEAR}\bto \W?(?:rank|find|shortlist|propose|preselect)\w*\W?{_NEAR}\bnot\b":
        "use similarity to rank, not to decide",
    rf"\bnot (?:to )?{_VERB} alone\b|\bnever {_VERB}s? alone\b":
        "similarity does not decide alone",
    r"\bonly the model (?:decides|may decide|should decide|must decide|picks|chooses)\b"
    rf"|\bthe model decides, {_SIM}\b":
        "only the model decides",
    r"\bsimilarit[ée] seule\b|\bjamais la similarit[ée]\b":
        "the source's rule in French",
}
PATTERNS = {re.compile(pattern, re.I): rule for pattern, rule in RULES.items()}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_\"'“«(`|\-])|\n\s*\n")


def french_quotes(text: str) -> list[tuple[int, int]]:
    """The spans of the outermost « … » quotations of a text (a quotation may hold another one)."""
    spans, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "«":
            if depth == 0:
                start = i
            depth += 1
        elif char == "»" and depth:
            depth -= 1
            if depth == 0:
                translation = re.match(r"\s*\([^()]*\)", text[i + 1:])  # « … » (its translation)
                spans.append((start, i + 1 + (translation.end() if translation else 0)))
    if depth:
        spans.append((start, len(text)))  # an unclosed quotation runs to the end of the text
    return spans


def sentence_around(text: str, position: int) -> str:
    starts = [0, *(m.end() for m in SENTENCE_END.finditer(text) if m.end() <= position)]
    end = next((m.start() for m in SENTENCE_END.finditer(text) if m.start() >= position), len(text))
    return text[starts[-1]:end]


def attributed(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] lies inside a quotation attributed to the source (see the module docstring)."""
    if any(a <= start and end <= b for a, b in french_quotes(text)):
        return True
    sentence = sentence_around(text, start)
    offset = text.index(sentence, max(0, start - len(sentence))) if sentence else 0
    if not re.search(r"\bsource\b", sentence, re.I):
        return False
    quoted = [(m.start() + offset, m.end() + offset) for m in re.finditer(r'"[^"\n]*"|“[^”]*”', sentence)]
    return any(a <= start and end <= b for a, b in quoted)


def rules_stated(text: str) -> list[str]:
    """Each rule the text states in the course's own voice, with the sentence that states it."""
    found = []
    for pattern, rule in PATTERNS.items():
        for m in pattern.finditer(text):
            if not attributed(text, m.start(), m.end()):
                found.append(f"{rule}: {' '.join(sentence_around(text, m.start()).split())[:200]!r}")
    return found


def _is_claim_quote(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    if isinstance(parent, ast.keyword):
        call, keyword = parents.get(parent), parent.arg
    else:
        call, keyword = parent, None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", None)) == "Claim"):
        return False
    return keyword == "quote" or (keyword is None and bool(call.args) and call.args[0] is node)


def code_texts(source: str) -> list[str]:
    """The strings and comments of a code cell, a `Claim`'s quote apart. IPython magics are skipped."""
    source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not _is_claim_quote(node, parents):
            texts.append(node.value)
        elif isinstance(node, ast.JoinedStr) and not _is_claim_quote(node, parents):
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    texts += [tok.string for tok in tokens if tok.type == tokenize.COMMENT]
    return texts


def lesson_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every Markdown cell and every string or comment of a code cell of a lesson."""
    texts = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type == "markdown":
            texts.append((f"cell {index}", cell.source))
        elif cell.cell_type == "code":
            texts += [(f"cell {index} (code)", text) for text in code_texts(cell.source)]
    return texts


def docstrings(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every docstring of a module: the module's, its classes' and functions', and the string
    that documents a constant (a bare string statement)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(f"line {node.lineno}", node.value.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]


def offences(texts: list[tuple[str, str]]) -> list[str]:
    return [f"{where}: {hit}" for where, text in texts for hit in rules_stated(text)]


ADVICE = ("states the source lesson's rule as the course's own. Quote it as the source's claim (« … », or \"…\" in a "
          "sentence naming the source, or a Claim) and print the rule the run supports from code:\n  ")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_states_no_rule_of_the_source_as_its_own(path):
    found = offences(lesson_texts(path))
    assert not found, f"{path.name} " + ADVICE + "\n  ".join(found)


def test_the_readme_states_no_rule_of_the_source_as_its_own():
    found = offences([("README.md", README.read_text(encoding="utf-8"))])
    assert not found, "README.md " + ADVICE + "\n  ".join(found)


@pytest.mark.parametrize("path", PACKAGE, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_a_docstring_states_no_rule_of_the_source_as_its_own(path):
    found = offences(docstrings(path))
    assert not found, f"{path.relative_to(REPO_ROOT)} " + ADVICE + "\n  ".join(found)


@pytest.mark.parametrize("text", [
    "**Decision rule.** Never let similarity alone activate a skill; always honour an explicit `/skill-name`.",
    "Always honour an explicit `/skill-name`; never let similarity alone activate a skill.",
    "Use similarity to *find candidates*, not to decide alone that a skill must be activated.",
    "**Decision rule:** use similarity to *rank* skills, not to *activate* them.",
    "The model decides, similarity only shortlists, never similarity alone.",
    "Similarity alone never decides to activate.",
    "Never use similarity alone to decide that a skill must be activated.",
    "Only the model decides whether a skill is activated.",
    "La règle : n'utilisez jamais la similarité seule.",
    'The rule is "never similarity alone", and we follow it.',
])
def test_the_detector_catches_the_rule_in_the_course_voice(text):
    assert rules_stated(text), text


@pytest.mark.parametrize("text", [
    "The source lesson's rule: « N'utilisez jamais la similarité seule pour décider qu'un skill soit activé » [1].",
    "Its rule: « Laissez le modèle décider … N'utilisez jamais la similarité seule pour décider » (cited: the source).",
    'The source lesson says "never use similarity alone to decide that a skill must be activated" [1].',
    "The gated hybrid: similarity shortlists, the model picks, and both signals together may still say none.",
    "Similarity alone uses the backend's default threshold, fitted on the development queries.",
    "Grade the tested hybrid beside the model alone and similarity alone, with intervals.",
    "Grade it beside the model alone and similarity alone on grading queries it never prints.",
    "The source's rule, « n'utilisez jamais la similarité seule » (never use similarity alone), is its claim.",
    "The hybrid: similarity keeps the nearest few skills, the model decides among them.",
])
def test_the_detector_lets_quotations_and_descriptions_through(text):
    assert rules_stated(text) == [], text


def test_a_claims_quote_is_the_sources_words():
    cell = ('DECIDES = Claim("never use similarity alone to decide that a skill is activated", SOURCE, above=0.5)\n'
            'also = Claim(quote="similarity only shortlists", source=SOURCE, below=0.5)\n')
    assert offences([("cell", text) for text in code_texts(cell)]) == []
    assert rules_stated(code_texts('print("never let similarity alone activate a skill")')[0])

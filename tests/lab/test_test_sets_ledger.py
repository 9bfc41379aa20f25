"""Every look at a test set is in the ledger, docs/lab/test-sets.md. Fast: no model, no kernel.

The ledger's summary table has one machine-readable row per test set:

    | set | file | selector | queries | looks | status | prose names |

`selector` is `all` (every entry of the file) or `key: value` (the entries of a requests file with that value,
e.g. `split: test`); `looks` is `N` or `N + standing` (N one-off looks; a lesson, command or test that looks at
the set on every execution); `status` is `fresh`, `reported` or `burned`; `prose names` are the quoted words
README, lessons and data headers use for the set. Each set has a section `## <set>` whose table has one row per
look, numbered `1`…`N`, then `S1`, `S2`… for standing looks, the last cell saying whether the look steered a
choice (`yes…` or `no…`).

The tests below fail when
- a data file holding a test set (a labelled query list in data/, or `split: test` / `former_split: test`
  requests) has no row and section, or its query count differs from the ledger's;
- a record or report under data/measured/ or docs/lab/records/ that is of a test split (its name starts with
  `test`, its JSON says `"split": "test"`, or it holds a test set's query, request id or file name) is not named in
  the ledger;
- a fresh set (no look recorded) has a committed record;
- a sentence of README.md, a lesson's Markdown or a data file's header claims a set was "reported once", "run
  once", "measured once", "looked at once", had "one look", that it "reports … once", was "never chosen on",
  "never used to tune" (or to choose), "never tuned on" (or that "nobody tuned on" it) or had "no choice made on"
  it, while the ledger lists that set as looked at more than once, or burned;
- such a sentence calls a burned set "held out" (a look at it steered a choice: it was not held out from it), or
  names it as a test ("test queries", "test set", "English test"…): a burned set is a development set.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
import yaml

from scripts.lab import LAB_RECORDS
from course_utils.skills.paths import DATA_DIR, NOTEBOOKS_DIR, REPO_ROOT

LEDGER = REPO_ROOT / "docs" / "lab" / "test-sets.md"
MEASURED = DATA_DIR / "measured"
RECORD_FOLDERS = (MEASURED, LAB_RECORDS)
"""The records the lessons read, and the development records the lab notes cite."""


def records() -> list[Path]:
    """Every JSON record in RECORD_FOLDERS."""
    return [path for folder in RECORD_FOLDERS for path in sorted(folder.rglob("*.json"))]
SUMMARY_HEADER = ["set", "file", "selector", "queries", "looks", "status", "prose names"]
STATUSES = ("fresh", "reported", "burned")
LOOKS = re.compile(r"^(\d+)( \+ standing)?$")
LOOK_ID = re.compile(r"^(\d+|S\d+)$")
CLAIM = re.compile(r"\b(?:reported (?:on )?once|measured once|run once|looked at once|one look|never chosen on|"
                   r"never used to (?:tune|choose)|(?:never|nobody|no one) tuned on|no choice (?:was )?made on|"
                   r"reports?\b[^.;:]{0,80}?\bonce)\b", re.IGNORECASE)
BURNED_NAME = re.compile(r"(?<!not a )(?:\bheld[- ]out\b|\btest (?:set|sets|quer(?:y|ies)|data|files?)\b|"
                         r"\b(?:EN|FR|English|French) test\b)", re.IGNORECASE)
"""What a burned set may not be called: held out, or a test set (it is a development set)."""


class LedgerError(ValueError):
    """The ledger's text does not say what the page promises."""


@dataclass(frozen=True)
class TestSet:
    __test__ = False  # not a pytest class

    name: str
    file: str
    selector: str
    queries: int
    looks: int
    standing: bool
    status: str
    names: tuple[str, ...]

    def looked_at_at_most_once(self) -> bool:
        return self.looks <= 1 and not self.standing

    def words(self) -> tuple[str, ...]:
        """What a sentence may call the set: its prose names and its file's name."""
        return (*self.names, Path(self.file).name)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


def parse_ledger(text: str) -> dict[str, TestSet]:
    """The ledger's test sets by name; LedgerError says what is wrong with the page."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("|") and _cells(line) == SUMMARY_HEADER),
                  None)
    if header is None:
        raise LedgerError(f"no summary table with the columns {' | '.join(SUMMARY_HEADER)}")
    sections = _sections(text)
    sets: dict[str, TestSet] = {}
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        if len(cells) != len(SUMMARY_HEADER):
            raise LedgerError(f"summary row with {len(cells)} cells: {line!r}")
        name, file, selector, queries, looks, status, names = cells
        found = LOOKS.match(looks)
        if not found:
            raise LedgerError(f"{name}: looks {looks!r} is not 'N' or 'N + standing'")
        if status not in STATUSES:
            raise LedgerError(f"{name}: status {status!r} is not one of {', '.join(STATUSES)}")
        if not queries.isdigit():
            raise LedgerError(f"{name}: queries {queries!r} is not a count")
        if name in sets:
            raise LedgerError(f"{name}: two summary rows")
        test_set = TestSet(name, file.strip("`"), selector, int(queries), int(found[1]), bool(found[2]), status,
                           tuple(re.findall(r'"([^"]+)"', names)))
        _check_section(test_set, sections.get(name))
        sets[name] = test_set
    if not sets:
        raise LedgerError("the summary table has no row")
    return sets


def _check_section(test_set: TestSet, section: str | None) -> None:
    """The set's section exists, names its file, and its look rows agree with the summary row."""
    name = test_set.name
    if section is None:
        raise LedgerError(f"{name}: no section '## {name}'")
    if test_set.file not in section:
        raise LedgerError(f"{name}: its section does not name {test_set.file}")
    rows = [cells for cells in map(_cells, section.splitlines()) if LOOK_ID.match(cells[0])]
    numbered = [cells[0] for cells in rows if cells[0].isdigit()]
    if numbered != [str(n) for n in range(1, len(numbered) + 1)]:
        raise LedgerError(f"{name}: look rows are not numbered 1…N in order: {numbered}")
    if len(numbered) != test_set.looks:
        raise LedgerError(f"{name}: the summary says {test_set.looks} looks, the section has {len(numbered)} rows")
    if any(cells[0].startswith("S") for cells in rows) != test_set.standing:
        raise LedgerError(f"{name}: '+ standing' in the summary and S rows in the section must go together")
    steered = []
    for cells in rows:
        verdict = cells[-1].lower()
        if not verdict.startswith(("yes", "no")):
            raise LedgerError(f"{name}, look {cells[0]}: the last cell must start with yes or no: {cells[-1]!r}")
        steered.append(verdict.startswith("yes"))
    if test_set.status == "fresh" and rows:
        raise LedgerError(f"{name}: fresh, yet {len(rows)} looks are recorded")
    if test_set.status != "fresh" and not rows:
        raise LedgerError(f"{name}: no look recorded, so its status is fresh, not {test_set.status}")
    if (test_set.status == "burned") != any(steered):
        raise LedgerError(f"{name}: status {test_set.status}, but a look that steered a choice is "
                          f"{'missing' if test_set.status == 'burned' else 'recorded'}")


# ---------------------------------------------------------------- the data the ledger describes


def entries(file: Path) -> list[dict]:
    """A query set's entries, or a requests file's requests."""
    data = yaml.safe_load(file.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("requests")
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


def selected(test_set: TestSet) -> list[dict]:
    """The entries of the set's file that the set holds."""
    found = entries(REPO_ROOT / test_set.file)
    if test_set.selector == "all":
        return found
    key, _, value = test_set.selector.partition(": ")
    return [entry for entry in found if str(entry.get(key)) == value]


@functools.cache
def items(test_set: TestSet) -> frozenset[str]:
    """The strings that identify the set's entries in a record: query texts, request ids and texts."""
    return frozenset(str(entry[key]) for entry in selected(test_set) for key in ("query", "id", "text")
                     if key in entry)


def data_test_sets() -> set[tuple[str, str]]:
    """(file, selector) of every test set the data holds: labelled query lists in data/, and requests whose split
    or former split is test."""
    found = set()
    for file in sorted(DATA_DIR.glob("*.yaml")):
        name = str(file.relative_to(REPO_ROOT))
        listed = entries(file)
        if listed and all("query" in entry for entry in listed):
            found.add((name, "all"))
        for key in ("split", "former_split"):
            if any(entry.get(key) == "test" for entry in listed if "query" not in entry):
                found.add((name, f"{key}: test"))
    return found


def strings(value) -> set[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings(v)}
    return set()


def holds(record_strings: set[str], test_set: TestSet) -> bool:
    """Whether a record holds one of the set's entries, or names its file (a whole-file set)."""
    if record_strings & items(test_set):
        return True
    return test_set.selector == "all" and any(Path(test_set.file).name in s for s in record_strings)


# ---------------------------------------------------------------- claims in the prose


BLOCK_START = re.compile(r"^\s*(?:[-*] |\d+\. |#)")


def paragraphs(text: str) -> list[list[tuple[int, str]]]:
    """Each paragraph as its (line number, line) pairs: blank lines and list items start one, and every table
    row is one of its own."""
    found: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("|") or BLOCK_START.match(line):
            if current:
                found.append(current)
            current = []
            if line.lstrip().startswith("|"):
                found.append([(number, line)])
                continue
        if line.strip():
            current.append((number, line.strip()))
    if current:
        found.append(current)
    return found


def sentences(paragraph: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """(line number where it starts, sentence) for each sentence of a paragraph."""
    found, sentence, start = [], [], None
    for number, line in paragraph:
        for piece in re.split(r"(?<=[.!?])\s+", line):
            if start is None:
                start = number
            sentence.append(piece)
            if re.search(r"[.!?]$", piece):
                found.append((start, " ".join(sentence)))
                sentence, start = [], None
    if sentence:
        found.append((start, " ".join(sentence)))
    return found


def claims(text: str, where: str, sets: dict[str, TestSet], own: tuple[str, ...] = ()) -> list[str]:
    """A line per sentence of `text` that claims a single look, or no choice, about a set the ledger lists as
    looked at more than once or burned. The set is the one the sentence names; else, in a data file's header,
    the file's own sets (`own`); else the one its paragraph names."""
    def named(words: str) -> list[TestSet]:
        lowered = words.lower()
        return [s for s in sets.values() if any(word.lower() in lowered for word in s.words())]

    problems = []
    for paragraph in paragraphs(text):
        whole = " ".join(line for _, line in paragraph)
        for line, sentence in sentences(paragraph):
            claim, name = CLAIM.search(sentence), BURNED_NAME.search(sentence)
            if not claim and not name:
                continue
            about = named(sentence) or [sets[name] for name in own] or named(whole)
            for test_set in about:
                looks = f"{test_set.looks}{' + standing' if test_set.standing else ''}"
                if claim and (not test_set.looked_at_at_most_once() or test_set.status == "burned"):
                    problems.append(f"{where} line {line}: {claim[0]!r} about the {test_set.name} ({looks} looks, "
                                    f"{test_set.status}): {sentence.strip()[:200]!r}")
                if name and test_set.status == "burned":
                    problems.append(f"{where} line {line}: {name[0]!r} for the {test_set.name}, burned: call it a "
                                    f"development set: {sentence.strip()[:200]!r}")
    return problems


def header(file: Path) -> str:
    """A YAML file's leading comment lines, without their '#'."""
    lines = []
    for line in file.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return "\n".join(lines)


# ---------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def ledger() -> dict[str, TestSet]:
    return parse_ledger(LEDGER.read_text(encoding="utf-8"))


def test_every_test_set_in_the_data_has_a_row_and_a_section(ledger):
    rows = {(s.file, s.selector) for s in ledger.values()}
    missing = sorted(data_test_sets() - rows)
    assert not missing, f"test sets with no row and section in {LEDGER.relative_to(REPO_ROOT)}: {missing}"


def test_the_ledger_counts_the_queries_the_files_hold(ledger):
    for test_set in ledger.values():
        assert (REPO_ROOT / test_set.file).is_file(), f"{test_set.name}: {test_set.file} does not exist"
        assert len(selected(test_set)) == test_set.queries, (
            f"{test_set.name}: the ledger says {test_set.queries} queries, {test_set.file} "
            f"({test_set.selector}) holds {len(selected(test_set))}")


def test_every_record_of_a_test_set_is_named_in_the_ledger(ledger):
    text = LEDGER.read_text(encoding="utf-8")
    # Requests moved to dev (former_split) are dev data now: their later records are dev records.
    current = [s for s in ledger.values() if not s.selector.startswith("former_split")]
    missing = []
    for path in records():
        record = json.loads(path.read_text(encoding="utf-8"))
        of_test = (path.name.startswith("test") or (isinstance(record, dict) and record.get("split") == "test")
                   or any(holds(strings(record), s) for s in current))
        if of_test and str(path.relative_to(REPO_ROOT)) not in text:
            missing.append(str(path.relative_to(REPO_ROOT)))
    assert not missing, f"records of test sets that {LEDGER.relative_to(REPO_ROOT)} does not name: {missing}"


def test_a_fresh_set_has_no_record(ledger):
    fresh = [s for s in ledger.values() if s.status == "fresh"]
    for path in records():
        record_strings = strings(json.loads(path.read_text(encoding="utf-8")))
        for test_set in fresh:
            assert not holds(record_strings, test_set), (
                f"{path.relative_to(REPO_ROOT)} holds a run of the {test_set.name}, which the ledger lists as fresh "
                "(no look): add the look to the ledger")


def test_no_sentence_claims_a_single_look_at_a_set_looked_at_more_often(ledger):
    problems = claims(Path(REPO_ROOT / "README.md").read_text(encoding="utf-8"), "README.md", ledger)
    for lesson in sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(lesson, as_version=4)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "markdown":
                problems += claims(cell.source, f"{lesson.relative_to(REPO_ROOT)} cell {index}", ledger)
    for file in sorted(DATA_DIR.glob("*.yaml")):
        name = str(file.relative_to(REPO_ROOT))
        own = tuple(s.name for s in ledger.values() if s.file == name)
        problems += claims(header(file), name, ledger, own)
    assert not problems, ("sentences that the ledger contradicts (a set looked at more than once, or burned):\n"
                          + "\n".join(problems))


# ---------------------------------------------------------------- the checks themselves can fail

GOOD = """
| set | file | selector | queries | looks | status | prose names |
|---|---|---|---|---|---|---|
| old set | `data/old.yaml` | all | 3 | 2 + standing | burned | "English test"; "old queries" |
| new set | `data/new.yaml` | split: test | 4 | 0 | fresh | "`split: test`" |

## old set

`data/old.yaml`.

| # | date | commit | command | what for | steered a choice? |
|---|---|---|---|---|---|
| 1 | 2026-11-30 | abc1234 | eval | a wording | yes: chosen on it |
| 2 | 2026-12-01 | def5678 | eval | a report | no |
| S1 | 2026-11-30 → today | abc1234 | a lesson | a report | no |

## new set

`data/new.yaml`.

| # | date | commit | command | what for | steered a choice? |
|---|---|---|---|---|---|
"""


def test_the_parser_reads_a_good_ledger():
    sets = parse_ledger(GOOD)
    assert sets["old set"] == TestSet("old set", "data/old.yaml", "all", 3, 2, True, "burned",
                                      ("English test", "old queries"))
    assert sets["new set"].looks == 0 and not sets["new set"].standing and sets["new set"].names == ("`split: test`",)


@pytest.mark.parametrize("old, new, message", [
    ("| 2 + standing | burned |", "| 3 + standing | burned |", "says 3 looks, the section has 2"),
    ("| 2 + standing | burned |", "| 2 | burned |", "must go together"),
    ("| 0 | fresh |", "| 0 | reported |", "status is fresh, not reported"),
    ("| 0 | fresh |", "| 0 | unused |", "is not one of"),
    ("| 0 | fresh |", "| none | fresh |", "is not 'N'"),
    ("| yes: chosen on it |", "| no |", "burned, but a look that steered a choice is missing"),
    ("| 2 | 2026-12-01 |", "| 3 | 2026-12-01 |", "not numbered"),
    ("| a report | no |\n\n## new set", "| a report | maybe |\n\n## new set", "must start with yes or no"),
    ("## new set", "## another set", "no section '## new set'"),
    ("`data/new.yaml`.", "the new file.", "does not name data/new.yaml"),
    ("| set | file |", "| name | file |", "no summary table"),
])
def test_the_parser_refuses_a_bad_ledger(old, new, message):
    assert old in GOOD
    with pytest.raises(LedgerError, match=re.escape(message)):
        parse_ledger(GOOD.replace(old, new, 1))


def test_the_parser_refuses_a_fresh_set_with_a_look():
    bad = GOOD + "| S1 | 2026-12-02 | abc1234 | a lesson | a report | no |\n"
    with pytest.raises(LedgerError, match="must go together"):
        parse_ledger(bad)
    bad = GOOD.replace("| 0 | fresh |", "| 1 | fresh |") + "| 1 | 2026-12-02 | abc1234 | eval | a look | no |\n"
    with pytest.raises(LedgerError, match="fresh, yet 1 looks are recorded"):
        parse_ledger(bad)


def test_a_record_of_a_set_is_recognised(ledger):
    requests = next(s for s in ledger.values() if s.selector == "split: test")
    one_request = selected(requests)[0]["id"]
    assert holds(strings({"checklists": [{"request": one_request, "mode": "all"}]}), requests)
    assert not holds(strings({"checklists": [{"request": "dev-cake-vanilla"}]}), requests)
    whole_file = next(s for s in ledger.values() if s.selector == "all")
    assert holds(strings({"queries": [f"data/{Path(whole_file.file).name}"]}), whole_file)
    assert holds(strings({"records": [{"query": selected(whole_file)[0]["query"]}]}), whole_file)


def test_claims_are_judged_against_the_ledger():
    sets = parse_ledger(GOOD)
    burned = "The 30 queries of the English test set were reported once, at the end."
    assert len(claims(burned, "x.md", sets)) == 2  # "reported once", and a burned set called a test set
    assert "old set" in claims(burned, "x.md", sets)[0]
    fresh = "The `split: test` requests are run once, with the finished harness."
    assert claims(fresh, "x.md", sets) == []
    paragraph = "Run it on `data/old.yaml` before merging.\nThat is the set's one look at the edit."
    assert len(claims(paragraph, "x.md", sets)) == 1  # the paragraph names the set
    header_only = "Held-out queries, never used to tune the edit."
    assert claims(header_only, "data/old.yaml", sets) == []  # no set named: nothing to judge
    assert len(claims(header_only, "data/old.yaml", sets, own=("old set",))) == 2  # a data header is about its file
    assert claims("The other two run once each with the same options.", "x.md", sets) == []


@pytest.mark.parametrize("sentence, caught", [
    ("Grade it on `data/old.yaml`, queries nobody tuned on.", True),
    ("The old queries, never tuned on, grade the hybrid.", True),
    ("The cell then reports your hybrid once on the old queries.", True),
    ("Written for `data/old.yaml`, never used to choose k.", True),
    ("From scratch on the English test queries.", True),  # a burned set called a test
    ("The old queries are the held-out part of this lesson.", True),
    ("The old queries are a development set: tune on them, report elsewhere.", False),
    ("Their figures on `data/old.yaml` are development figures, not a held-out test.", False),
    ("The `split: test` requests are a test set, held out from every choice.", False),  # fresh: it may be
    ("A paired test on the old queries compares the two selectors.", False),
])
def test_names_and_claims_that_a_burned_set_cannot_carry(sentence, caught):
    assert bool(claims(sentence, "x.md", parse_ledger(GOOD))) == caught

"""Query sets: the shipped ones follow the format, bad ones get an error naming file and item."""
import pytest

from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import QuerySetError, load_queries
from course_utils.skills.skill import SkillLoader

WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace").names


@pytest.mark.parametrize("name, lang", [("trigger_eval.yaml", "en"), ("trigger_eval_fr.yaml", "fr")])
def test_shipped_sets(name, lang):
    queries = load_queries(DATA_DIR / name, WORKPLACE)
    kinds = [q.kind for q in queries]
    assert (len(queries), kinds.count("positive"), kinds.count("near-miss"), kinds.count("off-topic")) == (30, 24, 5, 1)
    assert {q.lang for q in queries} == {lang}
    assert len({q.query for q in queries}) == 30


def test_english_and_french_sets_align():
    english = load_queries(DATA_DIR / "trigger_eval.yaml")
    french = load_queries(DATA_DIR / "trigger_eval_fr.yaml")
    assert [(q.expected, q.kind) for q in english] == [(q.expected, q.kind) for q in french]


def test_required_near_misses_are_present():
    english = {q.query: q for q in load_queries(DATA_DIR / "trigger_eval.yaml")}
    french = {q.query: q for q in load_queries(DATA_DIR / "trigger_eval_fr.yaml")}
    for text in ["Book 3 days of leave from November 4 to 6 in the HR tool for me.",
                 "Write a Python script that reads a CSV and inserts each row into Postgres.",
                 "What is the difference between the median and the mean?"]:
        assert english[text].expected is None and english[text].kind == "near-miss"
    for text in ["Pose 3 jours de congés du 4 au 6 novembre dans l'outil RH pour moi.",
                 "Écris un script Python qui lit un CSV et insère chaque ligne dans Postgres.",
                 "Quelle est la différence entre la médiane et la moyenne ?"]:
        assert french[text].expected is None and french[text].kind == "near-miss"


@pytest.mark.parametrize(
    "text, message",
    [
        ("- query: hi\n  expected: nope\n  kind: positive\n  lang: en\n",
         "expected skill 'nope' is not in the catalog"),
        ("- query: hi\n  expected: null\n  kind: positive\n  lang: en\n",
         "a positive query must have expected: a skill name"),
        ("- query: hi\n  expected: hr-policy-qa\n  kind: maybe\n  lang: en\n", "kind 'maybe' must be one of"),
        ("- query: hi\n  kind: positive\n", "item 1: missing expected, lang"),
        ("query: hi\n", "must be a non-empty YAML list"),
        ("- [unbalanced\n", "not valid YAML"),
        ("- just a string\n", "item 1: must be a mapping"),
        # YAML that is unsafe or too costly to build (see also tests/skills/test_bad_input.py)
        ("- query: !!python/object/apply:os.system ['true']\n  expected: null\n  kind: off-topic\n  lang: en\n",
         "not valid YAML: could not determine a constructor for the tag"),
        ("[" * 5000 + "]" * 5000, "refused: nested more than 32 levels deep"),
        ("- &l [1, *l]\n", "refused: an alias refers to the value that contains it"),
        ("- *nowhere\n", "not valid YAML: found undefined alias"),
    ],
)
def test_bad_sets_name_file_and_problem(tmp_path, text, message):
    path = tmp_path / "queries.yaml"
    path.write_text(text)
    with pytest.raises(QuerySetError, match=message) as caught:
        load_queries(path, WORKPLACE)
    assert str(caught.value).startswith(f"{path}: ")


def test_non_utf8_set(tmp_path):
    path = tmp_path / "queries.yaml"
    path.write_bytes(b"- query: caf\xe9\n")
    with pytest.raises(QuerySetError, match="cannot be read"):
        load_queries(path)

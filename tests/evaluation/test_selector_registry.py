"""The selectors are registered once (`course_utils/evaluation/selectors.py`): no list of their names elsewhere in
the package, and the command line's choices and help are the registry's."""
from __future__ import annotations

import ast

import pytest

from course_utils.cli.main import build_parser, main
from course_utils.evaluation import selectors
from course_utils.evaluation.selectors import ALIAS, RECOMMENDED, REGISTRY
from course_utils.skills.paths import REPO_ROOT, SKILLS_DIR

PACKAGE = REPO_ROOT / "course_utils"
REGISTRY_MODULE = PACKAGE / "evaluation" / "selectors.py"


def name_lists(path) -> list[str]:
    """'path:line' for each tuple, list, set or dict (its keys) of two or more items, all registered names, and each
    comma-separated string of two or more of them (a record's keys, some of which name selectors, are not a list of
    selectors)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = node.keys if isinstance(node, ast.Dict) else node.elts if isinstance(
            node, ast.Tuple | ast.List | ast.Set) else []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "," in node.value:
            items = [ast.Constant(part.strip()) for part in node.value.split(",")]
        named = [i.value for i in items if isinstance(i, ast.Constant) and i.value in (*REGISTRY, ALIAS)]
        if len(named) >= 2 and len(named) == len(items):
            found.append(f"{path}:{node.lineno}: {named}")
    return found


def test_no_module_but_the_registry_lists_selector_names():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != REGISTRY_MODULE for hit in name_lists(path)]
    assert not found, "selector names written outside the registry:\n" + "\n".join(found)


def test_the_scan_sees_a_list_of_names(tmp_path):
    module = tmp_path / "listing.py"
    module.write_text('NAMES = ("model", "similarity")\nLABELS = {"hybrid": 1, "gated": 2}\n'
                      'RECORD = {"similarity": 1, "threshold": 2, "gated": 3}\nDEFAULT = "model, hybrid"\n'
                      'TEXT = "the model, then similarity"\n')
    assert len(name_lists(module)) == 3


def subcommand(name: str):
    actions = build_parser()._subparsers._group_actions[0].choices  # noqa: SLF001 (argparse keeps them here)
    return actions[name]


def selectors_help(command: str) -> str:
    return next(a for a in subcommand(command)._actions if "--selectors" in a.option_strings).help


def test_the_help_names_every_registered_selector_and_the_alias():
    help_text = selectors_help("eval-trigger")
    for name, entry in REGISTRY.items():
        assert f"{name} ({entry.help})" in help_text
    assert f"{ALIAS} is {RECOMMENDED}" in help_text


def test_the_audit_s_help_names_every_registered_selector():
    # audit rewrite in progress: its --selectors names the registry's selectors; the help words come with it
    assert all(name in selectors_help("audit") for name in REGISTRY)


def test_the_alias_names_one_registered_selector():
    assert RECOMMENDED in REGISTRY and ALIAS not in REGISTRY and set(selectors.DEFAULT) <= set(REGISTRY)
    assert selectors.parse(f"{ALIAS},{RECOMMENDED}", dev=False) == [RECOMMENDED]


@pytest.mark.parametrize("argv", [
    ["eval-trigger", "--selectors", "oracle"],
    ["audit", str(SKILLS_DIR / "workplace"), "--pairs", "none", "--selectors", "oracle"]])
def test_the_command_line_s_choices_are_the_registry_s(argv, capsys):
    assert main(argv) == 2
    listed = capsys.readouterr().err.strip().split("choose among ")[1].split(", ")
    # audit rewrite in progress: audit takes the registry's names, the alias not yet
    assert listed in ([*REGISTRY, ALIAS], list(REGISTRY)) and list(selectors.choices()) == [*REGISTRY, ALIAS]


def test_the_selectors_without_development_queries_are_those_that_fit_nothing_on_them():
    assert selectors.available(dev=True) == list(REGISTRY)
    assert selectors.available(dev=False) == [n for n, e in REGISTRY.items() if e.dev is None]
    with pytest.raises(ValueError, match="give --dev FILE"):
        selectors.parse(",".join(REGISTRY), dev=False)


def test_the_scorer_is_fitted_on_dev_queries_when_there_are_some(monkeypatch):
    from course_utils.evaluation import selectors
    from course_utils.skills.queries import LabelledQuery

    fitted = []

    class Scorer:
        def __init__(self, client, loader, k=selectors.scorer.SHORTLIST_K):
            self.k = k

    monkeypatch.setattr(selectors.scorer, "ScoringSelector", Scorer)
    monkeypatch.setattr(selectors.scoring, "fit_on_dev", lambda selector, queries: fitted.append(list(queries)))
    made = dict(client=None, loader=None, names=("scored",), k=1, threshold=None, temperature=None, runs=1)
    assert REGISTRY["scored"].build(selectors.Ingredients(**made)).k == 3 and fitted == []  # not the hybrid's k
    dev = (LabelledQuery("q", None, "off-topic", "en"),)
    REGISTRY["scored"].build(selectors.Ingredients(**made, dev=dev))
    assert fitted == [list(dev)]
    assert selectors.parse("recommended", dev=False) == [RECOMMENDED] == ["scored"]
    assert "scored" not in selectors.compared()  # lesson 13's records hold the five it compared


def test_the_alias_resolves_to_the_recommended_selector_and_says_so_in_one_line(capsys):
    from course_utils.cli.options import parse_selectors
    from course_utils.evaluation.selectors import RECOMMENDED

    assert parse_selectors("similarity,recommended", dev=False) == ["similarity", RECOMMENDED]
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"recommended: {RECOMMENDED} (")
    assert parse_selectors("similarity", dev=False) == ["similarity"] and capsys.readouterr().err == ""

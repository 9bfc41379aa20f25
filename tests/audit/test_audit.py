"""`python -m course_utils audit`: each check on real folders, bad input named and the rest audited, read-only;
rule codes, renderings (SARIF validated against its schema), exit codes, the gate, `--changed`.

Embeddings come from the local encoder (no language model); the trigger evaluation's decisions come from a
scripted model (hybrid_fakes), so these tests are fast and their numbers are the code's, not a model's.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers.hybrid_fakes import scripted_client

from course_utils.audit import RULES, Settings, render, render_html, render_text, run_audit
from course_utils.audit import pairs as audit_pairs
from course_utils.audit.checks import NO_LISTING, WINDOWS, validation_code, when_check
from course_utils.audit.lines import field_lines
from course_utils.audit.config import ConfigError, load_settings
from course_utils.audit.pairs import bm25_matrices, closest_pairs, lexical_pairs
from course_utils.audit.queryfiles import load_query_file
from course_utils.audit.render import SECTIONS
from course_utils.audit.run import attractors, selector_names, summarise, trigger_options
from course_utils.audit.report import Confusion
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.evaluation import selectors
from course_utils.skills.queries import QuerySetError, load_queries
from course_utils.selection.embeddings import unit_rows
from course_utils.scale.synthetic import render_skill_md, synthetic_skills
from course_utils.skills.skill import Diagnostic, Skill, SkillLoader
from course_utils.cli.main import main
from helpers.paths import FIXTURES

WORKPLACE = SKILLS_DIR / "workplace"
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"


def write_skill(root: Path, name: str, description: str, body: str = "Do the thing.") -> Path:
    (root / name).mkdir(parents=True)
    path = root / name / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n", encoding="utf-8")
    return path


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root (symlinks not followed): its sha256 and mtime."""
    return {str(p): (hashlib.sha256(p.open("rb").read()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


def codes(report) -> list[str]:
    return [f.code for f in report.findings]


# ------------------------------------------------------------------------------------------- the rules


def test_every_rule_has_a_code_a_severity_and_a_fix():
    assert all(code.startswith("SK") and len(code) == 5 for code in RULES)
    assert all(r.severity in ("info", "warning", "error") and r.fix and r.summary for r in RULES.values())
    assert RULES["SK101"].name == "description-says-what-not-when"


@pytest.mark.parametrize("description, says_when, excludes", [
    ("Profiles CSV files. Use when someone shares a spreadsheet. Not for SQL.", True, True),
    ("Profiles CSV files and spreadsheets.", False, False),
    ("Rewrites emails whenever the user worries about tone; never translates.", True, True),
    ("Calcule les congés. À utiliser quand un salarié demande son solde. Pas pour poser un congé.", True, True),
    ("Use this skill for invoices.", True, False),
    ("Answers HR questions instead of the handbook team.", False, True),
])
def test_the_when_rule_reads_trigger_and_exclusion_clauses(description, says_when, excludes):
    row = when_check(Skill("s", description, "", Path("s/SKILL.md")))
    assert (row.says_when, row.excludes) == (says_when, excludes)
    assert (row.when_words is not None) == says_when


@pytest.mark.parametrize("field, message, code", [
    ("name", "missing: add `name: your-skill-name` to the frontmatter", "SK002"),
    ("description", "is 1100 characters; the limit is 1024", "SK003"),
    ("x-owner", "not a field of the Agent Skills spec (…): remove it, or move it under metadata", "SK004"),
    (None, "resolves outside the skills root (symlink or ..): refused", "SK007"),
    (None, "cannot be read: Permission denied", "SK006"),
    (None, "frontmatter is not valid YAML (line 2): mapping values are not allowed here", "SK001"),
    (None, "starts with a byte-order mark (removed)", "SK009"),
])
def test_each_validator_problem_has_a_rule_whose_fix_is_its_own_field(field, message, code):
    assert validation_code(Diagnostic(Path("s/SKILL.md"), field, message)) == code
    assert RULES[code].fix not in message  # the fix comes from the rule, not out of the message


def test_explain_prints_a_rule_and_refuses_an_unknown_code(capsys):
    assert main(["audit", "--explain", "sk101"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SK101 description-says-what-not-when [warning") and "Fix: " in out
    assert main(["audit", "--explain", "SK999"]) == 2
    assert "unknown rule 'SK999'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- the checks


def test_closest_pairs_are_those_of_the_whole_matrix_across_blocks():
    rng = np.random.default_rng(0)
    units = unit_rows(rng.normal(size=(audit_pairs.BLOCK + 300, 16)).astype(np.float32))
    units[700] = units[5]  # a duplicate: the closest pair, across two blocks
    pairs, mean, spread = closest_pairs(units, top=10)
    full = units @ units.T
    i, j = np.triu_indices(len(units), k=1)
    order = np.lexsort((j, i, -full[i, j]))[:10]  # highest cosine first, ties by index
    assert [(a, b) for a, b, _ in pairs] == [(int(i[o]), int(j[o])) for o in order]
    assert pairs[0][:2] == (5, 700)
    assert mean == pytest.approx(float(full[i, j].mean()), abs=1e-5)
    assert spread == pytest.approx(float(full[i, j].std()), abs=1e-5)


def test_bm25_scores_as_written_by_hand():
    texts = ["invoice orders match", "invoice expense receipts", "holiday leave balance", "leave policy orders"]
    presence, weights = bm25_matrices(texts)
    n, df = 4, {"invoice": 2, "leave": 2, "orders": 2}  # words of one text only are left out
    lengths = [3, 3, 3, 3]

    def bm25(query: str, doc: int) -> float:
        total = 0.0
        for word in set(query.split()) & set(df):
            if word in texts[doc].split():
                idf = math.log(1 + (n - df[word] + 0.5) / (df[word] + 0.5))
                total += idf * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * lengths[doc] / 3))
        return total

    for a in range(4):
        for b in range(4):
            assert float(presence[a] @ weights[b]) == pytest.approx(bm25(texts[a], b), rel=1e-5)


def test_lexical_pairs_find_the_near_homonyms_without_a_model():
    signal = lexical_pairs(SkillLoader.from_root(WORKPLACE))
    assert signal.pair_count == 91 and len(signal.pairs) == 10
    top = {frozenset((p.a, p.b)) for p in signal.pairs if p.stands_out}
    assert frozenset(("hr-policy-qa", "leave-balance-calculator")) in top


def test_attractors_count_what_each_skill_took():
    found = (Confusion("a", "hub", 3), Confusion(None, "hub", 2), Confusion("b", None, 4), Confusion(None, "a", 1))
    assert [(a.skill, a.stolen, a.false_triggers) for a in attractors(found)] == [("hub", 3, 2), ("a", 0, 1)]


@pytest.fixture
def random_embeddings(monkeypatch, tmp_path):
    """Random vectors instead of the encoder, in a cache of the test's own: a client that only embeds."""
    rng = np.random.default_rng(1)
    monkeypatch.setattr(audit_pairs, "embed_with_progress",
                        lambda client, texts, desc, progress: rng.normal(size=(len(texts), 8)).astype(np.float32))
    monkeypatch.setattr(audit_pairs, "backend_of", lambda c: SimpleNamespace(embedding_label=lambda: "random"))
    monkeypatch.setattr(audit_pairs, "embedding_backend", lambda c: "random")
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return SimpleNamespace()


def synthetic_folder(root: Path, count: int) -> Path:
    for skill in synthetic_skills(count):
        (root / skill.name).mkdir(parents=True)
        (root / skill.name / "SKILL.md").write_text(render_skill_md(skill), encoding="utf-8")
    return root


def test_each_harness_cuts_its_listing_by_its_own_rule(tmp_path, random_embeddings):
    root = synthetic_folder(tmp_path / "skills", 400)
    few = synthetic_folder(tmp_path / "few", 120)
    counts = {}
    for key in WINDOWS:
        report, _ = run_audit(few, Settings(harness=key, progress=False, pairs="none"), random_embeddings)
        counts[key] = report.listing.counts
        assert sum(counts[key].values()) == 120 and report.listing.views[0].entry_chars > 0
    assert counts["claude-code"]["name"] > 0 and counts["claude-code"]["cut"] == 0  # whole, then names only
    assert counts["codex"]["cut"] > 0 and counts["codex"]["name"] == 0  # every description shares the room
    assert counts["gemini-cli"]["whole"] == 120  # no budget of its own
    crowded = run_audit(root, Settings(harness="codex", progress=False, pairs="none"))[0].listing
    assert crowded.counts["omitted"] > 0 and crowded.counts["cut"] == 0  # even the names overflow: some left out
    assert (crowded.budget, crowded.unit) == (5_440, "tokens")


# ------------------------------------------------------------------------------------------- a course catalog


def test_the_workplace_catalog(local_client):
    report, _ = run_audit(WORKPLACE, Settings(progress=False, pairs="both"), local_client)
    assert report.skills == 14 and report.validation.findings == ()
    assert report.listing.counts["whole"] == 14
    assert report.listing.context_share == pytest.approx(report.listing.listing_tokens / 200_000)
    assert report.when.without_when == 0 and report.when.without_exclusion == 0
    embedding = report.pairs.signal("embedding")
    assert embedding.pair_count == 91 and len(embedding.pairs) == 10
    cosines = [p.score for p in embedding.pairs]
    assert cosines == sorted(cosines, reverse=True) and all(-1 <= p.body_cosine <= 1 for p in embedding.pairs)
    assert all(p.stands_out == (p.z >= audit_pairs.STANDS_OUT_Z) for p in embedding.pairs)
    assert report.pairs.signal("lexical").method == "BM25"
    assert 1 <= len(report.summary) <= 5
    assert {f.section for f in report.summary} <= {key for key, _ in SECTIONS}
    assert set(codes(report)) <= {"SK301", "SK302"} and all(f.fix == RULES[f.code].fix for f in report.findings)


def test_the_trigger_evaluation_names_unknown_skills_and_shows_what_fired_instead(tmp_path, local_client):
    queries = tmp_path / "queries.yaml"
    queries.write_text((DATA_DIR / "dev" / "trigger_dev.yaml").read_text(encoding="utf-8") + (
        "- {query: Book me a meeting room, expected: room-booker, kind: positive, lang: en}\n"), encoding="utf-8")
    report, figures = run_audit(WORKPLACE, Settings(queries=queries, selectors=("model", "similarity"), progress=False,
                                                    pairs="lexical"), scripted_client(local_client))
    trigger = report.trigger
    assert [u.expected for u in trigger.unknown] == ["room-booker"] and trigger.format == "course"
    assert trigger.queries == 45 and [r.selector for r in trigger.selectors] == ["model", "similarity"]
    model = trigger.selectors[0]
    # the scripted model activates the first skill listed for every query: every other query is a mistake
    assert sum(c.count for c in model.confusions) == 45 - model.rates["accuracy"].successes
    assert all(c.got == "contract-clause-reviewer" for c in model.confusions)
    assert model.rates["accuracy"].low <= model.rates["accuracy"].value
    assert figures["histogram"].startswith(b"\x89PNG")
    assert "<b>model vs similarity</b>: " in render_html(report, figures)  # the paired test, as eval-trigger prints it
    assert "SK403" in codes(report)


def test_the_gate_is_on_the_wilson_lower_bound_not_the_point_estimate(local_client, tmp_path):
    """The scripted model is always wrong but on one skill; similarity is judged on its interval's lower bound."""
    settings = Settings(queries=DATA_DIR / "dev" / "trigger_dev.yaml", selectors=("similarity",), progress=False,
                        pairs="none")
    report, _ = run_audit(WORKPLACE, replace(settings, min_accuracy=0.0), scripted_client(local_client))
    rate = report.trigger.gate.rows[0][1]
    assert report.trigger.gate.passed and "SK501" not in codes(report)
    between = (rate.low + rate.value) / 2  # above the lower bound, below the point estimate: the gate fails
    report, _ = run_audit(WORKPLACE, replace(settings, min_accuracy=between), scripted_client(local_client))
    assert rate.value > between and not report.trigger.gate.passed
    assert "SK501" in codes(report) and report.summary[0].code == "SK501"


# ------------------------------------------------------------------------------------------- query formats


def test_three_query_formats_read_into_the_same_queries(tmp_path):
    creator = tmp_path / "csv-profiler" / "evals" / "trigger.json"  # kept inside its skill's folder
    creator.parent.mkdir(parents=True)
    creator.write_text(json.dumps([{"query": "profile this export", "should_trigger": True},
                                   {"query": "write a poem", "should_trigger": False}]), encoding="utf-8")
    read = load_query_file(creator, names={"csv-profiler"})
    assert read.format == "skill-creator"
    assert [(q.expected, q.kind) for q in read.queries] == [("csv-profiler", "positive"), (None, "near-miss")]
    with pytest.raises(QuerySetError, match="--skill NAME"):
        load_query_file(creator, names=set())
    reach = tmp_path / "reach.yaml"
    reach.write_text("catalog_id: all\nqueries:\n"
                     "  - {id: q-001, text: profile this export, kind: implicit, expected_skill: csv-profiler,"
                     " acceptable_skills: [router]}\n"
                     "  - {id: q-002, text: capital of France, kind: out_of_scope, expected_skill: null}\n",
                     encoding="utf-8")
    read = load_query_file(reach)
    assert read.format == "skill-reach" and read.acceptable == (("router",), ())
    assert [(q.expected, q.kind) for q in read.queries] == [("csv-profiler", "positive"), (None, "off-topic")]
    assert load_query_file(DATA_DIR / "dev" / "trigger_dev.yaml").format == "course"


# ------------------------------------------------------------------------------------------- bad input


@pytest.fixture
def messy(tmp_path, monkeypatch):
    """Two good skills, and beside them: an unreadable file, an invalid skill, a symlink out of the folder."""
    root = tmp_path / "skills"
    write_skill(root, "invoice-matcher", "Matches invoices to orders. Use when finance reconciles. Not for expenses.")
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    write_skill(root, "Bad_Name", "Has an invalid name.")
    unreadable = write_skill(root, "locked", "Cannot be read.")
    outside = write_skill(tmp_path / "elsewhere", "secret", "Outside the folder.")
    (root / "secret").symlink_to(outside.parent, target_is_directory=True)
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
                        if self == unreadable else original(self))  # as root, chmod cannot make a file unreadable
    return root


def test_bad_input_is_named_and_the_rest_audited(messy, tmp_path, local_client):
    queries = tmp_path / "queries.yaml"
    queries.write_text("- {query: Match these invoices, expected: invoice-matcher, kind: positive, lang: en}\n"
                       "- {query: Book leave, expected: leave-booker, kind: positive, lang: en}\n", encoding="utf-8")
    before = snapshot(messy)
    report, _ = run_audit(messy, Settings(queries=queries, selectors=("similarity",), progress=False),
                          scripted_client(local_client))
    assert snapshot(messy) == before  # read-only
    problems = {f.file: f for f in report.validation.findings}
    assert problems["locked/SKILL.md"].code == "SK006" and "cannot be read" in problems["locked/SKILL.md"].message
    assert problems["Bad_Name/SKILL.md"].code == "SK002"
    assert problems["secret/SKILL.md"].code == "SK007"
    assert all(f.fix == RULES[f.code].fix for f in problems.values())
    assert report.skills == 2 and report.validation.invalid_files == 3
    assert [(u.item, u.query, u.expected) for u in report.trigger.unknown] == [(2, "Book leave", "leave-booker")]
    assert report.trigger.queries == 1
    assert [f.code for f in report.summary[:3]] == ["SK002", "SK006", "SK007"]
    assert ("2. SK006 cannot be read: Permission denied: Make the file readable by the user who runs the harness "
            "(chmod a+r), save it as UTF-8, keep it small. (evidence: validation: locked/SKILL.md)"
            ) in render_text(report).splitlines()  # as docs/faults.md quotes it


def test_one_skill_folder_is_audited_as_itself(tmp_path, local_client):
    write_skill(tmp_path, "csv-profiler", "Profiles CSV files.")
    report, _ = run_audit(tmp_path / "csv-profiler", Settings(progress=False), local_client)
    assert report.skills == 1 and report.pairs is None and report.when.without_when == 1
    assert [f.code for f in report.summary] == ["SK101", "SK102"]
    assert report.summary[0].file == "SKILL.md" and (Path(report.folder) / report.summary[0].file).is_file()


def test_an_empty_folder_says_so(tmp_path, local_client):
    report, _ = run_audit(tmp_path, Settings(progress=False), local_client)
    assert report.skills == 0 and [f.code for f in report.summary] == ["SK008"]


def test_a_broken_query_file_cannot_run(tmp_path, local_client):
    queries = tmp_path / "queries.yaml"
    queries.write_text("- {query: no label}\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match="missing"):
        run_audit(WORKPLACE, Settings(queries=queries, progress=False), local_client)


def test_ten_thousand_skills_are_audited_without_a_model(tmp_path, random_embeddings):
    """The structure of a huge folder's audit; its time is measured in docs/lab/audit.md, not here."""
    root = synthetic_folder(tmp_path / "skills", 10_000)
    report, figures = run_audit(root, Settings(progress=False, pairs="both"), random_embeddings)
    assert report.skills == 10_000 and report.pairs.signal("embedding").pair_count == 10_000 * 9_999 // 2
    assert report.pairs.signal("lexical").pair_count == 10_000 * 9_999 // 2
    assert report.listing.counts["name"] > 9_000
    assert report.summary[0].code == "SK201"
    page = render_html(report, figures)  # the tables show their first rows and say where the rest is
    assert page.count("all are in the JSON report") >= 2 and len(page) < 1_500_000


def test_the_page_escapes_what_the_skills_say(tmp_path, local_client):
    root = tmp_path / "skills"
    write_skill(root, "one", "Shows <script>alert(1)</script>. Use when testing.")
    write_skill(root, "two", "Another & more. Use when testing.")
    html = render_html(run_audit(root, Settings(progress=False, pairs="both"), local_client)[0])
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# ------------------------------------------------------------------------------------------- formats


@pytest.fixture
def unfinished(tmp_path):
    """A folder with one error (a name not in lower case) and one warning (no "when")."""
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    write_skill(root, "pdf-filler", "Fills PDF forms, never signs them.")
    (root / "odd").mkdir()
    (root / "odd" / "SKILL.md").write_text("---\nname: Odd\ndescription: Odd. Use when odd. Not for even.\n"
                                           "---\nbody\n", encoding="utf-8")
    return root


def test_sarif_is_valid_sarif_2_1_0(unfinished):
    jsonschema = pytest.importorskip("jsonschema")
    report, _ = run_audit(unfinished, Settings(progress=False, pairs="lexical"))
    log = json.loads(render(report, "sarif"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    results = log["runs"][0]["results"]
    assert {(r["ruleId"], r["level"]) for r in results} >= {("SK002", "error"), ("SK101", "warning")}
    assert {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]} == {f.code for f in report.findings}
    located = next(r for r in results if r["ruleId"] == "SK002")["locations"][0]["physicalLocation"]
    assert located["artifactLocation"]["uri"] == (unfinished / "odd" / "SKILL.md").as_uri()  # outside the cwd
    assert located["region"]["startLine"] == 2  # the line of `name: Odd`
    when = next(r for r in results if r["ruleId"] == "SK101")["locations"][0]["physicalLocation"]
    assert when["artifactLocation"]["uri"].endswith("pdf-filler/SKILL.md") and when["region"]["startLine"] == 3


def test_github_annotations_and_json(unfinished):
    report, _ = run_audit(unfinished, Settings(progress=False, pairs="lexical"))
    lines = render(report, "github").splitlines()
    assert lines[0].startswith(f"::error file={unfinished}/odd/SKILL.md,line=2,title=SK002 name-invalid::")
    assert any(line.startswith(f"::warning file={unfinished}/pdf-filler/SKILL.md,line=3,") and "SK101" in line
               for line in lines)
    data = json.loads(render(report, "json"))
    assert data["findings"][0]["code"] == "SK002" and data["findings"][0]["fix"] == RULES["SK002"].fix


# ------------------------------------------------------------------------------------------- the command


def test_exit_0_when_clean(tmp_path, capsys):
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    assert main(["audit", str(root), "--pairs", "lexical"]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().out


def test_exit_1_on_problems_at_or_above_fail_on(unfinished, capsys):
    assert main(["audit", str(unfinished), "--pairs", "lexical"]) == 1  # SK002 is an error
    assert main(["audit", str(unfinished), "--pairs", "lexical", "--ignore", "SK002"]) == 0  # warnings only
    assert main(["audit", str(unfinished), "--pairs", "lexical", "--ignore", "SK0", "--fail-on", "warning"]) == 1
    assert main(["audit", str(unfinished), "--pairs", "lexical", "--select", "SK102", "--fail-on", "warning"]) == 0


def test_exit_2_on_a_missing_folder(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_exit_2_on_a_bad_query_file(tmp_path, monkeypatch, local_client, capsys):
    import course_utils.backend.client as client_module

    monkeypatch.setattr(client_module, "make_client", lambda *a, **kw: local_client)
    queries = tmp_path / "queries.yaml"
    queries.write_text("- {query: no label}\n", encoding="utf-8")
    assert main(["audit", str(WORKPLACE), "--pairs", "none", "--queries", str(queries)]) == 2
    assert "missing" in capsys.readouterr().err
    assert main(["audit", str(WORKPLACE), "--pairs", "none", "--queries", str(tmp_path / "none.yaml")]) == 2


def test_exit_2_when_the_backend_cannot_start(monkeypatch, capsys):
    import course_utils.backend.client as client_module

    def refuse(*args, **kwargs):
        raise RuntimeError("no Gemini key: set GEMINI_API_KEY, or use --backend local (the default without a key)")

    monkeypatch.setattr(client_module, "make_client", refuse)
    assert main(["audit", str(WORKPLACE), "--backend", "gemini"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "audit: cannot start the gemini backend: RuntimeError: no Gemini key: set GEMINI_API_KEY, or use --backend "
        "local (the default without a key)"]
    assert main(["audit", str(WORKPLACE), "--backend", "gemini", "--pairs", "lexical"]) == 0  # no model needed


def test_exit_2_on_bad_settings(unfinished, capsys):
    (unfinished / "pyproject.toml").write_text('[tool.skill-audit]\nfail-on = "sometimes"\n', encoding="utf-8")
    assert main(["audit", str(unfinished), "--pairs", "lexical"]) == 2
    assert "fail-on 'sometimes'" in capsys.readouterr().err


def test_pyproject_settings_apply_and_the_command_line_overrides_them(unfinished):
    (unfinished / "pyproject.toml").write_text('[tool.skill-audit]\nignore = ["SK002"]\npairs = "lexical"\n'
                                               'fail-on = "warning"\n', encoding="utf-8")
    settings = load_settings(unfinished)
    assert settings.ignore == ("SK002",) and settings.pairs == "lexical" and settings.fail_on == "warning"
    assert main(["audit", str(unfinished)]) == 1  # SK101 is a warning
    assert main(["audit", str(unfinished), "--fail-on", "error"]) == 0
    (unfinished / "pyproject.toml").write_text('[tool.skill-audit]\nselec = ["SK1"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(unfinished)


def test_the_command_writes_sarif_json_and_a_self_contained_page(tmp_path, monkeypatch, local_client, capsys):
    import course_utils.backend.client as client_module

    monkeypatch.setattr(client_module, "make_client", lambda *a, **kw: local_client)
    page, report, sarif = tmp_path / "audit.html", tmp_path / "audit.json", tmp_path / "audit.sarif"
    assert main(["audit", str(WORKPLACE), "--harness", "codex", "--html", str(page), "--json", str(report),
                 "--format", "sarif", "--output", str(sarif)]) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["listing"]["label"], data["listing"]["unit"]) == ("Codex", "tokens")
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    html = page.read_text(encoding="utf-8")
    for key, title in SECTIONS:
        assert f'<section id="{key}"><h2>{title}</h2>' in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html) and "<script" not in html
    assert html.count("data:image/png;base64,") == 2  # the listing and the pairs; no trigger run


def test_changed_audits_only_the_skills_a_change_touched(tmp_path, capsys):
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files.")
    write_skill(root, "pdf-filler", "Fills PDF forms.")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "."], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "skills"], check=True)
    (root / "pdf-filler" / "SKILL.md").write_text("---\nname: pdf-filler\ndescription: Fills PDF forms. Use when "
                                                  "a form arrives.\n---\nbody\n", encoding="utf-8")
    write_skill(root, "new-skill", "Does new things.")
    assert main(["audit", str(root), "--pairs", "lexical", "--changed", "--since", "HEAD", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["changed"] == ["new-skill", "pdf-filler"] and data["skills"] == 3
    assert {f["skill"] for f in data["findings"]} == {"new-skill", "pdf-filler"}  # csv-profiler's are not reported
    assert main(["audit", str(root), "--changed", "--since", "no-such-ref"]) == 2


def test_the_summary_names_one_wording_finding_per_rule(unfinished):
    report, _ = run_audit(unfinished, Settings(progress=False, pairs="lexical"))
    assert len(summarise(report.findings)) == len({f.code for f in report.findings})


def test_the_pair_rule_says_when_it_cannot_fire():
    """A z-score among n values is at most √(n−1): four skills (six pairs) can never reach the cut."""
    from course_utils.audit.pairs import RULE, STANDS_OUT_Z

    assert math.sqrt(6 - 1) < STANDS_OUT_Z <= math.sqrt(15 - 1)
    assert "with four skills or fewer (six pairs) no pair can stand out" in RULE


def test_confusion_joins_three_signals(local_client):
    """Lexical and embedding pairs, and what the scripted model confused, in one table per pair."""
    settings = Settings(queries=DATA_DIR / "dev" / "trigger_dev.yaml", selectors=("model",), progress=False,
                        pairs="both")
    report, _ = run_audit(WORKPLACE, settings, scripted_client(local_client))
    rows = {frozenset((c.a, c.b)): c for c in report.confusable}
    near = rows[frozenset(("hr-policy-qa", "leave-balance-calculator"))]
    assert near.lexical_z is not None and near.embedding_z is not None and near.observed is not None
    model = report.trigger.selectors[0]
    observed = sum(c.count for c in model.confusions if c.expected and c.got and "contract-clause-reviewer" in
                   (c.expected, c.got) and "hr-policy-qa" in (c.expected, c.got))
    assert rows[frozenset(("contract-clause-reviewer", "hr-policy-qa"))].observed == observed > 0
    assert [c.signals for c in report.confusable] == sorted((c.signals for c in report.confusable), reverse=True)
    assert report.trigger.attractors[0].skill == "contract-clause-reviewer"  # it takes every query


def test_the_pre_commit_hook_runs_the_installed_command_without_a_model():
    import tomllib

    import yaml

    from course_utils.skills.paths import REPO_ROOT

    (hook,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts[hook["entry"]] == "course_utils.cli.audit:main" and hook["args"] == ["--pairs", "lexical"]
    assert hook["pass_filenames"] is False


def test_the_gate_fails_the_command_and_waits_for_queries(tmp_path, monkeypatch, local_client, capsys):
    import course_utils.backend.client as client_module

    monkeypatch.setattr(client_module, "make_client", lambda *a, **kw: scripted_client(local_client))
    dev = str(DATA_DIR / "dev" / "trigger_dev.yaml")
    common = ["audit", str(WORKPLACE), "--pairs", "none", "--queries", dev, "--selectors", "similarity"]
    assert main([*common, "--min-accuracy", "0.99", "--format", "github"]) == 1
    assert "title=SK501 trigger-accuracy-below-gate::similarity: accuracy" in capsys.readouterr().out
    assert main([*common, "--min-accuracy", "0"]) == 0
    assert main(["audit", str(WORKPLACE), "--min-accuracy", "0.8"]) == 2  # nothing to gate
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    (root / "pyproject.toml").write_text("[tool.skill-audit]\nmin-accuracy = 0.8\n", encoding="utf-8")
    assert main(["audit", str(root), "--pairs", "lexical"]) == 0  # the project's gate waits for --queries


def test_changed_evaluates_only_the_queries_that_name_a_touched_skill(local_client):
    dev = DATA_DIR / "dev" / "trigger_dev.yaml"
    wanted = sum(q.expected == "leave-balance-calculator" for q in load_query_file(dev).queries)
    settings = Settings(queries=dev, selectors=("similarity",), progress=False, pairs="lexical",
                        only=frozenset({"leave-balance-calculator"}))
    report, _ = run_audit(WORKPLACE, settings, scripted_client(local_client))
    assert report.trigger.queries == wanted > 0 and report.changed == ("leave-balance-calculator",)
    assert all("leave-balance-calculator" in (f.skill, f.other) for f in report.findings)


def test_a_neutral_skill_is_not_a_confusion():
    """skill-reach's acceptable_skills: deciding one of them is neither right nor a confusion."""
    from course_utils.audit.run import confusions

    mistakes = [{"expected": "a", "got": "router", "query": "q1"}, {"expected": "a", "got": "b", "query": "q2"},
                {"expected": "a", "got": "router", "query": "q3"}]
    found = confusions(SimpleNamespace(mistakes=mistakes), {"q1": ("router",)})
    assert [(c.expected, c.got, c.count) for c in found] == [("a", "b", 1), ("a", "router", 1)]


# ------------------------------------------------------------------------------------------- harnesses and lines

CLAUDE_SKILLS = FIXTURES / "claude_code_skills"


def test_real_claude_code_skills_are_valid_and_listed_as_claude_code_lists_them(capsys):
    """Done means (issue 53): skills using disable-model-invocation and argument-hint are valid under claude-code,
    each listed as Claude Code lists it; the user-only skill is removed, and when_to_use counts as saying when."""
    assert main(["audit", str(CLAUDE_SKILLS), "--harness", "claude-code", "--pairs", "lexical", "--format",
                 "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["skills"] == 3 and data["validation"]["findings"] == [] and data["harness"] == "claude-code"
    listing = data["listing"]
    assert {v["skill"]: v["seen"] for v in listing["views"]} == {
        "deploy": "removed", "fix-issue": "whole", "explain-code": "whole"}
    assert next(v for v in listing["views"] if v["skill"] == "deploy")["reason"] == "disable-model-invocation: true"
    assert (listing["budget"], listing["unit"]) == (8_000, "characters")
    assert listing["order"].startswith("no usage known")  # the order assumed, stated
    fix_issue = next(v for v in listing["views"] if v["skill"] == "fix-issue")
    assert fix_issue["chars"] == fix_issue["entry_chars"] > len("Fix a GitHub issue by number")  # when_to_use too
    assert {f["code"] for f in data["findings"]} == {"SK102"}  # fix-issue's when_to_use says when: no SK101
    assert main(["audit", str(CLAUDE_SKILLS), "--harness", "claude-code", "--pairs", "lexical"]) == 0
    text = capsys.readouterr().out
    assert "0 error(s), 0 warning(s)" in text and "  deploy: removed (disable-model-invocation: true)" in text
    assert "order: no usage known: the catalog's order" in text and "budget 8,000 characters" in text
    assert main(["audit", str(CLAUDE_SKILLS), "--harness", "codex", "--pairs", "lexical", "--format", "github"]) == 0
    hint = next(line for line in capsys.readouterr().out.splitlines() if "[argument-hint]" in line
                and "/deploy/" in line)
    assert hint.startswith(f"::warning file={CLAUDE_SKILLS}/deploy/SKILL.md,line=5,")  # Codex ignores the field
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["audit", str(CLAUDE_SKILLS), "--harness", "codex", "--pairs", "lexical", "--format", "sarif"]) == 0
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    lines = {r["message"]["text"].split("]")[0]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in log["runs"][0]["results"] if r["ruleId"] == "SK004" and "fix-issue" in
             r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]}
    assert lines == {"[when_to_use": 4, "[argument-hint": 5, "[disable-model-invocation": 6, "[model": 7,
                     "[effort": 8}


def test_the_spec_harness_simulates_no_listing_and_says_so(tmp_path, capsys):
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    report, _ = run_audit(root, Settings(harness="spec", progress=False, pairs="none"))
    assert report.listing.reason == NO_LISTING and not any(f.code.startswith("SK2") for f in report.findings)
    assert f"Listing (spec): none. {NO_LISTING}" in render_text(report).splitlines()
    assert json.loads(render(report, "json"))["listing"] == {"harness": "spec", "reason": NO_LISTING}
    html = render_html(report)
    assert 'class="no-listing"' in html and "sets no listing rule" in html and "data:image/png" not in html
    assert main(["audit", str(root), "--harness", "spec", "--pairs", "lexical"]) == 0
    assert "Listing (spec): none." in capsys.readouterr().out


def test_field_lines_find_top_level_and_nested_keys():
    text = ('\ufeff---\nname: x\n"description": >-\n  Folded\n  text: not a key\nmetadata:\n  author: me\n'
            "  # a comment\n  version: '1'\nallowed-tools:\n  - Bash(git:*)\n---\nbody: not frontmatter\n")
    assert field_lines(text) == {"name": 2, "description": 3, "metadata": 6, "metadata.author": 7,
                                 "metadata.version": 9, "allowed-tools": 10}  # "text:" is in the folded value
    assert field_lines("no frontmatter\nname: x\n") == {}


def test_a_yaml_error_is_on_its_own_line(tmp_path):
    root = tmp_path / "skills"
    (root / "broken").mkdir(parents=True)
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: a: b\n---\nbody\n", encoding="utf-8")
    report, _ = run_audit(root, Settings(progress=False, pairs="none"))
    broken = next(f for f in report.findings if f.code == "SK001")
    assert (broken.file, broken.line) == (str(Path("broken") / "SKILL.md"), 3)


def test_selectors_are_those_eval_trigger_accepts(tmp_path, capsys):
    root = tmp_path / "skills"
    write_skill(root, "csv-profiler", "Profiles CSV files. Use when someone shares an export. Not for SQL.")
    dev = str(DATA_DIR / "dev" / "trigger_dev.yaml")
    every = ",".join(selectors.choices())
    for text in (every, "recommended"):
        assert main(["audit", str(root), "--pairs", "lexical", "--selectors", text, "--dev", dev]) == 0
    assert selector_names(Settings(selectors=("recommended",))) == [selectors.RECOMMENDED]
    assert selector_names(Settings(dev=Path(dev))) == selectors.available(dev=True)
    capsys.readouterr()
    assert main(["audit", str(root), "--pairs", "lexical", "--selectors", "oracle"]) == 2
    assert "audit: error: unknown selector oracle: choose among" in capsys.readouterr().err
    assert main(["audit", str(root), "--pairs", "lexical", "--selectors", "gated"]) == 2
    assert "fits its gate on development queries: give --dev FILE" in capsys.readouterr().err


def test_the_dev_queries_reach_the_selectors_as_eval_trigger_passes_them(monkeypatch):
    """With --dev the audit's options carry what was chosen there and the queries themselves, which the scorer
    (`Entry.dev`) fits on."""
    import course_utils.evaluation.trigger as trigger

    chosen = SimpleNamespace(k=1, threshold=0.42, gate="the gate")
    monkeypatch.setattr(trigger, "choose_on_dev", lambda client, loader, dev, **kwargs: chosen)
    loader = SkillLoader.from_root(WORKPLACE)
    dev = DATA_DIR / "dev" / "trigger_dev.yaml"
    options = trigger_options(None, loader, Settings(dev=dev, k=3))
    assert (options.k, options.threshold, options.gate) == (1, 0.42, "the gate")
    assert options.dev == tuple(load_queries(dev, loader.names)) and options.dev
    assert trigger_options(None, loader, Settings(k=4)) == trigger.Options(k=4)

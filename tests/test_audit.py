"""`python -m course_utils audit`: each check on real folders, bad input named and the rest audited, read-only.

Embeddings come from the local encoder (no language model); the trigger evaluation's decisions come from a
scripted model (hybrid_fakes), so these tests are fast and their numbers are the code's, not a model's.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hybrid_fakes import FakeModels

from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.scale import render_skill_md, synthetic_skills, unit_rows
from course_utils.skills import Skill
from course_utils.tools import audit_pairs
from course_utils.tools.audit import Audit, run_audit, summary_text
from course_utils.tools.audit_checks import HARNESSES, split_fix, when_check
from course_utils.tools.audit_html import SECTIONS, render_html
from course_utils.tools.audit_pairs import closest_pairs
from course_utils.tools.audit_summary import top_fixes
from course_utils.tools.cli import main

WORKPLACE = SKILLS_DIR / "workplace"


def write_skill(root: Path, name: str, description: str, body: str = "Do the thing.") -> Path:
    (root / name).mkdir(parents=True)
    path = root / name / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n", encoding="utf-8")
    return path


def scripted_client(local_client):
    """The local encoder for embeddings; a scripted model that always activates the first skill offered."""
    fake = FakeModels()
    models = SimpleNamespace(generate_content=fake.generate_content,
                             embed_content=local_client.models.embed_content)
    return SimpleNamespace(models=models, course_backend=local_client.course_backend)


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root (symlinks not followed): its sha256 and mtime."""
    return {str(p): (hashlib.sha256(p.open("rb").read()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


# ------------------------------------------------------------------------------------------- the checks


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
    assert (row["says_when"], row["excludes"]) == (says_when, excludes)
    assert (row["when_words"] is not None) == says_when


@pytest.mark.parametrize("message, problem, fix", [
    ("missing: add `name: your-skill-name` to the frontmatter", "missing",
     "add `name: your-skill-name` to the frontmatter"),
    ("is 1100 characters; the limit is 1024", "is 1100 characters; the limit is 1024", "shorten it to the limit"),
    ("resolves outside the skills root (symlink or ..): refused", "resolves outside the skills root (symlink or ..): "
     "refused", "copy the skill into the folder instead of linking to a file outside it"),
])
def test_every_problem_gets_a_fix(message, problem, fix):
    assert split_fix(message) == (problem, fix)


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


def test_each_harness_cuts_its_listing_by_its_own_rule(tmp_path, random_embeddings):
    root = tmp_path / "skills"
    for skill in synthetic_skills(400):
        (root / skill.name).mkdir(parents=True)
        (root / skill.name / "SKILL.md").write_text(render_skill_md(skill), encoding="utf-8")
    counts = {}
    for key in HARNESSES:
        data = run_audit(root, harness=key, client=random_embeddings, progress=False).data
        counts[key] = data["listing"]["counts"]
        assert sum(counts[key].values()) == 400
    assert counts["claude-code"]["name"] > 0 and counts["claude-code"]["cut"] == 0  # whole, then names only
    assert counts["codex"]["cut"] > 0 and counts["codex"]["name"] == 0  # every description shares the room
    assert counts["gemini-cli"]["whole"] == 400  # no budget of its own


# ------------------------------------------------------------------------------------------- a course catalog


def test_the_workplace_catalog(local_client):
    data = run_audit(WORKPLACE, client=local_client, progress=False).data
    assert data["skills"] == 14 and data["validation"]["problems"] == []
    assert data["listing"]["counts"]["whole"] == 14
    assert data["listing"]["context_share"] == pytest.approx(data["listing"]["listing_tokens"] / 200_000)
    assert data["when"]["without_when"] == 0 and data["when"]["without_exclusion"] == 0
    pairs = data["pairs"]
    assert pairs["pair_count"] == 91 and len(pairs["pairs"]) == 10
    cosines = [p["description_cosine"] for p in pairs["pairs"]]
    assert cosines == sorted(cosines, reverse=True) and all(-1 <= p["body_cosine"] <= 1 for p in pairs["pairs"])
    assert all(p["stands_out"] == (p["z"] >= audit_pairs.STANDS_OUT_Z) for p in pairs["pairs"])
    assert 1 <= len(data["summary"]) <= 5
    assert {f["section"] for f in data["summary"]} <= {key for key, _ in SECTIONS}


def test_the_trigger_evaluation_names_unknown_skills_and_shows_what_fired_instead(tmp_path, local_client):
    queries = tmp_path / "queries.yaml"
    queries.write_text((DATA_DIR / "dev" / "trigger_dev.yaml").read_text(encoding="utf-8") + (
        "- {query: Book me a meeting room, expected: room-booker, kind: positive, lang: en}\n"), encoding="utf-8")
    result = run_audit(WORKPLACE, queries_file=queries, client=scripted_client(local_client),
                       selectors=["model", "similarity"], progress=False)
    trigger = result.data["trigger"]
    assert [u["expected"] for u in trigger["unknown"]] == ["room-booker"]
    assert trigger["queries"] == 45 and [r["selector"] for r in trigger["selectors"]] == ["model", "similarity"]
    model = trigger["selectors"][0]
    # the scripted model activates the first skill listed for every query: every other query is a mistake
    assert sum(c["count"] for c in model["confusions"]) == 45 - model["rates"]["accuracy"]["successes"]
    assert all(c["got"] == "contract-clause-reviewer" for c in model["confusions"])
    assert model["rates"]["accuracy"]["interval"][0] <= model["rates"]["accuracy"]["value"]
    assert result.figures["histogram"].startswith(b"\x89PNG")
    assert "<b>model vs similarity</b>: " in render_html(result)  # the paired test, as eval-trigger prints it
    assert any(f["kind"] == "unknown" for f in top_fixes(result.data, count=10))


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
    data = run_audit(messy, queries_file=queries, client=scripted_client(local_client), selectors=["similarity"],
                     progress=False).data
    assert snapshot(messy) == before  # read-only
    problems = {p["file"]: p for p in data["validation"]["problems"]}
    assert "cannot be read" in problems["locked/SKILL.md"]["problem"]
    assert problems["Bad_Name/SKILL.md"]["field"] == "name"
    assert "resolves outside" in problems["secret/SKILL.md"]["problem"]
    assert all(p["fix"] and p["fix"] != "see the problem" for p in problems.values())
    assert data["skills"] == 2 and data["validation"]["invalid_files"] == 3
    assert data["trigger"]["unknown"] == [{"item": 2, "query": "Book leave", "expected": "leave-booker"}]
    assert data["trigger"]["queries"] == 1
    assert [f["kind"] for f in data["summary"][:3]] == ["invalid"] * 3
    assert ("Make locked/SKILL.md load: make the file readable by the user who runs the harness (chmod a+r) "
            "(cannot be read: Permission denied)") in [f["fix"] for f in data["summary"]]  # as the README quotes it


def test_one_skill_folder_is_audited_as_itself(tmp_path, local_client):
    write_skill(tmp_path, "csv-profiler", "Profiles CSV files.")
    data = run_audit(tmp_path / "csv-profiler", client=local_client, progress=False).data
    assert data["skills"] == 1 and data["pairs"] is None and data["when"]["without_when"] == 1
    assert [f["kind"] for f in data["summary"]] == ["when", "exclusion"]


def test_an_empty_folder_says_so(tmp_path, local_client):
    data = run_audit(tmp_path, client=local_client, progress=False).data
    assert data["skills"] == 0 and [f["kind"] for f in data["summary"]] == ["invalid"]
    assert "has no folder with a SKILL.md" in data["summary"][0]["fix"]


def test_a_broken_query_file_is_named_and_the_rest_audited(tmp_path, local_client):
    queries = tmp_path / "queries.yaml"
    queries.write_text("- {query: no label}\n", encoding="utf-8")
    data = run_audit(WORKPLACE, queries_file=queries, client=local_client, progress=False).data
    assert "missing" in data["trigger"]["error"] and "selectors" not in data["trigger"]
    assert data["pairs"]["pairs"] and data["listing"]["counts"]["whole"] == 14


def test_ten_thousand_skills_are_audited_without_a_model(tmp_path, random_embeddings):
    """The structure of a huge folder's audit; its time is measured in docs/lab/audit.md, not here."""
    root = tmp_path / "skills"
    for skill in synthetic_skills(10_000):
        (root / skill.name).mkdir(parents=True)
        (root / skill.name / "SKILL.md").write_text(render_skill_md(skill), encoding="utf-8")
    data = run_audit(root, client=random_embeddings, progress=False).data
    assert data["skills"] == 10_000 and data["pairs"]["pair_count"] == 10_000 * 9_999 // 2
    assert data["listing"]["counts"]["name"] > 9_000
    assert data["summary"][0]["kind"] == "listing"
    page = render_html(Audit(data, {}))  # the tables show their first rows and say where the rest is
    assert page.count("more skills: all are in the JSON report") == 2 and len(page) < 1_000_000


# ------------------------------------------------------------------------------------------- the command


def test_the_command_writes_json_and_a_self_contained_page(tmp_path, monkeypatch, local_client, capsys):
    import course_utils.backend.client as client_module

    monkeypatch.setattr(client_module, "make_client", lambda *a, **kw: local_client)
    page, report = tmp_path / "audit.html", tmp_path / "audit.json"
    assert main(["audit", str(WORKPLACE), "--harness", "codex", "--html", str(page), "--json", str(report)]) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["listing"]["harness"] == "Codex"
    out = capsys.readouterr().out
    assert summary_text(data).splitlines()[1] in out
    html = page.read_text(encoding="utf-8")
    for key, title in SECTIONS:
        assert f'<section id="{key}"><h2>{title}</h2>' in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert html.count("data:image/png;base64,") == 2  # the listing and the pairs; no trigger run


def test_the_command_refuses_a_missing_folder(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nowhere")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_the_page_escapes_what_the_skills_say(tmp_path, local_client):
    root = tmp_path / "skills"
    write_skill(root, "one", "Shows <script>alert(1)</script>. Use when testing.")
    write_skill(root, "two", "Another & more. Use when testing.")
    html = render_html(run_audit(root, client=local_client, progress=False))
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html



def test_a_backend_that_cannot_start_is_one_line_and_exit_1(monkeypatch, capsys):
    import course_utils.backend.client as client_module

    def refuse(*args, **kwargs):
        raise RuntimeError("no Gemini key: set GEMINI_API_KEY, or use --backend local (the default without a key)")

    monkeypatch.setattr(client_module, "make_client", refuse)
    assert main(["audit", str(WORKPLACE), "--backend", "gemini"]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        "audit: cannot start the gemini backend: RuntimeError: no Gemini key: set GEMINI_API_KEY, or use --backend "
        "local (the default without a key)"]


def test_the_pair_rule_says_when_it_cannot_fire():
    """A z-score among n values is at most √(n−1): four skills (six pairs) can never reach the cut."""
    import math

    from course_utils.tools.audit_pairs import RULE, STANDS_OUT_Z

    assert math.sqrt(6 - 1) < STANDS_OUT_Z <= math.sqrt(15 - 1)
    assert "with four skills or fewer (six pairs) no pair can stand out" in RULE

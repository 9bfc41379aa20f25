"""`python -m scripts.lab bench` (the local backend's timing command): its model-free figure,
`topk_10000_ms`, and its JSON. No model."""
from __future__ import annotations

import argparse
import json
import os
from types import SimpleNamespace

import numpy as np

import course_utils.backend.client
import course_utils.backend.encoders.embed
import course_utils.backend.local.llm
import course_utils.selection.embeddings as embeddings
from course_utils.backend.local.prefixes import PREFIX_DIR_ENV
from scripts.lab import LAB_RECORDS
from scripts.lab import bench as commands
from course_utils.skills.paths import REPO_ROOT


def test_bench_times_cosine_and_top_k_on_random_unit_vectors_without_a_model(monkeypatch):
    calls = []
    original = embeddings.top_k
    monkeypatch.setattr(embeddings, "top_k", lambda row, k: calls.append((row.shape, k)) or original(row, k))
    ms = commands.topk_ms(rows=2_000, dimension=64, queries=15)
    assert 0 < ms < 1_000
    assert calls == [((2_000,), 10)] * 16  # one warm-up, then each query
    assert commands.topk_ms(rows=500, queries=3) > 0  # the encoder's size (512) by default


def test_bench_json_carries_topk_10000_ms_and_the_machine(monkeypatch, tmp_path):
    """`bench` with every model-bound step stubbed: the JSON keeps the new field and the machine fields."""
    model_file = tmp_path / "model.gguf"
    model_file.write_bytes(b"GGUF" + bytes(60))
    llm = SimpleNamespace(model=SimpleNamespace(path=model_file), context=4096)
    monkeypatch.setattr(course_utils.backend.local.llm, "get_llm", lambda name=None: llm)
    monkeypatch.setattr(course_utils.backend.encoders.embed, "embed",
                        lambda texts: np.ones((len(texts), 512), np.float32))
    monkeypatch.setattr(course_utils.backend.client, "make_client", lambda *a, **kw: SimpleNamespace())
    monkeypatch.setattr(course_utils.backend.client, "backend_of",
                        lambda client: SimpleNamespace(generation_label=lambda: "stub"))
    monkeypatch.setattr(commands, "cold_decisions", lambda *a: {"cold_decision_s": 40.0})
    monkeypatch.setattr(commands, "bench_decisions", lambda *a: {"decision_p50_s": 1.0})
    folders = []
    monkeypatch.setattr(commands, "bench_hybrid", lambda *a: folders.append(os.environ[PREFIX_DIR_ENV]) or {})
    monkeypatch.setattr(commands, "bench_scorer", lambda *a: {"scorer_decision_p50_s": 2.0})
    monkeypatch.setattr(commands, "bench_embeddings", lambda *a: {"embed_1000_s": 1.0})
    monkeypatch.setattr(commands, "topk_ms", lambda: 1.23456)
    monkeypatch.setenv(PREFIX_DIR_ENV, "/the/users/folder")
    out = tmp_path / "bench.json"
    args = argparse.Namespace(root=str(REPO_ROOT), queries=2, model=None, json=str(out), readme=None)
    assert commands.run_bench(args) == 0
    assert folders[0] != "/the/users/folder" and not os.path.exists(folders[0])  # its own folder, deleted after
    assert os.environ[PREFIX_DIR_ENV] == "/the/users/folder"
    figures = json.loads(out.read_text())
    assert figures["topk_10000_ms"] == 1.235
    assert figures["machine"]["cores"] >= 1 and figures["machine"]["cpu"]
    assert (figures["llm"], figures["llm_file_bytes"], figures["llm_context"]) == ("stub", 64, 4096)


def test_the_lab_notes_table_is_the_recorded_bench_run():
    """The bench table in docs/lab/performance.md is `docs/lab/records/bench.json`, rendered by `figures_table`
    (`bench --json docs/lab/records/bench.json --readme docs/lab/performance.md`). The README states no bench
    figure."""
    recorded = json.loads((LAB_RECORDS / "bench.json").read_text())
    assert commands.figures_table(recorded) in (REPO_ROOT / "docs" / "lab" / "performance.md").read_text()
    assert commands.TABLE_HEADER not in (REPO_ROOT / "README.md").read_text()


def test_writing_the_table_replaces_only_the_table(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nintro\n\n{commands.TABLE_HEADER}\n|---|---|---|\n| old | `x` | 1 s |\n\nafter\n")
    figures = {field: 1.5 for _, fields, _ in commands.ROWS for field in fields} | {"peak_rss_mb": 2048}
    commands.write_readme_table(readme, figures)
    text = readme.read_text()
    assert text.startswith("# Title\n\nintro\n\n| figure |") and text.endswith("| 2,048 MB |\n\nafter\n")
    assert "| old |" not in text and text.count("|---|---|---|") == 1


def test_the_embedding_figures_send_1000_texts_each_and_the_second_are_all_different():
    """`embed_1000_s` repeats the catalog's descriptions; `embed_1000_synthetic_s` sends 1,000 different ones."""
    from course_utils.skills.skill import SkillLoader

    sent = []
    client = SimpleNamespace(models=SimpleNamespace(
        embed_content=lambda model, contents: sent.append([c.parts[0].text for c in contents])))
    figures = commands.bench_embeddings(client, SkillLoader.from_root(REPO_ROOT / "skills" / "workplace"))
    assert set(figures) == {"embed_1000_s", "embed_1000_synthetic_s"} and all(v >= 0 for v in figures.values())
    repeated, distinct = sent
    assert len(repeated) == len(distinct) == 1000 and len(set(distinct)) == 1000

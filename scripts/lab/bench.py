"""``python -m scripts.lab bench``: load time, decision latency, embedding and top-k speed, peak memory of the
local backend.

``scripts.lab.cli`` calls ``register(subparsers)``; the subcommand sets ``func(args) -> int``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch



def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def machine() -> dict[str, Any]:
    """The cores and CPU model the figures were measured on."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() \
        else platform.processor()
    return {"cores": os.cpu_count(), "cpu": model or "unknown", "system": platform.platform()}


def time_decisions(decide: Callable[[str], Any], queries: list[str], name: str) -> list[float]:
    """Seconds of each decision, with a progress bar."""
    from tqdm.auto import tqdm

    seconds = []
    for query in tqdm(queries, desc=name, unit="decision"):
        start = time.perf_counter()
        decide(query)
        seconds.append(time.perf_counter() - start)
    return seconds


def bench_decisions(client, loader, queries: list[str]) -> dict[str, Any]:
    """The course's own first-turn decisions (`pick_by_model`, full catalog): warm ones, after one untimed."""
    from course_utils.selection.pick import pick_by_model

    first = pick_by_model(client, loader, queries[0])  # computes or restores the catalog: timed by cold_decisions
    seconds = time_decisions(lambda q: pick_by_model(client, loader, q), queries, "model")
    return {"catalog_skills": len(loader.skills), "queries": len(queries), "prompt_tokens": first.prompt_tokens,
            "decision_p50_s": round(statistics.median(seconds), 3),
            "decision_p95_s": round(_percentile(seconds, 0.95), 3)}


FIRST_DECISION = """
import json, sys, time
from course_utils.backend.client import make_client
from course_utils.backend.local.llm import get_llm
from course_utils.selection.pick import pick_by_model
from course_utils.skills.skill import SkillLoader

model, root, queries = sys.argv[1] or None, sys.argv[2], json.loads(sys.argv[3])
get_llm(model)
client, loader = make_client("local", model_file=model, verbose=False), SkillLoader.from_root(root)
start = time.perf_counter()
pick_by_model(client, loader, queries[0])
seconds = time.perf_counter() - start
print(json.dumps({"first_decision_s": seconds}))
"""


def cold_decisions(root: Path, model: str | None, queries: list[str]) -> dict[str, Any]:
    """The first decision of a fresh process (model loaded, not timed): the catalog computed, with no saved
    prompt prefix, then restored from the one the first process saved (``backend.local.prefixes``)."""
    from course_utils.backend.local.prefixes import PREFIX_DIR_ENV

    def first_decision(folder: str) -> float:
        run = subprocess.run([sys.executable, "-c", FIRST_DECISION, model or "", str(root / "skills" / "workplace"),
                              json.dumps(queries[:1])], capture_output=True, text=True, check=True,
                             env={**os.environ, PREFIX_DIR_ENV: folder})
        return json.loads(run.stdout.splitlines()[-1])["first_decision_s"]

    with tempfile.TemporaryDirectory() as folder:
        computed = first_decision(folder)
        restored = first_decision(folder)
    return {"cold_decision_s": round(computed, 3), "cold_decision_saved_prefix_s": round(restored, 3)}


def bench_hybrid(client, loader, queries: list[str], k: int = 3) -> dict[str, Any]:
    """`pick_hybrid` with the top `k`: the model reads a catalog of k skills in the user turn, after a system
    instruction and tool that are the same for every query (`selection.shortlist_instruction`), so one prefix is
    reused and each decision computes its shortlist and query. A shortlist is no system message, so nothing of it
    is saved: a second pass would compute what the first did, and bench runs one."""
    from course_utils.selection.pick import SimilaritySelector, pick_hybrid

    selector = SimilaritySelector(client, loader, cache=False)
    seconds = time_decisions(lambda q: pick_hybrid(client, loader, selector, q, k=k), queries, f"hybrid k={k}")
    return {"hybrid_k": k, "hybrid_decision_p50_s": round(statistics.median(seconds), 3)}


def bench_scorer(client, loader, queries: list[str], k: int = 3) -> dict[str, Any]:
    """`ScoringSelector` with the top `k`: a first pass computes (and saves) each shortlisted skill's question,
    the catalog's preparation; the second pass is warm, each decision computing its request once per skill."""
    from course_utils.selection.scorer import ScoringSelector

    selector = ScoringSelector(client, loader, k=k)
    start = time.perf_counter()
    for query in queries:
        selector(query)
    prepared = {name for query in queries for name, _ in selector.shortlist.top(query, k)}
    preparing = time.perf_counter() - start
    decisions = []
    seconds = time_decisions(lambda q: decisions.append(selector(q)), queries, f"scorer k={k}")
    return {"scorer_k": k, "scorer_prepare_s_per_skill": round(preparing / max(1, len(prepared)), 3),
            "scorer_decision_p50_s": round(statistics.median(seconds), 3),
            "scorer_decision_mean_s": round(statistics.mean(seconds), 3),
            "scorer_prompt_tokens_mean": round(statistics.mean(d.prompt_tokens for d in decisions), 1)}


def embedding_workloads(loader, count: int = 1000) -> dict[str, list[str]]:
    """`bench`'s two sets of `count` descriptions, by field: the catalog's own descriptions repeated with a numbered
    suffix (`embed_1000_s`: few distinct words), and the first `count` of lesson 10's synthetic
    skills (`embed_1000_synthetic_s`: every description different)."""
    from course_utils.scale.synthetic import synthetic_skills

    base = [skill.description for skill in loader.skills.values()]
    return {"embed_1000_s": [f"{base[i % len(base)]} (variant {i})" for i in range(count)],
            "embed_1000_synthetic_s": [skill.description for skill in synthetic_skills(count)]}


def bench_embeddings(client, loader, count: int = 1000) -> dict[str, Any]:
    """Seconds per 1,000 texts to embed each of `embedding_workloads` through the SDK (one Content per text)."""
    from google.genai import types

    results = {}
    for field, texts in embedding_workloads(loader, count).items():
        start = time.perf_counter()
        client.models.embed_content(model="gemini-embedding-2",
                                    contents=[types.Content(parts=[types.Part(text=t)]) for t in texts])
        results[field] = round((time.perf_counter() - start) * 1000 / count, 3)
    return results


def topk_ms(rows: int = 10_000, dimension: int | None = None, k: int = 10, queries: int = 200,
            seed: int = 0) -> float:
    """Median milliseconds per query of cosine + top `k` over `rows` unit vectors, as lesson 10 ranks.

    The work is `scale.IndexedSelector`'s per query: one query vector normalised, one product with a
    contiguous float32 matrix of unit rows, a partial sort (`embeddings.top_k`). The vectors are random unit
    vectors of the local encoder's size (USE, 512 unless `dimension` says otherwise): the cost depends on
    the matrix's shape, not on its values, so this figure needs no model and no embedding.
    """
    import numpy as np

    from course_utils.backend.encoders.embed import DIMENSIONS, USE_NAME
    from course_utils.selection.embeddings import cosine_scores, top_k, unit_rows

    rng = np.random.default_rng(seed)
    size = DIMENSIONS[USE_NAME] if dimension is None else dimension
    matrix = unit_rows(rng.standard_normal((rows, size), dtype=np.float32))
    vectors = rng.standard_normal((queries, 1, size), dtype=np.float32)
    top_k(cosine_scores(matrix, vectors[0])[0], k)  # warm-up: first-call allocations are not a query's cost
    seconds = []
    for vector in vectors:
        start = time.perf_counter()
        top_k(cosine_scores(matrix, vector)[0], k)
        seconds.append(time.perf_counter() - start)
    return 1000 * statistics.median(seconds)


def run_bench(args: argparse.Namespace) -> int:
    """``bench``: load time, decision latency (cold, warm, hybrid), embedding speed, top-k speed, peak memory.

    Its prompt prefixes go to an empty folder of its own, deleted at the end: nothing saved by earlier runs
    (a lesson's, another bench's) is restored, and the user's folder is left as it was.
    """
    from course_utils.backend.local.prefixes import PREFIX_DIR_ENV

    with tempfile.TemporaryDirectory() as folder, patch.dict(os.environ, {PREFIX_DIR_ENV: folder}):
        return _run_bench(args)  # figures that do not depend on what earlier runs saved


def _run_bench(args: argparse.Namespace) -> int:
    from course_utils.backend.client import backend_of, make_client
    from course_utils.backend.encoders.embed import embed
    from course_utils.backend.local.llm import get_llm
    from course_utils.backend.provision.gguf import NotAModelFile
    from course_utils.backend.local.model_file import NoChatTemplate
    from course_utils.backend.provision.models import ModelFileMissing
    from course_utils.skills.queries import load_queries
    from course_utils.skills.skill import SkillLoader

    root = Path(args.root)
    loader = SkillLoader.from_root(root / "skills" / "workplace")
    queries = [q.query for q in load_queries(root / "data" / "dev" / "trigger_dev.yaml", loader.names)]
    queries = queries[: args.queries]
    try:
        start = time.perf_counter()
        llm = get_llm(args.model)
    except (ModelFileMissing, NotAModelFile, NoChatTemplate) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    results: dict[str, Any] = {"llm_load_s": round(time.perf_counter() - start, 3),
                               "llm_file_bytes": llm.model.path.stat().st_size, "llm_context": llm.context}
    start = time.perf_counter()
    embed(["warm up"])
    results["embedder_load_s"] = round(time.perf_counter() - start, 3)
    client = make_client("local", model_file=args.model, verbose=False)
    results["llm"] = backend_of(client).generation_label()
    results |= cold_decisions(root, args.model, queries)
    results |= bench_decisions(client, loader, queries)
    results |= bench_hybrid(client, loader, queries)
    results |= bench_scorer(client, loader, queries)
    results |= bench_embeddings(client, loader)
    results["topk_10000_ms"] = round(topk_ms(), 3)  # random 512-d unit vectors: no model involved
    results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    results["machine"] = machine()
    results["date"] = time.strftime("%Y-%m-%d")
    for key, value in results.items():
        print(f"{key:>24}: {value}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        print(f"written to {args.json}")
    if args.readme:
        write_readme_table(Path(args.readme), results)
        print(f"table written into {args.readme}")
    return 0


# ----------------------------------------------------------------- the README's table

TABLE_HEADER = "| figure | field | measured |"
ROWS = [
    ("model load", ("llm_load_s",), "{:.1f} s"),
    ("first decision of a fresh process, its catalog computed (no saved prefix)", ("cold_decision_s",), "{:.1f} s"),
    ("first decision of a fresh process, its catalog restored (the prefix saved by an earlier process)",
     ("cold_decision_saved_prefix_s",), "{:.1f} s"),
    ("warm decision p50 / p95 (the catalog prefix reused; the query's own tokens computed)",
     ("decision_p50_s", "decision_p95_s"), "{:.2f} s"),
    ("hybrid decision p50, k = 3 (the instruction's prefix reused; the shortlist and the query computed)",
     ("hybrid_decision_p50_s",), "{:.1f} s"),
    ("scorer decision p50 / mean, k = 3 (each skill's question restored; the request computed once per skill)",
     ("scorer_decision_p50_s", "scorer_decision_mean_s"), "{:.1f} s"),
    ("1,000 descriptions embedded (USE, through the SDK)", ("embed_1000_s",), "{:.1f} s"),
    ("cosine + top 10 over 10,000 unit vectors, per query", ("topk_10000_ms",), "{:.1f} ms"),
    ("peak memory", ("peak_rss_mb",), "{:,} MB"),
]


def figures_table(results: dict[str, Any]) -> str:
    """The README's table of a bench run: one row per figure, its JSON field(s), the value(s)."""
    lines = [TABLE_HEADER, "|---|---|---|"]
    for label, fields, unit in ROWS:
        names = " / ".join(f"`{field}`" for field in fields)
        values = " / ".join(unit.format(results[field]) for field in fields)
        lines.append(f"| {label} | {names} | {values} |")
    return "\n".join(lines) + "\n"


def write_readme_table(readme: Path, results: dict[str, Any]) -> None:
    """Replace the table that starts with `TABLE_HEADER` in `readme` (up to the next blank line)."""
    text = readme.read_text(encoding="utf-8")
    start = text.index(TABLE_HEADER)
    end = text.index("\n\n", start) + 1
    readme.write_text(text[:start] + figures_table(results) + text[end:], encoding="utf-8")


# ----------------------------------------------------------------- registration


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` subcommand."""
    bench = subparsers.add_parser("bench", help="time the local backend on this machine")
    bench.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    bench.add_argument("--model", default=None, help="local LLM: a published model's name or a GGUF path "
                       "(default: env COURSE_LOCAL_MODEL, else the 1.5B model)")
    bench.add_argument("--queries", type=int, default=20,
                       help="warm decisions to time, the first N queries of data/dev/trigger_dev.yaml")
    bench.add_argument("--readme", metavar="PATH", help="also write the figures' table into this README")
    bench.add_argument("--root", default=".", help="repository root (skills/, data/)")
    bench.set_defaults(func=run_bench)

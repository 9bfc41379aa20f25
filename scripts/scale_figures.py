"""The figures of docs/scale.md, computed from the measured token counts: what 10,000 skills × 1,000 queries cost.

    python scripts/scale_figures.py [docs/lab/records/decision_tokens.json]

The token counts are the local backend's own (`scripts/decision_tokens.py` writes them). Everything else is a
constant below with its source. The times are lower bounds from a formula, not measurements: a prompt token costs
2 × P FLOPs in the matmuls (P the model's parameters; attention, which grows with the prompt's length, left out),
a GPU does at most its peak FLOPs, and a decode step reads every weight once from memory. A real deployment runs
below peak, so a real run takes longer; how much longer is measured on it, not assumed here.
`tests/scale/test_scale_doc.py` checks that docs/scale.md quotes this script's output line for line.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course_utils.scale.decision import catalog_budget, decision_rule  # noqa: E402

RECORD = REPO / "docs" / "lab" / "records" / "decision_tokens.json"

SKILLS = 10_000
QUERIES = 1_000
BYTES_PER_WEIGHT = 2  # BF16

CONTEXT_TOKENS = 131_072
"""Qwen2.5's full context length (the model cards, e.g. huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct)."""

H100_FLOPS = 989.4e12
"""H100 SXM5, BF16 dense matrix peak (glennklockwood.com/garden/processors/h100)."""
H100_BYTES_PER_S = 3.35e12
"""H100 SXM5 HBM3 bandwidth (same page)."""


@dataclass(frozen=True)
class Model:
    name: str
    parameters: float
    """Non-embedding parameters, from the model card: the weights a prompt token goes through."""


MODELS = (Model("Qwen2.5-Coder-1.5B-Instruct", 1.31e9), Model("Qwen2.5-Coder-7B-Instruct", 6.53e9))


@dataclass(frozen=True)
class Strategy:
    name: str
    prompt: float
    """Prompt tokens a decision."""
    shared: float
    """Of them, the prefix every decision shares (computed once when the server caches prefixes)."""


def strategies(tokens: dict) -> list[Strategy]:
    synthetic, hybrid = tokens["synthetic"], tokens["hybrid"]
    query = tokens["workplace"]["decision"]["mean"] - tokens["workplace"]["prefix"]
    full = synthetic["prefix_large"] + query
    return [Strategy(f"full catalog ({SKILLS:,} skills)", full, synthetic["prefix_large"]),
            *(Strategy(f"hybrid k={k}", hybrid["decision"][k]["mean"], hybrid["prefix"]) for k in ("3", "10"))]


def seconds(flops: float) -> str:
    return f"{flops / H100_FLOPS:,.1f} s" if flops / H100_FLOPS >= 0.1 else f"{flops / H100_FLOPS * 1000:,.0f} ms"


def lines(tokens: dict) -> list[str]:
    work, syn, hyb, answer = tokens["workplace"], tokens["synthetic"], tokens["hybrid"], tokens["answer"]
    out = [
        f"Token counts (the local backend's countTokens, {tokens['model']}):",
        f"- workplace catalog, {work['skills']} skills: a decision {work['decision']['mean']:,.0f} prompt tokens "
        f"(mean of {work['decision']['n']}, {work['decision']['min']:,}–{work['decision']['max']:,}), "
        f"{work['prefix']:,} of them the shared system message; a skill adds {work['catalog_per_skill']:.1f} "
        f"(its catalog line and its name in the tool), the catalog's text alone {work['catalog_text']:,}",
        f"- synthetic catalog: a skill adds {syn['per_skill']:.1f}; {syn['large']:,} skills: the catalog's text "
        f"{syn['catalog_text_large']:,} tokens, the system message {syn['prefix_large']:,}, "
        f"one decision measured on it {syn['decision_large']:,}",
        f"- hybrid: k=3 {hyb['decision']['3']['mean']:,.0f} prompt tokens, k=10 {hyb['decision']['10']['mean']:,.0f} "
        f"(means of {hyb['decision']['3']['n']}), {hyb['prefix']:,} of them the shared system message",
        f"- the answer (a call or a text reply): {answer['mean']:.1f} output tokens "
        f"(mean of {answer['n']} greedy decisions, {answer['min']}–{answer['max']})",
        "",
        f"{SKILLS:,} skills × {QUERIES:,} queries:",
        "| strategy | prompt tokens a decision (shared part + mean query) | fits 131,072? | prompt tokens in all "
        "| computed with prefix caching | output tokens in all |",
        "|---|---|---|---|---|---|",
    ]
    output = QUERIES * answer["mean"]
    plans = strategies(tokens)
    for s in plans:
        cached = s.shared + QUERIES * (s.prompt - s.shared)
        out.append(f"| {s.name} | {s.prompt:,.0f} | {'yes' if s.prompt <= CONTEXT_TOKENS else 'no'} | "
                   f"{QUERIES * s.prompt:,.0f} | {cached:,.0f} | {output:,.0f} |")
    rule = decision_rule(syn["catalog_text_large"], catalog_budget(CONTEXT_TOKENS))
    out += ["", f"The course's rule at a {CONTEXT_TOKENS:,}-token window: {rule.name} ({rule.reason})."]
    out += ["", "Lower bound on one H100 SXM (matmuls only, at peak; the token counts above for both models):",
            "| model | strategy | prefill, no prefix cache | prefill, prefix cached | decode, a batch of up to "
            "--max-num-seqs decisions |",
            "|---|---|---|---|---|"]
    steps = math.ceil(answer["mean"])
    for model in MODELS:
        step = BYTES_PER_WEIGHT * model.parameters / H100_BYTES_PER_S
        for s in plans:
            flops = 2 * model.parameters
            out.append(f"| {model.name} | {s.name} | {seconds(flops * QUERIES * s.prompt)} | "
                       f"{seconds(flops * (s.shared + QUERIES * (s.prompt - s.shared)))} | "
                       f"{steps * step * 1000:,.0f} ms |")
    return out


def main(record: Path = RECORD) -> str:
    text = "\n".join(lines(json.loads(record.read_text(encoding="utf-8"))))
    print(text)
    return text


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else RECORD)

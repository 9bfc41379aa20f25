"""`python -m scripts.lab measure …`: the measurements behind the lessons and the lab notes, each a record.

    python -m scripts.lab measure bakery dev --label my-change
    python -m scripts.lab measure bakery test --modes all,on-demand,filesystem --samples 2 --label fresh
    python -m scripts.lab measure abstention model none-option reason-then-none gate examples agreement-3
    python -m scripts.lab measure abstention none-option --queries data/trigger_eval.yaml \\
        --out data/measured/abstention_lesson
    python -m scripts.lab measure native-format
    python -m scripts.lab measure listing-decisions
    python -m scripts.lab measure description-fix dev
    python -m scripts.lab measure description-fix held-out

`bakery` runs each request of a split of data/bakery_requests.yaml through each mode of `build_harness` (the loop
with the policies `OneStepAtATime()`, `RefuseRepeats()` and `StopAt(ANSWERING_TOOLS)`, as lesson 04 runs it;
`--tool-policy none` leaves `OneStepAtATime` out) on the backend `make_client()` picks: once
greedily (`--samples 0`), or `--samples N` times at `--temperature` (run k of a request seeded with
`run_seed(request, k)`, k = 1…N). It writes <split>_<label>.json (the backend, the date, the settings and every
checklist) and prints the summary: a `test` record into data/measured/bakery/, where lesson 04 reads test_fresh.json,
the record of the test split's one run; a `dev` record into docs/lab/records/bakery/, beside the lab notes that
compare harness changes on it. A record is never overwritten. Harness changes are compared on `dev`. The
`test` split is run once, with the finished harness: the command refuses to run it when a record of any of its
requests exists, and the look goes in docs/lab/test-sets.md.

`abstention` runs each named technique of `course_utils.selection.abstain` (and `model`, the plain `pick_by_model`) on
data/dev/ (45 English + 45 French queries, the workplace catalog) and writes one Report per technique
(`Report.to_dict()`, every query's record included) to data/measured/abstention_dev/<technique>.json, with the
backend and the date. Lesson 06 reads these files; `RECOMMENDED` in selection/abstain.py was chosen from them
by the rule written in its docstring. The test sets are never used here. `--queries FILE …` runs other files:
lesson 06 reads the recommended technique's run on its own 30 queries from data/measured/abstention_lesson/, written by
`measure abstention none-option --queries data/trigger_eval.yaml --out data/measured/abstention_lesson`.

`listing-decisions` runs lesson 10's 30 English decisions on Claude Code's listing of the 114-skill catalog
(`crowded_listing`) and writes data/measured/listing_decisions.json, with the listing's SHA-256; lesson 10 reads it
when its backend made it and the listing is the same.

`native-format` asks whether the local model would open a call with its own trained `<tool_call>` tag. Qwen2.5's
chat template shows tools in a `# Tools … <tools>…</tools>` block and asks for each call inside
`<tool_call></tool_call>` tags (`<tool_call>` is one special token, id 151657); the local backend instead asks for a
bare JSON object and constrains it with a grammar. With the tools shown Qwen's way, is `<tool_call>` among the
model's 20 most likely first answer tokens (read before the grammar, llama.cpp's `n_probs`)? Prompts: lesson 06's
first turn on the 90 development queries and lesson 04's on-demand first turn on the development bakery requests.
It writes docs/lab/records/native_format_dev.json (every prompt's top candidates; no lesson reads it) and prints the
summary. The test sets are not used.

`description-fix dev` runs lesson 11's `it-helpdesk-triage` description edits (`evaluation.description_fix`): the
shipped description on every development query of `DEV_FILES`, then each candidate on `candidate_subset`, and
writes data/measured/description_fix/dev.json after each description (a description already in the record is not
run again). `description-fix held-out` runs the original and the candidate `choose` picks from that record on the
held-out near-misses, once: it refuses when held_out.json exists, and the look goes in docs/lab/test-sets.md.

`--out DIR` writes the record elsewhere (a smoke test writes into a temporary folder); `--limit N` runs only the
first N requests or queries of each file.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from google import genai
from google.genai import types
from tqdm.auto import tqdm

from course_utils.evaluation.bakery_eval import MEASURED_DIR
from course_utils.skills.paths import DATA_DIR, REPO_ROOT, SKILLS_DIR
from scripts.lab import LAB_RECORDS
from course_utils.cli.options import add_backend, add_concurrency

BAKERY_DIR = MEASURED_DIR
"""Where a `test` record of the bakery agent goes: lesson 04 reads the test split's record."""
BAKERY_DEV_DIR = LAB_RECORDS / "bakery"
"""Where a `dev` record of the bakery agent goes: harness changes, compared in docs/lab/bakery-harness.md."""
ABSTENTION_DIR = DATA_DIR / "measured" / "abstention_dev"
ABSTENTION_LESSON_DIR = DATA_DIR / "measured" / "abstention_lesson"
LISTING_DIR, LISTING_FILE = DATA_DIR / "measured", "listing_decisions.json"
LISTING_SYNTHETIC, LISTING_WINDOW = 100, 200_000
"""Lesson 10's crowded catalog (the 14 workplace skills and 100 synthetic ones) and Claude Code's window for it."""
NATIVE_FORMAT_DIR = LAB_RECORDS
NATIVE_FORMAT_FILE = "native_format_dev.json"
DEV_QUERY_FILES = ("trigger_dev.yaml", "trigger_dev_fr.yaml")
TOOL_CALL = "<tool_call>"
CANDIDATES = 20
TOOL_POLICIES = ("none", "one-step-at-a-time")


class Refused(Exception):
    """The command will not run: a record would be overwritten, or the test split looked at twice."""


def _shown(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _client(args: argparse.Namespace, backend: str) -> genai.Client:
    """The client handed in (a test's stand-in), else the one `make_client(backend)` picks."""
    if getattr(args, "client", None) is not None:
        return args.client
    from course_utils.backend.client import make_client

    return make_client(backend)


# ---------------------------------------------------------------- measure bakery


def bakery_record_name(split: str, label: str = "") -> str:
    """The file a bakery record of `split` with `label` is written to."""
    return f"{split}_{label}.json" if label else f"{split}.json"


def refuse_a_second_look(requests: Sequence, folders: Sequence[Path]) -> None:
    """Raise Refused when a record in one of `folders` already holds a run of one of these test requests."""
    from course_utils.evaluation.bakery_eval import read_record

    ids = {r.id for r in requests}
    for folder in dict.fromkeys(Path(f).resolve() for f in folders):
        for path in sorted(folder.glob("*.json")):
            if ids & {c.request for c in read_record(path)[1]}:
                raise Refused(f"{_shown(path)} already holds runs of the test split: a test split is run once. "
                              "Compare harness changes on dev; write a fresh test split for another look.")


def bakery(args: argparse.Namespace) -> int:
    from course_utils.loop.agent import RunOptions, build_harness
    from course_utils.backend.client import backend_of
    from course_utils.loop.bakery import ANSWERING_TOOLS, ASSISTANT_PREAMBLE, NONE_CHOICE, bakery_tools
    from course_utils.evaluation.bakery_eval import (MAX_OUTPUT_TOKENS, MAX_TURNS, SEEDING, load_requests, run_all,
                                                     summarize)
    from course_utils.skills.skill import SkillLoader
    from course_utils.loop.tool_policy import OneStepAtATime, RefuseRepeats, StopAt

    out = args.out or (BAKERY_DIR if args.split == "test" else BAKERY_DEV_DIR)
    path = out / bakery_record_name(args.split, args.label)
    if path.exists():
        raise Refused(f"{_shown(path)} exists: a record is never overwritten; give a new --label.")
    if args.samples < 0:
        raise Refused("--samples must be 0 (one greedy run) or more")
    requests = load_requests(split=args.split)[:args.limit]
    if args.split == "test":
        refuse_a_second_look(requests, [out, BAKERY_DIR, BAKERY_DEV_DIR])
    client = _client(args, args.backend)
    bakery_skills = SkillLoader.from_root(SKILLS_DIR / "bakery")
    harnesses = {m: build_harness(m, bakery_skills, ASSISTANT_PREAMBLE, *bakery_tools(), none_choice=NONE_CHOICE)
                 for m in args.modes.split(",")}
    first = [OneStepAtATime()] if args.tool_policy == "one-step-at-a-time" else []
    seeds = list(range(1, args.samples + 1)) or [None]
    checklists = run_all(harnesses, client, requests, seeds=seeds,
                         temperature=args.temperature, progress=lambda jobs: tqdm(jobs, desc="runs"),
                         policies=[*first, RefuseRepeats(), StopAt(ANSWERING_TOOLS)],
                         options=RunOptions(max_turns=MAX_TURNS, max_output_tokens=MAX_OUTPUT_TOKENS))
    backend = backend_of(client)
    record = {"backend": backend.name, "model": backend.generation_label(),
              "date": datetime.date.today().isoformat(), "split": args.split,
              "seeds": seeds, "seeding": SEEDING if args.samples else None,
              "temperature": args.temperature if args.samples else None,
              "max_turns": MAX_TURNS, "max_output_tokens": MAX_OUTPUT_TOKENS, "stop_at_tools": list(ANSWERING_TOOLS),
              "none_choice": NONE_CHOICE, "tool_policy": args.tool_policy,
              "checklists": [c.to_dict() for c in checklists]}
    out.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as file:  # "x": never over a record written meanwhile
        file.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    for row in summarize(checklists):
        print({k: (v.format("runs") if hasattr(v, "format") and not isinstance(v, str) else v) for k, v in row.items()})
    for c in checklists:
        print(f"{c.mode:11} {c.request:24} skills={c.skills} cal={c.calendar_right} "
              f"facts={sum(c.facts.values())}/{len(c.facts)} err={c.error} | {c.answer[:160]!r}")
    print(f"wrote {_shown(path)}")
    return 0


# ---------------------------------------------------------------- measure abstention


def abstention(args: argparse.Namespace) -> int:
    from course_utils.selection.abstain import TECHNIQUES
    from course_utils.backend.client import backend_of
    from course_utils.evaluation.outcomes import comparison_table, evaluate, run_selector
    from course_utils.selection.pick import pick_by_model
    from course_utils.skills.skill import SkillLoader

    techniques = {"model": pick_by_model, **TECHNIQUES}
    names = args.techniques or list(techniques)
    unknown = [n for n in names if n not in techniques]
    if unknown:
        raise Refused(f"unknown technique {', '.join(unknown)}: choose among {', '.join(techniques)}")
    out = args.out or ABSTENTION_DIR
    client = _client(args, args.backend)
    concurrency = _concurrency(client, args.concurrency)
    backend = backend_of(client)
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    files = args.queries or [DATA_DIR / "dev" / name for name in DEV_QUERY_FILES]
    queries = [q for file in files for q in _load(file, workplace.names)[:args.limit]]
    out.mkdir(parents=True, exist_ok=True)
    reports = []
    for name in names:
        technique = techniques[name]
        decisions = run_selector(lambda q, pick=technique: pick(client, workplace, q), queries, name=name,
                                 concurrency=concurrency)
        report = evaluate(name, decisions)
        reports.append(report)
        payload = {"recorded": datetime.date.today().isoformat(), "backend": backend.name,
                   "generation_model": backend.generation_label(), "decoding": "the selector's own (greedy locally)",
                   "queries": [_shown(Path(file).resolve()) for file in files], "report": report.to_dict()}
        (out / f"{name}.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    print(comparison_table(reports))
    print(f"wrote {len(reports)} report(s) to {_shown(out)}")
    return 1 if any(r.errors for r in reports) else 0


def _concurrency(client: genai.Client, concurrency: int) -> int:
    """`--concurrency`, if the backend can answer that many decisions at once; Refused otherwise."""
    from course_utils.backend.client import check_concurrency

    try:
        return check_concurrency(client, concurrency)
    except ValueError as err:
        raise Refused(str(err)) from None


def _load(path: Path, names: Sequence[str]) -> list:
    from course_utils.skills.queries import load_queries

    return load_queries(path, names)


# ---------------------------------------------------------------- measure listing-decisions


def crowded_listing() -> tuple[Any, Any]:
    """Lesson 10's listing: the workplace skills and LISTING_SYNTHETIC synthetic ones as Claude Code lists them for a
    LISTING_WINDOW-token window, as a SkillLoader; and the system instruction's SHA-256, which names it in a record."""
    import hashlib

    from course_utils.scale.listing import claude_code_listing
    from course_utils.selection.pick import ACTIVATE
    from course_utils.skills.skill import SkillLoader
    from course_utils.scale.synthetic import with_distractors

    crowded = with_distractors(SkillLoader.from_root(SKILLS_DIR / "workplace"), LISTING_SYNTHETIC)
    listed = claude_code_listing(crowded, LISTING_WINDOW).loader(crowded)
    digest = hashlib.sha256(listed.system_instruction(function=ACTIVATE).encode()).hexdigest()
    return listed, digest


def listing_decisions(args: argparse.Namespace) -> int:
    from course_utils.backend.client import backend_of
    from course_utils.evaluation.outcomes import evaluate, run_selector
    from course_utils.selection.pick import pick_by_model

    client = _client(args, args.backend)
    backend = backend_of(client)
    listed, digest = crowded_listing()
    queries = _load(DATA_DIR / "trigger_eval.yaml", listed.names)[:args.limit]
    outcomes = run_selector(lambda q: pick_by_model(client, listed, q), queries, name="listing")
    report = evaluate("listing", outcomes)
    out = args.out or LISTING_DIR
    out.mkdir(parents=True, exist_ok=True)
    path = out / LISTING_FILE
    payload = {"recorded": datetime.date.today().isoformat(), "backend": backend.name,
               "generation_model": backend.generation_label(), "decoding": "greedy (the backend's default)",
               "queries": ["data/trigger_eval.yaml"], "listing": f"claude-code, {LISTING_WINDOW:,}-token window",
               "system_instruction_sha256": digest, "report": report.to_dict()}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    print(report.summary())
    print(f"wrote {_shown(path)}")
    return 1 if report.errors else 0


# ---------------------------------------------------------------- measure native-format


def qwen_tools_prompt(declarations: Sequence[Any], allow_text: bool) -> str:
    """The tools block as Qwen2.5-Instruct's chat template writes it after the system message."""
    tools = "\n".join(json.dumps({"type": "function", "function": {"name": d.name, "description": d.description,
                                                                   "parameters": d.parameters}}, ensure_ascii=False)
                      for d in declarations)
    return ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{tools}\n</tools>\n\nFor each function call, return a json object with function name and arguments "
            'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
            '"arguments": <args-json-object>}\n</tool_call>')


@contextlib.contextmanager
def qwen_tools_shown() -> Iterator[None]:
    """The local backend shows the tools as Qwen's chat template does, for the duration (the grammar that
    constrains the answer does not change the candidates read before it)."""
    import course_utils.backend.local.app as app

    before = app.tools_prompt
    app.tools_prompt = qwen_tools_prompt
    try:
        yield
    finally:
        app.tools_prompt = before


def first_token(client: genai.Client, system: str, tools: list[types.Tool], prompt: str) -> dict:
    """The model's top first answer tokens for one prompt, with `<tool_call>`'s rank (None: not in the top 20)."""
    from course_utils.backend.client import GENERATION_MODEL

    config = types.GenerateContentConfig(system_instruction=system, tools=tools, max_output_tokens=1,
                                         response_logprobs=True, logprobs=CANDIDATES,
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    response = client.models.generate_content(model=GENERATION_MODEL, contents=prompt, config=config)
    top = [(c.token, c.log_probability) for c in response.candidates[0].logprobs_result.top_candidates[0].candidates]
    tokens = [token for token, _ in top]
    rank = tokens.index(TOOL_CALL) + 1 if TOOL_CALL in tokens else None
    return {"prompt": prompt, "top": top, "tool_call_rank": rank,
            "p_json_open": sum(math.exp(lp) for token, lp in top if token.lstrip().startswith("{"))}


def native_format(args: argparse.Namespace) -> int:
    from course_utils.loop.agent import build_harness
    from course_utils.backend.client import backend_of
    from course_utils.loop.bakery import ASSISTANT_PREAMBLE, bakery_tools
    from course_utils.evaluation.bakery_eval import load_requests
    from course_utils.selection.pick import ACTIVATE
    from course_utils.skills.skill import SkillLoader

    path = (args.out or NATIVE_FORMAT_DIR) / NATIVE_FORMAT_FILE
    with qwen_tools_shown():
        client = _client(args, "local")  # the question is about the local model's own tag
        workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
        queries = [q.query for name in DEV_QUERY_FILES
                   for q in _load(DATA_DIR / "dev" / name, workplace.names)[:args.limit]]
        selection = [first_token(client, workplace.system_instruction(function=ACTIVATE),
                                 [workplace.tool(ACTIVATE)], q)
                     for q in tqdm(queries, desc="dev queries")]
        harness = build_harness("on-demand", SkillLoader.from_root(SKILLS_DIR / "bakery"), ASSISTANT_PREAMBLE,
                                *bakery_tools())
        tools = [types.Tool(function_declarations=harness.declarations)]
        bakery_rows = [first_token(client, harness.system_instruction, tools, r.text)
                       for r in tqdm(load_requests(split="dev")[:args.limit], desc="dev requests")]
    rows = selection + bakery_rows
    summary = {"prompts": len(rows), "tool_call_in_top_20": sum(r["tool_call_rank"] is not None for r in rows),
               "top_1": sorted({r["top"][0][0] for r in rows}),
               "median_p_json_open": sorted(r["p_json_open"] for r in rows)[len(rows) // 2]}
    backend = backend_of(client)
    record = {"recorded": datetime.date.today().isoformat(), "backend": backend.name,
              "model": backend.generation_label(), "candidates": CANDIDATES, "summary": summary,
              "selection": selection, "bakery": bakery_rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary, ensure_ascii=False))
    print(f"wrote {_shown(path)}")
    return 0


# ---------------------------------------------------------------- measure description-fix


def description_fix(args: argparse.Namespace) -> int:
    import datetime as dt

    from course_utils.evaluation import description_fix as fix
    from course_utils.backend.client import backend_of
    from course_utils.evaluation.outcomes import run_selector
    from course_utils.skills.paths import BUILD_DIR
    from course_utils.selection.pick import pick_by_model
    from course_utils.skills.skill import SkillLoader

    out = args.out or fix.RECORD_DIR
    client = _client(args, args.backend)
    concurrency = _concurrency(client, args.concurrency)
    backend = backend_of(client)
    root = SKILLS_DIR / "workplace"
    workplace = SkillLoader.from_root(root)

    def catalog(name: str) -> SkillLoader:
        if name == "original":
            return workplace
        slug = name.replace(" ", "-").replace(",", "")
        return SkillLoader.from_root(fix.edited_catalog(root, fix.CANDIDATES[name],
                                                        BUILD_DIR / "description_fix" / slug / "workplace"))

    def run(name: str, queries: Sequence) -> list:
        loader = catalog(name)
        return fix.decided(run_selector(lambda q: pick_by_model(client, loader, q), queries, name=name,
                                        concurrency=concurrency))

    meta = {"recorded": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "backend": backend.name,
            "generation_model": backend.generation_label(), "decoding": "pick_by_model, one greedy decision a query",
            "target": fix.TARGET, "candidates": fix.CANDIDATES}
    if args.split == "dev":
        path = out / "dev.json"
        queries = fix.dev_queries(workplace.names)[:args.limit]
        runs = fix.read_record(path)[1] if path.exists() else {}
        meta |= {"queries": [f"data/{f}" for f in fix.DEV_FILES],
                 "command": "python -m scripts.lab measure description-fix dev"}
        if "original" not in runs and (not args.only or "original" in args.only):
            runs["original"] = run("original", queries)
            fix.write_record(path, meta, runs)
        args.only = [n for n in args.only or [] if n != "original"] if args.only else None
        if args.only == []:
            print(f"wrote {_shown(path)}")
            return 0
        for name in args.only or fix.CANDIDATES:
            if name not in runs:
                runs[name] = run(name, fix.candidate_queries(queries))
                fix.write_record(path, meta, runs)
        print(f"wrote {_shown(path)}")
        return 0
    path = out / "held_out.json"
    if path.exists():
        raise Refused(f"{_shown(path)} exists: the held-out set is run once. Choose on dev; write a fresh set.")
    _, dev = fix.read_record((args.dev or fix.RECORD_DIR) / "dev.json")
    chosen = fix.choose([fix.tally(n, fix.CANDIDATES[n], dev["original"], dev[n]) for n in fix.CANDIDATES])
    queries = _load(DATA_DIR / fix.HELD_OUT_FILE, workplace.names)[:args.limit]
    runs = {"original": run("original", queries), chosen.name: run(chosen.name, queries)}
    meta |= {"queries": [f"data/{fix.HELD_OUT_FILE}"], "chosen": chosen.name,
             "command": "python -m scripts.lab measure description-fix held-out"}
    fix.write_record(path, meta, runs)
    print(f"wrote {_shown(path)}")
    return 0


# ---------------------------------------------------------------- the command line


def _refusing(func):
    """The command, with a refusal printed as one line on stderr and exit code 2."""
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except Refused as refusal:
            import sys

            print(f"measure {args.measure_command}: refused: {refusal}", file=sys.stderr)
            return 2
    return run


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `measure` subcommand (bakery, abstention, native-format, description-fix) to the command line."""
    measure = sub.add_parser("measure", help="make the records the lessons read (data/measured/) and those the lab "
                                             "notes cite (docs/lab/records/)")
    actions = measure.add_subparsers(dest="measure_command", required=True)

    command = actions.add_parser("bakery", help="the bakery agent on a split of data/bakery_requests.yaml, "
                                               "every run's checklist recorded (lesson 04)")
    command.add_argument("split", choices=["dev", "test"])
    command.add_argument("--modes", default="on-demand", help="comma-separated: all, on-demand, filesystem "
                                                             "(default on-demand)")
    command.add_argument("--samples", type=int, default=0, help="sampled runs per request (0: one greedy run)")
    command.add_argument("--temperature", type=float, default=0.7, help="of the sampled runs (default 0.7)")
    command.add_argument("--label", default="", help="the record is <split>_<label>.json (none: <split>.json)")
    command.add_argument("--tool-policy", choices=TOOL_POLICIES, default="one-step-at-a-time",
                         help="the per-turn tool_config the harness sends (default one-step-at-a-time, as lessons 03 "
                              "and 04 run it; none: records made before the policy moved into the harness)")
    _where_and_how_many(command, f"where the record goes (default {_shown(BAKERY_DIR)} for test, "
                                 f"{_shown(BAKERY_DEV_DIR)} for dev)",
                        "only the first N requests of the split", backend=True)
    command.set_defaults(func=_refusing(bakery))

    command = actions.add_parser("abstention", help="the abstaining selectors on the development queries "
                                                   "(lesson 06)")
    command.add_argument("techniques", nargs="*", metavar="TECHNIQUE",
                         help="model and the techniques of course_utils.selection.abstain (default: all of them)")
    command.add_argument("--queries", type=Path, nargs="+", metavar="FILE",
                         help="the query files (default the development files data/dev/"
                              + " and data/dev/".join(DEV_QUERY_FILES) + "); lesson 06 reads the recommended "
                              "technique's record on data/trigger_eval.yaml, written with --out "
                              + _shown(ABSTENTION_LESSON_DIR))
    _where_and_how_many(command, f"where the reports go (default {_shown(ABSTENTION_DIR)})",
                        "only the first N queries of each file", backend=True)
    add_concurrency(command)
    command.set_defaults(func=_refusing(abstention))

    command = actions.add_parser("listing-decisions", help="lesson 10's 30 decisions on Claude Code's listing of "
                                                          "114 skills")
    _where_and_how_many(command, f"where {LISTING_FILE} goes (default {_shown(LISTING_DIR)})",
                        "only the first N queries", backend=True)
    command.set_defaults(func=_refusing(listing_decisions))

    command = actions.add_parser("native-format", help="is the local model's own <tool_call> tag among its top "
                                                      "first tokens? (development prompts)")
    _where_and_how_many(command, f"where {NATIVE_FORMAT_FILE} goes (default {_shown(NATIVE_FORMAT_DIR)})",
                        "only the first N queries of each file and N bakery requests", backend=False)
    command.set_defaults(func=_refusing(native_format))

    command = actions.add_parser("description-fix", help="lesson 11's it-helpdesk-triage description edits: the "
                                                        "candidates on dev, or the chosen one on the held-out set")
    command.add_argument("split", choices=["dev", "held-out"])
    command.add_argument("--only", nargs="+", metavar="NAME", help="dev: run only these descriptions (original, "
                                                                "or candidates of evaluation.description_fix)")
    command.add_argument("--dev", type=Path, help="the folder of the dev record held-out chooses from "
                                                  "(default data/measured/description_fix)")
    _where_and_how_many(command, "where the record goes (default data/measured/description_fix)",
                        "only the first N queries of each file", backend=True)
    add_concurrency(command)
    command.set_defaults(func=_refusing(description_fix))


def _where_and_how_many(command: argparse.ArgumentParser, out: str, limit: str, backend: bool) -> None:
    """The options every measurement shares: the backend (where it has a choice), the output, a limit."""
    if backend:
        add_backend(command)
    command.add_argument("--out", type=Path, help=out)
    command.add_argument("--limit", type=int, help=limit)


def main(argv: Sequence[str], client: genai.Client | None = None) -> int:
    """`python -m scripts.lab measure …` with `argv` after `measure`; `client` replaces the backend
    `make_client` would pick (a test hands in the scripted stand-in)."""
    parser = argparse.ArgumentParser(prog="python -m scripts.lab")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["measure", *argv])
    args.client = client
    return args.func(args)

"""Would the local model open a call with its own trained `<tool_call>` tag? Measured on the development prompts.

    .venv/bin/python scripts/probe_native_format.py

Qwen2.5's chat template shows tools in a `# Tools … <tools>…</tools>` block and asks for each call inside
`<tool_call></tool_call>` tags (`<tool_call>` is one special token, id 151657). The local backend instead asks for
a bare JSON object (`{"name": …, "arguments": …}`, or `{"text": …}`) and constrains it with a grammar. Before
switching formats (issue #15 names the model's own format as an idea), this asks: with the tools shown Qwen's way,
is `<tool_call>` among the model's 20 most likely first answer tokens? The candidates are the model's own, read
before the grammar (llama.cpp's `n_probs`). Prompts: lesson 06's first turn on the 90 development queries
(data/dev/, workplace catalog, `activate_skill`) and lesson 04's on-demand first turn on the 5 development bakery
requests. Writes data/measured/native_format_dev.json (every prompt's top candidates) and prints the summary.
The test sets are not used.
"""
from __future__ import annotations

import datetime
import json
import math

from google.genai import types
from tqdm.auto import tqdm

import course_utils.backend.local.app as app
from course_utils.agent import build_harness
from course_utils.backend.client import GENERATION_MODEL, backend_of, make_client
from course_utils.bakery import ASSISTANT_PREAMBLE, bakery_tools
from course_utils.bakery_eval import MEASURED_DIR, load_requests
from course_utils.paths import DATA_DIR, SKILLS_DIR
from course_utils.queries import load_queries
from course_utils.selection import ACTIVATE
from course_utils.skills import SkillLoader

OUT = MEASURED_DIR.parent / "native_format_dev.json"
TOOL_CALL = "<tool_call>"
CANDIDATES = 20


def qwen_tools_prompt(declarations: list[app.Declaration], allow_text: bool) -> str:
    """The tools block as Qwen2.5-Instruct's chat template writes it after the system message."""
    tools = "\n".join(json.dumps({"type": "function", "function": {"name": d.name, "description": d.description,
                                                                   "parameters": d.parameters}}, ensure_ascii=False)
                      for d in declarations)
    return ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{tools}\n</tools>\n\nFor each function call, return a json object with function name and arguments "
            'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
            '"arguments": <args-json-object>}\n</tool_call>')


def first_token(client, system: str, tools: list[types.Tool], prompt: str) -> dict:
    """The model's top first answer tokens for one prompt, with `<tool_call>`'s rank (None: not in the top 20)."""
    config = types.GenerateContentConfig(system_instruction=system, tools=tools, max_output_tokens=1,
                                         response_logprobs=True, logprobs=CANDIDATES,
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    response = client.models.generate_content(model=GENERATION_MODEL, contents=prompt, config=config)
    top = [(c.token, c.log_probability) for c in response.candidates[0].logprobs_result.top_candidates[0].candidates]
    tokens = [token for token, _ in top]
    return {"prompt": prompt, "top": top, "tool_call_rank": tokens.index(TOOL_CALL) + 1 if TOOL_CALL in tokens else None,
            "p_json_open": sum(math.exp(lp) for token, lp in top if token.lstrip().startswith("{"))}


def main() -> None:
    app.tools_prompt = qwen_tools_prompt  # the prompt the model sees; the grammar does not change its candidates
    client = make_client("local")
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = [q.query for name in ("trigger_dev.yaml", "trigger_dev_fr.yaml")
               for q in load_queries(DATA_DIR / "dev" / name, workplace.names)]
    selection = [first_token(client, workplace.system_instruction(function=ACTIVATE), [workplace.tool(ACTIVATE)], q)
                 for q in tqdm(queries, desc="dev queries")]
    harness = build_harness("on-demand", SkillLoader.from_root(SKILLS_DIR / "bakery"), ASSISTANT_PREAMBLE,
                            *bakery_tools())
    tools = [types.Tool(function_declarations=harness.declarations)]
    bakery = [first_token(client, harness.system_instruction, tools, r.text)
              for r in tqdm(load_requests(split="dev"), desc="dev requests")]
    rows = selection + bakery
    summary = {"prompts": len(rows), "tool_call_in_top_20": sum(r["tool_call_rank"] is not None for r in rows),
               "top_1": sorted({r["top"][0][0] for r in rows}),
               "median_p_json_open": sorted(r["p_json_open"] for r in rows)[len(rows) // 2]}
    record = {"recorded": datetime.date.today().isoformat(), "backend": backend_of(client).name,
              "model": backend_of(client).generation_label(), "candidates": CANDIDATES, "summary": summary,
              "selection": selection, "bakery": bakery}
    OUT.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()

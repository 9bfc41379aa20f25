"""Count a skill decision's tokens with the local backend's own count, and write them for scripts/scale_figures.py.

    PYTHONPATH=. python scripts/decision_tokens.py [--out docs/lab/records/decision_tokens.json]

Every count is the one the local backend's ``countTokens`` serves (``backend.local.app.count_tokens``: the request
rendered by the model's chat template, then tokenized; nothing is computed), on the Gemini request the course sends:
- the model decision (``pick_by_model``: the catalog in the system instruction, the activate tool) for every
  development query (data/dev/trigger_dev.yaml) on the workplace catalog; its system message alone (the prefix every
  query shares); the same prefix with one skill, to give the tokens a skill adds;
- the same on 10 and 10,000 synthetic skills (lesson 10's generator) and one query;
- the hybrid decision (``pick_hybrid``: a static system instruction and tool, the shortlist in the user turn) at
  k = 3 and k = 10, the shortlist taken by the local encoder as ``pick_hybrid`` takes it;
- the answer: greedy decisions on every third development query, their output tokens as the backend reports them.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from google.genai import types  # noqa: E402

from course_utils.backend.client import GENERATION_MODEL, backend_of, make_client  # noqa: E402
from course_utils.backend.local.app import build_prompt, get_app  # noqa: E402
from course_utils.backend.local.llm import get_llm  # noqa: E402
from course_utils.selection.embeddings.index import top_k  # noqa: E402
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR  # noqa: E402
from course_utils.skills.queries import load_queries  # noqa: E402
from course_utils.selection.pick import (  # noqa: E402
    ACTIVATE,
    SimilaritySelector,
    pick_by_model,
    shortlist_instruction,
    shortlist_tool,
    shortlist_turn,
)
from course_utils.skills.skill import SkillLoader  # noqa: E402
from course_utils.scale.synthetic import synthetic_skills  # noqa: E402

QUERIES = DATA_DIR / "dev" / "trigger_dev.yaml"


def as_json(value: types.Tool | types.Content) -> dict:
    """A google-genai value as the JSON the SDK sends."""
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def request(system: str, tool: types.Tool, contents: list[types.Content]) -> dict:
    """A generateContent request as the course's selectors send it (automatic function calling off)."""
    return {"contents": [as_json(c) for c in contents], "systemInstruction": {"parts": [{"text": system}]},
            "tools": [as_json(tool)]}


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def count(payload: dict) -> int:
    """The local backend's countTokens for this request."""
    return get_app().serve(GENERATION_MODEL, "countTokens", {"generateContentRequest": payload})["totalTokens"]


def decision(loader: SkillLoader, query: str) -> dict:
    return request(loader.system_instruction(function=ACTIVATE), loader.tool(ACTIVATE), [user(query)])


def prefix(loader: SkillLoader) -> int:
    """The tokens of the decision's system message alone (catalog, instructions, functions): the part every query
    shares."""
    messages = build_prompt(decision(loader, "x")).messages
    return get_llm().count_tokens(messages[:1])


def text_tokens(text: str) -> int:
    """The tokens of `text` alone: a user turn holding it, less an empty user turn."""
    llm = get_llm()
    return llm.count_tokens([{"role": "user", "content": text}]) - llm.count_tokens([{"role": "user", "content": ""}])


def summary(values: list[int]) -> dict:
    return {"n": len(values), "mean": statistics.fmean(values), "median": statistics.median(values),
            "min": min(values), "max": max(values)}


def main(out: Path) -> None:
    client = make_client(backend="local")
    workplace = SkillLoader.from_root(SKILLS_DIR / "workplace")
    queries = load_queries(QUERIES, workplace.names)
    texts = [q.query for q in queries]
    result: dict = {"model": backend_of(client).generation_label(), "queries": str(QUERIES.relative_to(REPO)),
                    "count": "backend.local.app.count_tokens (countTokens): chat template rendered, then tokenized"}

    full = [count(decision(workplace, t)) for t in texts]
    whole, one = prefix(workplace), prefix(workplace.subset(workplace.names[:1]))
    result["workplace"] = {"skills": len(workplace.names), "decision": summary(full), "prefix": whole,
                           "prefix_one_skill": one, "catalog_text": text_tokens(workplace.catalog()),
                           "catalog_per_skill": (whole - one) / (len(workplace.names) - 1)}

    synthetic = synthetic_skills(10_000)
    small, large = SkillLoader(synthetic[:10]), SkillLoader(synthetic)
    prefix_small, prefix_large = prefix(small), prefix(large)
    result["synthetic"] = {"small": 10, "large": len(synthetic), "prefix_small": prefix_small,
                           "prefix_large": prefix_large, "catalog_text_large": text_tokens(large.catalog()),
                           "decision_large": count(decision(large, texts[0])),
                           "per_skill": (prefix_large - prefix_small) / (len(synthetic) - 10)}

    selector = SimilaritySelector(client, workplace)
    scores = selector.scores(texts)
    hybrid = {}
    for k in (3, 10):
        counts = []
        for text, row in zip(texts, scores):
            shortlist = workplace.subset(selector.names[i] for i in top_k(row, k))  # ties keep catalog order
            counts.append(count(request(shortlist_instruction(), shortlist_tool(), [shortlist_turn(shortlist, text)])))
        hybrid[str(k)] = summary(counts)
    static = build_prompt(request(shortlist_instruction(), shortlist_tool(), [user("x")])).messages[:1]
    result["hybrid"] = {"decision": hybrid, "prefix": get_llm().count_tokens(static)}

    answers = []
    for text in texts[::3]:
        usage = pick_by_model(client, workplace, text).raw.usage_metadata
        answers.append(usage.candidates_token_count)
    result["answer"] = summary(answers) | {"every": 3}

    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "lab" / "records" / "decision_tokens.json")
    main(parser.parse_args().out)

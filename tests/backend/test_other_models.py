"""The course on its other published models: Qwen2.5-Coder-0.5B (the same family) and Gemma 3 270M (another one,
a base model whose file carries no chat template: the course's Gemma turn template renders it).

Each runs a real decision through a real `genai.Client`, names itself, and decides the same way whatever ran before.
The 270M base model decides badly: these tests check the path, not the quality. Lesson 06 runs on it too.
"""
from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from course_utils.backend.client import backend_of, make_client
from course_utils.backend.local.llm import get_llm
from course_utils.backend.provision.models import MODELS, fetch_model
from course_utils.skills.paths import BUILD_DIR, NOTEBOOKS_DIR, SKILLS_DIR
from course_utils.selection.pick import pick_by_model
from course_utils.skills.skill import SkillLoader

OTHER_MODELS = [name for name in MODELS if name != "qwen2.5-coder-1.5b"]
QUERIES = ["How many vacation days do I have left this year?", "Will it rain in Lyon tomorrow?"]


@pytest.fixture(scope="module")
def workplace() -> SkillLoader:
    return SkillLoader.from_root(SKILLS_DIR / "workplace")


@pytest.mark.model
@pytest.mark.parametrize("name", OTHER_MODELS)
def test_another_published_model_decides_through_its_own_template_and_names_itself(name, workplace):
    fetch_model(name, progress=False)  # quick once fetched; CI fetches it here
    client = make_client("local", model_file=name, verbose=False)
    assert backend_of(client).generation_label() == f"{MODELS[name].display} (local)"
    first = [pick_by_model(client, workplace, query) for query in QUERIES]
    again = [pick_by_model(client, workplace, query) for query in reversed(QUERIES)][::-1]
    assert [(d.skill, d.error, d.prompt_tokens) for d in first] == [(d.skill, d.error, d.prompt_tokens) for d in again]
    assert all(d.prompt_tokens > 1000 for d in first)  # the catalog was in the prompt
    assert first[0].raw.model_version == f"{MODELS[name].display} (local)"
    llm = get_llm(name)
    assert llm.context == 8192 and llm.model.template_origin == ("the course's gemma.jinja" if "gemma" in name
                                                                  else "the file")


@pytest.mark.notebook
@pytest.mark.timeout(900)
def test_lesson_06_runs_top_to_bottom_on_the_smallest_model(monkeypatch):
    fetch_model("gemma-3-270m", progress=False)
    path, out = NOTEBOOKS_DIR / "06_selection_by_model.ipynb", BUILD_DIR / "test-notebooks-gemma"
    script = "import sys; from pathlib import Path; from course_utils.cli.notebooks import execute_notebook; " \
             "execute_notebook(Path(sys.argv[1]), Path(sys.argv[2]))"
    monkeypatch.setenv("COURSE_LOCAL_MODEL", "gemma-3-270m")
    run = subprocess.run([sys.executable, "-c", script, str(path), str(out)], capture_output=True, text=True)
    assert run.returncode == 0, f"lesson 06 on Gemma 3 270M failed:\n{run.stderr[-3000:]}"
    outputs = "".join(o.get("text", "") for c in nbformat.read(out / path.name, as_version=4).cells
                      if c.cell_type == "code" for o in c.outputs)
    assert "Gemma-3-270M (local)" in outputs
    # The course's own records name the model that recorded them; nothing else may name it.
    assert "Qwen2.5-Coder" not in outputs.replace("Recorded by Qwen2.5-Coder", "Recorded by the records' model")

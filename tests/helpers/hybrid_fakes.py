"""Fakes for the hybrid tests: a client whose model always picks the first skill it is offered, and
selectors that rank a catalog in a fixed order or by given scores. No model, no embeddings."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from google.genai import types

from course_utils.backend.client import local_backend
from course_utils.selection.pick import ACTIVATE
from course_utils.skills.skill import SkillLoader


def listed(contents) -> list[str]:
    """The skill names a request's user turn lists in <available-skills> (the hybrid's shortlist), in order."""
    text = "\n".join(part.text for content in contents for part in content.parts if part.text)
    listing = text.split("<available-skills>\n", 1)[1].split("\n</available-skills>", 1)[0]
    return [line[2:].split(":", 1)[0] for line in listing.splitlines()]


def offered_names(contents, config) -> list[str]:
    """The skills a request offers: its tool's enum (the whole-catalog request) or, with none, the user turn's list."""
    enum = config.tools[0].function_declarations[0].parameters.properties["name"].enum
    return enum if enum else listed(contents)


class FakeModels:
    """Answers every request with a call to activate_skill naming the first skill it was offered."""

    def __init__(self):
        self.requests = []
        self.contents = []

    def generate_content(self, *, model, contents, config):
        self.requests.append(config)
        self.contents.append(contents)
        offered = offered_names(contents, config)
        return types.GenerateContentResponse.model_validate({
            "candidates": [{"content": {"role": "model", "parts": [
                {"function_call": {"name": ACTIVATE, "args": {"name": offered[0]}}}]}}],
            "usage_metadata": {"prompt_token_count": 100 + 50 * len(offered)},
        })


def fake_client():
    """Enough of a genai.Client for pick_by_model: `.models`, and the local backend as make_client attaches it."""
    return SimpleNamespace(models=FakeModels(), course_backend=local_backend("qwen2.5-coder-1.5b"))


class FakeSelector:
    """Ranks the catalog in a fixed order, whatever the query (the reverse of the loader's order)."""

    def __init__(self, loader: SkillLoader):
        self.names = loader.names
        self.order = list(reversed(loader.names))

    def scores(self, queries):
        return np.array([[1.0 - self.order.index(n) / 10 for n in self.names] for _ in queries])

    def top(self, row, k=None):
        ranked = sorted(zip(self.names, row), key=lambda pair: -pair[1])
        return [(n, float(s)) for n, s in ranked[: k or 3]]


class ScoredSelector(FakeSelector):
    """Gives every query the same cosines, one per skill by name (the skills it does not name score 0)."""

    def __init__(self, loader: SkillLoader, scores: dict[str, float]):
        super().__init__(loader)
        self.row = [scores.get(n, 0.0) for n in self.names]

    def scores(self, queries):
        return np.array([self.row for _ in queries])


def scripted_client(local_client):
    """The local encoder for embeddings; a scripted model that always activates the first skill offered."""
    fake = FakeModels()
    models = SimpleNamespace(generate_content=fake.generate_content,
                             embed_content=local_client.models.embed_content)
    return SimpleNamespace(models=models, course_backend=local_client.course_backend)

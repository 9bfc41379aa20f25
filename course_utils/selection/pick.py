"""Who picks the skill: the model (the `on-demand` catalog + an activate tool), similarity (cosine + a
threshold), or the user.

Built in `notebooks/06_selection_by_model.ipynb` (`pick_by_model`, explicit `/name` activation) and
`notebooks/07_embeddings.ipynb` (`SimilaritySelector`); `pick_hybrid`, the reference solution of
`notebooks/09_hybrid_exercise.ipynb`, chains the two. A *selector* is any callable
`(query: str) -> Decision`; `course_utils.evaluation.outcomes` runs selectors without knowing what is inside.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google import genai
from google.genai import types

from course_utils.backend.client import EMBEDDING_MODEL, GENERATION_MODEL, backend_of, embedding_backend
from course_utils.selection.embeddings import EmbeddingCache, cosine_matrix, embed_texts
from course_utils.selection.faults import EmbeddingError
from course_utils.skills.skill import DECLINE, LOAD_RULE, Skill, SkillLoader, load_declaration
from course_utils.skills.tokens import estimate_tokens

ACTIVATE = "activate_skill"


def default_threshold(client: genai.Client) -> float:
    """The default cosine threshold of the encoder that embeds for `client` (its backend's facts, each encoder with
    its own score scale: `backend.facts`); ValueError when none was fitted for it."""
    backend = backend_of(client)
    if backend.facts.threshold is None:
        raise ValueError(f"No threshold is fitted for {backend.embedding_label()} (each embedding model has its own "
                         "score scale): pass threshold=…, e.g. thresholds.best_threshold on a development set.")
    return backend.facts.threshold


@dataclass(frozen=True)
class Decision:
    """What a selector decided for one query, and what the decision cost."""

    skill: str | None
    prompt_tokens: int = 0
    seconds: float = 0.0
    score: float | None = None
    top_k: tuple[tuple[str, float], ...] = ()
    error: str | None = None
    decline_probability: float | None = None
    pick_probability: float | None = None
    raw: Any = field(default=None, compare=False, repr=False)


Selector = Callable[[str], Decision]


# ----------------------------------------------------------------- by the model (lesson 06)


def pick_by_model(client: genai.Client, loader: SkillLoader, query: str, model: str = GENERATION_MODEL,
                  max_output_tokens: int | None = None, temperature: float | None = None,
                  preamble: str = "You are a helpful assistant.", logprobs: int | None = None) -> Decision:
    """One `generate_content` with the catalog and the activate tool; read only the first turn's call.

    Automatic function calling is off, so nothing is executed: the decision is the `activate_skill`
    call the model makes (or not) on its first turn. The answer is capped at the backend's decision cap
    (`backend.facts`: 32 tokens on the local backend) unless `max_output_tokens` says otherwise; Gemini is left
    uncapped (its thinking tokens count against the cap). `temperature` None keeps the backend's default:
    greedy on the local backend (the same query always gets the same decision), Gemini's own default
    (it samples); give one to sample, and run the query several times to measure how stable it is.
    `preamble` opens the system instruction (`course_utils.selection.abstain` puts worked examples there).
    `logprobs` asks for each answer token's log-probability and that many top candidates
    (`course_utils.selection.confidence` reads the model's probability of declining from them).
    """
    return first_turn(client, loader, query, loader.system_instruction(preamble, function=ACTIVATE),
                      loader.tool(ACTIVATE), model, Decoding(max_output_tokens, temperature, logprobs))


@dataclasses.dataclass(frozen=True)
class Decoding:
    """How a decision is decoded: its output cap (None: the backend's decision cap), its temperature (None: the
    backend's default) and how many top candidates' log-probabilities to return (None: none)."""

    max_output_tokens: int | None = None
    temperature: float | None = None
    logprobs: int | None = None


def first_turn(client: genai.Client, loader: SkillLoader, contents: Any, system_instruction: str, tool: types.Tool,
               model: str = GENERATION_MODEL, decoding: Decoding = Decoding()) -> Decision:
    """One `generate_content` with automatic function calling off; the Decision is its first turn's activation.

    The request of `pick_by_model` and `pick_hybrid`, which differ only in where the catalog goes. The answer is
    capped at the backend's decision cap (`Facts.decision_tokens`) unless `decoding` says otherwise.
    `read_activation` judges the answer against `loader`, the skills the model was offered.
    """
    max_output_tokens = decoding.max_output_tokens
    if max_output_tokens is None:
        max_output_tokens = backend_of(client).facts.decision_tokens
    config = types.GenerateContentConfig(
        system_instruction=system_instruction,
        tools=[tool],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        max_output_tokens=max_output_tokens,
        temperature=decoding.temperature,
        response_logprobs=True if decoding.logprobs is not None else None,
        logprobs=decoding.logprobs,
    )
    start = time.perf_counter()
    response = client.models.generate_content(model=model, contents=contents, config=config)
    seconds = time.perf_counter() - start
    skill, error = read_activation(response, loader)
    usage = response.usage_metadata
    return Decision(skill, (usage and usage.prompt_token_count) or 0, seconds, error=error, raw=response)


def read_activation(response: types.GenerateContentResponse, loader: SkillLoader) -> tuple[str | None, str | None]:
    """(skill, error) of a first turn: the `activate_skill` call's skill, None for a text answer.

    An answer that is no decision is an error, never a silent "none": no candidate, an empty
    candidate, a call to a function that was not declared, or arguments outside the schema
    (`name` must be one of the catalog's skills).
    """
    if not response.candidates:
        feedback = response.prompt_feedback
        blocked = f"; prompt blocked: {feedback.block_reason.name}" if feedback and feedback.block_reason else ""
        return None, f"the model gave no answer (no candidates{blocked})"
    candidate = response.candidates[0]
    if candidate.content is None or not candidate.content.parts:
        finish = candidate.finish_reason.name if candidate.finish_reason else "none given"
        return None, f"the model's answer is empty (finish reason: {finish})"
    calls = response.function_calls or []
    activations = [call for call in calls if call.name == ACTIVATE]
    if not activations:
        undeclared = sorted({str(call.name) for call in calls})
        if undeclared:
            return None, f"the model called {', '.join(undeclared)}, which was not declared (declared: {ACTIVATE})"
        return None, None
    arguments = activations[0].args or {}
    name = arguments.get("name")
    if not isinstance(name, str) or name not in loader.skills or set(arguments) != {"name"}:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)[:200]
        return None, (f"{ACTIVATE} was called with arguments that do not match its schema ({shown}): it takes "
                      f"only `name`, one of the {len(loader.skills)} skills in the catalog")
    return name, None


# ----------------------------------------------------------------- by the user (lesson 06)

_MENTION = re.compile(r"(?<!\S)([/@])([a-z0-9]+(?:-[a-z0-9]+)*)(?=$|[\s.,;:!?)\]])")


def explicit_skill(loader: SkillLoader, message: str) -> Decision | None:
    """The skill a message names as `/skill-name` or `@skill-name`, without asking anyone.

    None when the message names no skill. The first known name wins; if every name is unknown,
    the decision carries an error that suggests close names.
    """
    mentions = _MENTION.findall(message)
    if not mentions:
        return None
    for _, name in mentions:
        if name in loader.skills:
            return Decision(name)
    sign, name = mentions[0]
    close = difflib.get_close_matches(name, loader.names, n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(sign + c for c in close)}?" if close else ""
    return Decision(None, error=f'Unknown skill "{sign}{name}".{hint} Available: {", ".join(loader.names)}.')


def with_explicit(loader: SkillLoader, selector: Selector) -> Selector:
    """A selector that honours `/name` and `@name` first and asks `selector` only otherwise."""

    def select(query: str) -> Decision:
        return explicit_skill(loader, query) or selector(query)

    return select


# ----------------------------------------------------------------- by similarity (lesson 07)


def document_text(skill: Skill) -> str:
    """A description as gemini-embedding-2 expects a document: `title: … | text: …`."""
    return f"title: {skill.name} | text: {skill.description}"


def query_text(query: str) -> str:
    """A query as gemini-embedding-2 expects a search query."""
    return f"task: search result | query: {query}"


class SimilaritySelector:
    """Pick the skill whose description is nearest the query (cosine), if it clears a threshold.

    `threshold=None` takes the backend's default (`default_threshold`).
    Descriptions are embedded once, when the selector is built. With `cache=True` every vector
    (descriptions and queries) goes through the on-disk `EmbeddingCache`, so a rerun embeds nothing.
    """

    def __init__(self, client: genai.Client, loader: SkillLoader, model: str = EMBEDDING_MODEL,
                 threshold: float | None = None, k: int = 3, cache: bool = True):
        backend = embedding_backend(client)
        self.client, self.model, self.k = client, model, k
        self.threshold = default_threshold(client) if threshold is None else threshold
        self.names = loader.names
        self.cache = EmbeddingCache(backend, model) if cache else None
        self.matrix = self.embed([document_text(s) for s in loader.skills.values()])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, from the cache when it has them."""
        compute = lambda missing: embed_texts(self.client, missing, self.model)  # noqa: E731
        return self.cache.embed(texts, compute) if self.cache else compute(list(texts))

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """The query × skill cosine matrix, skills in `self.names` order.

        EmbeddingError when the query vectors are not the size of the skill vectors (another model).
        """
        vectors = self.embed([query_text(q) for q in queries])
        if self.matrix.size and vectors.shape[1] != self.matrix.shape[1]:
            raise EmbeddingError(f"{self.model} gave query vectors of size {vectors.shape[1]} but the skill vectors "
                                 f"have size {self.matrix.shape[1]}: the embedding model changed; "
                                 "build the selector again")
        return cosine_matrix(vectors, self.matrix)

    def top(self, row: np.ndarray, k: int | None = None) -> list[tuple[str, float]]:
        """The `k` nearest skills of one score row, nearest first."""
        order = np.argsort(-row, kind="stable")[: self.k if k is None else k]
        return [(self.names[i], float(row[i])) for i in order]

    def pick(self, row: np.ndarray, threshold: float | None = None) -> str | None:
        """The nearest skill if its score reaches the threshold, else None."""
        name, score = self.top(row, 1)[0]
        return name if score >= (self.threshold if threshold is None else threshold) else None

    def __call__(self, query: str) -> Decision:
        """Decide for one query. `prompt_tokens` estimates the embedded query (4 characters a token)."""
        start = time.perf_counter()
        row = self.scores([query])[0]
        top = self.top(row)
        return Decision(self.pick(row), estimate_tokens(query_text(query)), time.perf_counter() - start,
                        score=top[0][1], top_k=tuple(top))


# ----------------------------------------------------------------- similarity shortlists, the model decides (lesson 09)


SHORTLIST_INSTRUCTION = """{preamble}

The user's message opens with <available-skills>, the skills that may fit their request.
""" + LOAD_RULE
"""The hybrid's system instruction: the catalog's rule (`skills.skill.LOAD_RULE`) without the catalog, which
the user turn carries (`shortlist_turn`). It names no skill, so it is the same for every query."""


def shortlist_instruction(preamble: str = "You are a helpful assistant.", function: str = ACTIVATE) -> str:
    """The hybrid's system instruction, identical for every query and every shortlist."""
    return SHORTLIST_INSTRUCTION.format(preamble=preamble, function=function,
                                        decline=DECLINE[False].format(function=function))


def shortlist_tool(function: str = ACTIVATE) -> types.Tool:
    """The hybrid's activate tool: `name` is a string, with no enum of names, so the declaration is the same for
    every shortlist. Which names are right is said by the shortlist in the user turn, and checked on the answer
    (`read_activation` against the shortlist: any other name is an error, never a decision)."""
    return types.Tool(function_declarations=[
        load_declaration(function, "The skill's name, one of those in <available-skills>.")])


def shortlist_turn(shortlist: SkillLoader, query: str) -> types.Content:
    """The user turn of a hybrid decision: the shortlist's catalog lines in <available-skills>, then the query,
    each its own part."""
    listing = f"<available-skills>\n{shortlist.catalog()}\n</available-skills>"
    return types.Content(role="user", parts=[types.Part(text=listing), types.Part(text=query)])


def pick_hybrid(client: genai.Client, loader: SkillLoader, selector: SimilaritySelector, query: str, k: int = 3,
                model: str = GENERATION_MODEL, temperature: float | None = None,
                logprobs: int | None = None) -> Decision:
    """Shortlist the `k` skills nearest the query by similarity, then let the model decide among them (the reference
    solution of `notebooks/09_hybrid_exercise.ipynb`). The model reads a catalog of `k` lines and may call nothing.

    `k` at or above the catalog's size keeps it whole; below 1 is a ValueError before anything is asked; ties keep
    catalog order. The instruction and the tool name no skill, so they are one prompt prefix for every decision;
    the shortlist's lines open the user turn, before the query (`docs/lab/hybrid-layout.md` says why).
    `prompt_tokens` counts the generation model's tokens only; `seconds` both steps; `top_k` the shortlist with
    its cosines, nearest first, and `score` the nearest one's. `logprobs` asks for the answer's log-probabilities
    (the gated hybrid reads the model's probability of declining from them).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}: a shortlist of no skill leaves the model nothing to decide")
    start = time.perf_counter()
    row = selector.scores([query])[0]
    nearest = np.argsort(-row, kind="stable")[:k]
    top = [(selector.names[i], float(row[i])) for i in nearest]
    shortlist = loader.subset(name for name, _ in top)
    decision = first_turn(client, shortlist, [shortlist_turn(shortlist, query)], shortlist_instruction(),
                          shortlist_tool(), model, Decoding(temperature=temperature, logprobs=logprobs))
    return dataclasses.replace(decision, seconds=time.perf_counter() - start, score=top[0][1], top_k=tuple(top))


def hybrid_selector(client: genai.Client, loader: SkillLoader, selector: SimilaritySelector | None = None,
                    k: int = 3, model: str = GENERATION_MODEL, temperature: float | None = None) -> Selector:
    """`pick_hybrid` as a selector `(query) -> Decision`, for `run_selector` and `eval-trigger`.

    Without `selector`, a `SimilaritySelector` with the backend's defaults is built (the
    descriptions are embedded once, here). Its threshold plays no part: the model decides.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    selector = SimilaritySelector(client, loader) if selector is None else selector

    def select(query: str) -> Decision:
        return pick_hybrid(client, loader, selector, query, k=k, model=model, temperature=temperature)

    return select

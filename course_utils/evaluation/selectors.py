"""The selectors a trigger evaluation can run, each registered once.

An entry names a selector, says what it needs (the model, an encoder, development queries) and builds it from one
evaluation's `Ingredients`. The command line's choices and help, `eval-trigger`, `audit --queries` and `who-picks`
read this registry, so adding a selector is one `register(Entry(...))`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from course_utils.evaluation import gating, scoring
from course_utils.selection import abstain, pick, scorer
from course_utils.skills.queries import LabelledQuery
from course_utils.skills.skill import SkillLoader

Selector = Callable[[str], Any]


@dataclass
class Ingredients:
    """What one evaluation builds its selectors from. The similarity selector (it embeds every description) and the
    hybrid asked with log-probabilities are built once, by the first selector that needs them, and shared."""

    client: Any
    loader: SkillLoader
    names: tuple[str, ...]
    k: int
    threshold: float | None
    temperature: float | None
    runs: int
    gate: gating.Gate | None = None
    dev: Sequence[LabelledQuery] = ()
    shared: dict[str, Any] = field(default_factory=dict)

    def similarity(self) -> pick.SimilaritySelector:
        """Similarity on the catalog at the evaluation's threshold and k."""
        if "similarity" not in self.shared:
            self.shared["similarity"] = pick.SimilaritySelector(self.client, self.loader, threshold=self.threshold,
                                                                k=self.k)
        return self.shared["similarity"]

    def confident_hybrid(self) -> Selector:
        """The hybrid asked with log-probabilities; with one greedy run per query the hybrid and the gated hybrid
        share each model call, as a harness running the gated hybrid makes one."""
        if "confident" not in self.shared:
            confident = gating.confident_hybrid(self.client, self.loader, self.similarity(), k=self.k,
                                                temperature=self.temperature)
            both = "hybrid" in self.names and "gated" in self.names
            self.shared["confident"] = gating.remembering(confident) if self.runs == 1 and both else confident
        return self.shared["confident"]


@dataclass(frozen=True)
class Entry:
    """One selector: its name, its words in an answer, one line of help, its factory and what it needs.

    `model`: it asks the generation model (so it runs `runs` times a query, several decisions at once);
    `encoder`: it embeds; `dev`: what it must fit on development queries (None: nothing it cannot do without);
    `reports`: the settings a report names when it runs (threshold, k, gate); `compared`: lesson 13's comparison
    (`who-picks` by default) runs it."""

    name: str
    label: str
    help: str
    build: Callable[[Ingredients], Selector]
    model: bool = False
    encoder: bool = False
    dev: str | None = None
    reports: tuple[str, ...] = ()
    compared: bool = True


REGISTRY: dict[str, Entry] = {}
"""Every selector by name, in the order evaluations run them."""


def register(entry: Entry) -> Entry:
    """Add `entry` to the registry; a name is registered once."""
    if entry.name in REGISTRY or entry.name == ALIAS:
        raise ValueError(f"selector {entry.name!r} is already registered")
    REGISTRY[entry.name] = entry
    return entry


def _hybrid(made: Ingredients) -> Selector:
    if "gated" in made.names:  # the same decisions the gated hybrid gates
        return made.confident_hybrid()
    return pick.hybrid_selector(made.client, made.loader, made.similarity(), k=made.k, temperature=made.temperature)


def _gated(made: Ingredients) -> Selector:
    if made.gate is None:
        raise ValueError("the gated hybrid needs its gate fitted on development queries: pass --dev FILE")
    return gating.gated_selector(made.confident_hybrid(), made.gate)


def _scored(made: Ingredients) -> Selector:
    selector = scorer.ScoringSelector(made.client, made.loader)  # its own k: the one its decision was fitted at
    if made.dev:
        scoring.fit_on_dev(selector, made.dev)
    return selector


ALIAS = "recommended"
RECOMMENDED = "scored"
"""The selector `recommended` names: the one chosen on the three catalogs' development sets (docs/lab/scorer.md)."""

register(Entry("model", "the model alone", "the plain selector: the model reads the catalog and calls a skill",
               lambda made: lambda q: pick.pick_by_model(made.client, made.loader, q, temperature=made.temperature),
               model=True))
register(Entry("model-abstain", "the model with a none option",
               "the model with a none option, by selection.abstain's recommended technique",
               lambda made: lambda q: abstain.recommended(made.client, made.loader, q, temperature=made.temperature),
               model=True))
register(Entry("similarity", "similarity alone", "the nearest description by cosine, if it clears the threshold",
               lambda made: made.similarity(), encoder=True, reports=("threshold",)))
register(Entry("hybrid", "the hybrid", "the top k by similarity, then the model decides among them; lesson 09",
               _hybrid, model=True, encoder=True, reports=("k",)))
register(Entry("gated", "the gated hybrid", "the hybrid with a gate fitted on --dev; lesson 13",
               _gated, model=True, encoder=True, dev="its gate", reports=("k", "gate")))
register(Entry("scored", "the model as a scorer",
               f"a fused shortlist of {scorer.SHORTLIST_K}, the model's P(yes) for each, the course's decision or one "
               "fitted on --dev", _scored, model=True, encoder=True, compared=False))


DEFAULT = ("model", "similarity")
"""What `eval-trigger` runs when `--selectors` is not given: the model against similarity."""


def choices() -> tuple[str, ...]:
    """What `--selectors` accepts: every registered name, then the alias."""
    return (*REGISTRY, ALIAS)


def compared() -> list[str]:
    """The selectors of lesson 13's comparison, in the registry's order."""
    return [name for name, entry in REGISTRY.items() if entry.compared]


def available(dev: bool) -> list[str]:
    """Every selector that can run, with development queries (`dev`) or without them."""
    return [name for name, entry in REGISTRY.items() if dev or entry.dev is None]


def parse(text: str, dev: bool, default: Sequence[str] | None = None) -> list[str]:
    """The selectors named in comma-separated `text`, in the order given, the alias resolved.

    Empty `text` gives `default`; ValueError (one line) for an unknown name, for no name without a `default`, and
    for a selector that fits on development queries when there are none (`dev` false)."""
    names = list(dict.fromkeys(RECOMMENDED if n == ALIAS else n for n in map(str.strip, text.split(",")) if n))
    unknown = [n for n in names if n not in REGISTRY]
    if unknown or (not names and default is None):
        raise ValueError(f"unknown selector {', '.join(unknown) or '(none given)'}: choose among "
                         f"{', '.join(choices())}")
    fitted = [REGISTRY[n] for n in names if REGISTRY[n].dev is not None]
    if fitted and not dev:
        raise ValueError(f"{fitted[0].label} fits {fitted[0].dev} on development queries: give --dev FILE "
                         "(e.g. data/dev/workplace_dev.yaml)")
    return names or list(default or ())


def help_text() -> str:
    """`--selectors`' help: each selector in one line of words, then what the alias names."""
    each = "; ".join(f"{name} ({entry.help})" for name, entry in REGISTRY.items())
    return f"comma-separated: {each}; {ALIAS} is {RECOMMENDED} (chosen on the course's development sets)"

"""The lesson 09 checker's scripted world, as data: a city library's skills, the cases the check asks (each
query's cosines and what the stand-in model does), a branch library's smaller catalog, and the stretch tasks' cases.

`scripted_world` builds it on `course_utils.lessons.scripted.ScriptedBackend`: a real genai.Client whose "model" calls a
skill or declines as a case says.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from google import genai

from course_utils.lessons.scripted import ScriptedBackend
from course_utils.selection.pick import SimilaritySelector
from course_utils.skills.skill import Skill, SkillLoader

_LIBRARY = {
    "book-renewal": ("Renews books a member has on loan and says the new due date. "
        "Use when someone wants to keep a borrowed book longer."),
    "room-booking": ("Books the library's study rooms for a date and time. "
        "Use when someone wants a room to work or meet in."),
    "fine-payment": ("Explains and settles overdue fines on a member's account. "
        "Use when someone asks what they owe or wants to pay it."),
    "event-calendar": "Lists the library's talks, workshops and readings. Use when someone asks what is on, and when.",
    "interlibrary-loan": ("Requests a book the library does not hold from a partner library. "
        "Use when a title is not in the catalogue."),
    "printing-credits": "Tops up and explains printing and copying credits. Use when someone needs to print or scan.",
    "catalog-search": ("Finds books and media in the library's catalogue by title, author or subject. "
        "Use when someone looks for a title."),
    "membership-card": "Issues, renews and replaces library cards. Use when a card is new, expired, lost or damaged.",
}
CHECK_SKILLS = tuple(Skill(name, description, f"# {name}\n", Path("checker") / name / "SKILL.md")
                     for name, description in _LIBRARY.items())
"""The stand-in's catalog: a city library's skills, none of them in the course's catalogs."""


BRANCH = ("room-booking", "event-calendar", "printing-credits", "membership-card")
"""A branch library's smaller catalog (no loans, no fines): the check's second catalog."""


@dataclass(frozen=True)
class ScriptedCase:
    """One scripted decision: the query, its k, each skill's cosine, what the model will do, and on which catalog."""

    query: str
    k: int
    scores: tuple[float, ...]
    """Cosine with each skill of `CHECK_SKILLS`, in catalog order (the branch catalog reads its own skills' ones)."""
    model_picks: int | None
    """The rank (1 = nearest) in the top k of the skill the model calls; None: it declines."""
    branch: bool = False
    """Asked on the branch library's catalog (`BRANCH`) instead of the whole library's."""

    @staticmethod
    def names() -> list[str]:
        return [s.name for s in CHECK_SKILLS]

    def catalog(self) -> list[str]:
        """The skills of the catalog the case is asked on, in catalog order."""
        return [n for n in self.names() if not self.branch or n in BRANCH]

    def catalog_scores(self) -> dict[str, float]:
        """Each skill of the case's catalog with its cosine."""
        scores = dict(zip(self.names(), self.scores))
        return {n: scores[n] for n in self.catalog()}

    def top(self) -> list[str]:
        """The k nearest skills of the catalog, nearest first; ties keep catalog order (the reference's rule)."""
        scores = self.catalog_scores()
        return sorted(scores, key=lambda n: -scores[n])[: self.k]

    def model_choice(self) -> str | None:
        return None if self.model_picks is None else self.top()[self.model_picks - 1]

    def is_shortlist(self, offered: Sequence[str]) -> bool:
        """Whether `offered` are k skills of the catalog that score at least as high as all the others."""
        scores = self.catalog_scores()
        rest = [scores[n] for n in scores if n not in offered]
        return (len(set(offered)) == len(offered) == min(self.k, len(scores)) and set(offered) <= set(scores)
                and (not rest or min(scores[n] for n in offered) >= max(rest)))

    def tied(self) -> list[str]:
        """The skills that tie with the k-th nearest, when the tie straddles the k-th place (else [])."""
        scores, top = self.catalog_scores(), self.top()
        if self.k >= len(scores):
            return []
        kth = scores[top[-1]]
        tied = [n for n in scores if scores[n] == kth]
        return tied if any(n not in top for n in tied) else []


DUNE = (0.34, 0.20, 0.24, 0.10, 0.27, 0.06, 0.31, 0.15)
CHECK_CASES = (
    ScriptedCase("Can I keep 'Dune' two more weeks?", 3, DUNE, 2),
    ScriptedCase("What time is it in Tokyo right now?", 2, (0.20, 0.24, 0.10, 0.34, 0.06, 0.31, 0.15, 0.27), None),
    ScriptedCase("I lost my card and I need to print my CV today.", 4,
                 (0.15, 0.24, 0.27, 0.20, 0.10, 0.31, 0.06, 0.34), 4),
    ScriptedCase("Somewhere quiet for four of us on Saturday morning?", 1,
                 (0.24, 0.34, 0.15, 0.31, 0.06, 0.10, 0.27, 0.20), 1),
    ScriptedCase("Can I keep 'Dune' two more weeks?", 1, DUNE, 1),
    ScriptedCase("Can I keep 'Dune' two more weeks?", 2, DUNE, None, branch=True),
    ScriptedCase("My card expired: can I still print here today?", 4, (0.12, 0.08, 0.10, 0.05, 0.03, 0.33, 0.07, 0.36),
                 1, branch=True),
    ScriptedCase("Is there a talk tonight, and can I book a room after it?", 6,
                 (0.05, 0.30, 0.04, 0.35, 0.02, 0.06, 0.09, 0.07), 2, branch=True),
    ScriptedCase("What's on this weekend, and can my study group meet there?", 2,
                 (0.08, 0.26, 0.03, 0.38, 0.10, 0.02, 0.26, 0.06), 1),
)
"""k from 1 to 4 on the library's 8 skills, and 2, 4 and 6 on the branch's 4 (the whole catalog at 4 and 6); the
same query with two k and on two catalogs; a tie at the k-th place (room-booking and catalog-search); the model
calling a skill that is not the nearest, and declining."""
K_ZERO = 0
"""The k that must be refused: a shortlist of no skill is a ValueError (see `selection.pick.pick_hybrid`)."""

CHECK_QUERIES = (
    ("How many vacation days do I have left this year?", 3),
    ("Book 3 days of leave for me in the HR tool.", 2),
)
"""The real-backend part of the check: one query that must trigger a skill, one that must not, with their k."""


def _script(cases: Sequence[ScriptedCase]) -> Callable[[str, list[str], list[str]], str | None]:
    """The stand-in model: for a case whose shortlist was offered, the case's choice; anything else, a decline."""

    def decide(query: str, offered: list[str], functions: list[str]) -> str | None:
        for case in cases:
            if case.query == query and case.is_shortlist(offered):
                choice = case.model_choice()
                return choice if choice in offered else None
        return None

    return decide


def scripted_world(cases: Sequence[ScriptedCase] = CHECK_CASES) -> tuple[ScriptedBackend, genai.Client, SkillLoader,
                                                                       SimilaritySelector]:
    """The stand-in backend, a client it answers, its catalog and a SimilaritySelector over it (no cache)."""
    rows = {case.query: case.scores for case in cases}
    if any(rows[case.query] != case.scores for case in cases):
        raise ValueError("a query asked twice must have the same scores each time")
    backend = ScriptedBackend(CHECK_SKILLS, rows, _script(cases))
    client = backend.client()
    loader = SkillLoader(CHECK_SKILLS)
    return backend, client, loader, SimilaritySelector(client, loader, cache=False)  # the stand-in's default threshold


def branch_catalog(client: genai.Client, loader: SkillLoader) -> tuple[SkillLoader, SimilaritySelector]:
    """The branch library's catalog on the same stand-in, and a SimilaritySelector over it (no cache)."""
    branch = loader.subset(BRANCH)
    return branch, SimilaritySelector(client, branch, cache=False)


# ----------------------------------------------------------------- the stretch tasks' cases

CONFIDENT = ScriptedCase("My library card expired yesterday, can you renew it?", 3,
                         (0.10, 0.06, 0.15, 0.20, 0.24, 0.27, 0.31, 0.62), None)
"""A query whose nearest skill leads the second by 0.31: a margin rule of 0.1 skips the model; the model would
decline."""
MENTIONS = (("/book-renewal can I keep it one more week?", "book-renewal"),
            ("Please, @fine-payment: what do I owe?", "fine-payment"),
            ("/no-such-skill hello", None))
"""Explicit activations: a known `/name`, a known `@name`, and an unknown name that must activate nothing."""
DEV_CASES = (
    (ScriptedCase("Renew 'Dune' for me.", 1, (0.34, 0.20, 0.24, 0.10, 0.27, 0.06, 0.31, 0.15), None), "book-renewal"),
    (ScriptedCase("Is there a poetry reading this month?", 1, (0.20, 0.24, 0.10, 0.34, 0.06, 0.31, 0.15, 0.27), None),
     "event-calendar"),
    (ScriptedCase("Do you have the new Le Carré novel?", 1, (0.24, 0.10, 0.15, 0.20, 0.31, 0.06, 0.34, 0.27), None),
     "interlibrary-loan"),
    (ScriptedCase("I need twenty pages printed in colour.", 1, (0.31, 0.24, 0.15, 0.34, 0.10, 0.27, 0.06, 0.20), None),
     "printing-credits"),
    (ScriptedCase("What's the capital of Australia?", 1, (0.27, 0.20, 0.31, 0.06, 0.24, 0.10, 0.15, 0.34), None), None),
)
"""A scripted development set: the expected skill ranks 1st, 1st, 2nd and 3rd; the last query expects none."""


def stretch_world() -> tuple[ScriptedBackend, genai.Client, SkillLoader, SimilaritySelector]:
    return scripted_world(CHECK_CASES + (CONFIDENT,) + tuple(case for case, _ in DEV_CASES))

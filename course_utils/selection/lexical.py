"""Words, not meaning: BM25 over each skill's name, description and body.

An encoder reads a description's meaning; BM25 reads which words a request shares with a skill's whole
SKILL.md, rare words counting most. A request that names a tool the body documents ("Zustand", "Helm") finds
its skill even when the description never says the word.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from course_utils.skills.skill import Skill

WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
STOPWORDS = frozenset(
    "the and for with this that use when from into your you are not can its any all has have was were will "
    "des les une pour dans par sur est pas que qui aux ses son sans".split())
BM25_K1, BM25_B = 1.2, 0.75
"""BM25's usual constants (Robertson and Zaragoza, 2009)."""


def words(text: str) -> list[str]:
    """The words BM25 counts: letters only, lower case, two or more, common words left out."""
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


def skill_text(skill: Skill) -> str:
    """What the lexical index reads of a skill: its name's words, its description, its body."""
    return f"{skill.name.replace('-', ' ')} {skill.description} {skill.body}"


class Bm25Index:
    """BM25 scores of a query against fixed documents (a sparse term-weight matrix, built once)."""

    def __init__(self, documents: Sequence[str]) -> None:
        counted = [Counter(words(text)) for text in documents]
        frequency = Counter(word for counts in counted for word in counts)
        self.vocabulary = {word: column for column, word in enumerate(sorted(frequency))}
        lengths = np.array([sum(counts.values()) for counts in counted], dtype=np.float32)
        average = float(lengths.mean()) if len(documents) and lengths.mean() > 0 else 1.0
        n = len(documents)
        self.weights = np.zeros((n, len(self.vocabulary)), dtype=np.float32)
        for row, counts in enumerate(counted):
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[row] / average)
            for word, tf in counts.items():
                idf = math.log(1 + (n - frequency[word] + 0.5) / (frequency[word] + 0.5))
                self.weights[row, self.vocabulary[word]] = idf * tf * (BM25_K1 + 1) / (tf + norm)

    def scores(self, query: str) -> np.ndarray:
        """One score per document: the sum of the weights of the query's distinct words it holds."""
        columns = [self.vocabulary[w] for w in set(words(query)) if w in self.vocabulary]
        return self.weights[:, columns].sum(axis=1) if columns else np.zeros(len(self.weights), dtype=np.float32)

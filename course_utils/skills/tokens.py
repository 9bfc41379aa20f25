"""Token counts: a quick offline estimate, and the model's own count through the SDK.

Used from `notebooks/01_skill_files.ipynb` on (the weight of descriptions against bodies).
"""
from __future__ import annotations

import math

from google import genai

CHARS_PER_TOKEN = 4.0
"""English prose averages about four characters per token with common BPE tokenizers."""


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def count_tokens(client: genai.Client, text: str, model: str) -> int:
    """The exact count from the backend's tokenizer (Gemini's or the local model's)."""
    return client.models.count_tokens(model=model, contents=text).total_tokens

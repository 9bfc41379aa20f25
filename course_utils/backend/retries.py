"""How a client asks again: the back-off shared by the Gemini client and the OpenAI-compatible backend."""
from __future__ import annotations

from google.genai import types

RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504]


def retry_options(attempts: int = 5, initial_delay: float = 2.0) -> types.HttpRetryOptions:
    """Exponential backoff on rate limits (429), timeouts (408) and server errors (5xx)."""
    return types.HttpRetryOptions(attempts=attempts, initial_delay=initial_delay, exp_base=2,
                                  http_status_codes=RETRY_STATUS_CODES)

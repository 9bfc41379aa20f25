"""What can go wrong on the model path, said in one line a person can act on.

Used by `course_utils.selection.pick` (malformed answers become errors, not silent decisions) and by
`course_utils.evaluation.outcomes` (a failed decision is recorded with `describe_error(err)` and the run goes on).
The table of docs/faults.md ("What happens when…") lists each fault and the line it gives.
"""
from __future__ import annotations

import json
import re
from typing import Any

import httpx
import numpy as np
import pydantic
from google.genai import errors

from course_utils.skills.text import shorten

MAX_REASON = 300
"""A reason is cut to this many characters: it is one line of a report, not a log."""


class EmbeddingError(ValueError):
    """The embedding backend answered, but not with one usable vector per text."""


def retry_delay(err: errors.APIError) -> str | None:
    """The delay the server asked for before a retry (Gemini's `RetryInfo.retryDelay`), if any."""
    details = err.details.get("error", err.details) if isinstance(err.details, dict) else {}
    for detail in details.get("details") or [] if isinstance(details, dict) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            return str(detail.get("retryDelay")) if detail.get("retryDelay") else None
    return None


_HINTS = {
    400: "the request was refused as invalid: read the message",
    401: "the API key was refused: check GEMINI_API_KEY",
    403: "the API key may not use this model: check GEMINI_API_KEY and the model name",
    404: "no such model or method: check COURSE_MODEL / COURSE_EMBEDDING_MODEL",
    408: "the request timed out; the client retried it",
    429: "rate limit or quota reached: wait, lower --runs, or check your plan's quota",
}


SERVER_STATUSES = {"UNREACHABLE", "TIMEOUT", "REFUSED", "BAD_ANSWER", "NO_LOGPROBS"}
"""Statuses of the OpenAI-compatible backend's errors: their messages say what to do, and Gemini's hints (its key,
its model names, its retries) do not apply, whatever the HTTP code."""
SELF_EXPLAINED = {"FAILED_PRECONDITION", *SERVER_STATUSES}
"""Statuses of the local and OpenAI-compatible backends' errors, whose messages say what to do themselves."""


def _api_reason(err: errors.APIError) -> str:
    status = f" {err.status}" if err.status else ""
    message = err.message or str(err.details)
    if err.status in SERVER_STATUSES:
        hint = ""
    elif err.code in _HINTS:
        hint = _HINTS[err.code]
    elif isinstance(err, errors.ServerError) and err.status not in SELF_EXPLAINED:
        hint = "the server failed: try again later; the Gemini client retries these"
    else:
        hint = ""
    delay = retry_delay(err)
    if delay:
        hint += f"; the server asked to wait {delay}"
    return f"{err.code}{status}: {message}" + (f" ({hint})" if hint else "")


def describe_error(err: BaseException) -> str:
    """One line saying what failed and, where it helps, what to do."""
    if isinstance(err, json.JSONDecodeError):
        reason = f"the backend's answer is not JSON: {err.doc[:120]!r}"
    elif isinstance(err, errors.UnknownApiResponseError):
        raw = re.sub(r"^Failed to parse response as JSON\. Raw response: ", "", str(err))
        reason = f"the backend's answer is not JSON: {raw[:120]!r}"
    elif isinstance(err, errors.APIError):
        reason = _api_reason(err)
    elif isinstance(err, httpx.TimeoutException):
        reason = f"no answer in time ({type(err).__name__}): the backend is slow or unreachable; try again later"
    elif isinstance(err, httpx.TransportError):
        reason = f"cannot reach the backend ({type(err).__name__}: {err}): check the network"
    elif isinstance(err, pydantic.ValidationError):
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        reason = (f"the backend's answer does not follow Gemini's response format "
                  f"({err.error_count()} problem(s); first at {where or 'the top'}: {first.get('msg', err)})")
    else:
        reason = f"{type(err).__name__}: {err}"
    return shorten(reason, MAX_REASON)


def check_vectors(values: list[Any], count: int, source: str) -> np.ndarray:
    """`values` as an (count, D) float32 array; EmbeddingError unless it holds `count` finite vectors of one size."""
    if len(values) != count:
        raise EmbeddingError(f"{source} returned {len(values)} vector(s) for {count} text(s)")
    if not count:
        return np.zeros((0, 0), dtype=np.float32)
    sizes = sorted({len(v) if v is not None else 0 for v in values})
    if 0 in sizes:
        raise EmbeddingError(f"{source} returned an empty vector")
    if len(sizes) > 1:
        raise EmbeddingError(f"{source} returned vectors of different sizes ({', '.join(map(str, sizes))})")
    try:
        array = np.asarray(values, dtype=np.float32).reshape(count, sizes[0])
    except (TypeError, ValueError) as err:
        raise EmbeddingError(f"{source} returned values that are not numbers ({err})") from None
    if not np.isfinite(array).all():
        raise EmbeddingError(f"{source} returned a vector with NaN or infinite values")
    return array

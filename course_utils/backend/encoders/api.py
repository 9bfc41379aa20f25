"""Gemini's embedding methods (``embedContent``, ``batchEmbedContents``) answered by the course's encoders.

Both in-process backends embed this way: the local app, and the OpenAI-compatible one unless the server's own
embedding model embeds. ``gemini-*`` names containing "embedding" go to USE; the encoders' own names
(``embed.DIMENSIONS``) pick one explicitly.
"""

from __future__ import annotations

from typing import Any

from course_utils.backend.content import text_of
from course_utils.backend.declarations import InvalidRequest, Json
from course_utils.backend.encoders import embed as embedding
from course_utils.backend.wire import ApiError

DEFAULT_ENCODER = embedding.USE_NAME
METHODS = ("embedContent", "batchEmbedContents")


def encoder_for(model: str) -> str | None:
    """The encoder that answers the model name `model`, or None when no encoder does."""
    if model in embedding.DIMENSIONS:
        return model
    if model.startswith("gemini-") and "embedding" in model:
        return DEFAULT_ENCODER
    return None


def _embedding_request(item: Any, encoder: str) -> tuple[str, int | None]:
    """The text and requested dimensionality of one embedding request."""
    if not isinstance(item, dict) or "content" not in item:
        raise InvalidRequest("Each embedding request needs a content.")
    dimensions = item.get("outputDimensionality")
    most = embedding.DIMENSIONS[encoder]
    if dimensions is not None and not (isinstance(dimensions, int) and 0 < dimensions <= most):
        raise InvalidRequest(f"outputDimensionality must be between 1 and {most} "
                             f"for the local encoder ({encoder}), got {dimensions}.")
    return text_of(item["content"], "content"), dimensions


def embed_requests(items: list[Any], encoder: str = DEFAULT_ENCODER) -> list[list[float]]:
    """Embed several requests in one batch.

    A Content with N parts gives ONE vector, of its parts joined with a newline, as
    gemini-embedding-2 aggregates the parts of a Content. ``taskType`` is accepted and
    ignored: USE has no task types (see ``embed.strip_task_prefix`` for the text prefixes).
    """
    parsed = [_embedding_request(item, encoder) for item in items]
    vectors = embedding.embed([text for text, _ in parsed], encoder)
    return [embedding.truncate(vectors[i:i + 1], dims)[0].tolist()
            for i, (_, dims) in enumerate(parsed)]


def batch_embed_contents(request: Json, encoder: str) -> Json:
    """Serve ``batchEmbedContents``."""
    items = request.get("requests")
    if not isinstance(items, list) or not items:
        raise InvalidRequest("requests must be a non-empty list.")
    return {"embeddings": [{"values": values} for values in embed_requests(items, encoder)]}


def embed_content(request: Json, encoder: str) -> Json:
    """Serve ``embedContent``."""
    return {"embedding": {"values": embed_requests([request], encoder)[0]}}


def serve(method: str, request: Json, model: str) -> Json:
    """Answer one of `METHODS` with the encoder that answers the model name `model`; 404 when none does."""
    encoder = encoder_for(model)
    if encoder is None:
        raise ApiError(404, f"models/{model} is not an embedding model here: gemini-*embedding* names and "
                            f"{', '.join(embedding.DIMENSIONS)} are.")
    return (embed_content if method == "embedContent" else batch_embed_contents)(request, encoder)

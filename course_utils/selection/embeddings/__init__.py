"""Embeddings: texts to vectors, the vectors kept on disk, a catalog's index and its top k.

| module | what it holds |
|---|---|
| `embed` | `embed_texts` (one `Content` per text, in batches), `cosine_matrix` |
| `cache` | `EmbeddingCache`: every embedded text's vector on disk, so a rerun embeds nothing twice |
| `index` | `unit_rows`, `cosine_scores`, `top_k` (a partial sort) and `IndexCache` (a whole catalog's matrix on disk) |

The selectors (`course_utils.selection.pick`, `course_utils.scale.decision`) and `audit` import from here.
"""
from course_utils.selection.embeddings.cache import EmbeddingCache
from course_utils.selection.embeddings.embed import EMBED_BATCH, cosine_matrix, embed_texts
from course_utils.selection.embeddings.index import IndexCache, cosine_scores, top_k, unit_rows

__all__ = ["EMBED_BATCH", "EmbeddingCache", "IndexCache", "cosine_matrix", "cosine_scores", "embed_texts", "top_k",
           "unit_rows"]

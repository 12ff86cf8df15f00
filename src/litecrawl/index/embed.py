"""Text embeddings: one 256-dimension vector per text, by WordLlama (weights in its wheel).

The model (``wordllama``'s ``l2_supercat`` at 256 dimensions, MIT, 16 MB of weights + its
tokenizer, all inside the wheel) is loaded once per process, on first use: in the analysis
workers when they embed their first page, in the CLI when a query needs it. It is never
downloaded: ``disable_download=True`` and the wheel's own folder as its cache (``load()`` looks
for the tokenizer in ``cache_dir/tokenizers``, which is where the wheel ships it).

WordLlama is a bag of token embeddings averaged, so a text's vector is the mean of its words'
token vectors. The tokenizer costs most of the time (0.4 ms for a 250-word page), and pages
repeat words, so each distinct whitespace-separated word is tokenized once per process and its
summed token vector kept (:data:`_WORD_CACHE` words at most): the same vector within float
error (cosine > 0.999 against ``WordLlama.embed`` on PostgreSQL's documentation pages), at a
fraction of the cost. Vectors are L2-normalised float32, little-endian, as bytes.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError
from litecrawl.index.vectors import DIMENSIONS, MODEL

__all__ = ["DIMENSIONS", "MODEL", "Embedder", "embed_text", "embedder", "from_blob", "to_blob"]

log = logging.getLogger("litecrawl.index")

_WORD_CACHE = 200_000
_MAX_WORDS = 20_000  # a page longer than this is embedded by its first words (bounded work)
_DTYPE = np.dtype("<f4")

Vector = npt.NDArray[np.float32]


class Embedder:
    """The loaded model and its per-word cache (one per process: see :func:`embedder`)."""

    def __init__(self) -> None:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise ConfigError("embeddings need the 'wordllama' package") from exc
        model: Any = WordLlama.load(
            config="l2_supercat",
            dim=DIMENSIONS,
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )
        self._tokenizer: Any = model.tokenizer
        self._table: Vector = np.asarray(model.embedding, dtype=np.float32)
        # word -> row of _sums, the sum of the word's token vectors (the mean's direction is
        # the sum's: the token count is not needed for a unit vector)
        self._rows: dict[str, int] = {}
        self._sums: Vector = np.empty((1024, DIMENSIONS), dtype=np.float32)

    def vector(self, text: str) -> Vector | None:
        """The unit vector of ``text`` (None when it has no words)."""
        counts = Counter(text.split()[:_MAX_WORDS])
        if not counts:
            return None
        if len(self._rows) + len(counts) > _WORD_CACHE:
            self._rows.clear()  # the rare words of a huge crawl: start afresh, bounded memory
        rows = [self._row(word) for word in counts]
        weights = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        total = weights @ self._sums[rows]
        norm = float(np.linalg.norm(total))
        if norm == 0.0:
            return None
        return (total / norm).astype(np.float32)

    def _row(self, word: str) -> int:
        row = self._rows.get(word)
        if row is None:
            row = len(self._rows)
            if row == len(self._sums):
                grown = np.empty((2 * row, DIMENSIONS), dtype=np.float32)
                grown[:row] = self._sums
                self._sums = grown
            ids = np.asarray(self._tokenizer.encode(word, add_special_tokens=False).ids)
            self._sums[row] = self._table[np.clip(ids, 0, len(self._table) - 1)].sum(axis=0)
            self._rows[word] = row
        return row


_loaded: Embedder | None = None


def embedder() -> Embedder:
    """This process's :class:`Embedder`, loaded on first call (about half a second)."""
    global _loaded
    if _loaded is None:
        _loaded = Embedder()
    return _loaded


def embed_text(text: str) -> bytes | None:
    """``text``'s vector as float32 bytes, or None when it has no words."""
    vector = embedder().vector(text)
    return None if vector is None else to_blob(vector)


def to_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=_DTYPE).tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype=_DTYPE).astype(np.float32)

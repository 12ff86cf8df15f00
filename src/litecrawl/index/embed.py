"""Text embeddings: one 256-dimension vector per text, by WordLlama (weights in its wheel).

The model (``wordllama``'s ``l2_supercat`` at 256 dimensions, MIT, 16 MB of weights + its
tokenizer, all inside the wheel) is loaded once per process, on first use: in the analysis
workers when they embed their first page, in the CLI when a query needs it. It is never
downloaded: ``disable_download=True`` and the wheel's own folder as its cache (``load()`` looks
for the tokenizer in ``cache_dir/tokenizers``, which is where the wheel ships it).

WordLlama is a bag of token embeddings averaged, so a text's vector is the mean of its words'
token vectors. The tokenizer costs most of the time (0.4 ms for a 250-word page), and pages
repeat words, so each distinct whitespace-separated word is tokenized once per process and its
summed token vector kept (:data:`_WORD_CACHE` words at most): the same vector as
``WordLlama.embed`` of the same words within float error (cosine > 0.9999 on PostgreSQL's
documentation pages), at a fraction of the cost. A page is embedded by its title and its first
:data:`MAX_WORDS` words. Vectors are L2-normalised float32, little-endian, as bytes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError
from litecrawl.index.vectors import DIMENSIONS, MODEL

__all__ = [
    "DIMENSIONS",
    "MAX_WORDS",
    "MODEL",
    "Embedder",
    "embed_text",
    "embedder",
    "from_blob",
    "page_text",
    "to_blob",
]

log = logging.getLogger("litecrawl.index")

_WORD_CACHE = 200_000
# A page is embedded by its first words: the top of a page says what it is about, and the cost
# stays bounded (kit pages have 2,000 words: all of them cost a third of the crawl's CPU per page).
MAX_WORDS = 400
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
        words = text.split(maxsplit=MAX_WORDS)[:MAX_WORDS]
        if not words:
            return None
        if len(self._rows) + len(words) > _WORD_CACHE:
            self._rows.clear()  # the rare words of a huge crawl: start afresh, bounded memory
        rows = [self._row(word) for word in words]
        # a sum of rows, no matrix product: BLAS would start its threads in every worker
        # process and spin them against the crawl (measured: twice the crawl's CPU)
        total: Vector = self._sums[rows].sum(axis=0, dtype=np.float32)
        norm = float(np.sqrt(np.square(total).sum()))
        if norm == 0.0:
            return None
        return total / np.float32(norm)

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


def embed_text(text: str, title: str = "") -> bytes | None:
    """The vector of a page's ``title`` and ``text`` (its first :data:`MAX_WORDS` words) as
    float32 bytes, or None when it has no words."""
    vector = embedder().vector(page_text(title, text))
    return None if vector is None else to_blob(vector)


def page_text(title: str, text: str) -> str:
    """What is embedded for a page: its title, then its text."""
    return f"{title}\n{text}" if title else text


def to_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=_DTYPE).tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype=_DTYPE).astype(np.float32)

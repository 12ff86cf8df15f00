"""Text embeddings: one 256-dimension vector per text, by WordLlama (weights in its wheel).

The model is ``wordllama``'s ``l2_supercat`` at 256 dimensions (MIT): a table of 32,000 token
vectors (16 MB, float16) and Llama 2's tokenizer, both files inside the wheel. It is read from
there once per process, on first use (in the analysis workers when they embed their first page,
in the CLI when a query needs it), never downloaded. The files are read directly (the tokenizer
with ``tokenizers``, the table from its safetensors file) rather than through
``WordLlama.load``: that one imports pydantic, toml and requests and then, with a wrong cache
folder, tries to download; reading the two files costs a worker 0.2 s instead of 0.8 s of CPU.
``tests/test_embed.py`` checks the result against ``WordLlama.embed`` itself.

WordLlama's vector is the normalised mean of the text's token vectors. The tokenizer costs most
of the time (0.4 ms for a 250-word page), and pages repeat words, so each distinct
whitespace-separated word is tokenized once per process and its summed token vector kept
(see below for its bound): the same vector as ``WordLlama.embed`` of the same words
within float error, at a fraction of the cost. The cache holds :data:`CACHE_WORDS` words at most
(1 KiB each); when full it keeps the words used in more than one text since they entered (at most
half the bound) and drops the rest, so the words that repeat stay and the rare ones pass through.
Replaying what a worker embeds of Python's and PostgreSQL's documentation (894,955 words looked
up, 65,928 distinct), 16,384 words hit 90.1% of lookups: what starting afresh hit at 32,768
(90.3%) and near an exact LRU (90.8%), at 16 MiB instead of 32 per analysis worker; 8,192 hit
87.3% and cost a quarter more tokenizer calls, which showed in the CPU (bench/word_cache.py;
bench/README.md). A page's texts (its own and its sections') are embedded in one call
(:meth:`Embedder.words_vectors`): the words new to the cache are tokenized by the BPE model
directly and summed by token count in one numpy call each, where a word at a time cost ~15 us
(Python's documentation brings ~125 new words a page). A page is embedded by its title and its
first :data:`MAX_WORDS` words.
Vectors are L2-normalised float32, little-endian, as bytes.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from itertools import compress, repeat
from operator import is_
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError
from litecrawl.store.vectors import DIMENSIONS, MODEL

__all__ = [
    "CACHE_WORDS",
    "DIMENSIONS",
    "MAX_WORDS",
    "MODEL",
    "SECTION_WORDS",
    "Embedder",
    "embed_many",
    "embed_text",
    "embed_words",
    "embedder",
    "from_blob",
    "page_text",
    "page_words",
    "section_words",
    "titled",
    "to_blob",
]

log = logging.getLogger("litecrawl.index")

CACHE_WORDS = 16_384
# A page is embedded by its first words: the top of a page says what it is about, and the cost
# stays bounded (kit pages have 2,000 words: all of them cost a third of the crawl's CPU per page).
MAX_WORDS = 400
# A section is embedded by the page's title and its first words (its heading first): on the
# Python documentation's questions 40 words found more than 25, 80 or 200 (bench/README.md),
# and a page of 48 sections (extract/sections.py's bound) costs at most 1,920 words more than
# its own vector's 400.
SECTION_WORDS = 40
_DTYPE = np.dtype("<f4")

Vector = npt.NDArray[np.float32]


class Embedder:
    """The loaded model and its per-word cache (one per process: see :func:`embedder`)."""

    def __init__(self, cache_words: int = CACHE_WORDS) -> None:
        # a page's words always fit beside the words kept (half the bound)
        self._cache_words = max(cache_words, 2 * (MAX_WORDS + 1))
        folder = _package_folder()
        try:
            from tokenizers import Tokenizer

            self._tokenizer: Any = Tokenizer.from_file(str(folder / _TOKENIZER))
            self._table = _read_table(folder / _WEIGHTS)
        except Exception as exc:  # a broken install: say which folder, not a traceback
            raise ConfigError(f"cannot load the embedding model from {folder}: {exc}") from exc
        # the special tokens encode() matches before the model: a word holding one takes encode
        self._special = [t.content for t in self._tokenizer.get_added_tokens_decoder().values()]
        self._bpe: Any = None
        bpe = self._tokenizer.model.tokenize
        if all(
            [t.id for t in bpe("\u2581" + w)]
            == self._tokenizer.encode(w, add_special_tokens=False).ids
            for w in _PROBES
        ):
            self._bpe = bpe
        # word -> row of _sums, the sum of the word's token vectors (the mean's direction is
        # the sum's: the token count is not needed for a unit vector); _words[row] is the word
        self._rows: dict[str, int] = {}
        self._words: list[str] = []
        # Looked up in how many texts since it entered or since the cache last filled: when full,
        # the words looked up again stay (at most half the bound, the most used first) and the
        # rest go, so the words that repeat stay while the rare ones (a page's number, a name)
        # pass through: an LRU's hit rate at half its memory, for one numpy add per text
        # (bench/word_cache.py).
        self._uses = np.zeros(self._cache_words, dtype=np.uint32)
        self.tokenized = 0  # words this cache missed (each cost a tokenizer call)
        # The whole bound at once: np.empty maps it untouched, so only the rows written take
        # memory, and growing never holds an old copy beside a new one
        self._sums: Vector = np.empty((self._cache_words, DIMENSIONS), dtype=np.float32)

    def vector(self, text: str) -> Vector | None:
        """The unit vector of ``text`` (None when it has no words)."""
        return self.words_vector(text.split(maxsplit=MAX_WORDS)[:MAX_WORDS])

    def words_vector(self, words: list[str]) -> Vector | None:
        """The unit vector of ``words`` (at most :data:`MAX_WORDS`; None when there are none)."""
        return self.words_vectors([words])[0]

    def words_vectors(self, texts: list[list[str]]) -> list[Vector | None]:
        """:meth:`words_vector` of each of ``texts`` (a page's and its sections'): the words
        that none of them has cached are made into rows together first (:meth:`_learn`)."""
        rows, missing = self._look_up(texts)
        new = list(dict.fromkeys(texts[t][at] for t, at in missing))
        if len(self._rows) + len(new) > self._cache_words:
            self._keep_repeated()  # renumbers the rows kept
            if len(texts) > 1 and len(self._rows) + len(new) > self._cache_words:
                return [self.words_vector(words) for words in texts]  # too many at once
            rows, missing = self._look_up(texts)
            new = list(dict.fromkeys(texts[t][at] for t, at in missing))
        if new:
            self._learn(new)
            # only the missing places filled: a page's title is in each of its texts, so a
            # new word there (a kit page's number) would look up every word of the page twice
            get = self._rows.get
            for t, at in missing:
                rows[t][at] = get(texts[t][at])
        return [self._vector(found) for found in rows]

    def _look_up(
        self, texts: list[list[str]]
    ) -> tuple[list[list[int | None]], list[tuple[int, int]]]:
        """Each text's words' cached rows (None for a word not cached), and where the words
        not cached are: (text, place), in order."""
        get = self._rows.get
        rows = [list(map(get, words)) for words in texts]
        # the places picked in C (compress by "row is None"): a Python step per word of each
        # text with a miss cost the kit's worker more than its few new words saved
        missing = [
            (t, at)
            for t, found in enumerate(rows)
            if None in found
            for at in compress(range(len(found)), map(is_, found, repeat(None)))
        ]
        return rows, missing

    def _vector(self, rows: list[int | None]) -> Vector | None:
        """The unit vector of a text from its words' cached rows (a word's row once for each
        time the text has it)."""
        if not rows:
            return None
        at = np.array(rows, dtype=np.intp)
        self._uses[at] += 1  # a word twice in one text counts once
        # Every word's row gathered, a repeated word's again, and summed: counting the words
        # first to gather each row once and weight it (a Counter, then the repeated rows
        # multiplied) cost more than the repeated rows' gathers on every site measured: the
        # kit's pages 445 -> 291 us, Python's documentation 977 -> 627, bench/site.py's (52
        # distinct words of 400) 129 -> 121 (bench/README.md, issue 29, session 14).
        # A sum of rows, no matrix product: BLAS would start its threads in every worker
        # process and spin them against the crawl (measured: twice the crawl's CPU).
        total: Vector = self._sums.take(at, axis=0).sum(axis=0, dtype=np.float32)
        norm = float(np.sqrt(np.square(total).sum()))
        if norm == 0.0:
            return None
        return total / np.float32(norm)

    def _learn(self, words: list[str]) -> None:
        """Cache the rows of ``words`` (distinct, none cached), in the order given: each the sum
        of its token vectors, cast to float32 before the sum (it adds as the sum's own cast
        does, in half the instructions: tests/test_embed.py holds both to the plain form).
        The words of one token count are summed in one numpy call, ``(words, tokens,
        dimensions).sum(axis=1)``, which adds each word's tokens in order as a word's own
        ``sum(axis=0)`` does (the same bits: tests/test_embed.py): Python's documentation
        brings ~125 new words a page, and five numpy calls a word were ~7 us of its ~15."""
        first = len(self._words)
        ids = [self._token_ids(word) for word in words]
        by_count: dict[int, list[int]] = {}
        for at, tokens in enumerate(ids):
            by_count.setdefault(len(tokens), []).append(at)
        last = len(self._table) - 1
        for count, members in by_count.items():
            rows = np.array(members, dtype=np.intp) + first
            if not count:
                self._sums[rows] = 0.0  # what an empty sum gives
                continue
            # token ids are never negative: np.minimum is np.clip without its Python layer
            known = np.minimum(np.array([ids[m] for m in members], dtype=np.intp), last)
            self._sums[rows] = self._table[known].astype(np.float32).sum(axis=1)
        self._rows.update(zip(words, range(first, first + len(words)), strict=True))
        self._words += words
        self.tokenized += len(words)

    def _token_ids(self, word: str) -> list[int]:
        """The token ids of ``word`` as ``encode`` gives them. A word the normalizer only
        prefixes with "\u2581" (no space, no special token's spelling in it) is given to the
        BPE model directly: the same ids (checked at load on :data:`_PROBES`, and by
        tests/test_embed.py), without the Encoding (offsets, masks) ``encode`` builds: ~8 ->
        ~2.4 us a word (bench/README.md, issue 29, session 10)."""
        if self._bpe is None or not word or " " in word or any(s in word for s in self._special):
            ids: list[int] = self._tokenizer.encode(word, add_special_tokens=False).ids
            return ids
        return [token.id for token in self._bpe("\u2581" + word)]

    def _keep_repeated(self) -> None:
        """The cache is full: keep the words used in more than one text since they entered,
        the most used first, up to half the bound, moved to the first rows."""
        used = self._uses[: len(self._words)]
        keep = np.flatnonzero(used > 1)
        if len(keep) > self._cache_words // 2:
            keep = np.sort(keep[np.argsort(used[keep], kind="stable")[-(self._cache_words // 2) :]])
        self._sums[: len(keep)] = self._sums[keep]
        self._words = [self._words[row] for row in keep.tolist()]
        self._rows = {word: row for row, word in enumerate(self._words)}
        self._uses[:] = 0
        self._uses[: len(keep)] = 1  # as if they had just entered


# words the BPE shortcut must tokenize as encode() does, or it is not used (another tokenizer)
_PROBES = ("The", "naïve", "東京", "3.14159", "foo-bar", "🚀", "Café,", "x\x00y")
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WEIGHTS = "weights/l2_supercat_256.safetensors"


def _package_folder() -> Path:
    """The installed ``wordllama`` package's folder (found, not imported)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("embeddings need the 'wordllama' package (its weights and tokenizer)")
    return Path(next(iter(spec.submodule_search_locations)))


def _read_table(path: Path) -> npt.NDArray[np.float16]:
    """The token table of a one-tensor safetensors file: an 8-byte little-endian header
    length, a JSON header, then the raw tensor."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    tensor = header["embedding.weight"]
    if tensor["dtype"] != "F16" or tensor["shape"][1] != DIMENSIONS:
        raise ValueError(f"unexpected tensor {tensor['dtype']} {tensor['shape']}")
    begin, end = tensor["data_offsets"]
    table = np.frombuffer(data, dtype="<f2", count=(end - begin) // 2, offset=8 + size + begin)
    return table.reshape(tensor["shape"])


_loaded: Embedder | ConfigError | None = None


def embedder() -> Embedder:
    """This process's :class:`Embedder`, loaded on first call (0.1 s). A model that cannot be
    loaded raises :class:`ConfigError`, the same one on every later call (no reload per page)."""
    global _loaded
    if _loaded is None:
        try:
            _loaded = Embedder()
        except ConfigError as exc:
            _loaded = exc
    if isinstance(_loaded, ConfigError):
        raise _loaded
    return _loaded


def embed_text(text: str, title: str = "") -> bytes | None:
    """The vector of a page's ``title`` and ``text`` (its first :data:`MAX_WORDS` words) as
    float32 bytes, or None when it has no words."""
    return embed_words(page_words(title, text))


def embed_many(texts: list[list[str]]) -> list[bytes | None]:
    """:func:`embed_words` of each of ``texts`` (each at most :data:`MAX_WORDS` words), the
    words new to the cache tokenized together (:meth:`Embedder.words_vectors`)."""
    return [None if v is None else to_blob(v) for v in embedder().words_vectors(texts)]


def embed_words(words: list[str]) -> bytes | None:
    """The vector of ``words`` (at most :data:`MAX_WORDS`) as float32 bytes, or None when
    there are none."""
    vector = embedder().words_vector(words)
    return None if vector is None else to_blob(vector)


def page_words(title: str, text: str) -> list[str]:
    """The first :data:`MAX_WORDS` words of :func:`page_text` (the title's, then the text's),
    without copying the whole text into one string first."""
    head = title.split()
    if len(head) >= MAX_WORDS:
        return head[:MAX_WORDS]
    rest = MAX_WORDS - len(head)
    return head + text.split(maxsplit=rest)[:rest]


def section_words(title: str, text: str) -> list[str]:
    """What is embedded for a section of a page: the page's title, then the section's first
    :data:`SECTION_WORDS` words."""
    return page_words(title, " ".join(text.split(maxsplit=SECTION_WORDS)[:SECTION_WORDS]))


def titled(title_words: list[str], words: list[str]) -> list[str]:
    """``page_words(title, " ".join(words))`` for ``title_words = title.split()`` and words
    without whitespace: a section's words given its page's title split once, not joined to be
    split again (the analysis worker's sections)."""
    if len(title_words) >= MAX_WORDS:
        return title_words[:MAX_WORDS]
    return title_words + words[: MAX_WORDS - len(title_words)]


def page_text(title: str, text: str) -> str:
    """What is embedded for a page: its title, then its text."""
    return f"{title}\n{text}" if title else text


def to_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=_DTYPE).tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype=_DTYPE).astype(np.float32)

"""A page's words as numbers: a 64-bit hash per word, and per distinct word its count and first
position. Keywords and the simhash start from these.

Counting a page's ~2,000 words with ``Counter`` and sorting its ~1,500 distinct ones by frequency
cost about 0.6 ms a page (kit site); done on the word hashes the simhash needs anyway (sort the
hashes, count the runs) it costs about 0.25 ms. Words become strings again only for the few that
can be keywords, and for the words with apostrophes, whose keyword form needs string rules.

Words are :func:`litecrawl.extract.text.words`: lower-cased letters with inner apostrophes. Word
``w`` (UTF-8 bytes ``b[s:e]`` of the space-separated word string) hashes to ``sum(b[i] * P**(i-s))``
modulo 2**64 through SplitMix64's finalizer: a polynomial hash computed for every word at once from
one prefix sum. Two different words share a hash with probability ~2**-64: never, in practice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from litecrawl.extract.stopwords import stopwords_for
from litecrawl.extract.text import spaced_words

__all__ = [
    "KEYWORD_COUNT",
    "Vocabulary",
    "keywords",
    "mix",
    "vocabulary",
    "word_hashes",
]

KEYWORD_COUNT = 10

_SPACE = ord(" ")
_APOSTROPHES = ("'", "\N{RIGHT SINGLE QUOTATION MARK}")
_APOSTROPHE_BYTES = re.compile("|".join(re.escape(a) for a in _APOSTROPHES).encode())
_KEYWORD_MIN, _KEYWORD_MAX = 3, 50
_MAX_UTF8_BYTES = 4  # a word of more than 50 * 4 bytes has more than 50 characters
_SHORTLIST = 3  # candidates ranked first, per keyword wanted: the exact checks drop few
_ELISION_MAX = 2  # French/Italian "l'", "d'", "qu'": the word is what follows
# polynomial word hash: P odd, so P**i is invertible modulo 2**64 (P_INV * P = 1)
_P = np.uint64(0x100000001B3)
_P_INV = np.uint64(pow(0x100000001B3, -1, 1 << 64))
_TABLE_BYTES = 1 << 16  # P**(i+1) and P**-(i+1), computed once for texts up to this length


def _powers(base: np.uint64, n: int) -> np.ndarray:
    return np.cumprod(np.full(n, base, dtype=np.uint64))


_POWERS, _INVERSES = _powers(_P, _TABLE_BYTES), _powers(_P_INV, _TABLE_BYTES)
_POWERS.flags.writeable = _INVERSES.flags.writeable = False
# SplitMix64's finalizer: every input bit reaches every output bit
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer on every element (a new array)."""
    x = x ^ (x >> np.uint64(30))
    x *= _MIX1
    x ^= x >> np.uint64(27)
    x *= _MIX2
    x ^= x >> np.uint64(31)
    return x


def _word_bounds(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte offsets of the space-separated words of ``data``."""
    inside = np.concatenate(([False], np.frombuffer(data, dtype=np.uint8) != _SPACE, [False]))
    edges = np.flatnonzero(inside[1:] != inside[:-1])
    return edges[0::2], edges[1::2]


def _hashes(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The hash of every word ``data[starts[i]:ends[i]]``, all at once: a prefix sum of
    ``b[i] * P**i`` differenced at the word's ends and shifted back by ``P_INV**start``; numpy's
    uint64 arithmetic wraps modulo 2**64 as this needs."""
    if not len(starts):
        return np.zeros(0, dtype=np.uint64)
    n = len(data)
    if n <= _TABLE_BYTES:
        powers, inverse = _POWERS[:n], _INVERSES[:n]
    else:
        powers, inverse = _powers(_P, n), _powers(_P_INV, n)
    # the products and their prefix sums written in place after a leading 0: no copy of the
    # text's ~20,000 uint64s to prepend it (81 -> 73 us a kit page, bench/README.md)
    prefix = np.empty(n + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(np.frombuffer(data, dtype=np.uint8), powers, out=prefix[1:])
    np.cumsum(prefix[1:], out=prefix[1:])
    return mix((prefix[ends] - prefix[starts]) * inverse[starts])


def word_hashes(spaced: bytes) -> np.ndarray:
    """The hash of every space-separated word of ``spaced`` (UTF-8), in order."""
    return _hashes(spaced, *_word_bounds(spaced))


@lru_cache(maxsize=64)  # a stop-word list a language a crawl meets
def _hash_set(words: frozenset[str]) -> np.ndarray:
    """The sorted hashes of a set of words (stop-word lists: a handful of distinct sets)."""
    return np.unique(word_hashes(" ".join(words).encode("utf-8", "surrogatepass")))


@dataclass(frozen=True, slots=True, eq=False)
class Vocabulary:
    """The words of a text: ``hashes`` in order; ``distinct`` (sorted), with ``counts`` and the
    index of the ``first`` occurrence of each."""

    data: bytes  # the words, lower-cased, separated by spaces, as UTF-8
    starts: np.ndarray
    ends: np.ndarray
    hashes: np.ndarray
    distinct: np.ndarray
    counts: np.ndarray
    first: np.ndarray

    @classmethod
    def of(cls, text: str) -> Vocabulary:
        data = spaced_words(text).encode("utf-8", "surrogatepass")
        starts, ends = _word_bounds(data)
        hashes = _hashes(data, starts, ends)
        if not len(hashes):
            return cls(data, starts, ends, hashes, hashes, starts, starts)
        # numpy's default argsort (its SIMD quicksort), then the least index of each run of
        # equal hashes (the word's first occurrence): 71 vs 115 us a kit page, 109 vs 164 a
        # Python documentation page, against the stable sort whose runs start there already
        # (timsort; faster on session 4's machine and numpy, bench/README.md, issue 29)
        order = np.argsort(hashes)
        ordered = hashes[order]
        runs = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        counts = np.diff(np.append(runs, len(ordered)))
        first = np.minimum.reduceat(order, runs)
        return cls(data, starts, ends, hashes, ordered[runs], counts, first)

    @property
    def total(self) -> int:
        """How many words the text has."""
        return len(self.hashes)

    def word(self, index: int) -> str:
        """The ``index``-th word of the text."""
        return self.data[self.starts[index] : self.ends[index]].decode("utf-8", "surrogatepass")

    def _among(self, words: frozenset[str]) -> np.ndarray:
        """Which distinct words are in ``words`` (a mask over ``distinct``)."""
        wanted = _hash_set(words)
        found = np.zeros(len(self.distinct), dtype=bool)
        if not len(wanted) or not len(found):
            return found
        # each of the few wanted words looked up among the page's many distinct ones (both
        # sorted), not the other way round: ~180 binary searches instead of ~1,500 a kit page
        at = np.searchsorted(self.distinct, wanted).clip(max=len(found) - 1)
        found[at[self.distinct[at] == wanted]] = True
        return found

    def keywords(self, stop: frozenset[str], count: int) -> tuple[str, ...]:
        """The ``count`` most frequent words of 3-50 letters not in ``stop``, ties in order of
        first appearance; a word with an apostrophe counts for its keyword form (``l'homme`` for
        ``homme``, ``john's`` for ``john``) unless it is a stop word itself (``don't``)."""
        if count <= 0 or not self.total:
            return ()
        # ranks go by count, then by first appearance, which folding may move forward
        counts, first = self.counts.copy(), self.first.copy()
        extra = self._fold_elisions(stop, counts, first)
        lengths = self.ends[self.first] - self.starts[self.first]
        extra_words = [w for w, _, _ in extra.values()]  # after the distinct words, in order
        if extra:
            counts = np.append(counts, [n for _, n, _ in extra.values()])
            first = np.append(first, [f for _, _, f in extra.values()])
            lengths = np.append(lengths, [len(w.encode()) for w in extra_words])
        stopped = self._among(stop)
        if extra:  # keyword forms are never stop words (folding dropped those)
            stopped = np.append(stopped, np.zeros(len(extra), dtype=bool))
        # byte lengths bound the letter counts: exact checks follow on the few candidates
        keep = (counts > 0) & ~stopped & (lengths >= _KEYWORD_MIN)
        keep &= lengths <= _KEYWORD_MAX * _MAX_UTF8_BYTES
        candidates = np.flatnonzero(keep)
        # by count (descending), then first appearance: one int64 key, all keys distinct
        key = (counts.max() - counts[candidates]) * (self.total + 1) + first[candidates]
        found: list[str] = []
        n = len(self.first)
        for ranked in _ranked(key, _SHORTLIST * count):
            for i in candidates[ranked].tolist():
                word = extra_words[i - n] if i >= n else self.word(self.first[i])
                if _KEYWORD_MIN <= len(word) <= _KEYWORD_MAX and word not in stop:
                    found.append(word)
                    if len(found) == count:
                        return tuple(found)
        return tuple(found)

    def _fold_elisions(
        self, stop: frozenset[str], counts: np.ndarray, first: np.ndarray
    ) -> dict[int, tuple[str, int, int]]:
        """Move the counts of words with apostrophes to their keyword form, in place; returns
        the keyword forms the text does not have as words: hash -> (word, count, first)."""
        extra: dict[int, tuple[str, int, int]] = {}
        # two substring tests (memchr speed) before any regex scan: most pages have none
        if not any(a.encode() in self.data for a in _APOSTROPHES):
            return extra
        for i in self._with_apostrophes():
            n, at = int(counts[i]), int(first[i])
            counts[i] = 0
            form = _keyword_form(self.word(at), stop)
            if form is None:
                continue
            key = int(word_hashes(form.encode("utf-8", "surrogatepass"))[0])
            j = int(np.searchsorted(self.distinct, np.uint64(key)))
            if j < len(self.distinct) and int(self.distinct[j]) == key:
                counts[j] += n
                first[j] = min(int(first[j]), at)
            else:
                word, m, f = extra.get(key, (form, 0, at))
                extra[key] = (word, m + n, min(f, at))
        return extra

    def _with_apostrophes(self) -> Iterable[int]:
        """Indexes (into ``distinct``) of the words that contain an apostrophe."""
        marks = [m.start() for m in _APOSTROPHE_BYTES.finditer(self.data)]
        words = np.unique(np.searchsorted(self.starts, marks, side="right") - 1)
        indexes: list[int] = np.unique(np.searchsorted(self.distinct, self.hashes[words])).tolist()
        return indexes


def _ranked(key: np.ndarray, first: int) -> Iterable[np.ndarray]:
    """The indexes of ``key`` (distinct values) in ascending order of key: the ``first`` smallest
    (an ``argpartition``), then, only if the caller wants more, the rest. A kit page has ~1,500
    candidate keywords and wants 10: sorting them all and turning them into Python ints was a
    fifth of its keyword instructions (bench/README.md, issue 29, session 7)."""
    if len(key) <= first:
        yield np.argsort(key)
        return
    head = np.argpartition(key, first - 1)[:first]
    yield head[np.argsort(key[head])]
    yield np.argsort(key)[first:]  # keys are distinct: the full order's tail


def _keyword_form(word: str, stop: frozenset[str]) -> str | None:
    """What a word with apostrophes counts as among keywords, or None when it does not count."""
    norm = word.replace(_APOSTROPHES[1], "'")
    if norm in stop:
        return None
    head, _, tail = norm.partition("'")
    norm = tail.replace("'", "") if len(head) <= _ELISION_MAX else head
    if not _KEYWORD_MIN <= len(norm) <= _KEYWORD_MAX or norm in stop:
        return None
    return norm


# The last text's vocabulary: a page's keywords and its simhash ask in turn.
@lru_cache(maxsize=1)
def vocabulary(text: str) -> Vocabulary:
    """:meth:`Vocabulary.of` ``text``, remembered for the next caller with the same text."""
    return Vocabulary.of(text)


def keywords(text: str, language: str | None, count: int = KEYWORD_COUNT) -> tuple[str, ...]:
    """The ``count`` most frequent lower-cased words of 3+ letters that are not stop words.

    Ties keep the order of first appearance, so the result is deterministic.
    """
    return vocabulary(text).keywords(stopwords_for(language), count)

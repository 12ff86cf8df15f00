"""64-bit simhash of a text's word 3-shingles, its four 16-bit bands, and Hamming distance.

How it is computed: the text is cut into lower-cased words (:func:`litecrawl.extract.text.words`:
letters with inner apostrophes; in text with Han/kana characters each of those counts as a word,
since those scripts do not separate words by spaces). Every word is hashed once to 64 bits
(:mod:`litecrawl.extract.vocabulary`; the page's keywords come from the same hashes); the hash of a
run of three consecutive words (a *shingle*) mixes its words' hashes, rotated by their position,
through SplitMix64's finalizer; bit ``i`` of the simhash is set when more than half of the distinct
shingle hashes have bit ``i`` set (Charikar's simhash with unit weights). The
per-shingle work is numpy array arithmetic, not Python steps. The result is returned as a *signed*
64-bit integer so SQLite can store it in an ``INTEGER`` column.

Threshold (:data:`NEAR_DUPLICATE_DISTANCE` = 3): Manku, Jain and Das Sarma, "Detecting
near-duplicates for web crawling" (WWW 2007) found that 64-bit simhashes at Hamming distance <= 3
separate near-duplicate web pages from distinct ones best (on 8 billion pages). The distance is
also what makes the lookup cheap: split the hash into four 16-bit :func:`bands`; two hashes that
differ in at most 3 bits have at least one band in common (pigeonhole), so the candidates are the
rows sharing a band, found through an index on each band, then checked with :func:`hamming`.

What the threshold catches (measured on random 300-word texts; see ``tests/test_index.py``):
simhash bits differ with probability angle/pi between the shingle vectors, so a change touching
1% of the shingles (one word in 300) moves the hash by 2.6 bits on average and stays within the
threshold about 70% of the time; the same edit stays within it 92% of the time in a 1,000-word
text and 99% in a 2,000-word one.
Unrelated texts differ in about 32 bits, and pages that share most of a template (80% of their
shingles) in about 13: the threshold favours precision (never merging different pages) over
recall. Exact duplicates do not need the simhash at all (they share the SHA-256 ``text_hash``).
"""

from __future__ import annotations

import re

import numpy as np

from litecrawl.extract.text import non_ascii
from litecrawl.extract.vocabulary import mix, vocabulary, word_hashes
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, bands, hamming

__all__ = ["NEAR_DUPLICATE_DISTANCE", "SHINGLE_WORDS", "bands", "hamming", "simhash"]

SHINGLE_WORDS = 3

_SIGN = 1 << 63
# CJK ideographs and kana are one word each; everything else: runs of word characters
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAS_CJK = re.compile(f"[{_CJK}]")
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_ROTATIONS = (0, 21, 42)  # word position in the shingle: "a b c" and "b a c" hash apart


def _has_cjk(text: str) -> bool:
    # only the non-ASCII characters are searched (a page's lone "©" must not cost a scan)
    return not text.isascii() and bool(_HAS_CJK.search(non_ascii(text)))


def _word_hashes(text: str) -> np.ndarray:
    """The hash of every word of ``text``, in order (the page's vocabulary has them)."""
    if _has_cjk(text):
        spaced = " ".join(_TOKEN.findall(text.casefold()))
        return word_hashes(spaced.encode("utf-8", "surrogatepass"))
    return vocabulary(text).hashes


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return x if r == 0 else (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _shingle_hashes(h: np.ndarray) -> np.ndarray:
    """The distinct hashes of the word 3-shingles (one shingle for shorter text)."""
    n = max(1, len(h) - SHINGLE_WORDS + 1)
    mixed = np.zeros(n, dtype=np.uint64)
    for i, r in enumerate(_ROTATIONS[: len(h)]):
        mixed ^= _rotl(h[i : i + n], r)
    mixed = mix(mixed)
    mixed.sort()  # distinct values by hand: np.unique is ten times slower on 2,000 values
    return mixed[np.concatenate(([True], mixed[1:] != mixed[:-1]))]


def simhash(text: str) -> int:
    """The 64-bit simhash of ``text``'s word 3-shingles, as a signed integer (0 for no words).

    Identical texts, and texts differing only in case, punctuation or whitespace, get the same
    value. Bit ``i`` of the result is the majority of bit ``i`` over the distinct shingle hashes,
    tallied over the hashes' bits unpacked into a (shingles x 64) array.
    """
    hashes = _word_hashes(text)
    if not len(hashes):
        return 0
    shingles = _shingle_hashes(hashes)
    bits = np.unpackbits(shingles.astype("<u8").view(np.uint8), bitorder="little")
    # the column sums as a (1 x n) @ (n x 64) product: BLAS, 3x faster than sum(axis=0)
    ones = np.ones(len(shingles), dtype=np.float32)  # exact: counts stay far below 2**24
    tally = ones @ bits.reshape(-1, 64).astype(np.float32)
    majority = np.packbits(tally * 2 > len(shingles), bitorder="little")
    result = int(majority.view("<u8")[0])
    return result - (1 << 64) if result & _SIGN else result

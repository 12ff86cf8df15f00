"""64-bit simhash of a text's word 3-shingles, its four 16-bit bands, and Hamming distance.

How it is computed: the text is case-folded and cut into words (runs of letters/digits; each
Han/kana character counts as a word, since those scripts do not separate words by spaces). Every
distinct run of three consecutive words (a *shingle*) is hashed with XXH3 to 64 bits; bit ``i``
of the simhash is set when more than half of the shingle hashes have bit ``i`` set (Charikar's
simhash with unit weights). The result is returned as a *signed* 64-bit integer so SQLite can store
it in an ``INTEGER`` column.

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
import struct

import xxhash

__all__ = ["NEAR_DUPLICATE_DISTANCE", "SHINGLE_WORDS", "bands", "hamming", "simhash"]

NEAR_DUPLICATE_DISTANCE = 3
SHINGLE_WORDS = 3

_MASK64 = (1 << 64) - 1
_SIGN = 1 << 63
# CJK ideographs and kana are one word each; everything else: runs of word characters
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
# _BIT[k] maps a byte to its bit k (0 or 1): bytes.translate + count tallies a column in C
_BIT = tuple(bytes((value >> k) & 1 for value in range(256)) for k in range(8))


def _shingles(text: str) -> set[str]:
    words = _TOKEN.findall(text.casefold())
    if len(words) < SHINGLE_WORDS:
        return {" ".join(words)} if words else set()
    return set(map(" ".join, zip(words, words[1:], words[2:], strict=False)))


def _digests(shingles: set[str]) -> bytes:
    """The 64-bit XXH3 hashes of all shingles as little-endian bytes, concatenated.

    XXH3 is a fast non-cryptographic hash with good avalanche (every output bit flips with
    probability 1/2 on any input change): what simhash needs, at a tenth of BLAKE2b's cost here.
    """
    hash64 = xxhash.xxh3_64_intdigest
    try:
        values = list(map(hash64, map(str.encode, shingles)))
    except UnicodeEncodeError:  # lone surrogates from a broken page: keep them, byte for byte
        values = [hash64(s.encode("utf-8", "surrogatepass")) for s in shingles]
    return struct.pack(f"<{len(values)}Q", *values)


def simhash(text: str) -> int:
    """The 64-bit simhash of ``text``'s word 3-shingles, as a signed integer (0 for no words).

    Identical texts, and texts differing only in case, punctuation or whitespace, get the same
    value. Bit ``8*o + k`` of the result is bit ``k`` of byte ``o`` of the shingle digests (read
    as little-endian integers); the 64 per-bit tallies are made column by column with
    ``bytes.translate``/``bytes.count``, so the per-shingle work is just the hash.
    """
    shingles = _shingles(text)
    if not shingles:
        return 0
    data = _digests(shingles)
    n = len(shingles)
    result = 0
    for offset in range(8):
        column = data[offset::8]
        for k in range(8):
            if column.translate(_BIT[k]).count(1) * 2 > n:
                result |= 1 << (8 * offset + k)
    return result - (1 << 64) if result & _SIGN else result


def bands(h: int) -> tuple[int, int, int, int]:
    """The four 16-bit bands of a simhash (signed or unsigned), lowest bits first."""
    u = h & _MASK64
    return (u & 0xFFFF, (u >> 16) & 0xFFFF, (u >> 32) & 0xFFFF, (u >> 48) & 0xFFFF)


def hamming(a: int, b: int) -> int:
    """How many of the 64 bits differ between two simhashes (signed or unsigned)."""
    return ((a ^ b) & _MASK64).bit_count()

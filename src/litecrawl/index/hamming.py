"""Comparing simhashes: Hamming distance, the near-duplicate threshold and the lookup bands.

Kept apart from :mod:`litecrawl.index.simhash` (which needs numpy to compute them) so the crawler
process, which only compares hashes the workers computed, loads nothing heavy.
"""

from __future__ import annotations

__all__ = ["NEAR_DUPLICATE_DISTANCE", "bands", "hamming"]

# Manku, Jain and Das Sarma (WWW 2007): see litecrawl.index.simhash
NEAR_DUPLICATE_DISTANCE = 3

_MASK64 = (1 << 64) - 1


def bands(h: int) -> tuple[int, int, int, int]:
    """The four 16-bit bands of a simhash (signed or unsigned), lowest bits first."""
    u = h & _MASK64
    return (u & 0xFFFF, (u >> 16) & 0xFFFF, (u >> 32) & 0xFFFF, (u >> 48) & 0xFFFF)


def hamming(a: int, b: int) -> int:
    """How many of the 64 bits differ between two simhashes (signed or unsigned)."""
    return ((a ^ b) & _MASK64).bit_count()

"""Hybrid's keyword list for a question, scored by its best section as well as by the page.

The words of a question are together in the section that answers it ("reclaim disk space
taken by deleted rows": one section of the vacuuming page), while bm25 over the whole page ranks
a long page that has them here and there as high. So each page of the any-word list
(:func:`litecrawl.index.semantic.find`, read :data:`CANDIDATES` deep) is scored again:
:data:`PAGE_SHARE` of its page score and the rest of its best section's, each scaled 0-1
within the list. A section is scored with bm25 as FTS5 scores a page (each word weighted by its
rarity among the indexed pages, k1 = 1.2, b = 0.75), a section's length in characters against
the candidates' sections' average. The sections are the stored headings'
(:func:`litecrawl.index.located.section_offsets`); a page without stored sections is one. The
page score is the index's own bm25 (SQLite), or the same formula over the page's text computed
here (PostgreSQL, whose ts_rank_cd is not bm25).
Tuned on the Python documentation's questions, checked on PostgreSQL's (bench/README.md,
"Section-level keyword scoring").
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import pairwise

from litecrawl.index.located import section_offsets
from litecrawl.index.words import tokens
from litecrawl.store.index import TITLE_WEIGHT, IndexReader, SearchHit

__all__ = ["CANDIDATES", "PAGE_SHARE", "by_best_section", "rarity", "scaled"]

# how deep the any-word list is read before it is scored again (Python's questions: 50 deep
# MRR@10 0.805, 100 deep 0.819)
CANDIDATES = 100
# the page score's share against the best section's (0.3-0.7 tried; 0.5 best on Python's)
PAGE_SHARE = 0.5
_K1 = 1.2
_B = 0.75


def rarity(total: int, counts: Mapping[str, int]) -> dict[str, float]:
    """bm25's weight of each word (FTS5's formula) from how many of ``total`` pages hold it."""
    return {word: math.log(1 + (total - n + 0.5) / (n + 0.5)) for word, n in counts.items()}


def by_best_section(
    index: IndexReader, hits: Sequence[SearchHit], weights: Mapping[str, float]
) -> list[SearchHit]:
    """``hits`` (the any-word list of the words ``weights`` names, best first) ordered by
    their page and best-section scores (see the module doc); a hit's score is its new one."""
    if not hits:
        return []
    ids = [h.resource_id for h in hits]
    texts = index.texts(ids)
    offsets = section_offsets(index, texts)
    sections = {rid: _sections(texts.get(rid, ""), offsets.get(rid, [0]), weights) for rid in ids}
    lengths = [length for found in sections.values() for _, length in found]
    average = max(1.0, sum(lengths) / len(lengths)) if lengths else 1.0
    best = [
        max((_bm25(words, length, average, weights) for words, length in sections[rid]), default=0)
        for rid in ids
    ]
    if index.scores_by_bm25:
        page = scaled([h.score for h in hits])
    else:
        page = scaled(_page_scores(hits, texts, sections, weights))
    section = scaled(best)
    scores = [PAGE_SHARE * p + (1 - PAGE_SHARE) * s for p, s in zip(page, section, strict=True)]
    ranked = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    return [replace(hits[i], score=scores[i]) for i in ranked]


def _page_scores(
    hits: Sequence[SearchHit],
    texts: Mapping[int, str],
    sections: Mapping[int, list[tuple[Counter[str], int]]],
    weights: Mapping[str, float],
) -> list[float]:
    """bm25 of each hit's page as FTS5 scores it (title matches :data:`TITLE_WEIGHT` times),
    lengths in characters against the hits' average: for an index whose own ranking is not
    bm25 (PostgreSQL: its ts_rank_cd ranked Python's questions lower, bench/README.md)."""
    average = max(1.0, sum(len(texts.get(h.resource_id, "")) for h in hits) / len(hits))
    scores = []
    for hit in hits:
        found: Counter[str] = Counter()
        for words, _ in sections[hit.resource_id]:
            found.update(words)
        title = hit.title or ""
        for word, n in _sections(title, [0], weights)[0][0].items():
            found[word] += int(TITLE_WEIGHT * n)
        scores.append(_bm25(found, len(texts.get(hit.resource_id, "")), average, weights))
    return scores


def _sections(
    text: str, starts: Sequence[int], wanted: Mapping[str, float]
) -> list[tuple[Counter[str], int]]:
    """The ``wanted`` words in each section of ``text`` (sections start at ``starts``), and
    each section's length in characters."""
    cuts = [*starts, len(text)]
    found: list[tuple[Counter[str], int]] = [
        (Counter(), end - start) for start, end in pairwise(cuts)
    ]
    for at, word in _occurrences(text, wanted):
        i = bisect_right(cuts, at) - 1
        if 0 <= i < len(found):
            found[i][0][word] += 1
    return found


def _occurrences(text: str, wanted: Mapping[str, float]) -> list[tuple[int, str]]:
    """Where each of the ``wanted`` (folded) words is in ``text`` as the index splits it: by
    ``str.find`` on the lower-cased text when that is exact (a word of ASCII letters and
    digits, a text whose length lowering keeps), else by the index's own tokenizer (ten times
    slower: a page of text a question reads 100 deep)."""
    low = text.lower()
    if len(low) != len(text) or not all(w.isascii() and w.isalnum() for w in wanted):
        return [(start, word) for start, _, word in tokens(text) if word in wanted]
    found = []
    for word in wanted:
        size = len(word)
        at = low.find(word)
        while at >= 0:
            end = at + size
            before = at == 0 or not low[at - 1].isalnum()
            if before and (end == len(low) or not low[end].isalnum()):
                found.append((at, word))
            at = low.find(word, end)
    return found


def _bm25(words: Counter[str], length: int, average: float, weights: Mapping[str, float]) -> float:
    norm = _K1 * (1 - _B + _B * length / average)
    return sum(weights[w] * n * (_K1 + 1) / (n + norm) for w, n in words.items())


def scaled(values: list[float]) -> list[float]:
    """``values`` mapped to 0-1, the highest to 1 and the lowest to 0 (all 1 when equal)."""
    if not values:
        return []
    high, low = max(values), min(values)
    if high == low:
        return [1.0] * len(values)
    return [(value - low) / (high - low) for value in values]

"""Search by meaning and by both: ``keyword`` (FTS5's bm25, or PostgreSQL's ts_rank_cd),
``semantic`` (cosine of the embeddings: a page's own and its sections', see
:func:`_by_meaning`), ``hybrid`` (the two fused), and ``similar`` (the pages closest in meaning
to a crawled page).

``mode=None`` picks ``hybrid`` when the database has vectors and ``keyword`` otherwise; a
``semantic`` or ``hybrid`` search on a database without vectors runs as ``keyword`` and says so
in :attr:`Results.note`. A query none of whose words is on any page finds nothing in any mode
(the pages nearest in meaning to an unknown word are noise).

Hybrid reads each list :func:`_depth` deep. Its keyword list takes a query of several plain
words (``how do I back up a database``) as any of the words (:func:`keyword_list`), each
weighted by its rarity (bm25 on SQLite; on PostgreSQL each word's ts_rank_cd times its rarity),
and scores each page again by its best section: the words of a question are rarely all on the
page that answers it; then it ranks by the sum of the two scores, each scaled to 0-1 within its
list (the list's best 1, its worst 0; a page missing from a list gets 0 from it). Any other
keyword list is fused by rank (``sum(share / (RRF_K + rank))``, the keyword list's share
:data:`KEYWORD_SHARE` for several words). Either way a page both lists agree on comes first, a
page only one of them finds still ranks. Equal scores (a word on one page against
the semantic list's first) go to the page the semantic side is sure of (cosine >=
:data:`CONFIDENT`), else to the better keyword rank: the page with the words, unless the
meaning says better. (Measured in bench/README.md, "Search that finds the answer".)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

from litecrawl.errors import ConfigError
from litecrawl.index.embed import from_blob, section_words
from litecrawl.index.located import Closest, name_sections, opening, section_url
from litecrawl.index.minilm import MODEL as MINILM
from litecrawl.index.models import load
from litecrawl.index.query import plain_words
from litecrawl.index.section_words import CANDIDATES, by_best_section, rarity, scaled
from litecrawl.index.words import words as query_words
from litecrawl.store.backends import open_index
from litecrawl.store.index import IndexReader, SearchHit
from litecrawl.store.vectors import BestSection, Neighbour

__all__ = [
    "CONFIDENT",
    "KEYWORD_SHARE",
    "MODES",
    "PAGE_SHARE",
    "PAGE_SHARES",
    "RRF_K",
    "Mode",
    "Results",
    "find",
    "keyword_list",
    "similar",
]

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
# When hybrid's keyword list wants every word (a query of one word, or with a phrase, a prefix
# or an operator), the lists are fused by rank, as tuned for such a list on the Python
# documentation's questions: reciprocal-rank fusion, k = 10, the keyword list counted a quarter
# as much as the meaning list for a query of several words (a question's words are together
# on pages about something else), as much for one word (a lookup). On such a list the scaled
# scores lost to it (PostgreSQL backend, Python's questions: MRR@10 0.692 -> 0.599).
RRF_K = 10
KEYWORD_SHARE = 0.25
# A cosine the embedding reaches for a page that answers the query: the median best match of
# plain-word questions on the PostgreSQL documentation is 0.54, of out-of-domain words 0.2.
CONFIDENT = 0.5
# A page with sections is scored (PAGE_SHARE x its own cosine + its best section's) /
# (1 + PAGE_SHARE): the section finds the answer deep in a page, the page's own vector keeps
# a page about the whole subject ahead of one that mentions it once. Tuned on the Python
# documentation's questions (0.25, 0.5, 1 and the best of the two tried; bench/README.md).
PAGE_SHARE = 0.5
# The share for another model's vectors: MiniLM's page vector (256 tokens of the page) says more
# than WordLlama's, so its sections weigh less beside it: 2, tuned on the Python
# documentation's questions with MiniLM's vectors (0.25, 0.5, 1, 1.5, 2, 3, 5 and 1000 tried:
# hybrid MRR@10 0.786 at 0.5, 0.800 at 2; bench/README.md, issue 32, session 9).
PAGE_SHARES = {MINILM: 2.0}


@dataclass(frozen=True, slots=True)
class Results:
    hits: list[SearchHit]
    mode: Mode  # the mode that ran
    note: str | None = None  # why it is not the mode asked for


def find(
    db: str | Path,
    query: str,
    *,
    mode: Mode | None = None,
    limit: int = 10,
    offset: int = 0,
    open_mark: str = "[",
    close_mark: str = "]",
) -> Results:
    """Ranked hits for ``query`` in ``mode`` (see the module doc), best first; ``db`` a SQLite
    file or a ``postgresql://`` URL."""
    if mode is not None and mode not in MODES:
        raise ConfigError(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
    with open_index(str(db)) as index:
        has_vectors = index.vectors.count() > 0
        marks = (open_mark, close_mark)
        if not has_vectors or mode == "keyword":
            note = None
            if mode in ("semantic", "hybrid") and not has_vectors:
                note = (
                    f"no vectors in {index.location}: keyword search instead"
                    " (run 'litecrawl index --embed' to add them)"
                )
            hits = index.keyword(
                query, limit=limit, offset=offset, open_mark=open_mark, close_mark=close_mark
            )
            named = name_sections(index, hits, {h.resource_id for h in hits}, marks)
            return Results(named, "keyword", note)
        closest = _closest_part(query, index.vectors.model)
        chosen: Mode = mode or "hybrid"
        if not _mentioned(index, query):
            return Results([], chosen)
        depth = _depth(limit, offset)
        if chosen == "semantic":
            meaning = _by_meaning(index, query, depth)
            shown = meaning[offset : offset + limit]
            return Results(name_sections(index, shown, (), marks, closest=closest), chosen)
        words, kept = keyword_list(index, query, depth, marks)
        meaning = _by_meaning(index, query, depth, [h.resource_id for h in words])
        if kept:  # any of the words, ranked by rarity: scores scaled and summed
            fused = _fuse(words, meaning)
        else:
            fused = _fuse(words, meaning, 1.0 if len(query_words(query)) <= 1 else KEYWORD_SHARE)
        shown = fused[offset : offset + limit]
        if kept:
            shown = index.quote(shown, kept, marks)
        by_words = {h.resource_id for h in words}
        return Results(name_sections(index, shown, by_words, marks, closest=closest), chosen)


def similar(db: str | Path, url: str, *, limit: int = 10) -> list[SearchHit]:
    """The pages closest in meaning to the crawled page ``url`` (itself and its
    near-duplicates left out), closest first. Raises :class:`ConfigError` when ``url`` is not
    in the index or has no vector."""
    with open_index(str(db)) as index:
        store = index.vectors
        if store.count() == 0:
            raise ConfigError(
                f"no vectors in {index.location}: run 'litecrawl index --embed' first"
            )
        rid = index.resource_of_url(url)
        if rid is None:
            raise ConfigError(f"{url} is not in the index of {index.location} (or has no text)")
        blob = store.of_resource(rid)
        if blob is None:
            raise ConfigError(f"{url} has no vector: run 'litecrawl index --embed'")
        return _hits(index, store.nearest(from_blob(blob), limit, exclude=(rid,)))


def _by_meaning(
    index: IndexReader, query: str, depth: int, also: Sequence[int] = ()
) -> list[SearchHit]:
    """The ``depth`` pages closest to ``query``: a page with sections scored by its best
    section's cosine and :data:`PAGE_SHARE` of its own vector's (:data:`PAGE_SHARES` for
    another model's), among the
    :func:`_candidates` closest by their own vector and the resources ``also`` names (the
    keyword hits, in hybrid)."""
    store = index.vectors
    vector = load(store.model).vector(query)  # the database's model: never compared across
    if vector is None:
        return []
    pages = store.nearest(vector, _candidates(depth))
    score = {n.resource_id: n.similarity for n in pages}
    others = [rid for rid in dict.fromkeys(also) if rid not in score]
    for rid, blob in store.of_resources(others).items():
        score[rid] = float(from_blob(blob) @ vector)
    sections = store.best_sections(vector, list(score))
    share = PAGE_SHARES.get(store.model, PAGE_SHARE)
    for rid, best in sections.items():
        if rid in score:
            score[rid] = (share * score[rid] + best.similarity) / (1 + share)
    ranked = sorted(score, key=lambda rid: (-score[rid], rid))[:depth]
    return _hits(index, [Neighbour(rid, score[rid]) for rid in ranked], sections)


def _hits(
    index: IndexReader,
    found: Sequence[Neighbour],
    sections: Mapping[int, BestSection] | None = None,
) -> list[SearchHit]:
    cards = index.previews([n.resource_id for n in found])
    hits = []
    for n in found:
        title, preview = cards.get(n.resource_id, ("", ""))
        hit = index.hit(n.resource_id, n.similarity, opening(preview), title)
        best = (sections or {}).get(n.resource_id)
        if best is not None and best.heading and hit.url:
            where = section_url(hit.url, best.anchor)
            hit = replace(hit, section=best.heading, section_url=where)
        hits.append(hit)
    return hits


def _closest_part(query: str, stored: str) -> Closest:
    """Which of a merged section's parts a hit found by meaning names: the one whose vector
    (made as the crawl makes a section's: the page's title and the part's first words, by the
    model ``stored`` names) is closest to the query's."""

    def closest(title: str, parts: Sequence[str]) -> int:
        model = load(stored)
        vector = model.vector(query)
        if vector is None:
            return 0
        scores = []
        for part in parts:
            found = model.words_vector(section_words(title, part))
            scores.append(-2.0 if found is None else float(found @ vector))
        return max(range(len(parts)), key=lambda i: (scores[i], -i))

    return closest


def _mentioned(index: IndexReader, query: str) -> bool:
    """Is any word of ``query`` on some page?"""
    found = sorted(set(query_words(query)))
    if not found:
        return False
    return bool(index.keyword(" OR ".join(f'"{w}"' for w in found), limit=1))


def keyword_list(
    index: IndexReader, query: str, depth: int, marks: tuple[str, str] = ("[", "]")
) -> tuple[list[SearchHit], tuple[str, ...]]:
    """Hybrid's keyword list, ``depth`` deep, and the words it took as any of them (none:
    the query as written). A query of several plain words is read as any of them, each
    weighted by its rarity (:meth:`~litecrawl.store.index.IndexReader.any_word`: the page
    with the question's rare words comes first, with or without its common ones),
    :data:`~litecrawl.index.section_words.CANDIDATES` deep, and scored again by each page's
    best section (:func:`~litecrawl.index.section_words.by_best_section`); any other query as
    the user wrote it. Tuned on the Python documentation's questions (bench/README.md): every
    word required, the answer is often not among the hits at all. A word on more than half
    the pages is left out: bm25 gives it no weight, and matching it would rank nearly every
    page of a large index."""
    found = plain_words(query)
    open_mark, close_mark = marks
    if found is None or len(found) < 2:
        hits = index.keyword(query, limit=depth, open_mark=open_mark, close_mark=close_mark)
        return hits, ()
    total, counts = index.page_counts(found)
    kept = {word: n for word, n in counts.items() if n <= total // 2}
    if not kept:  # only common words: they are what the user wants found
        hits = index.keyword(query, limit=depth, open_mark=open_mark, close_mark=close_mark)
        return hits, ()
    weights = rarity(total, kept)
    hits = index.any_word(
        weights, limit=max(depth, CANDIDATES), open_mark=open_mark, close_mark=close_mark
    )
    return by_best_section(index, hits, weights)[:depth], tuple(kept)


def _fuse(
    words: list[SearchHit], meaning: list[SearchHit], weight: float | None = None
) -> list[SearchHit]:
    """The two lists fused (see the module doc); a hit keeps the keyword snippet (its
    matches marked) if any, and the section meaning found (for a snippet that marks no word:
    :func:`litecrawl.index.located.name_sections` decides which section a hit names).
    ``weight`` None: the scores scaled within each list and summed
    (bm25 and cosine are on different scales; with the any-word list, reciprocal-rank fusion
    put the answer lower on the Python documentation's questions); else reciprocal-rank
    fusion, the keyword list's ranks counted ``weight`` times."""
    ranks = [{h.resource_id: r for r, h in enumerate(ranked, 1)} for ranked in (words, meaning)]
    similarity = {h.resource_id: h.score for h in meaning}
    scores: dict[int, float] = {}
    shown: dict[int, SearchHit] = {}
    for share, ranked in ((weight, words), (1.0, meaning)):
        if weight is None:
            values = scaled([h.score for h in ranked])
        else:
            values = [(share or 0.0) / (RRF_K + rank) for rank in range(1, len(ranked) + 1)]
        for hit, value in zip(ranked, values, strict=True):
            scores[hit.resource_id] = scores.get(hit.resource_id, 0.0) + value
            if hit.resource_id not in shown:
                shown[hit.resource_id] = hit
            elif hit.section is not None:  # the keyword snippet, the section meaning found
                shown[hit.resource_id] = replace(
                    shown[hit.resource_id], section=hit.section, section_url=hit.section_url
                )
    never = len(shown) + 1

    def order(rid: int) -> tuple[float, bool, int, int]:
        sure = similarity.get(rid, 0.0) >= CONFIDENT
        return (-scores[rid], not sure, ranks[0].get(rid, never), ranks[1].get(rid, never))

    return [_rescored(shown[rid], scores[rid]) for rid in sorted(shown, key=order)]


def _rescored(hit: SearchHit, score: float) -> SearchHit:
    return replace(hit, score=score)


def _candidates(depth: int) -> int:
    """How many pages, closest by their own vector, have their sections read: a page whose
    one section answers may rank far down by its own vector (its first words are about
    something else); reading every section vector would cost a scan of 16 times as many."""
    return 4 * depth


def _depth(limit: int, offset: int) -> int:
    """How deep each list is read before fusion: enough for the page asked and for fusion to
    matter (a page ranked 40th by both lists beats one ranked 5th by one only)."""
    return max(50, 2 * (offset + limit))

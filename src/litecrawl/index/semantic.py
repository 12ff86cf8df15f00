"""Search by meaning and by both: ``keyword`` (FTS5's bm25, or PostgreSQL's ts_rank_cd),
``semantic`` (cosine of the embeddings), ``hybrid`` (reciprocal-rank fusion of the two), and
``similar`` (the pages closest in meaning to a crawled page).

``mode=None`` picks ``hybrid`` when the database has vectors and ``keyword`` otherwise; a
``semantic`` or ``hybrid`` search on a database without vectors runs as ``keyword`` and says so
in :attr:`Results.note`. A query none of whose words is on any page finds nothing in any mode
(the pages nearest in meaning to an unknown word are noise). Hybrid ranks by
``sum(1 / (RRF_K + rank))`` over both lists, each :func:`_depth` deep (Cormack et al.'s k = 60):
a page both lists agree on comes first, a page only one of them finds still ranks. Equal scores
(a word on one page that the semantic list does not reach, against the semantic list's first)
go to the page the semantic side is sure of (cosine >= :data:`CONFIDENT`), else to the better
keyword rank: the page with the words, unless the meaning says better. (Measured in
bench/README.md, "Hybrid ties".)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from litecrawl.errors import ConfigError
from litecrawl.index.embed import embedder, from_blob
from litecrawl.index.query import words as query_words
from litecrawl.index.vectors import Neighbour
from litecrawl.store.backends import open_index
from litecrawl.store.index import IndexReader, SearchHit

__all__ = ["CONFIDENT", "MODES", "RRF_K", "Mode", "Results", "find", "similar"]

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
RRF_K = 60
# A cosine the embedding reaches for a page that answers the query: the median best match of
# plain-word questions on the PostgreSQL documentation is 0.54, of out-of-domain words 0.2.
CONFIDENT = 0.5


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
            return Results(hits, "keyword", note)
        chosen: Mode = mode or "hybrid"
        if not _mentioned(index, query):
            return Results([], chosen)
        depth = _depth(limit, offset)
        meaning = _by_meaning(index, query, depth)
        if chosen == "semantic":
            return Results(meaning[offset : offset + limit], chosen)
        words = index.keyword(query, limit=depth, open_mark=open_mark, close_mark=close_mark)
        return Results(_fuse(words, meaning)[offset : offset + limit], chosen)


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


def _by_meaning(index: IndexReader, query: str, depth: int) -> list[SearchHit]:
    vector = embedder().vector(query)
    if vector is None:
        return []
    return _hits(index, index.vectors.nearest(vector, depth))


def _hits(index: IndexReader, found: Sequence[Neighbour]) -> list[SearchHit]:
    cards = index.previews([n.resource_id for n in found])
    hits = []
    for n in found:
        title, preview = cards.get(n.resource_id, ("", ""))
        snippet = preview if len(preview) < 200 else preview.rsplit(" ", 1)[0] + " …"
        hits.append(index.hit(n.resource_id, n.similarity, snippet, title))
    return hits


def _mentioned(index: IndexReader, query: str) -> bool:
    """Is any word of ``query`` on some page?"""
    found = sorted(set(query_words(query)))
    if not found:
        return False
    return bool(index.keyword(" OR ".join(f'"{w}"' for w in found), limit=1))


def _fuse(words: list[SearchHit], meaning: list[SearchHit]) -> list[SearchHit]:
    """Reciprocal-rank fusion (see the module doc); a hit keeps the keyword snippet (its
    matches marked) if any."""
    ranks = [{h.resource_id: r for r, h in enumerate(ranked, 1)} for ranked in (words, meaning)]
    similarity = {h.resource_id: h.score for h in meaning}
    scores: dict[int, float] = {}
    shown: dict[int, SearchHit] = {}
    for ranked in (words, meaning):
        for rank, hit in enumerate(ranked, start=1):
            scores[hit.resource_id] = scores.get(hit.resource_id, 0.0) + 1.0 / (RRF_K + rank)
            shown.setdefault(hit.resource_id, hit)
    never = len(shown) + 1

    def order(rid: int) -> tuple[float, bool, int, int]:
        sure = similarity.get(rid, 0.0) >= CONFIDENT
        return (-scores[rid], not sure, ranks[0].get(rid, never), ranks[1].get(rid, never))

    return [_rescored(shown[rid], scores[rid]) for rid in sorted(shown, key=order)]


def _rescored(hit: SearchHit, score: float) -> SearchHit:
    return SearchHit(hit.url, hit.title, hit.snippet, score, hit.other_urls, hit.resource_id)


def _depth(limit: int, offset: int) -> int:
    """How deep each list is read before fusion: enough for the page asked and for fusion to
    matter (a page ranked 40th by both lists beats one ranked 5th by one only)."""
    return max(50, 2 * (offset + limit))

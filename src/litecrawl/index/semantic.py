"""Search by meaning and by both: ``keyword`` (FTS5 bm25), ``semantic`` (cosine of the
embeddings), ``hybrid`` (reciprocal-rank fusion of the two), and ``similar`` (the pages closest
in meaning to a crawled page).

``mode=None`` picks ``hybrid`` when the database has vectors and ``keyword`` otherwise; a
``semantic`` or ``hybrid`` search on a database without vectors runs as ``keyword`` and says so
in :attr:`Results.note`. Hybrid ranks by ``sum(1 / (RRF_K + rank))`` over both lists, each
:func:`_depth` deep (Cormack et al.'s k = 60): a page both lists agree on comes first, a page
only one of them finds still ranks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from litecrawl.errors import ConfigError, FrontierError
from litecrawl.index.embed import embedder, from_blob
from litecrawl.index.vectors import Neighbour
from litecrawl.store.sqlite.frontier import connect
from litecrawl.store.sqlite.search import SearchHit, _hit, search
from litecrawl.store.sqlite.vectors import SQLiteVectors, resource_of_url, resource_previews

__all__ = ["MODES", "RRF_K", "Mode", "Results", "find", "similar"]

Mode = Literal["keyword", "semantic", "hybrid"]
MODES: tuple[Mode, ...] = get_args(Mode)
RRF_K = 60


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
    """Ranked hits for ``query`` in ``mode`` (see the module doc), best first."""
    if mode is not None and mode not in MODES:
        raise ConfigError(f"unknown search mode {mode!r}: use one of {', '.join(MODES)}")
    path = _existing(db)
    with _open(path) as conn:
        has_vectors = SQLiteVectors(conn).count() > 0
    if not has_vectors or mode == "keyword":
        note = None
        if mode in ("semantic", "hybrid") and not has_vectors:
            note = (
                f"no vectors in {db}: keyword search instead"
                " (run 'litecrawl index --embed' to add them)"
            )
        hits = search(
            path, query, limit=limit, offset=offset, open_mark=open_mark, close_mark=close_mark
        )
        return Results(hits, "keyword", note)
    chosen: Mode = mode or "hybrid"
    depth = _depth(limit, offset)
    with _open(path) as conn:
        meaning = _by_meaning(conn, query, depth)
    if chosen == "semantic":
        return Results(meaning[offset : offset + limit], chosen)
    words = search(path, query, limit=depth, open_mark=open_mark, close_mark=close_mark)
    return Results(_fuse(words, meaning)[offset : offset + limit], chosen)


def similar(db: str | Path, url: str, *, limit: int = 10) -> list[SearchHit]:
    """The pages closest in meaning to the crawled page ``url`` (itself and its
    near-duplicates left out), closest first. Raises :class:`ConfigError` when ``url`` is not
    in the index or has no vector."""
    path = _existing(db)
    with _open(path) as conn:
        store = SQLiteVectors(conn)
        if store.count() == 0:
            raise ConfigError(f"no vectors in {db}: run 'litecrawl index --embed' first")
        rid = resource_of_url(conn, url)
        if rid is None:
            raise ConfigError(f"{url} is not in the index of {db} (or has no text)")
        blob = store.of_resource(rid)
        if blob is None:
            raise ConfigError(f"{url} has no vector: run 'litecrawl index --embed'")
        return _hits(conn, store.nearest(from_blob(blob), limit, exclude=(rid,)))


def _by_meaning(conn: sqlite3.Connection, query: str, depth: int) -> list[SearchHit]:
    vector = embedder().vector(query)
    if vector is None:
        return []
    return _hits(conn, SQLiteVectors(conn).nearest(vector, depth))


def _hits(conn: sqlite3.Connection, found: Sequence[Neighbour]) -> list[SearchHit]:
    cards = resource_previews(conn, [n.resource_id for n in found])
    hits = []
    for n in found:
        title, preview = cards.get(n.resource_id, ("", ""))
        snippet = preview if len(preview) < 200 else preview.rsplit(" ", 1)[0] + " …"
        hits.append(_hit(conn, n.resource_id, n.similarity, snippet, title))
    return hits


def _fuse(words: list[SearchHit], meaning: list[SearchHit]) -> list[SearchHit]:
    """Reciprocal-rank fusion; a hit keeps the keyword snippet (its matches marked) if any."""
    scores: dict[int, float] = {}
    shown: dict[int, SearchHit] = {}
    for ranked in (words, meaning):
        for rank, hit in enumerate(ranked, start=1):
            scores[hit.resource_id] = scores.get(hit.resource_id, 0.0) + 1.0 / (RRF_K + rank)
            shown.setdefault(hit.resource_id, hit)
    order = sorted(scores, key=lambda rid: (-scores[rid], rid))
    return [_rescored(shown[rid], scores[rid]) for rid in order]


def _rescored(hit: SearchHit, score: float) -> SearchHit:
    return SearchHit(hit.url, hit.title, hit.snippet, score, hit.other_urls, hit.resource_id)


def _depth(limit: int, offset: int) -> int:
    """How deep each list is read before fusion: enough for the page asked and for fusion to
    matter (a page ranked 40th by both lists beats one ranked 5th by one only)."""
    return max(50, 2 * (offset + limit))


def _existing(db: str | Path) -> Path:
    path = Path(db)
    if not path.is_file():
        raise ConfigError(f"no database at {db}")
    return path


class _open:
    """A read connection, closed on exit, SQLite errors as :class:`FrontierError`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        self.conn = connect(self.path)
        return self.conn

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        assert self.conn is not None
        self.conn.close()
        if isinstance(exc, sqlite3.Error):
            raise FrontierError(f"cannot search {self.path}: {exc}") from exc

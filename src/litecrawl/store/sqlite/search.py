"""Full-text search over the index: ranked, highlighted, one hit per resource.

Queries use SQLite FTS5 syntax: words (all must match), ``"exact phrase"``, ``prefix*``,
``OR``/``NOT``, ``title:word``. A query FTS5 rejects (stray quotes, punctuation such as
``c++`` or ``foo-bar``) is retried with every word as a quoted phrase, so user input never
raises a syntax error. Ranking is FTS5's bm25 with title matches weighted
:data:`TITLE_WEIGHT` times text matches.

Near-duplicate URLs share one resource, so each resource is returned once, under the best of its
URLs (:func:`best_url`: the pages' ``rel=canonical`` target when it is one of them, else the
shortest URL without a query) with the others in ``other_urls``.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from litecrawl.errors import ConfigError, FrontierError
from litecrawl.store.sqlite.frontier import connect

__all__ = ["TITLE_WEIGHT", "SearchHit", "best_url", "search"]

TITLE_WEIGHT = 10.0
_TEXT_WEIGHT = 1.0
_PREFIX_WORD = re.compile(r"(.*?)(\*?)")

_QUERY = """
SELECT r.id, -bm25(resources_fts, :title_weight, :text_weight) AS score,
       snippet(resources_fts, 1, :open, :close, :ellipsis, :tokens) AS snippet,
       r.title
FROM resources_fts JOIN resources AS r ON r.id = resources_fts.rowid
WHERE resources_fts MATCH :query
  AND EXISTS (SELECT 1 FROM documents AS d WHERE d.resource_id = r.id)
ORDER BY score DESC, r.id
LIMIT :limit OFFSET :offset
"""
_URLS = "SELECT url, title, canonical FROM documents WHERE resource_id = ? ORDER BY crawled_at, id"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One resource that matched: its canonical URL, title and a snippet of its text."""

    url: str  # the best URL of the resource (see best_url)
    title: str
    snippet: str  # matches wrapped in the open/close markers
    score: float  # bm25 relevance, higher is better (FTS5's bm25() is negated)
    other_urls: tuple[str, ...]  # the other URLs with the same (or nearly the same) text
    resource_id: int


def search(
    db: str | Path,
    query: str,
    *,
    limit: int = 10,
    offset: int = 0,
    open_mark: str = "[",
    close_mark: str = "]",
    ellipsis: str = "…",
    snippet_tokens: int = 16,
) -> list[SearchHit]:
    """Ranked hits for ``query`` in the index of the SQLite database ``db`` (best first).

    ``limit``/``offset`` page through the hits; ``open_mark``/``close_mark`` wrap each matched
    term in the snippet, which holds about ``snippet_tokens`` words (``ellipsis`` marks cuts).
    Raises :class:`~litecrawl.errors.ConfigError` if ``db`` does not exist and
    :class:`~litecrawl.errors.FrontierError` if it cannot be read as a litecrawl index.
    """
    path = Path(db)
    if not path.is_file():
        raise ConfigError(f"no database at {db}")
    if not query.strip() or limit <= 0:
        return []
    params: dict[str, object] = {
        "title_weight": TITLE_WEIGHT,
        "text_weight": _TEXT_WEIGHT,
        "open": open_mark,
        "close": close_mark,
        "ellipsis": ellipsis,
        "tokens": max(1, min(snippet_tokens, 64)),
        "limit": limit,
        "offset": max(0, offset),
    }
    conn = connect(path)
    try:
        rows = _match(conn, query, params)
        return [_hit(conn, *row) for row in rows]
    except sqlite3.Error as exc:
        raise FrontierError(f"cannot search {db}: {exc}") from exc
    finally:
        conn.close()


def _match(
    conn: sqlite3.Connection, query: str, params: dict[str, object]
) -> list[tuple[int, float, str, str]]:
    try:
        return conn.execute(_QUERY, {**params, "query": query}).fetchall()
    except sqlite3.OperationalError as exc:
        if not _is_query_error(exc):
            raise
    quoted = _quote_words(query)
    if not quoted:
        return []
    try:
        return conn.execute(_QUERY, {**params, "query": quoted}).fetchall()
    except sqlite3.OperationalError as exc:
        if _is_query_error(exc):
            return []
        raise


def _is_query_error(exc: sqlite3.OperationalError) -> bool:
    message = str(exc)
    return (
        "fts5" in message
        or "syntax error" in message
        or "no such column" in message
        or "unknown special query" in message
        or "unterminated string" in message
    )


def _quote_words(query: str) -> str:
    """Every whitespace-separated word as an FTS5 string (``"`` doubled), keeping a trailing
    ``*`` as a prefix query: ``c++ foo-bar data*`` -> ``"c++" "foo-bar" "data"*``."""
    parts: list[str] = []
    for word in query.split():
        match = _PREFIX_WORD.fullmatch(word)
        assert match is not None
        body, star = match.group(1).replace('"', ""), match.group(2)
        if body:
            parts.append(f'"{body}"{star}')
    return " ".join(parts)


def _hit(
    conn: sqlite3.Connection, resource_id: int, score: float, snippet: str, title: str
) -> SearchHit:
    rows: list[tuple[str, str, str | None]] = conn.execute(_URLS, (resource_id,)).fetchall()
    urls = [url for url, _, _ in rows]
    best = best_url(urls, [canonical for _, _, canonical in rows])
    titles = {url: t for url, t, _ in rows}
    return SearchHit(
        url=best,
        title=titles[best] or title,
        snippet=snippet or "",
        score=float(score),
        other_urls=tuple(url for url in urls if url != best),
        resource_id=resource_id,
    )


def best_url(urls: Sequence[str], canonicals: Sequence[str | None] = ()) -> str:
    """The address to show for URLs with the same text (``urls`` in crawl order, non-empty).

    The ``rel=canonical`` its pages name, when it is one of ``urls`` (the one most of them name,
    the earliest on a tie); else the shortest URL without a query string; else the shortest.
    Ties go to the earliest crawled.
    """
    known = set(urls)
    named = Counter(c for c in canonicals if c is not None and c in known)
    if named:
        most = max(named.values())
        return next(u for u in urls if named.get(u) == most)
    plain = [u for u in urls if not urlsplit(u).query]
    return min(plain or urls, key=len)

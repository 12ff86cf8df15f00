"""Full-text search over the index: ranked, highlighted, one hit per resource.

Queries use SQLite FTS5 syntax: words (all must match), ``"exact phrase"``, ``prefix*``,
``OR``/``NOT``, ``title:word``. A query FTS5 rejects (stray quotes, punctuation such as
``c++`` or ``foo-bar``) is retried with every word as a quoted phrase, so user input never
raises a syntax error. Ranking is FTS5's bm25 with title matches weighted
:data:`TITLE_WEIGHT` times text matches.

Near-duplicate URLs share one resource, so each resource is returned once: under its canonical
URL (the earliest-crawled document) with the others in ``other_urls``.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from litecrawl.errors import ConfigError, FrontierError
from litecrawl.frontier.sqlite import connect

__all__ = ["TITLE_WEIGHT", "SearchHit", "search"]

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
_URLS = "SELECT url, title FROM documents WHERE resource_id = ? ORDER BY crawled_at, id"


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One resource that matched: its canonical URL, title and a snippet of its text."""

    url: str  # canonical: the URL of the earliest-crawled document of this resource
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
    urls = conn.execute(_URLS, (resource_id,)).fetchall()
    canonical_url, canonical_title = urls[0]
    return SearchHit(
        url=canonical_url,
        title=canonical_title or title,
        snippet=snippet or "",
        score=float(score),
        other_urls=tuple(url for url, _ in urls[1:]),
        resource_id=resource_id,
    )

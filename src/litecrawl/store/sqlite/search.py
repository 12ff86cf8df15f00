"""Full-text search over the SQLite index (FTS5): ranked, highlighted, one hit per resource.

Queries use FTS5's syntax: words (all must match), ``"exact phrase"``, ``prefix*``,
``OR``/``NOT``, ``title:word``. A query FTS5 rejects (stray quotes, punctuation such as
``c++`` or ``foo-bar``) is retried with every word as a quoted phrase, so user input never
raises a syntax error. Ranking is FTS5's bm25 with title matches weighted
:data:`~litecrawl.store.index.TITLE_WEIGHT` times text matches. See
:mod:`litecrawl.store.index` for the interface and the choice of each hit's URL.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from litecrawl.errors import ConfigError, FrontierError
from litecrawl.store.dialect import SQLITE
from litecrawl.store.documents import DocumentFilter, documents_query, fetched_query
from litecrawl.store.index import TITLE_WEIGHT, IndexReader, SearchHit, make_hit, reason
from litecrawl.store.sqlite.connection import connect, connect_readonly
from litecrawl.store.sqlite.failures import fatal
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.store.sqlite.vectors import SQLiteVectors, resource_of_url, resource_previews

__all__ = ["SQLiteIndex"]

_TEXT_WEIGHT = 1.0
_BATCH = 500  # rows per fetchmany when streaming
T = TypeVar("T")
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
# how many pages hold the word, counted no further than the bound (a word on every page of a
# large index would be a scan of all of them)
_PAGES_WITH = """
SELECT count(*) FROM (SELECT 1 FROM resources_fts WHERE resources_fts MATCH ? LIMIT ?)
"""
_TEXTS = "SELECT id, text FROM resources WHERE id IN (SELECT value FROM json_each(?))"
_URLS = "SELECT url, title, canonical FROM documents WHERE resource_id = ? ORDER BY crawled_at, id"


class SQLiteIndex(IndexReader):
    driver_errors = (sqlite3.Error,)
    scores_by_bm25 = True

    def __init__(self, path: str | Path, writable: bool = False) -> None:
        self.location = str(path)
        self.writable = writable
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise FrontierError(f"{self.location}: the index is not open")
        return self._conn

    def open(self) -> None:
        if not Path(self.location).is_file():
            raise ConfigError(f"no database at {self.location}")
        self._conn = connect(self.location) if self.writable else connect_readonly(self.location)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def upgrade(self) -> None:
        self._read(lambda: migrate(self.conn))

    @property
    def vectors(self) -> SQLiteVectors:
        return SQLiteVectors(self.conn)

    def keyword(
        self,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        open_mark: str = "[",
        close_mark: str = "]",
        ellipsis: str = "…",
        snippet_tokens: int = 16,
    ) -> list[SearchHit]:
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
        try:
            rows = _match(self.conn, query, params)
            return [self.hit(*row) for row in rows]
        except sqlite3.Error as exc:
            raise _failed(self.location, exc, "cannot search") from exc

    def any_word(
        self,
        weights: Mapping[str, float],
        *,
        limit: int = 10,
        open_mark: str = "[",
        close_mark: str = "]",
    ) -> list[SearchHit]:
        # bm25 weighs each word by its rarity itself
        asked = " OR ".join('"' + word.replace('"', '""') + '"' for word in weights)
        return self.keyword(asked, limit=limit, open_mark=open_mark, close_mark=close_mark)

    def page_counts(self, words: Sequence[str]) -> tuple[int, dict[str, int]]:
        def read() -> tuple[int, dict[str, int]]:
            total = int(self.conn.execute("SELECT count(*) FROM resources").fetchone()[0])
            counts = {}
            for word in dict.fromkeys(words):
                quoted = '"' + word.replace('"', '""') + '"'
                row = self.conn.execute(_PAGES_WITH, (quoted, total // 2 + 1)).fetchone()
                counts[word] = int(row[0])
            return total, counts

        return self._read(read)

    def resource_of_url(self, url: str) -> int | None:
        return self._read(lambda: resource_of_url(self.conn, url))

    def previews(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return self._read(lambda: resource_previews(self.conn, ids))

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        def read() -> dict[int, str]:
            rows = self.conn.execute(_TEXTS, (json.dumps(list(ids)),))
            return {int(rid): str(text or "") for rid, text in rows}

        return self._read(read)

    def hit(self, resource_id: int, score: float, snippet: str, title: str) -> SearchHit:
        rows = self._read(lambda: self.conn.execute(_URLS, (resource_id,)).fetchall())
        return make_hit(resource_id, score, snippet, title, rows)

    def documents(
        self,
        columns: Sequence[str],
        flt: DocumentFilter,
        with_text: bool,
        text_as_json: bool = False,
    ) -> Iterator[tuple[object, ...]]:
        sql, params = documents_query(columns, flt, with_text, SQLITE, text_as_json)
        yield from self._stream(sql, tuple(params))

    def fetched_urls(self, since: int | None, flt: DocumentFilter) -> Iterator[str]:
        sql, params = fetched_query(since, flt, "?")
        for (url,) in self._stream(sql, tuple(params)):
            yield str(url)

    def _stream(self, sql: str, params: tuple[object, ...]) -> Iterator[tuple[object, ...]]:
        try:
            cursor = self.conn.execute(sql, params)
            while rows := cursor.fetchmany(_BATCH):
                yield from rows
        except sqlite3.Error as exc:
            raise _failed(self.location, exc, "cannot read") from exc

    def _read(self, work: Callable[[], T]) -> T:
        try:
            return work()
        except sqlite3.Error as exc:
            raise _failed(self.location, exc, "cannot search") from exc


def _failed(location: str, exc: sqlite3.Error, doing: str) -> FrontierError:
    return fatal(location, exc) or FrontierError(f"{doing} {location}: {reason(exc)}")


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

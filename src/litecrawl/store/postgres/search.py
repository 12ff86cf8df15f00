"""Full-text search over the PostgreSQL index: the ``tsvector`` of each resource (title weight A,
text weight B, the ``simple`` configuration), ranked with ``ts_rank_cd``, snippets from
``ts_headline``. See :mod:`litecrawl.index.reader` for the interface.

The query syntax is the SQLite index's (FTS5's), translated to a ``tsquery`` by
:func:`to_tsquery_text`: words are ANDed, ``"a phrase"`` becomes ``a <-> phrase``, ``word*`` a
prefix (``:*``), ``OR`` ``|``, ``NOT`` ``& !``, ``title:word`` a title-only match (weight A),
parentheses group. Every term is quoted, so PostgreSQL's own parser splits it as it split the
text (``foo-bar`` matches as in the index); a query that still does not parse is retried with
every word quoted and ANDed, so user input never raises a syntax error.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg

from litecrawl.errors import FrontierError
from litecrawl.index.reader import TITLE_WEIGHT, IndexReader, SearchHit, make_hit
from litecrawl.store.postgres.migrations import migrate
from litecrawl.store.postgres.vectors import PostgresVectors
from litecrawl.urls import shown_location

__all__ = ["PostgresIndex", "to_tsquery_text"]

T = TypeVar("T")
_CONNECT_TIMEOUT = 10
_BATCH = 500  # rows per round trip when streaming
# ts_rank_cd's weights for D, C, B (text), A (title): a title match counts TITLE_WEIGHT times;
# normalization 1 divides by 1 + log(length), as bm25 favours short documents
_WEIGHTS = [0.0, 0.0, 1.0 / TITLE_WEIGHT, 1.0]
_RANKED = """
SELECT r.id, ts_rank_cd(%(weights)s::float4[], r.tsv, q, 1) AS score, r.title
FROM resources AS r, to_tsquery('simple', %(query)s) AS q
WHERE r.tsv @@ q AND EXISTS (SELECT 1 FROM documents AS d WHERE d.resource_id = r.id)
ORDER BY score DESC, r.id
LIMIT %(limit)s OFFSET %(offset)s
"""
# ts_headline reads its text as HTML and drops what looks like a tag ("<script>..."): the
# angle brackets go in as two private characters and come back in Python
_SNIPPETS = """
SELECT r.id, ts_headline('simple', translate(r.text, '<>', %(private)s),
                         to_tsquery('simple', %(query)s), %(options)s)
FROM resources AS r WHERE r.id = ANY(%(ids)s)
"""
_PRIVATE = "\x0e\x0f"
_BRACKETS = {0x0E: "<", 0x0F: ">"}
_URLS = "SELECT url, title, canonical FROM documents WHERE resource_id = %s ORDER BY crawled_at, id"
_TOKEN = re.compile(r'\s*(?:(\()|(\))|("[^"]*"?\*?)|([^\s()"]+))')
_COLUMNS = {"title": "A", "text": "B"}


class PostgresIndex(IndexReader):
    driver_errors = (psycopg.Error,)

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)
        self._conn: psycopg.Connection[Any] | None = None

    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise FrontierError(f"{self.location}: the index is not open")
        return self._conn

    def open(self) -> None:
        try:
            self._conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
            )
        except psycopg.Error as exc:
            raise FrontierError(f"cannot open PostgreSQL database {self.location}: {exc}") from exc

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def upgrade(self) -> None:
        try:
            asyncio.run(_migrate(self.url))
        except psycopg.Error as exc:
            raise FrontierError(f"cannot upgrade {self.location}: {exc}") from exc

    @property
    def vectors(self) -> PostgresVectors:
        return PostgresVectors(self.conn)

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
        params = {"weights": _WEIGHTS, "limit": limit, "offset": max(0, offset)}
        words = max(2, min(snippet_tokens, 64))
        options = (
            f'StartSel="{_quoted(open_mark)}", StopSel="{_quoted(close_mark)}", '
            f"MaxWords={words}, MinWords={max(1, words // 2)}, MaxFragments=1, "
            f'FragmentDelimiter="{_quoted(ellipsis)}"'
        )
        for text in (to_tsquery_text(query), _all_words(query)):
            if not text:
                continue
            try:
                with self.conn.transaction():
                    rows = self.conn.execute(_RANKED, {**params, "query": text}).fetchall()
                    ids = [rid for rid, _, _ in rows]
                    found = self.conn.execute(
                        _SNIPPETS,
                        {"query": text, "options": options, "ids": ids, "private": _PRIVATE},
                    ).fetchall()
                    snippets = {rid: str(snippet).translate(_BRACKETS) for rid, snippet in found}
            except psycopg.errors.SyntaxError:
                continue  # not a query PostgreSQL takes: again with every word quoted
            except psycopg.Error as exc:
                raise FrontierError(f"cannot search {self.location}: {exc}") from exc
            return [
                self.hit(rid, score, _joined(snippets.get(rid, ""), open_mark, close_mark), title)
                for rid, score, title in rows
            ]
        return []

    def resource_of_url(self, url: str) -> int | None:
        rows = self._read(
            lambda: self.conn.execute(
                "SELECT resource_id FROM documents WHERE url = %s", (url,)
            ).fetchall()
        )
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def previews(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        rows = self._read(
            lambda: self.conn.execute(
                "SELECT id, title, left(text, 200) FROM resources WHERE id = ANY(%s)", (list(ids),)
            ).fetchall()
        )
        return {int(rid): (str(title or ""), str(text)) for rid, title, text in rows}

    def hit(self, resource_id: int, score: float, snippet: str, title: str) -> SearchHit:
        rows = self._read(lambda: self.conn.execute(_URLS, (resource_id,)).fetchall())
        return make_hit(resource_id, score, snippet, title, rows)

    def documents(
        self, columns: Sequence[str], since: str | None, with_text: bool
    ) -> Iterator[tuple[object, ...]]:
        names = ", ".join(f"d.{name}" for name in columns)
        sql = f"SELECT {names}{', r.text' if with_text else ''} FROM documents AS d"
        if with_text:
            sql += " LEFT JOIN resources AS r ON r.id = d.resource_id"
        params: tuple[str, ...] = ()
        if since is not None:
            sql += " WHERE d.updated_at >= %s"
            params = (since,)
        yield from self._stream(sql + " ORDER BY d.id", params)

    def fetched_urls(self, since: int | None) -> Iterator[str]:
        sql = (
            "SELECT norm_url FROM pages WHERE last_crawl_time IS NOT NULL"
            " AND status BETWEEN 200 AND 299"
        )
        params: tuple[int, ...] = ()
        if since is not None:
            sql += " AND last_crawl_time >= %s"
            params = (since,)
        for (url,) in self._stream(sql + " ORDER BY last_crawl_time, norm_url", params):
            yield str(url)

    def _stream(self, sql: str, params: tuple[object, ...]) -> Iterator[tuple[object, ...]]:
        """A server-side cursor (in its own transaction): rows come a batch at a time."""
        try:
            with self.conn.transaction(), self.conn.cursor(name="litecrawl_stream") as cur:
                cur.itersize = _BATCH
                cur.execute(sql.encode(), params)
                yield from cur
        except psycopg.Error as exc:
            raise FrontierError(f"cannot read {self.location}: {exc}") from exc

    def _read(self, work: Callable[[], T]) -> T:
        try:
            return work()
        except psycopg.Error as exc:
            raise FrontierError(f"cannot search {self.location}: {exc}") from exc


def to_tsquery_text(query: str) -> str:
    """Our (FTS5's) query syntax as ``to_tsquery`` text; '' when nothing is left to search."""
    out: list[str] = []
    pending = "&"  # the operator before the next operand
    for opening, closing, phrase, word in _TOKEN.findall(query):
        if closing:
            out.append(")")
            continue
        if word in ("AND", "OR", "NOT"):
            pending = {"AND": "&", "OR": "|", "NOT": "& !"}[word]
            continue
        if opening:
            operand = "("
        elif phrase:
            star = phrase.endswith("*")
            body = phrase.rstrip("*").strip('"')
            operand = _term(body, star, None)
        else:
            column, sep, rest = word.partition(":")
            weight = _COLUMNS.get(column.lower()) if sep and rest else None
            text = rest if weight else word
            operand = _term(text.rstrip("*"), text.endswith("*"), weight)
        if not operand:
            continue
        if out and out[-1] != "(":
            out.append(pending)
        elif pending == "& !":
            out.append("!")
        out.append(operand)
        pending = "&"
    return " ".join(out)


def _term(text: str, prefix: bool, weight: str | None) -> str:
    """One quoted operand (PostgreSQL's parser splits it as it split the text), with its prefix
    mark and its weight (column)."""
    if not text.strip():
        return ""
    marks = ("*" if prefix else "") + (weight or "")
    return f"'{_quoted_term(text)}'" + (f":{marks}" if marks else "")


def _all_words(query: str) -> str:
    """Every word quoted and ANDed (the retry for a query that does not parse)."""
    words = [w.strip('"()') for w in query.split()]
    return " & ".join(
        _term(w.rstrip("*"), w.endswith("*"), None) for w in words if w.strip("*").strip()
    )


def _quoted_term(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "''")


def _quoted(option: str) -> str:
    return option.replace('"', "")


def _joined(snippet: str, open_mark: str, close_mark: str) -> str:
    """ts_headline marks each word of a phrase; FTS5 marks the phrase whole: as FTS5 does,
    neighbouring marked words become one mark."""
    return snippet.replace(f"{close_mark} {open_mark}", " ")


async def _migrate(url: str) -> None:
    conn = await psycopg.AsyncConnection.connect(
        url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
    )
    async with conn:
        await migrate(conn)

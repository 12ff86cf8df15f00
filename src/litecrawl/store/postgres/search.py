"""Full-text search over the PostgreSQL index: the ``tsvector`` of each resource (title weight A,
text weight B) ranked with ``ts_rank_cd``. See :mod:`litecrawl.store.index` for the interface.

The index holds each text's words as SQLite's FTS5 splits them (built by the analysis worker:
:mod:`litecrawl.index.tsvector`), and the query is read as FTS5 reads it
(:mod:`litecrawl.index.query`: the same phrases, prefixes, column filters, operators and
precedence, the same retry with every word quoted), then written as a ``tsquery`` of the same
folded words taken as they are (no text-search parser re-reads them, so query and index agree
whatever the server's locale): a phrase ``a <-> b`` (in one column, as FTS5's phrases are),
``word:*`` a prefix, ``title:word`` a title-only match (weight A), ``NOT`` ``& !``. So both
backends match the same documents. Snippets are made as FTS5 makes them
(:mod:`litecrawl.index.snippet`): ``ts_headline`` re-reads the text with PostgreSQL's parser,
which would not mark ``example`` in ``www.example.com`` nor put an ellipsis where it cuts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import psycopg

from litecrawl.errors import FrontierError
from litecrawl.index.query import (
    And,
    Node,
    Or,
    Phrase,
    QuerySyntaxError,
    fallback,
    highlighted,
    parse,
)
from litecrawl.index.snippet import snippet
from litecrawl.index.tsvector import MAX_WORD_BYTES
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.documents import DocumentFilter, documents_query, fetched_query
from litecrawl.store.index import TITLE_WEIGHT, IndexReader, SearchHit, make_hit, reason
from litecrawl.store.postgres.connection import connect, migrate_database
from litecrawl.store.postgres.vectors import PostgresVectors
from litecrawl.urls import shown_location

__all__ = ["PostgresIndex", "translated"]

T = TypeVar("T")
_BATCH = 500  # rows per round trip when streaming
# ts_rank_cd's weights for D, C, B (text), A (title): a title match counts TITLE_WEIGHT times;
# normalization 1 divides by 1 + log(length), as bm25 favours short documents
_WEIGHTS = [0.0, 0.0, 1.0 / TITLE_WEIGHT, 1.0]
_RANKED = """
SELECT r.id, ts_rank_cd(%(weights)s::float4[], r.tsv, q, 1) AS score, r.title
FROM resources AS r, CAST(%(query)s AS tsquery) AS q
WHERE r.tsv @@ q AND EXISTS (SELECT 1 FROM documents AS d WHERE d.resource_id = r.id)
ORDER BY score DESC, r.id
LIMIT %(limit)s OFFSET %(offset)s
"""
# any of the words, each weighted by its rarity (the caller's weights: ts_rank_cd has no IDF)
# times ts_rank_cd's count of it (title A, text B; over 1 + log of the length), as bm25 sums
# its words' scores (ts_rank, which saturates, or other normalizations ranked Python's
# questions lower: bench/README.md)
_ANY_WORD = """
SELECT r.id, {score} AS score, r.title
FROM resources AS r, CAST(%(query)s AS tsquery) AS q
WHERE r.tsv @@ q AND EXISTS (SELECT 1 FROM documents AS d WHERE d.resource_id = r.id)
ORDER BY score DESC, r.id
LIMIT %(limit)s
"""
_TEXTS = "SELECT id, text FROM resources WHERE id = ANY(%s)"
# how many pages hold the word, counted no further than the bound (as SQLite's index counts)
_PAGES_WITH = """
SELECT count(*) FROM (SELECT 1 FROM resources WHERE tsv @@ CAST(%s AS tsquery) LIMIT %s) AS t
"""
_URLS = "SELECT url, title, canonical FROM documents WHERE resource_id = %s ORDER BY crawled_at, id"
_COLUMNS = {"title": "title", "text": "text"}  # the query's column names
_WEIGHT_OF = {"title": "A", "text": "B"}


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
        # one connection held: results are streamed through its server-side cursors
        self._conn = connect(self.url)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def upgrade(self) -> None:
        migrate_database(self.url)

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
        tsquery, phrases = translated(query)
        if not tsquery or limit <= 0:
            return []
        params = {"weights": _WEIGHTS, "limit": limit, "offset": max(0, offset), "query": tsquery}
        marks = (open_mark, close_mark, ellipsis)
        return self._ranked(_RANKED, params, phrases, marks, snippet_tokens)

    def any_word(
        self,
        weights: Mapping[str, float],
        *,
        limit: int = 10,
        open_mark: str = "[",
        close_mark: str = "]",
    ) -> list[SearchHit]:
        words = list(weights)
        if not words or limit <= 0:
            return []
        tsquery, _ = translated(" OR ".join(_quoted(word) for word in words))
        score = " + ".join(
            f"%(w{i})s * ts_rank_cd(%(weights)s::float4[], r.tsv, CAST(%(q{i})s AS tsquery), 1)"
            for i in range(len(words))
        )
        params: dict[str, object] = {"weights": _WEIGHTS, "limit": limit, "query": tsquery}
        for i, word in enumerate(words):
            params[f"w{i}"] = weights[word]
            params[f"q{i}"] = _lexeme(word, False, "")
        sql = _ANY_WORD.replace("{score}", score)
        # no snippets: made in Python (index/snippet.py), 100 would cost seconds; quote() makes
        # those of the hits shown
        return self._ranked(sql, params, [], (open_mark, close_mark, "…"), 0)

    def quote(
        self, hits: Sequence[SearchHit], words: Sequence[str], marks: tuple[str, str]
    ) -> list[SearchHit]:
        wanted = [h.resource_id for h in hits if not h.snippet]
        if not wanted:
            return list(hits)
        texts = self.texts(wanted)
        _, phrases = translated(" OR ".join(_quoted(word) for word in words))
        shown = {"open_mark": marks[0], "close_mark": marks[1], "ellipsis": "…"}
        return [
            replace(h, snippet=snippet(texts.get(h.resource_id, ""), phrases, size=16, **shown))
            if h.resource_id in texts and not h.snippet
            else h
            for h in hits
        ]

    def _ranked(
        self,
        sql: str,
        params: Mapping[str, object],
        phrases: list[Phrase],
        marks: tuple[str, str, str],
        snippet_tokens: int,
    ) -> list[SearchHit]:
        """The rows of ``sql`` as hits, with snippets of ``snippet_tokens`` words (none: 0)."""
        try:
            with self.conn.transaction():
                rows = self.conn.execute(sql, params).fetchall()
                ids = [rid for rid, _, _ in rows] if snippet_tokens else []
                texts = dict(self.conn.execute(_TEXTS, (ids,)).fetchall()) if ids else {}
        except psycopg.Error as exc:
            raise FrontierError(f"cannot search {self.location}: {reason(exc)}") from exc
        if not snippet_tokens:
            return [self.hit(rid, score, "", title) for rid, score, title in rows]
        size = max(1, min(snippet_tokens, 64))
        shown = {"open_mark": marks[0], "close_mark": marks[1], "ellipsis": marks[2]}
        return [
            self.hit(rid, score, snippet(texts.get(rid) or "", phrases, size=size, **shown), title)
            for rid, score, title in rows
        ]

    def page_counts(self, words: Sequence[str]) -> tuple[int, dict[str, int]]:
        def read() -> tuple[int, dict[str, int]]:
            (total,) = self.conn.execute("SELECT count(*) FROM resources").fetchall()[0]
            counts = {}
            for word in dict.fromkeys(words):
                bound = int(total) // 2 + 1
                rows = self.conn.execute(_PAGES_WITH, (_lexeme(word, False, ""), bound)).fetchall()
                counts[word] = int(rows[0][0])
            return int(total), counts

        return self._read(read)

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

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        rows = self._read(lambda: self.conn.execute(_TEXTS, (list(ids),)).fetchall())
        return {int(rid): str(text or "") for rid, text in rows}

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
        sql, params = documents_query(columns, flt, with_text, POSTGRES, text_as_json)
        yield from self._stream(sql, tuple(params))

    def fetched_urls(self, since: int | None, flt: DocumentFilter) -> Iterator[str]:
        sql, params = fetched_query(since, flt, "%s")
        for (url,) in self._stream(sql, tuple(params)):
            yield str(url)

    def _stream(self, sql: str, params: tuple[object, ...]) -> Iterator[tuple[object, ...]]:
        """A server-side cursor (in its own transaction): rows come a batch at a time."""
        try:
            with self.conn.transaction(), self.conn.cursor(name="litecrawl_stream") as cur:
                cur.itersize = _BATCH
                cur.execute(sql.encode(), params)
                yield from cur
        except psycopg.Error as exc:
            raise FrontierError(f"cannot read {self.location}: {reason(exc)}") from exc

    def _read(self, work: Callable[[], T]) -> T:
        try:
            return work()
        except psycopg.Error as exc:
            raise FrontierError(f"cannot search {self.location}: {reason(exc)}") from exc


def translated(query: str) -> tuple[str, list[Phrase]]:
    """``query`` as ``to_tsquery`` text ('' when nothing is left to search) and the phrases its
    snippets mark."""
    try:
        node = parse(query, _COLUMNS)
    except QuerySyntaxError:
        node = fallback(query)  # as FTS5's index retries it
    if node is None:
        return "", []
    return _tsquery(node), highlighted(node, "text")


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _tsquery(node: Node) -> str:
    if isinstance(node, Phrase):
        return _phrase(node)
    left, right = _tsquery(node.left), _tsquery(node.right)
    if isinstance(node, And):
        return f"({left} & {right})"
    if isinstance(node, Or):
        return f"({left} | {right})"
    return f"({left} & !{right})"


def _phrase(phrase: Phrase) -> str:
    """A word, or words in a row within one column (the title and the text are one
    ``tsvector``, where the title's last word comes right before the text's first)."""
    columns = sorted(phrase.columns or _WEIGHT_OF)
    if len(phrase.words) == 1 and len(columns) == len(_WEIGHT_OF):
        return _lexeme(phrase.words[0], phrase.prefix[0], "")
    each = [
        " <-> ".join(
            _lexeme(word, prefix, _WEIGHT_OF[column])
            for word, prefix in zip(phrase.words, phrase.prefix, strict=True)
        )
        for column in columns
    ]
    return each[0] if len(each) == 1 else "(" + " | ".join(each) + ")"


def _lexeme(word: str, prefix: bool, weight: str) -> str:
    """A word as the index holds it, taken as it is (no parser in between: the index's words
    are folded in Python too, whatever the server's locale)."""
    if len(word) * 4 >= MAX_WORD_BYTES and len(word.encode()) >= MAX_WORD_BYTES:
        word = "-"  # never indexed (index/tsvector.py): a word that is in no vector
    marks = ("*" if prefix else "") + weight
    quoted = word.replace("\\", "\\\\").replace("'", "''")
    return f"'{quoted}'" + (f":{marks}" if marks else "")

"""Writing the index on PostgreSQL: the SQLite store's ``index`` in PostgreSQL's dialect.

The resource of each document is decided by :class:`litecrawl.index.placement.Placement`, as on
SQLite; look-ups take their keys as arrays (``= ANY(%s)``), new resources go out in one
``INSERT ... SELECT FROM unnest(...)``, documents in one ``executemany``. The full-text vector
``tsv`` is written with its resource as the analysis worker built it, in the binary format
(:mod:`litecrawl.index.tsvector`), so the database only stores and indexes it; a document
without one leaves it NULL and the database builds it (the ``tsv_written`` migration's
triggers). Runs inside the caller's transaction (``PostgresFrontier.finalize``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import postgres
from psycopg.abc import Buffer
from psycopg.adapt import Dumper
from psycopg.pq import Format

from litecrawl.index.document import IndexDocument
from litecrawl.index.placement import (
    Known,
    Placement,
    Wanted,
    chunks,
    document_row,
    resource_row,
)
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.sql import DOCUMENT_COLUMNS, document_sets, near_resources, upsert_document
from litecrawl.store.vectors import MODEL, section_rows
from litecrawl.store.vectors_sql import KEEP_DATABASE_MODEL

__all__ = ["BinaryTsvector", "remove_documents", "write_documents"]

_UPSERT_DOCUMENT = upsert_document(POSTGRES)
# A batch's documents in two statements: the new ones inserted, then the known ones updated
# (one upsert a document cost a statement each, ~20 us of the server's CPU); a document
# neither found (written or removed meanwhile by another transaction) is upserted alone.
_DOCUMENT_TYPES = {
    "url": "text",
    "resource_id": "bigint",
    "title": "text",
    "keywords": "text",
    "text_preview": "text",
    "language": "text",
    "author": "text",
    "published": "text",
    "content_type": "text",
    "status": "int",
    "depth": "int",
    "source": "text",
    "extraction_mode": "text",
    "markdown_path": "text",
    "canonical": "text",
    "rewritten": "bool",
}
assert list(_DOCUMENT_TYPES)[1:-1] == list(DOCUMENT_COLUMNS)
_DOCUMENT_ROWS = (
    f"unnest({', '.join(f'%s::{kind}[]' for kind in _DOCUMENT_TYPES.values())})"
    f" AS v({', '.join(_DOCUMENT_TYPES)})"
)
_INSERT_DOCUMENTS = f"""
INSERT INTO documents (url, {", ".join(DOCUMENT_COLUMNS)})
SELECT v.url, {", ".join(f"v.{c}" for c in DOCUMENT_COLUMNS)} FROM {_DOCUMENT_ROWS}
ON CONFLICT (url) DO NOTHING RETURNING url
""".encode()
_UPDATE_DOCUMENTS = f"""
UPDATE documents SET{document_sets(POSTGRES, lambda column: f"v.{column}")}
FROM {_DOCUMENT_ROWS} WHERE documents.url = v.url RETURNING documents.url
""".encode()
_NEAR = near_resources(POSTGRES).encode()
_INSERT_RESOURCES = """
INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title, text, language,
                       tsv)
SELECT * FROM unnest(%s::text[], %s::bigint[], %s::int[], %s::int[], %s::int[], %s::int[],
                     %s::text[], %s::text[], %s::text[], %b::tsvector[])
RETURNING id, text_hash
"""
_REWRITE_RESOURCE = """
UPDATE resources SET text_hash = %s, simhash = %s, band0 = %s, band1 = %s, band2 = %s,
  band3 = %s, title = %s, text = %s, language = %s, tsv = %b::tsvector WHERE id = %s
"""
_DELETE_ORPHANS = """
DELETE FROM resources WHERE id = ANY(%s)
  AND NOT EXISTS (SELECT 1 FROM documents WHERE resource_id = resources.id)
"""
# New resources a statement carries at most (texts and vectors, bytes): see _by_size.
_STATEMENT_BYTES = 1 << 20


def _vectors_statement(table: str, types: dict[str, str], key: str) -> tuple[bytes, Sequence[str]]:
    """A batch's vectors of one table (rows keyed by their document's text hash) in one
    statement, as store/vectors_sql.py's put_by_hash and put_section write one row: one
    statement a document or section cost ~20 us of the server's CPU each."""
    columns = [c for c in types if c != "text_hash"]
    arrays = ", ".join(f"%s::{kind}[]" for kind in types.values())
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "ord")
    sql = f"""
INSERT INTO {table} (resource_id, {", ".join(columns)})
SELECT r.id, {", ".join(f"v.{c}" for c in columns)}
FROM unnest({arrays}) AS v({", ".join(types)}) JOIN resources r ON r.text_hash = v.text_hash
ON CONFLICT ({key}) DO UPDATE SET {updates}
WHERE {table}.model IS DISTINCT FROM excluded.model AND {table}.model {KEEP_DATABASE_MODEL}
"""
    return sql.encode(), list(types)


# a document's vectors (store/vectors_sql.py, here a batch a statement)
_PUT_VECTORS = _vectors_statement(
    "resource_vectors", {"text_hash": "text", "model": "text", "vector": "bytea"}, "resource_id"
)
_PUT_SECTIONS = _vectors_statement(
    "section_vectors",
    {
        "text_hash": "text",
        "ord": "int",
        "heading": "text",
        "anchor": "text",
        "heading_at": "int",
        "places": "text",
        "model": "text",
        "vector": "bytea",
    },
    "resource_id, ord",
)

# Workers writing the same text at once (the same page on two hosts) would both place it as a
# new resource and one would fail on resources.text_hash: each text's placement is taken under
# a transaction-level advisory lock of its hash (two-int keys: their own space), in key order
# so two writers never wait on each other in a cycle. Different texts do not wait at all.
_TEXT_LOCKS = """
SELECT pg_advisory_xact_lock(%s, k)
FROM (SELECT DISTINCT k FROM unnest(%s::int[]) AS k ORDER BY k) AS s
"""
_TEXT_LOCK_SPACE = 0x6C63  # "lc"


class BinaryTsvector(bytes):
    """A ``tsvector`` in PostgreSQL's binary format (:func:`litecrawl.index.tsvector.
    tsvector_binary`): sent as it is, so the server neither parses nor sorts it (~0.2 ms of its
    CPU a page less than the same vector as text, bench/README.md)."""


class BinaryTsvectorDumper(Dumper):
    format = Format.BINARY
    oid = postgres.types["tsvector"].oid

    def dump(self, obj: Any) -> Buffer:
        return bytes(obj)


psycopg.adapters.register_dumper(BinaryTsvector, BinaryTsvectorDumper)


def _vector(doc: IndexDocument) -> BinaryTsvector | None:
    return None if doc.tsvector is None else BinaryTsvector(doc.tsvector)


async def write_documents(
    conn: psycopg.AsyncConnection[Any], docs: Sequence[IndexDocument]
) -> None:
    """Insert or update the documents of ``docs`` (in order; a URL given twice ends up as its
    last version) and link them to resources."""
    if not docs:
        return
    keys = [int(doc.text_hash[:8], 16) - 2**31 for doc in docs]  # int4 of the sha256 hex
    await conn.execute(_TEXT_LOCKS, (_TEXT_LOCK_SPACE, keys))
    plan = Placement()
    for chunk in chunks(docs):
        wanted = plan.wants(chunk)
        plan.know(wanted, await _known(conn, wanted))
        for doc in chunk:
            plan.place(doc)
    await _write(conn, plan)
    vectors = [
        {"model": MODEL, "vector": doc.embedding, "text_hash": doc.text_hash}
        for doc in docs
        if doc.embedding is not None
    ]
    for statement, rows, key in (
        (_PUT_VECTORS, vectors, ("text_hash",)),
        (_PUT_SECTIONS, section_rows(docs), ("text_hash", "ord")),
    ):
        if rows:
            await _put_many(conn, statement, rows, key)


async def _put_many(
    conn: psycopg.AsyncConnection[Any],
    statement: tuple[bytes, Sequence[str]],
    rows: Sequence[dict[str, Any]],
    key: Sequence[str],
) -> None:
    """Vector rows in one statement: the first of each ``key`` only, as the one-row statements
    (store/vectors_sql.py) leave them (a later row of the same model changes nothing)."""
    sql, columns = statement
    first: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        first.setdefault(tuple(row[k] for k in key), row)
    await conn.execute(sql, [[row[c] for row in first.values()] for c in columns])


async def _write_documents(cur: psycopg.AsyncCursor[Any], rows: list[dict[str, Any]]) -> None:
    """The documents' rows (each URL once: the placement keeps a URL's last version)."""
    done: set[str] = set()
    for statement in (_INSERT_DOCUMENTS, _UPDATE_DOCUMENTS):
        rest = [row for row in rows if row["url"] not in done]
        if rest:
            await cur.execute(statement, [[row[c] for row in rest] for c in _DOCUMENT_TYPES])
            done.update(url for (url,) in await cur.fetchall())
    rest = [row for row in rows if row["url"] not in done]
    if rest:
        await cur.executemany(_UPSERT_DOCUMENT, rest)


def _by_size(rows: Sequence[tuple[Any, ...]]) -> Iterator[Sequence[tuple[Any, ...]]]:
    """New resources in statements of at most ~_STATEMENT_BYTES of texts and vectors (a row
    alone may be more): libpq keeps each connection's output buffer as large as the largest
    statement it sent, so a batch of 256 pages in one statement (~10 MB) left ~10 MB in every
    connection of the pool for as long as the crawl ran (bench/README.md, issue 33)."""
    start = size = 0
    for i, row in enumerate(rows):
        length = len(row[6]) + len(row[7]) + len(row[9] or b"")  # title, text, tsvector
        if size and size + length > _STATEMENT_BYTES:
            yield rows[start:i]
            start, size = i, 0
        size += length
    if start < len(rows):
        yield rows[start:]


async def remove_documents(conn: psycopg.AsyncConnection[Any], urls: Iterable[str]) -> None:
    """Delete the documents of ``urls`` and the resources they leave without any document."""
    cur = await conn.execute(
        "DELETE FROM documents WHERE url = ANY(%s) RETURNING resource_id", (list(set(urls)),)
    )
    left = sorted({rid for (rid,) in await cur.fetchall() if rid is not None})
    if left:
        await conn.execute(_DELETE_ORPHANS, (left,))


async def _pairs(
    conn: psycopg.AsyncConnection[Any], sql: str, keys: Iterable[Any]
) -> dict[Any, Any]:
    keys = list(keys)
    if not keys:
        return {}
    cur = await conn.execute(sql.encode(), (keys,))
    return {a: b for a, b in await cur.fetchall()}


async def _known(conn: psycopg.AsyncConnection[Any], wanted: Wanted) -> Known:
    current = await _pairs(
        conn, "SELECT url, resource_id FROM documents WHERE url = ANY(%s)", wanted.urls
    )
    by_hash = await _pairs(
        conn, "SELECT text_hash, id FROM resources WHERE text_hash = ANY(%s)", wanted.hashes
    )
    near: dict[int, dict[int, int]] = {}
    if wanted.simhashes:
        cur = await conn.execute(_NEAR, (list(wanted.simhashes),))
        for asked, rid, h in await cur.fetchall():
            near.setdefault(asked, {})[rid] = h
    ids = {rid for rid in current.values() if rid is not None} | set(by_hash.values())
    ids.update(rid for found in near.values() for rid in found)
    references = await _pairs(
        conn,
        "SELECT resource_id, count(*) FROM documents WHERE resource_id = ANY(%s) "
        "GROUP BY resource_id",
        ids,
    )
    return Known(current, by_hash, near, references)


async def _write(conn: psycopg.AsyncConnection[Any], plan: Placement) -> None:
    """Rewrites, new resources (one statement), documents, then orphans (one statement)."""
    async with conn.cursor() as cur:
        if plan.rewrites:
            await cur.executemany(
                _REWRITE_RESOURCE,
                [(*resource_row(doc), _vector(doc), rid) for rid, doc in plan.rewrites.items()],
            )
        ids: dict[str, int] = {}
        new = [(*resource_row(doc), _vector(doc)) for doc in plan.new_resources()]
        for part in _by_size(new):
            await cur.execute(
                _INSERT_RESOURCES, [list(column) for column in zip(*part, strict=True)]
            )
            ids.update((h, rid) for rid, h in await cur.fetchall())
        await _write_documents(
            cur, [document_row(doc, rid, rewritten) for doc, rid, rewritten in plan.documents(ids)]
        )
        if plan.left:
            await cur.execute(_DELETE_ORPHANS, (sorted(plan.left),))

"""Writing the index on SQLite: one document row per URL, one resource per distinct (or nearly
so) text, decided by :class:`litecrawl.index.placement.Placement` (read there how).

Both functions run inside the caller's open write transaction (``SQLiteFrontier.finalize``):
they never ``BEGIN`` or ``COMMIT``. The full-text index (``resources_fts``) follows the
``resources`` table through the migration's triggers, so it is never written here. New
resources go out in multi-row ``INSERT ... VALUES (...), (...)`` statements (up to 64 rows
each), the documents with ``executemany``, the orphans in one ``DELETE``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from litecrawl.index.document import IndexDocument
from litecrawl.index.placement import (
    Known,
    Placement,
    Wanted,
    chunks,
    document_row,
    resource_row,
)
from litecrawl.store.dialect import SQLITE
from litecrawl.store.sql import near_resources, upsert_document
from litecrawl.store.sqlite.vectors import write_document_vectors

__all__ = ["remove_documents", "write_documents"]
# Look-ups take their keys as one JSON array: one SQL text whatever the number of keys (the
# statement cache is not flooded), and SQLite still probes the index once per key.
_KEYS = "IN (SELECT value FROM json_each(?))"
_CURRENT_IN = f"SELECT url, resource_id FROM documents WHERE url {_KEYS}"
_BY_HASH_IN = f"SELECT text_hash, id FROM resources WHERE text_hash {_KEYS}"
_NEAR = near_resources(SQLITE)
_REFERENCES_IN = (
    f"SELECT resource_id, count(*) FROM documents WHERE resource_id {_KEYS} GROUP BY resource_id"
)
_INSERT_RESOURCES = (
    "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title, text, language)"
    " VALUES {values} RETURNING id, text_hash"
)
# rows per INSERT: powers of two (few distinct statements), 64 x 9 = 576 parameters at most
_INSERT_SIZES = (64, 32, 16, 8, 4, 2, 1)
_REWRITE_RESOURCE = (
    "UPDATE resources SET text_hash = ?, simhash = ?, band0 = ?, band1 = ?, band2 = ?,"
    " band3 = ?, title = ?, text = ?, language = ? WHERE id = ?"
)
_DELETE_ORPHANS = (
    "DELETE FROM resources WHERE id IN (SELECT value FROM json_each(?))"
    " AND NOT EXISTS (SELECT 1 FROM documents WHERE resource_id = resources.id)"
)
_UPSERT_DOCUMENT = upsert_document(SQLITE)


def write_documents(conn: sqlite3.Connection, docs: Sequence[IndexDocument]) -> None:
    """Insert or update the documents of ``docs`` (in order; a URL given twice ends up as its
    last version) and link them to resources."""
    if not docs:
        return
    plan = Placement()
    for chunk in chunks(docs):
        wanted = plan.wants(chunk)
        plan.know(wanted, _known(conn, wanted))
        for doc in chunk:
            plan.place(doc)
    _write(conn, plan)
    write_document_vectors(conn, docs)


def _known(conn: sqlite3.Connection, wanted: Wanted) -> Known:
    current = _lookup(conn, _CURRENT_IN, wanted.urls)
    by_hash = _lookup(conn, _BY_HASH_IN, wanted.hashes)
    near: dict[int, dict[int, int]] = {}
    if wanted.simhashes:
        rows = conn.execute(_NEAR, (json.dumps(list(wanted.simhashes)),))
        for asked, rid, h in rows:
            near.setdefault(asked, {})[rid] = h
    ids = {rid for rid in current.values() if rid is not None} | set(by_hash.values())
    ids.update(rid for found in near.values() for rid in found)
    return Known(current, by_hash, near, _lookup(conn, _REFERENCES_IN, ids) if ids else {})


def _write(conn: sqlite3.Connection, plan: Placement) -> None:
    """Rewrites, new resources (bulk), documents, then orphans (one statement)."""
    if plan.rewrites:
        conn.executemany(
            _REWRITE_RESOURCE,
            [(*resource_row(doc), rid) for rid, doc in plan.rewrites.items()],
        )
    inserts = [resource_row(doc) for doc in plan.new_resources()]
    ids: dict[str, int] = {}
    for chunk in _chunks(inserts):
        sql = _INSERT_RESOURCES.format(values=",".join(["(?,?,?,?,?,?,?,?,?)"] * len(chunk)))
        ids.update((h, rid) for rid, h in conn.execute(sql, [v for row in chunk for v in row]))
    conn.executemany(
        _UPSERT_DOCUMENT,
        [document_row(doc, rid, rewritten) for doc, rid, rewritten in plan.documents(ids)],
    )
    if plan.left:
        conn.execute(_DELETE_ORPHANS, (json.dumps(sorted(plan.left)),))


def remove_documents(conn: sqlite3.Connection, urls: Iterable[str]) -> None:
    """Delete the documents of ``urls`` (unknown URLs are ignored) and the resources they
    leave without any document."""
    unique = list(dict.fromkeys(urls))
    resource_ids = {rid for rid in _lookup(conn, _CURRENT_IN, unique).values() if rid is not None}
    conn.executemany("DELETE FROM documents WHERE url = ?", [(url,) for url in unique])
    if resource_ids:
        conn.execute(_DELETE_ORPHANS, (json.dumps(sorted(resource_ids)),))


def _lookup(conn: sqlite3.Connection, sql: str, keys: Iterable[object]) -> dict[Any, Any]:
    """``dict(rows)`` of a two-column ``sql`` taking ``keys`` as a JSON array."""
    return dict(conn.execute(sql, (json.dumps(list(keys), ensure_ascii=False),)))


def _chunks(rows: list[tuple[object, ...]]) -> Iterable[list[tuple[object, ...]]]:
    """``rows`` cut into pieces whose sizes are in :data:`_INSERT_SIZES` (largest first)."""
    start = 0
    for size in _INSERT_SIZES:
        while len(rows) - start >= size:
            yield rows[start : start + size]
            start += size

"""Writing the index on SQLite: one document row per URL, one resource per distinct (or nearly
so) text, decided by :class:`litecrawl.index.placement.Placement` (read there how).

Both functions run inside the caller's open write transaction (``SQLiteFrontier.finalize``):
they never ``BEGIN`` or ``COMMIT``. New resources go out one row a statement, their full text
into ``resources_fts`` after the documents and vectors (:func:`index_texts`); an update or a
delete of a resource reaches the full-text index through the migration's triggers. The
documents go with ``executemany`` (a new URL's as a plain INSERT), the orphans in one
``DELETE``.

Why one row a statement and no trigger on insert: a statement that writes several rows (or
fires a trigger) is one SQLite may have to undo alone, so it keeps the pages it changes in a
statement journal; the 64 new resources of a multi-row INSERT changed a leaf of each of their
random-keyed indexes (text hash, the near-duplicate bands), past the 64 KiB SQLite keeps in
memory, and the journal went to a temporary file, which every later statement of the
transaction then wrote too (bench/README.md, issue 33, session 9). A one-row INSERT checks
its constraints before it writes and keeps no such journal.
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
from litecrawl.store.sql import insert_document, near_resources, upsert_document
from litecrawl.store.sqlite.vectors import write_document_vectors

__all__ = ["copy_resources", "index_texts", "remove_documents", "write_documents"]
# Look-ups take their keys as one JSON array: one SQL text whatever the number of keys (the
# statement cache is not flooded), and SQLite still probes the index once per key.
_KEYS = "IN (SELECT value FROM json_each(?))"
_CURRENT_IN = f"SELECT url, resource_id FROM documents WHERE url {_KEYS}"
_BY_HASH_IN = f"SELECT text_hash, id FROM resources WHERE text_hash {_KEYS}"
_IDS_IN = f"SELECT id, id FROM resources WHERE id {_KEYS}"
_NEAR = near_resources(SQLITE)
_REFERENCES_IN = (
    f"SELECT resource_id, count(*) FROM documents WHERE resource_id {_KEYS} GROUP BY resource_id"
)
_INSERT_RESOURCE = (
    "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title, text, language)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INDEX_TEXT = "INSERT INTO resources_fts (rowid, title, text) VALUES (?, ?, ?)"
_Text = tuple[int, str | None, str | None]  # a resource's id, title and text
_REWRITE_RESOURCE = (
    "UPDATE resources SET text_hash = ?, simhash = ?, band0 = ?, band1 = ?, band2 = ?,"
    " band3 = ?, title = ?, text = ?, language = ? WHERE id = ?"
)
_DELETE_ORPHANS = (
    "DELETE FROM resources WHERE id IN (SELECT value FROM json_each(?))"
    " AND NOT EXISTS (SELECT 1 FROM documents WHERE resource_id = resources.id)"
)
_UPSERT_DOCUMENT = upsert_document(SQLITE)
_INSERT_DOCUMENT = insert_document(SQLITE)


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
    texts = _write(conn, plan)
    write_document_vectors(conn, docs)
    # last: FTS5 writes its pending terms out at the next statement that keeps a journal (the
    # documents' upserts, the vectors), which would then journal them; last, at the commit
    index_texts(conn, texts)


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


def _write(conn: sqlite3.Connection, plan: Placement) -> list[_Text]:
    """Rewrites, new resources, documents, then orphans (one statement); the new resources'
    texts to index (id, title, text)."""
    if plan.rewrites:
        conn.executemany(
            _REWRITE_RESOURCE,
            [(*resource_row(doc), rid) for rid, doc in plan.rewrites.items()],
        )
    ids: dict[str, int] = {}
    texts: list[_Text] = []
    cursor = conn.cursor()
    for doc in plan.new_resources():
        rid = cursor.execute(_INSERT_RESOURCE, resource_row(doc)).lastrowid
        assert rid is not None
        ids[doc.text_hash] = rid
        texts.append((rid, doc.title, doc.text))
    # a URL without a document before the batch: a plain INSERT, which keeps no statement
    # journal (the upsert's update of a row with a foreign key does)
    rows = [(doc.url, document_row(doc, rid, new)) for doc, rid, new in plan.documents(ids)]
    conn.executemany(_INSERT_DOCUMENT, [row for url, row in rows if url not in plan.documented])
    conn.executemany(_UPSERT_DOCUMENT, [row for url, row in rows if url in plan.documented])
    if plan.left:
        conn.execute(_DELETE_ORPHANS, (json.dumps(sorted(plan.left)),))
    return texts


def index_texts(conn: sqlite3.Connection, rows: Iterable[_Text]) -> None:
    """The full text of new resources (id, title, text) into ``resources_fts``, one row a
    statement (the module's docstring says why)."""
    conn.executemany(_INDEX_TEXT, rows)


def copy_resources(
    conn: sqlite3.Connection,
    upsert: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> None:
    """Resources' ``rows`` (``columns``: theirs, ``id`` among them) written by ``upsert`` (one
    row, on the id), the full text of those not there before indexed (a row that replaced
    one reaches the index through the update's trigger)."""
    at = {column: i for i, column in enumerate(columns)}
    ids = [row[at["id"]] for row in rows]
    there = set(_lookup(conn, _IDS_IN, ids))
    conn.executemany(upsert, rows)
    title, text = at.get("title"), at.get("text")
    index_texts(
        conn,
        [
            (
                row[at["id"]],
                None if title is None else row[title],
                None if text is None else row[text],
            )
            for row in rows
            if row[at["id"]] not in there
        ],
    )


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
